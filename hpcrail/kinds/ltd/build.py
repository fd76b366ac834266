"""Scenario → numeric LTD model: :func:`build_ltd` converts a validated LTD scenario to an
:class:`~hpcrail.models.ltd.build.LTDModel` (SI arrays, initial state, tolerance scales).

Connection laws are packed by their entry of the coupler-law table (:mod:`hpcrail.kinds.ltd.couplers`);
the state layout is documented in :mod:`hpcrail.models.ltd.build`.  Source: Bosso et al. 2024
eqs (1)-(7).
"""
from __future__ import annotations

import numpy as np

from hpcrail.kinds.ltd.brake_build import (
    is_pneumatic, matched_shoe_force_N, notch_groups, placeholder_arrays, pneumatic_layout,
)
from hpcrail.kinds.ltd.couplers import law_of
from hpcrail.kinds.ltd.schema import Scenario
from hpcrail.models.couplers.envelope import envelope_acc0
from hpcrail.models.couplers.hysteretic import pack_connection_tables
from hpcrail.models.ltd.build import KMH, G, LTDModel, LTDParams
from hpcrail.models.tables import common_spacing, resample_uniform


def _connection_tables(sc: Scenario, names: list[str]):
    """Per connection type (in the kernel's order, :func:`connection_type_order`): the table-law
    arrays packed by each law's ``table`` entry (slack per side, uniform tables of F_M and F_A per
    side, end stop, v_ε, damping)."""
    types = connection_type_order(sc, names)
    index = {t: i for i, t in enumerate(types)}
    rows, tpar, notes = [], [], []
    for t in types:
        c = sc.connection_types[t]
        s = law_of(c).table(c)
        for side, (x, fl, fu), gap in zip(("draft", "buff"), s["sides"], s["gap"]):
            dx, exact = common_spacing(x, max_points=4096)
            if not exact:
                notes.append(f"connection type {t!r} {side} table resampled on a {dx * 1e3:.3g} mm grid "
                             "(breakpoints not on a common grid): piecewise-linear error below that scale")
            rows.append((gap, dx, resample_uniform(x, 0.5 * (fl + fu), dx), resample_uniform(x, 0.5 * (fl - fu), dx),
                         s["kend"]))
        tpar.append((s["veps"], s["c"], s["xc"]))
    rowpar, typepar, fm, fa = pack_connection_tables(rows, tpar)
    conn_type = np.array([index[n] for n in names], np.uint64)
    return dict(conn_type=conn_type, conn_rowpar=rowpar, conn_typepar=typepar, conn_fm=fm, conn_fa=fa), notes


def connection_type_order(sc: Scenario, names: list[str]) -> list[str]:
    """Connection type names in the order of their index: table-branch types (sorted), then
    noninertial types (sorted).  The kernel tells them apart by ``type index < n_table_types``, a
    comparison on the index it loads anyway (an extra per-connection array read cost ~10 % of the LTD
    right-hand side)."""
    used = sorted(set(names))
    ni = [t for t in used if law_of(sc.connection_types[t]).branch == "noninertial"]
    return [t for t in used if t not in ni] + ni


