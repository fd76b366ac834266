"""Structured Jacobian ∂f/∂y of the railway-vehicle right-hand side (:func:`~hpcrail.models.vehicle.kernel.vehicle_eval`).

The right-hand side is a chain of per-body and per-element stages (track frames → contact geometry → body
kinematics → element forces → equations of motion); its Jacobian follows the same chain, column by column, and
only the stages a column reaches are evaluated again:

* **Rigid-body columns** (car body, bogie frames: y, z, φ, θ, ψ and their rates) — *analytic*.  The body's
  kinematics (position, rotation A = Aᵗ(I + skew(φ, θ, ψ)), velocities) are linear in its coordinates; each
  suspension element touching the body is differentiated in forward mode (the tangent of its deformation d and
  rate ḋ, of the law f = K d + D ḋ + F_table(d) (PCHIP slope) or f = K d + K_s (d − u) for a damper with series
  stiffness, and of its forces and moments about the body centres); the rigid equations of motion (frame
  inertia, gyroscopic terms) are differentiated exactly; a wheelset's response to the changed suspension force
  goes through its contact sensitivities below.
* **Series-damper nodes** (stroke u) — analytic: ∂f/∂u = −K_s, ∂u̇/∂u = −K_s/D.
* **Wheelset columns** (y, ψ, ẏ, ψ̇, ω) — *finite differences restricted to the wheelset*: only its contact
  geometry (KEC/LUT), its kinematics, the elements touching it and the equations of motion of the bodies those
  elements join are evaluated again (colouring by body: one column of one wheelset costs a fraction of the
  vehicle).
* **Contact sensitivities** — a wheelset's accelerations depend nonlinearly on the suspension force applied to
  it (the normal forces are reactions of the embedded constraint; the Polach creep forces depend on them through
  the normal/creep fixed point): ∂(ÿ, ψ̈, ω̇, F_x)/∂(F_y, F_z, M_x) by finite differences of the wheelset's
  dynamics alone (its contact geometry reused); F_x and M_z enter linearly (analytic).
* **s and v** (the forward motion: every track frame, irregularity and creepage) — finite differences of the
  whole vehicle (two evaluations).

Finite differences use the integrators' increment δ = √(u·max(10⁻⁵, |y_c|)) (u the unit round-off; forces:
√u·max(|F|, m g)).  The result is the dense local matrix (the vehicle's few tens of states); checked against
finite differences of the whole right-hand side (``tests/test_vehicle_jacobian.py``).  With coupler forces
``f_ext`` the Jacobian is taken with ``f_ext`` frozen; :func:`vehicle_ext_column` gives the response to a change
of ``f_ext`` (a mixed train adds the coupling that way, :mod:`hpcrail.models.mixed.kernel`).

Source: derivatives of Yu et al. 2022 (paper 004) eqs 1-3, 9 and 27-31 as implemented in the kernel; column
colouring after Curtis, Powell & Reid (1974).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT, JIT_NRT_FREE
from hpcrail.models.vehicle.kernel import (
    B_A, B_CH, B_CP, B_F, B_K, B_KP, B_M, B_PHP, B_RATE, B_SH, B_SP, B_W, _apply_element, _body_eom,
    _contact, _coupler_forces, _cross, _element_geometry, _element_law, _from_track, _kinematics, _rotate, _to_track,
    vehicle_eval,
)
from hpcrail.models.vehicle.layout import (
    KIND_WHEELSET, LAW_BUMPSTOP, LAW_SERIES_DAMPER, R_PHI, R_PSI, R_TH, R_Y, R_Z, RIGID_BLOCK, S_POS, S_VEL,
    SPEED_FREE, SPIN_FREE, W_OM, W_PSID, W_YD, WHEELSET_BLOCK, WORK_BODY,
)

EPS = 2.220446049250313e-16
SQRT_EPS = math.sqrt(EPS)

# tangent of a body's kinematics (dk): δr, δA (row-major 3x3), δV, δW (global), δ(φ, θ, ψ), δ(φ̇, θ̇, ψ̇)
K_R, K_A, K_V, K_W, K_ANG, K_RATE = 0, 3, 12, 15, 18, 21
N_DK = 24
#: outputs of a wheelset's contact sensitivity: ÿ, ψ̈, ω̇, F_x (its share of the forward motion's force)
N_SOUT = 4


def jac_work_size(P) -> int:
    """Length of the ``work`` array of :func:`vehicle_jac` (float64)."""
    return _work_size(P.n_work, P.n_state, P.n_body, P.n_ws)


@njit(inline="always", **JIT_NRT_FREE)
def _work_size(n_work, n, nb, nw):
    return 2 * n_work + N_SOUT * 3 * nw + 7 * nb + 4 * n + N_DK + 16


@njit(inline="always", **JIT_NRT_FREE)
def _offsets(P):
    """Offsets in ``work``: base work W, perturbed work Wp, contact sensitivities S [n_ws, 4, 3], per-body
    forward-motion forces fxb [n_body], force tangents dG [n_body, 6], f0, f1, yp, scratch [n], dk [N_DK]."""
    o_w = 0
    o_wp = o_w + P.n_work
    o_s = o_wp + P.n_work
    o_fx = o_s + N_SOUT * 3 * P.n_ws
    o_dg = o_fx + P.n_body
    o_f0 = o_dg + 6 * P.n_body
    o_f1 = o_f0 + P.n_state
    o_yp = o_f1 + P.n_state
    o_sc = o_yp + P.n_state
    o_dk = o_sc + P.n_state
    return o_w, o_wp, o_s, o_fx, o_dg, o_f0, o_f1, o_yp, o_sc, o_dk


@njit(inline="always", **JIT_NRT_FREE)
def _table_slope(P, t, d):
    """dF/dd of bumpstop table t at deflection d (the derivative of ``kernel._table``)."""
    m = P.tab_n[t]
    x = P.tab_x[t]
    c = P.tab_c[t]
    if d <= x[0]:
        return c[0, 1]
    if d >= x[m - 1]:
        i = m - 2
        u = x[m - 1] - x[m - 2]
        return c[i, 1] + u * (2.0 * c[i, 2] + 3.0 * u * c[i, 3])
    lo = 0
    hi = m - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if x[mid] <= d:
            lo = mid
        else:
            hi = mid
    u = d - x[lo]
    return c[lo, 1] + u * (2.0 * c[lo, 2] + 3.0 * u * c[lo, 3])


@njit(inline="always", **JIT_NRT_FREE)
def _rigid_dk(W, k, c, v, dk):
    """Tangent ``dk`` of rigid body kinematics (work block at k) with respect to its coordinate c (0-9)."""
    for q in range(N_DK):
        dk[q] = 0.0
    if c == R_Y or c == R_Z:
        gx, gy, gz = _from_track(W, k, 0.0, 1.0 if c == R_Y else 0.0, 1.0 if c == R_Z else 0.0)
        dk[K_R] = gx
        dk[K_R + 1] = gy
        dk[K_R + 2] = gz
        wfx = v * W[k + B_PHP] * W[k + B_CH]
        wfy = v * W[k + B_PHP] * W[k + B_SH]
        wfz = v * W[k + B_K]
        rx, ry, rz = _cross(wfx, wfy, wfz, gx, gy, gz)
        dk[K_V] = rx
        dk[K_V + 1] = ry
        dk[K_V + 2] = rz
    elif c <= R_PSI:
        # columns of A = Aᵗ (I + skew(φ, θ, ψ)): (1, ψ, −θ), (−ψ, 1, φ), (θ, −φ, 1)
        for col in range(3):
            ax = ay = az = 0.0
            if c == R_PHI:
                if col == 1:
                    az = 1.0
                elif col == 2:
                    ay = -1.0
            elif c == R_TH:
                if col == 0:
                    az = -1.0
                elif col == 2:
                    ax = 1.0
            else:
                if col == 0:
                    ay = 1.0
                elif col == 1:
                    ax = -1.0
            cx, cy, cz = _from_track(W, k, ax, ay, az)
            dk[K_A + col] = cx
            dk[K_A + 3 + col] = cy
            dk[K_A + 6 + col] = cz
        dk[K_ANG + c - R_PHI] = 1.0
    elif c == 5 + R_Y or c == 5 + R_Z:
        gx, gy, gz = _from_track(W, k, 0.0, 1.0 if c == 5 + R_Y else 0.0, 1.0 if c == 5 + R_Z else 0.0)
        dk[K_V] = gx
        dk[K_V + 1] = gy
        dk[K_V + 2] = gz
    else:
        a = c - 5 - R_PHI
        gx, gy, gz = _from_track(W, k, 1.0 if a == 0 else 0.0, 1.0 if a == 1 else 0.0, 1.0 if a == 2 else 0.0)
        dk[K_W] = gx
        dk[K_W + 1] = gy
        dk[K_W + 2] = gz
        dk[K_RATE + a] = 1.0


@njit(**JIT_NRT_FREE)
def _element_tangent(P, e, y, v, W, b, dk, du, dG):
    """Forward-mode derivative of element e's forces for the tangent ``dk`` of body b's kinematics (b = −1: none)
    and a change ``du`` of its series node's stroke; adds the force and moment tangents (global) into
    ``dG[6·body : 6·body + 6]`` of its two bodies; returns the tangent of its node's stroke rate (0 without)."""
    i = P.e_i[e]
    j = P.e_j[e]
    d, dd, ex, ey, ez, px, py, pz, qx, qy, qz = _element_geometry(P, e, v, W)
    node = P.e_node[e]
    u = y[node] if node >= 0 else 0.0
    f, _udot = _element_law(P, e, d, dd, u)
    si = 1.0 if i == b else 0.0
    sj = 1.0 if j == b else 0.0
    dpx = dpy = dpz = dqx = dqy = dqz = 0.0
    if P.e_axis[e] < 3:
        ki = i * WORK_BODY
        kj = j * WORK_BODY
        if i == b:
            dpx, dpy, dpz = _rotate(dk, K_A, P.e_uP[e, 0], P.e_uP[e, 1], P.e_uP[e, 2])
        if j == b:
            dqx, dqy, dqz = _rotate(dk, K_A, P.e_uQ[e, 0], P.e_uQ[e, 1], P.e_uQ[e, 2])
        ddfx = si * dk[K_R] + dpx - sj * dk[K_R] - dqx
        ddfy = si * dk[K_R + 1] + dpy - sj * dk[K_R + 1] - dqy
        ddfz = si * dk[K_R + 2] + dpz - sj * dk[K_R + 2] - dqz
        a1x, a1y, a1z = _cross(si * dk[K_W], si * dk[K_W + 1], si * dk[K_W + 2], px, py, pz)
        a2x, a2y, a2z = _cross(W[ki + B_W], W[ki + B_W + 1], W[ki + B_W + 2], dpx, dpy, dpz)
        b1x, b1y, b1z = _cross(sj * dk[K_W], sj * dk[K_W + 1], sj * dk[K_W + 2], qx, qy, qz)
        b2x, b2y, b2z = _cross(W[kj + B_W], W[kj + B_W + 1], W[kj + B_W + 2], dqx, dqy, dqz)
        ddvx = (si - sj) * dk[K_V] + a1x + a2x - b1x - b2x
        ddvy = (si - sj) * dk[K_V + 1] + a1y + a2y - b1y - b2y
        ddvz = (si - sj) * dk[K_V + 2] + a1z + a2z - b1z - b2z
        wfx = v * W[ki + B_PHP] * W[ki + B_CH]
        wfy = v * W[ki + B_PHP] * W[ki + B_SH]
        wfz = v * W[ki + B_K]
        edx, edy, edz = _cross(wfx, wfy, wfz, ex, ey, ez)
        t_d = ex * ddfx + ey * ddfy + ez * ddfz
        t_dd = edx * ddfx + edy * ddfy + edz * ddfz + ex * ddvx + ey * ddvy + ez * ddvz
    else:
        a = P.e_axis[e] - 3
        t_d = (si - sj) * dk[K_ANG + a]
        t_dd = (si - sj) * dk[K_RATE + a]
    law = P.e_law[e]
    if law == LAW_SERIES_DAMPER:
        t_s = P.e_Ks[e] * (t_d - du)
        t_f = P.e_K[e] * t_d + t_s
        t_udot = t_s / P.e_D[e]
    else:
        t_f = P.e_K[e] * t_d + P.e_D[e] * t_dd
        if law == LAW_BUMPSTOP:
            t_f += _table_slope(P, P.e_tab[e], d) * t_d
        t_udot = 0.0
    if P.e_axis[e] < 3:
        Fx, Fy, Fz = -f * ex, -f * ey, -f * ez
        tFx, tFy, tFz = -t_f * ex, -t_f * ey, -t_f * ez
        dG[6 * i] += tFx
        dG[6 * i + 1] += tFy
        dG[6 * i + 2] += tFz
        m1x, m1y, m1z = _cross(dpx, dpy, dpz, Fx, Fy, Fz)
        m2x, m2y, m2z = _cross(px, py, pz, tFx, tFy, tFz)
        dG[6 * i + 3] += m1x + m2x
        dG[6 * i + 4] += m1y + m2y
        dG[6 * i + 5] += m1z + m2z
        dG[6 * j] -= tFx
        dG[6 * j + 1] -= tFy
        dG[6 * j + 2] -= tFz
        m1x, m1y, m1z = _cross(dqx, dqy, dqz, Fx, Fy, Fz)
        m2x, m2y, m2z = _cross(qx, qy, qz, tFx, tFy, tFz)
        dG[6 * j + 3] -= m1x + m2x
        dG[6 * j + 4] -= m1y + m2y
        dG[6 * j + 5] -= m1z + m2z
    else:
        dG[6 * i + 3] -= t_f * ex
        dG[6 * i + 4] -= t_f * ey
        dG[6 * i + 5] -= t_f * ez
        dG[6 * j + 3] += t_f * ex
        dG[6 * j + 4] += t_f * ey
        dG[6 * j + 5] += t_f * ez
    return t_udot


