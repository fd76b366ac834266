"""Distributed-state integrators (SPMD): the states of a problem are split into contiguous *blocks*,
each owned by one *worker* (a thread or an MPI rank), and every worker runs the same integrator on its
own states only — stage combinations, error norms, Newton updates, dense output, samples, the
Jacobian, the LU factors and the linear solves are all per block, inside one parallel region for the
whole run.  Workers meet only where the method needs a global number (an error norm, the reduced
system of the partitioned linear solver) and inside the model's functions (neighbouring blocks'
boundary states).  This removes the Amdahl bound of a serial integrator driving a parallel
right-hand side (docs/hpc.md, docs/performance.md).

Contract (model-agnostic; the hidden-vehicle LTD glue is :mod:`hpcrail.partition.ltd`):

* Every worker has its own parameter object (``SPMDProblem.params[w]``: typically the same arrays plus
  the worker's block range and shared exchange buffers) and its own copy of every vector.  In a
  worker's vectors only its own states and the *global* states ``[nc, n)`` are meaningful; the other
  entries are the model's scratch (it may write its neighbours' boundary states there).
* ``rhs(t, y, params, dydt)``, ``jac(t, y, params, vals)`` and ``observe(t, y, params, acc)`` have the
  signatures of the serial contract (:mod:`hpcrail.integrators.contract`) but are *collective*: every
  worker calls them at the same point with its own ``params``; each fills the derivatives of its own
  and of the global states (``jac``: its value slots ``[slot_lo, slot_hi)`` and the global rows'
  slots), exchanging what it needs with the others itself, and returns only when no other worker
  will still read its data.  Global states are computed identically by every worker.
* ``sync(t, buf, params, out)`` is the reduction hook: ``buf`` (float64[P·K]) holds K numbers per
  block; each worker has written the rows of its own blocks; on return every worker sees every row
  (threads: a barrier on a shared buffer; MPI: an in-place ``MPI_Allgatherv``).  Every global number
  is a sum of per-block partial sums taken in block order, so the results do not depend on the
  number of workers or on how blocks are assigned to them — threads and MPI ranks give the same bits.

Methods: ``rk4`` (fixed step) and the BDF family (``bdf``, ``bdf2``, ``ndf``: the algorithm and the
Jacobian/LU reuse rules of :mod:`hpcrail.integrators.bdf`, with the partitioned LU of
:mod:`hpcrail.integrators.spmd_linalg`).  Events are not supported.  The error norms are RMS norms over
all states like the serial methods', summed per block: an adaptive run gives the serial method's
steps to rounding, not bitwise (fixed-step RK4 gives the serial bits).

Threads are plain Python threads calling the compiled kernel (numba releases the GIL), each running the
whole integration; they wait for each other in a barrier built on atomic operations (spin, then
``sched_yield``: a waiting thread gives its core away on an oversubscribed machine).
"""
from __future__ import annotations

import dataclasses
import math
import threading
import time
from typing import Any, Callable

import numpy as np
from numba import njit, types, uint64
from numba.core import cgutils
from numba.extending import intrinsic

from hpcrail._numba import JIT, JIT_NRT_FREE
from hpcrail.integrators import registry
from hpcrail.integrators.bdf import BDF_KEEP, MAX_ORDER, _r_entry, bdf_coefficients
from hpcrail.integrators.common import EPS, _monotonic_ns, step_end, step_factor
from hpcrail.integrators.contract import (
    DONE, MAX_STEPS, NEWTON_FAILURE, NON_FINITE, N_SETTINGS, N_STATS, RUNNING, SET_HMAX, SET_HMIN, SET_MAX_STEPS,
    SET_NEWTON_JUPD, SET_NEWTON_MAXITER, SET_NEWTON_TOL, SET_OBS_DT, SET_OPT0, SET_STEP, ST_NEWTON, ST_NFAIL, ST_NFEV,
    ST_REJECTED, ST_STEPS, STAT_NAMES, STEP_UNDERFLOW, Solution, Status,
)
from hpcrail.integrators.newton import DGMAX, MSBJ, NEWTON_TOL_ERR
from hpcrail.integrators.spmd_linalg import (
    OW_BHI, OW_BLO, OW_BOUNDS, OW_G0, OW_N, OW_P, OW_SHI, OW_SLO, SS_ML, SS_MU, SS_NNZ, analyse_spmd,
    spmd_factorise, spmd_jacobian, spmd_lin_size, spmd_lin_size_py, spmd_solve,
)

# ================================================================================================
# atomics and the thread barrier
# ================================================================================================


@intrinsic
def atomic_add(typingctx, arr, idx, val):
    """``old = arr[idx]; arr[idx] += val`` atomically (sequentially consistent); int64 arrays."""
    sig = types.int64(arr, idx, val)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        return builder.atomic_rmw("add", ptr, args[2], "seq_cst")

    return sig, codegen


@intrinsic
def atomic_load(typingctx, arr, idx):
    """``arr[idx]`` read atomically with acquire ordering (int64 arrays)."""
    sig = types.int64(arr, idx)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        return builder.load_atomic(ptr, "acquire", 8)

    return sig, codegen


_sched_yield = types.ExternalFunction("sched_yield", types.int32())

#: int64 slots of a barrier array (64 bytes apart: no false sharing): arrivals, generation, abort flag (with the
#: wait limit [ns] next to it, read-only)
BAR_COUNT, BAR_GEN, BAR_ABORT, BAR_TIMEOUT = 0, 8, 16, 17
BAR_SIZE = 24
#: spin iterations before a waiting thread starts yielding its core
BAR_SPIN = 4000
#: longest wait in one barrier [s] before the waiting thread gives up and sets the abort flag: between two
#: barriers a worker evaluates its blocks once (milliseconds at 100 000 vehicles), so a wait this long means a
#: worker is lost (it failed, or the workers disagree on the sequence of collectives: a bug)
BAR_TIMEOUT_S = 60.0


def new_barrier(timeout_s: float = BAR_TIMEOUT_S) -> np.ndarray:
    """A fresh barrier state (int64[BAR_SIZE]) for :func:`barrier`; ``timeout_s`` [s]: longest wait."""
    bar = np.zeros(BAR_SIZE, np.int64)
    bar[BAR_TIMEOUT] = int(timeout_s * 1e9)
    return bar


