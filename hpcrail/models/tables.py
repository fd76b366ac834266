"""Look-up tables on uniform grids (O(1) lookups inside the numba kernels that read them).

Piecewise-linear tables given at arbitrary breakpoints are resampled onto a uniform grid whose
spacing divides every breakpoint, which keeps them *exact* (same piecewise-linear function).  When
no such spacing with at most ``max_points`` exists, the finest allowed grid is used and the
resampling error is reported.
"""
from __future__ import annotations

import math

import numpy as np


def common_spacing(breaks: np.ndarray, max_points: int = 20000, rel_tol: float = 1e-9) -> tuple[float, bool]:
    """Largest spacing dividing all offsets ``breaks - breaks[0]`` (exact=True), or the spacing
    giving ``max_points`` points (exact=False).

    ``breaks``: float64[k], increasing, in any unit.
    """
    b = np.asarray(breaks, float)
    span = b[-1] - b[0]
    if span <= 0:
        raise ValueError("breakpoints must span a positive range")
    offs = b[1:] - b[0]
    # try dividing the span by integers: spacing = span / m, m = 1..max_points-1
    # faster: a float gcd with a tolerance
    scale = 1.0
    while True:
        ints = offs * scale
        if np.all(np.abs(ints - np.round(ints)) <= rel_tol * np.maximum(1.0, np.abs(ints))):
            g = 0
            for v in np.round(ints).astype(np.int64):
                g = math.gcd(g, int(v))
            dx = g / scale
            if span / dx + 1 <= max_points:
                return dx, True
            break
        scale *= 10.0
        if scale > 1e9:
            break
    return span / (max_points - 1), False


def resample_uniform(x: np.ndarray, ys: np.ndarray, dx: float) -> np.ndarray:
    """Values of the piecewise-linear functions ``ys[..., :]`` (defined at ``x``) on the grid
    ``x[0] + dx*k``, k = 0..round(span/dx).  Returns float64[..., n]."""
    x = np.asarray(x, float)
    n = int(round((x[-1] - x[0]) / dx)) + 1
    grid = x[0] + dx * np.arange(n)
    grid[-1] = min(grid[-1], x[-1])
    ys = np.asarray(ys, float)
    flat = ys.reshape(-1, ys.shape[-1])
    out = np.stack([np.interp(grid, x, row) for row in flat])
    return out.reshape(ys.shape[:-1] + (n,))