@njit(inline="always", **JIT_NRT_FREE)
def _coupler_tangent(P, f_ext, W, dk, dG):
    """Tangent of the coupler forces' moments about the car body's centre for the tangent ``dk`` of its
    rotation (the forces themselves are frozen: track-frame components)."""
    b = P.cpl_body
    k = b * WORK_BODY
    for c in range(2):
        gx, gy, gz = _from_track(W, k, f_ext[3 * c], f_ext[3 * c + 1], f_ext[3 * c + 2])
        dpx, dpy, dpz = _rotate(dk, K_A, P.cpl_u[c, 0], P.cpl_u[c, 1], P.cpl_u[c, 2])
        mx, my, mz = _cross(dpx, dpy, dpz, gx, gy, gz)
        dG[6 * b + 3] += mx
        dG[6 * b + 4] += my
        dG[6 * b + 5] += mz


@njit(inline="always", **JIT_NRT_FREE)
def _rigid_eom_tangent(P, b, v, W, dG, c, J, col, o):
    """Column ``col`` of the rows of rigid body b (state offset o) for the force tangents ``dG[6b:6b+6]`` (global)
    and its own coordinate c (−1: none): the derivative of ``kernel._rigid_eom``; returns the tangent of its
    forward-motion force F_x − m a_fx."""
    k = b * WORK_BODY
    m = P.b_mass[b]
    v2 = v * v
    tFx, tFy, tFz = _to_track(W, k, dG[6 * b], dG[6 * b + 1], dG[6 * b + 2])
    tMx, tMy, tMz = _to_track(W, k, dG[6 * b + 3], dG[6 * b + 4], dG[6 * b + 5])
    sp = W[k + B_SP]
    cp = W[k + B_CP]
    kap = W[k + B_K]
    kapp = W[k + B_KP]
    php = W[k + B_PHP]
    Ox = php
    Oy = kap * sp
    Oz = kap * cp
    Opy = kapp * sp + kap * cp * php
    Opz = kapp * cp - kap * sp * php
    dry = 1.0 if c == R_Y else 0.0
    drz = 1.0 if c == R_Z else 0.0
    dyd = 1.0 if c == 5 + R_Y else 0.0
    dzd = 1.0 if c == 5 + R_Z else 0.0
    dph = 1.0 if c == 5 + R_PHI else 0.0
    dth = 1.0 if c == 5 + R_TH else 0.0
    dps = 1.0 if c == 5 + R_PSI else 0.0
    c1x, c1y, c1z = _cross(0.0, Opy, Opz, 0.0, dry, drz)
    t1x, t1y, t1z = _cross(Ox, Oy, Oz, 0.0, dry, drz)
    c2x, c2y, c2z = _cross(Ox, Oy, Oz, t1x, t1y, t1z)
    c3x, c3y, c3z = _cross(Ox, Oy, Oz, 0.0, dyd, dzd)
    afx = v2 * (c1x + c2x) + 2.0 * v * c3x
    afy = v2 * (c1y + c2y) + 2.0 * v * c3y
    afz = v2 * (c1z + c2z) + 2.0 * v * c3z
    Ixx = P.b_I[b, 0]
    Iyy = P.b_I[b, 1]
    Izz = P.b_I[b, 2]
    wfx = v * Ox
    wfy = v * Oy
    wfz = v * Oz
    wx = wfx + W[k + B_RATE]
    wy = wfy + W[k + B_RATE + 1]
    wz = wfz + W[k + B_RATE + 2]
    tx, ty, tz = _cross(wfx, wfy, wfz, dph, dth, dps)
    g1x, g1y, g1z = _cross(dph, dth, dps, Ixx * wx, Iyy * wy, Izz * wz)
    g2x, g2y, g2z = _cross(wx, wy, wz, Ixx * dph, Iyy * dth, Izz * dps)
    J[o + R_Y, col] += dyd
    J[o + R_Z, col] += dzd
    J[o + R_PHI, col] += dph
    J[o + R_TH, col] += dth
    J[o + R_PSI, col] += dps
    J[o + 5 + R_Y, col] += tFy / m - afy
    J[o + 5 + R_Z, col] += tFz / m - afz
    J[o + 5 + R_PHI, col] += (tMx - g1x - g2x) / Ixx - tx
    J[o + 5 + R_TH, col] += (tMy - g1y - g2y) / Iyy - ty
    J[o + 5 + R_PSI, col] += (tMz - g1z - g2z) / Izz - tz
    return tFx - m * afx


