"""Planar wheel/rail contact geometry of a wheelset (paper 004 eqs 12 and 15), off-line solver.

Frames and signs (the same everywhere in ``hpcrail.models.wheelrail``): the wheelset track frame has X
forward, **Y to the left**, Z up.  ``y`` is the lateral shift of the wheelset centre (positive = to the
left), ``z`` the height of the wheelset centre above the rail profile origins, ``φ`` the roll angle
(positive = left side up, rotation about +X).  The left rail profile origin sits at Y = +L_r*, the right
one at -L_r*, with 2 L_r* = 2 L_r + ξ_g (gauge variation ξ_g, positive = wider).  Wheel profile origins
sit at ±L_w in the wheelset.

Each side is solved in *left form*: the right side is the mirror image (Y → -Y), so with σ = +1 (left)
and σ = -1 (right), y_σ = σ y and φ_σ = σ φ, and in the side's own frame

    wheel point   W(u) = (y_σ, z) + R(φ_σ)·(L_w + u, -h(u)),   h(u) = r0 + F(u)
    rail point    P(v) = (L_r*, 0) + R(β)·(v, g(v))

with the field-side-positive profile coordinates u (wheel) and v (rail).  The paper's surface parameters
are s^w = σ u and s^r = σ v (its eq 10 places the right wheel at -L_w + s^rw).  Eq 12 per side:
W(u) - P(v) = 0 (2 equations) and t_w · n_r = 0, unknowns (z, φ, u_l, v_l, u_r, v_r) for given (y, ξ_g);
the roll rotation is exact (cos/sin), not linearised as in the paper's eq 9.

Contact angle γ: angle of the contact normal (pointing from the rail into the wheel) from the track Z
axis, **positive when the normal leans towards the track centre** (both wheels positive on a coned tread,
large at the flange).  In the wheelset frame γ_w = atan(-h'(u)); in the track frame γ = γ_w + φ_σ
= atan(g'(v)) + β.

The contact search is global: the vertical gap between the rolled wheel and the rail is scanned on a fine
grid of both profiles (merged, so a knife-edge rail is found as well as a wide one), a bisection on φ makes
both sides touch, and Newton on eq 12 refines the contact points to machine precision.  The second basin
of the gap (the other local minimum, separated by a ridge) gives the two-point-contact candidate whose
maximum relative indentation (eq 15) is refined by Newton as well.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.models.wheelrail.interp import pp_eval
from hpcrail.models.wheelrail.profiles import Placement, Profile


class GeometryParams(NamedTuple):
    """Profiles and placement for the numba contact solver (SI units).

    ``wx, wc``: wheel radius-offset PPoly (breaks float64[mw+1], coefficients float64[6, mw]);
    ``rx, rc``: rail height PPoly; ``wu, wF, wF1``: wheel scan samples (lateral, offset, slope) float64[nw];
    ``rv, rg, rg1``: rail scan samples (lateral, height, slope) float64[nr]; ``L_w, L_r, r0, beta``
    [m, m, m, rad].  One set per side (left-wheel form); a symmetric pair uses the same set twice.
    """

    wx: np.ndarray
    wc: np.ndarray
    rx: np.ndarray
    rc: np.ndarray
    wu: np.ndarray
    wF: np.ndarray
    wF1: np.ndarray
    rv: np.ndarray
    rg: np.ndarray
    rg1: np.ndarray
    L_w: float
    L_r: float
    r0: float
    beta: float


#: most samples of one profile's global gap scan (a 300 mm profile at 20 µm has 15 001)
MAX_SCAN_SAMPLES = 100_000


def geometry_params(wheel: Profile, rail: Profile, placement: Placement, scan_step: float = 2e-5) -> GeometryParams:
    """Pack profiles and placement of one side; ``scan_step`` [m] is the sampling of the global gap scan.
    Raises ValueError when a profile would need more than :data:`MAX_SCAN_SAMPLES` samples."""
    nw = int(math.ceil((wheel.u_max - wheel.u_min) / scan_step)) + 1
    nr = int(math.ceil((rail.u_max - rail.u_min) / scan_step)) + 1
    if not (2 <= nw <= MAX_SCAN_SAMPLES and 2 <= nr <= MAX_SCAN_SAMPLES):
        raise ValueError(f"profiles {wheel.u_max - wheel.u_min:.4g} m and {rail.u_max - rail.u_min:.4g} m wide need "
                         f"{nw} and {nr} scan samples at {scan_step:g} m; at most {MAX_SCAN_SAMPLES}")
    wu = np.linspace(wheel.u_min, wheel.u_max, nw)
    rv = np.linspace(rail.u_min, rail.u_max, nr)
    return GeometryParams(
        np.ascontiguousarray(wheel.breaks), np.ascontiguousarray(wheel.coefs),
        np.ascontiguousarray(rail.breaks), np.ascontiguousarray(rail.coefs),
        wu, np.ascontiguousarray(wheel(wu)), np.ascontiguousarray(wheel(wu, 1)), rv, np.ascontiguousarray(rail(rv)),
        np.ascontiguousarray(rail(rv, 1)),
        float(placement.L_w), float(placement.L_r), float(placement.r0), float(placement.cant))


# ----------------------------------------------------------------------------------------- wheel trace

@njit(inline="always", **JIT)
def wheel_point(L_w, r0, u, F, F1, F2, ps, qs):
    """Point of a wheel (left form, wheelset centre at the origin) that can touch a prismatic rail, at profile
    coordinate ``u`` for roll ``ps`` and yaw ``qs`` [rad]: (Y, Z, X, tY, tZ), track-frame lateral, vertical and
    longitudinal position [m] and the tangent (dY/du, dZ/du) of the projected curve.

    Without yaw it is the profile in the wheel's vertical plane.  With yaw the point leaves that plane: on the
    circle of radius h = r0 + F(u) it sits where the surface normal n ∝ e_r - F'(u) e_a is perpendicular to the
    rail's direction X (the "contact locus" or trace line; Vollebregt 2022): with e_a = R_z(ψ)R_x(φ)e_y the axle and θ
    the angle from the lowest point (forward positive), -sin ψ sin φ cos θ + cos ψ sin θ + F' sin ψ cos φ = 0.
    The rail being prismatic, contact of the wheel surface and the rail reduces exactly to planar contact of the
    trace line projected on the track's YZ plane and the rail profile (their normals coincide)."""
    c = math.cos(ps)
    s = math.sin(ps)
    h = r0 + F
    a = L_w + u
    if qs == 0.0:
        return c * a + s * h, s * a - c * h, 0.0, c + s * F1, s - c * F1
    cq = math.cos(qs)
    sq = math.sin(qs)
    A = -sq * s
    B = cq
    Cc = -F1 * sq * c
    Rn = math.sqrt(A * A + B * B)
    ratio = Cc / Rn
    if ratio > 1.0:
        ratio = 1.0
    elif ratio < -1.0:
        ratio = -1.0
    th = math.asin(ratio) - math.atan2(A, B)
    ct = math.cos(th)
    st = math.sin(th)
    Y = a * cq * c + h * (ct * cq * s + st * sq)
    Z = a * s - h * ct * c
    X = -a * sq * c + h * (-ct * sq * s + st * cq)
    Yu = cq * c + F1 * (ct * cq * s + st * sq)
    Yth = h * (-st * cq * s + ct * sq)
    Zu = s - F1 * ct * c
    Zth = h * st * c
    Gth = sq * s * st + cq * ct
    thu = -(F2 * sq * c) / Gth
    return Y, Z, X, Yu + Yth * thu, Zu + Zth * thu


