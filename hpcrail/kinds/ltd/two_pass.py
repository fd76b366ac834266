"""A pneumatic-brake train integrated in two passes (``air_brake.pneumatic.passes: two``; issue 24).

With a time-based driver's schedule the brake system (brake pipe, valves, reservoirs, cylinders, driver's brake
valves, EOT, ECP) does not depend on the motion, and the motion reads the brake only through every vehicle's
cylinder and independent-brake pressures: the system is block triangular.  :func:`integrate_two_pass` integrates
it exactly so (the kernels: :mod:`hpcrail.models.ltd.two_pass`):

1. the brake system alone, restarted at every brake breakpoint (:func:`brake_breakpoints`: a multistep method
   that has grown its step in the quiet charged state must not step over a command), recording at every accepted
   step each vehicle's brake-pipe, cylinder and independent-brake states and their derivatives;
2. the motion alone (2 states per vehicle and the notch/work tail: 492 instead of 3 651 states on train 4), with
   those states interpolated (cubic Hermite on the brake pass's steps) and the one-pass run's observer.

The error norm of the one-pass run is a root mean square over all n states, so there the motion's error counts
with weight √(n_motion/n); the motion pass runs at the scenario's rtol and atol times √(n/n_motion), so that the
same settings bound the motion's error as the one-pass run does (measured: docs/performance.md, issue 24).  The
brake pass runs at the scenario's settings.  The sampled states are the brake pass's brake states and the
motion pass's motion states; the step statistics are the sums of both passes.  Measured on ``train4_pneumatic``
(``python benchmarks/brakes_two_pass.py``): the coupler envelopes within 0.29 % of the rtol 1e-7 reference, as
the one-pass run, at 0.3 of its CPU time.
"""
from __future__ import annotations

import math

import numpy as np

from hpcrail.integrators import Problem, integrate
from hpcrail.integrators.contract import STAT_NAMES, Solution, Status
from hpcrail.integrators.linalg import JacobianPattern
from hpcrail.models.brakes.layout import (
    S_CV, S_ECP, S_ECP_DELAY, S_EOT_DELAY, S_EOT_J, S_OBC, S_OIND, S_SEP_J, S_SEP_T, S_SEP_TOPEN, V_DELAY, V_IND,
)
from hpcrail.models.ltd.two_pass import (
    brake_pass_jac, brake_pass_rhs, brake_record, motion_jac, motion_observe, motion_rhs,
)

#: memory [bytes] of the brake pass's record buffer to start with (the records of a segment between two brake
#: breakpoints; a segment that needs more is integrated again with twice as many): 2 741 records on train 4
RECORD_BYTES0 = 32e6


def uses_two_passes(sc) -> bool:
    """True if scenario ``sc`` runs the pneumatic brake in two passes (``air_brake.pneumatic.passes: two``; the
    configuration's checks admit it only with a time-based schedule, a single-rate method and no blocks)."""
    from hpcrail.kinds.ltd.brakes import is_pneumatic

    return is_pneumatic(sc) and sc.air_brake.pneumatic.passes == "two"


