"""Numba kernels of the pneumatic brake: right-hand side and analytic Jacobian of the brake states, the
brake force of a vehicle, the observer of the brake metrics and the sampled brake outputs.

Physics (docs/models.md, "Pneumatic brake"; sources in docs/references.md):

* **Brake pipe**: 1-D compressible flow on a staggered grid, ``nc`` cells per vehicle (pressures) and a
  face after each cell (mass flows); isothermal closure p = ρ R T (the pipe's steel wall holds the air near
  ambient temperature over the seconds of a brake application; small-signal speed of sound √(RT), 290 m/s
  at 20 °C, the propagation speed measured on trains, 250-290 m/s, lies near it).  Mass per cell:
  V dp/dt = R T (G_in − G_out − Σ valve, vent and leakage flows).  Momentum per face (low-Mach form:
  the convective term ∂(G²/ρA)/∂x, O(M²), is neglected, as in gas-pipeline transient models):
  dG/dt = (A/ℓ)(p_a − p_b) − (f(Re)/D + K/ℓ)·G|G|/(2 ρ̄ A), ρ̄ = (p_a + p_b)/(2RT), Darcy factor
  f = max(64/Re, 0.3164 Re^−¼, f_rough) (laminar, Blasius smooth-pipe, fully rough floor) or a constant,
  and a loss coefficient K at each hose coupling.  Leakage ṁ = λ (V/RT)(p − p_atm) per cell.
* **Orifices and chokes**: ISO 6358 form with critical ratio b = 0.528, ṁ = C p_u √(1 − ((r − b)/(1 − b))²)
  for r = p_d/p_u > b, C p_u when choked, linear in p_u − p_d in the last 1 % before r = 1 (a finite
  slope at equilibrium: the charged train is an exact, well-conditioned rest state).
* **Valves**: one branch per valve type of :mod:`hpcrail.models.brakes.layout` (UIC distributor, AAR
  control valve, ECP car control device), each a set of gated flows between the pipe cell of the valve,
  the reservoirs, the cylinder and the atmosphere; gates are continuous ramps over a band of pressure.
* **Cylinder**: air mass state; its volume grows with the piston travel (dead volume, linear take-up
  against the return spring, then rigging elasticity), so the pressure solves p·V(p) = q·V_ref piecewise
  (a quadratic per piece).  Block normal force = F_K·(p_g − p_contact)⁺, F_K = piston area × rigging ratio
  × efficiency × empty/load factor.

All flows are written by one function for the right-hand side and (``jac=True``) for the Jacobian, so
the two cannot disagree; every flow adds to the exchange state when it leaves the system or is drawn
from a main reservoir, which makes the air mass a linear invariant (exact to rounding for explicit
methods, to the linear solves for implicit ones).
"""
from __future__ import annotations

import math

from numba import njit

from hpcrail._numba import JIT, JIT_NRT_FREE
from hpcrail.models.brakes.layout import (
    A_BUFF, A_BUFF_K, A_BUFF_T, A_MOVING, A_SAPP, A_SPREV, A_SSTOP, A_STARTED, A_TAPP, A_TPREV, A_TREL, A_TSTOP,
    B_BCMAX, B_BCPREV, B_LVLNEXT, B_PBPREV, B_PBREF, B_TFRONT, B_TRELEND, CP_A2, CP_A3, CP_FK, CP_PC, CP_PS,
    CP_QC, CP_QS, CP_V0, CP_VC, CP_VF, DP_BAND, DP_CEM, DP_CEXH, DP_CSUP, DP_DFS, DP_IMAX, DP_ITAU, DP_PFEED,
    DP_PMR, DP_RDN, DP_REM, DP_RUP, DP_TAU, K_AAR, K_ECP, K_UIC, N_A, N_B, S_ACC_OFF, S_AREA, S_BLAS, S_CV,
    S_DIAM, S_DLVL, S_ECP, S_ECP_DELAY, S_EOT_C, S_EOT_DELAY, S_EOT_J, S_FCONST, S_FRONT_THR, S_FROUGH, S_LAM,
    S_NC, S_NL, S_NLVL, S_NX, S_OBC, S_OIND, S_PATM, S_REL_END, S_RT, S_SEP_C, S_SEP_J, S_SEP_T, S_SEP_TOPEN,
    S_VSTOP, SC_EMERGENCY, SC_INDEPENDENT, SC_SERVICE, V_ALF, V_AL, V_DBV, V_DELAY, V_FM, V_IND, V_KIND, V_KLF,
    V_LEAK, V_MASK, V_RTVC, V_RTVV, V_SLOT0, VP_A_CER, VP_A_CERB, VP_A_CQA, VP_A_CQAV, VP_A_CQS, VP_A_CVENT, VP_A_DAPP,
    VP_A_DEM, VP_A_DREL, VP_A_QSLIM, VP_A_RATE, VP_A_RATE_E, VP_A_RESET, VP_A_VCLOSE, VP_A_WLAP, VP_BAND, VP_CAPP, VP_CAR,
    VP_CREL, VP_ECP_BP, VP_ECP_EM, VP_ECP_FS, VP_U_CCR, VP_U_CQI, VP_U_CQO, VP_U_DAPP, VP_U_PMAX, VP_U_QSCUT,
    VP_U_RATIO,
)
from hpcrail.models.couplers.hysteretic import connection_force
from hpcrail.models.schedule import last_le

#: critical pressure ratio of the orifice law (ISO 6358; 0.528 = (2/(κ+1))^(κ/(κ−1)) for κ = 1.4)
B_CRIT = 0.528
#: pressure ratio above which the orifice law is linear in the pressure difference
R_LIN = 0.99
_INV_1MB = 1.0 / (1.0 - B_CRIT)
_S_LIN = math.sqrt(1.0 - ((R_LIN - B_CRIT) * _INV_1MB) ** 2)
_K_LIN = _S_LIN / (1.0 - R_LIN)
#: bistable term of the AAR service piston, rate·SNAP·s(1 − s)(s − ½): stable at release (0) and application (1),
#: never strong enough to stop a stroke the pressures drive (rate·(1 − s)(1 + SNAP·s(s − ½)) > 0 for SNAP < 16)
SNAP = 4.0