def noninertial_arrays(sc: Scenario, names: list[str], half_len: np.ndarray) -> dict:
    """Arrays of the noninertial branch (zeros/unused for other connections), see
    :mod:`hpcrail.models.couplers.ltd_noninertial`: ``n_table_types``, ``n_noninertial``, ``ni_cp``
    float64[C, N_CP] (per connection type in the order of :func:`connection_type_order`, packed by the
    law's ``pack``), ``ni_conn`` float64[N−1, N_NC] (pin distances L = x_P + l_0 [m], bogie half
    spacings [m], warm start, force) and ``ni_work`` (solver scratch, row ``NW_STATS`` the Newton
    statistics).  ``names``: connection type per coupler (N−1); ``half_len``: half lengths [m] (N)."""
    from hpcrail.models.couplers.kinematics import G_N, N_CP
    from hpcrail.models.couplers.ltd_noninertial import N_NC

    types = connection_type_order(sc, names)
    M = len(names)
    ni = {t for t in types if law_of(sc.connection_types[t]).branch == "noninertial"}
    cp_rows = np.zeros((len(types), N_CP))
    for i, t in enumerate(types):
        if t in ni:
            cp_rows[i] = law_of(sc.connection_types[t]).pack(sc.connection_types[t])
    conn = np.zeros((M, N_NC))
    n_ni = 0
    for k, t in enumerate(names):
        if t in ni:
            c = sc.connection_types[t]
            n_ni += 1
            reach = c.shank.length_m + 0.5 * c.knuckle.free_length_m   # shank pin to the vehicle end
            conn[k, :4] = (half_len[k] - reach, half_len[k + 1] - reach,
                           c.bogie_spacing_ratio * half_len[k], c.bogie_spacing_ratio * half_len[k + 1])
    return dict(n_table_types=len(types) - len(ni), n_noninertial=n_ni, ni_cp=cp_rows, ni_conn=conn,
                ni_work=np.zeros((8, G_N)))


def _traction_tables(sc: Scenario, vnames: list[str]):
    locos = sorted({n for n in vnames if sc.vehicle_types[n].kind == "locomotive"})
    index = {t: i for i, t in enumerate(locos)}
    T = len(locos)
    curves = [sc.vehicle_types[t].traction for t in locos]
    grids = []
    for tr in curves:
        v = np.asarray(tr.curves.speed_kmh, float) * KMH
        dv, _exact = common_spacing(v, max_points=4096)
        tk = resample_uniform(v, np.asarray(tr.curves.traction_kN, float) * 1e3, dv)
        db = (resample_uniform(v, np.asarray(tr.curves.dynamic_brake_kN, float) * 1e3, dv)
              if tr.curves.dynamic_brake_kN else np.zeros((0, tk.shape[-1])))
        grids.append((dv, tk, db))
    K = max(max(g[1].shape[0], g[2].shape[0]) for g in grids)
    V = max(g[1].shape[1] for g in grids)
    trac = np.zeros((T, K + 1, V))
    dynb = np.zeros((T, K + 1, V))
    trac_dv = np.zeros(T)
    trac_nv = np.zeros(T, np.int64)
    trac_nk = np.zeros(T, np.int64)
    dynb_nk = np.zeros(T, np.int64)
    p_max = np.zeros(T)
    for i, (dv, tk, db) in enumerate(grids):
        nv = tk.shape[1]
        trac[i, 1:tk.shape[0] + 1, :nv] = tk
        dynb[i, 1:db.shape[0] + 1, :nv] = db
        # pad notches above the top with the top notch (never used: commands are validated)
        trac_dv[i], trac_nv[i], trac_nk[i], dynb_nk[i] = dv, nv, tk.shape[0], db.shape[0]
        p_max[i] = (curves[i].max_power_kW or 0.0) * 1e3
    return index, dict(trac=trac, dynb=dynb, trac_dv=trac_dv, trac_nv=trac_nv, trac_nk=trac_nk,
                       dynb_nk=dynb_nk, p_max=p_max), locos


