"""Kernels of the pneumatic-brake train integrated in two passes (issue 24): the brake system alone, then the
motion alone.

With a time-based driver's schedule the pneumatic brake's states do not depend on the vehicles' motion (the brake
pipe, the valves, reservoirs and cylinders see the driver's commands, the radio/ECP/EOT delays and the separation
time, never a speed or a position: :mod:`hpcrail.models.brakes.kernel`), and the motion reads the brake only
through each vehicle's cylinder and independent-brake pressures (:func:`~hpcrail.models.brakes.kernel.block_force`).
The system is block triangular, so it can be integrated exactly in two passes (the orchestration and its
conditions: :mod:`hpcrail.kinds.ltd.two_pass`):

1. **brake pass** — the full state and Jacobian pattern with the motion's derivatives and Jacobian slots set to
   zero (the vehicles stand where they are; no brake equation reads them).  After every accepted step
   :func:`brake_record` stores, per vehicle, the three brake states the motion pass reads (the brake-pipe pressure
   at the vehicle, the cylinder and the independent-brake state) and their time derivatives.
2. **motion pass** — only the motion states (extension and speed per vehicle, the applied notches and the work
   integrals: ``motion`` indices), the shipped right-hand side, Jacobian and observer of the pneumatic train
   evaluated on a compact state (5 values per vehicle) whose brake states are the brake pass's piecewise cubic
   Hermite interpolant at t: the same arithmetic on the same values as on the full state (:func:`fill`; bitwise,
   tests/test_brakes.py).  The observer is the one-pass run's (coupler envelopes and the brake metrics of
   :func:`~hpcrail.models.brakes.kernel.brake_observe`, which read only those states).

``P`` of the brake pass: ``(p, motion, zero, dydt_scratch, rec)`` with ``rec`` int64[3·N] the full-state indices
recorded (pipe, cylinder, independent brake of every vehicle) and ``zero`` the Jacobian slots of the motion rows.
``P`` of the motion pass: ``(pm, ys, ds, jac_full, sel, smap, table, cursor, ridx, rcol, oidx, ocol)``: the
callbacks work on a compact state ``ys`` (5 values per vehicle: extension or the head's position, speed, brake
pipe at the valve, cylinder, independent brake; then the tail) with the parameters ``pm`` of that layout
(:func:`hpcrail.kinds.ltd.two_pass.compact_layout`); ``ds`` its derivative; ``jac_full`` the full pattern's values
and ``sel`` its slots of the motion pattern; ``smap`` the compact index of every motion state; ``table``
float64[K, 1 + 6N] the records (t; the 3N values; their 3N derivatives), ``cursor`` int64[1] the interval last
used; ``ridx``/``rcol`` the compact indices and record columns interpolated for the right-hand side and the
Jacobian (every cylinder, the independent brake of the vehicles that have one), ``oidx``/``ocol`` those the
observer adds (the brake pipe).  The integrator passes ``P`` flattened to every callback, so it holds one parameter
tuple (the compact one), not the full layout's too: with both the motion pass cost 14 % more (measured, stop 46).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from hpcrail._numba import JIT, JIT_NRT_FREE
from hpcrail.models.brakes.kernel import brake_eval_range, brake_jac_range
from hpcrail.models.ltd.jacobian import _jac_range, _no_noninertial_jac, ltd_jac_tail
from hpcrail.models.ltd.kernel import (
    _store_totals, driver_command, ltd_eval_range_pneumatic, ltd_observe_pneumatic, schedule_index,
)


# ---------------------------------------------------------------------------------------------- brake pass
@njit(**JIT_NRT_FREE)
def brake_pass_rhs(t, y, P, dydt):
    """The brake rows of the pneumatic train's right-hand side; the motion rows zero (integrator contract)."""
    p, motion, _zero, _d, _rec = P
    brake_eval_range(t, y, p, dydt, np.int64(0), p.n_veh)
    for i in motion:
        dydt[i] = 0.0


@njit(**JIT_NRT_FREE)
def brake_pass_jac(t, y, P, vals):
    """The brake rows of the pneumatic train's Jacobian (its pattern's slots); the motion rows' slots zero."""
    p, _motion, zero, _d, _rec = P
    for k in zero:
        vals[k] = 0.0
    brake_jac_range(t, y, p, vals, np.int64(0), p.n_veh)


@njit(**JIT_NRT_FREE)
def brake_record(t, y, P, acc):
    """Observer of the brake pass: append (t, the recorded states, their derivatives) to ``acc`` =
    [count, capacity, records...] (count −1 once the capacity is exceeded: the caller integrates again with more)."""
    p, _motion, _zero, d, rec = P
    m = rec.size
    k = int(acc[0])
    if k < 0:
        return
    if k >= int(acc[1]):
        acc[0] = -1.0
        return
    brake_eval_range(t, y, p, d, np.int64(0), p.n_veh)
    o = 2 + k * (1 + 2 * m)
    acc[o] = t
    for i in range(m):
        acc[o + 1 + i] = y[rec[i]]
        acc[o + 1 + m + i] = d[rec[i]]
    acc[0] = k + 1.0