# ================================================================================================
# building blocks: plain numba functions of arrays and scalars, not inline="always" — numba's IR inlining
# re-runs a callee's front end at every call site (the brake right-hand side took 78 s of CPU to compile
# with them inlined that way, 15 s without); LLVM inlines these small functions into the per-vehicle loop
# anyway (docs/performance.md, "Pneumatic brake").  The parts that take the parameter tuple stay inlined.
# ================================================================================================
@njit(**JIT_NRT_FREE)
def orifice(pu, pd, c):
    """Mass flow [kg/s] from ``pu`` to ``pd`` (absolute Pa, pu ≥ pd > 0) through an orifice of sonic
    conductance ``c`` [kg/(s·Pa)] (choked flow = c·pu), and its partials (∂/∂pu, ∂/∂pd).  ISO 6358 form,
    b = 0.528, linear in pu − pd for pd/pu > 0.99."""
    r = pd / pu
    if r <= B_CRIT:
        return c * pu, c, 0.0
    if r < R_LIN:
        z = (r - B_CRIT) * _INV_1MB
        s = math.sqrt(1.0 - z * z)
        ds = -z * _INV_1MB / s
        return c * pu * s, c * (s - r * ds), c * ds
    k = c * _K_LIN
    return k * (pu - pd), k, -k


@njit(**JIT_NRT_FREE)
def biflow(pa, pb, c):
    """Flow [kg/s] from a to b through an orifice in either direction (negative: b → a), and its partials
    (∂/∂pa, ∂/∂pb)."""
    if pa >= pb:
        return orifice(pa, pb, c)
    m, db, da = orifice(pb, pa, c)
    return -m, -da, -db


@njit(**JIT_NRT_FREE)
def ramp(x):
    """``(clamp(x, 0, 1), derivative)``: the gate of a valve opening over a pressure band."""
    if x <= 0.0:
        return 0.0, 0.0
    if x >= 1.0:
        return 1.0, 0.0
    return x, 1.0


@njit(**JIT_NRT_FREE)
def cylinder_pressure(q, cp, patm):
    """Absolute cylinder pressure [Pa] and dp/dq from the mass state q = m·R·T/V_ref [Pa] of a cylinder
    with parameters ``cp`` (``CP_*``): p·V(p) = q·V_ref, V piecewise linear in p (dead volume; take-up
    against the return spring; rigging elasticity after block contact)."""
    qq = q * cp[CP_VF]
    if qq <= cp[CP_QS]:
        return qq / cp[CP_V0], cp[CP_VF] / cp[CP_V0]
    if qq <= cp[CP_QC]:
        a = cp[CP_A2]
        b = cp[CP_V0] - a * (patm + cp[CP_PS])
    else:
        a = cp[CP_A3]
        b = cp[CP_VC] - a * (patm + cp[CP_PC])
    if a == 0.0:
        return qq / b, cp[CP_VF] / b
    disc = math.sqrt(b * b + 4.0 * a * qq)
    p = 2.0 * qq / (b + disc) if b >= 0.0 else (disc - b) / (2.0 * a)
    return p, cp[CP_VF] / (2.0 * a * p + b)


@njit(inline="always", **JIT)
def effective_cylinder_pressure(y, p, j):
    """Absolute pressure [Pa] acting on vehicle j's brake rigging: the cylinder, or for a locomotive the
    larger of it and the independent-brake pressure (double check valve)."""
    base = p.block * j
    pb, _d = cylinder_pressure(y[base + int(p.pn_s[S_OBC])], p.pn_cp[j], p.pn_s[S_PATM])
    if p.pn_v[j, V_IND] != 0.0:
        pi = y[base + int(p.pn_s[S_OIND])]
        if pi > pb:
            pb = pi
    return pb


@njit(inline="always", **JIT)
def block_force(y, p, j):
    """Total block normal force [N] of vehicle j (all blocks, through the rigging):
    F_K·(p_g − p_contact)⁺ with the gauge pressure of :func:`effective_cylinder_pressure`."""
    cp = p.pn_cp[j]
    x = effective_cylinder_pressure(y, p, j) - p.pn_s[S_PATM] - cp[CP_PC]
    if x > 0.0:
        return cp[CP_FK] * x
    return 0.0


@njit(inline="always", **JIT)
def command_index(p, t, y, delay):
    """Index of the driver command in force for a device that follows it after ``delay`` [s] (radio /
    electric delay; time-based schedules: the command at t − delay; distance-based schedules have no
    delays, validated)."""
    if p.basis == 0:
        return last_le(p.sched_x, t - delay)
    return last_le(p.sched_x, y[0] + p.front_offset - p.start_front)


@njit(**JIT_NRT_FREE)
def _put(vals, k0, smap, mid, r, c, v):
    s = smap[mid, r, c]
    if s >= 0:
        vals[k0 + s] += v


@njit(**JIT_NRT_FREE)
def _flow_rhs(dydt, rtv, j, base, lacc, src, dst, m):
    """The right-hand-side part of :func:`_flow`."""
    if src >= 0:
        dydt[base + src] -= m * rtv[j, src]
    else:
        dydt[base + lacc] -= m
    if dst >= 0:
        dydt[base + dst] += m * rtv[j, dst]
    else:
        dydt[base + lacc] += m


@njit(**JIT_NRT_FREE)
def _flow_jac(vals, rtv, smap, j, k0, mid, lacc, src, dst, c0, d0, c1, d1, c2, d2, c3, d3):
    """The Jacobian part of :func:`_flow` (a call: the Jacobian is evaluated seldom, the right-hand side
    stays small; the parameters' two arrays are passed, not the whole parameter tuple)."""
    for i in range(4):
        if i == 0:
            c, d = c0, d0
        elif i == 1:
            c, d = c1, d1
        elif i == 2:
            c, d = c2, d2
        else:
            c, d = c3, d3
        if c < 0 or d == 0.0:
            continue
        if src >= 0:
            _put(vals, k0, smap, mid, src, c, -d * rtv[j, src])
        else:
            _put(vals, k0, smap, mid, lacc, c, -d)
        if dst >= 0:
            _put(vals, k0, smap, mid, dst, c, d * rtv[j, dst])
        else:
            _put(vals, k0, smap, mid, lacc, c, d)


