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
from hpcrail.kinds.ltd.problem import ltd_problem
from hpcrail.kinds.ltd.result import ltd_result
from hpcrail.partition.layout import rank_blocks, scenario_layout, thread_count
from hpcrail.partition.ltd import ltd_observe_threads, ltd_rhs_threads, partitioned_params


def _attach(res, backend: str, layout, workers: int):
    unit = "MPI ranks" if backend == "mpi" else "threads"
    res.attrs["partition"] = f"{backend}: {layout.describe()}; {workers} {unit}"
    return res


def run_partitioned(sc, backend: str, t_out: np.ndarray, progress=None):
    """Run an LTD scenario on the ``threads`` or ``mpi`` backend; ``t_out`` sample times [s]."""
    if backend == "mpi":
        return _run_mpi(sc, t_out, progress)
    return _run_threads(sc, t_out, progress)


def _run_threads(sc, t_out, progress):
    model, mono = ltd_problem(sc)
    nthr = thread_count(sc.partition.threads)
    layout = scenario_layout(sc.partition, model.n_vehicles, nthr)
    pp = partitioned_params(model.params, layout)
    prob = Problem(ltd_rhs_threads, ltd_observe_threads, pp, model.y0, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0, rtol_scale=mono.rtol_scale, jac_pattern=mono.jac_pattern)
    before = numba.get_num_threads()
    numba.set_num_threads(nthr)
    try:
        sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                        **sc.integrator.kwargs())
    finally:
        numba.set_num_threads(before)
    return _attach(ltd_result(sc, model, sol), "threads", layout, nthr)


def _run_mpi(sc, t_out, progress):
    from hpcrail.models.couplers.envelope import ACC_HEAD
    from hpcrail.partition import mpi as pmpi

    comm = pmpi.world()
    R, rank = comm.size, comm.rank
    model, mono = ltd_problem(sc)
    layout = scenario_layout(sc.partition, model.n_vehicles, R)
    groups = rank_blocks(layout.n_blocks, R)
    lo, hi = groups[rank]
    pp = partitioned_params(model.params, layout, b_lo=lo, b_hi=hi,
                            mpi=pmpi.mpi_fields(comm, layout, groups, model.params.block))
    prob = Problem(pmpi.ltd_rhs_mpi, pmpi.ltd_observe_mpi, pp, model.y0, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0, rtol_scale=mono.rtol_scale, jac_pattern=mono.jac_pattern)
    before = numba.get_num_threads()
    numba.set_num_threads(1)  # one core per rank
    try:
        sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s,
                        progress=progress if rank == 0 else None, **sc.integrator.kwargs())
    finally:
        numba.set_num_threads(before)
    acc = pmpi.gather_metrics(comm, sol.acc, layout, groups, ACC_HEAD)
    # every rank ran the same steps on the same numbers; the slowest rank's time is the run's time
    sol.wall_time = comm.allreduce(sol.wall_time, op=pmpi.MPI.MAX)
    sol.compile_time = comm.allreduce(sol.compile_time, op=pmpi.MPI.MAX)
    if rank != 0:
        return None
    sol.acc = np.asarray(acc)
    return _attach(ltd_result(sc, model, sol), "mpi", layout, R)


__all__ = ["run_partitioned"]
