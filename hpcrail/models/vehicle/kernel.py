"""numba kernels of the railway-vehicle model: the right-hand side (a pure function of t, y and the
parameters), the every-step observer and the per-sample outputs.

:func:`vehicle_eval` evaluates one vehicle on a slice of a (possibly larger) state vector — the entry
point of the mixed-train kind — and :func:`vehicle_rhs` is the integrator-facing ``rhs(t, y, params,
dydt)`` of a vehicle alone.  The formulation (track-frame coordinates, embedded contact constraints,
reaction forces along the contact normals, the normal/creep-force fixed point) is documented in
:mod:`hpcrail.models.vehicle`.

Work array of one evaluation (float64[params.n_work], overwritten on every call, never read before it is
written): per body ``WORK_BODY`` entries (track frame, kinematics, accumulated forces; offsets ``B_*``), then
per wheelset ``WORK_WS`` entries (the contact kernel's output vector and its inputs; offsets ``C_*``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT, JIT_NRT_FREE
from hpcrail.models.vehicle.layout import (
    D_BODY, D_WHEEL, D_WS, DW_DELTA, DW_FLANGE, DW_FX, DW_GAMMA, DW_N, DW_NFLANGE, DW_Q, DW_R, DW_SPIN, DW_SR,
    DW_SW, DW_TGAMMA, DW_XI_X, DW_XI_Y, DW_Y, DWS_CLAMP, DWS_ITER, DWS_KEC, DWS_OMEGA, DWS_PHI, DWS_PHIDOT, DWS_SUMY, DWS_Z,
    DWS_ZDOT, KIND_WHEELSET,
    LAW_BUMPSTOP, LAW_SERIES_DAMPER, METHOD_KEC, R_PHI, R_PSI, R_TH, R_Y, R_Z, S_POS, S_VEL, SPEED_FREE,
    SPIN_FREE, W_OM, W_PSI, W_PSID, W_Y, W_YD, WORK_BODY, WORK_WS,
)
from hpcrail.models.vehicle.track import CH_A, CH_C, CH_G, CH_V, irregularity_at, track_frame
from hpcrail.models.wheelrail import layout as L
from hpcrail.models.wheelrail.creep import creep_force, creepages, wheelset_angular_velocity, yaw_offsets
from hpcrail.models.wheelrail.hertz import hertz_kalker
from hpcrail.models.wheelrail.kec import kec_wheelset
from hpcrail.models.wheelrail.lut import lut_wheelset

# --- per-body work entries -----------------------------------------------------------------------
B_X, B_YG, B_H, B_K, B_KP, B_PH, B_PHP, B_CH, B_SH, B_CP, B_SP = range(11)
B_RBAR = 11      # r̄ (0, y, z) in the body's track frame [m]
B_RDOT = 14      # ṙ̄
B_ANG = 17       # φ, θ, ψ
B_RATE = 20      # φ̇, θ̇, ψ̇
B_R = 23         # centre, global
B_A = 26         # rotation body -> global, 3x3 row-major
B_V = 35         # velocity of the centre, global
B_W = 38         # angular velocity (no wheelset spin), global
B_F = 41         # applied force, global
B_M = 44         # applied moment about the centre, global
# --- per-wheelset work entries -------------------------------------------------------------------
C_OUT = 0                    # contact kernel output vector (layout.N_OUT)
C_IRR = L.N_OUT              # (y_l, y_r, z_l, z_r)
C_RATES = C_IRR + 5          # (ẏ, ẏ_l, ẏ_r, ż_l, ż_r)
C_X = C_RATES + 5            # KEC Newton unknowns (z, φ, s^lk, s^rk)
C_PDD = C_X + 4              # p̈ (index 0 unused)
C_ZPHI = C_PDD + 5           # LUT: (z, φ) for the indentation correction (NaN: on the constraint)
C_CREEP = C_ZPHI + 2         # creepages per record (ξ_x, ξ_y, φ) x 4
assert C_CREEP + 12 <= WORK_WS


@njit(inline="always", **JIT_NRT_FREE)
def _cross(ax, ay, az, bx, by, bz):
    return ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx


@njit(inline="always", **JIT_NRT_FREE)
def _rotate(A, k, x, y, z):
    """A[k:k+9] (row-major 3x3) times (x, y, z)."""
    return (A[k] * x + A[k + 1] * y + A[k + 2] * z, A[k + 3] * x + A[k + 4] * y + A[k + 5] * z,
            A[k + 6] * x + A[k + 7] * y + A[k + 8] * z)


@njit(inline="always", **JIT_NRT_FREE)
def _to_track(W, k, x, y, z):
    """Global vector -> components in the track frame of the body whose work block starts at k:
    (A^t)ᵀ v with A^t = R_z(ψ^t) R_x(φ^t)."""
    ch = W[k + B_CH]
    sh = W[k + B_SH]
    cp = W[k + B_CP]
    sp = W[k + B_SP]
    u = ch * x + sh * y
    w = -sh * x + ch * y
    return u, cp * w + sp * z, -sp * w + cp * z


@njit(inline="always", **JIT_NRT_FREE)
def _from_track(W, k, x, y, z):
    """Track-frame components -> global: A^t v."""
    ch = W[k + B_CH]
    sh = W[k + B_SH]
    cp = W[k + B_CP]
    sp = W[k + B_SP]
    w = cp * y - sp * z
    return ch * x - sh * w, sh * x + ch * w, sp * y + cp * z


@njit(inline="always", **JIT_NRT_FREE)
def _table(P, t, d):
    """Bumpstop force of table t at deflection d (PCHIP; linear beyond the ends)."""
    m = P.tab_n[t]
    x = P.tab_x[t]
    c = P.tab_c[t]
    if d <= x[0]:
        return c[0, 0] + c[0, 1] * (d - x[0])
    if d >= x[m - 1]:
        i = m - 2
        u = x[m - 1] - x[m - 2]
        f1 = c[i, 0] + u * (c[i, 1] + u * (c[i, 2] + u * c[i, 3]))
        s1 = c[i, 1] + u * (2.0 * c[i, 2] + 3.0 * u * c[i, 3])
        return f1 + s1 * (d - x[m - 1])
    lo = 0
    hi = m - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if x[mid] <= d:
            lo = mid
        else:
            hi = mid
    u = d - x[lo]
    return c[lo, 0] + u * (c[lo, 1] + u * (c[lo, 2] + u * c[lo, 3]))


@njit(**JIT_NRT_FREE)
def _contact_geometry(P, w, y, yd, s, v, out, irr, rates, x, pdd, zphi):
    """Rails under wheelset w at arc length s, then the contact kernel (KEC or LUT): z, φ, their
    derivatives and convective terms, contact records (all in ``out``).  Returns the LUT range flag (1:
(ȳ, ξ_g) clamped to the table) or 0."""
    xa, xa1, xa2 = irregularity_at(P.irr, s, CH_A)
    xg, xg1, xg2 = irregularity_at(P.irr, s, CH_G)
    xv, xv1, xv2 = irregularity_at(P.irr, s, CH_V)
    xc, xc1, xc2 = irregularity_at(P.irr, s, CH_C)
    irr[0] = xa + 0.5 * xg
    irr[1] = xa - 0.5 * xg
    irr[2] = xv + 0.5 * xc
    irr[3] = xv - 0.5 * xc
    rates[0] = yd
    rates[1] = v * (xa1 + 0.5 * xg1)
    rates[2] = v * (xa1 - 0.5 * xg1)
    rates[3] = v * (xv1 + 0.5 * xc1)
    rates[4] = v * (xv1 - 0.5 * xc1)
    v2 = v * v
    pdd[0] = 0.0
    pdd[1] = v2 * (xa2 + 0.5 * xg2)
    pdd[2] = v2 * (xa2 - 0.5 * xg2)
    pdd[3] = v2 * (xv2 + 0.5 * xc2)
    pdd[4] = v2 * (xv2 - 0.5 * xc2)
    if P.w_method[w] == METHOD_KEC:
        x[0] = np.nan   # deterministic cold start: the right-hand side never depends on its call history
        kec_wheelset(P.kec, y, irr, rates, x, out)
        return 0
    zphi[0] = np.nan
    zphi[1] = np.nan
    return lut_wheelset(P.lut, y, irr, rates, zphi, out)


@njit(**JIT)
def centred_contact(kec, lut, method):
    """(height [m] of a wheelset centre above the rail-profile origins, mean rolling radius [m] of its two
    wheels) with the wheelset centred on a perfect track."""
    work = np.zeros(WORK_WS)
    out = work[C_OUT:C_OUT + L.N_OUT]
    _contact_geometry_free(kec, lut, method, out, work)
    return out[L.Z], 0.5 * (out[L.L_PRIMARY + L.C_R] + out[L.R_PRIMARY + L.C_R])


@njit(**JIT_NRT_FREE)
def _contact_geometry_free(kec, lut, method, out, work):
    irr = work[C_IRR:C_IRR + 4]
    rates = work[C_RATES:C_RATES + 5]
    x = work[C_X:C_X + 4]
    zphi = work[C_ZPHI:C_ZPHI + 2]
    for k in range(4):
        irr[k] = 0.0
    for k in range(5):
        rates[k] = 0.0
    if method == METHOD_KEC:
        x[0] = np.nan
        kec_wheelset(kec, 0.0, irr, rates, x, out)
    else:
        zphi[0] = np.nan
        zphi[1] = np.nan
        lut_wheelset(lut, 0.0, irr, rates, zphi, out)


@njit(**JIT_NRT_FREE)
def _record_creep(P, out, rec, sigma, N, V, vx, vy, vz, wx, wy, wz):
    """Creep forces (F_x, F_y, M_z) on the wheel of contact record ``rec`` (base index) carrying normal
    force N, with its creepages (Polach via the fused Hertz/Kalker table); zeros when N <= 0 or creep is
    off."""
    if N <= 0.0 or P.creep_on == 0.0:
        return 0.0, 0.0, 0.0
    a, b, c11, c22, c23 = hertz_kalker(P.hk, out[rec + L.C_A], out[rec + L.C_B], N)
    xx, xy, sp = creepages(V, vx, vy, vz, wx, wy, wz, out[rec + L.C_DY], out[rec + L.C_DZ],
                           out[rec + L.C_GAMMA], sigma, out[rec + L.C_DX])
    return creep_force(P.creep_law, N, a, b, c11, c22, c23, xx, xy, sp, V)


@njit(inline="always", **JIT_NRT_FREE)
def _normal_dir(out, rec, sigma):
    """Generalised direction (y, z, φ rows) of a unit normal force at record ``rec``."""
    g = out[rec + L.C_GAMMA]
    ny = -sigma * math.sin(g)
    nz = math.cos(g)
    return ny, nz, out[rec + L.C_DY] * nz - out[rec + L.C_DZ] * ny


@njit(inline="always", **JIT_NRT_FREE)
def _solve3(a11, a12, a13, a21, a22, a23, a31, a32, a33, b1, b2, b3):
    """Cramer's rule for a 3x3 system."""
    c11 = a22 * a33 - a23 * a32
    c12 = a23 * a31 - a21 * a33
    c13 = a21 * a32 - a22 * a31
    det = a11 * c11 + a12 * c12 + a13 * c13
    x1 = (b1 * c11 + a12 * (b3 * a23 - b2 * a33) + a13 * (b2 * a32 - b3 * a22)) / det
    x2 = (a11 * (b2 * a33 - b3 * a23) + b1 * c12 + a13 * (a21 * b3 - a31 * b2)) / det
    x3 = (a11 * (a22 * b3 - a32 * b2) + a12 * (a31 * b2 - a21 * b3) + b1 * c13) / det
    return x1, x2, x3