# ----------------------------------------------------------------------------------------- scans

@njit(**JIT)
def side_gap_curve(P, ys, ps, Lrs, ulo, uhi, qs=0.0):
    """Vertical gap between the wheel (centre at (ys, 0), roll ps, yaw qs, left form) and the rail at
    L_r* = Lrs, on the merged scan samples of both profiles whose wheel coordinate lies in [ulo, uhi].

    Returns (Y, G, U, V): track-frame lateral position, gap [m] (wheel above rail > 0), and the wheel and
    rail coordinates of each sample, sorted by Y.  Samples without the other body are dropped.
    """
    cb = math.cos(P.beta)
    sb = math.sin(P.beta)
    nw = P.wu.shape[0]
    nr = P.rv.shape[0]
    Yw = np.empty(nw)
    Zw = np.empty(nw)
    for i in range(nw):
        Y_, Z_, X_, tY_, tZ_ = wheel_point(P.L_w, P.r0, P.wu[i], P.wF[i], P.wF1[i], 0.0, ps, qs)
        Yw[i] = ys + Y_
        Zw[i] = Z_
    Yr = np.empty(nr)
    Zr = np.empty(nr)
    for j in range(nr):
        Yr[j] = Lrs + cb * P.rv[j] - sb * P.rg[j]
        Zr[j] = sb * P.rv[j] + cb * P.rg[j]
    n = nw + nr
    Y = np.empty(n)
    G = np.empty(n)
    U = np.empty(n)
    V = np.empty(n)
    k = 0
    i = 0
    j = 0
    while i < nw or j < nr:
        take_w = j >= nr or (i < nw and Yw[i] <= Yr[j])
        if take_w:
            yq = Yw[i]
            # rail at yq: bracket j-1, j
            if j > 0 and j < nr:
                w = (yq - Yr[j - 1]) / (Yr[j] - Yr[j - 1])
                zr = Zr[j - 1] + w * (Zr[j] - Zr[j - 1])
                v = P.rv[j - 1] + w * (P.rv[j] - P.rv[j - 1])
                if P.wu[i] >= ulo and P.wu[i] <= uhi:
                    Y[k] = yq
                    G[k] = Zw[i] - zr
                    U[k] = P.wu[i]
                    V[k] = v
                    k += 1
            i += 1
        else:
            yq = Yr[j]
            if i > 0 and i < nw:
                w = (yq - Yw[i - 1]) / (Yw[i] - Yw[i - 1])
                zw = Zw[i - 1] + w * (Zw[i] - Zw[i - 1])
                u = P.wu[i - 1] + w * (P.wu[i] - P.wu[i - 1])
                if u >= ulo and u <= uhi:
                    Y[k] = yq
                    G[k] = zw - Zr[j]
                    U[k] = u
                    V[k] = P.rv[j]
                    k += 1
            j += 1
    return Y[:k], G[:k], U[:k], V[:k]


@njit(**JIT)
def basin_minima(G, ridge):
    """Index of the global minimum of G and of the lowest point outside its basin (-1 if none).

    The basin of the global minimum extends on each side while G keeps rising (a dip of less than
    ``ridge`` [m] is ignored); the second minimum is the lowest sample beyond the ridges.
    """
    n = G.shape[0]
    if n == 0:
        return -1, -1
    i0 = 0
    for i in range(n):
        if G[i] < G[i0]:
            i0 = i
    # walk right over the rising flank, remember the running maximum; stop when we fall ridge below it
    j2 = -1
    top = G[i0]
    i = i0 + 1
    while i < n:
        if G[i] > top:
            top = G[i]
        elif G[i] < top - ridge:
            break
        i += 1
    for k in range(i, n):
        if j2 < 0 or G[k] < G[j2]:
            j2 = k
    top = G[i0]
    i = i0 - 1
    while i >= 0:
        if G[i] > top:
            top = G[i]
        elif G[i] < top - ridge:
            break
        i -= 1
    for k in range(0, i + 1):
        if j2 < 0 or G[k] < G[j2]:
            j2 = k
    return i0, j2


@njit(**JIT)
def side_min_gap(P, ys, ps, Lrs, ulo, uhi, qs=0.0):
    """(min gap, u, v) of one side (left form, wheelset centre at height 0) in the wheel region."""
    Y, G, U, V = side_gap_curve(P, ys, ps, Lrs, ulo, uhi, qs)
    if G.shape[0] == 0:
        return np.inf, np.nan, np.nan
    i = np.argmin(G)
    return G[i], U[i], V[i]


@njit(**JIT)
def coarse_solve(PL, PR, y, xi, uLlo, uLhi, uRlo, uRhi, phimax, psi=0.0):
    """Wheelset (z, φ, u_l, v_l, u_r, v_r) with both wheels touching their rails, by bisection on φ of the
    difference of the scanned minimum gaps (left minus right, increasing in φ).  Wheel regions restrict the
    contact search on each wheel ([lo, hi] in the field-positive wheel coordinate); ``psi`` [rad] the yaw."""
    LrsL = PL.L_r + 0.5 * xi
    LrsR = PR.L_r + 0.5 * xi
    a = -phimax
    b = phimax
    gl, ul, vl = side_min_gap(PL, y, a, LrsL, uLlo, uLhi, psi)
    gr, ur, vr = side_min_gap(PR, -y, -a, LrsR, uRlo, uRhi, -psi)
    fa = gl - gr
    for _ in range(200):
        m = 0.5 * (a + b)
        gl, ul, vl = side_min_gap(PL, y, m, LrsL, uLlo, uLhi, psi)
        gr, ur, vr = side_min_gap(PR, -y, -m, LrsR, uRlo, uRhi, -psi)
        fm = gl - gr
        if (fm < 0.0) == (fa < 0.0):
            a = m
            fa = fm
        else:
            b = m
        if b - a < 1e-12:
            break
    m = 0.5 * (a + b)
    gl, ul, vl = side_min_gap(PL, y, m, LrsL, uLlo, uLhi, psi)
    gr, ur, vr = side_min_gap(PR, -y, -m, LrsR, uRlo, uRhi, -psi)
    return -0.5 * (gl + gr), m, ul, vl, ur, vr