# --------------------------------------------------------------------------------------------- motion pass
@njit(inline="always", **JIT)
def _hermite(t, tab, cursor):
    """``(k, h00, h10, h01, h11)``: the brake pass's step k that contains t (``cursor`` int64[1] the interval last
    used, updated) and the cubic Hermite weights of the values and derivatives at its two ends (constant outside
    the table)."""
    K = tab.shape[0]
    k = cursor[0]
    if k > K - 2:
        k = K - 2
    while k > 0 and tab[k, 0] > t:
        k -= 1
    while k < K - 2 and tab[k + 1, 0] <= t:
        k += 1
    cursor[0] = k
    t0 = tab[k, 0]
    h = tab[k + 1, 0] - t0
    s = (t - t0) / h
    if s < 0.0:
        s = 0.0
    if s > 1.0:
        s = 1.0
    return k, (1.0 + 2.0 * s) * (1.0 - s) ** 2, s * (1.0 - s) ** 2 * h, s * s * (3.0 - 2.0 * s), s * s * (s - 1.0) * h


@njit(inline="always", **JIT)
def _interpolate(y, idx, col, tab, k, h00, h10, h01, h11):
    """``y[idx[i]]`` = the Hermite interpolant of record column ``col[i]`` on the brake pass's step k."""
    m = (tab.shape[1] - 1) // 2
    for i in range(idx.size):
        c = col[i]
        y[idx[i]] = (h00 * tab[k, 1 + c] + h10 * tab[k, 1 + m + c] + h01 * tab[k + 1, 1 + c]
                     + h11 * tab[k + 1, 1 + m + c])


@njit(**JIT_NRT_FREE)
def fill(t, ym, motion, rec, tab, cursor, y):
    """The full state at t (for checks: the motion pass itself works on the compact layout): write the motion
    states ``ym`` at ``motion`` and every recorded brake state ``rec`` (the record table's columns in order) into
    ``y`` float64[n] by the interpolation the motion pass uses."""
    for i in range(motion.size):
        y[motion[i]] = ym[i]
    k, h00, h10, h01, h11 = _hermite(t, tab, cursor)
    m = rec.size
    for c in range(m):
        y[rec[c]] = (h00 * tab[k, 1 + c] + h10 * tab[k, 1 + m + c] + h01 * tab[k + 1, 1 + c]
                     + h11 * tab[k + 1, 1 + m + c])


@njit(inline="always", **JIT)
def _compact(t, ym, P, observer):
    """Write the compact state ``ys`` at t: the motion states and the interpolated cylinder and independent-brake
    states (and the brake pipe at every vehicle when ``observer``)."""
    ys, smap, tab, cursor = P[1], P[5], P[6], P[7]
    for i in range(smap.size):
        ys[smap[i]] = ym[i]
    k, h00, h10, h01, h11 = _hermite(t, tab, cursor)
    _interpolate(ys, P[8], P[9], tab, k, h00, h10, h01, h11)
    if observer:
        _interpolate(ys, P[10], P[11], tab, k, h00, h10, h01, h11)


@njit(**JIT_NRT_FREE)
def motion_rhs(t, ym, P, dm):
    """The motion rows of the pneumatic train's right-hand side (integrator contract): ``ltd_rhs_pneumatic``'s
    vehicle loop on the compact state (:func:`_compact`) with its parameters ``pm``."""
    pm, ys, ds, smap = P[0], P[1], P[2], P[5]
    _compact(t, ym, P, False)
    notch, cmd_notch, cmd_brake = driver_command(t, ys, pm, ds)
    w_t, w_r, w_b, w_c = ltd_eval_range_pneumatic(t, ys, pm, ds, pm.no_record, False, np.int64(0), pm.n_veh, ys[0],
                                                  notch, cmd_brake)
    _store_totals(pm, ds, pm.no_record, False, w_t, w_r, w_b, w_c, cmd_notch, cmd_brake)
    for i in range(smap.size):
        dm[i] = ds[smap[i]]


@njit(**JIT_NRT_FREE)
def motion_jac(t, ym, P, vals):
    """The motion rows of ``ltd_jac_pneumatic`` on the compact state, in the motion pattern's slots."""
    pm, ys, vfull, sel = P[0], P[1], P[3], P[4]
    _compact(t, ym, P, False)
    ic = schedule_index(pm, t, ys)
    _jac_range(t, ys, pm, vfull, np.int64(0), pm.n_veh, ys[0], ys[pm.i_notch], pm.sched_brake[ic],
               _no_noninertial_jac, True)
    ltd_jac_tail(t, ys, pm, vfull)
    for k in range(sel.size):
        vals[k] = vfull[sel[k]]


@njit(**JIT_NRT_FREE)
def motion_observe(t, ym, P, acc):
    """The one-pass run's observer (``ltd_observe_pneumatic``: envelopes, brake metrics) on the compact state."""
    _compact(t, ym, P, True)
    ltd_observe_pneumatic(t, P[1], P[0], acc)


__all__ = ["brake_pass_rhs", "brake_pass_jac", "brake_record", "fill", "motion_rhs", "motion_jac", "motion_observe"]
