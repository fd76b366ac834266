"""Numba kernel of the steady-state bogie curving of :mod:`hpcrail.models.safety.quasi_static`: the two equilibrium
residuals of a rigid bogie and their solution along a grid of external lateral forces by continuation (damped
Newton from the neighbouring grid point's solution).  The physics and its sources are in the docstring of
:func:`hpcrail.models.safety.quasi_static.curving_table`; this is its fast path (the numpy residual there is the
same function, kept for the wheel forces and the tests)."""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT

#: smoothing width of the flange penalty [m]
FLANGE_WIDTH = 2e-4


@njit(inline="always", **JIT)
def _softplus(z):
    if z > 30.0:
        return z
    if z < -30.0:
        return math.exp(z)
    return math.log1p(math.exp(z))


@njit(inline="always", **JIT)
def _delta_r(y, lam, dr_y, dr):
    if dr_y.size == 0:
        return 2.0 * lam * y
    n = dr_y.size
    if y <= dr_y[0]:
        return dr[0]
    if y >= dr_y[n - 1]:
        return dr[n - 1]
    i = np.searchsorted(dr_y, y) - 1
    w = (y - dr_y[i]) / (dr_y[i + 1] - dr_y[i])
    return dr[i] + w * (dr[i + 1] - dr[i])


@njit(inline="always", **JIT)
def tan_gamma(y, sigma, dr_y, tg):
    """tan of the left wheel's contact angle at the wheelset shift ``y`` (clamped to the flange clearance; the
    right wheel's is ``tan_gamma(-y)``); 0 without a table."""
    if tg.size == 0:
        return 0.0
    yc = min(max(y, -sigma), sigma)
    return _delta_r(yc, 0.0, dr_y, tg)


@njit(**JIT)
def bogie_residual(x, kappa, E, yb, pb, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw):
    """Lateral [N] and yaw [N m] residuals of a rigid bogie (axles at ``x`` [m], a left curve κ ≥ 0) under the
    external lateral force ``E`` [N] at shift ``yb`` [m] and yaw ``pb`` [rad] (``tg``: tan of the left wheel's
    contact angle on the grid ``dr_y``, or empty; ``yaw`` = (offset [rad], stiffness [N m/rad], friction [N m]) of
    the car body's resistance to the bogie's rotation relative to it: the body axis lies at −offset to the
    bogie's track tangent)."""
    lim = mu * Q0
    w = FLANGE_WIDTH
    r1 = E
    rel = pb + yaw[0]
    r2 = -yaw[1] * rel - yaw[2] * math.tanh(rel / 1e-4)
    for i in range(x.size):
        xi = x[i]
        y = yb + xi * pb - 0.5 * kappa * xi * xi
        psi = pb - kappa * xi
        grav = Q0 * (tan_gamma(-y, sigma, dr_y, tg) - tan_gamma(y, sigma, dr_y, tg))
        fx = f11 * (e * kappa + _delta_r(y, lam, dr_y, dr) / (2.0 * r0))
        fy = f22 * psi
        fl = math.sqrt(fx * fx + fy * fy)
        eps = 0.25 * math.pi * fl / lim
        sat = 1.0
        if eps > 1e-12:
            sat = (2.0 / math.pi) * (eps / (1.0 + eps * eps) + math.atan(eps)) / (2.0 * eps)
        fx *= sat
        fy *= sat
        nl = -kf * w * _softplus((y - sigma) / w)
        nr = kf * w * _softplus((-sigma - y) / w)
        lat = 2.0 * fy + nl + nr + grav
        r1 += lat
        r2 += xi * lat - e * 2.0 * fx
    return r1, r2


@njit(**JIT)
def _newton(x, kappa, E, yb, pb, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw, s1, s2, max_iter):
    """Damped Newton from (yb, pb); returns (yb, pb, scaled residual norm)."""
    r1, r2 = bogie_residual(x, kappa, E, yb, pb, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw)
    res = math.hypot(r1 / s1, r2 / s2)
    hy = 1e-8
    hp = 1e-8
    for _ in range(max_iter):
        if res < 1e-12:
            break
        a1, a2 = bogie_residual(x, kappa, E, yb + hy, pb, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw)
        b1, b2 = bogie_residual(x, kappa, E, yb, pb + hp, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw)
        j11 = (a1 - r1) / hy
        j21 = (a2 - r2) / hy
        j12 = (b1 - r1) / hp
        j22 = (b2 - r2) / hp
        det = j11 * j22 - j12 * j21
        if det == 0.0 or not math.isfinite(det):
            break
        dy = -(j22 * r1 - j12 * r2) / det
        dp = -(-j21 * r1 + j11 * r2) / det
        sc = 1.0
        if abs(dy) > 1e-3:
            sc = min(sc, 1e-3 / abs(dy))
        if abs(dp) > 5e-3:
            sc = min(sc, 5e-3 / abs(dp))
        t = sc
        moved = False
        for _ls in range(40):
            ny = yb + t * dy
            npb = pb + t * dp
            q1, q2 = bogie_residual(x, kappa, E, ny, npb, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw)
            nres = math.hypot(q1 / s1, q2 / s2)
            if nres < res:
                yb, pb, r1, r2, res = ny, npb, q1, q2, nres
                moved = True
                break
            t *= 0.5
        if not moved:
            break
    return yb, pb, res