@njit(inline="always", **JIT_NRT_FREE)
def _wheelset_tangent(P, b, W, dG, S, J, col):
    """Column ``col`` of the rows of wheelset body b for the force tangents ``dG[6b:6b+6]`` through its contact
    sensitivities ``S``; returns the tangent of its forward-motion force."""
    w = P.b_ws[b]
    k = b * WORK_BODY
    o = P.b_off[b]
    tFx, tFy, tFz = _to_track(W, k, dG[6 * b], dG[6 * b + 1], dG[6 * b + 2])
    tMx, _tMy, tMz = _to_track(W, k, dG[6 * b + 3], dG[6 * b + 4], dG[6 * b + 5])
    s0 = w * N_SOUT * 3
    r = np.empty(N_SOUT)
    for q in range(N_SOUT):
        r[q] = S[s0 + 3 * q] * tFy + S[s0 + 3 * q + 1] * tFz + S[s0 + 3 * q + 2] * tMx
    J[o + W_YD, col] += r[0]
    J[o + W_PSID, col] += r[1] + tMz / P.b_I[b, 2]
    J[o + W_OM, col] += r[2]
    return r[3] + tFx


@njit(**JIT)
def _apply_tangents(P, v, W, S, dG, mark, c_body, c, J, col):
    """Rows of every marked body for the force tangents ``dG`` (a rigid body with its own coordinate c when it is
    ``c_body``), and the forward motion's row; ``J[:, col]`` is added to."""
    tfx = 0.0
    for a in range(P.n_body):
        if mark[a] == 0:
            continue
        if P.b_kind[a] == KIND_WHEELSET:
            tfx += _wheelset_tangent(P, a, W, dG, S, J, col)
        else:
            tfx += _rigid_eom_tangent(P, a, v, W, dG, c if a == c_body else -1, J, col, P.b_off[a])
    if P.speed_mode == SPEED_FREE:
        J[S_VEL, col] += tfx / _mass_sum(P)