@njit(**JIT_NRT_FREE)
def barrier(bar, nworkers, spin):
    """Wait until ``nworkers`` threads have arrived (sense-reversing counter on ``bar`` int64[BAR_SIZE];
    stores made before the barrier are visible after it).  Spins ``spin`` times, then yields the core
    while waiting.  Returns at once once ``bar[BAR_ABORT]`` is set (a worker failed); a thread that has
    waited ``bar[BAR_TIMEOUT]`` ns sets it and returns (the driver then raises: no run hangs)."""
    if nworkers <= 1:
        return
    gen = atomic_load(bar, BAR_GEN)
    if atomic_add(bar, BAR_COUNT, 1) == nworkers - 1:
        bar[BAR_COUNT] = 0
        atomic_add(bar, BAR_GEN, 1)
        return
    k = 0
    t0 = 0
    while atomic_load(bar, BAR_GEN) == gen:
        k += 1
        if k > spin:
            if atomic_load(bar, BAR_ABORT) != 0:
                return
            if (k - spin) % 256 == 1:
                now = _monotonic_ns()
                if t0 == 0:
                    t0 = now
                elif bar[BAR_TIMEOUT] > 0 and now - t0 > bar[BAR_TIMEOUT]:
                    atomic_add(bar, BAR_ABORT, 1)
                    return
            _sched_yield()


# ================================================================================================
# per-worker vector helpers: this worker's states [lo, hi) and the global states [g0, n)
# ================================================================================================
@njit(inline="always", **JIT)
def seg(own, s):
    """Bounds of segment ``s`` (0: own states, 1: global states), unsigned: numba then skips the
    negative-index wraparound on every access and the loops vectorise (4x on a stage combination)."""
    if s == 0:
        return uint64(own[OW_BOUNDS + own[OW_BLO]]), uint64(own[OW_BOUNDS + own[OW_BHI]])
    return uint64(own[OW_G0]), uint64(own[OW_N])


@njit(**JIT_NRT_FREE)
def _sumsq4(x, s, wt, a_, z_):
    """x[a:z] ← s·x[a:z] and Σ (x_i·wt_i)² over [a, z) (four partial sums)."""
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    a = uint64(a_)
    z = uint64(z_)
    four = uint64(4)
    m = a + (z - a) - (z - a) % four
    for i in range(a, m, four):
        v0 = x[i] * s
        v1 = x[i + 1] * s
        v2 = x[i + 2] * s
        v3 = x[i + 3] * s
        x[i] = v0
        x[i + 1] = v1
        x[i + 2] = v2
        x[i + 3] = v3
        v0 *= wt[i]
        v1 *= wt[i + 1]
        v2 *= wt[i + 2]
        v3 *= wt[i + 3]
        a0 += v0 * v0
        a1 += v1 * v1
        a2 += v2 * v2
        a3 += v3 * v3
    for i in range(m, z):
        v = x[i] * s
        x[i] = v
        v *= wt[i]
        a0 += v * v
    return (a0 + a1) + (a2 + a3)


@njit(**JIT)
def wrms(sync, params, own, red, cur, x, s, wt):
    """``x ← s·x`` (own and global states) and the weighted RMS norm sqrt(mean((x_i·wt_i)²)) over all n
    states (collective: per-block partial sums exchanged and added in block order)."""
    P = own[OW_P]
    KR = red.shape[1] // P
    buf = red[cur[0]]
    cur[0] = 1 - cur[0]
    for b in range(own[OW_BLO], own[OW_BHI]):
        buf[b * KR] = _sumsq4(x, s, wt, own[OW_BOUNDS + b], own[OW_BOUNDS + b + 1])
    g = _sumsq4(x, s, wt, own[OW_G0], own[OW_N])
    sync(0.0, buf, params, buf)
    tot = 0.0
    for b in range(P):
        tot += buf[b * KR]
    return math.sqrt((tot + g) / own[OW_N])


@njit(**JIT)
def all_sum(sync, params, own, red, cur, vals):
    """Sum over blocks (in block order) of per-block numbers: ``vals`` float64[P, k] holds this worker's
    rows; returns float64[k] of the totals (collective)."""
    P = own[OW_P]
    k = vals.shape[1]
    KR = red.shape[1] // P
    buf = red[cur[0]]
    cur[0] = 1 - cur[0]
    for b in range(own[OW_BLO], own[OW_BHI]):
        for j in range(k):
            buf[b * KR + j] = vals[b, j]
    sync(0.0, buf, params, buf)
    out = np.zeros(k)
    for b in range(P):
        for j in range(k):
            out[j] += buf[b * KR + j]
    return out


@njit(**JIT_NRT_FREE)
def _finite_part(x, a, z):
    s = 0.0
    for i in range(uint64(a), uint64(z)):
        s += x[i] * 0.0
    return s


@njit(**JIT)
def all_finite2(sync, params, own, red, cur, x1, x2):
    """True if every own and global entry of ``x1`` and ``x2`` is finite on every worker (collective)."""
    P = own[OW_P]
    KR = red.shape[1] // P
    buf = red[cur[0]]
    cur[0] = 1 - cur[0]
    b0 = own[OW_BLO]
    for b in range(b0, own[OW_BHI]):
        a = own[OW_BOUNDS + b]
        z = own[OW_BOUNDS + b + 1]
        buf[b * KR] = _finite_part(x1, a, z) + _finite_part(x2, a, z)
    g = _finite_part(x1, own[OW_G0], own[OW_N]) + _finite_part(x2, own[OW_G0], own[OW_N])
    sync(0.0, buf, params, buf)
    tot = g
    for b in range(P):
        tot += buf[b * KR]
    return tot == 0.0


@njit(**JIT_NRT_FREE)
def _poly_eval_own(Q, K, theta, out, own):
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            acc = Q[K, i]
            for k in range(K - 1, -1, -1):
                acc = acc * theta + Q[k, i]
            out[i] = acc


@njit(**JIT_NRT_FREE)
def _samples_at_t(t, y, t_out, Y_out, iout, own):
    k = iout[0]
    while k < t_out.size and t_out[k] <= t:
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                Y_out[k, i] = y[i]
        k += 1
    iout[0] = k


@njit(inline="always", **JIT)
def _gate(t, y, own, t_out, Y_out, iout, t_pause, t_final, stats, max_steps):
    """:func:`~hpcrail.integrators.common.loop_gate` on this worker's columns."""
    _samples_at_t(t, y, t_out, Y_out, iout, own)
    if t_final - t <= 1e-12 * max(1.0, abs(t_final)):
        return DONE
    if t >= t_pause:
        return RUNNING
    if stats[ST_STEPS] + stats[ST_REJECTED] >= max_steps:
        return MAX_STEPS
    return 99


