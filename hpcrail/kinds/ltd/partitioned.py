"""LTD runs on hidden-vehicle blocks (Bosso et al. 2024 §2): the threads and MPI drivers.

:func:`run_partitioned` is called by :func:`hpcrail.kinds.ltd.run.run` for ``partition.backend``
``threads`` or ``mpi``; it returns the outputs a monolithic run returns (plus a ``partition``
attribute describing what ran), or ``None`` on MPI ranks other than 0.  The block kernels are
:mod:`hpcrail.partition`.
"""
from __future__ import annotations

import numba
import numpy as np

from hpcrail.integrators import Problem, integrate
from hpcrail.integrators.contract import BlockLayout
from hpcrail.kinds.ltd.problem import backend, ltd_problem
from hpcrail.kinds.ltd.result import add_envelope_check, ltd_result
from hpcrail.partition.layout import rank_blocks, scenario_layout, thread_count
from hpcrail.partition.ltd import (
    combine_accs, ltd_jac_spmd, ltd_observe_spmd, ltd_rhs_spmd, partitioned_params, spmd_bounds, spmd_slots,
    thread_kernels, worker_params,
)


def _attach(res, backend: str, layout, workers: int, state: str):
    unit = "MPI ranks" if backend == "mpi" else "threads"
    res.attrs["partition"] = f"{backend}: {layout.describe()}; {workers} {unit}"
    res.attrs["partition_state"] = state
    return res


def _checked(sc, model, sol, mono):
    """The outputs of a partitioned run with its checked envelopes (re-integrated with the monolithic problem
    ``mono``)."""
    res = ltd_result(sc, model, sol)
    add_envelope_check(sc, res, sol, mono)
    return res


def run_partitioned(sc, backend: str, t_out: np.ndarray, progress=None):
    """Run an LTD scenario on the ``threads`` or ``mpi`` backend; ``t_out`` sample times [s]."""
    if backend == "mpi":
        return _run_mpi(sc, t_out, progress)
    return _run_threads(sc, t_out, progress)


def _owner(n_blocks: int, workers: int) -> np.ndarray:
    """int64[W+1]: contiguous groups of blocks per worker (``rank_blocks``)."""
    groups = rank_blocks(n_blocks, workers)
    return np.asarray([lo for lo, _hi in groups] + [n_blocks], np.int64)


def _distributed(sc) -> bool:
    """True if the run integrates distributed state (:func:`hpcrail.kinds.ltd.problem.backend`)."""
    return backend(sc).state == "distributed"


def _run_threads(sc, t_out, progress):
    model, mono = ltd_problem(sc)
    nthr = thread_count(sc.partition.threads)
    layout = scenario_layout(sc.partition, model.n_vehicles, nthr)
    pp = partitioned_params(model.params, layout)
    if _distributed(sc):
        return _run_threads_spmd(sc, t_out, progress, model, mono, layout, pp, nthr)
    k = thread_kernels(model.params)   # the pneumatic brake's variants for a train with it
    prob = Problem(k.rhs, k.observe, pp, model.y0, jac=k.jac, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0, rtol_scale=mono.rtol_scale, jac_pattern=mono.jac_pattern)
    before = numba.get_num_threads()
    numba.set_num_threads(nthr)
    try:
        sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                        **sc.integrator.kwargs())
    finally:
        numba.set_num_threads(before)
    return _attach(_checked(sc, model, sol, mono), "threads", layout, nthr, "shared")


