"""The vector layer of the integrators: a state vector split into blocks, and the collectives between the
workers that own them (atomics, the thread barrier with its timeout, block reductions, the reduction hooks).

Every method kernel (:mod:`~hpcrail.integrators.explicit`, :mod:`~hpcrail.integrators.bdf`,
:mod:`~hpcrail.integrators.implicit`, ...) is written once, on a *list of blocks*: its vector loops run over
the worker's own blocks and the global states, and every global number (an error norm, a finiteness test, the
reduced system of the partitioned LU) is a sum of per-block partial sums exchanged through the reduction hook
``sync`` and added in block order.  Only this layer knows whether the blocks live in one thread, in several
threads of one process or on MPI ranks — as the N_Vector of SUNDIALS (CVODE's BDF calls ``N_VWrmsNorm``;
``nvector_parallel.c`` is a local sum plus ``MPI_Allreduce``: Hindmarsh et al., ACM TOMS 31 (2005) §6).

Layout (:class:`Blocks`, one per worker):

* ``own`` int64: ``OW_P`` blocks P; this worker's blocks ``[OW_BLO, OW_BHI)``; the first global state
  ``OW_G0`` (= the end of the last block) and the number of states ``OW_N``: states ``[g0, n)`` are global
  (replicated on every worker, computed identically by each); the worker's Jacobian value slots
  ``[OW_SLO, OW_SHI)``; the number of workers ``OW_W`` and the barrier spins ``OW_SPIN``; the parity
  ``OW_CUR`` of the double-buffered reduction rows; then the block bounds ``r_0 = 0 < ... < r_P = g0`` from
  ``OW_BOUNDS``.
* ``OW_MR``: offset in ``own`` of the multirate description of the blocks (0: none; after the bounds,
  :func:`make_own`): the halo widths (states a block reads from the end of the block ahead and from the start
  of the block behind), the states every block reads (e.g. a train's head position), and each block's range of
  Jacobian value slots (:mod:`~hpcrail.integrators.multirate`).
* ``act`` int64[3]: the blocks ``[act[0], act[1])`` the model's collective functions evaluate now, ``act[2]`` 1
  when that is every block of the worker (shared with the model's parameters: a multirate method evaluates
  the blocks it refines only; every other method leaves it at the worker's blocks).
* ``red`` float64[2, P·KR]: two reduction buffers of one row of KR numbers per block (threads: shared by the
  workers; MPI: one per rank, filled by the allgather); used alternately, so that one barrier per reduction
  suffices.
* ``bar`` int64[BAR_SIZE]: the barrier (threads); ``comm`` int64[3]: MPI communicator, ``MPI_DOUBLE`` and
  ``MPI_IN_PLACE`` handles; ``counts``/``displs`` int32[W]: the allgather's slices of a reduction buffer.
* ``sspec`` int64: the partitioned linear solver's layout (:mod:`~hpcrail.integrators.spmd_linalg`); empty
  for one block, whose linear algebra is the serial bordered-band LU on the kernel's ``spec``.

A serial run passes one block ``[0, n)`` (:func:`serial_blocks`) and :func:`no_sync`: its per-block sums are
the serial sums (``0.0 + s + 0.0`` is ``s`` bitwise), so serial results keep their bits.

The reduction hook has the type ``sync(buf, blocks)``: on entry each worker has written the rows of its own
blocks of ``buf`` (a row of ``blocks.red``); on return every worker sees every row.  :func:`no_sync` (one
worker), :func:`threads_sync` (a barrier on the shared buffer) and ``mpi_sync`` (an in-place
``MPI_Allgatherv``, :mod:`hpcrail.integrators.mpi`, imported only under MPI) are the three implementations.
Since every total is added in block order from the same rows, results do not depend on the number of workers
or on how the blocks are assigned to them: threads and MPI ranks give the same bits.

Hooks for per-block work (multirate steps, issue 26): the error norm's per-block partial sums stay in the
reduction buffer after :func:`wrms` (row b, column 0), and every loop of the kernels runs over the blocks of
``own``, so a kernel stepping the blocks at different rates needs no other layer.
"""
from __future__ import annotations

import math
import sys
from typing import NamedTuple

import numpy as np
from numba import njit, types, uint64
from llvmlite import ir
from numba.core import cgutils
from numba.extending import intrinsic