@njit(**JIT)
def _finish(observe, params, own, obs_dt, t, hs, tn, y, y1, Q, K, dense, t_out, Y_out, iout, acc, stats, ytmp):
    """Accept the step [t, tn]: samples and observations from the dense polynomial ``Q[0:K+1]`` (valid
    when ``dense``), ``y ← y1`` on this worker's states, ``observe`` (collective) at the step end."""
    if dense:
        k = iout[0]
        while k < t_out.size and t_out[k] <= tn:
            _poly_eval_own(Q, K, (t_out[k] - t) / hs, Y_out[k], own)
            k += 1
        iout[0] = k
        if obs_dt > 0.0:
            j = 1
            while t + j * obs_dt < tn:
                to = t + j * obs_dt
                _poly_eval_own(Q, K, (to - t) / hs, ytmp, own)
                observe(to, ytmp, params, acc)
                j += 1
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            y[i] = y1[i]
    stats[ST_STEPS] += 1
    observe(tn, y, params, acc)


@njit(inline="always", **JIT)
def _dense_needed(obs_dt, t, t_end, t_out, iout):
    return (iout[0] < t_out.size and t_out[iout[0]] <= t_end) or (obs_dt > 0.0 and t_end - t > obs_dt)


# tstate of the SPMD methods: t, h, initialised flag, exchange-buffer parity, then the method's arrays
TS_T, TS_H, TS_INIT, TS_CUR = 0, 1, 2, 3
TS_HEAD = 4


# ================================================================================================
# RK4
# ================================================================================================
def rk4_spmd_state_size(n: int, sspec=None, P: int = 1) -> int:
    return TS_HEAD + n


@njit(**JIT)
def rk4_spmd(rhs, jac, sync, observe, params, own, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats,
             settings, atol, rtolv, mass, sspec, red):
    """Classical RK4, fixed step ``settings[0]`` [s], on this worker's states (see
    :func:`hpcrail.integrators.explicit.rk4`: the same arithmetic per state, cubic Hermite dense output)."""
    n = y.size
    h = settings[SET_STEP]
    max_steps = settings[SET_MAX_STEPS]
    obs_dt = settings[SET_OBS_DT]
    t = tstate[TS_T]
    cur = np.zeros(1, np.int64)
    cur[0] = int(tstate[TS_CUR])
    f0 = tstate[TS_HEAD:TS_HEAD + n]
    if tstate[TS_INIT] == 0.0:
        rhs(t, y, params, f0)
        stats[ST_NFEV] += 1
        tstate[TS_INIT] = 1.0
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    tmp = np.empty(n)
    y1 = np.empty(n)
    f1 = np.empty(n)
    Q = np.empty((4, n))
    status = RUNNING
    while True:
        status = _gate(t, y, own, t_out, Y_out, iout, t_pause, t_final, stats, max_steps)
        if status != 99:
            break
        hs, tn = step_end(t, h, t_final, True)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                tmp[i] = y[i] + 0.5 * hs * f0[i]
        rhs(t + 0.5 * hs, tmp, params, k2)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                tmp[i] = y[i] + 0.5 * hs * k2[i]
        rhs(t + 0.5 * hs, tmp, params, k3)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                tmp[i] = y[i] + hs * k3[i]
        rhs(t + hs, tmp, params, k4)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                y1[i] = y[i] + hs * (f0[i] + 2.0 * (k2[i] + k3[i]) + k4[i]) / 6.0
        rhs(tn, y1, params, f1)
        stats[ST_NFEV] += 4
        if not all_finite2(sync, params, own, red, cur, y1, f1):
            status = NON_FINITE
            break
        dense = _dense_needed(obs_dt, t, tn, t_out, iout)
        if dense:
            for s in range(2):
                a, z = seg(own, s)
                for i in range(a, z):
                    dy = y1[i] - y[i]
                    Q[0, i] = y[i]
                    Q[1, i] = hs * f0[i]
                    Q[2, i] = 3.0 * dy - hs * (2.0 * f0[i] + f1[i])
                    Q[3, i] = -2.0 * dy + hs * (f0[i] + f1[i])
        _finish(observe, params, own, obs_dt, t, hs, tn, y, y1, Q, 3, dense, t_out, Y_out, iout, acc, stats, tmp)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                f0[i] = f1[i]
        t = tn
    tstate[TS_T] = t
    tstate[TS_H] = h
    tstate[TS_CUR] = cur[0]
    return status


# ================================================================================================
# BDF / NDF
# ================================================================================================
_N_SCAL = 8
_SC_ORDER, _SC_NEQ, _SC_LU_C, _SC_CURJAC, _SC_ETA, _SC_RECOMP, _SC_JVALID, _SC_JAGE = range(8)


def bdf_spmd_state_size(n: int, sspec, P: int) -> int:
    """t, h, init, parity, f (n), scalars, D ((MAX_ORDER+3)·n), J, LU, pivots."""
    nc, ng, ml, mu = int(sspec[1]), int(sspec[2]), int(sspec[SS_ML]), int(sspec[SS_MU])
    L = spmd_lin_size_py(nc, ng, ml, mu, P)
    return TS_HEAD + n + _N_SCAL + (MAX_ORDER + 3) * n + 2 * L + (nc + ng + P * (ml + mu))


@njit(**JIT_NRT_FREE)
def _change_D(D, order, factor, tmp, own, RU):
    """:func:`hpcrail.integrators.bdf.change_D` on this worker's columns (``RU`` float64[6, 6] work)."""
    for k in range(order + 1):
        for j in range(order + 1):
            acc = 0.0
            for m in range(order + 1):
                acc += _r_entry(k, m, factor) * _r_entry(m, j, 1.0)
            RU[k, j] = acc
    for s in range(2):
        a, z = seg(own, s)
        for j in range(order + 1):
            for i in range(a, z):
                tmp[j, i] = D[j, i]
        for j in range(order + 1):
            dj = D[j]
            r0 = RU[0, j]
            t0 = tmp[0]
            for i in range(a, z):
                dj[i] = r0 * t0[i]
            for k in range(1, order + 1):
                r = RU[k, j]
                tk = tmp[k]
                for i in range(a, z):
                    dj[i] += r * tk[i]