@njit(**JIT)
def normal_distance_curve(P, ys, ps, z, Lrs, ulo, uhi):
    """Signed normal distance between each wheel scan point in [ulo, uhi] and the rail point with the
    parallel normal (penetration positive), and the tangential offset of the pair, one side in left form.
    Returns (U, V, D, T); wheel points whose normal direction the rail does not have are dropped.  Eq 15
    holds where the tangential offset T changes sign; there D is the relative indentation (found without
    requiring the bodies to overlap laterally)."""
    c = math.cos(ps)
    s = math.sin(ps)
    cb = math.cos(P.beta)
    sb = math.sin(P.beta)
    nr = P.rv.shape[0]
    nw = P.wu.shape[0]
    U = np.empty(nw)
    V = np.empty(nw)
    D = np.empty(nw)
    T = np.empty(nw)
    k = 0
    # rail normal angle in the track frame, decreasing with v for a convex head: atan(g') + beta
    for i in range(nw):
        u = P.wu[i]
        if u < ulo or u > uhi:
            continue
        F1 = 0.0
        if i == 0:
            F1 = (P.wF[1] - P.wF[0]) / (P.wu[1] - P.wu[0])
        elif i == nw - 1:
            F1 = (P.wF[nw - 1] - P.wF[nw - 2]) / (P.wu[nw - 1] - P.wu[nw - 2])
        else:
            F1 = (P.wF[i + 1] - P.wF[i - 1]) / (P.wu[i + 1] - P.wu[i - 1])
        tw = math.atan(-F1) + ps - P.beta  # wanted rail slope angle atan(g') in the rail frame
        tg = math.tan(tw)
        # rail slopes rg1 decrease with v (convex head): bisection for rg1 == tg
        if tg > P.rg1[0] or tg < P.rg1[nr - 1]:
            continue
        lo = 0
        hi = nr - 1
        while hi - lo > 1:
            mid = (lo + hi) >> 1
            if P.rg1[mid] >= tg:
                lo = mid
            else:
                hi = mid
        d1 = P.rg1[lo] - P.rg1[hi]
        w = 0.5 if d1 == 0.0 else (P.rg1[lo] - tg) / d1
        v = P.rv[lo] + w * (P.rv[hi] - P.rv[lo])
        g = P.rg[lo] + w * (P.rg[hi] - P.rg[lo])
        a = P.L_w + u
        b = -(P.r0 + P.wF[i])
        WY = ys + c * a - s * b
        WZ = z + s * a + c * b
        PY = Lrs + cb * v - sb * g
        PZ = sb * v + cb * g
        nY = -cb * tg - sb
        nZ = -sb * tg + cb
        nn = math.sqrt(nY * nY + nZ * nZ)
        U[k] = u
        V[k] = v
        D[k] = ((PY - WY) * nY + (PZ - WZ) * nZ) / nn
        T[k] = ((PY - WY) * nZ - (PZ - WZ) * nY) / nn
        k += 1
    return U[:k], V[:k], D[:k], T[:k]


# ----------------------------------------------------------------------------------------- eq 12

@njit(**JIT)
def side_residual(P, sigma, y, z, phi, Lrs, u, v, R, Jrow, col_u, col_v, corner):
    """Residual rows (W - P, t_w·n_r) of one side into R[0:3] and their Jacobian into Jrow[0:3, :]
    (columns z, φ, u, v at 0, 1, col_u, col_v).  ``corner`` (finite): the wheel touches with the end point
    u = corner of a restricted profile region; the third row becomes u - corner (no tangency)."""
    ys = sigma * y
    ps = sigma * phi
    c = math.cos(ps)
    s = math.sin(ps)
    cb = math.cos(P.beta)
    sb = math.sin(P.beta)
    F, F1, F2, F3_ = pp_eval(P.wx, P.wc, u)
    h = P.r0 + F
    g, g1, g2, g3 = pp_eval(P.rx, P.rc, v)
    a = P.L_w + u
    b = -h
    WY = ys + c * a - s * b
    WZ = z + s * a + c * b
    PY = Lrs + cb * v - sb * g
    PZ = sb * v + cb * g
    th = P.beta - ps
    ct = math.cos(th)
    st = math.sin(th)
    R[0] = WY - PY
    R[1] = WZ - PZ
    R[2] = -g1 * ct - st + F1 * g1 * st - F1 * ct
    for k in range(Jrow.shape[1]):
        Jrow[0, k] = 0.0
        Jrow[1, k] = 0.0
        Jrow[2, k] = 0.0
    # d/dz
    Jrow[1, 0] = 1.0
    # d/dphi = sigma * d/dps ; dW/dps = (-(WZ - z), WY - ys)
    Jrow[0, 1] = sigma * (-(WZ - z))
    Jrow[1, 1] = sigma * (WY - ys)
    Jrow[2, 1] = -sigma * (g1 * st - ct + F1 * g1 * ct + F1 * st)
    # d/du: R(ps)(1, -h')
    Jrow[0, col_u] = c + s * F1
    Jrow[1, col_u] = s - c * F1
    Jrow[2, col_u] = F2 * (g1 * st - ct)
    # d/dv: -R(beta)(1, g')
    Jrow[0, col_v] = -(cb - sb * g1)
    Jrow[1, col_v] = -(sb + cb * g1)
    Jrow[2, col_v] = g2 * (F1 * st - ct)
    if np.isfinite(corner):
        R[2] = u - corner
        for k in range(Jrow.shape[1]):
            Jrow[2, k] = 0.0
        Jrow[2, col_u] = 1.0


@njit(**JIT)
def side_residual_yaw(P, sigma, y, z, phi, psi, Lrs, u, v, corner):
    """Residual rows of :func:`side_residual` for a yawed wheelset (wheel trace of :func:`wheel_point`):
    (W_Y - P_Y, W_Z - P_Z, -t_w × t_r); the Jacobian is formed by differences (:func:`residual12`)."""
    ps = sigma * phi
    qs = sigma * psi
    cb = math.cos(P.beta)
    sb = math.sin(P.beta)
    F, F1, F2, F3_ = pp_eval(P.wx, P.wc, u)
    g, g1, g2, g3 = pp_eval(P.rx, P.rc, v)
    Yw, Zw, Xw, tY, tZ = wheel_point(P.L_w, P.r0, u, F, F1, F2, ps, qs)
    PY = Lrs + cb * v - sb * g
    PZ = sb * v + cb * g
    trY = cb - sb * g1
    trZ = sb + cb * g1
    r2 = -(tY * trZ - tZ * trY)
    if np.isfinite(corner):
        r2 = u - corner
    return sigma * y + Yw - PY, z + Zw - PZ, r2


@njit(**JIT)
def residual12(PL, PR, y, xi, x, R, J, cornerL, cornerR, psi=0.0):
    """Eq 12 residual R[6] and Jacobian J[6, 6] at x = (z, φ, u_l, v_l, u_r, v_r) (NaN corners: tangent
    contact on both wheels); ``psi`` [rad] the wheelset yaw (a nonzero yaw forms J by central differences)."""
    LrsL = PL.L_r + 0.5 * xi
    LrsR = PR.L_r + 0.5 * xi
    if psi == 0.0:
        side_residual(PL, 1.0, y, x[0], x[1], LrsL, x[2], x[3], R[0:3], J[0:3, :], 2, 3, cornerL)
        side_residual(PR, -1.0, y, x[0], x[1], LrsR, x[4], x[5], R[3:6], J[3:6, :], 4, 5, cornerR)
        return
    r = side_residual_yaw(PL, 1.0, y, x[0], x[1], psi, LrsL, x[2], x[3], cornerL)
    R[0], R[1], R[2] = r[0], r[1], r[2]
    r = side_residual_yaw(PR, -1.0, y, x[0], x[1], psi, LrsR, x[4], x[5], cornerR)
    R[3], R[4], R[5] = r[0], r[1], r[2]
    for i in range(6):
        for k in range(6):
            J[i, k] = 0.0
    hd = 1e-7
    for k in range(6):
        xp = x.copy()
        xm = x.copy()
        xp[k] += hd
        xm[k] -= hd
        if k != 4 and k != 5:
            rp = side_residual_yaw(PL, 1.0, y, xp[0], xp[1], psi, LrsL, xp[2], xp[3], cornerL)
            rm = side_residual_yaw(PL, 1.0, y, xm[0], xm[1], psi, LrsL, xm[2], xm[3], cornerL)
            J[0, k] = (rp[0] - rm[0]) / (2.0 * hd)
            J[1, k] = (rp[1] - rm[1]) / (2.0 * hd)
            J[2, k] = (rp[2] - rm[2]) / (2.0 * hd)
        if k != 2 and k != 3:
            rp = side_residual_yaw(PR, -1.0, y, xp[0], xp[1], psi, LrsR, xp[4], xp[5], cornerR)
            rm = side_residual_yaw(PR, -1.0, y, xm[0], xm[1], psi, LrsR, xm[4], xm[5], cornerR)
            J[3, k] = (rp[0] - rm[0]) / (2.0 * hd)
            J[4, k] = (rp[1] - rm[1]) / (2.0 * hd)
            J[5, k] = (rp[2] - rm[2]) / (2.0 * hd)