@njit(**JIT_NRT_FREE)
def _wheelset_dynamics(P, w, b, off, y, v, W, kb, kc, dydt, diag, want, torque):
    """Accelerations of wheelset w (body b): embedded contact constraint z = Z(y, p), φ = Φ(y, p); normal
    forces as reactions (KEC: along the real contact normals, eqs 24-26; LUT: along the constraint gradient,
    eq 19, plus the Hertzian flange penalty, eqs 20-21), Polach creep forces from those normal forces by a
    fixed point converged within the evaluation.  Writes ẏ, ψ̇, ÿ, ψ̈, ω̇ into dydt; returns the longitudinal
    force on the wheelset along its track frame's X [N] (creep forces + applied) and the yaw rate term."""
    out = W[kc + C_OUT:kc + C_OUT + L.N_OUT]
    pdd = W[kc + C_PDD:kc + C_PDD + 5]
    rates = W[kc + C_RATES:kc + C_RATES + 5]
    cr = W[kc + C_CREEP:kc + C_CREEP + 12]
    m = P.b_mass[b]
    Ixx = P.b_I[b, 0]
    Iyy = P.b_I[b, 1]
    Izz = P.b_I[b, 2]
    o = off + P.b_off[b]
    yd = y[o + W_YD]
    psi = y[o + W_PSI]
    psid = y[o + W_PSID]
    om = y[o + W_OM]
    # contact points of the yawed wheelset ahead of / behind the axle (first order in ψ, creep.yaw_offsets)
    yaw_offsets(out, psi, out[L.PHI])
    Zy = out[L.DZ_DP]
    Py = out[L.DPHI_DP]
    gz = out[L.CZ]
    gp = out[L.CPHI]
    for k in range(1, 5):
        gz += out[L.DZ_DP + k] * pdd[k]
        gp += out[L.DPHI_DP + k] * pdd[k]
    zabs = out[L.Z]
    phi = out[L.PHI]
    zd = out[L.ZDOT]
    phid = out[L.PHIDOT]
    # applied forces (suspension) in track components, gravity, frame (transport + Coriolis) terms
    Fx, Fy, Fz = _to_track(W, kb, W[kb + B_F], W[kb + B_F + 1], W[kb + B_F + 2])
    Mx, My, Mz = _to_track(W, kb, W[kb + B_M], W[kb + B_M + 1], W[kb + B_M + 2])
    cp = W[kb + B_CP]
    sp = W[kb + B_SP]
    kap = W[kb + B_K]
    kapp = W[kb + B_KP]
    php = W[kb + B_PHP]
    g = P.gravity
    Fy -= m * g * sp
    Fz -= m * g * cp
    Ox = php
    Oy = kap * sp
    Oz = kap * cp
    Opx = 0.0
    Opy = kapp * sp + kap * cp * php
    Opz = kapp * cp - kap * sp * php
    ry = y[o + W_Y]
    rz = zabs
    # a = v²(Ω×e1 + Ω'×r + Ω×(Ω×r)) + 2v Ω×ṙ with r = (0, y, z), ṙ = (0, ẏ, ż)
    c1x, c1y, c1z = _cross(Opx, Opy, Opz, 0.0, ry, rz)
    t1x, t1y, t1z = _cross(Ox, Oy, Oz, 0.0, ry, rz)
    c2x, c2y, c2z = _cross(Ox, Oy, Oz, t1x, t1y, t1z)
    c3x, c3y, c3z = _cross(Ox, Oy, Oz, 0.0, yd, zd)
    v2 = v * v
    afx = v2 * (c1x + c2x) + 2.0 * v * c3x
    afy = v2 * (Oz + c1y + c2y) + 2.0 * v * c3y
    afz = v2 * (-Oy + c1z + c2z) + 2.0 * v * c3z
    wx_abs = phid + v * Ox
    wz_abs = psid + v * Oz
    # known right-hand sides of the (y, z, φ) rows (without contact forces)
    b1 = Fy - m * afy
    b2 = Fz - m * afz - m * gz
    b3 = Mx - Ixx * (gp + v2 * Opx) + Iyy * om * wz_abs
    # velocities for the creepages: centre (track components) and absolute angular velocity
    Vg = W[kb + B_V]
    vx, vy, vz = _to_track(W, kb, Vg, W[kb + B_V + 1], W[kb + B_V + 2])
    wxa, wya, wza = wheelset_angular_velocity(phi, psi, wx_abs, wz_abs, om)
    lut = P.w_method[w] != METHOD_KEC
    # reaction directions (g1, g2) and the tread normals (for the LUT's wheel loads)
    g1y = g1z = g1p = g2y = g2z = g2p = 0.0
    for wheel in range(2):
        sigma = 1.0 if wheel == 0 else -1.0
        for r in range(2):
            rec = L.CONTACT0 + (2 * wheel + r) * L.N_REC
            wt = out[rec + L.C_W]
            if wt == 0.0:
                continue
            ny, nz, npz = _normal_dir(out, rec, sigma)
            if wheel == 0:
                g1y += wt * ny
                g1z += wt * nz
                g1p += wt * npz
            else:
                g2y += wt * ny
                g2z += wt * nz
                g2p += wt * npz
    # LUT: tread contact as constraint reactions along the constraint gradient (eq 19)
    t1z_ = g1z
    t1p_ = g1p
    t2z_ = g2z
    t2p_ = g2p
    if lut:
        g1y, g1z, g1p = -Zy, 1.0, 0.0
        g2y, g2z, g2p = -Py, 0.0, 1.0
        det_t = t1z_ * t2p_ - t2z_ * t1p_
    else:
        det_t = 1.0
    # LUT flange penalty (eq 20): applied normal force on the flange record of each wheel
    fpen0 = 0.0
    fpen1 = 0.0
    if lut:
        for wheel in range(2):
            sigma = 1.0 if wheel == 0 else -1.0
            rec = L.CONTACT0 + (2 * wheel + 1) * L.N_REC
            dl = out[rec + L.C_DELTA]
            if dl > 0.0:
                ddot = (out[rec + L.C_DDY] * (yd - rates[1 + wheel]) + out[rec + L.C_DDZ] * (zd - rates[3 + wheel])
                        + out[rec + L.C_DDPHI] * phid)
                f = P.K_hertz * dl * math.sqrt(dl) + P.D_damp * ddot * dl
                if f < 0.0:
                    f = 0.0
                ny, nz, npz = _normal_dir(out, rec, sigma)
                b1 += f * ny
                b2 += f * nz
                b3 += f * npz
                if wheel == 0:
                    fpen0 = f
                else:
                    fpen1 = f
    # creepages of every record (independent of the normal forces)
    for k in range(4):
        rec = L.CONTACT0 + k * L.N_REC
        sigma = 1.0 if k < 2 else -1.0
        xx, xy, spn = creepages(v, vx, vy, vz, wxa, wya, wza, out[rec + L.C_DY], out[rec + L.C_DZ],
                                out[rec + L.C_GAMMA], sigma, out[rec + L.C_DX])
        cr[3 * k] = xx
        cr[3 * k + 1] = xy
        cr[3 * k + 2] = spn
    a11 = m
    a21 = m * Zy
    a31 = Ixx * Py
    # fixed point: normal forces -> creep forces -> accelerations and normal forces
    ydd, q1, q2 = _solve3(a11, -g1y, -g2y, a21, -g1z, -g2z, a31, -g1p, -g2p, b1, b2, b3)
    if lut:
        N0 = (q1 * t2p_ - q2 * t2z_) / det_t
        N1 = (q2 * t1z_ - q1 * t1p_) / det_t
    else:
        N0 = q1
        N1 = q2
    sfx = sfy = sfz = smx = smy = smz = 0.0
    nit = 0
    scale = abs(N0) + abs(N1) + 1.0
    for it in range(P.fp_maxit):
        nit = it + 1
        sfx = sfy = sfz = smx = smy = smz = 0.0
        for k in range(4):
            rec = L.CONTACT0 + k * L.N_REC
            sigma = 1.0 if k < 2 else -1.0
            wheel = k // 2
            if lut:
                if k % 2 == 0:
                    Nk = N0 if wheel == 0 else N1
                else:
                    Nk = fpen0 if wheel == 0 else fpen1
            else:
                Nk = out[rec + L.C_W] * (N0 if wheel == 0 else N1)
            if Nk <= 0.0 or P.creep_on == 0.0:
                continue
            a, bb, c11, c22, c23 = hertz_kalker(P.hk, out[rec + L.C_A], out[rec + L.C_B], Nk)
            fx, fy, mz = creep_force(P.creep_law, Nk, a, bb, c11, c22, c23, cr[3 * k], cr[3 * k + 1],
                                     cr[3 * k + 2], v)
            gam = out[rec + L.C_GAMMA]
            cg = math.cos(gam)
            sg = math.sin(gam)
            dY = out[rec + L.C_DY]
            dZ = out[rec + L.C_DZ]
            dX = out[rec + L.C_DX]
            # force fx t1 + fy t2 (t2 = (0, cos γ, σ sin γ)), spin moment mz n (n = (0, -σ sin γ, cos γ)),
            # applied at (dX, dY, dZ)
            fyy = fy * cg
            fzz = fy * sigma * sg
            sfx += fx
            sfy += fyy
            sfz += fzz
            smx += dY * fzz - dZ * fyy
            smy += dZ * fx - dX * fzz - sigma * sg * mz
            smz += dX * fyy - dY * fx + cg * mz
        ydd, q1, q2 = _solve3(a11, -g1y, -g2y, a21, -g1z, -g2z, a31, -g1p, -g2p, b1 + sfy, b2 + sfz, b3 + smx)
        if lut:
            n0 = (q1 * t2p_ - q2 * t2z_) / det_t
            n1 = (q2 * t1z_ - q1 * t1p_) / det_t
        else:
            n0 = q1
            n1 = q2
        dn = abs(n0 - N0) + abs(n1 - N1)
        N0 = n0
        N1 = n1
        if P.creep_on == 0.0 or dn <= P.fp_tol * scale:
            break
    # The normal forces act at the yawed contact points too (dX), but their yaw moment is left out: without
    # the matching O(ψ) change of the lateral constraint force (tables without a yaw dimension) it is a
    # circulatory force that pumps energy into a frictionless wheelset (test_energy_balance_without_creep_forces).
    o2 = o
    dydt[o2 + W_Y] = yd
    dydt[o2 + W_PSI] = psid
    dydt[o2 + W_YD] = ydd
    dydt[o2 + W_PSID] = (Mz + smz - Izz * v2 * Opz - Iyy * om * wx_abs) / Izz
    if P.spin_mode == SPIN_FREE:
        dydt[o2 + W_OM] = (smy + torque) / Iyy
    else:
        dydt[o2 + W_OM] = 0.0   # rolling: set from v̇ by the caller
    fx_total = Fx + sfx - m * afx
    if want:
        _wheelset_diag(P, w, out, cr, N0, N1, fpen0, fpen1, lut, v, vx, vy, vz, wxa, wya, wza, diag, nit, om)
    return fx_total, nit