def layout(p, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(motion, rec)``: the full-state indices of the motion states (extension and speed of every vehicle, the
    tail from ``block·N``) and of the brake states the motion pass reads (int64[3N]: the brake pipe at each vehicle,
    its cylinder, its independent-brake state)."""
    B, N = p.block, p.n_veh
    j = B * np.arange(N)
    motion = np.sort(np.concatenate([j, j + 1, np.arange(B * N, n)])).astype(np.int64)
    lv = 2 + 2 * int(p.pn_s[S_CV])
    rec = np.concatenate([j + lv, j + int(p.pn_s[S_OBC]), j + int(p.pn_s[S_OIND])]).astype(np.int64)
    return motion, rec


def compact_layout(p, n: int, motion: np.ndarray):
    """The motion pass's layout (:mod:`hpcrail.models.ltd.two_pass`): 5 values per vehicle (extension or the
    head's position, speed, brake pipe at the valve, cylinder state, independent-brake state) then the tail.
    Returns ``(pm, smap, (ridx, rcol), (oidx, ocol))``: ``pm`` the parameters ``p`` of that layout (block 5, the
    tail's indices and the brake-state offsets moved), ``smap`` int64[len(motion)] the layout's index of every
    motion state, ``ridx``/``rcol`` the layout's indices of the states the right-hand side and the Jacobian read
    (every cylinder, the independent brake of the vehicles that have one) and their columns among the brake pass's
    records (``layout``'s ``rec``: pipe, cylinder, independent brake of every vehicle), ``oidx``/``ocol`` those the
    observer reads besides (the pipe)."""
    B, N = p.block, p.n_veh
    W = 5
    smap = np.where(motion < B * N, W * (motion // B) + motion % B, motion - B * N + W * N).astype(np.int64)
    pn_s = p.pn_s.copy()
    pn_s[S_CV], pn_s[S_OBC], pn_s[S_OIND] = 0.0, 3.0, 4.0     # the pipe at 2 + 2·S_CV
    shift = W * N - B * N
    pm = p._replace(block=W, i_notch=p.i_notch + shift, i_energy=p.i_energy + shift if p.i_energy >= 0 else -1,
                    pn_s=pn_s)
    j = np.arange(N)
    ind = np.flatnonzero(p.pn_v[:, V_IND] != 0.0)
    i64 = lambda *a: np.concatenate(a).astype(np.int64)  # noqa: E731
    return pm, smap, (i64(W * j + 3, W * ind + 4), i64(N + j, 2 * N + ind)), (i64(W * j + 2), i64(j))


def brake_breakpoints(p, t_final: float) -> np.ndarray:
    """Times [s] in (0, t_final) at which an input of the brake system changes: every change of the brake command
    (service, emergency, independent) after each device's delay (none, a remote brake valve's radio delay, ECP,
    EOT), and the separation's start and full opening."""
    s, x, sch = p.pn_s, p.sched_x, p.pn_sched
    delays = {0.0} | {float(d) for d in p.pn_v[:, V_DELAY]}
    if s[S_ECP] != 0.0:
        delays.add(float(s[S_ECP_DELAY]))
    if s[S_EOT_J] >= 0.0:
        delays.add(float(s[S_EOT_DELAY]))
    bps = set()
    for k in range(1, x.size):
        if np.any(sch[k] != sch[k - 1]):
            bps |= {float(x[k]) + d for d in delays}
    if s[S_SEP_J] >= 0.0:
        bps |= {float(s[S_SEP_T]), float(s[S_SEP_T] + s[S_SEP_TOPEN])}
    return np.array(sorted(b for b in bps if 0.0 < b < t_final), dtype=float)


def _add_stats(total: dict, stats: dict) -> None:
    for k in STAT_NAMES:
        total[k] = total.get(k, 0) + int(stats.get(k, 0))


def brake_pass(prob: Problem, method: str, t_out: np.ndarray, t_final: float, kwargs: dict):
    """Pass 1: the brake system of the one-pass problem ``prob`` alone from 0 to ``t_final`` [s] with integrator
    ``method`` and ``kwargs`` of :func:`hpcrail.integrators.integrate`.  Returns ``(Y, y_final, table, stats, status,
    t_reached, wall, compile)``: ``Y`` float64[k, n] the states at ``t_out`` [s] and ``y_final`` float64[n] the last
    (their motion columns the initial ones), ``table`` float64[K, 1 + 6N] the records of :func:`brake_record` (N
    vehicles; times strictly increasing), ``stats`` the summed step statistics, ``status`` the first failed
    segment's :class:`~hpcrail.integrators.contract.Status` (or completed), ``t_reached`` [s], ``wall`` and
    ``compile`` [s] summed over the segments."""
    p = prob.params
    n = prob.y0.size
    motion, rec = layout(p, n)
    pat = prob.jac_pattern
    zero = np.flatnonzero(np.isin(pat.rows, motion)).astype(np.int64)
    P = (p, motion, zero, np.zeros(n), rec)
    width = 1 + 2 * rec.size
    edges = np.concatenate([[0.0], brake_breakpoints(p, t_final), [t_final]])
    Y = np.full((t_out.size, n), np.nan)
    y = prob.y0.copy()
    stats: dict = {}
    tables, wall, comp = [], 0.0, 0.0
    cap = max(256, int(RECORD_BYTES0 / 8 / width))
    status, t_reached = Status.COMPLETED, 0.0
    for a, b in zip(edges[:-1], edges[1:]):
        sel = (t_out > a) & (t_out <= b) if a > 0.0 else (t_out <= b)
        while True:
            acc = np.zeros(2 + cap * width)
            acc[1] = cap
            pb = Problem(brake_pass_rhs, brake_record, P, y, t0=float(a), atol_scale=prob.atol_scale, acc0=acc,
                         jac=brake_pass_jac, jac_pattern=pat, rtol_scale=prob.rtol_scale)
            sol = integrate(pb, method, t_out[sel], float(b), **kwargs)
            wall += sol.wall_time
            comp += sol.compile_time
            if sol.acc[0] >= 0.0:
                break
            cap *= 2        # kept for the next segments
        _add_stats(stats, sol.stats)
        Y[sel] = sol.y
        k = int(sol.acc[0])
        tables.append(sol.acc[2:2 + k * width].reshape(k, width))
        t_reached = sol.t_reached
        if not sol.success:
            status = sol.status
            break
        y = sol.y_final
    table = np.concatenate(tables) if tables else np.zeros((0, width))
    # a segment's first record repeats the previous segment's last (same time): keep the later one
    keep = np.append(np.diff(table[:, 0]) > 0.0, True) if table.shape[0] else np.zeros(0, bool)
    return Y, y, np.ascontiguousarray(table[keep]), stats, status, t_reached, wall, comp


def motion_problem(prob: Problem, table: np.ndarray) -> tuple[Problem, np.ndarray]:
    """Pass 2's problem: the motion states of ``prob`` with the brake pass's records ``table``; and the motion
    indices.  Raises ``ValueError`` if a motion row of the Jacobian pattern depends on a brake state (the system
    would not be block triangular)."""
    p = prob.params
    n = prob.y0.size
    motion, rec = layout(p, n)
    pat = prob.jac_pattern
    inv = -np.ones(n, dtype=np.int64)
    inv[motion] = np.arange(motion.size)
    sel = np.flatnonzero((inv[pat.rows] >= 0) & (inv[pat.cols] >= 0)).astype(np.int64)
    if np.any((inv[pat.rows] >= 0) & (inv[pat.cols] < 0)):
        raise ValueError("two passes: a motion row of the Jacobian depends on a brake state")
    border = inv[np.asarray(pat.border, dtype=np.int64)] if pat.border is not None else None
    mpat = JacobianPattern.sparse(motion.size, inv[pat.rows[sel]], inv[pat.cols[sel]], border=border)
    pm, smap, (ridx, rcol), (oidx, ocol) = compact_layout(p, n, motion)
    ys = np.zeros(5 * p.n_veh + n - p.block * p.n_veh)
    ys[smap] = prob.y0[motion]
    P = (pm, ys, np.zeros(ys.size), np.zeros(pat.nnz), sel, smap, table, np.zeros(1, dtype=np.int64), ridx, rcol,
         oidx, ocol)
    mp = Problem(motion_rhs, motion_observe, P, prob.y0[motion].copy(), atol_scale=prob.atol_scale[motion],
                 acc0=prob.acc0.copy(), jac=motion_jac, jac_pattern=mpat, rtol_scale=prob.rtol_scale[motion])
    return mp, motion


def integrate_two_pass(prob: Problem, method: str, t_out, t_final: float, *, progress=None, **kwargs) -> Solution:
    """Integrate the pneumatic-brake train ``prob`` (the one-pass problem of ``kinds.ltd.problem.ltd_problem``, a
    time-based schedule) in two passes (module docstring) with integrator ``method`` and the keyword arguments of
    :func:`hpcrail.integrators.integrate` (``rtol``, ``atol``, ...).  ``t_out`` float64[k]: sample times [s].
    Returns a :class:`~hpcrail.integrators.contract.Solution` as the one-pass run's: ``y`` float64[k, n] the full
    states (the brake pass's brake states, the motion pass's motion states), ``acc`` the motion pass's observer
    (coupler envelopes and brake metrics), ``stats`` the sums of both passes, ``wall_time`` both passes'.
    ``progress``: the callback of :func:`~hpcrail.integrators.integrate`, given to the motion pass (the brake
    pass takes ~0.1 of the time)."""
    t_out = np.ascontiguousarray(t_out, dtype=float)
    Yb, yb_final, table, stats, status, t_reached, wall, comp = brake_pass(prob, method, t_out, t_final, kwargs)
    n = prob.y0.size
    if status.success and table.shape[0] < 2:   # every completed segment records its start and >= 1 step
        raise RuntimeError(f"two passes: the brake pass recorded {table.shape[0]} step(s) to t = {t_final:g} s")
    if not status.success:
        return Solution(t=t_out, y=Yb, status=status, message=status.describe(t_reached) + " (brake pass)",
                        t_reached=t_reached, stats=stats, acc=prob.acc0.copy(), wall_time=wall, compile_time=comp,
                        method=method, y_final=np.full(n, np.nan))
    mp, motion = motion_problem(prob, table)
    f = math.sqrt(n / motion.size)
    mkw = dict(kwargs)
    mkw["rtol"] = kwargs.get("rtol", 1e-6) * f
    mkw["atol"] = kwargs.get("atol", 1e-9) * f
    sol = integrate(mp, method, t_out, t_final, progress=progress, **mkw)
    _add_stats(stats, sol.stats)
    Y = Yb.copy()
    Y[:, motion] = sol.y
    Y[~np.isfinite(sol.y[:, 0])] = np.nan
    y_final = np.full(n, np.nan)
    if sol.success:
        y_final = yb_final.copy()
        y_final[motion] = sol.y_final
    return Solution(t=t_out, y=Y, status=sol.status, message=sol.message, t_reached=sol.t_reached, stats=stats,
                    acc=sol.acc, wall_time=wall + sol.wall_time, compile_time=comp + sol.compile_time, method=method,
                    y_final=y_final)


__all__ = ["uses_two_passes", "integrate_two_pass", "brake_pass", "motion_problem", "brake_breakpoints", "layout",
           "compact_layout",
           "RECORD_BYTES0"]
