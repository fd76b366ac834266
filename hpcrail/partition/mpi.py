"""MPI backend of the hidden-vehicle partition: blocks on ranks, one collective per evaluation.

Started as ``mpiexec -n P hpcrail run SCENARIO.yaml --partition mpi`` (or ``srun`` under Slurm),
every rank loads the scenario and builds the model; rank r evaluates its contiguous group of
blocks (:func:`~hpcrail.partition.layout.rank_blocks`) and an in-place ``MPI_Allgatherv`` of the
derivative slices (plus one of the per-range power sums) gives every rank the same full derivative.
Every rank runs the same integrator on bitwise the same numbers, so every decision (step size,
acceptance, failure) is identical on all ranks without any change to the integrators, and every
integrator of the suite works.  The observer runs on each rank for its own couplers only; rank 0
gathers the envelopes at the end and writes the dataset of a serial run.

MPI is called from numba-compiled code through ``numba.types.ExternalFunction`` against the MPI
library that mpi4py loaded (the ``mpich`` wheel of the ``mpi`` extra: no system MPI needed).  The
symbols are resolved by name, so the compiled kernels are cached on disk like every other kernel.
Handles are ``int`` in the MPICH ABI (MPICH, Intel MPI, Cray MPICH, MVAPICH) and pointers in Open
MPI; both are passed as integers of the library's handle size.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from hpcrail._numba import JIT
from hpcrail.partition.ltd import eval_one_range, range_start_position, sum_power
from hpcrail.models.ltd.kernel import driver_command, ltd_observe_range, observe_combine
from hpcrail.models.couplers.envelope import ACC_OFFROUTE


class MPIUnavailable(RuntimeError):
    """mpi4py (and an MPI library) is not installed: ``pip install hpcrail[mpi]``."""


try:
    from mpi4py import MPI
except ImportError as exc:  # pragma: no cover - exercised when the extra is missing
    raise MPIUnavailable("the MPI backend needs mpi4py and an MPI library: pip install 'hpcrail[mpi]' "
                         f"(import failed: {exc})") from None


def _load_library() -> None:
    """Make the MPI library mpi4py loaded visible to LLVM's symbol resolution (by path, from the
    process's memory map; otherwise the names already visible to the dynamic linker are used)."""
    import llvmlite.binding as llb

    try:
        with open("/proc/self/maps") as fh:
            libs = sorted({ln.split()[-1] for ln in fh if "/libmpi" in ln and ".so" in ln})
    except OSError:  # pragma: no cover - non-Linux
        libs = []
    for lib in libs:
        llb.load_library_permanently(lib)


_load_library()
_H = types.int32 if MPI._sizeof(MPI.Comm) == 4 else types.int64  # handle type of this MPI ABI
_allgatherv = types.ExternalFunction(
    "MPI_Allgatherv", types.int32(types.intp, types.int32, _H, types.intp, types.intp, types.intp, _H, _H))


@njit(inline="always", **JIT)
def _allgather_in_place(pp, buf, counts, displs):
    h_double = pp.mpi_double
    return _allgatherv(pp.mpi_in_place, 0, h_double, buf.ctypes.data, counts.ctypes.data, displs.ctypes.data,
                       h_double, pp.mpi_comm)


@njit(**JIT)
def ltd_rhs_mpi(t, y, pp, dydt):
    """Partitioned LTD right-hand side on MPI ranks (integrator contract): this rank's ranges, then
    an in-place allgather of the derivative slices and of the per-range power sums.
    Source: Bosso et al. 2024 §2 (hidden-vehicle blocks), eqs (1)-(7)."""
    notch, _cmd_notch, cmd_brake = driver_command(t, y, pp.model, dydt)
    for b in range(pp.b_lo, pp.b_hi):
        eval_one_range(t, y, pp, dydt, b, notch, cmd_brake)
    _allgather_in_place(pp, dydt, pp.counts, pp.displs)
    _allgather_in_place(pp, pp.work, pp.wcounts, pp.wdispls)
    sum_power(pp, dydt)


@njit(**JIT)
def ltd_observe_mpi(t, y, pp, acc):
    """Observer of this rank's couplers (no communication; :func:`gather_metrics` combines at the end)."""
    p = pp.model
    for b in range(pp.b_lo, pp.b_hi):
        s = range_start_position(y, p, pp.starts, b)
        vmax, vmin, fmax, fmin = ltd_observe_range(t, y, p, acc, pp.starts[b], pp.starts[b + 1], s)
        observe_combine(t, y, p, acc, vmax, vmin, fmax, fmin)
    if y[0] + p.front_offset > p.route_end:
        acc[ACC_OFFROUTE] = 1.0


def world():
    """A private duplicate of ``MPI.COMM_WORLD`` (kept alive for the life of the process)."""
    global _COMM
    try:
        return _COMM
    except NameError:
        _COMM = MPI.COMM_WORLD.Dup()
        return _COMM


def mpi_fields(comm, layout, block_groups, block_size: int) -> dict:
    """MPI fields of :class:`~hpcrail.partition.ltd.PartitionedParams`: handles and the per-rank
    counts/displacements of the derivative slices (vehicle ranges [J0, J1) own ``dydt[B*J0+1 :
    B*J1+1]``, the head's slice starts at 0 and the tail's ends at ``B*N``) and of the ``work`` rows."""
    B = block_size
    N = layout.n_vehicles
    starts = layout.range_starts()
    counts, displs, wc, wd = [], [], [], []
    for lo, hi in block_groups:
        j0, j1 = int(starts[lo]), int(starts[hi])
        a = 0 if j0 == 0 else B * j0 + 1
        z = B * N if j1 == N else B * j1 + 1
        counts.append(z - a)
        displs.append(a)
        wc.append(4 * (hi - lo))
        wd.append(4 * lo)
    i32 = lambda v: np.asarray(v, np.int32)  # noqa: E731
    return dict(mpi_comm=int(MPI._handleof(comm)), mpi_double=int(MPI._handleof(MPI.DOUBLE)),
                mpi_in_place=int(MPI.IN_PLACE), counts=i32(counts), displs=i32(displs), wcounts=i32(wc),
                wdispls=i32(wd))


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
        for q in range(4):
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
