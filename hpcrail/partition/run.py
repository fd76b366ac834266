"""Running an LTD scenario with its ``partition:`` block: backend choice, threads and MPI drivers.

:func:`run_ltd_partitioned` is called by :func:`hpcrail.simulate.run_ltd`; it returns the same
dataset a monolithic run returns (with a ``partition`` attribute describing what ran), or ``None``
on MPI ranks other than 0.
"""
from __future__ import annotations

import numba
import numpy as np

from hpcrail.integrators import Problem, integrate
from hpcrail.partition.layout import rank_blocks, scenario_layout
from hpcrail.partition.ltd import (
    ltd_observe_threads, ltd_rhs_threads, partitioned_params, thread_count,
)


#: connection kinds the partitioned kernels evaluate (table laws); others need the monolithic model
PARTITIONABLE_KINDS = ("hysteretic", "rigid_bar", "linear")


def unpartitionable_kinds(sc) -> list[str]:
    """Connection kinds used by the consist that the partitioned kernels do not evaluate (noninertial
    couplers solve a coupler equilibrium that needs vehicle positions across blocks; dry-friction gears
    run the event-driven driver)."""
    kinds = {getattr(sc.connection_types[c], "kind", "hysteretic") for c in set(sc.connection_type_names())
             if c in sc.connection_types}
    return sorted(k for k in kinds if k not in PARTITIONABLE_KINDS)


def has_noninertial(sc) -> bool:
    return bool(unpartitionable_kinds(sc))


def choose_backend(spec, n_vehicles: int, threads: int | None = None, noninertial: bool = False) -> str:
    """``off``, ``threads`` or ``mpi`` for a :class:`~hpcrail.config.scenario.PartitionSpec`.

    ``auto`` runs monolithic below ``auto_min_vehicles`` vehicles (docs/performance.md), with a single
    thread, or when the consist has connection kinds the partitioned kernels do not evaluate
    (``noninertial``), and on threads otherwise.
    """
    if spec.backend != "auto":
        return spec.backend
    if noninertial:
        return "off"
    nthr = thread_count(spec.threads if threads is None else threads)
    return "threads" if n_vehicles >= spec.auto_min_vehicles and nthr > 1 else "off"


def _attach(ds, backend: str, layout, workers: int) -> None:
    unit = "MPI ranks" if backend == "mpi" else "threads"
    ds.attrs["partition"] = f"{backend}: {layout.describe()}; {workers} {unit}"


def run_ltd_partitioned(sc, backend: str, progress=None, config_yaml: str | None = None):
    """Run an LTD scenario on the ``threads`` or ``mpi`` backend (see :mod:`hpcrail.partition`)."""
    if backend == "mpi":
        return _run_mpi(sc, progress, config_yaml)
    return _run_threads(sc, progress, config_yaml)


def _run_threads(sc, progress, config_yaml):
    from hpcrail.results.ltd import ltd_dataset
    from hpcrail.simulate import integrator_kwargs, ltd_problem, sample_times

    model, mono = ltd_problem(sc)
    nthr = thread_count(sc.partition.threads)
    layout = scenario_layout(sc.partition, model.n_vehicles, nthr)
    pp = partitioned_params(model.params, layout)
    prob = Problem(ltd_rhs_threads, ltd_observe_threads, pp, model.y0, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0, rtol_scale=mono.rtol_scale, jac_pattern=mono.jac_pattern)
    t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
    before = numba.get_num_threads()
    numba.set_num_threads(nthr)
    try:
        sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                        **integrator_kwargs(sc.integrator))
    finally:
        numba.set_num_threads(before)
    ds = ltd_dataset(sc, model, sol, config_yaml=config_yaml)
    _attach(ds, "threads", layout, nthr)
    return ds


def _run_mpi(sc, progress, config_yaml):
    from hpcrail.partition import mpi as pmpi
    from hpcrail.models.ltd.build import ACC_HEAD
    from hpcrail.results.ltd import ltd_dataset
    from hpcrail.simulate import integrator_kwargs, ltd_problem, sample_times

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
    t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
    before = numba.get_num_threads()
    numba.set_num_threads(1)  # one core per rank
    try:
        sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s,
                        progress=progress if rank == 0 else None, **integrator_kwargs(sc.integrator))
    finally:
        numba.set_num_threads(before)
    acc = pmpi.gather_metrics(comm, sol.acc, layout, groups, ACC_HEAD)
    # every rank ran the same steps on the same numbers; the slowest rank's time is the run's time
    sol.wall_time = comm.allreduce(sol.wall_time, op=pmpi.MPI.MAX)
    sol.compile_time = comm.allreduce(sol.compile_time, op=pmpi.MPI.MAX)
    if rank != 0:
        return None
    sol.acc = np.asarray(acc)
    ds = ltd_dataset(sc, model, sol, config_yaml=config_yaml)
    _attach(ds, "mpi", layout, R)
    return ds