@njit(**JIT)
def _bdf_dense_own(D, order, Q, own):
    P_ = np.zeros((order + 1, order + 1))
    P_[0, 0] = 1.0
    for j in range(1, order + 1):
        m = j - 1
        a_ = (m - 1.0) / (m + 1.0)
        b_ = 1.0 / (m + 1.0)
        for i in range(j + 1):
            v = a_ * P_[j - 1, i]
            if i > 0:
                v += b_ * P_[j - 1, i - 1]
            P_[j, i] = v
    for s in range(2):
        a, z = seg(own, s)
        for i in range(order + 1):
            for q in range(a, z):
                acc = 0.0
                for j in range(i, order + 1):
                    acc += P_[j, i] * D[j, q]
                Q[i, q] = acc


@njit(**JIT)
def _initial_step(rhs, sync, params, own, red, cur, t, y, f0, span, rtolv, atol, order, mass, stats):
    """:func:`hpcrail.integrators.common.initial_step` with per-block sums (collective)."""
    n = y.size
    P = own[OW_P]
    part = np.zeros((P, 3))
    for b in range(own[OW_BLO], own[OW_BHI]):
        for i in range(own[OW_BOUNDS + b], own[OW_BOUNDS + b + 1]):
            if mass[i] == 0.0:
                continue
            sc = atol[i] + rtolv[i] * abs(y[i])
            part[b, 0] += 1.0
            part[b, 1] += (y[i] / sc) ** 2
            part[b, 2] += (f0[i] / mass[i] / sc) ** 2
    gm = 0.0
    g0 = 0.0
    g1 = 0.0
    for i in range(own[OW_G0], own[OW_N]):
        if mass[i] == 0.0:
            continue
        sc = atol[i] + rtolv[i] * abs(y[i])
        gm += 1.0
        g0 += (y[i] / sc) ** 2
        g1 += (f0[i] / mass[i] / sc) ** 2
    tot = all_sum(sync, params, own, red, cur, part)
    m = tot[0] + gm
    if m == 0.0:
        return min(1e-6, span)
    d0 = math.sqrt((tot[1] + g0) / m)
    d1 = math.sqrt((tot[2] + g1) / m)
    if d0 < 1e-5 or d1 < 1e-5:
        h0 = 1e-6
    else:
        h0 = 0.01 * d0 / d1
    h0 = min(h0, span)
    y1 = np.empty(n)
    f1 = np.empty(n)
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            y1[i] = y[i] + h0 * f0[i] / mass[i] if mass[i] != 0.0 else y[i]
    rhs(t + h0, y1, params, f1)
    stats[ST_NFEV] += 1
    part2 = np.zeros((P, 1))
    for b in range(own[OW_BLO], own[OW_BHI]):
        for i in range(own[OW_BOUNDS + b], own[OW_BOUNDS + b + 1]):
            if mass[i] != 0.0:
                sc = atol[i] + rtolv[i] * abs(y[i])
                part2[b, 0] += ((f1[i] - f0[i]) / mass[i] / sc) ** 2
    g2 = 0.0
    for i in range(own[OW_G0], own[OW_N]):
        if mass[i] != 0.0:
            sc = atol[i] + rtolv[i] * abs(y[i])
            g2 += ((f1[i] - f0[i]) / mass[i] / sc) ** 2
    d2 = math.sqrt((all_sum(sync, params, own, red, cur, part2)[0] + g2) / m) / h0
    if not math.isfinite(d2):
        return min(h0, span)
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1.0 / (order + 1.0))
    return min(100.0 * h0, h1, span)


NEWTON_CONVERGED, NEWTON_SLOW, NEWTON_NONFINITE = 0, 1, 2


@njit(**JIT)
def _newton(rhs, jac, sync, params, own, red, cur, t, z, base, c, c_lu, mass, J, LU, piv, sspec, wt, tol, maxit, rate,
            f, dz, tmp, vals, max_updates, stats):
    """:func:`hpcrail.integrators.newton.newton_solve` on this worker's states (collective)."""
    scl = 1.0 if c_lu == c else 2.0 * c_lu / (c_lu + c)
    nrm_old = 0.0
    kk = 0
    upd = 0
    it = 0
    limit = maxit
    while it < limit:
        rhs(t, z, params, f)
        stats[ST_NFEV] += 1
        it += 1
        for s in range(2):
            a, zz = seg(own, s)
            for i in range(a, zz):
                dz[i] = f[i] - c * mass[i] * (z[i] - base[i])
        spmd_solve(sync, params, LU, sspec, own, piv, dz, red, cur)
        stats[ST_NEWTON] += 1
        nrm = wrms(sync, params, own, red, cur, dz, scl, wt)
        if not math.isfinite(nrm):
            return NEWTON_NONFINITE, it, rate, upd
        if kk > 0:
            theta = nrm / nrm_old
            rate = max(0.3 * rate, theta)
            stalled = rate >= 0.9
            if not stalled:
                stalled = rate ** (limit - it) / (1.0 - rate) * nrm > tol
            if stalled:
                if upd >= max_updates:
                    return NEWTON_SLOW, it, rate, upd
                spmd_jacobian(jac, params, t, z, sspec, own, J, vals, stats)
                if not spmd_factorise(sync, params, J, LU, c, mass, sspec, own, piv, red, cur, tmp, stats):
                    return NEWTON_NONFINITE, it, rate, upd + 1
                upd += 1
                scl = 1.0
                limit = it + maxit
                for s in range(2):
                    a, zz = seg(own, s)
                    for i in range(a, zz):
                        dz[i] = f[i] - c * mass[i] * (z[i] - base[i])
                spmd_solve(sync, params, LU, sspec, own, piv, dz, red, cur)
                stats[ST_NEWTON] += 1
                nrm = wrms(sync, params, own, red, cur, dz, 1.0, wt)
                if not math.isfinite(nrm):
                    return NEWTON_NONFINITE, it, rate, upd
                kk = 0
                rate = 1.0
        for s in range(2):
            a, zz = seg(own, s)
            for i in range(a, zz):
                z[i] += dz[i]
        if nrm == 0.0 or nrm * min(1.0, rate) <= tol:
            return NEWTON_CONVERGED, it, rate, upd
        nrm_old = max(nrm, EPS)
        kk += 1
    return NEWTON_SLOW, it, rate, upd


