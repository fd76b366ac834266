"""Distributed state: a problem whose states are split into blocks (:class:`~hpcrail.integrators.contract.
BlockLayout`), every worker — a thread of this process or an MPI rank — integrating its own blocks with the
method's one kernel, the same compiled code a serial run uses.

Stage combinations, error norms, Newton updates, dense output, samples, the Jacobian, the LU factors and the
linear solves are all per block, inside one call of the kernel per worker for the whole run.  Workers meet only
where the method needs a global number (a reduction of per-block partial sums through the reduction hook,
:mod:`hpcrail.integrators.collectives`; the reduced system of the partitioned LU,
:mod:`hpcrail.integrators.spmd_linalg`) and inside the model's collective functions (neighbouring blocks'
boundary states).  Nothing gathers the whole state during the run: on MPI ranks the samples are gathered once at
the end by the caller.  This removes the Amdahl bound of a serial integrator driving a parallel right-hand side
(docs/hpc.md, docs/performance.md).

Every global number is a sum of per-block partial sums taken in block order, so results do not depend on the
number of workers nor on whether they are threads or MPI ranks (bitwise).  Against one block the error norms add
the same numbers in another order: a fixed-step method gives the serial bits, an adaptive one the serial
method's steps to rounding.  Events are not supported on blocks (they need the whole state), nor is a wall-time
budget (workers reading the clock on either side of a deadline would take different paths).

Threads are plain Python threads calling the compiled kernel (numba releases the GIL); they wait for each other
in a barrier built on atomic operations (spin, then ``sched_yield``) with a timeout.
"""
from __future__ import annotations

import time
from typing import Callable

import numpy as np

from hpcrail.integrators import registry
from hpcrail.integrators.collectives import (
    BAR_ABORT, BAR_TIMEOUT, KR_MIN, Blocks, make_own, new_act, new_barrier, no_sync, run_workers, sync_type,
    threads_sync,
)
from hpcrail.integrators.contract import (
    DONE, N_STATS, RUNNING, STAT_NAMES, TS_T, Problem, Solution, Status, next_pause,
)

#: barrier spins before a waiting worker yields its core
SPIN = 4000


def _blocks_of(problem: Problem, info, jacobian: str, serial_spec=None):
    """``(sspec, KR)``: the partitioned solver's layout for an implicit method (empty for explicit ones, and for
    one worker given the serial layout ``serial_spec``: its linear algebra is then the serial bordered band)
    and the width of a reduction row."""
    from hpcrail.integrators.spmd_linalg import analyse_spmd

    lay = problem.blocks
    n = problem.y0.size
    if not info.implicit or serial_spec is not None:
        return np.zeros(0, np.int64), KR_MIN
    if problem.jac is None or problem.jac_pattern is None:
        raise ValueError(f"method {info.name!r} on blocks needs the model's analytic Jacobian and its pattern")
    if jacobian not in ("auto", "analytic"):
        raise ValueError(f"jacobian = {jacobian!r}: blocks use the model's analytic Jacobian only (auto, analytic)")
    sl = analyse_spmd(problem.jac_pattern.rows, problem.jac_pattern.cols, n, lay.bounds, lay.tail, True)
    m = sl.ml + sl.mu
    return sl.sspec, max(KR_MIN, 1 + m * m)