@njit(**JIT)
def solve_dense(J, R):
    """J⁻¹R, or NaN when J is singular (a failed Newton step, never an exception in the kernels)."""
    out = np.full(R.shape[0], np.nan)
    if not np.all(np.isfinite(J)) or not np.all(np.isfinite(R)):
        return out
    n = R.shape[0]
    A = J.copy()
    b = R.copy()
    # Gaussian elimination with partial pivoting
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(A[i, k]) > abs(A[p, k]):
                p = i
        if A[p, k] == 0.0:
            return out
        if p != k:
            for j in range(n):
                A[k, j], A[p, j] = A[p, j], A[k, j]
            b[k], b[p] = b[p], b[k]
        for i in range(k + 1, n):
            f = A[i, k] / A[k, k]
            for j in range(k, n):
                A[i, j] -= f * A[k, j]
            b[i] -= f * b[k]
    for k in range(n - 1, -1, -1):
        acc = b[k]
        for j in range(k + 1, n):
            acc -= A[k, j] * out[j]
        out[k] = acc / A[k, k]
    return out


@njit(**JIT)
def newton12(PL, PR, y, xi, x, maxit, cornerL, cornerR, psi=0.0):
    """Newton on eq 12 from x (modified in place).  Returns (converged, iterations, max |residual|)."""
    R = np.empty(6)
    J = np.empty((6, 6))
    res = np.inf
    tol_step = 1e-15 if psi == 0.0 else 1e-13
    for it in range(maxit):
        residual12(PL, PR, y, xi, x, R, J, cornerL, cornerR, psi)
        res = np.max(np.abs(R))
        dx = solve_dense(J, R)
        step = 0.0
        for k in range(6):
            x[k] -= dx[k]
            step = max(step, abs(dx[k]))
        if step < tol_step:
            residual12(PL, PR, y, xi, x, R, J, cornerL, cornerR, psi)
            return True, it + 1, np.max(np.abs(R))
        if not np.isfinite(step) or step > 0.05:
            return False, it + 1, res
    residual12(PL, PR, y, xi, x, R, J, cornerL, cornerR, psi)
    res = np.max(np.abs(R))
    return res < 1e-12, maxit, res


@njit(**JIT)
def sensitivities12(PL, PR, y, xi, x, cornerL, cornerR):
    """dx/dy and dx/dξ_g of the eq-12 solution (implicit function theorem), each float64[6]."""
    R = np.empty(6)
    J = np.empty((6, 6))
    residual12(PL, PR, y, xi, x, R, J, cornerL, cornerR)
    Ry = np.zeros(6)
    Ry[0] = 1.0  # dW_Y/dy on the left: +1 ; right side: sigma * 1 = -1
    Ry[3] = -1.0
    Rx = np.zeros(6)
    Rx[0] = -0.5  # -dP_Y/dξ
    Rx[3] = -0.5
    dy = -solve_dense(J, Ry)
    dxi = -solve_dense(J, Rx)
    return dy, dxi


# ----------------------------------------------------------------------------------------- eq 15


@njit(**JIT)
def indentation(P, sigma, y, z, phi, Lrs, u, v, maxit):
    """Maximum relative indentation (eq 15) near (u, v) for a given wheelset position.

    Solves t_w·(W(u) - P(v)) = 0 and t_w·n_r = 0 by Newton.  Returns (converged, u, v, δ) where
    δ = (P - W)·n_r / |n_r| is the indentation along the rail normal [m] (positive = penetration).
    """
    ys = sigma * y
    ps = sigma * phi
    c = math.cos(ps)
    s = math.sin(ps)
    cb = math.cos(P.beta)
    sb = math.sin(P.beta)
    ok = False
    for it in range(maxit):
        F, F1, F2, _ = pp_eval(P.wx, P.wc, u)
        g, g1, g2, _ = pp_eval(P.rx, P.rc, v)
        a = P.L_w + u
        b = -(P.r0 + F)
        WY = ys + c * a - s * b
        WZ = z + s * a + c * b
        PY = Lrs + cb * v - sb * g
        PZ = sb * v + cb * g
        tY = c + s * F1  # wheel tangent R(ps)(1, -F1)
        tZ = s - c * F1
        nY = -cb * g1 - sb  # rail normal R(beta)(-g1, 1)
        nZ = -sb * g1 + cb
        dY = WY - PY
        dZ = WZ - PZ
        r1 = tY * dY + tZ * dZ
        r2 = tY * nY + tZ * nZ
        # derivatives
        tYu = s * F2
        tZu = -c * F2
        WYu = tY
        WZu = tZ
        PYv = cb - sb * g1
        PZv = sb + cb * g1
        nYv = -cb * g2
        nZv = -sb * g2
        a11 = tYu * dY + tZu * dZ + tY * WYu + tZ * WZu
        a12 = -(tY * PYv + tZ * PZv)
        a21 = tYu * nY + tZu * nZ
        a22 = tY * nYv + tZ * nZv
        det = a11 * a22 - a12 * a21
        if det == 0.0 or not np.isfinite(det):
            break
        du = (r1 * a22 - r2 * a12) / det
        dv = (a11 * r2 - a21 * r1) / det
        u -= du
        v -= dv
        if abs(du) + abs(dv) < 1e-15:
            ok = True
            break
        if abs(du) + abs(dv) > 0.02:
            break
    F, F1, F2, _ = pp_eval(P.wx, P.wc, u)
    g, g1, g2, _ = pp_eval(P.rx, P.rc, v)
    a = P.L_w + u
    b = -(P.r0 + F)
    WY = ys + c * a - s * b
    WZ = z + s * a + c * b
    PY = Lrs + cb * v - sb * g
    PZ = sb * v + cb * g
    nY = -cb * g1 - sb
    nZ = -sb * g1 + cb
    nn = math.sqrt(nY * nY + nZ * nZ)
    delta = ((PY - WY) * nY + (PZ - WZ) * nZ) / nn
    return ok, u, v, delta


# ----------------------------------------------------------------------------------------- driver

@njit(**JIT)
def side_penetration(P, sigma, y, z, phi, Lrs, ulo, uhi, u_excl=np.nan, excl=0.0, psi=0.0):
    """Largest vertical penetration [m] (negative gap) of one side's wheel region at this wheelset
    position, and the wheel and rail coordinates where it occurs (from the scan).  Points within
    ``excl`` [m] of the wheel coordinate ``u_excl`` (a contact point just solved) are skipped: there the
    scan's interpolation error, not another contact, decides the sign."""
    Y, G, U, V = side_gap_curve(P, sigma * y, sigma * phi, Lrs, ulo, uhi, sigma * psi)
    best = -1
    for i in range(G.shape[0]):
        if excl > 0.0 and abs(U[i] - u_excl) < excl:
            continue
        if best < 0 or G[i] < G[best]:
            best = i
    if best < 0:
        return -np.inf, np.nan, np.nan
    return -(G[best] + z), U[best], V[best]