@njit(**JIT_NRT_FREE)
def _flow(jac, dydt, vals, rtv, smap, j, base, k0, mid, lacc, src, dst, m, c0, d0, c1, d1, c2, d2, c3, d3):
    """Add a flow ``m`` [kg/s] from local state ``src`` to ``dst`` (−1: outside: the atmosphere for a
    destination, a main reservoir for a source) of vehicle j to the right-hand side, or (``jac``) its
    partials ``d_i`` with respect to the local columns ``c_i`` (−1: unused) to the Jacobian slots.  A state
    changes by R·T/V (``pn_rtv``) per kg; the exchange state ``lacc`` collects what leaves or enters.
    ``jac`` is a constant of the caller: LLVM, inlining this function, drops the other part."""
    if jac:
        _flow_jac(vals, rtv, smap, j, k0, mid, lacc, src, dst, c0, d0, c1, d1, c2, d2, c3, d3)
    else:
        _flow_rhs(dydt, rtv, j, base, lacc, src, dst, m)


@njit(**JIT_NRT_FREE)
def _friction(g, pa, pb, kl, s):
    """Wall friction and coupling loss of a face: Φ = (f·G|G|/D + K/ℓ·G|G|)·R·T/((pa + pb)·A) [kg/s²]
    and (∂Φ/∂G, ∂Φ/∂pa = ∂Φ/∂pb)."""
    ag = abs(g)
    if s[S_FCONST] != 0.0:
        fg2 = s[S_FROUGH] * ag * ag
        dfg2 = 2.0 * s[S_FROUGH] * ag
    else:
        fg2 = s[S_LAM] * ag
        dfg2 = s[S_LAM]
        r4 = math.sqrt(math.sqrt(ag))
        bl = s[S_BLAS] * ag * r4 * r4 * r4
        if bl > fg2:
            fg2 = bl
            dfg2 = 1.75 * s[S_BLAS] * r4 * r4 * r4
        rough = s[S_FROUGH] * ag * ag
        if rough > fg2:
            fg2 = rough
            dfg2 = 2.0 * s[S_FROUGH] * ag
    c0 = s[S_RT] / ((pa + pb) * s[S_AREA])
    mag = c0 * (fg2 / s[S_DIAM] + kl * ag * ag)
    dmag = c0 * (dfg2 / s[S_DIAM] + 2.0 * kl * ag)
    phi = mag if g >= 0.0 else -mag
    return phi, dmag, -phi / (pa + pb)


# ================================================================================================
# one vehicle
# ================================================================================================
@njit(inline="always", **JIT)
def _index(p, j):
    """Indices of vehicle j's brake block: ``(base, lv, l_ar, l_bc, l_x, l_eq, l_ind, lacc, k0, mid)`` — the
    global index of local state 0, the local indices of the valve's pipe cell, the auxiliary reservoir,
    the cylinder, the first valve state, the equalising and independent pressures and the exchange state,
    and the vehicle's first Jacobian slot and pattern."""
    s = p.pn_s
    nc = int(s[S_NC])
    l_ar = 2 * nc
    l_x = l_ar + 2
    l_eq = l_x + int(s[S_NX])
    return (p.block * j + 2, 2 * int(s[S_CV]), l_ar, l_ar + 1, l_x, l_eq, l_eq + 1, l_eq + 2,
            int(p.pn_v[j, V_SLOT0]), int(p.pn_v[j, V_MASK]))


@njit(inline="always", **JIT)
def _pipe(t, y, p, dydt, vals, j, jac, sepf):
    """Brake-pipe cells and faces of vehicle j (mass, momentum, leakage); see :func:`_vehicle`."""
    s = p.pn_s
    patm = s[S_PATM]
    smap = p.pn_smap
    base, lv, l_ar, l_bc, l_x, l_eq, l_ind, lacc, k0, mid = _index(p, j)
    B = p.block
    N = p.n_veh
    nc = int(s[S_NC])
    nl = int(s[S_NL])
    pv_ = p.pn_v[j]
    # ---------------- brake pipe ------------------------------------------------------------------
    sep_j = int(s[S_SEP_J])
    fm_this = pv_[V_FM] * ((1.0 - sepf) if j == sep_j else 1.0)
    fm_prev = 0.0
    if j > 0:
        fm_prev = p.pn_v[j - 1, V_FM] * ((1.0 - sepf) if j - 1 == sep_j else 1.0)
    lam = pv_[V_LEAK]
    for c in range(nc):
        lc = 2 * c
        lf = lc + 1
        rtvc = pv_[V_RTVV] if lc == lv else pv_[V_RTVC]
        pc = y[base + lc]
        g_out = y[base + lf]
        fo = fm_this if c == nc - 1 else 1.0
        if c == 0:
            fi = fm_prev
            g_in = y[base - B + 2 * nc - 1] if j > 0 else 0.0
            col_in = nl
        else:
            fi = 1.0
            g_in = y[base + lf - 2]
            col_in = lf - 2
        leak = lam * (pc - patm)
        if not jac:
            dydt[base + lc] += rtvc * (fi * g_in - fo * g_out) - leak
            dydt[base + lacc] += leak / rtvc
        else:
            if fi != 0.0:
                _put(vals, k0, smap, mid, lc, col_in, rtvc * fi)
            _put(vals, k0, smap, mid, lc, lf, -rtvc * fo)
            _put(vals, k0, smap, mid, lc, lc, -lam)
            _put(vals, k0, smap, mid, lacc, lc, lam / rtvc)
        # the face behind cell c
        if c < nc - 1:
            pn = y[base + lc + 2]
            al = pv_[V_AL]
            kl = 0.0
            col_n = lc + 2
        elif j < N - 1:
            pn = y[base + B]
            al = pv_[V_ALF]
            kl = pv_[V_KLF]
            col_n = nl + 1
        else:
            continue   # the closed angle cock at the tail: no flow, derivative 0
        if jac or g_out != 0.0:
            phi, dphi_g, dphi_p = _friction(g_out, pc, pn, kl, s)
        else:   # no flow, no friction (a charged train at rest: the common case)
            phi, dphi_g, dphi_p = 0.0, 0.0, 0.0
        if not jac:
            dydt[base + lf] = al * (pc - pn) - phi
        else:
            _put(vals, k0, smap, mid, lf, lc, al - dphi_p)
            _put(vals, k0, smap, mid, lf, col_n, -al - dphi_p)
            _put(vals, k0, smap, mid, lf, lf, -dphi_g)


