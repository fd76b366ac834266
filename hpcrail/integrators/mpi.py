"""MPI from numba: the MPI library mpi4py loaded, made callable from compiled kernels, and the reduction hook
of blocks on MPI ranks (:func:`mpi_sync`).

MPI is called from numba-compiled code through ``numba.types.ExternalFunction`` against the MPI library that
mpi4py loaded (the ``mpich`` wheel of the ``mpi`` extra: no system MPI needed).  The symbols are resolved by
name, so the compiled kernels are cached on disk like every other kernel.  Handles are ``int`` in the MPICH ABI
(MPICH, Intel MPI, Cray MPICH, MVAPICH) and pointers in Open MPI; both are passed as integers of the library's
handle size.  Imported only by runs on MPI ranks (importing it needs mpi4py).

Source: MPI Forum, *MPI: A Message-Passing Interface Standard* 4.0 (2021), §6.5 (``MPI_Allgatherv``,
``MPI_IN_PLACE``).
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from hpcrail._numba import JIT


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
#: handle type of this MPI ABI
H = types.int32 if MPI._sizeof(MPI.Comm) == 4 else types.int64
allgatherv = types.ExternalFunction(
    "MPI_Allgatherv", types.int32(types.intp, types.int32, H, types.intp, types.intp, types.intp, H, H))


@njit(inline="always", **JIT)
def allgather_in_place(buf, counts, displs, comm, double, in_place):
    """In-place ``MPI_Allgatherv`` of float64 slices: rank r's slice ``buf[displs[r] : displs[r]+counts[r]]``
    (int32 arrays, in doubles) reaches every rank."""
    return allgatherv(in_place, 0, double, buf.ctypes.data, counts.ctypes.data, displs.ctypes.data, double, comm)


@njit(**JIT)
def mpi_sync(buf, vb):
    """Reduction hook of blocks on MPI ranks: every rank's rows of ``buf`` reach every rank."""
    allgather_in_place(buf, vb.counts, vb.displs, vb.comm[0], vb.comm[1], vb.comm[2])


def _signed(v: int) -> int:
    """An address or handle as the int64 of the same bits (``MPI_IN_PLACE`` is ``(void*)-1`` in MPICH)."""
    v = int(v)
    return v - (1 << 64) if v >= (1 << 63) else v


def handles(comm) -> np.ndarray:
    """int64[3]: the communicator, ``MPI_DOUBLE`` and ``MPI_IN_PLACE`` handles of ``comm`` (same bits)."""
    return np.array([_signed(MPI._handleof(comm)), _signed(MPI._handleof(MPI.DOUBLE)), _signed(MPI.IN_PLACE)],
                    np.int64)


def compile_on_first_rank(comm, compile_fn, poll_s: float = 0.02) -> float:
    """Rank 0 runs ``compile_fn`` (numba compiles into its disk cache) while the other ranks of ``comm`` wait
    without spinning (a non-blocking barrier polled every ``poll_s`` seconds: an MPI barrier would keep their
    cores busy); then they run ``compile_fn`` themselves, which loads rank 0's kernels from the cache when it
    is theirs (ranks of one node, or a shared ``NUMBA_CACHE_DIR``) and compiles otherwise, as before.  A
    cold run on R ranks of a node thus compiles once instead of R times at once, in the same wall time.
    Returns this rank's seconds (compiling, waiting, loading).  An error of rank 0's compilation is raised
    after the barrier, so the other ranks never wait for ever (they meet the same error in their own call)."""
    import time

    t0 = time.perf_counter()
    if comm.size == 1:
        compile_fn()
        return time.perf_counter() - t0
    err = None
    if comm.rank == 0:
        try:
            compile_fn()
        except BaseException as exc:   # noqa: BLE001 - re-raised below, after releasing the other ranks
            err = exc
    req = comm.Ibarrier()
    while not req.Test():
        time.sleep(poll_s)
    if err is not None:
        raise err
    if comm.rank != 0:
        compile_fn()
    return time.perf_counter() - t0


def world():
    """A private duplicate of ``MPI.COMM_WORLD`` (kept alive for the life of the process)."""
    global _COMM
    try:
        return _COMM
    except NameError:
        _COMM = MPI.COMM_WORLD.Dup()
        return _COMM
