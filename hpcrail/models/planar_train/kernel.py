"""Numba kernels of the planar train with inertial or noninertial couplers (Massa et al. 2012).

Car bodies (trajectory coordinates s, y, ψ_r on the track; see :mod:`hpcrail.models.planar_train.build`) — Newton-Euler in the
track frame.  With R = r(s) + y n(s), ψ = θ(s) + ψ_r:

    R̈·t = (1 − κy) s̈ − κ' y ṡ² − 2κ ẏ ṡ,   R̈·n = ÿ + κ(1 − κy) ṡ²,   ψ̈ = κ s̈ + κ' ṡ² + ψ̈_r

so for a body with applied force F and moment M about its centre of gravity

    s̈ = (F·t/m + κ' y ṡ² + 2κ ẏ ṡ)/(1 − κy),   ÿ = F·n/m − κ(1 − κy) ṡ²,   ψ̈_r = M/I − κ s̈ − κ' ṡ².

Applied forces on a car: traction/resistance along the car axis, lateral guidance spring-dampers at the
two bogie centres (towards the track centre line at s ± b), the horizontal component m g tan φ of the
rail reaction on superelevated track (φ = asin(e / rail spacing)), and the coupler forces.

**Noninertial couplers** (Massa et al. 2012 §7-8): per coupler and evaluation, Newton-Raphson on the
quasistatic equilibrium (kinematics.coupler_newton, warm-started from ``params.ni_x``), the
noninertial velocities from the velocity-level equations (eq 43), then the forces the massless coupler
transmits to each car: along the car axis the draft-gear force F_B = k_B d + c_B ḋ (eq 31), across it
the knuckle force component at the pin (prismatic joint reaction, knuckle damping c_rr l̇ included),
and the torsional spring-damper moment k_r(α − α_0) + c_r α̇ (eq 35).  This is eq (40) of the paper
(the car feels its own draft gear, including its damping) written in relative coordinates; in elastic
equilibrium it equals the knuckle force applied at Q (a check in the tests).

**Inertial couplers**: the slider (prismatic joint) and the shank (revolute joint) are bodies with
the same kinematics, described by the minimal coordinates d, α of each end; Kane's equations per car
(its 3 coordinates and the 2 × 2 coordinates of the coupler ends it carries) give a symmetric
positive definite mass matrix of size ≤ 7, solved by Cholesky.  The models differ only by the
coupler inertia.

Failure of the noninertial Newton iteration (or a singular Jacobian) sets every derivative to NaN —
integrators report a non-finite state (dopri5 first retries smaller steps, where the warm start is
better) — and is counted in ``params.ni_stats``; the runner reports such a run as ``model_failure``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT, JIT_NRT_FREE
from hpcrail.models.couplers.kinematics import (
    CP_A0, CP_CB, CP_CR, CP_ISH, CP_KB, CP_KR, CP_LG, CP_LR0, CP_LS, CP_MS, CP_MSH, G_BA, G_BB, G_D, G_LA, G_LB,
    G_PHIA, G_PHIB, G_QA, G_QB, NS_FAIL, NS_ITER, NS_K_FAIL, NS_MAXIT, NS_SOLVES, NS_T_FAIL, coupler_geometry,
    coupler_newton, knuckle_displacement, knuckle_force, knuckle_rate, noninertial_rates,
)
from hpcrail.models.couplers.envelope import ACC_HEAD, ACC_OFFROUTE, N_ENV, envelope_fold, envelope_update
from hpcrail.models.planar_train.build import (
    CO_AA, CO_AB, CO_E, CO_F,
    F_HOLD_SPEED, W_C, W_FRES, W_FTR, W_FX, W_FY, W_K, W_KP, W_MZ, W_S, W_SPOS, W_TANPHI, W_TX, W_TY, W_V,
    W_VX, W_VY, W_W, W_X, W_Y, W_YD, W_YL,
)
from hpcrail.models.track.geometry import track_point

# rows of the per-sample records written when record=True
RC_S, RC_Y, RC_PSI, RC_ACC, RC_TRAC, RC_RES, RC_ALAT, RC_LTR = range(8)
N_RC = 8
(RK_F, RK_E, RK_DA, RK_AA, RK_DB, RK_AB, RK_DDA, RK_ADA, RK_DDB, RK_ADB, RK_KN, RK_KND, RK_FBA,
 RK_FBB) = range(14)
N_RK = 14

V_SMOOTH = 0.01  #: speed below which the running resistance is smoothed (tanh) [m/s]


@njit(inline="always", **JIT)
def _cars_kinematics(t, y, p):
    """Pass 1: car poses and velocities in the plane, and the forces acting on the car bodies alone
    (traction, resistance, guidance, superelevation) into ``p.work``.  Returns 1 if a car is
    beyond the ends of the defined track."""
    N = p.n_car
    w = p.work
    nodes = p.trk_nodes
    slopes = p.trk_slopes
    s0 = p.trk_s0
    h = p.trk_h
    ih = p.trk_inv_h
    off = 0
    s = y[0]
    sr = p.rail_spacing
    for j in range(N):
        b = 6 * j
        if j > 0:
            s = s - p.center_dist[j - 1] - y[b]
        yl = y[b + 1]
        psir = y[b + 2]
        v = y[b + 3]
        yd = y[b + 4]
        psird = y[b + 5]
        X, Y, th, k, kp, e = track_point(nodes, slopes, s0, h, ih, s)
        tx = math.cos(th)
        ty = math.sin(th)
        rx = X - yl * ty
        ry = Y + yl * tx
        psi = th + psir
        c = math.cos(psi)
        sn = math.sin(psi)
        a = (1.0 - k * yl) * v
        vx = a * tx - yd * ty
        vy = a * ty + yd * tx
        wz = k * v + psird
        m = p.mass[j]
        # superelevation: horizontal component of the rail reaction, towards the low rail (+n for e > 0)
        tanphi = e / math.sqrt(sr * sr - e * e)
        fx = -m * p.gravity * tanphi * ty
        fy = m * p.gravity * tanphi * tx
        mz = 0.0
        # lateral guidance at the bogie centres
        bb = p.bogie_b[j]
        kg = p.k_guid[j]
        cg = p.c_guid[j]
        for side in range(2):
            pb = bb if side == 0 else -bb
            Xp, Yp, thp, kpp, _kpp, _ep = track_point(nodes, slopes, s0, h, ih, s + pb)
            tpx = math.cos(thp)
            tpy = math.sin(thp)
            px = rx + pb * c
            py = ry + pb * sn
            dx = px - Xp
            dy = py - Yp
            delta = -dx * tpy + dy * tpx
            pvx = vx - wz * pb * sn
            pvy = vy + wz * pb * c
            ddelta = -(pvx - v * tpx) * tpy + (pvy - v * tpy) * tpx - kpp * v * (dx * tpx + dy * tpy)
            fn = -(kg * delta + cg * ddelta)
            gx = -fn * tpy
            gy = fn * tpx
            fx += gx
            fy += gy
            mz += pb * (c * gy - sn * gx)
        # traction and resistance along the car axis
        ftr = 0.0
        for i in range(p.f_veh.size):
            if p.f_veh[i] == j and t >= p.f_start[i]:
                if p.f_mode[i] == F_HOLD_SPEED:
                    f = m * (p.f_value[i] - v) / p.f_tau[i]
                    if f > p.f_max[i]:
                        f = p.f_max[i]
                    elif f < -p.f_max[i]:
                        f = -p.f_max[i]
                    ftr += f
                else:
                    ftr += p.f_value[i]
        fres = -p.resistance[j] * math.tanh(v / V_SMOOTH)
        fx += (ftr + fres) * c
        fy += (ftr + fres) * sn
        w[j, W_X] = rx
        w[j, W_Y] = ry
        w[j, W_C] = c
        w[j, W_S] = sn
        w[j, W_VX] = vx
        w[j, W_VY] = vy
        w[j, W_W] = wz
        w[j, W_TX] = tx
        w[j, W_TY] = ty
        w[j, W_K] = k
        w[j, W_KP] = kp
        w[j, W_FX] = fx
        w[j, W_FY] = fy
        w[j, W_MZ] = mz
        w[j, W_SPOS] = s
        w[j, W_TANPHI] = tanphi
        w[j, W_FTR] = ftr
        w[j, W_FRES] = fres
        w[j, W_V] = v
        w[j, W_YL] = yl
        w[j, W_YD] = yd
        if s + bb > p.trk_end or s - bb < p.trk_s0:
            off = 1
    return off


@njit(inline="always", **JIT)
def _load_pose(p, k):
    w = p.work
    pz = p.pz
    vz = p.vz
    a = k
    b = k + 1
    # poses relative to car b: the coupler depends on relative positions only, and the Newton
    # iteration then resolves its coordinates far below the round-off of absolute positions
    pz[0] = w[a, W_X] - w[b, W_X]
    pz[1] = w[a, W_Y] - w[b, W_Y]
    pz[2] = w[a, W_C]
    pz[3] = w[a, W_S]
    pz[4] = p.end_len[a]
    pz[5] = 0.0
    pz[6] = 0.0
    pz[7] = w[b, W_C]
    pz[8] = w[b, W_S]
    pz[9] = p.end_len[b]
    vz[0] = w[a, W_VX]
    vz[1] = w[a, W_VY]
    vz[2] = w[a, W_W]
    vz[3] = w[b, W_VX]
    vz[4] = w[b, W_VY]
    vz[5] = w[b, W_W]


@njit(inline="always", **JIT)
def _add_force(w, j, fx, fy, lx, ly):
    """Add force (fx, fy) applied at lever (lx, ly) from car j's centre of gravity."""
    w[j, W_FX] += fx
    w[j, W_FY] += fy
    w[j, W_MZ] += lx * fy - ly * fx


