"""Sparsity of the mixed train's Jacobian ∂f/∂y (issue 27): the LTD band of the consist, one dense local block
per detailed vehicle, and the coupler border between them.

State layout of :mod:`hpcrail.models.mixed.kernel`: the consist's LTD states (B per vehicle, then the notch and
the work integrals) followed by one :mod:`hpcrail.models.vehicle` slice per detailed vehicle.  Entries:

* the LTD pattern of the consist (:func:`~hpcrail.models.ltd.jacobian.ltd_jacobian_pattern`, table-law
  connections; the applied notch in the border);
* per detailed vehicle d at consist index j: its own block (:func:`~hpcrail.models.vehicle.jacobian.vehicle_pattern`);
  its rows read the LTD states K_d: the two connections' deflections (states B·j and B·(j + 1)), the speeds of
  vehicles j − 1, j, j + 1 and vehicle j's brake states (:func:`~hpcrail.models.mixed.kernel.detailed_eval`); the
  LTD speed row of vehicle j is the vehicle's forward acceleration, so it reads the whole slice and K_d.  The
  fill R_d × K_d then lies inside the consist's band (rows and columns within ±B of B·j + 1).

The vehicle slices are the pattern's *local blocks* (:class:`~hpcrail.integrators.linalg.JacobianPattern`):
eliminated one by one into the consist's band (their fill R_d × K_d lies inside it), so the linear algebra costs
the band plus a dense LU per vehicle — linear in the number of detailed vehicles.  The pattern is a superset of
the true dependencies (finite differences over structurally orthogonal column groups need every true entry
declared: an undeclared one would be credited to another column of its group).
"""
from __future__ import annotations

import numpy as np

from hpcrail.models.ltd.jacobian import ltd_jacobian_pattern
from hpcrail.models.vehicle.jacobian import vehicle_pattern


def mixed_jacobian_pattern(P, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple]:
    """``(rows, cols, border, blocks)`` of a mixed train's Jacobian: int64 entry arrays (unique, no −1), the
    border states (the notch) and one int64 array of state indices per detailed vehicle (its slice).

    ``P``: :class:`~hpcrail.models.mixed.kernel.MixedParams`; ``n``: number of states (LTD + slices).
    Raises ``ValueError`` if the slices do not tile the states after the LTD part."""
    L = P.ltd
    B, N = L.block, L.n_veh
    n_ltd = int(P.det_off[0]) if P.det_off.size else n
    lr, lc, border = ltd_jacobian_pattern(L, n_ltd)
    ok = (lr >= 0) & (lc >= 0)
    rows = [lr[ok]]
    cols = [lc[ok]]
    blocks = []
    end = n_ltd
    for d in range(P.det_j.size):
        vp = P.vehs[d]
        off = int(P.det_off[d])
        if off != end:
            raise ValueError(f"detailed vehicle {d}: its slice starts at {off}, expected {end}")
        m = int(vp.n_state)
        end = off + m
        j = int(P.det_j[d])
        vr, vc = vehicle_pattern(vp, off)
        rows.append(vr)
        cols.append(vc)
        K = list(range(B * j, B * j + B))          # its front connection's deflection, its speed, brake states
        if j > 0:
            K.append(B * (j - 1) + 1)               # the front neighbour's speed
        if j < N - 1:
            K += [B * (j + 1), B * (j + 1) + 1]     # the rear connection's deflection, the rear neighbour's speed
        K = np.array(sorted(K), np.int64)
        sl = np.arange(off, off + m, dtype=np.int64)
        rows.append(np.repeat(sl, K.size))          # the vehicle's rows read its neighbours' LTD states
        cols.append(np.tile(K, m))
        r = B * j + 1                               # its LTD speed row = its forward acceleration
        rows.append(np.full(m + K.size, r, np.int64))
        cols.append(np.concatenate([sl, K]))
        blocks.append(sl)
    if end != n:
        raise ValueError(f"the states end at {end}, expected {n}")
    r = np.concatenate(rows).astype(np.int64)
    c = np.concatenate(cols).astype(np.int64)
    key = np.unique(r * n + c)
    return key // n, key % n, border, tuple(blocks)


__all__ = ["mixed_jacobian_pattern"]