@njit(**JIT)
def _bisect(x, kappa, E, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw, span, iterations):
    """Nested bisection: the yaw on the yaw equilibrium (its moment falls as the yaw grows), for each yaw the
    shift on the lateral equilibrium (the flange forces fall as the shift grows) — robust where the bogie leans
    on a flange, where Newton's Jacobian is singular on the plateau of saturated creep forces."""
    plo = -0.1
    phi = 0.1
    ym = 0.0
    for _ in range(iterations):
        pm = 0.5 * (plo + phi)
        ylo = -span
        yhi = span
        for _i in range(iterations):
            ym = 0.5 * (ylo + yhi)
            r1, _r2 = bogie_residual(x, kappa, E, ym, pm, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw)
            if r1 > 0.0:
                ylo = ym
            else:
                yhi = ym
        _r1, r2 = bogie_residual(x, kappa, E, ym, pm, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw)
        if r2 > 0.0:
            plo = pm
        else:
            phi = pm
    return ym, 0.5 * (plo + phi)


@njit(**JIT)
def _point(x, kappa, E, y0, p0, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw, s1, s2, max_iter):
    """One grid point: Newton from the neighbour's solution, else bisection polished by Newton."""
    yb, pb, res = _newton(x, kappa, E, y0, p0, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw, s1, s2, max_iter)
    if res < 1e-9:
        return yb, pb, res
    span = sigma + 0.01 + 1.5 * abs(E) / kf
    y1, p1 = _bisect(x, kappa, E, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw, span, 56)
    y1, p1, res1 = _newton(x, kappa, E, y1, p1, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw, s1, s2, max_iter)
    if res1 < res:
        return y1, p1, res1
    return yb, pb, res


@njit(**JIT)
def solve_grid(x, kappa, E, y0, p0, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw, yb, pb, res):
    """Solve the bogie's equilibrium at every external force of the increasing grid ``E`` (float64[n]) by
    continuation from the grid point nearest zero (started at ``y0``, ``p0``), writing the shifts ``yb``, yaws
    ``pb`` and scaled residual norms ``res`` (float64[n])."""
    n = E.size
    s1 = 2.0 * x.size * mu * Q0
    s2 = s1 * max(0.5 * (x[0] - x[x.size - 1]), e)
    i0 = 0
    for i in range(n):
        if abs(E[i]) < abs(E[i0]):
            i0 = i
    yb[i0], pb[i0], res[i0] = _point(x, kappa, E[i0], y0, p0, e, r0, lam, dr_y, dr, tg, sigma, mu, Q0, f11, f22, kf, yaw,
                                     s1, s2, np.int64(400))
    for i in range(i0 + 1, n):
        yb[i], pb[i], res[i] = _point(x, kappa, E[i], yb[i - 1], pb[i - 1], e, r0, lam, dr_y, dr, tg, sigma, mu, Q0,
                                      f11, f22, kf, yaw, s1, s2, np.int64(100))
    for i in range(i0 - 1, -1, -1):
        yb[i], pb[i], res[i] = _point(x, kappa, E[i], yb[i + 1], pb[i + 1], e, r0, lam, dr_y, dr, tg, sigma, mu, Q0,
                                      f11, f22, kf, yaw, s1, s2, np.int64(100))


__all__ = ["bogie_residual", "solve_grid", "FLANGE_WIDTH"]


# ------------------------------------------------------------------------------------------------
# the consist at every sample (rigid car bodies): the fast path of quasi_static.quasi_static
# ------------------------------------------------------------------------------------------------
@njit(inline="always", **JIT)
def _section(sec_s, x, i):
    """Section of arc length ``x`` (the end sections extended), walking from the guess ``i``."""
    n = sec_s.size - 1
    while i > 0 and x < sec_s[i]:
        i -= 1
    while i < n - 1 and x >= sec_s[i + 1]:
        i += 1
    return i