@njit(inline="always", **JIT)
def _record_coupler(p, k, x, xd, fx, fy, fba, fbb, rec_cpl, record):
    """Store the coupler results of this evaluation (observe) and, with record, the full record."""
    g = p.gw
    cp = p.cp
    ddx, ddy = knuckle_rate(p.pz, p.vz, g, xd)
    kn, knd = knuckle_displacement(p.pz, p.vz, g, xd, ddx, ddy, cp[CP_LR0])
    f = 0.5 * (fba + fbb)
    e = x[0] + x[2] + kn
    p.cpl_out[k, CO_F] = f
    p.cpl_out[k, CO_E] = e
    p.cpl_out[k, CO_AA] = x[1]
    p.cpl_out[k, CO_AB] = x[3]
    if record:
        rec_cpl[RK_F, k] = f
        rec_cpl[RK_E, k] = e
        rec_cpl[RK_DA, k] = x[0]
        rec_cpl[RK_AA, k] = x[1]
        rec_cpl[RK_DB, k] = x[2]
        rec_cpl[RK_AB, k] = x[3]
        rec_cpl[RK_DDA, k] = xd[0]
        rec_cpl[RK_ADA, k] = xd[1]
        rec_cpl[RK_DDB, k] = xd[2]
        rec_cpl[RK_ADB, k] = xd[3]
        rec_cpl[RK_KN, k] = kn
        rec_cpl[RK_KND, k] = knd
        rec_cpl[RK_FBA, k] = fba
        rec_cpl[RK_FBB, k] = fbb
    _ = (fx, fy)