from hpcrail._numba import JIT, JIT_NRT_FREE

# ---- layout of the int64 ``own`` array ---------------------------------------------------------
OW_P, OW_BLO, OW_BHI, OW_G0, OW_N, OW_SLO, OW_SHI, OW_W, OW_SPIN, OW_CUR, OW_MR = range(11)
OW_BOUNDS = 12
#: numbers per block in one reduction row (the partitioned LU needs 1 + (ml + mu)² of them)
KR_MIN = 8


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



#: ``clock_gettime`` clock id of a monotonic clock (Linux 1, macOS 6); None: no clock (budgets disabled)
_MONOTONIC = {"linux": 1, "darwin": 6}.get(sys.platform)


@intrinsic
def _monotonic_ns(typingctx):
    """Monotonic clock [ns] read inside numba (``clock_gettime``), usable in cached kernels; -1 without
    a clock."""
    sig = types.int64()

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        if _MONOTONIC is None:
            return ir.Constant(i64, -1)
        ts_t = ir.LiteralStructType([i64, i64])
        ptr = cgutils.alloca_once(builder, ts_t)
        fnty = ir.FunctionType(ir.IntType(32), [ir.IntType(32), ts_t.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
        builder.call(fn, [ir.Constant(ir.IntType(32), _MONOTONIC), ptr])
        sec = builder.load(cgutils.gep_inbounds(builder, ptr, 0, 0))
        nsec = builder.load(cgutils.gep_inbounds(builder, ptr, 0, 1))
        return builder.add(builder.mul(sec, ir.Constant(i64, 1_000_000_000)), nsec)

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
# the block layout
# ================================================================================================
class Blocks(NamedTuple):
    """One worker's view of a state vector split into blocks (see the module docstring)."""

    own: np.ndarray
    red: np.ndarray
    bar: np.ndarray
    comm: np.ndarray
    counts: np.ndarray
    displs: np.ndarray
    sspec: np.ndarray
    act: np.ndarray


#: offsets in a multirate description (``own[own[OW_MR]:]``): halo widths ahead/behind, number of states every
#: block reads, then those states, then each block's first and end Jacobian slot
MR_HA, MR_HB, MR_NG, MR_G0 = range(4)


def make_own(bounds, n: int, b_lo: int, b_hi: int, slots=(0, 0), workers: int = 1, spin: int = BAR_SPIN,
             multirate=None):
    """The int64 ``own`` array of a worker owning blocks ``[b_lo, b_hi)`` of ``bounds`` (int64[P+1]) in a
    vector of ``n`` states; ``multirate``: ``(halo_ahead, halo_behind, every-block states, slot_lo[P],
    slot_hi[P])`` of a multirate method (module docstring), or None."""
    bounds = np.asarray(bounds, np.int64)
    P = bounds.size - 1
    extra = []
    if multirate is not None:
        ha, hb, glob, slo, shi = multirate
        glob = [int(g) for g in glob]
        extra = [int(ha), int(hb), len(glob)] + glob + [int(x) for x in slo] + [int(x) for x in shi]
        if len(slo) != P or len(shi) != P:
            raise ValueError(f"multirate: {len(slo)}/{len(shi)} slot ranges for {P} blocks")
    o = np.zeros(OW_BOUNDS + P + 1 + len(extra), np.int64)
    o[OW_P], o[OW_BLO], o[OW_BHI], o[OW_G0], o[OW_N] = P, b_lo, b_hi, bounds[-1], n
    o[OW_SLO], o[OW_SHI], o[OW_W], o[OW_SPIN] = slots[0], slots[1], workers, spin
    o[OW_BOUNDS:OW_BOUNDS + P + 1] = bounds
    if extra:
        o[OW_MR] = OW_BOUNDS + P + 1
        o[OW_BOUNDS + P + 1:] = extra
    return o


def new_act(b_lo: int, b_hi: int) -> np.ndarray:
    """A fresh ``act`` array: the blocks ``[b_lo, b_hi)``, all of the worker's."""
    return np.array([b_lo, b_hi, 1], np.int64)


@njit(**JIT)
def one_block(n):
    """One block ``[0, n)`` owned by the only worker (what every serial run passes, with :func:`no_sync`);
    callable from numba (the batch kernel) and Python (:func:`serial_blocks`)."""
    own = np.zeros(OW_BOUNDS + 2, np.int64)
    own[OW_P] = 1
    own[OW_BHI] = 1
    own[OW_G0] = n
    own[OW_N] = n
    own[OW_W] = 1
    own[OW_SPIN] = BAR_SPIN
    own[OW_BOUNDS + 1] = n
    act = np.zeros(3, np.int64)
    act[1] = 1
    act[2] = 1
    return Blocks(own, np.zeros((2, KR_MIN)), np.zeros(BAR_SIZE, np.int64), np.zeros(3, np.int64),
                  np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int64), act)


def serial_blocks(n: int) -> Blocks:
    """:func:`one_block` from Python."""
    return Blocks(*one_block(n))


def blocks_type():
    """numba type of :class:`Blocks`."""
    import numba

    return numba.typeof(serial_blocks(1))


def sync_type():
    """numba type of a reduction hook ``sync(buf float64[::1], blocks) -> None``."""
    return types.FunctionType(types.void(types.float64[::1], blocks_type()))


@njit(**JIT)
def no_sync(buf, vb):
    """Reduction hook of a single worker: nothing to exchange."""
    return


@njit(**JIT)
def threads_sync(buf, vb):
    """Reduction hook of workers on threads of one process: the buffer is shared, a barrier suffices."""
    barrier(vb.bar, vb.own[OW_W], vb.own[OW_SPIN])


# ================================================================================================
# block reductions: this worker's states [lo, hi) and the global states [g0, n)
# ================================================================================================
@njit(inline="always", **JIT)
def seg(own, s):
    """Bounds of segment ``s`` of this worker's vector (0: its blocks, 1: the global states), unsigned: numba
    then skips the negative-index wraparound on every access and the loops vectorise."""
    if s == 0:
        return uint64(own[OW_BOUNDS + own[OW_BLO]]), uint64(own[OW_BOUNDS + own[OW_BHI]])
    return uint64(own[OW_G0]), uint64(own[OW_N])


@njit(inline="always", **JIT)
def block_range(own, b):
    """States ``[a, z)`` of block ``b`` (unsigned)."""
    return uint64(own[OW_BOUNDS + b]), uint64(own[OW_BOUNDS + b + 1])


@njit(inline="always", **JIT)
def next_buffer(vb):
    """The reduction row buffer to use now (the two alternate) and the row width KR."""
    own = vb.own
    c = own[OW_CUR]
    own[OW_CUR] = 1 - c
    return vb.red[c], vb.red.shape[1] // own[OW_P]


@njit(**JIT_NRT_FREE)
def _sumsq4(x, s, wt, a_, z_):
    """x[a:z] ← s·x[a:z] and Σ (x_i·wt_i)² over [a, z) (four partial sums: the adds do not wait for each
    other)."""
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
def wrms(sync, vb, x, s, wt):
    """``x ← s·x`` (own and global states) and the weighted RMS norm sqrt(mean((x_i·wt_i)²)) over all n
    states (collective: per-block partial sums exchanged and added in block order; they stay in column 0 of
    the buffer's rows).  ``wt``: float64[n] weights 1/(atol_i + rtol_i·|y_i|)."""
    own = vb.own
    P = own[OW_P]
    buf, KR = next_buffer(vb)
    for b in range(own[OW_BLO], own[OW_BHI]):
        buf[b * KR] = _sumsq4(x, s, wt, own[OW_BOUNDS + b], own[OW_BOUNDS + b + 1])
    g = _sumsq4(x, s, wt, own[OW_G0], own[OW_N])
    sync(buf, vb)
    tot = 0.0
    for b in range(P):
        tot += buf[b * KR]
    return math.sqrt((tot + g) / own[OW_N])


@njit(**JIT)
def all_sum(sync, vb, vals, gvals):
    """Totals over blocks of per-block numbers (collective): ``vals`` float64[P, k] holds this worker's rows
    (its blocks), ``gvals`` float64[k] the global states' part; returns float64[k], the rows added in block
    order from 0.0, then ``gvals``."""
    own = vb.own
    P = own[OW_P]
    k = vals.shape[1]
    buf, KR = next_buffer(vb)
    for b in range(own[OW_BLO], own[OW_BHI]):
        for j in range(k):
            buf[b * KR + j] = vals[b, j]
    sync(buf, vb)
    out = np.zeros(k)
    for b in range(P):
        for j in range(k):
            out[j] += buf[b * KR + j]
    for j in range(k):
        out[j] += gvals[j]
    return out


@njit(**JIT_NRT_FREE)
def _finite_part(x, a, z):
    s = 0.0
    for i in range(uint64(a), uint64(z)):
        s += x[i] * 0.0
    return s


@njit(**JIT)
def all_finite(sync, vb, x):
    """True if every own and global entry of ``x`` is finite on every worker (collective)."""
    own = vb.own
    P = own[OW_P]
    buf, KR = next_buffer(vb)
    for b in range(own[OW_BLO], own[OW_BHI]):
        buf[b * KR] = _finite_part(x, own[OW_BOUNDS + b], own[OW_BOUNDS + b + 1])
    tot = _finite_part(x, own[OW_G0], own[OW_N])
    sync(buf, vb)
    for b in range(P):
        tot += buf[b * KR]
    return tot == 0.0


@njit(inline="always", **JIT)
def copy_own(dst, src, own):
    """``dst ← src`` on this worker's states."""
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            dst[i] = src[i]


def run_workers(fn, ws: list, bar: np.ndarray | None = None) -> list:
    """``fn(w)`` for every local worker at once (threads; worker 0 in this thread); returns the results.
    A worker that raises sets the abort flag of the barrier ``bar`` so that the others do not wait for it
    forever, and the exception is raised here."""
    import threading

    if len(ws) == 1:
        return [fn(ws[0])]
    out = [None] * len(ws)
    errs = []

    def target(k):
        try:
            out[k] = fn(ws[k])
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errs.append(exc)
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


@njit(inline="always", **JIT)
def wsumsq(x, wt, a, z):
    """Σ (x_i·wt_i)² over [a, z) (one accumulator)."""
    s = 0.0
    for i in range(a, z):
        v = x[i] * wt[i]
        s += v * v
    return s


@njit(**JIT)
def block_errors(own, dz, wt, eb, b0, b1):
    """RMS norms of ``dz·wt`` per block ``b0 <= b < b1`` into ``eb`` (float64[P]); returns their maximum (NaN
    propagates).  One worker's blocks (the multirate BDF's per-block error test)."""
    emax = 0.0
    for b in range(b0, b1):
        a = own[OW_BOUNDS + b]
        z = own[OW_BOUNDS + b + 1]
        e = math.sqrt(wsumsq(dz, wt, a, z) / max(1, z - a))
        eb[b] = e
        if not e <= emax:     # NaN propagates
            emax = e
    return emax


@njit(**JIT)
def latent_max(own, dz, wt, refine, refining):
    """Largest RMS norm of ``dz·wt`` over the blocks not marked in ``refine`` (every block unless ``refining``)
    and the global states."""
    P = own[OW_P]
    e = 0.0
    for b in range(P):
        if refining and refine[b]:
            continue
        a = own[OW_BOUNDS + b]
        z = own[OW_BOUNDS + b + 1]
        v = math.sqrt(wsumsq(dz, wt, a, z) / max(1, z - a))
        if not v <= e:
            e = v
    a = own[OW_G0]
    z = own[OW_N]
    if z > a:
        v = math.sqrt(wsumsq(dz, wt, a, z) / (z - a))
        if not v <= e:
            e = v
    return e


#: the norms of :func:`error_norm`
NORM_ALL, NORM_BLOCKS, NORM_LATENT = 0, 1, 2


@njit(**JIT)
def error_norm(kind, dz, wt, eb, refine, b0, b1, sync, vb):
    """The error norm a BDF step's order selection takes: ``NORM_ALL`` the weighted RMS norm over every state
    (:func:`wrms`, collective); ``NORM_BLOCKS`` the largest block norm over the blocks [b0, b1)
    (:func:`block_errors`, into ``eb``); ``NORM_LATENT`` the largest over the blocks not in ``refine`` and the
    global states (:func:`latent_max`; ``b0`` = 1: only those, 0: every block)."""
    if kind == NORM_ALL:
        return wrms(sync, vb, dz, 1.0, wt)
    if kind == NORM_BLOCKS:
        return block_errors(vb.own, dz, wt, eb, b0, b1)
    return latent_max(vb.own, dz, wt, refine, b0 == 1)