@njit(**JIT)
def bdf_spmd(rhs, jac, sync, observe, params, own, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats,
             settings, atol, rtolv, mass, sspec, red):
    """Variable-order BDF / NDF on this worker's states: :func:`hpcrail.integrators.bdf.bdf` (same
    options, the same step, order and Jacobian/LU reuse rules) with the partitioned LU of
    :mod:`~hpcrail.integrators.spmd_linalg`.  Needs the model's analytic Jacobian."""
    n = y.size
    P = own[OW_P]
    ml = sspec[SS_ML]
    mu = sspec[SS_MU]
    L = spmd_lin_size(sspec)
    max_order = min(MAX_ORDER, max(1, int(settings[SET_OPT0]))) if settings[SET_OPT0] > 0.0 else MAX_ORDER
    ndf = settings[SET_OPT0 + 1] > 0.5
    hmin = settings[SET_HMIN]
    hmax = settings[SET_HMAX] if settings[SET_HMAX] > 0.0 else 1e300
    max_steps = settings[SET_MAX_STEPS]
    obs_dt = settings[SET_OBS_DT]
    tol_given = settings[SET_NEWTON_TOL]
    maxit = int(settings[SET_NEWTON_MAXITER]) if settings[SET_NEWTON_MAXITER] > 0.0 else 4
    max_upd = int(settings[SET_NEWTON_JUPD])
    gamma, alpha, error_const = bdf_coefficients(ndf)
    # ---- persistent state
    t = tstate[TS_T]
    cur = np.zeros(1, np.int64)
    cur[0] = int(tstate[TS_CUR])
    f = tstate[TS_HEAD:TS_HEAD + n]
    osc = TS_HEAD + n
    sc = tstate[osc:osc + _N_SCAL]
    od = osc + _N_SCAL
    D = tstate[od:od + (MAX_ORDER + 3) * n].reshape((MAX_ORDER + 3, n))
    oj = od + (MAX_ORDER + 3) * n
    J = tstate[oj:oj + L]
    LU = tstate[oj + L:oj + 2 * L]
    npiv = sspec[1] + sspec[2] + P * (ml + mu)
    piv = tstate[oj + 2 * L:oj + 2 * L + npiv].view(np.int64)
    # ---- work
    vals = np.zeros(max(sspec[SS_NNZ], 1))
    ftmp = np.empty(n)
    tmp = np.empty(n)
    dz = np.empty(n)
    base = np.empty(n)
    ypred = np.empty(n)
    ynew = np.empty(n)
    wt = np.empty(n)
    dtmp = np.empty((MAX_ORDER + 3, n))
    Q = np.empty((MAX_ORDER + 1, n))
    RU = np.empty((MAX_ORDER + 1, MAX_ORDER + 1))
    if tstate[TS_INIT] == 0.0:
        rhs(t, y, params, f)
        stats[ST_NFEV] += 1
        h0 = settings[SET_STEP]
        if h0 <= 0.0:
            h0 = _initial_step(rhs, sync, params, own, red, cur, t, y, f, t_final - t, rtolv, atol, 1.0, mass, stats)
        h0 = min(h0, hmax)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                D[0, i] = y[i]
                D[1, i] = h0 * f[i] / mass[i] if mass[i] != 0.0 else 0.0
            for k in range(2, MAX_ORDER + 3):
                for i in range(a, z):
                    D[k, i] = 0.0
        sc[_SC_ORDER] = 1.0
        sc[_SC_NEQ] = 0.0
        sc[_SC_LU_C] = 0.0
        sc[_SC_CURJAC] = 0.0
        sc[_SC_ETA] = 1.0
        sc[_SC_RECOMP] = 0.0
        sc[_SC_JVALID] = 0.0
        sc[_SC_JAGE] = 0.0
        tstate[TS_H] = h0
        tstate[TS_INIT] = 1.0
    h = tstate[TS_H]
    order = int(sc[_SC_ORDER])
    n_equal = int(sc[_SC_NEQ])
    status = RUNNING
    while True:
        status = _gate(t, y, own, t_out, Y_out, iout, t_pause, t_final, stats, max_steps)
        if status != 99:
            break
        min_step = max(hmin, 10.0 * EPS * max(abs(t), 1e-300))
        if h > hmax:
            _change_D(D, order, hmax / h, dtmp, own, RU)
            h = hmax
            n_equal = 0
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                wt[i] = 1.0 / (atol[i] + rtolv[i] * abs(y[i]))
        accepted = False
        newton_failed = False
        nonfinite = False
        jac_fresh = False
        iters = 0
        err_norm = 0.0
        t_new = t
        while not accepted:
            if h < min_step:
                break
            t_new = t + h
            if t_new >= t_final or t_final - t_new <= 1e-12 * max(1.0, abs(t_final)):
                t_new = t_final
                _change_D(D, order, (t_new - t) / h, dtmp, own, RU)
                n_equal = 0
                h = t_new - t
            inv_alpha = 1.0 / alpha[order]
            for s in range(2):
                a, z = seg(own, s)
                d0 = D[0]
                for i in range(a, z):
                    ypred[i] = d0[i]
                    base[i] = 0.0
                for k in range(1, order + 1):
                    dk = D[k]
                    gk = gamma[k]
                    for i in range(a, z):
                        ypred[i] += dk[i]
                        base[i] += gk * dk[i]
                for i in range(a, z):
                    base[i] = ypred[i] - base[i] * inv_alpha
            cc = alpha[order] / h
            if sc[_SC_JVALID] == 0.0 or sc[_SC_RECOMP] != 0.0 or sc[_SC_JAGE] >= MSBJ:
                spmd_jacobian(jac, params, t_new, ypred, sspec, own, J, vals, stats)
                sc[_SC_JVALID] = 1.0
                sc[_SC_CURJAC] = 1.0
                sc[_SC_RECOMP] = 0.0
                sc[_SC_LU_C] = 0.0
                sc[_SC_JAGE] = 0.0
                jac_fresh = True
            if sc[_SC_LU_C] == 0.0 or abs(cc - sc[_SC_LU_C]) > DGMAX * sc[_SC_LU_C]:
                if not spmd_factorise(sync, params, J, LU, cc, mass, sspec, own, piv, red, cur, tmp, stats):
                    sc[_SC_LU_C] = 0.0
                    code = NEWTON_NONFINITE
                else:
                    sc[_SC_LU_C] = cc
                    sc[_SC_ETA] = 1.0
                    code = NEWTON_CONVERGED
            else:
                code = NEWTON_CONVERGED
            if code == NEWTON_CONVERGED:
                for s in range(2):
                    a, z = seg(own, s)
                    for i in range(a, z):
                        ynew[i] = ypred[i]
                tol = tol_given if tol_given > 0.0 else NEWTON_TOL_ERR / error_const[order]
                c_lu = sc[_SC_LU_C]
                code, iters, eta, upd = _newton(rhs, jac, sync, params, own, red, cur, t_new, ynew, base, cc, c_lu,
                                                mass, J, LU, piv, sspec, wt, tol, maxit, sc[_SC_ETA], ftmp, dz, tmp,
                                                vals, max_upd, stats)
                sc[_SC_ETA] = eta
                if upd > 0:
                    sc[_SC_CURJAC] = 1.0
                    sc[_SC_JAGE] = 0.0
                    jac_fresh = True
                    sc[_SC_LU_C] = cc if code != NEWTON_NONFINITE else 0.0
            if code != NEWTON_CONVERGED:
                stats[ST_REJECTED] += 1
                stats[ST_NFAIL] += 1
                if not jac_fresh and code != NEWTON_NONFINITE:
                    spmd_jacobian(jac, params, t_new, ynew, sspec, own, J, vals, stats)
                    sc[_SC_CURJAC] = 1.0
                    sc[_SC_LU_C] = 0.0
                    sc[_SC_JAGE] = 0.0
                    jac_fresh = True
                    continue
                if sc[_SC_LU_C] != cc and code != NEWTON_NONFINITE:
                    sc[_SC_LU_C] = 0.0
                    continue
                jac_fresh = False
                newton_failed = True
                nonfinite = code == NEWTON_NONFINITE
                _change_D(D, order, 0.5, dtmp, own, RU)
                h *= 0.5
                n_equal = 0
                continue
            newton_failed = False
            safety = 0.9 * (2 * maxit + 1) / (2 * maxit + iters)
            for s in range(2):
                a, z = seg(own, s)
                for i in range(a, z):
                    dz[i] = error_const[order] * (ynew[i] - ypred[i])
            err_norm = wrms(sync, params, own, red, cur, dz, 1.0, wt)
            if not (err_norm <= 1.0):
                stats[ST_REJECTED] += 1
                fac = step_factor(err_norm, 1.0 / (order + 1), safety, 0.2, 10.0, False, h, 0.0, 0.0, False)
                _change_D(D, order, fac, dtmp, own, RU)
                h *= fac
                n_equal = 0
                continue
            accepted = True
        if not accepted:
            if newton_failed:
                status = NON_FINITE if nonfinite else NEWTON_FAILURE
            else:
                status = STEP_UNDERFLOW
            break
        n_equal += 1
        for s in range(2):
            a, z = seg(own, s)
            d2 = D[order + 2]
            d1 = D[order + 1]
            for i in range(a, z):
                d = ynew[i] - ypred[i]
                d2[i] = d - d1[i]
                d1[i] = d
            for k in range(order, -1, -1):
                dk = D[k]
                dk1 = D[k + 1]
                for i in range(a, z):
                    dk[i] += dk1[i]
        dense = _dense_needed(obs_dt, t, t_new, t_out, iout)
        if dense:
            _bdf_dense_own(D, order, Q, own)
        _finish(observe, params, own, obs_dt, t, t_new - t, t_new, y, ynew, Q, order, dense, t_out, Y_out, iout, acc,
                stats, tmp)
        t = t_new
        sc[_SC_CURJAC] = 0.0
        sc[_SC_JAGE] += 1.0
        if n_equal < order + 1:
            continue
        safety = 0.9 * (2 * maxit + 1) / (2 * maxit + iters)
        em = 1e300
        ep = 1e300
        if order > 1:
            for s in range(2):
                a, z = seg(own, s)
                for i in range(a, z):
                    dz[i] = error_const[order - 1] * D[order, i]
            em = wrms(sync, params, own, red, cur, dz, 1.0, wt)
        if order < max_order:
            for s in range(2):
                a, z = seg(own, s)
                for i in range(a, z):
                    dz[i] = error_const[order + 1] * D[order + 2, i]
            ep = wrms(sync, params, own, red, cur, dz, 1.0, wt)
        fm = em ** (-1.0 / order) if em > 0.0 else 1e300
        f0 = err_norm ** (-1.0 / (order + 1)) if err_norm > 0.0 else 1e300
        fp = ep ** (-1.0 / (order + 2)) if ep > 0.0 else 1e300
        if em >= 1e300:
            fm = 0.0
        if ep >= 1e300:
            fp = 0.0
        delta = 0
        best = f0
        if fm > best:
            best = fm
            delta = -1
        if fp > best:
            best = fp
            delta = 1
        factor = min(10.0, safety * best)
        if delta == 0 and 1.0 <= factor < BDF_KEEP:
            continue
        order += delta
        if t_final - t > 0.0:
            factor = min(factor, hmax / h)
        _change_D(D, order, factor, dtmp, own, RU)
        h *= factor
        n_equal = 0
    sc[_SC_ORDER] = order
    sc[_SC_NEQ] = n_equal
    tstate[TS_T] = t
    tstate[TS_H] = h
    tstate[TS_CUR] = cur[0]
    return status


