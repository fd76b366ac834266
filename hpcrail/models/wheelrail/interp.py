"""Allocation-free numba evaluation of piecewise polynomials and uniform-grid Hermite tables.

* ``pp_eval(x, c, xq)``: a scipy ``PPoly`` (breakpoints ``x[m+1]``, coefficients ``c[K+1, m]``, local
  variable ``t = xq - x[i]``) and its first three derivatives at ``xq``; outside the breakpoints the end
  polynomials are continued (the contact solver never relies on that, its scans stay inside).
* ``hermite5``: quintic Hermite interpolation (values, first and second derivatives at the nodes: C2, error
  O(h⁶)) on a uniform grid ``x0 + k·dx``, returning the value and the first two derivatives of the
  interpolant; outside the grid the end cell's polynomial is continued.  (The LUT and KEC kernels evaluate
  their cubic Hermite interpolants with the basis computed once per cell for all quantities.)

All functions are compiled with ``JIT_NRT_FREE``; arrays are C-contiguous float64.
"""
from __future__ import annotations

import math

from numba import njit

from hpcrail._numba import JIT_NRT_FREE


@njit(**JIT_NRT_FREE)
def pp_interval(x, xq):
    """Index i with x[i] <= xq < x[i+1] (clamped to 0..len(x)-2) by bisection."""
    lo = 0
    hi = x.shape[0] - 2
    if xq <= x[0]:
        return 0
    if xq >= x[hi]:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if x[mid] <= xq:
            lo = mid
        else:
            hi = mid
    return lo


@njit(**JIT_NRT_FREE)
def pp_eval(x, c, xq):
    """Value and first three derivatives ``(f, f', f'', f''')`` of the PPoly (x, c) at ``xq``."""
    i = pp_interval(x, xq)
    t = xq - x[i]
    K = c.shape[0] - 1
    f = 0.0
    f1 = 0.0
    f2 = 0.0
    f3 = 0.0
    # Horner for the value and the derivatives: term c[k] t^(K-k)
    for k in range(K + 1):
        p = K - k
        a = c[k, i]
        f = f * t + a
        if p >= 1:
            f1 = f1 * t + a * p
        if p >= 2:
            f2 = f2 * t + a * p * (p - 1)
        if p >= 3:
            f3 = f3 * t + a * p * (p - 1) * (p - 2)
    return f, f1, f2, f3


@njit(inline="always", **JIT_NRT_FREE)
def grid_cell(n, x0, dx, xq):
    """Cell index i (0..n-2) and local coordinate t = (xq - x_i)/dx of a uniform grid of n nodes."""
    u = (xq - x0) / dx
    i = int(math.floor(u))
    if i < 0:
        i = 0
    elif i > n - 2:
        i = n - 2
    return i, u - i


@njit(inline="always", **JIT_NRT_FREE)
def hermite5(f, d1, d2, n, x0, dx, xq):
    """Quintic Hermite interpolation of nodal values, slopes and second derivatives on the grid
    ``x0 + k*dx`` (C2): returns (value, first derivative, second derivative) at ``xq``."""
    i, t = grid_cell(n, x0, dx, xq)
    p0 = f[i]
    p1 = f[i + 1]
    v0 = d1[i] * dx
    v1 = d1[i + 1] * dx
    a0 = d2[i] * dx * dx
    a1 = d2[i + 1] * dx * dx
    # coefficients of q(t) = c0 + c1 t + ... + c5 t^5 on [0, 1]
    c0 = p0
    c1 = v0
    c2 = 0.5 * a0
    c3 = 10.0 * (p1 - p0) - 6.0 * v0 - 4.0 * v1 - 1.5 * a0 + 0.5 * a1
    c4 = -15.0 * (p1 - p0) + 8.0 * v0 + 7.0 * v1 + 1.5 * a0 - a1
    c5 = 6.0 * (p1 - p0) - 3.0 * (v0 + v1) - 0.5 * (a0 - a1)
    v = c0 + t * (c1 + t * (c2 + t * (c3 + t * (c4 + t * c5))))
    g = c1 + t * (2.0 * c2 + t * (3.0 * c3 + t * (4.0 * c4 + t * 5.0 * c5)))
    s = 2.0 * c2 + t * (6.0 * c3 + t * (12.0 * c4 + t * 20.0 * c5))
    return v, g / dx, s / (dx * dx)