@njit(inline="always", **JIT)
def _valve_pressures(y, p, j, base, lv, l_ar, l_bc):
    """``(p_pipe, p_AR, p_BC, dp_BC/dq, p_BC gauge, 1/band)`` at vehicle j's valve (absolute Pa but the gauge)."""
    patm = p.pn_s[S_PATM]
    pb, dpb = cylinder_pressure(y[base + l_bc], p.pn_cp[j], patm)
    return y[base + lv], y[base + l_ar], pb, dpb, pb - patm, 1.0 / p.pn_vp[j, VP_BAND]


@njit(inline="always", **JIT)
def _charge_auxiliary(jac, dydt, vals, p, j, base, k0, mid, lacc, lv, l_ar, pv, pa):
    """The auxiliary reservoir charged from the pipe through its choke and a check valve (UIC, ECP)."""
    if pv > pa:
        m, d0, d1 = orifice(pv, pa, p.pn_vp[j, VP_CAR])
        _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, lv, l_ar, m, lv, d0, l_ar, d1, -1, 0.0, -1, 0.0)


@njit(inline="always", **JIT)
def _ecp(t, y, p, dydt, vals, j, jac, ecp_svc, ecp_em):
    """ECP car control device of vehicle j (electric command after its delay; the pipe charges the reservoir)."""
    s = p.pn_s
    patm = s[S_PATM]
    base, lv, l_ar, l_bc, l_x, l_eq, l_ind, lacc, k0, mid = _index(p, j)
    vp = p.pn_vp[j]
    pv, pa, pb, dpb, pbg, iw = _valve_pressures(y, p, j, base, lv, l_ar, l_bc)
    # electric command after its delay; emergency also when the pipe is vented (backup)
    tau = ecp_em * vp[VP_ECP_EM] if ecp_em != 0.0 else ecp_svc * vp[VP_ECP_FS]
    dtau_pv = 0.0
    gb, dgb = ramp((vp[VP_ECP_BP] - (pv - patm)) * iw)
    if gb * vp[VP_ECP_EM] > tau:
        tau = gb * vp[VP_ECP_EM]
        dtau_pv = -dgb * iw * vp[VP_ECP_EM]
    _charge_auxiliary(jac, dydt, vals, p, j, base, k0, mid, lacc, lv, l_ar, pv, pa)
    if pa > pb:
        ga, dga = ramp((tau - pbg) * iw)
        if ga > 0.0 or dga > 0.0:
            f, df_a, df_b = orifice(pa, pb, vp[VP_CAPP])
            _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, l_ar, l_bc, ga * f, l_ar, ga * df_a, l_bc,
                  (-dga * iw * f + ga * df_b) * dpb, lv, dga * iw * dtau_pv * f, -1, 0.0)
    if pb > patm:
        gr, dgr = ramp((pbg - tau) * iw)
        if gr > 0.0 or dgr > 0.0:
            f, df_b, _x = orifice(pb, patm, vp[VP_CREL])
            _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, l_bc, -1, gr * f, l_bc,
                  (dgr * iw * f + gr * df_b) * dpb, lv, -dgr * iw * dtau_pv * f, -1, 0.0, -1, 0.0)


@njit(inline="always", **JIT)
def _uic(t, y, p, dydt, vals, j, jac):
    """UIC distributor of vehicle j."""
    s = p.pn_s
    patm = s[S_PATM]
    base, lv, l_ar, l_bc, l_x, l_eq, l_ind, lacc, k0, mid = _index(p, j)
    vp = p.pn_vp[j]
    pv, pa, pb, dpb, pbg, iw = _valve_pressures(y, p, j, base, lv, l_ar, l_bc)
    pr = y[base + l_x]
    pq = y[base + l_x + 1]
    # auxiliary reservoir: charged from the pipe through a check valve
    _charge_auxiliary(jac, dydt, vals, p, j, base, k0, mid, lacc, lv, l_ar, pv, pa)
    # cylinder target from the reduction seen against the control reservoir (graduated both ways)
    d = pr - pv
    ratio = vp[VP_U_RATIO]
    tau = ratio * d
    dtau = ratio
    if tau <= 0.0:
        tau = 0.0
        dtau = 0.0
    elif tau >= vp[VP_U_PMAX]:
        tau = vp[VP_U_PMAX]
        dtau = 0.0
    if pa > pb:
        ga, dga = ramp((tau - pbg) * iw)
        if ga > 0.0 or dga > 0.0:
            f, df_a, df_b = orifice(pa, pb, vp[VP_CAPP])
            e_ = dga * iw * dtau * f
            _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, l_ar, l_bc, ga * f, l_ar, ga * df_a, l_bc,
                  (-dga * iw * f + ga * df_b) * dpb, l_x, e_, lv, -e_)
    if pb > patm:
        gr, dgr = ramp((pbg - tau) * iw)
        if gr > 0.0 or dgr > 0.0:
            f, df_b, _x = orifice(pb, patm, vp[VP_CREL])
            e_ = dgr * iw * dtau * f
            _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, l_bc, -1, gr * f, l_bc,
                  (dgr * iw * f + gr * df_b) * dpb, l_x, -e_, lv, e_, -1, 0.0)
    # release position: the control reservoir follows the pipe through its choke (insensitivity)
    rg, drg = ramp((vp[VP_U_DAPP] - d) * iw)
    if rg > 0.0 or drg > 0.0:
        f, df_v, df_r = biflow(pv, pr, vp[VP_U_CCR])
        _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, lv, l_x, rg * f, lv, drg * iw * f + rg * df_v,
              l_x, -drg * iw * f + rg * df_r, -1, 0.0, -1, 0.0)
    # quick service: in application, while the cylinder is below the cut-off, the pipe feeds the chamber
    gq, dgq = ramp((vp[VP_U_QSCUT] - pbg) * iw)
    qa = (1.0 - rg) * gq
    if pv > pq and (qa > 0.0 or (jac and (drg > 0.0 or dgq > 0.0))):
        f, df_v, df_q = orifice(pv, pq, vp[VP_U_CQI])
        _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, lv, l_x + 1, qa * f,
              lv, -drg * iw * gq * f + qa * df_v, l_x, drg * iw * gq * f, l_bc, -(1.0 - rg) * dgq * iw * dpb * f,
              l_x + 1, qa * df_q)
    if pq > patm:
        f, df_q, _x = orifice(pq, patm, vp[VP_U_CQO])
        _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, l_x + 1, -1, f, l_x + 1, df_q, -1, 0.0, -1, 0.0,
              -1, 0.0)