@njit(**JIT)
def _corner_of(P, u, lo, hi, step):
    if lo > P.wu[0] and u - lo < 1.5 * step:
        return lo
    if hi < P.wu[-1] and hi - u < 1.5 * step:
        return hi
    return np.nan


@njit(**JIT)
def _accept(PL, PR, y, xi, x, uLlo, uLhi, uRlo, uRhi, tol, psi=0.0):
    """(ok, penetration left, u, v, penetration right, u, v) of a converged Newton solution."""
    if not (x[2] >= uLlo - 1e-12 and x[2] <= uLhi + 1e-12 and x[4] >= uRlo - 1e-12 and x[4] <= uRhi + 1e-12):
        return False, np.inf, np.nan, np.nan, np.inf, np.nan, np.nan
    pl, ul, vl = side_penetration(PL, 1.0, y, x[0], x[1], PL.L_r + 0.5 * xi, uLlo, uLhi, x[2], 5e-4, psi)
    pr, ur, vr = side_penetration(PR, -1.0, y, x[0], x[1], PR.L_r + 0.5 * xi, uRlo, uRhi, x[4], 5e-4, psi)
    return pl <= tol and pr <= tol, pl, ul, vl, pr, ur, vr


@njit(**JIT)
def solve_point(PL, PR, y, xi, uLlo, uLhi, uRlo, uRhi, x, have_guess, cornerL0, cornerR0, tol, psi=0.0):
    """Contact of both wheels (restricted to wheel regions [lo, hi]) at lateral shift ``y``, gauge variation
    ``xi`` [m] and yaw ``psi`` [rad].  ``x`` float64[6] = (z, φ, u_l, v_l, u_r, v_r) holds the guess and
    receives the solution.  A guess is refined by Newton and accepted when no other point of either region
    penetrates by more than ``tol`` [m]; otherwise (or without guess) the global bisection scan restarts it,
    and a Newton solution that leaves another point penetrating is restarted from that point (two basins of
    nearly equal depth, e.g. at a steep flange where the scan is least accurate).

    Returns (status, cornerL, cornerR): status 0 = accepted from the guess, 1 = after the global scan,
    -1 = failed; corner = NaN for a tangent contact or the region end point touching (restricted regions).
    """
    stepL = PL.wu[1] - PL.wu[0]
    stepR = PR.wu[1] - PR.wu[0]
    if have_guess:
        xt = x.copy()
        ok, it, res = newton12(PL, PR, y, xi, xt, 40, cornerL0, cornerR0, psi)
        if ok:
            acc, pl, ul, vl, pr, ur, vr = _accept(PL, PR, y, xi, xt, uLlo, uLhi, uRlo, uRhi, tol, psi)
            if acc:
                x[:] = xt
                return 0, cornerL0, cornerR0
    z, phi, ul, vl, ur, vr = coarse_solve(PL, PR, y, xi, uLlo, uLhi, uRlo, uRhi, 0.06, psi)
    if not (np.isfinite(z) and np.isfinite(ul) and np.isfinite(ur)):
        return -1, np.nan, np.nan
    for attempt in range(6):
        cL = _corner_of(PL, ul, uLlo, uLhi, stepL)
        cR = _corner_of(PR, ur, uRlo, uRhi, stepR)
        x[0] = z
        x[1] = phi
        x[2] = ul if np.isnan(cL) else cL
        x[3] = vl
        x[4] = ur if np.isnan(cR) else cR
        x[5] = vr
        ok, it, res = newton12(PL, PR, y, xi, x, 60, cL, cR, psi)
        if not ok:
            return -1, cL, cR
        acc, pl, pul, pvl, pr, pur, pvr = _accept(PL, PR, y, xi, x, uLlo, uLhi, uRlo, uRhi, tol, psi)
        if acc:
            return 1, cL, cR
        z = x[0]
        phi = x[1]
        ul, vl, ur, vr = x[2], x[3], x[4], x[5]
        if pl > tol:
            ul, vl = pul, pvl
        if pr > tol:
            ur, vr = pur, pvr
    return -1, np.nan, np.nan


@njit(**JIT)
def side_quantities(P, sigma, phi, u, v, psi=0.0):
    """Contact quantities of one side from its wheel/rail coordinates (left form u, v), the roll φ and the yaw ψ.

    Returns (h, γ_w, γ, κ_w, κ_r, A, B, dY, dZ, dX): rolling radius [m]; contact angle in the wheelset frame
    (γ - σφ) and in the track frame [rad] (positive towards the track centre); lateral profile curvatures of
    wheel and rail [1/m] (convex positive); Hertz curvature sums A (rolling direction, ½ cos γ_w / h) and B
    (lateral, ½(κ_w + κ_r)) [1/m]; contact point relative to the wheelset centre in the track frame
    (original orientation: dY positive to the left, dX forward) [m].  The curvature sums ignore the yaw
    (second order in ψ).
    """
    F, F1, F2, _ = pp_eval(P.wx, P.wc, u)
    g, g1, g2, _ = pp_eval(P.rx, P.rc, v)
    h = P.r0 + F
    ps = sigma * phi
    Yw, Zw, Xw, tY, tZ = wheel_point(P.L_w, P.r0, u, F, F1, F2, ps, sigma * psi)
    if psi == 0.0:
        gw = math.atan(-F1)
        gam = gw + ps
    else:
        gam = math.atan2(tZ, tY)
        gw = gam - ps
    kw = -F2 / (1.0 + F1 * F1) ** 1.5
    kr = -g2 / (1.0 + g1 * g1) ** 1.5
    A = 0.5 * math.cos(math.atan(-F1)) / h
    B = 0.5 * (kw + kr)
    return h, gw, gam, kw, kr, A, B, sigma * Yw, Zw, Xw


@njit(**JIT)
def kec_coordinates(y, z, phi, r0, L_w):
    """Invert the left-wheel rows of paper 004 eq 22 (no irregularity) for the knife-edge-equivalent
    contact position s^k and profile value f^k of a wheelset solution (y, z, φ) (left form)."""
    s = -(y + phi * z + phi * phi * L_w) / (1.0 + phi * phi)
    f = phi * s + z + phi * L_w - r0
    return s, f


# ----------------------------------------------------------------------------------------- python API

NAN = float("nan")


class ContactPoint(NamedTuple):
    """Contact quantities of one wheel (:meth:`ContactSolver.quantities`), SI units.

    ``rolling_radius`` [m]; ``gamma_w`` contact angle in the wheelset frame and ``gamma`` in the track frame
    [rad] (positive towards the track centre); ``curvature_wheel``, ``curvature_rail`` lateral profile
    curvatures [1/m] (convex positive); ``A``, ``B`` Hertz curvature sums [1/m]; ``dY``, ``dZ``, ``dX`` the
    contact point relative to the wheelset centre, track frame (Y left, Z up, X forward) [m]."""

    rolling_radius: float
    gamma_w: float
    gamma: float
    curvature_wheel: float
    curvature_rail: float
    A: float
    B: float
    dY: float
    dZ: float
    dX: float


