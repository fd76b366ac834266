"""MPI backend of the hidden-vehicle partition: blocks on ranks, one collective per evaluation.

Started as ``mpiexec -n P hpcrail run SCENARIO.yaml --partition mpi`` (or ``srun`` under Slurm),
every rank loads the scenario and builds the model; rank r evaluates its contiguous group of
blocks (:func:`~hpcrail.partition.layout.rank_blocks`) and an in-place ``MPI_Allgatherv`` of the
derivative slices (plus one of the per-range power sums) gives every rank the same full derivative.
Every rank runs the same integrator on bitwise the same numbers, so every decision (step size,
acceptance, failure) is identical on all ranks without any change to the integrators, and every
integrator of the suite works.  The observer runs on each rank for its own couplers only; rank 0
gathers the envelopes at the end and writes the dataset of a serial run.

With distributed state (``partition.state``: every rank integrates its own blocks with the method's one
kernel, :mod:`hpcrail.integrators.distributed`) a rank holds only its own states: the model's collective
functions exchange the boundary rows of the ranges (:func:`ltd_rhs_mpi_dist`, the MPI twin of
:func:`hpcrail.partition.ltd.ltd_rhs_spmd`) and nothing gathers the whole state per step; rank 0 gathers the
samples once at the end.

MPI is called from numba-compiled code through :mod:`hpcrail.integrators.mpi` (the library mpi4py loaded,
resolved by name: the kernels are cached on disk like every other kernel).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.mpi import MPI, MPIUnavailable, allgather_in_place, world  # noqa: F401 (re-exported)
from hpcrail.models.brakes.kernel import brake_observe
from hpcrail.partition.ltd import (
    KX, SharedKernels, eval_one_range, eval_one_range_pneumatic, ltd_jac_shared_pneumatic, own_ranges,
    range_start_position, spmd_eval, spmd_export, spmd_import, spmd_jac_ranges, spmd_observe_fold,
    spmd_observe_ranges, sum_power,
)
from hpcrail.models.ltd.kernel import ltd_observe_range_tables, observe_combine
from hpcrail.models.couplers.envelope import ACC_OFFROUTE, N_ENV


@njit(inline="always", **JIT)
def _allgather_in_place(pp, buf, counts, displs):
    return allgather_in_place(buf, counts, displs, pp.mpi_comm, pp.mpi_double, pp.mpi_in_place)


@njit(inline="always", **JIT)
def _gather_derivative(pp, dydt):
    """Shared state: every rank's derivative slices and per-range power sums to every rank (in place), then the
    power integrals' rates."""
    _allgather_in_place(pp, dydt, pp.counts, pp.displs)
    _allgather_in_place(pp, pp.work, pp.wcounts, pp.wdispls)
    sum_power(pp, dydt)


@njit(**JIT)
def ltd_rhs_mpi(t, y, pp, dydt):
    """Partitioned LTD right-hand side on MPI ranks (integrator contract): this rank's ranges, then
    an in-place allgather of the derivative slices and of the per-range power sums.
    Source: Bosso et al. 2024 §2 (hidden-vehicle blocks), eqs (1)-(7)."""
    own_ranges(t, y, pp, dydt, eval_one_range)
    _gather_derivative(pp, dydt)


@njit(**JIT)
def ltd_observe_mpi(t, y, pp, acc):
    """Observer of this rank's couplers (no communication; :func:`gather_metrics` combines at the end)."""
    p = pp.model
    for b in range(pp.b_lo, pp.b_hi):
        s = range_start_position(y, p, pp.starts, b)
        vmax, vmin, fmax, fmin = ltd_observe_range_tables(t, y, p, acc, pp.starts[b], pp.starts[b + 1], s)
        observe_combine(t, y, p, acc, vmax, vmin, fmax, fmin)
    if y[0] + p.front_offset > p.route_end:
        acc[ACC_OFFROUTE] = 1.0


@njit(**JIT)
def ltd_rhs_mpi_pneumatic(t, y, pp, dydt):
    """:func:`ltd_rhs_mpi` of a train with the pneumatic brake: each of this rank's ranges evaluates its motion and
    its vehicles' brake states (:func:`~hpcrail.partition.ltd.eval_one_range_pneumatic`); a vehicle's brake states
    lie inside its derivative slice, so the same allgather gives every rank the whole derivative."""
    own_ranges(t, y, pp, dydt, eval_one_range_pneumatic)
    _gather_derivative(pp, dydt)


