"""Partitioned LTD right-hand side and observer: blocks of hidden vehicles evaluated in parallel.

Per evaluation (Bosso et al. 2024 §2): every vehicle range (a block of hidden vehicles with the boundary
vehicles ahead of it, :meth:`Layout.range_starts`) reads the boundary states next to it from the
state vector — the extension and speeds of the connection ahead (its front force), the upstream
brake-pipe signal — and gets the position of its first vehicle from an exclusive scan over the
ranges ahead of it (positions are a prefix sum of connection extensions).  It then evaluates its
vehicles with :func:`~hpcrail.models.ltd.kernel.ltd_eval_range`, the same code the monolithic
right-hand side runs, so there is one copy of the physics.  Each connection between two ranges is
evaluated on both sides from the same states by the same function: the trailing forces on the
boundary vehicles are bitwise the forces the blocks feel (action = reaction exactly), and ranges
never wait for each other: **one parallel region (threads) or one collective (MPI) per evaluation**.

The global states are handled as in the monolithic model: the applied notch (the driver's command
is global) by every process identically, the four power integrals as a sum of per-range partial
sums in range order (threads and MPI give bitwise the same sums).

A partitioned right-hand side is just another ``rhs(t, y, params, dydt)`` of the integrator
contract, so every integrator of :mod:`hpcrail.integrators` can use it unchanged.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import njit, prange, uint64

from hpcrail._numba import JIT, JIT_NRT_FREE
from hpcrail.models.couplers.envelope import ACC_OFFROUTE
from hpcrail.models.ltd.build import LTDParams
from hpcrail.models.ltd.kernel import driver_command, ltd_eval_range, ltd_observe_range, observe_combine
from hpcrail.partition.layout import Layout

N_OBS = 4  # per-range extremes v_max, v_min, F_max, F_min


class PartitionedParams(NamedTuple):
    """Parameters of the partitioned LTD kernels (runtime data: a new layout never recompiles).

    ``starts`` int64[P+1]: vehicle range b is ``[starts[b], starts[b+1])``; this process evaluates the
    ranges ``b_lo <= b < b_hi`` (all of them with threads, its own with MPI).  ``work`` float64[P, 4]:
    per-range power partial sums [W]; ``obs`` float64[P, 4]: per-range extremes of the observer.
    MPI fields (zero / empty without MPI): communicator, ``MPI_DOUBLE`` and ``MPI_IN_PLACE`` handles,
    per-rank counts and displacements (int32) of the derivative slices and of the ``work`` rows.
    """

    model: LTDParams
    starts: np.ndarray
    b_lo: int
    b_hi: int
    work: np.ndarray
    obs: np.ndarray
    mpi_comm: int
    mpi_double: int
    mpi_in_place: int
    counts: np.ndarray
    displs: np.ndarray
    wcounts: np.ndarray
    wdispls: np.ndarray


def partitioned_params(params: LTDParams, layout: Layout, *, b_lo: int = 0, b_hi: int | None = None,
                       mpi: dict | None = None) -> PartitionedParams:
    """Pack a model's parameters with a layout (``mpi``: the MPI fields, see :mod:`hpcrail.partition.mpi`)."""
    P = layout.n_blocks
    starts = layout.range_starts()
    empty = np.zeros(0, np.int32)
    m = dict(mpi_comm=0, mpi_double=0, mpi_in_place=0, counts=empty, displs=empty, wcounts=empty, wdispls=empty)
    if mpi:
        m.update(mpi)
    return PartitionedParams(model=params, starts=starts, b_lo=int(b_lo), b_hi=int(P if b_hi is None else b_hi),
                             work=np.zeros((P, 4)), obs=np.zeros((P, N_OBS)), **m)


@njit(**JIT_NRT_FREE)
def range_length(y, p, j0, j1):
    """Σ (d_j + e_j) over the connections behind vehicles ``j0 <= j < j1`` [m]: the distance from the
    centre of vehicle j0 to the centre of vehicle j1.  Four partial sums (instruction-level
    parallelism: ~4x faster than the kernel's dependent chain)."""
    B = uint64(p.block)
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    ju0 = uint64(j0)
    end = uint64(min(j1, p.n_veh - 1))
    n = end - ju0 if end > ju0 else uint64(0)
    n4 = n - n % uint64(4)
    cd = p.center_dist
    for i in range(uint64(0), n4, uint64(4)):
        j = ju0 + i
        a0 += cd[j] + y[B * (j + uint64(1))]
        a1 += cd[j + uint64(1)] + y[B * (j + uint64(2))]
        a2 += cd[j + uint64(2)] + y[B * (j + uint64(3))]
        a3 += cd[j + uint64(3)] + y[B * (j + uint64(4))]
    for i in range(n4, n):
        j = ju0 + i
        a0 += cd[j] + y[B * (j + uint64(1))]
    return (a0 + a1) + (a2 + a3)