class ContactSolver:
    """Off-line wheelset contact solver for one profile pair (wraps the numba kernels).

    The left side is (``wheel``, ``rail``, ``placement``); the right side is its mirror image unless
    ``wheel_right``, ``rail_right`` or ``placement_right`` give its own (asymmetric pairs: worn or measured
    profiles, different wheel radii).  Every profile is in left-wheel form (field side positive).  ``tol`` [m]:
    penetration accepted elsewhere on a wheel region when a Newton solution is verified by the scan (the scan's
    linear interpolation error is below 1e-8 m at the default 20 µm sampling).
    """

    def __init__(self, wheel: Profile, rail: Profile, placement: Placement, scan_step: float = 2e-5,
                 tol: float = 2e-8, *, wheel_right: Profile | None = None, rail_right: Profile | None = None,
                 placement_right: Placement | None = None):
        self.wheel = wheel
        self.rail = rail
        self.placement = placement
        self.wheel_r = wheel_right if wheel_right is not None else wheel
        self.rail_r = rail_right if rail_right is not None else rail
        self.placement_r = placement_right if placement_right is not None else placement
        self.scan_step = scan_step
        self.symmetric = (self.wheel_r is wheel and self.rail_r is rail and self.placement_r == placement)
        self.gp = geometry_params(wheel, rail, placement, scan_step)
        self.gpr = self.gp if self.symmetric else geometry_params(self.wheel_r, self.rail_r, self.placement_r,
                                                                   scan_step)
        self.tol = tol
        self.u_tip, self.u_max = self._region(self.gp)
        self.u_tip_r, self.u_max_r = self._region(self.gpr)

    @staticmethod
    def _region(gp):
        uu = gp.wu
        neg = uu < 0
        return (float(uu[neg][np.argmax(gp.wF[neg])]) if np.any(neg) else float(uu[0])), float(uu[-1])

    def mirrored(self) -> "ContactSolver":
        """The same wheelset seen in a mirror (left and right sides exchanged; y → -y, φ → -φ): its left side
        is this solver's right one (used to build the right wheel's tables of an asymmetric pair)."""
        if self.symmetric:
            return self
        return ContactSolver(self.wheel_r, self.rail_r, self.placement_r, self.scan_step, self.tol,
                             wheel_right=self.wheel, rail_right=self.rail, placement_right=self.placement)

    def side(self, sigma: int):
        """(wheel, rail, placement, numba parameters, (u_tip, u_max)) of the left (σ = +1) or right (-1) side."""
        if sigma > 0:
            return self.wheel, self.rail, self.placement, self.gp, (self.u_tip, self.u_max)
        return self.wheel_r, self.rail_r, self.placement_r, self.gpr, (self.u_tip_r, self.u_max_r)

    def default_regions(self):
        return (self.u_tip, self.u_max), (self.u_tip_r, self.u_max_r)

    def rolling_radii(self, X):
        """Rolling radii (left, right) [m] of solutions X float64[..., 6]."""
        X = np.asarray(X, float)
        return (self.placement.r0 + self.wheel(X[..., 2]), self.placement_r.r0 + self.wheel_r(X[..., 4]))

    # -- single solutions
    def solve(self, y: float, xi: float = 0.0, regions=None, guess=None, corners=(NAN, NAN), psi: float = 0.0):
        """Contact of both wheels at lateral shift ``y``, gauge variation ``xi`` [m] and yaw ``psi`` [rad]
        (positive nose left).

        ``regions``: ((lo, hi) left, (lo, hi) right) wheel coordinate ranges [m] (default: flange tip to
        field-side end).  Returns (x float64[6] = (z, φ, u_l, v_l, u_r, v_r), status, (corner_l, corner_r));
        raises RuntimeError naming the position when no contact is found.
        """
        (a, b), (c, d) = regions if regions is not None else self.default_regions()
        x = np.zeros(6) if guess is None else np.array(guess, dtype=float)
        st, cl, cr = solve_point(self.gp, self.gpr, float(y), float(xi), a, b, c, d, x, guess is not None,
                                 corners[0], corners[1], self.tol, float(psi))
        if st < 0:
            raise RuntimeError(f"no wheel/rail contact found at y = {y * 1e3:.4f} mm, ξ_g = {xi * 1e3:.3f} mm"
                               + (f", yaw {psi * 1e3:.3f} mrad" if psi else ""))
        return x, st, (cl, cr)

    def wheel_contact(self, y: float, phi: float, side: int, psi: float = 0.0, xi: float = 0.0):
        """Contact of one wheel for a prescribed pose — lateral shift ``y`` [m], roll ``phi`` and yaw ``psi``
        [rad] — as a benchmark prescribes it (the Manchester contact benchmark gives y, roll and yaw per case):
        the height z at which that wheel touches its rail, and its contact.  Returns (z, u, v, ContactPoint);
        raises RuntimeError when no contact is found."""
        from scipy.optimize import fsolve

        x0, _, _ = self.solve(y, xi, psi=psi)
        gp = self.gp if side > 0 else self.gpr
        cu = 2 if side > 0 else 4
        Lrs = gp.L_r + 0.5 * xi
        q = psi if psi != 0.0 else 1e-300      # the trace-line residual (exact also without yaw)

        def F(p):
            return side_residual_yaw(gp, float(side), float(y), p[0], float(phi), q, Lrs, p[1], p[2], NAN)

        p, info, ier, msg = fsolve(F, [x0[0], x0[cu], x0[cu + 1]], xtol=1e-14, full_output=True)
        if ier != 1 and np.max(np.abs(F(p))) > 1e-11:
            raise RuntimeError(f"no contact of the {'left' if side > 0 else 'right'} wheel at y = {y * 1e3:.4f} mm, "
                               f"roll {phi:.3e} rad, yaw {psi * 1e3:.3f} mrad")
        z, u, v = (float(c) for c in p)
        return z, u, v, ContactPoint(*side_quantities(gp, float(side), float(phi), u, v, float(psi)))

    def newton(self, y, xi, x, corners=(NAN, NAN), psi: float = 0.0):
        """Local Newton continuation of a branch (no global check).  Returns (x, ok)."""
        xx = np.array(x, dtype=float)
        ok, _, _ = newton12(self.gp, self.gpr, float(y), float(xi), xx, 40, corners[0], corners[1], float(psi))
        return xx, bool(ok)

    def follow(self, y0, x0, y1, xi=0.0, corners=(NAN, NAN), depth=12, max_step=None, max_du=None):
        """Continue the branch through (y0, x0) to y1 by Newton, halving the step where Newton fails.
        ``max_step`` [m]: continue in steps no longer than it; ``max_du`` [m]: a step that moves a contact point
        by more than it has left the branch (Newton converged in another basin) and counts as a failure.
        Returns (x, ok)."""
        if max_step is not None and abs(y1 - y0) > max_step:
            n = int(math.ceil(abs(y1 - y0) / max_step))
            x = np.array(x0, float)
            for i in range(1, n + 1):
                ya = y0 + (y1 - y0) * (i - 1) / n
                yb = y0 + (y1 - y0) * i / n
                x, ok = self.follow(ya, x, yb, xi, corners, depth, None, max_du)
                if not ok:
                    return x, False
            return x, True
        x, ok = self.newton(y1, xi, x0, corners)
        if ok and max_du is not None and (abs(x[2] - x0[2]) > max_du or abs(x[4] - x0[4]) > max_du):
            ok = False
        if ok or depth == 0:
            return x, ok
        ym = 0.5 * (y0 + y1)
        xm, ok = self.follow(y0, x0, ym, xi, corners, depth - 1, None, max_du)
        if not ok:
            return xm, False
        return self.follow(ym, xm, y1, xi, corners, depth - 1, None, max_du)

    def sensitivities(self, y, xi, x, corners=(NAN, NAN)):
        """(dx/dy, dx/dξ_g) of a solution, each float64[6]."""
        return sensitivities12(self.gp, self.gpr, float(y), float(xi), np.asarray(x, float), corners[0], corners[1])

    def quantities(self, x, side: int, psi: float = 0.0) -> ContactPoint:
        """Contact quantities (:class:`ContactPoint`) of the left (side=+1) or right (-1) wheel."""
        u, v = (x[2], x[3]) if side > 0 else (x[4], x[5])
        gp = self.gp if side > 0 else self.gpr
        return ContactPoint(*side_quantities(gp, float(side), float(x[1]), float(u), float(v), float(psi)))

    def residual(self, y, xi, x, corners=(NAN, NAN), psi: float = 0.0):
        """Eq 12 residual float64[6] (positions [m] and tangency) of a solution."""
        R = np.empty(6)
        J = np.empty((6, 6))
        residual12(self.gp, self.gpr, float(y), float(xi), np.asarray(x, float), R, J, corners[0], corners[1],
                   float(psi))
        return R

    def gap_curve(self, y, xi, x, side: int, region=None, psi: float = 0.0):
        """Scan of one side at a solution: (U, V, gap [m]) with the wheelset at its height z."""
        _, _, _, gp, reg = self.side(side)
        lo, hi = region if region is not None else reg
        Y, G, U, V = side_gap_curve(gp, side * y, side * x[1], gp.L_r + 0.5 * xi, lo, hi, side * psi)
        return U, V, G + x[0]

    def indentation(self, y, xi, x, side: int, region):
        """Maximum relative indentation (eq 15) of a wheel region at the wheelset position x: (ok, u, v, δ)
        with δ [m] positive for penetration (negative: clearance along the common normal)."""
        lo, hi = region
        gp = self.gp if side > 0 else self.gpr
        Lrs = gp.L_r + 0.5 * xi
        U, V, D, T = normal_distance_curve(gp, side * y, side * x[1], x[0], Lrs, lo, hi)
        if D.size == 0:
            return False, NAN, NAN, -np.inf
        roots = np.where(np.sign(T[:-1]) != np.sign(T[1:]))[0]
        if roots.size == 0:  # no point faces the rail along its normal: report the nearest pair
            i = int(np.argmin(np.abs(T)))
            return False, float(U[i]), float(V[i]), float(D[i])
        i = int(roots[np.argmax(D[roots])])
        ok, u, v, d = indentation(gp, float(side), float(y), float(x[0]), float(x[1]), Lrs,
                                  float(U[i]), float(V[i]), 60)
        if not ok or u < lo - 1e-9 or u > hi + 1e-9:  # Newton left the region: keep the scan value
            return False, float(U[i]), float(V[i]), float(D[i])
        return True, u, v, d

    # -- sweeps
    def sweep(self, ys, xi=0.0, regions=None, psi: float = 0.0):
        """Solutions on an increasing grid of y (continuation, verified by the global scan at every point).

        Returns (X float64[n, 6], corners float64[n, 2], status int[n])."""
        ys = np.asarray(ys, float)
        X = np.empty((ys.size, 6))
        C = np.full((ys.size, 2), NAN)
        S = np.empty(ys.size, dtype=np.int64)
        guess = None
        corners = (NAN, NAN)
        for k, y in enumerate(ys):
            x, st, corners = self.solve(y, xi, regions, guess, corners, psi)
            X[k] = x
            C[k] = corners
            S[k] = st
            guess = x
        return X, C, S

    # -- contact jumps (two-point contact of the rigid solution)
    def find_jumps(self, ys, X, side: int = 1, xi: float = 0.0, jump_min: float = 3e-4, step: float = 2e-5):
        """Contact jumps of one wheel along a sweep (ys, X) of the unrestricted solution, on any grid.

        Every interval whose end points put this wheel's contact more than ``jump_min`` [m] apart is walked by
        continuing the earlier solution in steps of at most ``step`` [m] (a step that moves a contact point by
        more than 0.25 mm has left its branch), checking after each step whether another point of *this* wheel
        penetrates its rail:

        * a penetrating point: a **two-point** jump, located exactly by a root of the maximum relative
          indentation (eq 15) of that point's basin along the continued branch — at the jump both contact points
          touch; the walk goes on from the new contact;
        * the branch ends (its tangency is lost: the profiles become conformal and the contact point runs away):
          a **fold**, located by bisection on the end of the continuation; the walk goes on from the globally
          verified solution just beyond it;
        * the walk reaches the interval's end on the sweep's solution: the contact point moved continuously (a
          coarse grid) — nothing more; elsewhere (the wheelset moved because of the other wheel): a **fast**
          jump at the interval's midpoint.

        A jump thus comes out the same on a 0.01 mm and a 0.5 mm grid.  Returns a list of dicts with y, kind, the
        solutions of the outer (old) and inner (new) branch at the jump, both wheel coordinates and the ridge
        between them (the wheel coordinate of the largest gap between the two contacts), and ok (the inner
        solution converged)."""
        from scipy.optimize import brentq

        cu = 2 if side > 0 else 4
        _, _, _, gp, (u_tip, u_max) = self.side(side)
        out = []
        Lrs = gp.L_r + 0.5 * xi
        du = 2.5e-4

        def record(yj, kind, xA, xB, okB):
            U, V, G = self.gap_curve(yj, xi, xA, side)
            lo_, hi_ = min(xA[cu], xB[cu]), max(xA[cu], xB[cu])
            m = (U > lo_) & (U < hi_)
            ridge = float(U[m][np.argmax(G[m])]) if np.any(m) else 0.5 * (lo_ + hi_)
            out.append(dict(y=float(yj), kind=kind, x_outer=xA, x_inner=xB, u_outer=float(xA[cu]),
                            u_inner=float(xB[cu]), ridge=ridge, ok=bool(okB)))

        def branch(ya, xa, y):
            x, okk = self.follow(ya, xa, y, xi, max_du=du)
            if not okk:
                raise RuntimeError("branch continuation failed while locating a contact jump")
            return x

        prev = {1: np.nan, -1: np.nan}      # each wheel's contact point before its last jump: still touching

        def pen_at(x, y, sd=side):
            """Largest penetration of wheel ``sd`` away from its contact point and from its previous one."""
            _, _, _, g, (lo_, hi_) = self.side(sd)
            c = 2 if sd > 0 else 4
            Y, G, U, V = side_gap_curve(g, sd * y, sd * x[1], g.L_r + 0.5 * xi, lo_, hi_)
            m = np.abs(U - x[c]) >= 5e-4
            if np.isfinite(prev[sd]):
                m &= np.abs(U - prev[sd]) >= 5e-4
            if not np.any(m):
                return -np.inf, np.nan, np.nan
            i = int(np.argmin(np.where(m, G, np.inf)))
            return -(G[i] + x[0]), U[i], V[i]

        def two_point(ya, xa, yb, sd):
            """The two-point contact of wheel ``sd`` on the branch through (ya, xa) before yb, where another point
            of that wheel starts to penetrate: (yj, xA, xB, okB) or None."""
            g = self.gp if sd > 0 else self.gpr
            c = 2 if sd > 0 else 4
            L = g.L_r + 0.5 * xi
            def crossing(y):
                try:
                    return pen_at(branch(ya, xa, y), y, sd)[0] - self.tol
                except RuntimeError:       # beyond the branch's end (near a fold): count as penetrating
                    return 1.0

            try:
                ys_ = brentq(crossing, ya, yb, xtol=1e-13, rtol=1e-14, maxiter=200)
            except (ValueError, RuntimeError):
                return None
            xs_ = branch(ya, xa, ys_)
            _, up, vp = pen_at(xs_, ys_, sd)          # the point that starts to penetrate there

            def delta_b(y):
                x = branch(ya, xa, y)
                okb, u, v, d = indentation(g, float(sd), float(y), float(x[0]), float(x[1]), L, float(up),
                                           float(vp), 60)
                return d if okb else np.nan

            yj = ys_
            for h in (1e-8, 1e-7, 1e-6):     # refine the scan's crossing by the exact indentation (eq 15)
                lo_, hi_ = max(min(ya, yb), ys_ - h), min(max(ya, yb), ys_ + h)
                try:
                    dl, dh = delta_b(lo_), delta_b(hi_)
                    if np.isfinite(dl) and np.isfinite(dh) and dl * dh < 0:
                        yj = brentq(delta_b, lo_, hi_, xtol=1e-15, rtol=1e-15, maxiter=200)
                        break
                except (RuntimeError, ValueError):
                    yj = ys_
                    break
            xA = branch(ya, xa, yj) if yj != ys_ else xs_
            okb, u, v, d = indentation(g, float(sd), float(yj), float(xA[0]), float(xA[1]), L, float(up), float(vp),
                                       60)
            xB = xA.copy()
            xB[c] = u if okb else up
            xB[c + 1] = v if okb else vp
            xB, okB = self.newton(yj, xi, xB)
            if not okB or abs(xB[c] - xA[c]) < 1e-4:
                return None
            return yj, xA, xB, okB

        def first_jump(yc, xc, y_end, sides, sgn):
            """The first two-point contact between yc and y_end of the wheels ``sides`` (recorded when it is this
            wheel's; another wheel's jump leaves this wheel's pose continuous): the new (y, solution) or None."""
            cand = [tp + (sd,) for sd in sides if (tp := two_point(yc, xc, y_end, sd)) is not None]
            if not cand:
                return None
            yj, xA, xB, okB, sd = min(cand, key=lambda t: sgn * t[0])
            if sd == side:
                record(yj, "two-point", xA, xB, okB)
            prev[sd] = xA[2 if sd > 0 else 4]
            return yj, xB

        for k in range(len(ys) - 1):
            if abs(X[k + 1][cu] - X[k][cu]) <= jump_min:
                continue
            y0, y1 = float(ys[k]), float(ys[k + 1])
            sgn = 1.0 if y1 > y0 else -1.0
            h_step = abs(y1 - y0) / max(1, int(math.ceil(abs(y1 - y0) / step)))
            yc, xc = y0, np.array(X[k], float)
            prev[1], prev[-1] = np.nan, np.nan
            guard = 0
            while sgn * (y1 - yc) > 1e-15 and guard < 50:
                guard += 1
                yn = min(yc + h_step, y1) if sgn > 0 else max(yc - h_step, y1)
                xn, ok = self.follow(yc, xc, yn, xi, max_du=du)
                if ok:
                    p_this, p_other = pen_at(xn, yn)[0], pen_at(xn, yn, -side)[0]
                    if p_this <= self.tol and p_other <= self.tol:
                        yc, xc = yn, xn
                        continue
                    # the wheel whose other point touches first
                    hit = first_jump(yc, xc, yn, [sd for sd, p in ((side, p_this), (-side, p_other)) if p > self.tol],
                                     sgn)
                    if hit is not None:
                        yc, xc = hit
                        continue
                    xB, _, _ = self.solve(yn, xi, guess=xn)      # no located root: the verified solution
                    if abs(xB[cu] - xc[cu]) > jump_min:
                        record(0.5 * (yc + yn), "fast", xc, xB, False)
                    yc, xc = yn, xB
                    continue
                # the branch ends between yc and yn: bisection on the end of the continuation
                lo, hi, xlo = yc, yn, xc
                for _ in range(80):
                    mid = 0.5 * (lo + hi)
                    xm, okm = self.follow(lo, xlo, mid, xi, max_du=du)
                    if okm:
                        lo, xlo = mid, xm
                    else:
                        hi = mid
                    if abs(hi - lo) < 1e-13:
                        break
                if lo != yc:   # another point of either wheel touched before the end
                    hit = first_jump(yc, xc, lo, [sd for sd in (side, -side) if pen_at(xlo, lo, sd)[0] > self.tol],
                                     sgn)
                    if hit is not None:
                        yc, xc = hit
                        continue
                yb = lo + sgn * 1e-9
                try:
                    xB, _, _ = self.solve(yb, xi, guess=xlo)
                    okB = True
                except RuntimeError:
                    xB, okB = np.array(X[k + 1], float), False
                if abs(xB[cu] - xlo[cu]) > jump_min or not okB:    # this wheel's tangency was lost
                    record(lo, "fold", xlo, xB, okB)
                prev[1], prev[-1] = np.nan, np.nan
                if not okB:
                    break
                yc, xc = yb, xB
            if abs(xc[cu] - X[k + 1][cu]) > max(1e-6, jump_min) and abs(yc - y1) < 1e-15:
                record(0.5 * (y0 + y1), "fast", xc, np.array(X[k + 1], float), False)
        return out


