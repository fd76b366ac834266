"""Scenario → parameter arrays of the pneumatic brake (``pn_*`` fields of
:class:`~hpcrail.models.ltd.build.LTDParams`), its initial state, tolerance scales and observer
accumulator; the notch groups of distributed power.  Layout: :mod:`hpcrail.models.brakes.layout`."""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from hpcrail.kinds.ltd.brakes import (
    BAR, MU_AIR, P_ATM, R_AIR, cylinder_geometry, feed_pressure_bar, is_pneumatic, lead_locomotive,
    pneumatic_equipment, remote_heads, sonic_conductance, valve_of,
)
from hpcrail.models.brakes import layout as L


def notch_groups(sc, vnames: list[str]) -> dict:
    """``n_groups``, ``notch_group`` int64[N] and ``group_delay`` float64[G] (distributed power: group 0 is
    the lead consist; each remote consist from its head on is a group with its radio delay)."""
    heads = remote_heads(sc)
    start = {j: g + 1 for g, (j, _d) in enumerate(heads)}
    grp = np.zeros(len(vnames), np.int64)
    g = 0
    for j, n in enumerate(vnames):
        g = start.get(j, g)
        if sc.vehicle_types[n].kind == "locomotive":
            grp[j] = g
    return dict(n_groups=1 + len(heads), notch_group=grp, group_delay=np.array([0.0] + [d for _j, d in heads]))


def placeholder_arrays() -> dict:
    """``pn_*`` fields of a model without the pneumatic brake (same numba types, never read)."""
    s = np.zeros(L.N_S)
    s[[L.S_EOT_J, L.S_SEP_J]] = -1.0
    return dict(pn_s=s, pn_v=np.zeros((1, L.N_V)), pn_vp=np.zeros((1, L.N_VP)), pn_cp=np.zeros((1, L.N_CP)),
                pn_dp=np.zeros((1, L.N_DP)), pn_rtv=np.zeros((1, 1)), pn_smap=-np.ones((1, 1, 3), np.int64),
                pn_sched=np.zeros((1, 3)))


@dataclasses.dataclass
class PneumaticLayout:
    """The pneumatic brake of a built model: parameter arrays, block size and the brake part of the initial
    state, tolerance scales and observer accumulator."""

    arrays: dict
    block: int
    y0_block: np.ndarray        #: [N, nl] initial brake states (charged, released)
    atol_block: np.ndarray      #: [nl] per local state
    acc: np.ndarray             #: observer accumulator of the brake metrics (appended to the LTD's)
    nl: int
    nc: int
    cv: int
    nx: int
    pipe_x: np.ndarray          #: [N] pipe distance of each valve cell from the head end [m]
    t_app: float
    t_rel: float


def _schedule_times(sc) -> tuple[float, float, np.ndarray]:
    """First application and the release after it (time-based schedules; NaN/inf otherwise), and the
    ``pn_sched`` table aligned with the LTD schedule (sentinel row first)."""
    rows = [(0.0, 0.0, 0.0)]
    b, em, ind = 0.0, 0.0, 0.0
    t_app, t_rel = math.nan, math.inf
    for c in sc.driver.commands:
        if c.brake is not None:
            em = 1.0 if c.brake == "emergency" else 0.0
            b = 0.0 if c.brake == "emergency" else float(c.brake)
        if c.independent_brake is not None:
            ind = float(c.independent_brake)
        rows.append((b, em, ind))
        if sc.driver.basis == "time":
            on = b > 0.0 or em != 0.0
            if on and math.isnan(t_app):
                t_app = c.time_s
            elif not on and not math.isnan(t_app) and t_rel == math.inf:
                t_rel = c.time_s
    return t_app, t_rel, np.array(rows, float)