def _route_tables(sc: Scenario):
    """Elevation and ∫1/|R| on a uniform grid over the route (exact for the section layout)."""
    secs = sc.route.sections
    breaks = np.array([secs[0].start_km] + [s.end_km for s in secs]) * 1e3
    ds, exact = common_spacing(breaks, max_points=2_000_000)
    grid = breaks[0] + ds * np.arange(int(round((breaks[-1] - breaks[0]) / ds)) + 1)
    grade = np.array([s.grade_permille for s in secs]) * 1e-3
    curv = np.array([0.0 if s.radius_m == 0 else 1.0 / abs(s.radius_m) for s in secs])
    h_b = np.concatenate([[0.0], np.cumsum(grade * np.diff(breaks))])
    k_b = np.concatenate([[0.0], np.cumsum(curv * np.diff(breaks))])
    h = np.interp(grid, breaks, h_b)
    k = np.interp(grid, breaks, k_b)
    note = [] if exact else [f"route resampled on a {ds:.3g} m grid (section ends not on a common grid)"]
    hk = np.ascontiguousarray(np.stack([h, k], axis=1))
    sk = np.ascontiguousarray(np.diff(hk, axis=0) / ds)
    return dict(route_s0=float(breaks[0]), route_ds=float(ds), route_end=float(breaks[-1]),
                route_inv_ds=1.0 / float(ds), route_h=h, route_k=k, route_hk=hk, route_sk=sk), note


def _schedule(sc: Scenario):
    xs, notches, brakes = [], [], []
    n, b = 0.0, 0.0
    emergency = sc.air_brake.emergency_pressure_ratio
    for c in sc.driver.commands:
        sn = c.signed_notch()
        if sn is not None:
            n = sn
        if c.brake is not None:
            b = emergency if c.brake == "emergency" else float(c.brake)
        xs.append(c.at)
        notches.append(n)
        brakes.append(b)
    # a sentinel before the first command: nothing commanded
    return dict(sched_x=np.array([-1e300] + xs), sched_notch=np.array([0.0] + notches),
                sched_brake=np.array([0.0] + brakes))