@njit(inline="always", **JIT)
def _lateral(sec_s, sec_k, sec_h0, sec_w0, x, i):
    u = x - sec_s[i]
    return sec_w0[i] + sec_h0[i] * u + 0.5 * sec_k[i] * u * u


@njit(inline="always", **JIT)
def _lookup(tabY, tabS, gridE, g, b, ki, es, umax, E, Yout, Sout, nax):
    """Wheel forces of bogie ``b`` of gear ``g`` on curvature index ``ki`` at the external force ``E``: linear
    interpolation in E between the nodes ``gridE[g]`` = E_s sinh(u) of the table (u uniform on ±umax; the node
    found from asinh, exactly as :func:`numpy.interp` on those nodes), clamped at the ends."""
    P = tabS.shape[3]
    if E == 0.0:
        i = (P - 1) // 2
    else:
        du = 2.0 * umax[g] / (P - 1)
        i = int((math.asinh(E / es[g]) + umax[g]) / du)
    i = min(max(i, 0), P - 2)
    # the grid is symmetric: its middle node is 0; move to the bracketing pair (rounding of asinh)
    while i > 0 and E < gridE[g, i]:
        i -= 1
    while i < P - 2 and E > gridE[g, i + 1]:
        i += 1
    e0 = gridE[g, i]
    e1 = gridE[g, i + 1]
    w = (E - e0) / (e1 - e0)
    if w < 0.0:
        w = 0.0
    elif w > 1.0:
        w = 1.0
    for a in range(nax):
        Sout[a] = tabS[g, b, ki, i, a] + w * (tabS[g, b, ki, i + 1, a] - tabS[g, b, ki, i, a])
        for sd in range(2):
            Yout[a, sd] = tabY[g, b, ki, i, a, sd] + w * (tabY[g, b, ki, i + 1, a, sd] - tabY[g, b, ki, i, a, sd])