@njit(**JIT_NRT_FREE)
def _body_eom_call(P, b, y, off, v, W, f_ext, dydt, diag, want):
    """:func:`~hpcrail.models.vehicle.kernel._body_eom` compiled once as a function of its own (same arguments and
    return value).  The Jacobian calls it at four sites; inlined at each of them (with the element pieces and a
    literal ``want``), :func:`vehicle_jac` took 114 s to compile and 2.3 ms per call on the Manchester wagon, called
    through this and :func:`_element_apply` 31 s and 0.5 ms, bitwise the same matrix
    (``benchmarks/vehicle_jacobian.py``, docs/performance.md)."""
    return _body_eom(P, b, y, off, v, W, f_ext, dydt, diag, want)


@njit(**JIT_NRT_FREE)
def _element_apply(P, e, v, Wk, Wf, u, sign):
    """Add ``sign`` times element e's forces at the kinematics of ``Wk`` (series-node stroke ``u``) to the body
    forces of ``Wf``; returns the node's stroke rate.  One compiled function for the Jacobian's two uses per
    wheelset column (remove the base force, add the perturbed one): inlined twice it compiled twice as long."""
    d, dd, ex, ey, ez, px, py, pz, qx, qy, qz = _element_geometry(P, e, v, Wk)
    f, ud = _element_law(P, e, d, dd, u)
    _apply_element(P, e, f, ex, ey, ez, px, py, pz, qx, qy, qz, Wf, sign)
    return ud