@njit(**JIT)
def ltd_observe_mpi_pneumatic(t, y, pp, acc):
    """:func:`ltd_observe_mpi` plus the brake metrics of the whole train
    (:func:`~hpcrail.models.brakes.kernel.brake_observe`; shared state: every rank holds the whole state and
    computes the same metrics, :func:`gather_metrics` keeps rank 0's)."""
    ltd_observe_mpi(t, y, pp, acc)
    brake_observe(t, y, pp.model, acc)


def mpi_kernels(p) -> SharedKernels:
    """The functions of a shared-state MPI run for a train of parameters ``p``: the pneumatic brake's variants for
    ``p.air_brake == 2`` (selected here, so the plain kernels never compile the brake code; every rank computes
    the monolithic analytic Jacobian itself, :func:`~hpcrail.partition.ltd.ltd_jac_shared_pneumatic`: no
    communication, the same entries on every rank)."""
    if p.air_brake == 2:
        return SharedKernels(ltd_rhs_mpi_pneumatic, ltd_observe_mpi_pneumatic, ltd_jac_shared_pneumatic)
    return SharedKernels(ltd_rhs_mpi, ltd_observe_mpi, None)


def mpi_fields(comm, layout, block_groups, block_size: int, distributed: bool = False) -> dict:
    """MPI fields of :class:`~hpcrail.partition.ltd.PartitionedParams`: handles, the per-rank
    counts/displacements of the ``work`` and ``obs`` rows (4 per range) and

    * shared state: of the derivative slices (vehicle ranges [J0, J1) own ``dydt[B*J0+1 : B*J1+1]``, the
      head's slice starts at 0 and the tail's ends at ``B*N``) in ``counts``/``displs``;
    * distributed state: of the connection lengths ``xl`` (connections behind vehicles [J0, min(J1, N−1)) of
      the middle ranks; none from the first and the last) in
      ``counts``/``displs`` and of the exchange rows ``xs`` (KX per range) in ``gcount``/``gdispl``."""
    B = block_size
    N = layout.n_vehicles
    starts = layout.range_starts()
    counts, displs, wc, wd, xc, xd = [], [], [], [], [], []
    for lo, hi in block_groups:
        j0, j1 = int(starts[lo]), int(starts[hi])
        if distributed:   # the lengths of the middle ranks only (hpcrail.partition.ltd.spmd_export)
            a, z = (j0, min(j1, N - 1)) if 0 < lo and hi < layout.n_blocks else (j0, j0)
        else:
            a = 0 if j0 == 0 else B * j0 + 1
            z = B * N if j1 == N else B * j1 + 1
        counts.append(max(0, z - a))
        displs.append(a)
        wc.append(4 * (hi - lo))
        wd.append(4 * lo)
        xc.append(KX * (hi - lo))
        xd.append(KX * lo)
    i32 = lambda v: np.asarray(v, np.int32)  # noqa: E731
    out = dict(mpi_comm=int(MPI._handleof(comm)), mpi_double=int(MPI._handleof(MPI.DOUBLE)),
               mpi_in_place=int(MPI.IN_PLACE), counts=i32(counts), displs=i32(displs), wcounts=i32(wc),
               wdispls=i32(wd))
    if distributed:
        out.update(gcount=i32(xc), gdispl=i32(xd))
    return out


# ---- distributed state: every rank integrates its own ranges' states ------------------------------------------
@njit(**JIT)
def _exchange(y, pp):
    """Neighbour exchange: this rank's exchange rows (and, from a middle rank of 3 or more, its connection
    lengths) to every rank, then the neighbours' boundary states into this rank's vector."""
    spmd_export(y, pp)
    _allgather_in_place(pp, pp.xs, pp.gcount, pp.gdispl)
    if pp.nworkers > 2:
        _allgather_in_place(pp, pp.xl, pp.counts, pp.displs)
    spmd_import(y, pp)