@njit(**JIT_NRT_FREE)
def _wheelset_diag(P, w, out, cr, N0, N1, fpen0, fpen1, lut, v, vx, vy, vz, wxa, wya, wza, diag, nit, om):
    """Per-wheel outputs (Q, Y, creepages, contact position, flange flag, indentation) of wheelset w."""
    base_w = diag.size - P.n_ws * D_WS - 2 * P.n_ws * D_WHEEL
    base_s = diag.size - P.n_ws * D_WS + w * D_WS
    sumy = 0.0
    for wheel in range(2):
        sigma = 1.0 if wheel == 0 else -1.0
        d0 = base_w + (2 * w + wheel) * D_WHEEL
        fy_t = 0.0
        fz_t = 0.0
        fx_t = 0.0
        ntot = 0.0
        nbest = -1.0
        best = 0
        nfl = 0.0
        tgam = 0.0
        for r in range(2):
            k = 2 * wheel + r
            rec = L.CONTACT0 + k * L.N_REC
            if lut:
                Nk = (N0 if wheel == 0 else N1) if r == 0 else (fpen0 if wheel == 0 else fpen1)
            else:
                Nk = out[rec + L.C_W] * (N0 if wheel == 0 else N1)
            if r == 1:
                nfl = Nk
            fx = fy = mz = 0.0
            if Nk > 0.0 and P.creep_on != 0.0:
                a, bb, c11, c22, c23 = hertz_kalker(P.hk, out[rec + L.C_A], out[rec + L.C_B], Nk)
                fx, fy, mz = creep_force(P.creep_law, Nk, a, bb, c11, c22, c23, cr[3 * k], cr[3 * k + 1],
                                         cr[3 * k + 2], v)
                tgam -= fx * cr[3 * k] + fy * cr[3 * k + 1]
            gam = out[rec + L.C_GAMMA]
            cg = math.cos(gam)
            sg = math.sin(gam)
            fy_t += fy * cg - Nk * sigma * sg
            fz_t += fy * sigma * sg + Nk * cg
            fx_t += fx
            ntot += Nk
            if Nk > nbest:
                nbest = Nk
                best = k
        rec = L.CONTACT0 + best * L.N_REC
        diag[d0 + DW_Q] = fz_t
        diag[d0 + DW_Y] = -sigma * fy_t
        diag[d0 + DW_N] = ntot
        diag[d0 + DW_XI_X] = cr[3 * best]
        diag[d0 + DW_XI_Y] = cr[3 * best + 1]
        diag[d0 + DW_SPIN] = cr[3 * best + 2]
        diag[d0 + DW_SW] = out[rec + L.C_SW]
        diag[d0 + DW_SR] = out[rec + L.C_SR]
        diag[d0 + DW_GAMMA] = out[rec + L.C_GAMMA]
        diag[d0 + DW_R] = out[rec + L.C_R]
        rf = L.CONTACT0 + (2 * wheel + 1) * L.N_REC
        if lut:
            diag[d0 + DW_DELTA] = out[rf + L.C_DELTA]
            # flange contact: the Hertzian penalty of the flange record carries load (two-point contact), or
            # the constrained (single) contact lies on the flange (contact angle above 45°)
            diag[d0 + DW_FLANGE] = 1.0 if (nfl > 0.0 or out[rec + L.C_GAMMA] > 0.7854) else 0.0
        else:
            diag[d0 + DW_DELTA] = 0.0
            # flange contact: the flange-start contact of a regularisation band carries load, or the
            # dominant contact lies on the flange (contact angle above 45°)
            fl = out[rf + L.C_W] > 0.0 and out[rf + L.C_GAMMA] > 0.7854
            diag[d0 + DW_FLANGE] = 1.0 if (fl or out[rec + L.C_GAMMA] > 0.7854) else 0.0
        diag[d0 + DW_FX] = fx_t
        diag[d0 + DW_NFLANGE] = nfl
        diag[d0 + DW_TGAMMA] = tgam
        sumy += -fy_t
    diag[base_s + DWS_ITER] = nit
    diag[base_s + DWS_KEC] = out[L.ITER]
    diag[base_s + DWS_SUMY] = sumy
    diag[base_s + DWS_OMEGA] = om
    diag[base_s + DWS_Z] = out[L.Z]
    diag[base_s + DWS_PHI] = out[L.PHI]
    diag[base_s + DWS_ZDOT] = out[L.ZDOT]
    diag[base_s + DWS_PHIDOT] = out[L.PHIDOT]