def integrate_blocks(problem: Problem, info, kernel: Callable, no_function: Callable, t_out: np.ndarray,
                     t_final: float, *, settings: np.ndarray, atol_v: np.ndarray, rtol_v: np.ndarray,
                     jacobian: str = "auto", compile_time: float = 0.0,
                     progress: Callable[[float, float, dict], None] | None = None, n_chunks: int = 50,
                     serial_spec: np.ndarray | None = None) -> Solution:
    """Integrate a problem on blocks (called by :func:`hpcrail.integrators.integrate`, which has checked the
    arguments, compiled the method's ``kernel`` for the parameter type — the one a serial run uses — and
    packed ``settings``, ``atol_v`` and ``rtol_v``; ``no_function`` the do-nothing model function).

    Threads: every worker runs in its own thread (worker 0 in the calling thread); the :class:`Solution` holds
    the whole state (``y``, ``y_final``) and ``combine_acc`` of the workers' accumulators.  MPI: this rank's
    worker; ``y``/``y_final`` are valid on its own blocks and the global states only (the caller gathers at the
    end), ``acc`` is this rank's.

    ``serial_spec``: the serial ``spec`` (Jacobian layout) of a one-worker run whose linear algebra is the serial
    bordered band on the whole state (a multirate method walking the blocks on one core); None: the
    partitioned solver.

    Raises ``ValueError`` for a method without block support (the catalogue's ``blocks``), an implicit method
    without the model's analytic Jacobian, or a ``jacobian`` other than auto/analytic.
    """
    from hpcrail.config.integrator import method_spec
    from hpcrail.integrators.linalg import trivial_spec

    lay = problem.blocks
    if not method_spec(info.name).blocks:
        raise ValueError(f"method {info.name!r} does not run on blocks; methods that do: "
                         f"{', '.join(registry.block_methods())}")
    n = problem.y0.size
    P, W = lay.n_blocks, lay.n_workers
    sspec, KR = _blocks_of(problem, info, jacobian, serial_spec)
    spec = trivial_spec(n) if serial_spec is None else serial_spec
    entry = kernel
    ctime = compile_time
    bar = lay.bar if lay.bar is not None else new_barrier()
    red = np.zeros((2, P * KR))
    if lay.workers == "mpi":
        from hpcrail.integrators import mpi

        sync = mpi.mpi_sync
        comm = mpi.handles(lay.comm)
        counts = np.asarray([(lay.owner[r + 1] - lay.owner[r]) * KR for r in range(W)], np.int32)
        displs = np.asarray([lay.owner[r] * KR for r in range(W)], np.int32)
        local = [lay.rank]
    else:
        sync = threads_sync if W > 1 else no_sync
        comm = np.zeros(3, np.int64)
        counts = displs = np.zeros(0, np.int32)
        local = list(range(W))
    if sync_type().signature.args not in sync.overloads:
        sync.compile(sync_type().signature.args)
    Y_out = np.full((t_out.size, n), np.nan)
    state_n = info.state_size(n, spec, sspec, P)
    ws = []
    acts = lay.act if isinstance(lay.act, (list, tuple)) else [lay.act] * len(local)
    for k, w in enumerate(local):
        tstate = np.zeros(state_n)
        tstate[TS_T] = float(problem.t0)
        act = acts[k] if acts[k] is not None else new_act(lay.owner[w], lay.owner[w + 1])
        vb = Blocks(make_own(lay.bounds, n, lay.owner[w], lay.owner[w + 1], lay.slots[w], W, SPIN, lay.multirate), red,
                    bar, comm, counts, displs, sspec, act)
        ws.append(dict(vb=vb, y=problem.y0.copy(), tstate=tstate, iout=np.zeros(2, np.int64), acc=problem.acc0.copy(),
                       stats=np.zeros(N_STATS, np.int64), params=lay.params[k]))
    jac = problem.jac if problem.jac is not None and info.implicit else no_function   # explicit: never called
    mass = problem.mass if problem.mass is not None else np.ones(n)
    ev_out = np.zeros((0, n + 2))
    # the observer sees the initial state too (collective: every worker at once)
    run_workers(lambda d: problem.observe(float(problem.t0), d["y"], d["params"], d["acc"]), ws, bar)
    # MPI ranks pause at the same times whether or not they report progress (only rank 0 usually does): the
    # workers then make the same kernel calls (a pause never changes the steps, but the same calls keep it simple)
    # (rank 0's pause times, broadcast: :func:`~hpcrail.integrators.contract.next_pause`)
    chunks = max(1, n_chunks) if (progress is not None or lay.workers == "mpi") else 1
    t0 = float(problem.t0)
    codes = [RUNNING] * len(ws)

    def call(d, tp):
        return entry(problem.rhs, jac, no_function, problem.observe, d["params"], d["y"], d["tstate"], t_out, Y_out,
                     d["iout"], float(tp), float(t_final), d["acc"], d["stats"], settings, atol_v, rtol_v, mass, spec,
                     ev_out, sync, d["vb"])

    w0 = time.perf_counter()
    tp = next_pause(t0, t_final, t0, chunks, 0.0)
    while True:
        codes = run_workers(lambda d: call(d, tp), ws, bar)
        if progress is not None:
            progress(float(ws[0]["tstate"][TS_T]), float(t_final), dict(zip(STAT_NAMES, ws[0]["stats"].tolist())))
        if codes[0] != RUNNING or tp >= t_final:
            break
        tp = next_pause(t0, t_final, float(ws[0]["tstate"][TS_T]), chunks, time.perf_counter() - w0)
        if lay.workers == "mpi":   # every rank pauses where rank 0 does (the same kernel calls everywhere)
            tp = lay.comm.bcast(tp, root=0)
    wall = time.perf_counter() - w0
    if bar[BAR_ABORT] != 0:
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
    for k, d in enumerate(ws[1:], start=1):
        a, z = lay.bounds[lay.owner[local[k]]], lay.bounds[lay.owner[local[k] + 1]]
        y_final[a:z] = d["y"][a:z]
    if lay.workers == "threads" and lay.combine_acc is not None:
        acc = lay.combine_acc([d["acc"] for d in ws])
    else:
        acc = ws[0]["acc"]
    status = Status(code)
    stats = dict(zip(STAT_NAMES, ws[0]["stats"].tolist()))
    if method_spec(info.name).multirate:   # the re-integrated runs' steps, kept in the method's state
        from hpcrail.integrators.multirate import multirate_counters

        stats.update(multirate_counters(ws[0]["tstate"], n))
    return Solution(t=t_out, y=Y_out, status=status, message=status.describe(t_reached), t_reached=t_reached,
                    stats=stats, acc=acc, wall_time=wall, compile_time=ctime, method=info.name, y_final=y_final)


__all__ = ["integrate_blocks", "SPIN"]
