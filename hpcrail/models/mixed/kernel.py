"""Numba kernels of the mixed train: detailed multibody vehicles inside a long LTD consist, one state vector,
one integrator (the "MB user force" scheme of Bosso et al. 2024 (paper 000) §2, Figure 1, here in one code).

State vector: the LTD states of the whole consist (:mod:`hpcrail.models.ltd.build`, every vehicle including
the detailed ones, which keep their LTD speed row) followed by one slice per detailed vehicle in the layout
of :mod:`hpcrail.models.vehicle` (its forward motion free).  One evaluation:

1. the LTD right-hand side of the whole consist (monolithic :func:`~hpcrail.models.ltd.kernel.ltd_eval`, or
   the hidden-vehicle blocks of :mod:`hpcrail.partition.mixed`): every hidden vehicle and every connection,
   the connections next to a detailed vehicle included, with the unchanged draft-gear laws;
2. per detailed vehicle j: the forces of its two connections, from the same states by the same
   :func:`~hpcrail.models.couplers.hysteretic.connection_force` (so the force the neighbour feels in step 1
   is bitwise the force the car body feels: action = reaction), act on the car body at its coupler pivots
   along the coupler line (:func:`coupler_directions`); the LTD running resistance (Davis, without its
   curving part, which the wheel/rail contact produces itself) and the grade force act at the car body's
   centre of gravity; the air brake (if enabled) acts as braking torques on the axles; then
   :func:`~hpcrail.models.vehicle.kernel.vehicle_eval` evaluates the vehicle on its slice;
3. the LTD speed row of vehicle j takes the vehicle's forward acceleration: both copies of its speed get the
   same derivative, start equal and stay equal (bitwise with explicit methods).

Coupler geometry (a documented simplification, planar in the horizontal plane): the coupler is a straight
link between the car body's pivot (``coupler_points_m`` of the vehicle: position from the car body's lateral
displacement and yaw in its track frame) and the neighbour's pivot (the 1-DOF neighbour's centre on the
chord of its bogie centres on the track centre line at its LTD position — bogie centres at ±0.35 of its
length, ASSUMED — its axis parallel to the track tangent at its centre, the pivot ``arm`` metres from its
centre).  The force F of the draft-gear law acts along that link: F cos α along the car body's track x,
F sin α laterally (α the angle between the link and the track tangent at the car body).  The neighbour gets
F along its track as every LTD vehicle does; the longitudinal mismatch F (1 - cos α) is O(α²) (≈ 6e-4 F at
α = 34 mrad) and zero on tangent track with the car centred.  Vertical coupler angles and the cant's tilt of
the lateral component are neglected.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.models.couplers.hysteretic import connection_force
from hpcrail.models.ltd.build import LTDParams
from hpcrail.models.ltd.kernel import ltd_eval, ltd_observe, route_means
from hpcrail.models.vehicle.kernel import vehicle_eval, vehicle_observe
from hpcrail.models.vehicle.layout import R_PSI, R_Y, S_POS, S_VEL, W_Y
from hpcrail.models.vehicle.track import track_frame

#: per detailed vehicle, coupler record of :func:`detailed_eval` (columns of ``cdiag``)
(CD_F_FRONT, CD_F_REAR, CD_ALPHA_FRONT, CD_ALPHA_REAR, CD_FY_FRONT, CD_FY_REAR, CD_F_CG, CD_BRAKE,
 CD_GAP_FRONT, CD_GAP_REAR) = range(10)
N_CD = 10


class MixedParams(NamedTuple):
    """Runtime parameters of a mixed train (SI).

    ``ltd``: the consist's LTD parameters; ``vehs``: tuple of D :class:`~hpcrail.models.vehicle.build.VehicleParams`
    (one per detailed vehicle, head first); ``det_j`` int64[D]: 0-based consist index of each; ``det_off``
    int64[D]: offset of its state slice; ``arm`` float64[D, 4]: distance [m] from the front neighbour's centre
    to its rear pivot, from the rear neighbour's centre to its front pivot, and the two neighbours' half bogie
    spacings; ``coupling`` 1: in-train forces,
    resistance, grade and brake act on the detailed vehicles, 0: they run as if alone (a check);
    ``fext`` float64[D, 7 + n_ws], ``work`` float64[D, max n_work]: scratch; ``nodiag`` float64[0];
    ``acc_off``: where the detailed vehicles' envelopes start in the observer's accumulator (after the LTD's).
    """

    ltd: LTDParams
    vehs: tuple
    det_j: np.ndarray
    det_off: np.ndarray
    arm: np.ndarray
    coupling: int
    fext: np.ndarray
    work: np.ndarray
    nodiag: np.ndarray
    acc_off: int


@njit(**JIT)
def coupler_directions(T, s, yb, psi, cx, cy, s_n, arm_n, b_n, front):
    """Unit vector (u_x, u_y) of the coupler link in the car body's track frame and its length [m].

    ``T``: track table; ``s`` [m]: arc length of the car body centre; ``yb`` [m], ``psi`` [rad]: its lateral
    displacement and yaw in its track frame; (``cx``, ``cy``) [m]: the pivot in body axes; ``s_n`` [m]: the
    neighbour's centre; ``arm_n`` [m]: its pivot's distance from its centre (towards the car: behind it for
    the front neighbour, ahead of it for the rear one, ``front`` True/False).  The link points from the car
    body's pivot to the neighbour's, so a draft force F pulls the car body with F (u_x, u_y)."""
    X, Y, h, _k, _kp, _ph, _php = track_frame(T, s)
    Xn, Yn, hn, kn, _kp2, _ph2, _php2 = track_frame(T, s_n)
    sg = -1.0 if front else 1.0
    o = 0.5 * kn * b_n * b_n        # its centre on the chord of its bogie centres: κ b²/2 inside the curve
    pnx = Xn - o * math.sin(hn) + sg * arm_n * math.cos(hn) - X
    pny = Yn + o * math.cos(hn) + sg * arm_n * math.sin(hn) - Y
    ch = math.cos(h)
    sh = math.sin(h)
    qx = ch * pnx + sh * pny          # neighbour pivot in the car body's track frame
    qy = -sh * pnx + ch * pny
    cp = math.cos(psi)
    sp = math.sin(psi)
    px = cx * cp - cy * sp            # car body pivot in its track frame
    py = yb + cx * sp + cy * cp
    dx = qx - px
    dy = qy - py
    ln = math.sqrt(dx * dx + dy * dy)
    return dx / ln, dy / ln, ln


@njit(**JIT)
def detailed_eval(t, y, P, dydt, cdiag, diag, d):
    """Forces on detailed vehicle ``d``, its right-hand side on its slice and its LTD speed row (step 2-3 of
    the module docstring).  ``cdiag`` float64[N_CD] (size 0: not recorded); ``diag``: the vehicle's
    per-sample outputs (size 0: none)."""
    L = P.ltd
    vp = P.vehs[d]
    B = L.block
    N = L.n_veh
    j = P.det_j[d]
    off = P.det_off[d]
    cb = vp.cpl_body
    ob = off + vp.b_off[cb]
    s = y[off + S_POS]
    v = y[off + S_VEL]
    nw = vp.n_ws
    f = P.fext[d, :7 + nw]
    for i in range(f.size):
        f[i] = 0.0
    rec = cdiag.size > 0
    if P.coupling != 0:
        yb = y[ob + R_Y]
        psi = y[ob + R_PSI]
        # the front and rear couplers written out: one inlined helper for both measured 50 % slower
        # (coupling 4.2 against 2.7 µs per evaluation, benchmarks/mixed_train.py part costs)
        if j > 0:
            jp = j - 1
            F = connection_force(y[B * j], y[B * jp + 1] - y[B * j + 1], L.conn_type[jp], L.conn_rowpar,
                                 L.conn_typepar, L.conn_fm, L.conn_fa)
            s_n = s + L.center_dist[jp] + y[B * j]
            ux, uy, ln = coupler_directions(vp.track, s, yb, psi, vp.cpl_u[0, 0], vp.cpl_u[0, 1], s_n,
                                            P.arm[d, 0], P.arm[d, 2], True)
            f[0] = F * ux
            f[1] = F * uy
            if rec:
                cdiag[CD_F_FRONT] = F
                cdiag[CD_ALPHA_FRONT] = math.atan2(uy, ux)
                cdiag[CD_FY_FRONT] = F * uy
                cdiag[CD_GAP_FRONT] = ln
        if j < N - 1:
            F = connection_force(y[B * (j + 1)], y[B * j + 1] - y[B * (j + 1) + 1], L.conn_type[j], L.conn_rowpar,
                                 L.conn_typepar, L.conn_fm, L.conn_fa)
            s_n = s - (L.center_dist[j] + y[B * (j + 1)])
            ux, uy, ln = coupler_directions(vp.track, s, yb, psi, vp.cpl_u[1, 0], vp.cpl_u[1, 1], s_n,
                                            P.arm[d, 1], P.arm[d, 3], False)
            f[3] = F * ux
            f[4] = F * uy
            if rec:
                cdiag[CD_F_REAR] = F
                cdiag[CD_ALPHA_REAR] = math.atan2(-uy, -ux)
                cdiag[CD_FY_REAR] = F * uy
                cdiag[CD_GAP_REAR] = ln
        # running resistance without its curving part (the contact produces that) and grade, at the CG
        hl = L.half_len[j]
        slope, _kappa = route_means(L.route_hk, L.route_sk, L.route_s0, L.route_inv_ds, L.inv_len[j], s - hl, s + hl)
        sg = 1.0 if v > 0.0 else (-1.0 if v < 0.0 else 0.0)
        fcg = -L.mass[j] * 9.81 * slope - L.r0[j] * sg - (L.r1[j] + L.r2[j] * abs(v)) * v
        f[6 + nw] = fcg
        # air brake: the shoe force of the LTD brake cylinder as braking torques on the axles
        fb = 0.0
        if L.air_brake != 0:
            pc = y[B * j + 3]
            if pc > 0.0:
                sp_ = abs(v)
                mu = L.mu0[j] * (1.0 + L.mu_a[j] * sp_) / (1.0 + L.mu_b[j] * sp_)
                fb = mu * L.shoe_full[j] * pc
                for w in range(nw):
                    f[6 + w] = -sg * fb * vp.w_r0[w] / nw
        if rec:
            cdiag[CD_F_CG] = fcg
            cdiag[CD_BRAKE] = fb
    vehicle_eval(t, y, off, vp, f, dydt, P.work[d, :vp.n_work], diag)
    dydt[B * j + 1] = dydt[off + S_VEL]


@njit(**JIT)
def detailed_all(t, y, P, dydt):
    """Steps 2-3 of the module docstring for every detailed vehicle, after the LTD part has written
    ``dydt`` (float64[n], the layout of :func:`mixed_rhs`)."""
    for d in range(P.det_j.size):
        detailed_eval(t, y, P, dydt, P.nodiag, P.nodiag, d)


@njit(**JIT)
def mixed_rhs(t, y, P, dydt):
    """Right-hand side of a mixed train, monolithic LTD part (integrator contract ``rhs(t, y, params, dydt)``).

    ``t`` [s]; ``y``, ``dydt`` float64[n], n = the LTD states of the consist (:mod:`hpcrail.models.ltd.build`
    layout) + one :mod:`hpcrail.models.vehicle` slice per detailed vehicle (``P.det_off``); SI units; ``P``:
    :class:`MixedParams`.  Raises nothing (a failure shows as non-finite derivatives).
    Source: Bosso et al. 2024 (paper 000) §2 eqs 8-11 (in one code); Yu et al. 2022 (paper 004) eqs 1-33."""
    ltd_eval(t, y, P.ltd, dydt, P.ltd.no_record, False)
    detailed_all(t, y, P, dydt)


@njit(**JIT)
def detailed_observe(t, y, P, acc):
    """Every-step envelopes of the detailed vehicles: ``acc[P.acc_off + 2·(bodies before) + b]`` max |y| [m] and
    ``acc[... + n_body + b]`` max |ψ| [rad] of body b of each detailed vehicle, in order (float64 accumulator)."""
    a = P.acc_off
    for d in range(P.det_j.size):
        vp = P.vehs[d]
        off = P.det_off[d]
        vehicle_observe(t, y[off:off + vp.n_state], vp, acc[a:a + 2 * vp.n_body])
        a += 2 * vp.n_body


@njit(**JIT)
def mixed_observe(t, y, P, acc):
    """Observer of a mixed train: the LTD envelopes and metrics of the whole consist
    (:func:`~hpcrail.models.ltd.kernel.ltd_observe`) and the detailed vehicles' envelopes."""
    ltd_observe(t, y, P.ltd, acc)
    detailed_observe(t, y, P, acc)


@njit(**JIT)
def mixed_outputs(t, Y, P, C, D, dY):
    """Per-sample records of the detailed vehicles: ``C[k, d]`` float64[k, D, N_CD] (coupler record) and
    ``D[k, d]`` float64[k, D, n_diag] (:func:`~hpcrail.models.vehicle.kernel.vehicle_outputs` layout), from the
    sampled states ``Y`` float64[k, n]; ``dY`` float64[k, n] scratch.  Rows with NaN states stay NaN."""
    for k in range(t.size):
        if not math.isfinite(Y[k, 0]):
            continue
        for d in range(P.det_j.size):
            detailed_eval(t[k], Y[k], P, dY[k], C[k, d], D[k, d], d)


@njit(**JIT)
def lateral_states(y, P, d):
    """(y, ψ) of the car body of detailed vehicle ``d`` and the lateral shift of its first wheelset (tests)."""
    vp = P.vehs[d]
    ob = P.det_off[d] + vp.b_off[vp.cpl_body]
    return y[ob + R_Y], y[ob + R_PSI], y[P.det_off[d] + vp.b_off[vp.w_body[0]] + W_Y]


__all__ = ["MixedParams", "mixed_rhs", "mixed_observe", "detailed_observe", "detailed_eval", "detailed_all", "mixed_outputs", "coupler_directions",
           "N_CD", "CD_F_FRONT", "CD_F_REAR", "CD_ALPHA_FRONT", "CD_ALPHA_REAR", "CD_FY_FRONT", "CD_FY_REAR",
           "CD_F_CG", "CD_BRAKE", "CD_GAP_FRONT", "CD_GAP_REAR"]