@njit(inline="always", **JIT_NRT_FREE)
def _mass_sum(P):
    """Σ body masses in the kernel's summation order."""
    sm = 0.0
    for b in range(P.n_body):
        sm += P.b_mass[b]
    return sm


@njit(**JIT)
def _contact_sensitivities(P, y, v, W, f_ext, S, scratch):
    """``S[w, q, k]`` = ∂(ÿ, ψ̈, ω̇, F_x)_q / ∂(F_y, F_z, M_x)_k of every wheelset w (track-frame components of the
    suspension force on it) by finite differences of its dynamics alone; ``W`` is restored."""
    nodiag = scratch[:0]
    for w in range(P.n_ws):
        b = P.w_body[w]
        k = b * WORK_BODY
        o = P.b_off[b]
        base = np.empty(N_SOUT)
        base[3] = _body_eom_call(P, b, y, np.int64(0), v, W, f_ext, scratch, nodiag, np.bool_(False))
        base[0] = scratch[o + W_YD]
        base[1] = scratch[o + W_PSID]
        base[2] = scratch[o + W_OM]
        mg = P.b_mass[b] * max(P.gravity, 1.0)
        Fx, Fy, Fz = _to_track(W, k, W[k + B_F], W[k + B_F + 1], W[k + B_F + 2])
        Mx, My, Mz = _to_track(W, k, W[k + B_M], W[k + B_M + 1], W[k + B_M + 2])
        for q in range(3):
            if q == 0:
                h = SQRT_EPS * max(abs(Fy), mg)
                ux, uy, uz = _from_track(W, k, 0.0, h, 0.0)
                kk = k + B_F
            elif q == 1:
                h = SQRT_EPS * max(abs(Fz), mg)
                ux, uy, uz = _from_track(W, k, 0.0, 0.0, h)
                kk = k + B_F
            else:
                h = SQRT_EPS * max(abs(Mx), mg)
                ux, uy, uz = _from_track(W, k, h, 0.0, 0.0)
                kk = k + B_M
            s0 = W[kk]
            s1 = W[kk + 1]
            s2 = W[kk + 2]
            W[kk] = s0 + ux
            W[kk + 1] = s1 + uy
            W[kk + 2] = s2 + uz
            # the increment actually applied (track components, after rounding)
            ax, ay, az = _to_track(W, k, W[kk] - s0, W[kk + 1] - s1, W[kk + 2] - s2)
            hh = ay if q == 0 else (az if q == 1 else ax)
            fx = _body_eom_call(P, b, y, np.int64(0), v, W, f_ext, scratch, nodiag, np.bool_(False))
            W[kk] = s0
            W[kk + 1] = s1
            W[kk + 2] = s2
            inv = 1.0 / hh
            s = (w * N_SOUT) * 3
            S[s + q] = (scratch[o + W_YD] - base[0]) * inv
            S[s + 3 + q] = (scratch[o + W_PSID] - base[1]) * inv
            S[s + 6 + q] = (scratch[o + W_OM] - base[2]) * inv
            S[s + 9 + q] = (fx - base[3]) * inv