@njit(**JIT_NRT_FREE)
def range_start_position(y, p, starts, b):
    """Centre position [m] of the first vehicle of range ``b``: s_1 minus the exclusive scan of the
    range lengths ahead of it (each process recomputes the few sums it needs: no extra
    synchronisation; the cost is a fraction of the range's own evaluation)."""
    acc = 0.0
    for bb in range(b):
        acc += range_length(y, p, starts[bb], starts[bb + 1])
    return y[0] - acc


@njit(inline="always", **JIT)
def eval_one_range(t, y, pp, dydt, b, notch, cmd_brake):
    p = pp.model
    j0 = pp.starts[b]
    s = range_start_position(y, p, pp.starts, b)
    w_t, w_r, w_b, w_c = ltd_eval_range(t, y, p, dydt, p.no_record, False, j0, pp.starts[b + 1], s, notch,
                                        cmd_brake)
    pp.work[b, 0] = w_t
    pp.work[b, 1] = w_r
    pp.work[b, 2] = w_b
    pp.work[b, 3] = w_c


@njit(inline="always", **JIT)
def sum_power(pp, dydt):
    """Power integrals' rates: the per-range partial sums added in range order."""
    p = pp.model
    if p.i_energy >= 0:
        ie = p.i_energy
        for q in range(4):
            acc = 0.0
            for b in range(pp.work.shape[0]):
                acc += pp.work[b, q]
            dydt[ie + q] = acc


@njit(**JIT_NRT_FREE)
def _range_job(t, y, p, starts, work, dydt, b, notch, cmd_brake):
    j0 = starts[b]
    s = range_start_position(y, p, starts, b)
    w_t, w_r, w_b, w_c = ltd_eval_range(t, y, p, dydt, p.no_record, False, j0, starts[b + 1], s, notch, cmd_brake)
    work[b, 0] = w_t
    work[b, 1] = w_r
    work[b, 2] = w_b
    work[b, 3] = w_c


@njit(**JIT_NRT_FREE)
def _observe_job(t, y, p, starts, obs, acc, b):
    s = range_start_position(y, p, starts, b)
    vmax, vmin, fmax, fmin = ltd_observe_range(t, y, p, acc, starts[b], starts[b + 1], s)
    obs[b, 0] = vmax
    obs[b, 1] = vmin
    obs[b, 2] = fmax
    obs[b, 3] = fmin


# numba's parfors cannot pass a tuple holding arrays into the parallel region: the model parameters
# are unpacked into plain variables before the region and re-packed inside it (free: no copies).
_FIELDS = LTDParams._fields
_UNPACK = "\n    ".join(f"f_{f} = p.{f}" for f in _FIELDS)
_PACK = "LTDParams(" + ", ".join(f"f_{f}" for f in _FIELDS) + ")"
_SRC = f"""
def ltd_rhs_threads(t, y, pp, dydt):
    \"\"\"Partitioned LTD right-hand side on numba threads (integrator contract): one parallel region
    per evaluation over the vehicle ranges (static schedule: contiguous ranges per thread).
    Source: Bosso et al. 2024 §2 (hidden-vehicle blocks), eqs (1)-(7).\"\"\"
    p = pp.model
    notch, _cmd_notch, cmd_brake = driver_command(t, y, p, dydt)
    starts = pp.starts
    work = pp.work
    {_UNPACK}
    for b in prange(starts.size - 1):
        _range_job(t, y, {_PACK}, starts, work, dydt, b, notch, cmd_brake)
    sum_power(pp, dydt)


def ltd_observe_threads(t, y, pp, acc):
    \"\"\"Partitioned observer (metrics over every accepted step) on numba threads: per-coupler envelopes
    per range in parallel, global extremes folded in range order (same result as ``ltd_observe``).\"\"\"
    p = pp.model
    starts = pp.starts
    obs = pp.obs
    {_UNPACK}
    for b in prange(starts.size - 1):
        _observe_job(t, y, {_PACK}, starts, obs, acc, b)
    for b in range(starts.size - 1):
        observe_combine(t, y, p, acc, obs[b, 0], obs[b, 1], obs[b, 2], obs[b, 3])
    if y[0] + p.front_offset > p.route_end:
        acc[ACC_OFFROUTE] = 1.0
"""
# compiled under this module's name and globals so that numba can cache it (its cache is keyed by
# file and function name and rebuilds the function's globals from the module when loading)
_ns = globals()
exec(compile(_SRC, __file__, "exec"), _ns)  # noqa: S102 - fixed source built from field names
ltd_rhs_threads = njit(parallel=True, **JIT)(_ns["ltd_rhs_threads"])
ltd_observe_threads = njit(parallel=True, **JIT)(_ns["ltd_observe_threads"])


@njit(**JIT)
def ltd_rhs_serial_ranges(t, y, pp, dydt):
    """The partitioned evaluation without threads (one range after the other): the reference the
    parallel backends are tested against, and what an MPI rank runs for its own ranges."""
    notch, _cmd_notch, cmd_brake = driver_command(t, y, pp.model, dydt)
    for b in range(pp.b_lo, pp.b_hi):
        eval_one_range(t, y, pp, dydt, b, notch, cmd_brake)
    sum_power(pp, dydt)


from hpcrail.partition.layout import thread_count  # noqa: E402,F401  (re-exported)