# ================================================================================================
# Python driver
# ================================================================================================
#: serial kernel name -> (SPMD kernel, state size); the registry's names and aliases map onto these
SPMD_KERNELS: dict[str, tuple[Callable, Callable]] = {
    "rk4": (rk4_spmd, rk4_spmd_state_size),
    "bdf": (bdf_spmd, bdf_spmd_state_size),
}


#: the registry names with a distributed-state kernel (for messages)
SPMD_METHODS = ("rk4", "bdf", "bdf2", "ndf")


def supports(method: str) -> bool:
    """True if ``method`` (a registry name or alias) has a distributed-state kernel."""
    try:
        info = registry.get(method)
    except KeyError:
        return False
    return info.kernel is not None and info.kernel.py_func.__name__ in SPMD_KERNELS


@dataclasses.dataclass
class SPMDProblem:
    """A problem split into blocks of states owned by workers (see the module docstring).

    Attributes
    ----------
    rhs, observe, sync : collective numba functions ``f(t, x, params, out)``; ``jac`` the collective
        analytic Jacobian (its values in the slots of ``jac_pattern``) or None (explicit methods only).
    params : per-worker parameter objects (list of W; one entry per process for MPI).
    bounds : int64[P+1] block bounds: block b owns states ``[bounds[b], bounds[b+1])``; the states
        ``[bounds[P], n)`` are global.
    owner : int64[W+1]: worker w owns blocks ``[owner[w], owner[w+1])``.
    slots : int64[W, 2] value slots ``[lo, hi)`` of ``jac`` each worker fills for its rows;
        ``tail``: first slot of the global rows (filled by every worker).
    y0, atol_scale, rtol_scale, acc0, mass : as :class:`hpcrail.integrators.contract.Problem`.
    jac_pattern : :class:`~hpcrail.integrators.linalg.JacobianPattern` (implicit methods).
    workers : ``"threads"`` (all workers in this process) or ``"mpi"`` (one worker, ``rank``).
    combine_acc : ``(list of per-worker accumulators) -> accumulator`` (threads).
    """

    rhs: Callable
    observe: Callable
    sync: Callable
    params: list
    bounds: np.ndarray
    owner: np.ndarray
    y0: np.ndarray
    jac: Callable | None = None
    jac_pattern: Any = None
    slots: np.ndarray | None = None
    tail: int = 0
    atol_scale: np.ndarray | None = None
    rtol_scale: np.ndarray | None = None
    acc0: np.ndarray | None = None
    mass: np.ndarray | None = None
    workers: str = "threads"
    rank: int = 0
    combine_acc: Callable | None = None

    def __post_init__(self):
        self.y0 = np.ascontiguousarray(self.y0, dtype=np.float64)
        n = self.y0.size
        self.bounds = np.ascontiguousarray(self.bounds, dtype=np.int64)
        self.owner = np.ascontiguousarray(self.owner, dtype=np.int64)
        P = self.bounds.size - 1
        W = self.owner.size - 1
        if P < 1 or self.bounds[0] != 0 or np.any(np.diff(self.bounds) < 1) or self.bounds[-1] > n:
            raise ValueError(f"bounds must increase from 0 to at most n = {n}, got {self.bounds.tolist()}")
        if self.owner[0] != 0 or self.owner[-1] != P or np.any(np.diff(self.owner) < 1):
            raise ValueError(f"owner must split the {P} blocks into non-empty ranges, got {self.owner.tolist()}")
        if self.workers == "threads" and len(self.params) != W:
            raise ValueError(f"{W} workers but {len(self.params)} parameter objects")
        if self.workers == "mpi" and len(self.params) != 1:
            raise ValueError("an MPI problem holds the parameters of this rank only")
        self.atol_scale = np.ones(n) if self.atol_scale is None else np.ascontiguousarray(self.atol_scale, float)
        self.rtol_scale = np.ones(n) if self.rtol_scale is None else np.ascontiguousarray(self.rtol_scale, float)
        self.acc0 = np.zeros(1) if self.acc0 is None else np.ascontiguousarray(self.acc0, float)
        self.mass = np.ones(n) if self.mass is None else np.ascontiguousarray(self.mass, float)
        if self.slots is None:
            self.slots = np.zeros((W, 2), np.int64)
        self.slots = np.ascontiguousarray(self.slots, dtype=np.int64)

    @property
    def n_workers(self) -> int:
        return self.owner.size - 1

    def own(self, w: int) -> np.ndarray:
        """The int64 ``own`` array of worker ``w`` (``spmd_linalg.OW_*``)."""
        P = self.bounds.size - 1
        o = np.zeros(OW_BOUNDS + P + 1, np.int64)
        o[OW_P], o[OW_BLO], o[OW_BHI] = P, self.owner[w], self.owner[w + 1]
        o[OW_G0], o[OW_N] = self.bounds[-1], self.y0.size
        o[OW_SLO], o[OW_SHI] = self.slots[w]
        o[OW_BOUNDS:] = self.bounds
        return o