@njit(**JIT)
def vehicle_jac(t, y, P, f_ext, J, work):
    """Jacobian ∂f/∂y of :func:`~hpcrail.models.vehicle.kernel.vehicle_eval` of one vehicle (module docstring).

    ``t`` [s]; ``y`` float64[n] the vehicle's own states (n = ``P.n_state``, offset 0); ``P``:
    :class:`~hpcrail.models.vehicle.build.VehicleParams`; ``f_ext`` float64[k] external forces as in
    ``vehicle_eval`` (held fixed; k = 0: none); ``J`` float64[n, n] receives ∂f_i/∂y_j (SI units of the states);
    ``work`` float64[:func:`jac_work_size`] scratch, which keeps the base evaluation for :func:`vehicle_ext_column`.
    Costs about three evaluations of the whole vehicle plus one per wheelset coordinate of one wheelset's share.
    Raises nothing (a failure shows as non-finite entries)."""
    n = P.n_state
    nb = P.n_body
    o_w, o_wp, o_s, o_fx, o_dg, o_f0, o_f1, o_yp, o_sc, o_dk = _offsets(P)
    W = work[o_w:o_w + P.n_work]
    Wp = work[o_wp:o_wp + P.n_work]
    S = work[o_s:o_fx]
    fxb = work[o_fx:o_dg]
    dG = work[o_dg:o_f0]
    f0 = work[o_f0:o_f1]
    f1 = work[o_f1:o_yp]
    yp = work[o_yp:o_sc]
    sc = work[o_sc:o_dk]
    dk = work[o_dk:o_dk + N_DK]
    nodiag = work[:0]
    mark = np.zeros(nb, np.int64)
    for i in range(n):
        for j in range(n):
            J[i, j] = 0.0
    s = y[S_POS]
    v = y[S_VEL]
    vehicle_eval(t, y, np.int64(0), P, f_ext, f0, W, nodiag)
    for b in range(nb):
        fxb[b] = _body_eom_call(P, b, y, np.int64(0), v, W, f_ext, sc, nodiag, np.bool_(False))
    _contact_sensitivities(P, y, v, W, f_ext, S, sc)
    has_cpl = f_ext.size >= 6
    # ---- rigid-body columns: analytic (forward mode through the elements)
    for b in range(nb):
        if P.b_kind[b] == KIND_WHEELSET:
            continue
        k = b * WORK_BODY
        for a in range(nb):
            mark[a] = 0
        mark[b] = 1
        for e in range(P.n_el):
            if P.e_i[e] == b:
                mark[P.e_j[e]] = 1
            elif P.e_j[e] == b:
                mark[P.e_i[e]] = 1
        for c in range(RIGID_BLOCK):
            col = P.b_off[b] + c
            _rigid_dk(W, k, c, v, dk)
            for q in range(6 * nb):
                dG[q] = 0.0
            for e in range(P.n_el):
                if P.e_i[e] == b or P.e_j[e] == b:
                    tu = _element_tangent(P, e, y, v, W, b, dk, 0.0, dG)
                    if P.e_node[e] >= 0:
                        J[P.e_node[e], col] += tu
            if has_cpl and b == P.cpl_body:
                _coupler_tangent(P, f_ext, W, dk, dG)
            _apply_tangents(P, v, W, S, dG, mark, b, c, J, col)
    # ---- series-damper nodes: analytic
    for e in range(P.n_el):
        node = P.e_node[e]
        if node < 0:
            continue
        for a in range(nb):
            mark[a] = 0
        mark[P.e_i[e]] = 1
        mark[P.e_j[e]] = 1
        for q in range(6 * nb):
            dG[q] = 0.0
        for q in range(N_DK):
            dk[q] = 0.0
        J[node, node] += _element_tangent(P, e, y, v, W, np.int64(-1), dk, 1.0, dG)
        _apply_tangents(P, v, W, S, dG, mark, np.int64(-1), np.int64(-1), J, node)
    # ---- wheelset columns: finite differences restricted to the wheelset and the bodies its elements join
    for i in range(n):
        yp[i] = y[i]
    for w in range(P.n_ws):
        b = P.w_body[w]
        kb = b * WORK_BODY
        for a in range(nb):
            mark[a] = 0
        mark[b] = 1
        for e in range(P.n_el):
            if P.e_i[e] == b:
                mark[P.e_j[e]] = 1
            elif P.e_j[e] == b:
                mark[P.e_i[e]] = 1
        for c in range(WHEELSET_BLOCK):
            col = P.b_off[b] + c
            yc = y[col]
            h = math.sqrt(EPS * max(1e-5, abs(yc)))
            yp[col] = yc + h
            h = yp[col] - yc
            for q in range(P.n_work):
                Wp[q] = W[q]
            if c == 0 or c == W_YD:
                _contact(P, w, yp, np.int64(0), s, v, Wp)
            _kinematics(P, b, yp, np.int64(0), v, Wp)
            for q in range(6):
                Wp[kb + B_F + q] = W[kb + B_F + q]
            for e in range(P.n_el):
                if P.e_i[e] != b and P.e_j[e] != b:
                    continue
                node = P.e_node[e]
                u = yp[node] if node >= 0 else 0.0
                _element_apply(P, e, v, W, Wp, u, -1.0)
                ud = _element_apply(P, e, v, Wp, Wp, u, 1.0)
                if node >= 0:
                    J[node, col] += (ud - f0[node]) / h
            if has_cpl and b == P.cpl_body:
                _coupler_forces(P, f_ext, W, Wp, -1.0)
                _coupler_forces(P, f_ext, Wp, Wp, 1.0)
            dfx = 0.0
            for a in range(nb):
                if mark[a] == 0:
                    continue
                fx = _body_eom_call(P, a, yp, np.int64(0), v, Wp, f_ext, f1, nodiag, np.bool_(False))
                dfx += fx - fxb[a]
                oa = P.b_off[a]
                na = WHEELSET_BLOCK if P.b_kind[a] == KIND_WHEELSET else RIGID_BLOCK
                for r in range(oa, oa + na):
                    J[r, col] += (f1[r] - f0[r]) / h
            if P.speed_mode == SPEED_FREE:
                J[S_VEL, col] += dfx / _mass_sum(P) / h
            yp[col] = yc
    # ---- s and v: finite differences of the whole vehicle
    for col in range(2):
        yc = y[col]
        h = math.sqrt(EPS * max(1e-5, abs(yc)))
        yp[col] = yc + h
        h = yp[col] - yc
        vehicle_eval(t, yp, np.int64(0), P, f_ext, f1, Wp, nodiag)
        yp[col] = yc
        for r in range(n):
            J[r, col] = (f1[r] - f0[r]) / h
    if P.spin_mode != SPIN_FREE:    # rolling: ω̇ = v̇ / r₀ (0 with the prescribed speed rolling requires)
        for w in range(P.n_ws):
            r = P.b_off[P.w_body[w]] + W_OM
            for j in range(n):
                J[r, j] = J[S_VEL, j] / P.w_r0[w]


