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
   evaluated on a full state whose recorded brake states are the brake pass's piecewise cubic Hermite interpolant
   at t (:func:`fill`).  The observer is the one-pass run's (coupler envelopes and the brake metrics of
   :func:`~hpcrail.models.brakes.kernel.brake_observe`, which read only those states).

``P`` of the brake pass: ``(p, motion, zero, dydt_scratch, rec)`` with ``rec`` int64[3·N] the full-state indices
recorded (pipe, cylinder, independent brake of every vehicle) and ``zero`` the Jacobian slots of the motion rows.
``P`` of the motion pass: ``(p, motion, y_full, dydt_full, jac_full, sel, rec, table, cursor)``: ``y_full``
float64[n] scratch (its other brake states stay at their initial values and are never read), ``sel`` the full
pattern's slots of the motion pattern, ``table`` float64[K, 1 + 6N] the records (t; the 3N values; their 3N
derivatives), ``cursor`` int64[1] the interval last used.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from hpcrail._numba import JIT_NRT_FREE
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
@njit(**JIT_NRT_FREE)
def fill(t, ym, P):
    """Write the motion pass's full state at t into ``P``'s ``y_full``: the motion states ``ym``, the recorded brake
    states by cubic Hermite interpolation of the brake pass's records (values and derivatives at both ends of the
    brake pass's step that contains t: the same order as the brake pass's BDF; constant outside the table)."""
    _p, motion, yfull, _dfull, _vfull, _sel, rec, tab, cursor = P
    for i in range(motion.size):
        yfull[motion[i]] = ym[i]
    m = rec.size
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
    h00 = (1.0 + 2.0 * s) * (1.0 - s) ** 2
    h10 = s * (1.0 - s) ** 2 * h
    h01 = s * s * (3.0 - 2.0 * s)
    h11 = s * s * (s - 1.0) * h
    for i in range(m):
        yfull[rec[i]] = (h00 * tab[k, 1 + i] + h10 * tab[k, 1 + m + i] + h01 * tab[k + 1, 1 + i]
                         + h11 * tab[k + 1, 1 + m + i])


@njit(**JIT_NRT_FREE)
def motion_rhs(t, ym, P, dm):
    """The motion rows of the pneumatic train's right-hand side on :func:`fill`'s state (integrator contract)."""
    p, motion, y, dfull, _vfull, _sel, _rec, _tab, _cursor = P
    fill(t, ym, P)
    notch, cmd_notch, cmd_brake = driver_command(t, y, p, dfull)
    w_t, w_r, w_b, w_c = ltd_eval_range_pneumatic(t, y, p, dfull, p.no_record, False, np.int64(0), p.n_veh, y[0],
                                                  notch, cmd_brake)
    _store_totals(p, dfull, p.no_record, False, w_t, w_r, w_b, w_c, cmd_notch, cmd_brake)
    for i in range(motion.size):
        dm[i] = dfull[motion[i]]


@njit(**JIT_NRT_FREE)
def motion_jac(t, ym, P, vals):
    """The motion rows of ``ltd_jac_pneumatic`` on :func:`fill`'s state, in the motion pattern's slots."""
    p, _motion, y, _dfull, vfull, sel, _rec, _tab, _cursor = P
    fill(t, ym, P)
    ic = schedule_index(p, t, y)
    _jac_range(t, y, p, vfull, np.int64(0), p.n_veh, y[0], y[p.i_notch], p.sched_brake[ic], _no_noninertial_jac,
               True)
    ltd_jac_tail(t, y, p, vfull)
    for k in range(sel.size):
        vals[k] = vfull[sel[k]]


@njit(**JIT_NRT_FREE)
def motion_observe(t, ym, P, acc):
    """The one-pass run's observer (``ltd_observe_pneumatic``: envelopes, brake metrics) on :func:`fill`'s state."""
    p = P[0]
    fill(t, ym, P)
    ltd_observe_pneumatic(t, P[2], p, acc)


__all__ = ["brake_pass_rhs", "brake_pass_jac", "brake_record", "fill", "motion_rhs", "motion_jac", "motion_observe"]