def pneumatic_layout(sc, vnames: list[str], mass: np.ndarray, length: np.ndarray, slot_start: int,
                     acc_offset: int) -> PneumaticLayout:
    """Parameter arrays of the pneumatic brake of scenario ``sc`` (``vnames``: vehicle type per vehicle,
    ``mass`` [kg], ``length`` [m] per vehicle), with the brake rows' Jacobian slots from ``slot_start`` and
    the observer's accumulator at ``acc_offset``.  Raises ``ValueError`` for a consist the checks admitted
    but that cannot be built (none known)."""
    ps = sc.air_brake.pneumatic
    N = len(vnames)
    eqs = [pneumatic_equipment(sc.vehicle_types[n]) for n in vnames]
    T = ps.temperature_C + 273.15
    RT = R_AIR * T
    cd = ps.discharge_coefficient

    def cond(d_mm):
        return sonic_conductance(d_mm, cd, T)

    nc = ps.pipe.cells_per_vehicle
    cv = (nc - 1) // 2
    ecp = ps.control == "ecp"
    branches = [L.K_ECP if ecp and valve_of(eq).branch != L.K_CUT else valve_of(eq).branch for eq in eqs]
    nx = max(L.N_VALVE_STATES[k] for k in branches)
    li = L.local_indices(nc, nx)
    nl = li["nl"]
    B = L.block_size(nc, nx)
    feed = feed_pressure_bar(sc)
    p_feed = P_ATM + feed * BAR
    D = ps.pipe.inner_diameter_mm * 1e-3
    A = math.pi * D * D / 4
    # ---- who drives the pipe: the lead and the remote heads (their delays); independent brakes
    lead = lead_locomotive(sc)
    heads = dict(remote_heads(sc))
    groups = notch_groups(sc, vnames)
    dbv_delay = {lead: 0.0, **heads}
    eot_j = N - 1 if ps.eot.kind == "two_way" else -1
    sep_j = ps.separation.coupler - 1 if ps.separation is not None else -1
    # ---- per vehicle
    pv = np.zeros((N, L.N_V))
    vp = np.zeros((N, L.N_VP))
    cp = np.zeros((N, L.N_CP))
    dp = np.zeros((N, L.N_DP))
    rtv = np.zeros((N, nl))
    y0 = np.zeros((N, nl))
    dx = length / nc
    x_front = np.concatenate([[0.0], np.cumsum(length)[:-1]])
    lam = ps.pipe.leakage_bar_per_min * BAR / 60.0 / (feed * BAR)
    masks = []
    for j, eq in enumerate(eqs):
        valve = valve_of(eq)
        pv[j, L.V_VC] = A * dx[j]
        pv[j, L.V_RTVC] = RT / (A * dx[j])
        pv[j, L.V_RTVV] = RT / (A * dx[j] + eq.branch_volume_l * 1e-3)
        pv[j, L.V_AL] = A / dx[j]
        if j < N - 1:
            lf = 0.5 * (dx[j] + dx[j + 1])
            pv[j, L.V_ALF] = A / lf
            pv[j, L.V_KLF] = ps.pipe.coupling_loss_coefficient / lf
            pv[j, L.V_FM] = 1.0
        pv[j, L.V_LEAK] = lam
        pv[j, L.V_KIND] = branches[j]
        pv[j, L.V_X] = x_front[j] + (cv + 0.5) * dx[j]
        is_dbv = j in dbv_delay
        has_ind = sc.vehicle_types[vnames[j]].kind == "locomotive" and eq.independent_brake is not None
        pv[j, L.V_DBV] = 1.0 if is_dbv else 0.0
        pv[j, L.V_IND] = 1.0 if has_ind else 0.0
        pv[j, L.V_DELAY] = dbv_delay[j] if is_dbv else float(groups["group_delay"][groups["notch_group"][j]])
        for k, v in valve.pack(eq.valve, cond).items():
            vp[j, k] = v
        fs, em = valve.cylinder_pressures(eq, feed)
        vp[j, L.VP_ECP_FS] = fs * BAR
        vp[j, L.VP_ECP_EM] = em * BAR
        vp[j, L.VP_ECP_BP] = ps.ecp.pipe_emergency_below_bar * BAR
        g = cylinder_geometry(eq)
        factor = eq.rigging.ratio * eq.rigging.efficiency
        if eq.empty_load is not None and mass[j] < eq.empty_load.changeover_mass_t * 1e3:
            factor *= eq.empty_load.empty_force_ratio
        cp[j, L.CP_V0], cp[j, L.CP_VC], cp[j, L.CP_VF] = g["v0"], g["vc"], g["vc"]
        cp[j, L.CP_PS], cp[j, L.CP_PC] = g["ps"], g["pc"]
        cp[j, L.CP_A2] = (g["vc"] - g["v0"]) / (g["pc"] - g["ps"]) if g["pc"] > g["ps"] else 0.0
        cp[j, L.CP_A3] = g["a3"]
        cp[j, L.CP_QS] = (P_ATM + g["ps"]) * g["v0"]
        cp[j, L.CP_QC] = (P_ATM + g["pc"]) * g["vc"]
        cp[j, L.CP_FK] = g["area"] * factor
        if eq.driver_brake_valve is not None:
            d = eq.driver_brake_valve
            dp[j, L.DP_PFEED] = P_ATM + d.feed_pressure_bar * BAR
            dp[j, L.DP_DFS] = d.full_service_reduction_bar * BAR
            dp[j, L.DP_RDN] = d.service_rate_bar_per_s * BAR
            dp[j, L.DP_RUP] = d.release_rate_bar_per_s * BAR
            dp[j, L.DP_REM] = d.emergency_rate_bar_per_s * BAR
            dp[j, L.DP_TAU] = d.equalising_time_constant_s
            dp[j, L.DP_PMR] = P_ATM + d.main_reservoir_bar * BAR
            dp[j, L.DP_CSUP] = cond(d.supply_mm)
            dp[j, L.DP_CEXH] = cond(d.exhaust_mm)
            dp[j, L.DP_CEM] = cond(d.emergency_vent_mm)
            dp[j, L.DP_BAND] = d.relay_band_bar * BAR
        if eq.independent_brake is not None:
            dp[j, L.DP_IMAX] = eq.independent_brake.max_pressure_bar * BAR
            dp[j, L.DP_ITAU] = eq.independent_brake.time_constant_s
        # R·T/V of the states holding air, and the charged, released initial state
        for c in range(nc):
            rtv[j, li["cell"](c)] = pv[j, L.V_RTVV] if c == cv else pv[j, L.V_RTVC]
            y0[j, li["cell"](c)] = p_feed
        rtv[j, li["ar"]] = RT / (eq.auxiliary_reservoir_l * 1e-3)
        y0[j, li["ar"]] = p_feed
        rtv[j, li["bc"]] = RT / g["vc"]
        y0[j, li["bc"]] = P_ATM * g["v0"] / g["vc"]
        if branches[j] in (L.K_UIC, L.K_AAR):
            for k, vol in enumerate(valve.volumes(eq.valve)):
                if vol > 0:
                    rtv[j, li["x"](k)] = RT / vol
            if valve.branch == L.K_UIC:
                y0[j, li["x"](0)], y0[j, li["x"](1)] = p_feed, P_ATM
            else:
                y0[j, li["x"](0)], y0[j, li["x"](1)] = p_feed, p_feed
        y0[j, li["eq"]] = p_feed
        y0[j, li["ind"]] = P_ATM
        masks.append(L.reduced_pattern(nc, nx) if ps.jacobian == "reduced" else
                     L.local_pattern(branches[j], nc, nx, cv, dbv=is_dbv, ind=has_ind, eot=j == eot_j,
                                     sep_rear=j == sep_j, sep_front=j == sep_j + 1 and sep_j >= 0))
    smap, mask_id, counts = L.slot_maps(masks, nl)
    pv[:, L.V_MASK] = mask_id
    pv[:, L.V_SLOT0] = slot_start + np.concatenate([[0], np.cumsum(counts)[:-1]])
    # ---- scalars
    s = np.zeros(L.N_S)
    s[L.S_RT], s[L.S_PATM], s[L.S_AREA], s[L.S_DIAM] = RT, P_ATM, A, D
    s[L.S_LAM] = 64.0 * A * MU_AIR / D
    s[L.S_BLAS] = 0.3164 * (A * MU_AIR / D) ** 0.25
    if ps.pipe.darcy_friction_factor is not None:
        s[L.S_FROUGH], s[L.S_FCONST] = ps.pipe.darcy_friction_factor, 1.0
    elif ps.pipe.roughness_mm > 0:
        s[L.S_FROUGH] = (-2.0 * math.log10(ps.pipe.roughness_mm * 1e-3 / D / 3.7)) ** -2   # von Kármán
    s[L.S_NC], s[L.S_CV], s[L.S_NX], s[L.S_NL] = nc, cv, nx, nl
    s[L.S_OBC], s[L.S_OIND] = 2 + li["bc"], 2 + li["ind"]
    s[L.S_EOT_J], s[L.S_EOT_C], s[L.S_EOT_DELAY] = eot_j, cond(ps.eot.vent_diameter_mm), ps.eot.radio_delay_s
    s[L.S_SEP_J] = sep_j
    if ps.separation is not None:
        s[L.S_SEP_T], s[L.S_SEP_TOPEN] = ps.separation.time_s, ps.separation.opening_time_s
        s[L.S_SEP_C] = cond(ps.separation.hose_diameter_mm)
    s[L.S_ECP], s[L.S_ECP_DELAY] = (1.0 if ecp else 0.0), ps.ecp.delay_s
    s[L.S_ACC_OFF] = acc_offset
    top = max(max(valve_of(eq).cylinder_pressures(eq, feed)) for eq in eqs)
    top = max([top] + [eq.independent_brake.max_pressure_bar for eq in eqs if eq.independent_brake is not None])
    s[L.S_NLVL], s[L.S_DLVL] = L.N_LEVELS, 1.05 * top * BAR / L.N_LEVELS
    m = ps.metrics
    s[L.S_FRONT_THR], s[L.S_REL_END], s[L.S_VSTOP] = m.front_threshold_bar * BAR, m.release_end_bar * BAR, \
        m.standstill_speed_mps
    t_app, t_rel, sched = _schedule_times(sc)
    # ---- tolerance scales (integrator atol multiplies them): pressures in Pa, flows in kg/s, latches,
    # the exchange integral out of the error control (it is a linear combination of the others' flows)
    at = np.full(nl, 1e3)
    for c in range(nc):
        at[li["face"](c)] = 1e2
    at[li["acc"]] = 1e9
    # ---- observer accumulator
    acc = np.zeros(L.N_A + L.N_B * N + L.N_LEVELS * N)
    acc[L.A_TAPP], acc[L.A_TREL] = t_app, t_rel
    acc[[L.A_TSTOP, L.A_SAPP, L.A_SSTOP, L.A_BUFF_T]] = np.nan
    acc[L.A_BUFF] = np.inf
    ob = L.N_A
    acc[ob + L.B_PBPREV * N:ob + (L.B_PBPREV + 1) * N] = y0[:, li["cell"](cv)]
    for b in (L.B_PBREF, L.B_TFRONT, L.B_TRELEND):
        acc[ob + b * N:ob + (b + 1) * N] = np.nan
    acc[ob + L.N_B * N:] = np.nan
    arrays = dict(pn_s=s, pn_v=pv, pn_vp=vp, pn_cp=cp, pn_dp=dp, pn_rtv=rtv, pn_smap=smap, pn_sched=sched)
    return PneumaticLayout(arrays=arrays, block=B, y0_block=y0, atol_block=at, acc=acc, nl=nl, nc=nc, cv=cv, nx=nx,
                           pipe_x=pv[:, L.V_X].copy(), t_app=t_app, t_rel=t_rel)


def matched_shoe_force_N(sc, vehicle_type) -> float:
    """The empirical brake's shoe force of a vehicle type without ``shoe_force_kN``: the pneumatic
    equipment's block force at its full-service cylinder pressure [N]."""
    from hpcrail.kinds.ltd.brakes import full_service_block_force_kN

    return 1e3 * full_service_block_force_kN(vehicle_type.brake.pneumatic, feed_pressure_bar(sc), vehicle_type.mass_t)


__all__ = ["notch_groups", "placeholder_arrays", "pneumatic_layout", "PneumaticLayout", "matched_shoe_force_N",
           "is_pneumatic"]