@njit(inline="always", **JIT_NRT_FREE)
def _track_frames(P, s, W):
    """Step 1 of :func:`vehicle_eval`: every body's track frame at its arc length s + x_b into its work block."""
    for b in range(P.n_body):
        k = b * WORK_BODY
        X, Yg, h, kap, kapp, ph, php = track_frame(P.track, s + P.b_x[b])
        W[k + B_X] = X
        W[k + B_YG] = Yg
        W[k + B_H] = h
        W[k + B_K] = kap
        W[k + B_KP] = kapp
        W[k + B_PH] = ph
        W[k + B_PHP] = php
        W[k + B_CH] = math.cos(h)
        W[k + B_SH] = math.sin(h)
        W[k + B_CP] = math.cos(ph)
        W[k + B_SP] = math.sin(ph)


@njit(inline="always", **JIT_NRT_FREE)
def _contact(P, w, y, off, s, v, W):
    """Step 2 of :func:`vehicle_eval` for wheelset w: its contact geometry (z, φ from the embedded constraint)
    into its work block; returns the LUT range flag."""
    b = P.w_body[w]
    o = off + P.b_off[b]
    kc = P.n_body * WORK_BODY + w * WORK_WS
    return _contact_geometry(P, w, y[o + W_Y], y[o + W_YD], s + P.b_x[b], v, W[kc + C_OUT:kc + C_OUT + L.N_OUT],
                             W[kc + C_IRR:kc + C_IRR + 4], W[kc + C_RATES:kc + C_RATES + 5], W[kc + C_X:kc + C_X + 4],
                             W[kc + C_PDD:kc + C_PDD + 5], W[kc + C_ZPHI:kc + C_ZPHI + 2])