@njit(inline="always", **JIT)
def _aar(t, y, p, dydt, vals, j, jac):
    """AAR control valve of vehicle j."""
    s = p.pn_s
    patm = s[S_PATM]
    smap = p.pn_smap
    base, lv, l_ar, l_bc, l_x, l_eq, l_ind, lacc, k0, mid = _index(p, j)
    vp = p.pn_vp[j]
    pv, pa, pb, dpb, pbg, iw = _valve_pressures(y, p, j, base, lv, l_ar, l_bc)
    l_er = l_x
    l_qa = l_x + 1
    l_s = l_x + 2
    l_e = l_x + 3
    pe = y[base + l_er]
    pqa = y[base + l_qa]
    sp = y[base + l_s]
    em = y[base + l_e]
    rate = vp[VP_A_RATE]
    rate_e = vp[VP_A_RATE_E]
    # auxiliary reservoir: charged (both ways: stability against slow pipe drops) in release position
    if jac or sp < 1.0:
        f, df_v, df_a = biflow(pv, pa, vp[VP_CAR])
        _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, lv, l_ar, (1.0 - sp) * f, lv, (1.0 - sp) * df_v,
              l_ar, (1.0 - sp) * df_a, l_s, -f, -1, 0.0)
    # service application: AR -> BC while the AR is above the pipe (laps when they are equal)
    if pa > pb and (jac or sp > 0.0):
        iwl = 1.0 / vp[VP_A_WLAP]
        gl, dgl = ramp((pa - pv) * iwl)
        if gl > 0.0 or dgl > 0.0:
            f, df_a, df_b = orifice(pa, pb, vp[VP_CAPP])
            _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, l_ar, l_bc, sp * gl * f,
                  l_s, gl * f, l_ar, sp * (dgl * iwl * f + gl * df_a), lv, -sp * dgl * iwl * f,
                  l_bc, sp * gl * df_b * dpb)
    # release position: the cylinder exhausts completely (direct release)
    if pb > patm and (jac or sp < 1.0):
        f, df_b, _x = orifice(pb, patm, vp[VP_CREL])
        _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, l_bc, -1, (1.0 - sp) * f, l_bc,
              (1.0 - sp) * df_b * dpb, l_s, -f, -1, 0.0, -1, 0.0)
    # emergency reservoir: charged through a check valve until the emergency portion fires
    if pv > pe and (jac or em < 1.0):
        f, df_v, df_e = orifice(pv, pe, vp[VP_A_CER])
        _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, lv, l_er, (1.0 - em) * f, lv, (1.0 - em) * df_v,
              l_er, (1.0 - em) * df_e, l_e, -f, -1, 0.0)
    # quick-action chamber: follows the pipe through a choke (rate sensing)
    f, df_q, df_v = biflow(pqa, pv, vp[VP_A_CQA])
    _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, l_qa, lv, f, l_qa, df_q, lv, df_v, -1, 0.0, -1, 0.0)
    # emergency: vent valve (open while the QAC is above its closing pressure), QAC blow-down, ER <-> BC
    if pv > patm and (jac or em > 0.0):
        gv, dgv = ramp((pqa - patm - vp[VP_A_VCLOSE]) * iw)
        if gv > 0.0 or dgv > 0.0:
            f, df_v, _x = orifice(pv, patm, vp[VP_A_CVENT])
            _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, lv, -1, em * gv * f, l_e, gv * f,
                  l_qa, em * dgv * iw * f, lv, em * gv * df_v, -1, 0.0)
    if pqa > patm and (jac or em > 0.0):
        f, df_q, _x = orifice(pqa, patm, vp[VP_A_CQAV])
        _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, l_qa, -1, em * f, l_e, f, l_qa, em * df_q,
              -1, 0.0, -1, 0.0)
    if jac or em > 0.0:   # both ways: the emergency reservoir, the auxiliary reservoir and the cylinder equalise
        f, df_e, df_b = biflow(pe, pb, vp[VP_A_CERB])
        _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, l_er, l_bc, em * f, l_e, f, l_er, em * df_e,
              l_bc, em * df_b * dpb, -1, 0.0)
    # quick service: pipe air into the cylinder at the start of an application, up to its limit
    if pv > pb and (jac or sp > 0.0):
        gq, dgq = ramp((vp[VP_A_QSLIM] - pbg) * iw)
        if gq > 0.0 or dgq > 0.0:
            f, df_v, df_b = orifice(pv, pb, vp[VP_A_CQS])
            _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, lv, l_bc, sp * gq * f, l_s, gq * f,
                  lv, sp * gq * df_v, l_bc, sp * (-dgq * iw * f + gq * df_b) * dpb, -1, 0.0)
    # service piston s (0 release .. 1 application) and emergency latch e (0 .. 1 fired).  The piston has no
    # stable middle position (SNAP: the pressure differences move it, the bistable term finishes the stroke to
    # the nearer end): a piston left part-way by a slow release at the rear of a long train would otherwise
    # keep the release exhaust and the quick service open together — a permanent leak pipe -> cylinder ->
    # atmosphere that holds the pipe, and so the piston, where it is (the rear of train4_pneumatic never
    # released) — and charge the reservoir from the pipe in lap, which cancels the release differential.
    ga, dga = ramp((pa - pv - vp[VP_A_DAPP]) * iw)
    gr, dgr = ramp((pv - pa - vp[VP_A_DREL]) * iw)
    gf, dgf = ramp((pqa - pv - vp[VP_A_DEM]) * iw)
    gz, dgz = ramp((pv - patm - vp[VP_A_RESET]) * iw)
    if not jac:
        dydt[base + l_s] = rate * (ga * (1.0 - sp) - gr * sp + SNAP * sp * (1.0 - sp) * (sp - 0.5))
        dydt[base + l_e] = rate_e * (gf * (1.0 - em) - gz * em)
    else:
        _put(vals, k0, smap, mid, l_s, l_ar, rate * iw * (dga * (1.0 - sp) + dgr * sp))
        _put(vals, k0, smap, mid, l_s, lv, -rate * iw * (dga * (1.0 - sp) + dgr * sp))
        _put(vals, k0, smap, mid, l_s, l_s, -rate * (ga + gr) + rate * SNAP * (-3.0 * sp * sp + 3.0 * sp - 0.5))
        _put(vals, k0, smap, mid, l_e, l_qa, rate_e * iw * dgf * (1.0 - em))
        _put(vals, k0, smap, mid, l_e, lv, -rate_e * iw * (dgf * (1.0 - em) + dgz * em))
        _put(vals, k0, smap, mid, l_e, l_e, -rate_e * (gf + gz))