def _run_threads_spmd(sc, t_out, progress, model, mono, layout, pp, nthr):
    """Distributed-state run (:mod:`hpcrail.integrators.distributed`): every thread integrates its own
    blocks."""
    from hpcrail.models.couplers.envelope import ACC_HEAD

    W = max(1, min(nthr, layout.n_blocks))
    owner = _owner(layout.n_blocks, W)
    p = model.params
    slots, tail = spmd_slots(p, layout, owner)
    wp = worker_params(pp, owner)
    blocks = BlockLayout(spmd_bounds(p, layout), owner, wp, slots=slots, tail=tail, bar=wp[0].bar,
                         combine_acc=lambda accs: combine_accs(accs, p, layout, owner, ACC_HEAD))
    prob = Problem(ltd_rhs_spmd, ltd_observe_spmd, wp[0], model.y0, jac=ltd_jac_spmd, jac_pattern=mono.jac_pattern,
                   atol_scale=model.atol_scale, rtol_scale=mono.rtol_scale, acc0=model.acc0, blocks=blocks)
    sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                    **sc.integrator.kwargs())
    return _attach(_checked(sc, model, sol, mono), "threads", layout, W, "distributed")


def _run_mpi(sc, t_out, progress):
    from hpcrail.integrators.driver import compile_for
    from hpcrail.integrators.mpi import compile_on_first_rank
    from hpcrail.models.couplers.envelope import ACC_HEAD
    from hpcrail.partition import mpi as pmpi

    comm = pmpi.world()
    R, rank = comm.size, comm.rank
    model, mono = ltd_problem(sc)
    layout = scenario_layout(sc.partition, model.n_vehicles, R)
    groups = rank_blocks(layout.n_blocks, R)
    lo, hi = groups[rank]
    dist = _distributed(sc)
    p = model.params
    pp = partitioned_params(p, layout, b_lo=lo, b_hi=hi,
                            mpi=pmpi.mpi_fields(comm, layout, groups, p.block, distributed=dist))
    if dist:   # every rank integrates its own blocks: nothing gathers the state per step
        owner = _owner(layout.n_blocks, R)
        pp = pp._replace(xl=np.zeros(p.n_veh), nworkers=R, owner=owner)
        slots, tail = spmd_slots(p, layout, owner)
        blocks = BlockLayout(spmd_bounds(p, layout), owner, [pp], workers="mpi", rank=rank, comm=comm, slots=slots,
                             tail=tail)
        prob = Problem(pmpi.ltd_rhs_mpi_dist, pmpi.ltd_observe_mpi_dist, pp, model.y0, jac=pmpi.ltd_jac_mpi_dist,
                       jac_pattern=mono.jac_pattern, atol_scale=model.atol_scale, rtol_scale=mono.rtol_scale,
                       acc0=model.acc0, blocks=blocks)
    else:      # shared state: every rank integrates the whole state; the derivatives are gathered per evaluation
        k = pmpi.mpi_kernels(p)
        prob = Problem(k.rhs, k.observe, pp, model.y0, jac=k.jac, t0=0.0, atol_scale=model.atol_scale,
                       acc0=model.acc0, rtol_scale=mono.rtol_scale, jac_pattern=mono.jac_pattern)
    # rank 0 compiles into numba's disk cache, the other ranks load it: a cold run compiles once, not R times
    ctime = compile_on_first_rank(comm, lambda: compile_for(prob, sc.integrator.method))
    before = numba.get_num_threads()
    numba.set_num_threads(1)  # one core per rank
    try:
        sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s,
                        progress=progress if rank == 0 else None, **sc.integrator.kwargs())
    finally:
        numba.set_num_threads(before)
    sol.compile_time += ctime
    acc = pmpi.gather_metrics(comm, sol.acc, layout, groups, ACC_HEAD)
    if dist:   # the samples and the final state of every rank's blocks, once at the end
        sol.y, sol.y_final = pmpi.gather_blocks(comm, sol.y, sol.y_final, prob.blocks)
    # every rank ran the same steps on the same numbers; the slowest rank's time is the run's time
    sol.wall_time = comm.allreduce(sol.wall_time, op=pmpi.MPI.MAX)
    sol.compile_time = comm.allreduce(sol.compile_time, op=pmpi.MPI.MAX)
    if rank != 0:
        return None
    sol.acc = np.asarray(acc)
    return _attach(_checked(sc, model, sol, mono), "mpi", layout, R, "distributed" if dist else "shared")


__all__ = ["run_partitioned"]