@njit(**JIT)
def ltd_rhs_mpi_dist(t, y, pp, dydt):
    """Collective right-hand side of a distributed-state run on MPI ranks: exchange, this rank's ranges, the
    global states' rates (applied notch, power integrals summed in range order from every rank's rows).
    Source: Bosso et al. 2024 §2 (hidden-vehicle blocks), eqs (1)-(7)."""
    _exchange(y, pp)
    spmd_eval(t, y, pp, dydt)
    _allgather_in_place(pp, pp.work, pp.wcounts, pp.wdispls)
    sum_power(pp, dydt)


@njit(**JIT)
def ltd_observe_mpi_dist(t, y, pp, acc):
    """Collective observer of a distributed-state run on MPI ranks: each rank keeps the envelopes of its own
    couplers and the global extremes (folded in range order: every rank holds the same)."""
    _exchange(y, pp)
    spmd_observe_ranges(t, y, pp, acc)
    _allgather_in_place(pp, pp.obs, pp.wcounts, pp.wdispls)
    spmd_observe_fold(t, y, pp, acc)


@njit(**JIT)
def ltd_jac_mpi_dist(t, y, pp, vals):
    """Collective analytic Jacobian of a distributed-state run on MPI ranks: the slots of this rank's rows and
    of the global rows."""
    _exchange(y, pp)
    spmd_jac_ranges(t, y, pp, vals)


def gather_metrics(comm, acc: np.ndarray, layout, block_groups, n_head: int) -> np.ndarray | None:
    """Combine the observers' accumulators on rank 0: per-coupler envelopes from the rank that owns
    the coupler, global extremes (and the time of the largest draft/buff force) over ranks.
    ``n_head``: number of scalar slots before the per-coupler entries.  Returns the combined
    accumulator on rank 0, ``None`` elsewhere."""
    from hpcrail.models.couplers.envelope import ACC_FMAX, ACC_FMIN, ACC_T_BUFF, ACC_T_DRAFT, ACC_VMAX, ACC_VMIN

    all_acc = comm.gather(acc, root=0)
    if comm.rank != 0:
        return None
    out = all_acc[0].copy()
    M = layout.n_vehicles - 1
    starts = layout.range_starts()
    for r, (lo, hi) in enumerate(block_groups):
        k0, k1 = int(starts[lo]), min(int(starts[hi]), M)
        a = all_acc[r]
        for q in range(N_ENV):
            sl = slice(n_head + q * M + k0, n_head + q * M + k1)
            out[sl] = a[sl]
    for a in all_acc[1:]:
        out[ACC_VMAX] = max(out[ACC_VMAX], a[ACC_VMAX])
        out[ACC_VMIN] = min(out[ACC_VMIN], a[ACC_VMIN])
        out[ACC_OFFROUTE] = max(out[ACC_OFFROUTE], a[ACC_OFFROUTE])
        if a[ACC_FMAX] > out[ACC_FMAX] or (a[ACC_FMAX] == out[ACC_FMAX] and a[ACC_T_DRAFT] < out[ACC_T_DRAFT]):
            out[ACC_FMAX], out[ACC_T_DRAFT] = a[ACC_FMAX], a[ACC_T_DRAFT]
        if a[ACC_FMIN] < out[ACC_FMIN] or (a[ACC_FMIN] == out[ACC_FMIN] and a[ACC_T_BUFF] < out[ACC_T_BUFF]):
            out[ACC_FMIN], out[ACC_T_BUFF] = a[ACC_FMIN], a[ACC_T_BUFF]
    return out


def gather_blocks(comm, Y: np.ndarray, y_final: np.ndarray, blocks):
    """On rank 0: the samples float64[k, n] and the final state float64[n] of a distributed-state run, each
    block's states from the rank that owns it (the global states from rank 0); ``(None, None)`` elsewhere."""
    lo = int(blocks.bounds[blocks.owner[comm.rank]])
    hi = int(blocks.bounds[blocks.owner[comm.rank + 1]])
    parts = comm.gather((lo, hi, np.ascontiguousarray(Y[:, lo:hi]), y_final[lo:hi].copy()), root=0)
    if comm.rank != 0:
        return None, None
    Y = Y.copy()
    y_final = y_final.copy()
    for a, z, ya, yf in parts:
        Y[:, a:z] = ya
        y_final[a:z] = yf
    return Y, y_final