def build_ltd(sc: Scenario) -> LTDModel:
    """Convert a validated scenario to an :class:`LTDModel` (SI arrays, initial state, tolerances).

    Raises ``ValueError`` only for inconsistencies the schema checks cannot see (none known).
    """
    vnames = sc.vehicle_type_names()
    cnames = sc.connection_type_names()
    N = len(vnames)
    vt = [sc.vehicle_types[n] for n in vnames]
    mass = np.array([v.mass_t * 1e3 for v in vt])
    length = np.array([v.length_m for v in vt])
    half = 0.5 * length
    axles = np.array([v.axles for v in vt], float)
    p_ax = mass / 1e3 / axles  # axle load [t]
    qad = np.array([v.davis.adjustment for v in vt])
    da = np.array([v.davis.a for v in vt])
    db_ = np.array([v.davis.b for v in vt])
    dc = np.array([v.davis.c for v in vt])
    dd = np.array([v.davis.d for v in vt])
    dcurve = np.array([v.davis.curve for v in vt])
    m_kilo = mass / 1e3
    r0 = m_kilo * qad * (da + db_ / p_ax)
    r1 = m_kilo * qad * dc * 3.6                      # V[km/h] = 3.6 v[m/s]
    r2 = m_kilo * qad * dd / (p_ax * axles) * 3.6 ** 2
    rcurve = m_kilo * dcurve
    tau_s = sc.numerics.standstill_time_constant_s
    rot = np.array([v.rotating_mass_fraction for v in vt])
    k_stand = mass * (1 + rot) / tau_s
    loco_index, tt, locos = _traction_tables(sc, vnames)
    loco_type = np.array([loco_index.get(n, -1) for n in vnames], np.int64)
    f_adh = np.full(N, np.inf)
    for j, v in enumerate(vt):
        if v.traction is not None and v.traction.adhesion_coefficient is not None:
            f_adh[j] = v.traction.adhesion_coefficient * mass[j] * G
    notch_rate = min(sc.vehicle_types[t].traction.notch_rate_per_s for t in locos)
    notch_tau = max(sc.vehicle_types[t].traction.notch_time_constant_s for t in locos)
    conn, notes = _connection_tables(sc, cnames)
    conn.update(noninertial_arrays(sc, cnames, half))
    route, rnote = _route_tables(sc)
    notes += rnote
    ab = sc.air_brake
    groups = notch_groups(sc, vnames)
    n_groups = groups["n_groups"]
    pneumatic = is_pneumatic(sc)
    acc0 = envelope_acc0(N - 1)
    if pneumatic:
        from hpcrail.models.ltd.jacobian import N_SLOTS_PLAIN, N_TAIL

        pl = pneumatic_layout(sc, vnames, mass, length, N_SLOTS_PLAIN * N + N_TAIL + n_groups - 1, acc0.size)
        B = pl.block
        pn = pl.arrays
    else:
        B = 4 if ab.enabled else 2
        pn = placeholder_arrays()
    n_states = B * N + n_groups + (4 if sc.output.energy else 0)

    def shoe_N(v):
        if v.brake is None:
            return 0.0
        return v.brake.shoe_force_kN * 1e3 if v.brake.shoe_force_kN is not None else matched_shoe_force_N(sc, v)

    shoe = np.array([shoe_N(v) for v in vt])
    mu0 = np.array([(v.brake.shoe_friction.mu0 if v.brake else 0.0) for v in vt])
    mu_a = np.array([(v.brake.shoe_friction.a_per_kmh * 3.6 if v.brake else 0.0) for v in vt])
    mu_b = np.array([(v.brake.shoe_friction.b_per_kmh * 3.6 if v.brake else 0.0) for v in vt])
    link = np.concatenate([[half[0]], half[:-1] + half[1:]])
    params = LTDParams(
        n_veh=N, block=B, i_notch=B * N, i_energy=B * N + n_groups if sc.output.energy else -1,
        air_brake=(2 if pneumatic else 1) if ab.enabled else 0, basis=0 if sc.driver.basis == "time" else 1,
        notch_rate=float(notch_rate), notch_tau=float(notch_tau), front_offset=float(half[0]),
        start_front=float(sc.route.start_m),
        ab_c_service=ab.service_propagation_mps, ab_c_emergency=ab.emergency_propagation_mps,
        ab_c_release=ab.release_propagation_mps, ab_tau_apply=ab.apply_time_constant_s,
        ab_tau_emergency=ab.emergency_time_constant_s, ab_tau_release=ab.release_time_constant_s,
        ab_emergency_level=0.5 * (1.0 + ab.emergency_pressure_ratio) if ab.emergency_pressure_ratio > 1 else 1e300,
        mass=mass, inv_mass_eff=1.0 / (mass * (1 + rot)), half_len=half, center_dist=half[:-1] + half[1:], inv_len=1.0 / length,
        link_len=link, r0=r0, r1=r1, r2=r2, rcurve=rcurve, k_stand=k_stand, loco_type=loco_type,
        f_adhesion=f_adh, **tt, **conn, **route, **_schedule(sc), shoe_full=shoe, mu0=mu0, mu_a=mu_a, mu_b=mu_b,
        no_record=np.zeros((1, 1)), **groups, **pn,
    )
    y0 = np.zeros(n_states)
    y0[0] = sc.route.start_m - half[0]
    v0 = sc.simulation.initial_speed_kmh * KMH
    y0[1:B * N:B] = v0
    y0[B * N:B * N + n_groups] = sc.simulation.initial_notch   # the applied notches at t = 0 (i_notch + group)
    atol_scale = np.ones(n_states)
    if sc.output.energy:
        atol_scale[B * N + n_groups:] = 1e3
    if pneumatic:   # the brake block of every vehicle (models/brakes/layout.py)
        y0[:B * N].reshape(N, B)[:, 2:] = pl.y0_block
        atol_scale[:B * N].reshape(N, B)[:, 2:] = pl.atol_block
        acc0 = np.concatenate([acc0, pl.acc])
    return LTDModel(params=params, y0=y0, atol_scale=atol_scale, acc0=acc0, vehicle_types=vnames,
                    vehicle_kinds=[v.kind for v in vt], connection_types=cnames, vehicle_length=length,
                    notes=notes, brakes=pl if pneumatic else None)