@njit(inline="always", **JIT_NRT_FREE)
def _kinematics(P, b, y, off, v, W):
    """Step 3 of :func:`vehicle_eval` for body b: global position, rotation, velocities into its work block, and
    its force/moment accumulators zeroed (a wheelset's z, φ and rates from its contact block)."""
    k = b * WORK_BODY
    o = off + P.b_off[b]
    if P.b_kind[b] == KIND_WHEELSET:
        w = P.b_ws[b]
        kc = P.n_body * WORK_BODY + w * WORK_WS + C_OUT
        yy = y[o + W_Y]
        zz = W[kc + L.Z]
        phi = W[kc + L.PHI]
        th = 0.0
        psi = y[o + W_PSI]
        yd = y[o + W_YD]
        zd = W[kc + L.ZDOT]
        phid = W[kc + L.PHIDOT]
        thd = 0.0
        psid = y[o + W_PSID]
    else:
        yy = y[o + R_Y]
        zz = P.b_z[b] + y[o + R_Z]
        phi = y[o + R_PHI]
        th = y[o + R_TH]
        psi = y[o + R_PSI]
        yd = y[o + 5 + R_Y]
        zd = y[o + 5 + R_Z]
        phid = y[o + 5 + R_PHI]
        thd = y[o + 5 + R_TH]
        psid = y[o + 5 + R_PSI]
    W[k + B_RBAR] = 0.0
    W[k + B_RBAR + 1] = yy
    W[k + B_RBAR + 2] = zz
    W[k + B_RDOT] = 0.0
    W[k + B_RDOT + 1] = yd
    W[k + B_RDOT + 2] = zd
    W[k + B_ANG] = phi
    W[k + B_ANG + 1] = th
    W[k + B_ANG + 2] = psi
    W[k + B_RATE] = phid
    W[k + B_RATE + 1] = thd
    W[k + B_RATE + 2] = psid
    gx, gy, gz = _from_track(W, k, 0.0, yy, zz)
    W[k + B_R] = W[k + B_X] + gx
    W[k + B_R + 1] = W[k + B_YG] + gy
    W[k + B_R + 2] = gz
    # A = A^t A_rel, A_rel = I + skew(φ, θ, ψ) (small relative rotations, paper 004 eq 9)
    for col in range(3):
        if col == 0:
            ax, ay, az = 1.0, psi, -th
        elif col == 1:
            ax, ay, az = -psi, 1.0, phi
        else:
            ax, ay, az = th, -phi, 1.0
        cx, cy, cz = _from_track(W, k, ax, ay, az)
        W[k + B_A + col] = cx
        W[k + B_A + 3 + col] = cy
        W[k + B_A + 6 + col] = cz
    # frame angular velocity v Ω (global) = v (κ e_Z + φ^t' t)
    kap = W[k + B_K]
    php = W[k + B_PHP]
    ch = W[k + B_CH]
    sh = W[k + B_SH]
    wfx = v * php * ch
    wfy = v * php * sh
    wfz = v * kap
    rx, ry, rz = _cross(wfx, wfy, wfz, gx, gy, gz)
    dx, dy, dz = _from_track(W, k, 0.0, yd, zd)
    W[k + B_V] = v * ch + rx + dx
    W[k + B_V + 1] = v * sh + ry + dy
    W[k + B_V + 2] = rz + dz
    qx, qy, qz = _from_track(W, k, phid, thd, psid)
    W[k + B_W] = wfx + qx
    W[k + B_W + 1] = wfy + qy
    W[k + B_W + 2] = wfz + qz
    for q in range(6):
        W[k + B_F + q] = 0.0