@njit(**JIT)
def qs_series(sec_s, sec_k, sec_sc, sec_h0, sec_w0, kidx, hb, c, m, hc, hg, gear, nax, r0, Q0, sylim, e, tabY, tabS,
              gridE, es, umax, lim_yq, lim_ts, lim_unl, s, v, ax, F, ok, yq, ts, unl, syr, sy, ylat, bogie, yawf, yawr,
              worst, jack, string, kc_out, aud_out):
    """The quasi-static quantities of a consist of rigid car bodies at every sample (the physics of
    :func:`hpcrail.models.safety.quasi_static.quasi_static`, which documents the arguments' meaning; this writes
    its float64[T, N] outputs ``yq`` … ``aud_out`` and int8 ``jack``/``string`` in place).  Sections: boundaries
    ``sec_s``, curvature, signed sin(cant), heading and small-angle lateral at their starts, index of their
    curvature among the tables' (``kidx``); tables ``tabY``[gear, bogie, curvature, point, axle, side] and
    ``tabS``[gear, bogie, curvature, point, axle] on the grids ``gridE``[gear] = E_s sinh(u), |u| ≤ ``umax``."""
    T, N = s.shape
    G = 9.81
    phi = np.empty(N)
    w = np.empty(N)
    k1 = np.empty(N, np.int64)
    k2 = np.empty(N, np.int64)
    yf = np.zeros(N)
    yr = np.zeros(N)
    sf = np.zeros(N)
    sr = np.zeros(N)
    slf = np.zeros(N)
    slr = np.zeros(N)
    amax = 1
    for j in range(N):
        amax = max(amax, nax[j])
    Yw = np.empty((amax, 2))
    Sw = np.empty(amax)
    straight = np.zeros(N, np.bool_)
    # tangent track, no external force: every gear's bogie forces at E = 0 on κ = 0 (the largest wheel Y, the
    # largest per-side sum, the largest |ΣY|) for the vehicles that need nothing else (the fast path)
    ng = tabY.shape[0]
    k0 = -1
    for i in range(sec_k.size):
        if sec_k[i] == 0.0:
            k0 = kidx[i]
            break
    y0max = np.zeros((ng, 2))
    y0side = np.zeros((ng, 2))
    s0max = np.zeros((ng, 2))
    if k0 >= 0:
        mid = (tabS.shape[3] - 1) // 2
        for g in range(ng):
            for b in range(2):
                yl = 0.0
                yr_ = 0.0
                for a in range(tabY.shape[4]):
                    y0max[g, b] = max(y0max[g, b], max(tabY[g, b, k0, mid, a, 0], tabY[g, b, k0, mid, a, 1]))
                    yl += tabY[g, b, k0, mid, a, 0]
                    yr_ += tabY[g, b, k0, mid, a, 1]
                    s0max[g, b] = max(s0max[g, b], abs(tabS[g, b, k0, mid, a]))
                y0side[g, b] = max(yl, yr_)
    i1 = 0
    i2 = 0
    for t in range(T):
        if not ok[t]:
            for j in range(N):
                yq[t, j] = ts[t, j] = unl[t, j] = syr[t, j] = sy[t, j] = np.nan
                ylat[t, j] = bogie[t, j] = yawf[t, j] = yawr[t, j] = worst[t, j] = np.nan
                kc_out[t, j] = aud_out[t, j] = np.nan
                jack[t, j] = 0
                string[t, j] = 0
            continue
        # axes of the car bodies: chords of their bogie centres (small-angle lateral coordinate)
        for j in range(N):
            x1 = s[t, j] + hb[j]
            x2 = s[t, j] - hb[j]
            i1 = _section(sec_s, x1, i1)
            i2 = _section(sec_s, x2, i2)
            w1 = _lateral(sec_s, sec_k, sec_h0, sec_w0, x1, i1)
            w2 = _lateral(sec_s, sec_k, sec_h0, sec_w0, x2, i2)
            phi[j] = (w1 - w2) / (2.0 * hb[j])
            w[j] = 0.5 * (w1 + w2)
            k1[j] = i1
            k2[j] = i2
        yf[0] = 0.0
        yr[N - 1] = 0.0
        sf[0] = 0.0
        sr[N - 1] = 0.0
        for j in range(N):
            straight[j] = sec_k[k1[j]] == 0.0 and sec_k[k2[j]] == 0.0
        slf[0] = 0.0
        slr[N - 1] = 0.0
        yawf[t, 0] = np.nan
        yawr[t, N - 1] = np.nan
        for k in range(N - 1):
            dx = (s[t, k + 1] + c[k + 1]) - (s[t, k] - c[k])
            if sec_k[k1[k]] == 0.0 and sec_k[k2[k]] == 0.0 and sec_k[k1[k + 1]] == 0.0 and sec_k[k2[k + 1]] == 0.0 \
                    and k1[k] - k2[k + 1] <= 1:
                # both cars on tangent track (the same or adjacent tangents): the link is straight
                yr[k] = yf[k + 1] = sr[k] = sf[k + 1] = 0.0
                lr = 0.0
                yawr[t, k] = 0.0
                yawf[t, k + 1] = 0.0
                dh = (hc[k + 1] - hc[k]) / (-dx)
                slr[k] = dh
                slf[k + 1] = -dh
                continue
            straight[k] = False
            straight[k + 1] = False
            dy = (w[k + 1] + c[k + 1] * phi[k + 1]) - (w[k] - c[k] * phi[k])
            lr = dy - phi[k] * dx                       # the link's offsets from the two cars' axes
            lf = -(dy - phi[k + 1] * dx)
            ll = math.sqrt(dx * dx + lr * lr)
            yr[k] = math.atan2(lr, -dx)
            yf[k + 1] = math.atan2(lf, -dx)
            sr[k] = lr / math.sqrt(lr * lr + dx * dx)   # sin of the yaw angles
            sf[k + 1] = lf / math.sqrt(lf * lf + dx * dx)
            yawr[t, k] = yr[k]
            yawf[t, k + 1] = yf[k + 1]
            dh = (hc[k + 1] - hc[k]) / ll
            slr[k] = dh
            slf[k + 1] = -dh
        ic = 0
        for j in range(N):
            Ff = F[t, j - 1] if j > 0 else 0.0
            Fr = F[t, j] if j < N - 1 else 0.0
            ic = _section(sec_s, s[t, j], ic)
            kc = sec_k[ic]
            a_ud = v[t, j] * v[t, j] * kc - G * sec_sc[ic]
            mau = m[j] * a_ud
            Yf = Ff * sf[j]
            Yr = Fr * sr[j]
            bj = 2.0 * hb[j]
            C1 = 0.5 * (Yf + Yr) + c[j] * (Yf - Yr) / bj
            C2 = 0.5 * (Yf + Yr) - c[j] * (Yf - Yr) / bj
            T1 = 0.5 * mau - C1
            T2 = 0.5 * mau - C2
            Vf = Ff * slf[j]
            Vr = Fr * slr[j]
            na = nax[j]
            pitch = (hc[j] * (Ff - Fr) - hg[j] * m[j] * ax[t, j]) / bj
            g = gear[j]
            q0 = Q0[j]
            inert = -0.5 * mau
            if straight[j] and kc == 0.0 and sec_sc[ic] == 0.0 and k0 >= 0:
                # tangent track, straight couplers: the bogies carry no lateral load; only the wheel loads change
                best_yq = -np.inf
                best_ts = -np.inf
                best_unl = -np.inf
                best_sy = max(s0max[g, 0], s0max[g, 1])
                for b in range(2):
                    if b == 0:
                        dP = (-(Vf * (0.5 + c[j] / bj) + Vr * (0.5 - c[j] / bj)) + pitch) / (2.0 * na)
                    else:
                        dP = (-(Vf * (0.5 - c[j] / bj) + Vr * (0.5 + c[j] / bj)) - pitch) / (2.0 * na)
                    q = max(q0 + dP, 1e-2 * q0)
                    best_yq = max(best_yq, y0max[g, b] / q)
                    best_ts = max(best_ts, y0side[g, b] / max(na * (q0 + dP), 1e-2 * q0))
                    best_unl = max(best_unl, -dP / q0)
                yq[t, j] = best_yq
                ts[t, j] = best_ts
                unl[t, j] = best_unl
                sy[t, j] = best_sy
                syr[t, j] = best_sy / sylim[j]
                worst[t, j] = max(max(best_yq / lim_yq, best_ts / lim_ts), max(best_unl / lim_unl,
                                                                              best_sy / sylim[j]))
                ylat[t, j] = 0.0
                bogie[t, j] = 0.0
                kc_out[t, j] = 0.0
                aud_out[t, j] = 0.0
                jack[t, j] = 0
                string[t, j] = 0
                continue
            best_yq = -np.inf
            best_ts = -np.inf
            best_unl = -np.inf
            best_sy = 0.0
            for b in range(2):
                if b == 0:
                    dP = (-(Vf * (0.5 + c[j] / bj) + Vr * (0.5 - c[j] / bj)) + pitch) / (2.0 * na)
                    Cb = C1
                    Tb = T1
                    ki = kidx[k1[j]]
                else:
                    dP = (-(Vf * (0.5 - c[j] / bj) + Vr * (0.5 + c[j] / bj)) - pitch) / (2.0 * na)
                    Cb = C2
                    Tb = T2
                    ki = kidx[k2[j]]
                Eb = -Tb if abs(Tb) > 1e-6 else 0.0
                _lookup(tabY, tabS, gridE, g, b, ki, es, umax, Eb, Yw, Sw, na)
                above = (inert * (hg[j] - r0[j]) + Cb * (hc[j] - r0[j])) / (2.0 * e * na)
                syL = 0.0
                syR = 0.0
                sqL = 0.0
                sqR = 0.0
                for a in range(na):
                    roll = above + Sw[a] * r0[j] / (2.0 * e)
                    qL = q0 + dP + roll
                    qR = q0 + dP - roll
                    r = Yw[a, 0] / max(qL, 1e-2 * q0)
                    if r > best_yq:
                        best_yq = r
                    r = Yw[a, 1] / max(qR, 1e-2 * q0)
                    if r > best_yq:
                        best_yq = r
                    u1 = (q0 - qL) / q0
                    u2 = (q0 - qR) / q0
                    if u1 > best_unl:
                        best_unl = u1
                    if u2 > best_unl:
                        best_unl = u2
                    if abs(Sw[a]) > best_sy:
                        best_sy = abs(Sw[a])
                    syL += Yw[a, 0]
                    syR += Yw[a, 1]
                    sqL += qL
                    sqR += qR
                r = syL / max(sqL, 1e-2 * q0)
                if r > best_ts:
                    best_ts = r
                r = syR / max(sqR, 1e-2 * q0)
                if r > best_ts:
                    best_ts = r
            yq[t, j] = best_yq
            ts[t, j] = best_ts
            unl[t, j] = best_unl
            sy[t, j] = best_sy
            syr[t, j] = best_sy / sylim[j]
            wr = max(max(best_yq / lim_yq, best_ts / lim_ts), max(best_unl / lim_unl, best_sy / sylim[j]))
            worst[t, j] = wr
            yl = Yf + Yr
            ylat[t, j] = yl
            bogie[t, j] = max(abs(T1), abs(T2))
            kc_out[t, j] = kc
            aud_out[t, j] = a_ud
            inward = yl * (1.0 if kc > 0 else (-1.0 if kc < 0 else 0.0))
            hit = wr >= 1.0 and abs(yl) > abs(mau)
            Fm = 0.5 * (Ff + Fr)
            jack[t, j] = 1 if (hit and Fm < 0 and inward < 0) else 0
            string[t, j] = 1 if (hit and Fm > 0 and inward > 0) else 0