@njit(inline="always", **JIT)
def _noninertial_couplers(t, p, rec_cpl, record):
    """Pass 2 (noninertial): solve every coupler and add the transmitted forces to the cars.
    Returns False if a Newton iteration failed."""
    w = p.work
    cp = p.cp
    g = p.gw
    kB = cp[CP_KB]
    cB = cp[CP_CB]
    kr = cp[CP_KR]
    cr = cp[CP_CR]
    a0 = cp[CP_A0]
    xw = p.xw
    xd = p.xd
    st = p.ni_stats
    for k in range(p.n_cpl):
        _load_pose(p, k)
        for i in range(4):
            xw[i] = p.ni_x[k, i]
        it = coupler_newton(p.pz, xw, cp, p.newton_tol, p.newton_maxit, g, p.sx)
        st[NS_SOLVES] += 1.0
        ok = it > 0
        if ok:
            st[NS_ITER] += it
            if it > st[NS_MAXIT]:
                st[NS_MAXIT] = it
            ok = noninertial_rates(p.pz, p.vz, cp, g, p.srhs, xd)
        if not ok:
            st[NS_FAIL] += 1.0
            st[NS_T_FAIL] = t
            st[NS_K_FAIL] = k + 1
            return False
        for i in range(4):
            p.ni_x[k, i] = xw[i]
            p.ni_xd[k, i] = xd[i]
        ddx, ddy = knuckle_rate(p.pz, p.vz, g, xd)
        fx, fy = knuckle_force(g, cp, ddx, ddy)   # on Q^b; −(fx, fy) on Q^a
        a = k
        b = k + 1
        # --- car a (rear end, σ = −1) ---
        ca = w[a, W_C]
        sa = w[a, W_S]
        fba = kB * xw[0] + cB * xd[0]
        fla = fx * sa - fy * ca            # (−f)·e2_a, e2_a = (−sin ψ_a, cos ψ_a)
        ta = kr * (xw[1] - a0) + cr * xd[1]
        w[a, W_FX] += -fba * ca - fla * sa
        w[a, W_FY] += -fba * sa + fla * ca
        w[a, W_MZ] += -(p.end_len[a] + xw[0]) * fla + ta
        # --- car b (front end, σ = +1) ---
        cb = w[b, W_C]
        sb = w[b, W_S]
        fbb = kB * xw[2] + cB * xd[2]
        flb = -fx * sb + fy * cb
        tb = kr * (xw[3] - a0) + cr * xd[3]
        w[b, W_FX] += fbb * cb - flb * sb
        w[b, W_FY] += fbb * sb + flb * cb
        w[b, W_MZ] += (p.end_len[b] + xw[2]) * flb + tb
        _record_coupler(p, k, xw, xd, fx, fy, fba, fbb, rec_cpl, record)
    return True