@njit(inline="always", **JIT_NRT_FREE)
def _element_geometry(P, e, v, W):
    """Deformation of element e from its bodies' kinematics: ``(d, ḋ, e_x, e_y, e_z, p, q)`` with d [m or rad]
    along (about) the axis e (global) of body i's track frame, its rate ḋ, and the end-point arms p = A_i u_P,
    q = A_j u_Q (global; zeros for rotational elements)."""
    i = P.e_i[e]
    j = P.e_j[e]
    ki = i * WORK_BODY
    kj = j * WORK_BODY
    ax = P.e_axis[e]
    if ax < 3:
        # axis of body i's track frame, global
        if ax == 0:
            ex, ey, ez = _from_track(W, ki, 1.0, 0.0, 0.0)
        elif ax == 1:
            ex, ey, ez = _from_track(W, ki, 0.0, 1.0, 0.0)
        else:
            ex, ey, ez = _from_track(W, ki, 0.0, 0.0, 1.0)
        px, py, pz = _rotate(W, ki + B_A, P.e_uP[e, 0], P.e_uP[e, 1], P.e_uP[e, 2])
        qx, qy, qz = _rotate(W, kj + B_A, P.e_uQ[e, 0], P.e_uQ[e, 1], P.e_uQ[e, 2])
        dfx = W[ki + B_R] + px - W[kj + B_R] - qx
        dfy = W[ki + B_R + 1] + py - W[kj + B_R + 1] - qy
        dfz = W[ki + B_R + 2] + pz - W[kj + B_R + 2] - qz
        vpx, vpy, vpz = _cross(W[ki + B_W], W[ki + B_W + 1], W[ki + B_W + 2], px, py, pz)
        vqx, vqy, vqz = _cross(W[kj + B_W], W[kj + B_W + 1], W[kj + B_W + 2], qx, qy, qz)
        dvx = W[ki + B_V] + vpx - W[kj + B_V] - vqx
        dvy = W[ki + B_V + 1] + vpy - W[kj + B_V + 1] - vqy
        dvz = W[ki + B_V + 2] + vpz - W[kj + B_V + 2] - vqz
        # ė = ω_frame × e (frame of body i)
        chi = W[ki + B_CH]
        shi = W[ki + B_SH]
        wfx = v * W[ki + B_PHP] * chi
        wfy = v * W[ki + B_PHP] * shi
        wfz = v * W[ki + B_K]
        edx, edy, edz = _cross(wfx, wfy, wfz, ex, ey, ez)
        d = ex * dfx + ey * dfy + ez * dfz
        dd = edx * dfx + edy * dfy + edz * dfz + ex * dvx + ey * dvy + ez * dvz
    else:
        a = ax - 3
        ang = W[ki + B_ANG + a] - W[kj + B_ANG + a]
        rate = W[ki + B_RATE + a] - W[kj + B_RATE + a]
        if a == 0:
            ang += W[ki + B_PH] - W[kj + B_PH]
            rate += v * (W[ki + B_PHP] - W[kj + B_PHP])
            ex, ey, ez = _from_track(W, ki, 1.0, 0.0, 0.0)
        elif a == 1:
            ex, ey, ez = _from_track(W, ki, 0.0, 1.0, 0.0)
        else:
            ang += W[ki + B_H] - W[kj + B_H]
            rate += v * (W[ki + B_K] - W[kj + B_K])
            ex, ey, ez = _from_track(W, ki, 0.0, 0.0, 1.0)
        d = ang
        dd = rate
        px = py = pz = qx = qy = qz = 0.0
    return d, dd, ex, ey, ez, px, py, pz, qx, qy, qz


@njit(inline="always", **JIT_NRT_FREE)
def _element_law(P, e, d, dd, u):
    """Force f [N or N m] of element e at deformation d, rate ḋ and series-node stroke u, and the stroke rate u̇
    (0 without a series node)."""
    law = P.e_law[e]
    if law == LAW_SERIES_DAMPER:
        # damper D in series with the stiffness K_s (massless node: stroke u), in parallel with K
        fs = P.e_Ks[e] * (d - u)
        return P.e_K[e] * d + P.e_F0[e] + fs, fs / P.e_D[e]
    f = P.e_K[e] * d + P.e_D[e] * dd + P.e_F0[e]
    if law == LAW_BUMPSTOP:
        f += _table(P, P.e_tab[e], d)
    return f, 0.0


@njit(inline="always", **JIT_NRT_FREE)
def _apply_element(P, e, f, ex, ey, ez, px, py, pz, qx, qy, qz, W, sign):
    """Add ``sign`` × the forces and moments of element e (force f, axis e, arms p, q) to its bodies' accumulators."""
    ki = P.e_i[e] * WORK_BODY
    kj = P.e_j[e] * WORK_BODY
    if P.e_axis[e] < 3:
        Fx_ = -f * ex
        Fy_ = -f * ey
        Fz_ = -f * ez
        if sign < 0.0:
            Fx_ = -Fx_
            Fy_ = -Fy_
            Fz_ = -Fz_
        W[ki + B_F] += Fx_
        W[ki + B_F + 1] += Fy_
        W[ki + B_F + 2] += Fz_
        mx, my, mz = _cross(px, py, pz, Fx_, Fy_, Fz_)
        W[ki + B_M] += mx
        W[ki + B_M + 1] += my
        W[ki + B_M + 2] += mz
        W[kj + B_F] -= Fx_
        W[kj + B_F + 1] -= Fy_
        W[kj + B_F + 2] -= Fz_
        mx, my, mz = _cross(qx, qy, qz, -Fx_, -Fy_, -Fz_)
        W[kj + B_M] += mx
        W[kj + B_M + 1] += my
        W[kj + B_M + 2] += mz
    else:
        g = f * sign
        W[ki + B_M] -= g * ex
        W[ki + B_M + 1] -= g * ey
        W[ki + B_M + 2] -= g * ez
        W[kj + B_M] += g * ex
        W[kj + B_M + 1] += g * ey
        W[kj + B_M + 2] += g * ez


@njit(inline="always", **JIT_NRT_FREE)
def _element(P, e, y, off, v, W, dydt, sign):
    """Step 4 of :func:`vehicle_eval` for element e: its force on its two bodies (``sign`` −1: removed again)
    and, for a series damper, the stroke rate of its node into ``dydt``."""
    d, dd, ex, ey, ez, px, py, pz, qx, qy, qz = _element_geometry(P, e, v, W)
    node = P.e_node[e]
    u = y[off + node] if node >= 0 else 0.0
    f, udot = _element_law(P, e, d, dd, u)
    if node >= 0:
        dydt[off + node] = udot
    _apply_element(P, e, f, ex, ey, ez, px, py, pz, qx, qy, qz, W, sign)