def _compiled(kernel, problem: SPMDProblem, params, implicit: bool = True):
    """The SPMD kernel compiled for the parameter type (a clone per type keeps numba's cache index of one
    model's kernels free of other models' types, as :func:`hpcrail.integrators.driver.compiled_kernel`); the
    model's Jacobian only for an implicit method (an explicit kernel never calls it)."""
    import types as pytypes

    from hpcrail.integrators.driver import _kernel_for, model_function_type

    disp = _kernel_for(pytypes.SimpleNamespace(name=kernel.__name__, kernel=kernel), params)
    f1 = types.float64[::1]
    i1 = types.int64[::1]
    fty = model_function_type(params)
    argtys = (fty, fty, fty, fty, numba_typeof(params), i1, f1, f1, f1, types.float64[:, ::1], i1, types.float64,
              types.float64, f1, i1, f1, f1, f1, f1, i1, types.float64[:, ::1])
    fsig = fty.signature
    for fn in (problem.rhs, problem.observe, problem.sync, problem.jac if implicit else None):
        if fn is not None and fsig.args not in fn.overloads:
            fn.compile(fsig.args)
    cres = disp.overloads.get(argtys)
    if cres is None:
        disp.compile(argtys)
        cres = disp.overloads[argtys]
    return cres.entry_point


def numba_typeof(x):
    import numba

    return numba.typeof(x)