@njit(inline="always", **JIT)
def _inertial_couplers(y, p, rec_cpl, record):
    """Pass 2 (inertial): knuckle forces from the coupler states; generalized active forces on the
    coupler coordinates into ``p.cq``; knuckle and coupler-body gravity forces onto the cars."""
    N = p.n_car
    w = p.work
    cp = p.cp
    g = p.gw
    kB = cp[CP_KB]
    cB = cp[CP_CB]
    kr = cp[CP_KR]
    cr = cp[CP_CR]
    a0 = cp[CP_A0]
    ms = cp[CP_MS]
    msh = cp[CP_MSH]
    rg = cp[CP_LG] / cp[CP_LS]
    grav = p.gravity
    xd = p.xd
    for k in range(p.n_cpl):
        base = 6 * N + 8 * k
        x = p.xw
        for i in range(4):
            x[i] = y[base + i]
            xd[i] = y[base + 4 + i]
        _load_pose(p, k)
        coupler_geometry(p.pz, x, cp, g)
        ddx, ddy = knuckle_rate(p.pz, p.vz, g, xd)
        fx, fy = knuckle_force(g, cp, ddx, ddy)
        a = k
        b = k + 1
        # gravity (superelevation) on the coupler bodies of each end: slider at B, shank at G
        ga = grav * w[a, W_TANPHI]
        gax = -ga * w[a, W_TY]
        gay = ga * w[a, W_TX]
        gb = grav * w[b, W_TANPHI]
        gbx = -gb * w[b, W_TY]
        gby = gb * w[b, W_TX]
        # end a: σ_a e1_a = D0; w_a = D1; λ_G = rg λ_a
        lgax = rg * g[G_LA]
        lgay = rg * g[G_LA + 1]
        fsum_x = -fx + (ms + msh) * gax
        fsum_y = -fy + (ms + msh) * gay
        qda = -(kB * x[0] + cB * xd[0]) + fsum_x * g[G_D + 0] + fsum_y * g[G_D + 1]
        qaa = (-(kr * (x[1] - a0) + cr * xd[1]) + (-fx) * g[G_D + 2] + (-fy) * g[G_D + 3]
               + msh * (gax * -lgay + gay * lgax))
        # end b: σ_b e1_b = −D2; w_b = −D3
        lgbx = rg * g[G_LB]
        lgby = rg * g[G_LB + 1]
        fsbx = fx + (ms + msh) * gbx
        fsby = fy + (ms + msh) * gby
        qdb = -(kB * x[2] + cB * xd[2]) - (fsbx * g[G_D + 4] + fsby * g[G_D + 5])
        qab = (-(kr * (x[3] - a0) + cr * xd[3]) - (fx * g[G_D + 6] + fy * g[G_D + 7])
               + msh * (gbx * -lgby + gby * lgbx))
        p.cq[k, 0] = qda
        p.cq[k, 1] = qaa
        p.cq[k, 2] = qdb
        p.cq[k, 3] = qab
        # forces on the car subsystems (moments about the car's centre of gravity)
        pz = p.pz   # positions in g are relative to car b (see _load_pose)
        _add_force(w, a, -fx, -fy, g[G_QA] - pz[0], g[G_QA + 1] - pz[1])
        _add_force(w, a, ms * gax, ms * gay, g[G_BA] - pz[0], g[G_BA + 1] - pz[1])
        _add_force(w, a, msh * gax, msh * gay, g[G_BA] + lgax - pz[0], g[G_BA + 1] + lgay - pz[1])
        _add_force(w, b, fx, fy, g[G_QB], g[G_QB + 1])
        _add_force(w, b, ms * gbx, ms * gby, g[G_BB], g[G_BB + 1])
        _add_force(w, b, msh * gbx, msh * gby, g[G_BB] + lgbx, g[G_BB + 1] + lgby)
        fba = kB * x[0] + cB * xd[0]
        fbb = kB * x[2] + cB * xd[2]
        _record_coupler(p, k, x, xd, fx, fy, fba, fbb, rec_cpl, record)