@njit(inline="always", **JIT_NRT_FREE)
def _coupler_forces(P, f_ext, W, Wdst, sign):
    """Step 5 of :func:`vehicle_eval`: the external coupler forces (track-frame components at the coupler points)
    and the longitudinal force at the centre of gravity on body ``P.cpl_body``, from the kinematics in ``W``, added
    ``sign`` times to the accumulators of ``Wdst`` (``W`` itself in an evaluation)."""
    b = P.cpl_body
    k = b * WORK_BODY
    for c in range(2):
        gx, gy, gz = _from_track(W, k, f_ext[3 * c], f_ext[3 * c + 1], f_ext[3 * c + 2])
        if sign < 0.0:
            gx = -gx
            gy = -gy
            gz = -gz
        px, py, pz = _rotate(W, k + B_A, P.cpl_u[c, 0], P.cpl_u[c, 1], P.cpl_u[c, 2])
        Wdst[k + B_F] += gx
        Wdst[k + B_F + 1] += gy
        Wdst[k + B_F + 2] += gz
        mx, my, mz = _cross(px, py, pz, gx, gy, gz)
        Wdst[k + B_M] += mx
        Wdst[k + B_M + 1] += my
        Wdst[k + B_M + 2] += mz
    if f_ext.size >= 7 + P.n_ws:  # longitudinal force at the centre of gravity (resistance, grade)
        gx, gy, gz = _from_track(W, k, sign * f_ext[6 + P.n_ws], 0.0, 0.0)
        Wdst[k + B_F] += gx
        Wdst[k + B_F + 1] += gy
        Wdst[k + B_F + 2] += gz


@njit(inline="always", **JIT_NRT_FREE)
def _rigid_eom(P, b, off, v, W, dydt):
    """Step 6 of :func:`vehicle_eval` for rigid body b: its 10 state rates into ``dydt``; returns its longitudinal
    force along its track frame minus its frame inertia, F_x − m a_fx [N] (the forward motion's share)."""
    k = b * WORK_BODY
    o = off + P.b_off[b]
    m = P.b_mass[b]
    v2 = v * v
    g = P.gravity
    Fx, Fy, Fz = _to_track(W, k, W[k + B_F], W[k + B_F + 1], W[k + B_F + 2])
    Mx, My, Mz = _to_track(W, k, W[k + B_M], W[k + B_M + 1], W[k + B_M + 2])
    cp = W[k + B_CP]
    sp = W[k + B_SP]
    kap = W[k + B_K]
    kapp = W[k + B_KP]
    php = W[k + B_PHP]
    Fy -= m * g * sp
    Fz -= m * g * cp
    Ox = php
    Oy = kap * sp
    Oz = kap * cp
    Opy = kapp * sp + kap * cp * php
    Opz = kapp * cp - kap * sp * php
    ry = W[k + B_RBAR + 1]
    rz = W[k + B_RBAR + 2]
    yd = W[k + B_RDOT + 1]
    zd = W[k + B_RDOT + 2]
    c1x, c1y, c1z = _cross(0.0, Opy, Opz, 0.0, ry, rz)
    t1x, t1y, t1z = _cross(Ox, Oy, Oz, 0.0, ry, rz)
    c2x, c2y, c2z = _cross(Ox, Oy, Oz, t1x, t1y, t1z)
    c3x, c3y, c3z = _cross(Ox, Oy, Oz, 0.0, yd, zd)
    afx = v2 * (c1x + c2x) + 2.0 * v * c3x
    afy = v2 * (Oz + c1y + c2y) + 2.0 * v * c3y
    afz = v2 * (-Oy + c1z + c2z) + 2.0 * v * c3z
    Ixx = P.b_I[b, 0]
    Iyy = P.b_I[b, 1]
    Izz = P.b_I[b, 2]
    phid = W[k + B_RATE]
    thd = W[k + B_RATE + 1]
    psid = W[k + B_RATE + 2]
    wfx = v * Ox
    wfy = v * Oy
    wfz = v * Oz
    # α = v² Ω' + ω̇_rel + ω_f × ω_rel;  I α + ω × (I ω) = M
    tx, ty, tz = _cross(wfx, wfy, wfz, phid, thd, psid)
    wx = wfx + phid
    wy = wfy + thd
    wz = wfz + psid
    gx, gy, gz = _cross(wx, wy, wz, Ixx * wx, Iyy * wy, Izz * wz)
    dydt[o + R_Y] = yd
    dydt[o + R_Z] = zd
    dydt[o + R_PHI] = phid
    dydt[o + R_TH] = thd
    dydt[o + R_PSI] = psid
    dydt[o + 5 + R_Y] = Fy / m - afy
    dydt[o + 5 + R_Z] = Fz / m - afz
    dydt[o + 5 + R_PHI] = (Mx - gx) / Ixx - tx
    dydt[o + 5 + R_TH] = (My - gy) / Iyy - v2 * Opy - ty
    dydt[o + 5 + R_PSI] = (Mz - gz) / Izz - v2 * Opz - tz
    return Fx - m * afx


@njit(inline="always", **JIT_NRT_FREE)
def _body_eom(P, b, y, off, v, W, f_ext, dydt, diag, want):
    """The rates of body b (rigid: :func:`_rigid_eom`; wheelset: :func:`_wheelset_dynamics` with its applied
    axle torque) and its share of the forward motion's force [N]."""
    if P.b_kind[b] != KIND_WHEELSET:
        return _rigid_eom(P, b, off, v, W, dydt)
    w = P.b_ws[b]
    torque = P.w_torque[w]
    if f_ext.size >= 6 + P.n_ws:
        torque += f_ext[6 + w]
    fxw, _nit = _wheelset_dynamics(P, w, b, off, y, v, W, b * WORK_BODY, P.n_body * WORK_BODY + w * WORK_WS, dydt,
                                   diag, want, torque)
    return fxw


@njit(inline="always", **JIT_NRT_FREE)
def _forward_motion(P, off, v, sum_fx, sum_m, dydt):
    """Step 7 of :func:`vehicle_eval`: ṡ, v̇ (free: ΣF_x/Σm) and, rolling, the wheelsets' spin rates; returns the
    constraint force of a prescribed speed (0 when free)."""
    dydt[off + S_POS] = v
    if P.speed_mode == SPEED_FREE:
        acc = sum_fx / sum_m
        dydt[off + S_VEL] = acc
        ret = 0.0
    else:
        dydt[off + S_VEL] = 0.0
        acc = 0.0
        ret = -sum_fx
    if P.spin_mode != SPIN_FREE:
        for w in range(P.n_ws):
            dydt[off + P.b_off[P.w_body[w]] + W_OM] = acc / P.w_r0[w]
    return ret


