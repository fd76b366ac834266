"""Piecewise-constant command schedules: the index of the command in force (numba helper shared by the
LTD driver and the pneumatic brake's delayed commands)."""
from __future__ import annotations

from numba import njit

from hpcrail._numba import JIT


@njit(inline="always", **JIT)
def last_le(xs, x):
    """Largest index i with ``xs[i] <= x`` for ``xs`` float64[S] sorted ascending with ``xs[0] <= x`` (a
    sentinel: the schedules start with −1e300); binary search, O(log S)."""
    lo = 0
    hi = xs.size - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if xs[mid] <= x:
            lo = mid
        else:
            hi = mid - 1
    return lo