@njit(inline="always", **JIT)
def _dbv(t, y, p, dydt, vals, j, jac):
    """Driver's brake valve and independent brake of locomotive j."""
    s = p.pn_s
    patm = s[S_PATM]
    smap = p.pn_smap
    base, lv, l_ar, l_bc, l_x, l_eq, l_ind, lacc, k0, mid = _index(p, j)
    pv_ = p.pn_v[j]
    pv = y[base + lv]
    # ---------------- driver's brake valve (lead and remote locomotives) ------------------------------
    if pv_[V_DBV] != 0.0 or pv_[V_IND] != 0.0:
        dp = p.pn_dp[j]
        ic = command_index(p, t, y, pv_[V_DELAY])
        if pv_[V_IND] != 0.0:
            itau = 1.0 / dp[DP_ITAU]
            if not jac:
                dydt[base + l_ind] = (patm + p.pn_sched[ic, SC_INDEPENDENT] * dp[DP_IMAX] - y[base + l_ind]) * itau
            else:
                _put(vals, k0, smap, mid, l_ind, l_ind, -itau)
        if pv_[V_DBV] != 0.0:
            emg = p.pn_sched[ic, SC_EMERGENCY] != 0.0
            svc = 0.0 if s[S_ECP] != 0.0 else p.pn_sched[ic, SC_SERVICE]
            peq = y[base + l_eq]
            if emg:
                target = patm
                rdn = dp[DP_REM]
            else:
                target = dp[DP_PFEED] - svc * dp[DP_DFS]
                rdn = dp[DP_RDN]
            r = (target - peq) / dp[DP_TAU]
            dr = -1.0 / dp[DP_TAU]
            if r > dp[DP_RUP]:
                r = dp[DP_RUP]
                dr = 0.0
            elif r < -rdn:
                r = -rdn
                dr = 0.0
            if not jac:
                dydt[base + l_eq] = r
            else:
                _put(vals, k0, smap, mid, l_eq, l_eq, dr)
            iwr = 1.0 / dp[DP_BAND]
            pmr = dp[DP_PMR]
            gs, dgs = ramp((peq - pv) * iwr)
            if pmr > pv and (gs > 0.0 or dgs > 0.0):
                f, _x, df_v = orifice(pmr, pv, dp[DP_CSUP])
                _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, -1, lv, gs * f, l_eq, dgs * iwr * f,
                      lv, -dgs * iwr * f + gs * df_v, -1, 0.0, -1, 0.0)
            if pv > patm:
                gx, dgx = ramp((pv - peq) * iwr)
                if gx > 0.0 or dgx > 0.0:
                    f, df_v, _x = orifice(pv, patm, dp[DP_CEXH])
                    _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, lv, -1, gx * f, lv, dgx * iwr * f + gx * df_v,
                          l_eq, -dgx * iwr * f, -1, 0.0, -1, 0.0)
                if emg:
                    f, df_v, _x = orifice(pv, patm, dp[DP_CEM])
                    _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, lv, -1, f, lv, df_v, -1, 0.0, -1, 0.0,
                          -1, 0.0)


