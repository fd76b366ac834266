"""Hertzian normal contact: ellipse coefficients m, n, r from complete elliptic integrals, semi-axes from
the curvature sums and the normal load, contact stiffness.

Relations (Johnson, *Contact Mechanics*, 1985, §4.2; Timoshenko & Goodier): the separation of the two
surfaces is h = A x² + B y² with the curvature sums A (rolling direction x) and B (lateral y).  With the
eccentricity e of the ellipse, K(e), E(e) the complete elliptic integrals of the first and second kind:

    (larger/smaller curvature sum) = [E/(1-e²) - K] / (K - E),   cos θ = |B - A| / (A + B)
    m³ = 2 E / (π (1 - e²)),   n = m √(1 - e²),   r = 2 K / (π m)
    c = [3 N (k1 + k2) π / (4 (A + B))]^(1/3),   k_i = (1 - ν_i²) / (π E_i)
    major semi-axis m c (along the *smaller* curvature sum), minor semi-axis n c
    approach δ = r [(3 π N (k1 + k2) / 4)² (A + B)]^(1/3)   ⇒   N = K_H δ^1.5,
    K_H = 4 / (3 π (k1 + k2) r^1.5 √(A + B))

Wheel and rail share E and ν (paper 004: E = 2.1e11 Pa, ν = 0.28), so 3π(k1 + k2)/4 = 3(1 - ν²)/(2E).

Off-line: :func:`hertz_mnr` (scipy ``ellipk``/``ellipe``, root of the curvature ratio).  On-line:
:func:`hertz_ellipse` interpolates m, n, r tabulated on a uniform grid of ln(ratio) (default 6001 points
up to ratio 1e6: interpolation error below 1e-6 relative) — ``JIT_NRT_FREE``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.optimize import brentq
from scipy.special import ellipe, ellipk

from hpcrail._numba import JIT_NRT_FREE


def _ratio_of_e2(e2: float) -> float:
    K = ellipk(e2)
    E = ellipe(e2)
    return (E / (1.0 - e2) - K) / (K - E)


def hertz_mnr(ratio: float) -> tuple[float, float, float, float]:
    """Hertz coefficients (m, n, r, e²) for the curvature-sum ratio ``ratio`` = larger/smaller >= 1.

    ``ratio`` = 1 gives the circle (m = n = 1, r = 1).  Raises ValueError for ratio < 1.
    """
    if ratio < 1.0:
        raise ValueError(f"curvature-sum ratio must be >= 1 (larger/smaller), got {ratio}")
    if ratio < 1.0 + 1e-9:
        e2 = 0.0
    else:
        # ratio(e2) grows monotonically from 1 (e2 -> 0) to infinity (e2 -> 1); below e2 = 1e-9 the
        # difference K - E loses its digits (ratio - 1 is then below 1e-9 anyway)
        lo, hi = 1e-9, 1.0 - 1e-16
        e2 = brentq(lambda q: _ratio_of_e2(q) - ratio, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=500)
    K = ellipk(e2)
    E = ellipe(e2)
    m = (2.0 * E / (math.pi * (1.0 - e2))) ** (1.0 / 3.0)
    n = m * math.sqrt(1.0 - e2)
    r = 2.0 * K / (math.pi * m)
    return float(m), float(n), float(r), float(e2)


def theta_of_ratio(ratio: float) -> float:
    """Hertz angle θ [rad], cos θ = (ratio - 1)/(ratio + 1)."""
    return math.acos((ratio - 1.0) / (ratio + 1.0))


class HertzParams(NamedTuple):
    """Tabulated Hertz coefficients for the kernels: m, n, r float64[n] on ln(ratio) = k·d (k = 0..n-1);
    ``E`` [Pa] and ``nu`` of wheel and rail (same material); ``c3`` = 3(1-ν²)/(2E) [1/Pa]."""

    n: int
    d: float
    m: np.ndarray
    nn: np.ndarray
    r: np.ndarray
    E: float
    nu: float
    c3: float


def hertz_params(E: float = 2.1e11, nu: float = 0.28, ratio_max: float = 1e6, n: int = 6001) -> HertzParams:
    """Table of m, n, r for the on-line kernels (material E [Pa], ν of both bodies)."""
    if not (E > 0 and 0.0 <= nu < 0.5):
        raise ValueError(f"material: E must be > 0 and 0 <= nu < 0.5, got E={E}, nu={nu}")
    lr = np.linspace(0.0, math.log(ratio_max), n)
    tab = np.array([hertz_mnr(math.exp(v)) for v in lr])
    return HertzParams(n=n, d=float(lr[1] - lr[0]), m=np.ascontiguousarray(tab[:, 0]),
                       nn=np.ascontiguousarray(tab[:, 1]), r=np.ascontiguousarray(tab[:, 2]), E=float(E),
                       nu=float(nu), c3=3.0 * (1.0 - nu * nu) / (2.0 * E))


#: smallest curvature sum accepted on-line [1/m]: conformal (B <= 0, non-Hertzian) contacts are clamped
CURV_MIN = 1e-3


@njit(**JIT_NRT_FREE)
def hertz_coefficients(H, A, B):
    """(m, n, r) for the curvature sums A, B [1/m] (linear interpolation in ln(larger/smaller))."""
    a = max(A, CURV_MIN)
    b = max(B, CURV_MIN)
    lr = math.log(max(a, b) / min(a, b))
    u = lr / H.d
    i = int(u)
    if i >= H.n - 1:
        return H.m[H.n - 1], H.nn[H.n - 1], H.r[H.n - 1]
    w = u - i
    return (H.m[i] + w * (H.m[i + 1] - H.m[i]), H.nn[i] + w * (H.nn[i + 1] - H.nn[i]),
            H.r[i] + w * (H.r[i + 1] - H.r[i]))


@njit(**JIT_NRT_FREE)
def hertz_ellipse(H, A, B, N):
    """Hertz contact of wheel and rail: semi-axes a (rolling direction) and b (lateral) [m], approach δ [m]
    and the contact stiffness K_H [N/m^1.5] (N = K_H δ^1.5) for curvature sums A, B [1/m] and normal load
    N [N] (N <= 0: a = b = δ = 0).  Curvature sums below CURV_MIN (conformal contact) are clamped."""
    a_ = max(A, CURV_MIN)
    b_ = max(B, CURV_MIN)
    m, n, r = hertz_coefficients(H, a_, b_)
    s = a_ + b_
    KH = 1.0 / (H.c3 * r ** 1.5 * math.sqrt(s))
    if N <= 0.0:
        return 0.0, 0.0, 0.0, KH
    c = np.cbrt(H.c3 * N / s)
    delta = r * np.cbrt(H.c3 * H.c3 * N * N * s)
    if a_ <= b_:  # major axis along the rolling direction
        return m * c, n * c, delta, KH
    return n * c, m * c, delta, KH


# ------------------------------------------------------------------------------------------ fused table

class ContactCoefParams(NamedTuple):
    """Hertz semi-axis coefficients and Kalker coefficients tabulated together on ln(B/A) = lo + k·d
    (k = 0..n-1), so that one logarithm and one cube root give a, b, C11, C22, C23 on-line.

    ``tab`` float64[n, 5], columns (ma, mb, C11, C22, C23): a = ma·c (rolling direction), b = mb·c with
    c = (c3 N/(A+B))^(1/3), and the Kalker coefficients at that a/b (Table E.3 and Kalker's asymptotes, 1/50..50);
    ``c3`` = 3(1-ν²)/(2E) [1/Pa].  One array keeps the argument small for the kernels.
    """

    n: int
    lo: float
    d: float
    tab: np.ndarray
    c3: float


def contact_coef_params(E: float = 2.1e11, nu: float = 0.28, ratio_max: float = 1e6, n_half: int = 3000):
    """Build the fused Hertz/Kalker table for material (E [Pa], ν)."""
    from hpcrail.models.wheelrail.kalker import kalker_coefficients, kalker_params

    Hp = hertz_params(E, nu, ratio_max, n_half + 1)
    Kc = kalker_params(nu)
    lr = np.linspace(-math.log(ratio_max), math.log(ratio_max), 2 * n_half + 1)
    tab = np.empty((lr.size, 5))
    for i, v in enumerate(lr):
        j = min(int(round(abs(v) / Hp.d)), Hp.n - 1)
        m, nn = Hp.m[j], Hp.nn[j]
        ma, mb = (m, nn) if v >= 0.0 else (nn, m)  # B >= A: major axis in the rolling direction
        tab[i, 0], tab[i, 1] = ma, mb
        tab[i, 2:] = kalker_coefficients(Kc, ma / mb)
    return ContactCoefParams(n=lr.size, lo=float(lr[0]), d=float(lr[1] - lr[0]), tab=np.ascontiguousarray(tab),
                             c3=Hp.c3)


@njit(**JIT_NRT_FREE)
def hertz_kalker(HK, A, B, N):
    """Semi-axes a (rolling), b (lateral) [m] and Kalker C11, C22, C23 for curvature sums A, B [1/m] and
    normal load N [N], from the fused table (one log, one cube root).  N <= 0 gives a = b = 0."""
    a_ = max(A, CURV_MIN)
    b_ = max(B, CURV_MIN)
    u = (math.log(b_ / a_) - HK.lo) / HK.d
    if u <= 0.0:
        i = 0
        w = 0.0
    elif u >= HK.n - 1:
        i = HK.n - 2
        w = 1.0
    else:
        i = int(u)
        w = u - i
    t0 = HK.tab[i]
    t1 = HK.tab[i + 1]
    ma = t0[0] + w * (t1[0] - t0[0])
    mb = t0[1] + w * (t1[1] - t0[1])
    c11 = t0[2] + w * (t1[2] - t0[2])
    c22 = t0[3] + w * (t1[3] - t0[3])
    c23 = t0[4] + w * (t1[4] - t0[4])
    if N <= 0.0:
        return 0.0, 0.0, c11, c22, c23
    c = np.cbrt(HK.c3 * N / (a_ + b_))
    return ma * c, mb * c, c11, c22, c23