@njit(**JIT)
def vehicle_ext_column(P, v, f_ext, df_ext, work, J, col):
    """Add to ``J[:, col]`` the response of the vehicle's rates to a change ``df_ext`` of its external forces
    (the layout of ``vehicle_eval``'s ``f_ext``), at the base point of the last :func:`vehicle_jac` call whose
    ``work`` is given (``v`` [m/s] its speed): coupler forces at their points and the force at the centre of
    gravity on ``P.cpl_body``, axle torques on the wheelsets' spin (linear in ``f_ext``)."""
    nb = P.n_body
    o_w, o_wp, o_s, o_fx, o_dg, o_f0, o_f1, o_yp, o_sc, o_dk = _offsets(P)
    W = work[o_w:o_w + P.n_work]
    S = work[o_s:o_fx]
    dG = work[o_dg:o_f0]
    for q in range(6 * nb):
        dG[q] = 0.0
    mark = np.zeros(nb, np.int64)
    b = P.cpl_body
    k = b * WORK_BODY
    mark[b] = 1
    if df_ext.size >= 6:
        for c in range(2):
            gx, gy, gz = _from_track(W, k, df_ext[3 * c], df_ext[3 * c + 1], df_ext[3 * c + 2])
            px, py, pz = _rotate(W, k + B_A, P.cpl_u[c, 0], P.cpl_u[c, 1], P.cpl_u[c, 2])
            mx, my, mz = _cross(px, py, pz, gx, gy, gz)
            dG[6 * b] += gx
            dG[6 * b + 1] += gy
            dG[6 * b + 2] += gz
            dG[6 * b + 3] += mx
            dG[6 * b + 4] += my
            dG[6 * b + 5] += mz
        if df_ext.size >= 7 + P.n_ws:
            gx, gy, gz = _from_track(W, k, df_ext[6 + P.n_ws], 0.0, 0.0)
            dG[6 * b] += gx
            dG[6 * b + 1] += gy
            dG[6 * b + 2] += gz
    _apply_tangents(P, v, W, S, dG, mark, np.int64(-1), np.int64(-1), J, col)
    if P.spin_mode == SPIN_FREE and df_ext.size >= 6 + P.n_ws:
        for w in range(P.n_ws):
            bw = P.w_body[w]
            J[P.b_off[bw] + W_OM, col] += df_ext[6 + w] / P.b_I[bw, 1]