@njit(inline="always", **JIT)
def _vents(t, y, p, dydt, vals, j, jac, sepf, eot_em):
    """Vents at the pipe ends of vehicle j: the two-way EOT at the tail, the parted hose of a separation."""
    s = p.pn_s
    patm = s[S_PATM]
    base, lv, l_ar, l_bc, l_x, l_eq, l_ind, lacc, k0, mid = _index(p, j)
    sep_j = int(s[S_SEP_J])
    # ---------------- vents at the rear / front end: two-way EOT, train separation ---------------------
    llast = 2 * (int(s[S_NC]) - 1)
    plast = y[base + llast]
    if j == int(s[S_EOT_J]) and eot_em != 0.0 and plast > patm:
        f, df, _x = orifice(plast, patm, s[S_EOT_C])
        _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, llast, -1, f, llast, df, -1, 0.0, -1, 0.0, -1, 0.0)
    if sepf > 0.0:
        if j == sep_j and plast > patm:
            f, df, _x = orifice(plast, patm, s[S_SEP_C])
            _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, llast, -1, sepf * f, llast, sepf * df, -1, 0.0,
                  -1, 0.0, -1, 0.0)
        if j == sep_j + 1 and y[base] > patm:
            f, df, _x = orifice(y[base], patm, s[S_SEP_C])
            _flow(jac, dydt, vals, p.pn_rtv, p.pn_smap, j, base, k0, mid, lacc, 0, -1, sepf * f, 0, sepf * df, -1, 0.0, -1, 0.0,
                  -1, 0.0)


@njit(inline="always", **JIT)
def _vehicle(t, y, p, dydt, vals, j, jac, sepf, ecp_svc, ecp_em, eot_em):
    """Brake-state derivatives (``jac=False``: into ``dydt``, the vehicle's brake block zeroed first) or
    Jacobian entries (``jac=True``: added to ``vals``, whose slots of vehicle j were zeroed) of vehicle j
    (0-based); see the module docstring.  One function per part, each a flow list written once for both."""
    if not jac:
        base = p.block * j + 2
        for ll in range(int(p.pn_s[S_NL])):
            dydt[base + ll] = 0.0
    _pipe(t, y, p, dydt, vals, j, jac, sepf)
    kind = int(p.pn_v[j, V_KIND])
    if kind == K_ECP:
        _ecp(t, y, p, dydt, vals, j, jac, ecp_svc, ecp_em)
    elif kind == K_UIC:
        _uic(t, y, p, dydt, vals, j, jac)
    elif kind == K_AAR:
        _aar(t, y, p, dydt, vals, j, jac)
    if p.pn_v[j, V_DBV] != 0.0 or p.pn_v[j, V_IND] != 0.0:
        _dbv(t, y, p, dydt, vals, j, jac)
    _vents(t, y, p, dydt, vals, j, jac, sepf, eot_em)


@njit(**JIT_NRT_FREE)
def _vehicle_jac(t, y, p, vals, j, sepf, ecp_svc, ecp_em, eot_em):
    """:func:`_vehicle`, Jacobian entries (one call per vehicle: a call passes the whole parameter tuple,
    ~0.1 µs, negligible for the seldom Jacobian; the right-hand side inlines :func:`_vehicle`)."""
    _vehicle(t, y, p, vals, vals, j, True, sepf, ecp_svc, ecp_em, eot_em)


@njit(inline="always", **JIT)
def _globals(t, y, p):
    """Time-dependent quantities shared by every vehicle: separation opening (0..1), the ECP command
    (service fraction, emergency flag) after its delay, the EOT's emergency command after its delay."""
    s = p.pn_s
    sepf = 0.0
    if s[S_SEP_J] >= 0.0:
        x = (t - s[S_SEP_T]) / s[S_SEP_TOPEN]
        sepf = 0.0 if x <= 0.0 else (1.0 if x >= 1.0 else x)
    ecp_svc = 0.0
    ecp_em = 0.0
    if s[S_ECP] != 0.0:
        ic = command_index(p, t, y, s[S_ECP_DELAY])
        ecp_svc = p.pn_sched[ic, SC_SERVICE]
        ecp_em = p.pn_sched[ic, SC_EMERGENCY]
    eot_em = 0.0
    if s[S_EOT_J] >= 0.0:
        eot_em = p.pn_sched[command_index(p, t, y, s[S_EOT_DELAY]), SC_EMERGENCY]
    return sepf, ecp_svc, ecp_em, eot_em


@njit(**JIT_NRT_FREE)
def brake_eval_range(t, y, p, dydt, j0, j1):
    """Derivatives of the brake states of vehicles ``j0 <= j < j1`` (0-based) into ``dydt`` (float64[n],
    the LTD layout with the brake block of :mod:`hpcrail.models.brakes.layout`).  Reads the neighbours'
    coupling states (face nc−1 of vehicle j0−1, cell 0 of vehicle j1) from ``y``."""
    sepf, ecp_svc, ecp_em, eot_em = _globals(t, y, p)
    for j in range(j0, j1):
        _vehicle(t, y, p, dydt, dydt, j, False, sepf, ecp_svc, ecp_em, eot_em)   # inlined: no call per vehicle


@njit(**JIT_NRT_FREE)
def brake_jac_range(t, y, p, vals, j0, j1):
    """Jacobian entries of the brake rows of vehicles ``j0 <= j < j1`` into their slots of ``vals``
    (zeroed first; slots ``pn_v[j, V_SLOT0] + pn_smap[mask, r, c]``)."""
    sepf, ecp_svc, ecp_em, eot_em = _globals(t, y, p)
    nl = int(p.pn_s[S_NL])
    for j in range(j0, j1):
        k0 = int(p.pn_v[j, V_SLOT0])
        k1 = int(p.pn_v[j + 1, V_SLOT0]) if j + 1 < p.n_veh else vals.size
        for k in range(k0, k1):
            vals[k] = 0.0
        _vehicle_jac(t, y, p, vals, j, sepf, ecp_svc, ecp_em, eot_em)
    return nl


