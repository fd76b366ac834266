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
                                     s1, s2, 400)
    for i in range(i0 + 1, n):
        yb[i], pb[i], res[i] = _point(x, kappa, E[i], yb[i - 1], pb[i - 1], e, r0, lam, dr_y, dr, tg, sigma, mu, Q0,
                                      f11, f22, kf, yaw, s1, s2, 100)
    for i in range(i0 - 1, -1, -1):
        yb[i], pb[i], res[i] = _point(x, kappa, E[i], yb[i + 1], pb[i + 1], e, r0, lam, dr_y, dr, tg, sigma, mu, Q0,
                                      f11, f22, kf, yaw, s1, s2, 100)


__all__ = ["bogie_residual", "solve_grid", "FLANGE_WIDTH"]
