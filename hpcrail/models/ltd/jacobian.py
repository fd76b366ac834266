"""Sparsity pattern of the LTD Jacobian ∂f/∂y (and, below, its analytic values).

The state layout of :mod:`hpcrail.models.ltd.build` is vehicle-major, so ∂f/∂y is banded in the
natural order (lower = upper = B, B the block size) except for the applied-notch column (every
locomotive's tractive force depends on it), which the integrators keep as a dense border.

Values are written per vehicle into ``S`` fixed slots (``S = 8`` without, 13 with the air brake),
vehicle j's slots at ``vals[S*j : S*j + S]``, then the tail slots:

====  ===========================  ===================================================
slot  entry (row, column)          meaning
====  ===========================  ===================================================
0     (e_j, v_{j−1}) / (s_1, v_1)  extension rate ė_j = v_{j−1} − v_j (j ≥ 1); ṡ_1 = v_1
1     (e_j, v_j)                   (j ≥ 1)
2     (v_j, v_j)                   coupler damping, resistance, traction-speed slope
3     (v_j, v_{j−1})               front connection rate (j ≥ 1)
4     (v_j, e_j)                   front connection stiffness (j ≥ 1)
5     (v_j, e_{j+1})               rear connection stiffness (j ≤ N−2)
6     (v_j, v_{j+1})               rear connection rate (j ≤ N−2)
7     (v_j, notch)                 tractive force per notch (locomotives)
8     (v_j, p_j)                   air brake: shoe force per cylinder pressure
9     (b_j, b_j)                   brake-pipe signal
10    (b_j, b_{j−1})               signal from upstream (j ≥ 1)
11    (p_j, b_j)                   cylinder pressure lag
12    (p_j, p_j)
====  ===========================  ===================================================

tail: (notch, notch), (notch, s_1) (distance-based schedule), then the diagonal of the four work
integrals (their rows depend on the whole train but no state depends on them: leaving their
off-diagonal entries out costs the Newton iteration nothing, see :func:`ltd_jacobian_pattern`).

Neglected everywhere: the dependence of each vehicle's grade and curvature on its position (the
lead position and every extension ahead of it).  It is zero except while a vehicle straddles a
grade or curvature change, where it is at most m·g·Δi/L ≈ 1e3 N/m against coupler stiffnesses of
1e6-1e8 N/m.
"""
from __future__ import annotations

import numpy as np

N_SLOTS_PLAIN = 8
N_SLOTS_AIR = 13
N_TAIL = 6


def slots_per_vehicle(p) -> int:
    return N_SLOTS_AIR if p.air_brake else N_SLOTS_PLAIN


def ltd_jacobian_pattern(p, n_states: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, cols, border)`` of the LTD Jacobian for parameters ``p`` (:class:`LTDParams`).

    ``rows``/``cols``: int64[S·N + 6] (−1 for slots that do not exist for a vehicle);
    ``border``: int64[1], the applied-notch state.  The work-integral rows keep only their
    diagonal (zero): nothing depends on those states, so a Newton iteration converges without
    their off-diagonal entries (they lag one iteration behind the train states).
    """
    N, B = p.n_veh, p.block
    S = slots_per_vehicle(p)
    rows = -np.ones(S * N + N_TAIL, np.int64)
    cols = -np.ones(S * N + N_TAIL, np.int64)
    inotch = p.i_notch
    for j in range(N):
        b = B * j
        k = S * j

        def put(slot, r, c):
            rows[k + slot] = r
            cols[k + slot] = c

        if j == 0:
            put(0, 0, 1)
        else:
            put(0, b, b - B + 1)
            put(1, b, b + 1)
            put(3, b + 1, b - B + 1)
            put(4, b + 1, b)
        put(2, b + 1, b + 1)
        if j < N - 1:
            put(5, b + 1, b + B)
            put(6, b + 1, b + B + 1)
        if p.loco_type[j] >= 0:
            put(7, b + 1, inotch)
        if p.air_brake:
            put(8, b + 1, b + 3)
            put(9, b + 2, b + 2)
            if j > 0:
                put(10, b + 2, b - B + 2)
            put(11, b + 3, b + 2)
            put(12, b + 3, b + 3)
    k = S * N
    rows[k], cols[k] = inotch, inotch
    if p.basis == 1:
        rows[k + 1], cols[k + 1] = inotch, 0
    if p.i_energy >= 0:
        for q in range(4):
            rows[k + 2 + q] = cols[k + 2 + q] = p.i_energy + q
    assert n_states == B * N + 1 + (4 if p.i_energy >= 0 else 0)
    return rows, cols, np.array([inotch], np.int64)