@njit(**JIT_NRT_FREE)
def vehicle_eval(t, y, off, P, f_ext, dydt, work, diag):
    """Right-hand side of one railway vehicle on the slice ``y[off:off + P.n_state]`` of a state vector.

    ``t`` [s]; ``y``, ``dydt`` float64[::1] (only the vehicle's slice is read/written); ``P``:
    :class:`~hpcrail.models.vehicle.build.VehicleParams`; ``f_ext`` float64[k]: external forces — k >= 6:
    (F_x, F_y, F_z) at the front and at the rear coupler point of body ``P.cpl_body`` in that body's track
    frame [N], k >= 6 + n_ws: then an applied torque about each wheelset's axle [N m] (driving +, added to
    ``P.w_torque``), k >= 7 + n_ws: then a longitudinal force at the centre of gravity of body ``P.cpl_body``
    along its track frame's x [N] (running resistance and grade of a mixed train's detailed vehicle); k = 0:
    none.  ``work`` float64[P.n_work] scratch (overwritten).  ``diag``
    float64[0] or float64[n_body·D_BODY + 2 n_ws·D_WHEEL + n_ws·D_WS]: per-sample outputs
    (:func:`vehicle_outputs`).  Returns the vehicle's total longitudinal force along the reference track
    frame [N] (prescribed speed: the constraint force that keeps v constant, with the inertia sign
    convention F = m v̇ - ΣF_x; free speed: 0).  A pure function of (t, y, P, f_ext): no state is kept
    between calls.
    """
    W = work
    nb = P.n_body
    s = y[off + S_POS]
    v = y[off + S_VEL]
    want = diag.size > 0
    _track_frames(P, s, W)
    for w in range(P.n_ws):
        flag = _contact(P, w, y, off, s, v, W)
        if want:
            diag[diag.size - P.n_ws * D_WS + w * D_WS + DWS_CLAMP] = flag
    for b in range(nb):
        _kinematics(P, b, y, off, v, W)
    for e in range(P.n_el):
        _element(P, e, y, off, v, W, dydt, 1.0)
    if f_ext.size >= 6:
        _coupler_forces(P, f_ext, W, W, 1.0)
    # equations of motion: rigid bodies, then wheelsets (the order of the sum of longitudinal forces)
    sum_fx = 0.0
    sum_m = 0.0
    for b in range(nb):
        sum_m += P.b_mass[b]
        if P.b_kind[b] != KIND_WHEELSET:
            sum_fx += _rigid_eom(P, b, off, v, W, dydt)
    for w in range(P.n_ws):
        sum_fx += _body_eom(P, P.w_body[w], y, off, v, W, f_ext, dydt, diag, want)
    ret = _forward_motion(P, off, v, sum_fx, sum_m, dydt)
    if want:
        for b in range(nb):
            d0 = b * D_BODY
            k = b * WORK_BODY
            diag[d0] = W[k + B_RBAR + 1]
            diag[d0 + 1] = W[k + B_RBAR + 2] - P.b_z[b]
            diag[d0 + 2] = W[k + B_ANG]
            diag[d0 + 3] = W[k + B_ANG + 1]
            diag[d0 + 4] = W[k + B_ANG + 2]
            diag[d0 + 5] = W[k + B_RDOT + 1]
    return ret


@njit(**JIT)
def vehicle_rhs(t, y, P, dydt):
    """``rhs(t, y, params, dydt)`` of a vehicle alone (integrator contract); the applied axle torques of
    ``P.w_torque`` and no coupler forces."""
    work = np.empty(P.n_work)
    vehicle_eval(t, y, np.int64(0), P, work[:0], dydt, work, work[:0])


@njit(**JIT_NRT_FREE)
def vehicle_observe(t, y, P, acc):
    """Every-step envelopes: ``acc[b]`` = max |y| and ``acc[n_body + b]`` = max |ψ| of body b (states)."""
    nb = P.n_body
    for b in range(nb):
        o = P.b_off[b]
        if P.b_kind[b] == KIND_WHEELSET:
            yy = abs(y[o + W_Y])
            ps = abs(y[o + W_PSI])
        else:
            yy = abs(y[o + R_Y])
            ps = abs(y[o + R_PSI])
        if yy > acc[b]:
            acc[b] = yy
        if ps > acc[nb + b]:
            acc[nb + b] = ps


def diag_size(P) -> int:
    """Length of the per-sample output vector of :func:`vehicle_eval`."""
    return P.n_body * D_BODY + 2 * P.n_ws * D_WHEEL + P.n_ws * D_WS


@njit(**JIT)
def vehicle_outputs(t, Y, P, D, dY):
    """Per-sample outputs: for each sample k with a finite state, ``D[k]`` (float64[k, diag_size]) from
    :func:`vehicle_eval` and ``dY[k]`` the state derivative; NaN rows stay NaN."""
    work = np.empty(P.n_work)
    for k in range(t.size):
        if not math.isfinite(Y[k, 0]):
            continue
        vehicle_eval(t[k], Y[k], np.int64(0), P, work[:0], dY[k], work, D[k])


def static_wheel_loads(P, y0) -> np.ndarray:
    """Vertical wheel forces Q0 [N] (float64[2 n_ws], left then right per wheelset) in the initial state
    with the vehicle at rest on level straight track (speed and curvature ignored: the forces at the
    reference configuration with v = 0)."""
    y = np.array(y0, float)
    y[S_VEL] = 0.0
    for w in range(P.n_ws):
        o = P.b_off[P.w_body[w]]
        y[o + W_Y] = 0.0
        y[o + W_PSI] = 0.0
        y[o + W_OM] = 0.0
    # level straight track: evaluate with the track table's first frame replaced by a straight one
    Ps = P._replace(track=P.track._replace(nodes=_straight_nodes(P.track), slopes=np.zeros_like(P.track.slopes)),
                    creep_on=0.0)
    # one sample through the per-sample outputs kernel (the same evaluation at t = 0): a first run compiles the
    # vehicle's evaluation once for both (the outputs kernel is needed after the run anyway)
    D = np.zeros((1, diag_size(P)))
    vehicle_outputs(np.zeros(1), np.ascontiguousarray(y.reshape(1, -1)), Ps, D, np.zeros((1, y.size)))
    base = P.n_body * D_BODY
    return np.array([D[0, base + k * D_WHEEL + DW_Q] for k in range(2 * P.n_ws)])


def _straight_nodes(T):
    from hpcrail.models.track.geometry import T_C, T_E, T_K, T_S, T_TH, T_X, T_Y

    out = np.array(T.nodes, float)
    out[:, T_X] = T.s0 + T.h * np.arange(out.shape[0])
    out[:, T_Y] = 0.0
    out[:, T_TH] = 0.0
    out[:, T_K] = 0.0
    out[:, T_C] = 1.0
    out[:, T_S] = 0.0
    out[:, T_E] = 0.0
    return out


__all__ = ["vehicle_eval", "vehicle_rhs", "vehicle_observe", "vehicle_outputs", "diag_size", "static_wheel_loads",
           "centred_contact"]
