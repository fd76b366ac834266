"""Build the numeric LTD model (SI arrays + initial state) from a validated :class:`Scenario`.

State layout (n = B·N + 1 [+ 4]), vehicle-major so that a train's Jacobian is block-tridiagonal
and a block of vehicles owns a contiguous slice:

* ``y[B*j + 0]``: for j = 0 the position s_1 of the lead vehicle's centre along the route [m];
  for j ≥ 1 the extension e_j = s_j − s_{j+1} − d_j of connection j (between vehicles j and j+1,
  1-based) relative to its free length [m] (+ draft).  Relative coordinates keep millimetre
  deflections resolvable next to positions of tens of km (PERFORMANCE_NOTES).
* ``y[B*j + 1]``: speed v_{j+1} [m/s].
* with the air brake (B = 4): ``y[B*j + 2]`` brake-pipe signal (brake demand reaching the vehicle,
  fraction of full service) and ``y[B*j + 3]`` brake-cylinder pressure (fraction of full service).
* ``y[B*N]``: applied notch (+ traction, − dynamic brake), common to all locomotives (synchronous
  distributed power); it follows the driver's command with the slowest locomotive's rate limit.
* if ``output.energy``: four work integrals [J] — traction/dynamic brake, running resistance,
  air brake, coupler work Σ∫F_k ė_k.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from hpcrail.config.scenario import HystereticCoupler, LinearConnection, NoninertialConnection, RigidBar, Scenario
from hpcrail.models.couplers.hysteretic import pack_connection_tables
from hpcrail.models.couplers.ltd_noninertial import connection_type_order, noninertial_connection_arrays
from hpcrail.models.tables import common_spacing, resample_uniform

G = 9.81  #: gravity [m/s²], as in paper 000 eq (6)
KMH = 1.0 / 3.6


class LTDParams(NamedTuple):
    """Runtime parameters of the LTD kernel (SI units).  Changing values never recompiles."""

    n_veh: int
    block: int
    i_notch: int
    i_energy: int
    air_brake: int
    basis: int                  # 0: schedule against time, 1: against distance travelled
    notch_rate: float           # [notch/s]
    notch_tau: float            # [s]
    front_offset: float         # front of train = s_1 + front_offset [m]
    start_front: float          # initial front position [m] (distance basis origin)
    route_s0: float
    route_ds: float
    route_end: float
    ab_c_service: float
    ab_c_emergency: float
    ab_c_release: float
    ab_tau_apply: float
    ab_tau_emergency: float
    ab_tau_release: float
    ab_emergency_level: float
    mass: np.ndarray            # [N] gravitational mass [kg]
    inv_mass_eff: np.ndarray    # [N] 1 / (mass · (1 + rotating fraction)) [1/kg]
    half_len: np.ndarray        # [N] [m]
    center_dist: np.ndarray     # [N-1] free distance between centres [m]
    link_len: np.ndarray        # [N] brake-pipe length from the previous vehicle's centre [m]
    r0: np.ndarray              # [N] constant Davis part [N]
    r1: np.ndarray              # [N] linear Davis part [N/(m/s)]
    r2: np.ndarray              # [N] quadratic Davis part [N/(m/s)²]
    rcurve: np.ndarray          # [N] curving resistance × radius [N·m]
    k_stand: np.ndarray         # [N] standstill damping m/τ [N·s/m]
    loco_type: np.ndarray       # [N] int64 index into the traction tables, -1 for wagons
    f_adhesion: np.ndarray      # [N] adhesion limit [N] (inf = none)
    trac: np.ndarray            # [T, K+1, V] traction force [N] (row 0 = notch 0)
    dynb: np.ndarray            # [T, K+1, V] dynamic-brake force magnitude [N]
    trac_dv: np.ndarray         # [T] speed grid spacing [m/s]
    trac_nv: np.ndarray         # [T] int64 number of speed points
    trac_nk: np.ndarray         # [T] int64 number of traction notches
    dynb_nk: np.ndarray         # [T] int64 number of dynamic-brake notches
    p_max: np.ndarray           # [T] power limit at the top notch [W] (0 = none)
    conn_type: np.ndarray       # [N-1] uint64 connection type per coupler
    conn_rowpar: np.ndarray     # [2C, 6] table rows (draft, buff per type), see couplers.hysteretic
    conn_typepar: np.ndarray    # [C, 3] 1/v_ε [s/m], viscous damping [N·s/m], 1/ramp length [1/m]
    conn_fm: np.ndarray         # [P] mean curves F_M = (F_L + F_U)/2 [N], all rows concatenated
    conn_fa: np.ndarray         # [P] half hysteresis F_A = (F_L − F_U)/2 [N]
    route_inv_ds: float
    route_h: np.ndarray         # [R] elevation (∫ grade) on the route grid [m]
    route_k: np.ndarray         # [R] ∫ 1/|R_c| ds on the route grid [-]
    route_hk: np.ndarray        # [R, 2] the two cumulative tables interleaved
    route_sk: np.ndarray        # [R-1, 2] grade [-] and curvature [1/m] of each grid cell
    inv_len: np.ndarray         # [N] 1 / vehicle length [1/m]
    sched_x: np.ndarray         # [S] command times [s] or distances [m]
    sched_notch: np.ndarray     # [S] signed notch command
    sched_brake: np.ndarray     # [S] brake demand (fraction of full service; > 1 = emergency)
    shoe_full: np.ndarray       # [N] shoe normal force at full service [N]
    mu0: np.ndarray             # [N]
    mu_a: np.ndarray            # [N] [1/(m/s)]
    mu_b: np.ndarray            # [N] [1/(m/s)]
    no_record: np.ndarray       # [1, 1] placeholder record array for the plain right-hand side
    # ---- noninertial couplers (couplers.ltd_noninertial); last: the hot fields keep their places ----
    n_table_types: int          # connection types below this index use the tables, the others are noninertial
    n_noninertial: int          # number of noninertial connections
    ni_cp: np.ndarray           # [C, 16] noninertial coupler parameters per type (couplers.ltd_noninertial)
    ni_conn: np.ndarray         # [N-1, 9] geometry, warm start (scratch) and force (scratch) per connection
    ni_work: np.ndarray         # [8, 72] solver scratch; row 7: Newton statistics (couplers.kinematics.NS_*)


# accumulator layout of ltd_observe
ACC_VMAX, ACC_VMIN, ACC_OFFROUTE, ACC_T_DRAFT, ACC_T_BUFF, ACC_FMAX, ACC_FMIN = range(7)
ACC_HEAD = 8


@dataclasses.dataclass
class LTDModel:
    """Python-side description of a built LTD model."""

    params: LTDParams
    y0: np.ndarray
    atol_scale: np.ndarray
    acc0: np.ndarray
    vehicle_types: list[str]
    vehicle_kinds: list[str]
    connection_types: list[str]
    vehicle_length: np.ndarray
    notes: list[str]

    @property
    def n_vehicles(self) -> int:
        return self.params.n_veh

    def idx_speed(self) -> np.ndarray:
        return self.params.block * np.arange(self.n_vehicles) + 1

    def idx_extension(self) -> np.ndarray:
        return self.params.block * np.arange(1, self.n_vehicles)


def _connection_tables(sc: Scenario, names: list[str]):
    """Per connection type: slack per side, uniform tables of F_M and F_A per side, end stop, v_ε."""
    types = connection_type_order(sc, names)
    index = {t: i for i, t in enumerate(types)}
    C = len(types)
    specs = []
    for t in types:
        c = sc.connection_types[t]
        if isinstance(c, HystereticCoupler):
            sides = []
            for g in (c.draft, c.buff_curves()):
                x = np.asarray(g.deflection_mm, float) * 1e-3
                fl = np.asarray(g.loading_kN, float) * (1e3 * c.stiffness_scale)
                fu = np.asarray(g.unloading(), float) * (1e3 * c.stiffness_scale)
                sides.append((x, fl, fu))
            gap = 0.5 * c.slack_mm * 1e-3
            specs.append(dict(sides=sides, gap=(gap, gap), kend=c.end_stop_stiffness_MN_per_m * 1e6,
                              veps=c.transition_speed_mps, c=c.damping_kNs_per_m * 1e3,
                              xc=1e-3 if gap > 0 else 0.0))
        elif isinstance(c, (RigidBar, LinearConnection)):
            k = c.stiffness_MN_per_m * 1e6
            x = np.array([0.0, 1e-3])
            f = k * x
            gap = 0.5 * getattr(c, "slack_mm", 0.0) * 1e-3
            specs.append(dict(sides=[(x, f, f), (x, f, f)], gap=(gap, gap), kend=k, veps=1.0,
                              c=c.damping_kNs_per_m * 1e3, xc=1e-3 if gap > 0 else 0.0))
        elif isinstance(c, NoninertialConnection):
            # all-zero table rows: the force comes from couplers.ltd_noninertial (params.ni_conn)
            x = np.array([0.0, 1e-3])
            z = np.zeros(2)
            specs.append(dict(sides=[(x, z, z), (x, z, z)], gap=(0.0, 0.0), kend=0.0, veps=1.0, c=0.0, xc=0.0))
        else:  # pragma: no cover - schema guarantees the kinds above
            raise TypeError(f"unsupported connection type {type(c).__name__}")
    rows, tpar, notes = [], [], []
    for t, s in zip(types, specs):
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
    conn.update(noninertial_connection_arrays(sc, cnames, half))
    route, rnote = _route_tables(sc)
    notes += rnote
    ab = sc.air_brake
    B = 4 if ab.enabled else 2
    n_states = B * N + 1 + (4 if sc.output.energy else 0)
    shoe = np.array([(v.brake.shoe_force_kN * 1e3 if v.brake else 0.0) for v in vt])
    mu0 = np.array([(v.brake.shoe_friction.mu0 if v.brake else 0.0) for v in vt])
    mu_a = np.array([(v.brake.shoe_friction.a_per_kmh * 3.6 if v.brake else 0.0) for v in vt])
    mu_b = np.array([(v.brake.shoe_friction.b_per_kmh * 3.6 if v.brake else 0.0) for v in vt])
    link = np.concatenate([[half[0]], half[:-1] + half[1:]])
    params = LTDParams(
        n_veh=N, block=B, i_notch=B * N, i_energy=B * N + 1 if sc.output.energy else -1,
        air_brake=int(ab.enabled), basis=0 if sc.driver.basis == "time" else 1,
        notch_rate=float(notch_rate), notch_tau=float(notch_tau), front_offset=float(half[0]),
        start_front=float(sc.route.start_m),
        ab_c_service=ab.service_propagation_mps, ab_c_emergency=ab.emergency_propagation_mps,
        ab_c_release=ab.release_propagation_mps, ab_tau_apply=ab.apply_time_constant_s,
        ab_tau_emergency=ab.emergency_time_constant_s, ab_tau_release=ab.release_time_constant_s,
        ab_emergency_level=0.5 * (1.0 + ab.emergency_pressure_ratio) if ab.emergency_pressure_ratio > 1 else 1e300,
        mass=mass, inv_mass_eff=1.0 / (mass * (1 + rot)), half_len=half, center_dist=half[:-1] + half[1:], inv_len=1.0 / length,
        link_len=link, r0=r0, r1=r1, r2=r2, rcurve=rcurve, k_stand=k_stand, loco_type=loco_type,
        f_adhesion=f_adh, **tt, **conn, **route, **_schedule(sc), shoe_full=shoe, mu0=mu0, mu_a=mu_a, mu_b=mu_b,
        no_record=np.zeros((1, 1)),
    )
    y0 = np.zeros(n_states)
    y0[0] = sc.route.start_m - half[0]
    v0 = sc.simulation.initial_speed_kmh * KMH
    y0[1:B * N:B] = v0
    y0[B * N] = sc.simulation.initial_notch   # the applied notch at t = 0 (i_notch)
    atol_scale = np.ones(n_states)
    if sc.output.energy:
        atol_scale[B * N + 1:] = 1e3
    M = N - 1
    acc0 = np.zeros(ACC_HEAD + 4 * M)
    acc0[[ACC_VMAX, ACC_FMAX]] = -np.inf
    acc0[[ACC_VMIN, ACC_FMIN]] = np.inf
    acc0[ACC_HEAD:ACC_HEAD + M] = -np.inf          # max force per coupler
    acc0[ACC_HEAD + M:ACC_HEAD + 2 * M] = np.inf   # min force per coupler
    acc0[ACC_HEAD + 2 * M:ACC_HEAD + 3 * M] = -np.inf
    acc0[ACC_HEAD + 3 * M:] = np.inf
    return LTDModel(params=params, y0=y0, atol_scale=atol_scale, acc0=acc0, vehicle_types=vnames,
                    vehicle_kinds=[v.kind for v in vt], connection_types=cnames, vehicle_length=length,
                    notes=notes)