# ----------------------------------------------------------------------------------------- KEC nodes

@njit(**JIT)
def _kec_residual7(PL, PR, X, kappa, R, J, cL, cR):
    """Eq 12 (rows 0-5) plus the left-wheel KEC coordinate condition s^k(y, z, φ) = κ (row 6) for the
    unknowns X = (z, φ, u_l, v_l, u_r, v_r, y)."""
    y = X[6]
    x = X[:6]
    R6 = np.empty(6)
    J6 = np.empty((6, 6))
    residual12(PL, PR, y, 0.0, x, R6, J6, cL, cR)
    for i in range(7):
        for j in range(7):
            J[i, j] = 0.0
    for i in range(6):
        R[i] = R6[i]
        for j in range(6):
            J[i, j] = J6[i, j]
    J[0, 6] = 1.0   # dW_Y/dy, left
    J[3, 6] = -1.0  # right (sigma = -1)
    z = X[0]
    phi = X[1]
    d = 1.0 + phi * phi
    num = y + phi * z + phi * phi * PL.L_w
    R[6] = -num / d - kappa
    J[6, 6] = -1.0 / d
    J[6, 0] = -phi / d
    J[6, 1] = -((z + 2.0 * phi * PL.L_w) * d - num * 2.0 * phi) / (d * d)


@njit(**JIT)
def kec_node_newton(PL, PR, X, kappa, maxit, cL, cR):
    """Newton on the 7-equation KEC node system from X (in place): the rigid wheelset solution whose
    left wheel sits at KEC coordinate κ.  Returns (converged, dX/dκ float64[7])."""
    R = np.empty(7)
    J = np.empty((7, 7))
    ok = False
    for it in range(maxit):
        _kec_residual7(PL, PR, X, kappa, R, J, cL, cR)
        dx = solve_dense(J, R)
        step = 0.0
        for k in range(7):
            X[k] -= dx[k]
            step = max(step, abs(dx[k]))
        if step < 1e-15:
            ok = True
            break
        if not np.isfinite(step) or step > 0.05:
            break
    _kec_residual7(PL, PR, X, kappa, R, J, cL, cR)
    e = np.zeros(7)
    e[6] = 1.0
    dX = solve_dense(J, e)
    if not np.all(np.isfinite(R)) or np.max(np.abs(R)) > 1e-12:
        ok = False
    return ok, dX