# ================================================================================================
# observer: brake metrics over every accepted step
# ================================================================================================
@njit(**JIT_NRT_FREE)
def brake_observe(t, y, p, acc):
    """Update the brake metrics in ``acc`` (offset ``pn_s[S_ACC_OFF]``, layout ``A_*``/``B_*`` and the level
    table of :mod:`hpcrail.models.brakes.layout`) after an accepted step at time ``t``.

    From the first brake command on (``A_TAPP``; detected here for distance-based schedules): the front
    arrival time per vehicle (brake pipe ``S_FRONT_THR`` below its value before the command, interpolated
    between steps), the crossing times of the cylinder levels ``(k+1)·S_DLVL`` and the largest cylinder
    pressure (until the release command ``A_TREL``), the time the cylinder falls to ``S_REL_END`` after
    it, the largest buff force over the couplers until the release command (table-law connections), and
    the stop (every |v| ≤ ``S_VSTOP``) of a train that was moving."""
    s = p.pn_s
    o = int(s[S_ACC_OFF])
    N = p.n_veh
    B = p.block
    ob = o + N_A
    lvl0 = ob + N_B * N
    K = int(s[S_NLVL])
    dl = s[S_DLVL]
    patm = s[S_PATM]
    lv = 2 + 2 * int(s[S_CV])
    tprev = acc[o + A_TPREV]
    if p.basis == 1:   # distance-based schedule: detect the application and release commands
        ic = command_index(p, t, y, 0.0)
        on = p.pn_sched[ic, SC_SERVICE] > 0.0 or p.pn_sched[ic, SC_EMERGENCY] != 0.0
        if math.isnan(acc[o + A_TAPP]) and on:
            acc[o + A_TAPP] = t
        elif not math.isnan(acc[o + A_TAPP]) and not on and acc[o + A_TREL] == math.inf and t > acc[o + A_TAPP]:
            acc[o + A_TREL] = t
    tapp = acc[o + A_TAPP]
    trel = acc[o + A_TREL]
    h = t - tprev
    if not math.isnan(tapp) and t >= tapp:
        if acc[o + A_STARTED] == 0.0:
            acc[o + A_STARTED] = 1.0
            w = (tapp - tprev) / h if h > 0.0 else 1.0
            acc[o + A_SAPP] = acc[o + A_SPREV] + w * (y[0] - acc[o + A_SPREV])
            for j in range(N):
                acc[ob + B_PBREF * N + j] = acc[ob + B_PBPREV * N + j]
            vmax = 0.0
            for j in range(N):
                vmax = max(vmax, abs(y[B * j + 1]))
            acc[o + A_MOVING] = 1.0 if vmax > s[S_VSTOP] else 0.0
        applying = t < trel
        for j in range(N):
            pv = y[B * j + lv]
            pprev = acc[ob + B_PBPREV * N + j]
            if math.isnan(acc[ob + B_TFRONT * N + j]):
                thr = acc[ob + B_PBREF * N + j] - s[S_FRONT_THR]
                if pv <= thr:
                    tc = t if pprev == pv else tprev + (pprev - thr) / (pprev - pv) * h
                    acc[ob + B_TFRONT * N + j] = max(tc, tapp)
            pbg = effective_cylinder_pressure(y, p, j) - patm
            bprev = acc[ob + B_BCPREV * N + j]
            if applying:
                if pbg > acc[ob + B_BCMAX * N + j]:
                    acc[ob + B_BCMAX * N + j] = pbg
                nxt = int(acc[ob + B_LVLNEXT * N + j])
                while nxt < K and pbg >= (nxt + 1) * dl:
                    lvl = (nxt + 1) * dl
                    tc = t if pbg == bprev else tprev + (lvl - bprev) / (pbg - bprev) * h
                    acc[lvl0 + j * K + nxt] = max(tc, tapp)
                    nxt += 1
                acc[ob + B_LVLNEXT * N + j] = nxt
            elif math.isnan(acc[ob + B_TRELEND * N + j]) and acc[ob + B_BCMAX * N + j] > s[S_REL_END] \
                    and pbg <= s[S_REL_END]:
                end = s[S_REL_END]
                tc = t if pbg == bprev else tprev + (bprev - end) / (bprev - pbg) * h
                acc[ob + B_TRELEND * N + j] = max(tc, trel)
        if acc[o + A_MOVING] != 0.0 and math.isnan(acc[o + A_TSTOP]):
            vmax = 0.0
            for j in range(N):
                vmax = max(vmax, abs(y[B * j + 1]))
            if vmax <= s[S_VSTOP]:
                acc[o + A_TSTOP] = t
                acc[o + A_SSTOP] = y[0]
        if applying:
            for k in range(N - 1):
                f = connection_force(y[B * (k + 1)], y[B * k + 1] - y[B * (k + 1) + 1], p.conn_type[k], p.conn_rowpar,
                                     p.conn_typepar, p.conn_fm, p.conn_fa)
                if f < acc[o + A_BUFF]:
                    acc[o + A_BUFF] = f
                    acc[o + A_BUFF_K] = k + 1
                    acc[o + A_BUFF_T] = t
    acc[o + A_TPREV] = t
    acc[o + A_SPREV] = y[0]
    for j in range(N):
        acc[ob + B_PBPREV * N + j] = y[B * j + lv]
        acc[ob + B_BCPREV * N + j] = effective_cylinder_pressure(y, p, j) - patm


# ================================================================================================
# sampled outputs
# ================================================================================================
@njit(**JIT)
def brake_series(Y, p, bp, ar, bc, x0, fn):
    """Gauge pressures [Pa] per sample and vehicle from the sampled states ``Y`` (float64[k, n]): brake
    pipe at the valve's cell ``bp``, auxiliary reservoir ``ar``, effective cylinder ``bc``, the valve's
    first own reservoir ``x0`` (UIC control reservoir, AAR emergency reservoir), and the block normal
    force ``fn`` [N] (all float64[k, N]).  Rows with NaN states are left as they are."""
    s = p.pn_s
    N = p.n_veh
    B = p.block
    patm = s[S_PATM]
    lv = 2 + 2 * int(s[S_CV])
    lar = 2 + 2 * int(s[S_NC])
    for k in range(Y.shape[0]):
        if not math.isfinite(Y[k, 0]):
            continue
        y = Y[k]
        for j in range(N):
            bp[k, j] = y[B * j + lv] - patm
            ar[k, j] = y[B * j + lar] - patm
            x0[k, j] = y[B * j + lar + 2] - patm
            bc[k, j] = effective_cylinder_pressure(y, p, j) - patm
            fn[k, j] = block_force(y, p, j)