@njit(inline="always", **JIT)
def _cholesky_solve(A, b, n):
    """Solve A x = b in place (A: n×n row-major SPD in A[0:n*n], b[0:n] receives x); False if A is
    not positive definite."""
    for j in range(n):
        d = A[j * n + j]
        for kk in range(j):
            d -= A[j * n + kk] * A[j * n + kk]
        if not d > 0.0:
            return False
        d = math.sqrt(d)
        A[j * n + j] = d
        for i in range(j + 1, n):
            s = A[i * n + j]
            for kk in range(j):
                s -= A[i * n + kk] * A[j * n + kk]
            A[i * n + j] = s / d
    for i in range(n):
        s = b[i]
        for kk in range(i):
            s -= A[i * n + kk] * b[kk]
        b[i] = s / A[i * n + i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for kk in range(i + 1, n):
            s -= A[kk * n + i] * b[kk]
        b[i] = s / A[i * n + i]
    return True


@njit(inline="always", **JIT)
def _kane_body(km, kb, kv, nq, mb, ib, ax, ay, alpha0):
    """Add one body's generalized inertia (partial velocities kv[0], kv[1], partial angular
    velocities kv[2], length nq) to the mass matrix km and the right-hand side kb."""
    for i in range(nq):
        vix = kv[0, i]
        viy = kv[1, i]
        wi = kv[2, i]
        if vix == 0.0 and viy == 0.0 and wi == 0.0:
            continue
        kb[i] -= mb * (ax * vix + ay * viy) + ib * alpha0 * wi
        for jj in range(nq):
            km[i * nq + jj] += mb * (vix * kv[0, jj] + viy * kv[1, jj]) + ib * wi * kv[2, jj]


@njit(inline="always", **JIT)
def _kane_car(y, p, j, dydt):
    """Pass 3 (inertial): Kane's equations of car j with the coupler ends it carries; writes the
    accelerations of the car and of those coupler coordinates into dydt.  False if singular."""
    N = p.n_car
    w = p.work
    cp = p.cp
    km = p.km
    kb = p.kb
    kv = p.kv
    m = p.mass[j]
    I = p.yaw_inertia[j]
    k = w[j, W_K]
    kp = w[j, W_KP]
    yl = w[j, W_YL]
    yd = w[j, W_YD]
    v = w[j, W_V]
    tx = w[j, W_TX]
    ty = w[j, W_TY]
    c = w[j, W_C]
    sn = w[j, W_S]
    wz = w[j, W_W]
    has_front = j > 0
    has_rear = j < N - 1
    ne = (1 if has_front else 0) + (1 if has_rear else 0)
    nq = 3 + 2 * ne
    for i in range(nq * nq):
        km[i] = 0.0
    for i in range(nq):
        kb[i] = 0.0
    # car body
    q = 1.0 - k * yl
    vcx0 = q * tx
    vcy0 = q * ty
    vcx1 = -ty
    vcy1 = tx
    acx = (-kp * yl * v * v - 2.0 * k * yd * v) * tx - k * q * v * v * ty
    acy = (-kp * yl * v * v - 2.0 * k * yd * v) * ty + k * q * v * v * tx
    psidd0 = kp * v * v
    for i in range(nq):
        kv[0, i] = 0.0
        kv[1, i] = 0.0
        kv[2, i] = 0.0
    kv[0, 0] = vcx0
    kv[1, 0] = vcy0
    kv[0, 1] = vcx1
    kv[1, 1] = vcy1
    kv[2, 0] = k
    kv[2, 2] = 1.0
    _kane_body(km, kb, kv, nq, m, I, acx, acy, psidd0)
    # active forces on the car coordinates (everything applied to the car subsystem)
    fx = w[j, W_FX]
    fy = w[j, W_FY]
    mz = w[j, W_MZ]
    kb[0] += fx * vcx0 + fy * vcy0 + mz * k
    kb[1] += fx * vcx1 + fy * vcy1
    kb[2] += mz
    ms = cp[CP_MS]
    msh = cp[CP_MSH]
    ish = cp[CP_ISH]
    ls = cp[CP_LS]
    lg = cp[CP_LG]
    L = p.end_len[j]
    for e in range(2):
        if e == 0 and not has_front:
            continue
        if e == 1 and not has_rear:
            continue
        if e == 0:   # front end of car j = end b of coupler j−1
            base = 6 * N + 8 * (j - 1) + 2
            qf = p.cq[j - 1, 2]
            qa = p.cq[j - 1, 3]
            sig = 1.0
            iq = 3
        else:        # rear end of car j = end a of coupler j
            base = 6 * N + 8 * j
            qf = p.cq[j, 0]
            qa = p.cq[j, 1]
            sig = -1.0
            iq = 3 + 2 * (ne - 1)
        d = y[base]
        al = y[base + 1]
        dd = y[base + 4]
        ad = y[base + 5]
        rb = sig * (L + d)
        rbx = rb * c
        rby = rb * sn
        # ⊥ of ρ_B: (−ρ_y, ρ_x)
        pbx = -rby
        pby = rbx
        ca = math.cos(al)
        sa = math.sin(al)
        cps = c * ca - sn * sa
        sps = sn * ca + c * sa
        lgx = sig * lg * cps
        lgy = sig * lg * sps
        lgpx = -lgy
        lgpy = lgx
        # slider at B
        for i in range(nq):
            kv[0, i] = 0.0
            kv[1, i] = 0.0
            kv[2, i] = 0.0
        kv[0, 0] = vcx0 + k * pbx
        kv[1, 0] = vcy0 + k * pby
        kv[0, 1] = vcx1
        kv[1, 1] = vcy1
        kv[0, 2] = pbx
        kv[1, 2] = pby
        kv[0, iq] = sig * c
        kv[1, iq] = sig * sn
        abx = acx + psidd0 * pbx - wz * wz * rbx + 2.0 * sig * dd * wz * (-sn)
        aby = acy + psidd0 * pby - wz * wz * rby + 2.0 * sig * dd * wz * c
        _kane_body(km, kb, kv, nq, ms, 0.0, abx, aby, 0.0)
        # shank at G = B + λ_G
        kv[0, 0] += k * lgpx
        kv[1, 0] += k * lgpy
        kv[0, 2] += lgpx
        kv[1, 2] += lgpy
        kv[0, iq + 1] = lgpx
        kv[1, iq + 1] = lgpy
        kv[2, 0] = k
        kv[2, 2] = 1.0
        kv[2, iq + 1] = 1.0
        om = wz + ad
        agx = abx + psidd0 * lgpx - om * om * lgx
        agy = aby + psidd0 * lgpy - om * om * lgy
        _kane_body(km, kb, kv, nq, msh, ish, agx, agy, psidd0)
        kb[iq] += qf
        kb[iq + 1] += qa
    _ = ls
    if not _cholesky_solve(km, kb, nq):
        return False
    b = 6 * j
    dydt[b + 3] = kb[0]
    dydt[b + 4] = kb[1]
    dydt[b + 5] = kb[2]
    if has_front:
        base = 6 * N + 8 * (j - 1)
        dydt[base + 6] = kb[3]
        dydt[base + 7] = kb[4]
    if has_rear:
        base = 6 * N + 8 * j
        iq = 3 + 2 * (ne - 1)
        dydt[base + 4] = kb[iq]
        dydt[base + 5] = kb[iq + 1]
    return True


@njit(**JIT_NRT_FREE)
def planar_eval(t, y, p, dydt, rec_car, rec_cpl, record):
    """Evaluate dy/dt of the planar train into ``dydt`` (float64[n]); with ``record`` also write the
    per-car record ``rec_car[N_RC, N]`` and per-coupler record ``rec_cpl[N_RK, M]``.  Returns an
    off-track flag (1 if a car is beyond the defined track).  ``record`` is a run-time bool: the callers
    pass ``np.bool_``, not a literal, so that the right-hand side and the outputs share one compiled
    specialisation (two literal ones cost 45 s of a cold first run)."""
    N = p.n_car
    M = p.n_cpl
    w = p.work
    off = _cars_kinematics(t, y, p)
    if p.inertial:
        _inertial_couplers(y, p, rec_cpl, record)
    else:
        if not _noninertial_couplers(t, p, rec_cpl, record):
            for i in range(dydt.size):
                dydt[i] = np.nan
            p.last_eval[0] = np.nan
            return off
    # velocity-level derivatives of positions
    dydt[0] = y[3]
    for j in range(1, N):
        dydt[6 * j] = y[6 * (j - 1) + 3] - y[6 * j + 3]
    for j in range(N):
        b = 6 * j
        dydt[b + 1] = y[b + 4]
        dydt[b + 2] = y[b + 5]
    if p.inertial:
        for k in range(M):
            base = 6 * N + 8 * k
            for i in range(4):
                dydt[base + i] = y[base + 4 + i]
        for j in range(N):
            if not _kane_car(y, p, j, dydt):
                for i in range(dydt.size):
                    dydt[i] = np.nan
                p.last_eval[0] = np.nan
                return off
    else:
        for j in range(N):
            b = 6 * j
            m = p.mass[j]
            k = w[j, W_K]
            kp = w[j, W_KP]
            yl = w[j, W_YL]
            yd = w[j, W_YD]
            v = w[j, W_V]
            tx = w[j, W_TX]
            ty = w[j, W_TY]
            fx = w[j, W_FX]
            fy = w[j, W_FY]
            ft = fx * tx + fy * ty
            fn = -fx * ty + fy * tx
            q = 1.0 - k * yl
            sdd = (ft / m + kp * yl * v * v + 2.0 * k * yd * v) / q
            dydt[b + 3] = sdd
            dydt[b + 4] = fn / m - k * q * v * v
            dydt[b + 5] = w[j, W_MZ] / p.yaw_inertia[j] - k * sdd - kp * v * v
    if record:
        g = p.gravity
        for j in range(N):
            b = 6 * j
            k = w[j, W_K]
            v = w[j, W_V]
            rec_car[RC_S, j] = w[j, W_SPOS]
            rec_car[RC_Y, j] = y[b + 1]
            rec_car[RC_PSI, j] = y[b + 2]
            rec_car[RC_ACC, j] = dydt[b + 3]
            rec_car[RC_TRAC, j] = w[j, W_FTR]
            rec_car[RC_RES, j] = w[j, W_FRES]
            alat = dydt[b + 4] + k * (1.0 - k * y[b + 1]) * v * v
            rec_car[RC_ALAT, j] = alat
            tp = w[j, W_TANPHI]
            cphi = 1.0 / math.sqrt(1.0 + tp * tp)
            au = alat * cphi - g * tp * cphi
            rec_car[RC_LTR, j] = 2.0 * p.cog_h[j] * au / (g * p.rail_spacing)
    # remember which state the per-coupler results belong to (observe reuses them)
    p.last_eval[0] = t
    p.last_eval[1] = _checksum(y)
    return off


@njit(inline="always", **JIT)
def _checksum(y):
    s = 0.0
    for i in range(y.size):
        s += y[i] * (1.0 + 1e-3 * i)
    return s


@njit(**JIT_NRT_FREE)
def planar_rhs(t, y, p, dydt):
    """Right-hand side dy/dt = f(t, y) of the planar train (integrator contract).

    ``y``, ``dydt``: float64[n] in the layout of :mod:`hpcrail.models.planar_train.build`; SI
    units.  Source: Massa et al. 2012 eqs 24-45.  NaN derivatives signal a failed
    noninertial Newton iteration.
    """
    planar_eval(t, y, p, dydt, p.no_rec_car, p.no_rec_cpl, np.bool_(False))


@njit(**JIT_NRT_FREE)
def planar_observe(t, y, p, acc):
    """Accumulate over every accepted step (layout of :mod:`hpcrail.models.couplers.envelope`): speed
    extremes, per-coupler extreme force and deflection (+ draft), times of the extreme forces, off-track
    flag, and after the envelopes the largest |shank angle| per coupler end (2 blocks of M)."""
    N = p.n_car
    M = p.n_cpl
    if not (p.last_eval[0] == t and p.last_eval[1] == _checksum(y)):
        off = planar_eval(t, y, p, p.dscratch, p.no_rec_car, p.no_rec_cpl, np.bool_(False))
    else:
        off = 0
        for j in range(N):
            s = p.work[j, W_SPOS]
            if s + p.bogie_b[j] > p.trk_end or s - p.bogie_b[j] < p.trk_s0:
                off = 1
    if off:
        acc[ACC_OFFROUTE] = 1.0
    vmax = -np.inf
    vmin = np.inf
    for j in range(N):
        v = y[6 * j + 3]
        if v > vmax:
            vmax = v
        if v < vmin:
            vmin = v
    fmax = -np.inf
    fmin = np.inf
    h = ACC_HEAD + N_ENV * M   # shank-angle blocks after the coupler envelopes
    co = p.cpl_out
    for k in range(M):
        f = co[k, CO_F]
        envelope_update(acc, M, k, f, co[k, CO_E], t)
        if f > fmax:
            fmax = f
        if f < fmin:
            fmin = f
        aa = abs(co[k, CO_AA])
        ab = abs(co[k, CO_AB])
        if aa > acc[h + k]:
            acc[h + k] = aa
        if ab > acc[h + M + k]:
            acc[h + M + k] = ab
    envelope_fold(t, acc, vmax, vmin, fmax, fmin)


@njit(**JIT)
def planar_outputs(t, Y, p, rec_car, rec_cpl):
    """Per-sample records from sampled states: ``t`` float64[k], ``Y`` float64[k, n]; writes
    ``rec_car[k, N_RC, N]`` and ``rec_cpl[k, N_RK, M]`` (NaN rows of Y are skipped).  Returns the
    number of samples whose evaluation failed."""
    n = Y.shape[1]
    dydt = np.empty(n)
    bad = 0
    for k in range(t.size):
        if not math.isfinite(Y[k, 0]):
            continue
        planar_eval(t[k], Y[k], p, dydt, rec_car[k], rec_cpl[k], np.bool_(True))
        if not math.isfinite(dydt[0]):
            bad += 1
    return bad


_ = (CP_LS, G_PHIA, G_PHIB, NS_K_FAIL)