@njit(**JIT)
def vehicle_jac_dense(t, y, P, vals):
    """``jac(t, y, params, vals)`` of a vehicle alone (integrator contract) on the dense n × n pattern
    (``vals[i·n + j]`` = ∂f_i/∂y_j, row-major): :func:`vehicle_jac` with the applied axle torques of
    ``P.w_torque`` and no coupler forces (as :func:`~hpcrail.models.vehicle.kernel.vehicle_rhs`)."""
    n = P.n_state
    J = np.empty((n, n))
    work = np.empty(_work_size(P.n_work, n, P.n_body, P.n_ws))
    vehicle_jac(t, y, P, work[:0], J, work)
    for i in range(n):
        for j in range(n):
            vals[i * n + j] = J[i, j]


def vehicle_pattern(P, off: int = 0):
    """``(rows, cols)`` of the vehicle's Jacobian entries that :func:`vehicle_jac` can make nonzero, as state
    indices shifted by ``off``, dense per coupled pair of bodies (bodies joined by an element, a body and the
    nodes of its elements; every row on s and v; with a free speed the speed row on every state)."""
    n = P.n_state
    M = np.zeros((n, n), bool)
    nb = P.n_body
    size = [WHEELSET_BLOCK if P.b_kind[b] == KIND_WHEELSET else RIGID_BLOCK for b in range(nb)]
    sl = [slice(int(P.b_off[b]), int(P.b_off[b]) + size[b]) for b in range(nb)]
    for b in range(nb):
        M[sl[b], sl[b]] = True
    for e in range(P.n_el):
        i, j = int(P.e_i[e]), int(P.e_j[e])
        M[sl[i], sl[j]] = True
        M[sl[j], sl[i]] = True
        nd = int(P.e_node[e])
        if nd >= 0:
            for b in (i, j):
                M[sl[b], nd] = True
                M[nd, sl[b]] = True
            M[nd, nd] = True
    M[:, :2] = True
    if P.speed_mode == SPEED_FREE:
        M[S_VEL, :] = True
    if P.spin_mode != SPIN_FREE:
        for w in range(P.n_ws):
            M[int(P.b_off[P.w_body[w]]) + W_OM, :] = True
    r, c = np.nonzero(M)
    return r.astype(np.int64) + off, c.astype(np.int64) + off


__all__ = ["vehicle_jac", "vehicle_jac_dense", "vehicle_ext_column", "vehicle_pattern", "jac_work_size"]