def integrate_spmd(problem: SPMDProblem, method: str, t_out: np.ndarray, t_final: float, *, step: float = 0.0,
                   rtol: float = 1e-6, atol: float = 1e-6, hmin: float = 0.0, hmax: float = 0.0,
                   max_steps: int = 100_000_000, options: dict | None = None, observe_interval: float = 0.0,
                   progress: Callable[[float, float, dict], None] | None = None, n_chunks: int = 50,
                   jacobian: str = "auto") -> Solution:
    """Integrate an :class:`SPMDProblem` from t = 0 to ``t_final`` [s] with a method that has a
    distributed-state kernel (:func:`supports`); arguments as :func:`hpcrail.integrators.integrate`.

    Threads: every worker runs in its own thread (worker 0 in the calling thread); the returned
    :class:`Solution` holds the whole state (``y``, ``y_final``) and ``combine_acc`` of the workers'
    accumulators.  MPI: this rank's worker; ``y``/``y_final`` are valid on its own and the global
    states only (the caller gathers), ``acc`` is this rank's.

    Raises ``ValueError`` for a method without a distributed-state kernel, a fixed-step method without
    ``step``, an implicit method without the model's analytic Jacobian or ``jacobian`` other than
    ``auto``/``analytic``, or sample times outside [0, t_final].
    """
    from hpcrail.integrators.driver import method_options

    info = registry.get(method)
    name = info.kernel.py_func.__name__ if info.kernel is not None else ""
    if name not in SPMD_KERNELS:
        raise ValueError(f"method {info.name!r} has no distributed-state kernel; "
                         f"available: {', '.join(sorted(SPMD_KERNELS))} (and their aliases)")
    kernel, state_size = SPMD_KERNELS[name]
    t_out = np.ascontiguousarray(t_out, dtype=np.float64)
    if t_out.size and (t_out[0] < -1e-12 or t_out[-1] > t_final + 1e-9 or np.any(np.diff(t_out) < 0)):
        raise ValueError("sample times must be sorted and lie within [0, t_final]")
    if not info.adaptive and step <= 0.0:
        raise ValueError(f"method {info.name!r} has a fixed step: give step > 0")
    n = problem.y0.size
    P = problem.bounds.size - 1
    if info.implicit:
        if problem.jac is None or problem.jac_pattern is None:
            raise ValueError(f"method {info.name!r} on blocks needs the model's analytic Jacobian and its pattern")
        if jacobian not in ("auto", "analytic"):
            raise ValueError(f"jacobian = {jacobian!r}: blocks use the analytic Jacobian only (auto, analytic)")
        lay = analyse_spmd(problem.jac_pattern.rows, problem.jac_pattern.cols, n, problem.bounds, problem.tail, True)
        sspec = lay.sspec
        m = lay.ml + lay.mu
        KR = max(8, 1 + m * m)
    else:
        sspec = np.zeros(16, np.int64)
        sspec[0], sspec[1], sspec[2] = n, problem.bounds[-1], n - problem.bounds[-1]
        KR = 8
    extra = method_options(info, options)
    settings = np.zeros(N_SETTINGS)
    settings[0], settings[1], settings[2], settings[3], settings[4], settings[5] = step, hmin, hmax, max_steps, rtol, 0.9
    for i, v in enumerate(extra[:5]):
        settings[SET_OPT0 + i] = v
    settings[SET_OBS_DT] = observe_interval
    atol_v = np.ascontiguousarray(atol * problem.atol_scale)
    rtol_v = np.ascontiguousarray(rtol * problem.rtol_scale)
    W = problem.n_workers
    locals_ = [problem.rank] if problem.workers == "mpi" else list(range(W))
    t0c = time.perf_counter()
    entry = _compiled(kernel, problem, problem.params[0], info.implicit)
    jac = problem.jac if problem.jac is not None and info.implicit else problem.rhs   # explicit: never called
    ctime = time.perf_counter() - t0c
    red = np.zeros((2, P * KR))
    Y_out = np.full((t_out.size, n), np.nan)
    ws = []
    for k, w in enumerate(locals_):
        tstate = np.zeros(state_size(n, sspec, P))
        ws.append(dict(own=problem.own(w), y=problem.y0.copy(), tstate=tstate, iout=np.zeros(1, np.int64),
                       acc=problem.acc0.copy(), stats=np.zeros(N_STATS, np.int64), params=problem.params[k]))
    # the observer sees the initial state too (collective: every worker at once)
    _run_workers(lambda d: problem.observe(0.0, d["y"], d["params"], d["acc"]), ws)
    pauses = np.linspace(0.0, t_final, max(1, n_chunks if progress is not None else 1) + 1)[1:]
    codes = [RUNNING] * len(ws)

    def call(d, tp):
        return entry(problem.rhs, jac, problem.sync,
                     problem.observe, d["params"], d["own"], d["y"], d["tstate"], t_out, Y_out, d["iout"], float(tp),
                     float(t_final), d["acc"], d["stats"], settings, atol_v, rtol_v, problem.mass, sspec, red)

    w0 = time.perf_counter()
    for tp in pauses:
        if tp < ws[0]["tstate"][TS_T] and tp < t_final:
            continue
        codes = _run_workers(lambda d: call(d, tp), ws)
        if progress is not None:
            progress(float(ws[0]["tstate"][TS_T]), float(t_final), dict(zip(STAT_NAMES, ws[0]["stats"].tolist())))
        if codes[0] != RUNNING:
            break
    wall = time.perf_counter() - w0
    bar = getattr(ws[0]["params"], "bar", None)
    if bar is not None and bar[BAR_ABORT] != 0:
        raise RuntimeError("distributed-state workers lost each other: a worker waited longer than "
                           f"{bar[BAR_TIMEOUT] / 1e9:g} s in a barrier (a worker failed or the workers took "
                           "different paths); the results are invalid")
    if len(set(codes)) != 1:  # every worker takes the same decisions: a difference is a bug
        raise RuntimeError(f"distributed-state workers disagree on the outcome: {codes}")
    code = codes[0]
    t_reached = float(ws[0]["tstate"][TS_T])
    if code == RUNNING and abs(t_reached - t_final) <= 1e-12 * max(1.0, abs(t_final)):
        code = DONE
    y_final = ws[0]["y"].copy()
    for d in ws[1:]:
        a, z = problem.bounds[d["own"][OW_BLO]], problem.bounds[d["own"][OW_BHI]]
        y_final[a:z] = d["y"][a:z]
    if problem.workers == "threads":
        acc = problem.combine_acc([d["acc"] for d in ws]) if problem.combine_acc else ws[0]["acc"]
    else:
        acc = ws[0]["acc"]
    status = Status(code)
    return Solution(t=t_out, y=Y_out, status=status, message=status.describe(t_reached), t_reached=t_reached,
                    stats=dict(zip(STAT_NAMES, ws[0]["stats"].tolist())), acc=acc, wall_time=wall,
                    compile_time=ctime, method=info.name, y_final=y_final)


def _run_workers(fn, ws: list) -> list:
    """``fn(d)`` for every local worker at once (threads; worker 0 in this thread); returns the results.
    A worker that raises sets the abort flag of the model's barrier (``params.bar``) so that the others
    do not wait for it forever, and the exception is raised here."""
    if len(ws) == 1:
        return [fn(ws[0])]
    out = [None] * len(ws)
    errs = []

    def target(k):
        try:
            out[k] = fn(ws[k])
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errs.append(exc)
            bar = getattr(ws[k]["params"], "bar", None)
            if bar is not None:
                bar[BAR_ABORT] = 1

    ths = [threading.Thread(target=target, args=(k,), daemon=True) for k in range(1, len(ws))]
    for th in ths:
        th.start()
    target(0)
    for th in ths:
        th.join()
    if errs:
        raise errs[0]
    return out
