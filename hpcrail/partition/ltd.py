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
from hpcrail.models.couplers.envelope import ACC_OFFROUTE, N_ENV
from hpcrail.models.ltd.build import LTDParams
from hpcrail.integrators.collectives import barrier, new_barrier
from hpcrail.models.ltd.jacobian import ltd_jac_pneumatic, ltd_jac_range, ltd_jac_tail
from hpcrail.models.brakes.kernel import brake_eval_range, brake_observe  # noqa: F401  (brake_observe: in _SRC)
from hpcrail.models.ltd.kernel import (
    driver_command, ltd_eval_range, ltd_eval_range_pneumatic, ltd_observe_range_tables, observe_combine,
    schedule_index,
)
from hpcrail.partition.layout import Layout

N_OBS = 4  # per-range extremes v_max, v_min, F_max, F_min


class PartitionedParams(NamedTuple):
    """Parameters of the partitioned LTD kernels (runtime data: a new layout never recompiles).

    ``starts`` int64[P+1]: vehicle range b is ``[starts[b], starts[b+1])``; this process evaluates the
    ranges ``b_lo <= b < b_hi`` (all of them with threads, its own with MPI).  ``work`` float64[P, 4]:
    per-range power partial sums [W]; ``obs`` float64[P, 4]: per-range extremes of the observer.
    MPI fields (zero / empty without MPI): communicator, ``MPI_DOUBLE`` and ``MPI_IN_PLACE`` handles,
    per-rank counts and displacements (int32) of the derivative slices and of the ``work`` rows.

    Distributed-state runs (:mod:`hpcrail.integrators.distributed`, one parameter object per worker sharing
    the arrays): ``xs`` float64[P, KX] exchange rows of the ranges (end position, head position, first speed,
    last ``B`` states), ``xl`` float64[N] the connection lengths d_j + e_j [m] (written by the middle workers
    only: positions are chained from the first worker's end position over them, as the monolithic kernel
    chains them), ``bar`` the workers' barrier (threads), ``nworkers``, ``spin`` (barrier spins
    before yielding), ``owner`` int64[W+1] ranges per worker, ``gcount``/``gdispl`` int32[W] scratch
    for the MPI exchanges.
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
    xs: np.ndarray
    xl: np.ndarray
    bar: np.ndarray
    nworkers: int
    spin: int
    owner: np.ndarray
    gcount: np.ndarray
    gdispl: np.ndarray


#: columns of the exchange rows ``xs``: centre position [m] of the vehicle behind the range (written by the
#: first worker for its last range only), head position, first speed, last B (≤ 4) states
KX = 8
X_END, X_HEAD, X_FIRST, X_LAST = 0, 1, 2, 3


def partitioned_params(params: LTDParams, layout: Layout, *, b_lo: int = 0, b_hi: int | None = None,
                       mpi: dict | None = None) -> PartitionedParams:
    """Pack a model's parameters with a layout (``mpi``: the MPI fields, see :mod:`hpcrail.partition.mpi`)."""
    P = layout.n_blocks
    starts = layout.range_starts()
    empty = np.zeros(0, np.int32)
    m = dict(mpi_comm=0, mpi_double=0, mpi_in_place=0, counts=empty, displs=empty, wcounts=empty, wdispls=empty,
             gcount=np.zeros(1, np.int32), gdispl=np.zeros(1, np.int32))
    if mpi:
        m.update(mpi)
    b_hi = int(P if b_hi is None else b_hi)
    return PartitionedParams(model=params, starts=starts, b_lo=int(b_lo), b_hi=b_hi, work=np.zeros((P, 4)),
                             obs=np.zeros((P, N_OBS)), xs=np.zeros((P, KX)), xl=np.zeros(1),
                             bar=np.zeros(24, np.int64), nworkers=1, spin=4000, owner=np.array([0, P], np.int64),
                             **m)


def worker_params(pp: PartitionedParams, owner: np.ndarray) -> list[PartitionedParams]:
    """One parameter object per worker of a distributed-state run on threads: worker w evaluates the
    ranges ``[owner[w], owner[w+1])``; the exchange rows, partial sums and the barrier are shared."""
    owner = np.ascontiguousarray(owner, np.int64)
    W = owner.size - 1
    shared = dict(xs=np.zeros_like(pp.xs), xl=np.zeros(pp.model.n_veh), work=np.zeros_like(pp.work), obs=np.zeros_like(pp.obs), bar=new_barrier(),
                  nworkers=W, owner=owner, gcount=np.zeros(W, np.int32), gdispl=np.zeros(W, np.int32))
    return [pp._replace(b_lo=int(owner[w]), b_hi=int(owner[w + 1]), **shared) for w in range(W)]


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
    _store_work(pp.work, b, w_t, w_r, w_b, w_c)


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


@njit(inline="always", **JIT)
def _store_work(work, b, w_t, w_r, w_b, w_c):
    """Range ``b``'s contributions to the four power integrals (traction, running resistance, air brake,
    coupler) [W] into row b of ``work`` (float64[P, 4])."""
    work[b, 0] = w_t
    work[b, 1] = w_r
    work[b, 2] = w_b
    work[b, 3] = w_c


@njit(**JIT_NRT_FREE)
def _range_job(t, y, p, starts, work, dydt, b, notch, cmd_brake):
    j0 = starts[b]
    s = range_start_position(y, p, starts, b)
    w_t, w_r, w_b, w_c = ltd_eval_range(t, y, p, dydt, p.no_record, False, j0, starts[b + 1], s, notch, cmd_brake)
    _store_work(work, b, w_t, w_r, w_b, w_c)


@njit(**JIT_NRT_FREE)
def _range_job_pneumatic(t, y, p, starts, work, dydt, b, notch, cmd_brake):
    """:func:`_range_job` of a train with the pneumatic brake: the range's motion with the block forces of its
    cylinders (:func:`~hpcrail.models.ltd.kernel.ltd_eval_range_pneumatic`) and its vehicles' brake states
    (:func:`~hpcrail.models.brakes.kernel.brake_eval_range`, which reads the neighbours' coupling states — face
    nc−1 of the vehicle ahead, cell 0 of the vehicle behind — from ``y``): together the monolithic
    :func:`~hpcrail.models.ltd.kernel.ltd_eval_pneumatic` restricted to the range."""
    j0 = starts[b]
    j1 = starts[b + 1]
    s = range_start_position(y, p, starts, b)
    w_t, w_r, w_b, w_c = ltd_eval_range_pneumatic(t, y, p, dydt, p.no_record, False, j0, j1, s, notch, cmd_brake)
    brake_eval_range(t, y, p, dydt, j0, j1)
    _store_work(work, b, w_t, w_r, w_b, w_c)


@njit(inline="always", **JIT)
def eval_one_range_pneumatic(t, y, pp, dydt, b, notch, cmd_brake):
    """:func:`eval_one_range` of a train with the pneumatic brake (:func:`_range_job_pneumatic`)."""
    _range_job_pneumatic(t, y, pp.model, pp.starts, pp.work, dydt, b, notch, cmd_brake)


@njit(**JIT_NRT_FREE)
def _observe_job(t, y, p, starts, obs, acc, b):
    s = range_start_position(y, p, starts, b)
    vmax, vmin, fmax, fmin = ltd_observe_range_tables(t, y, p, acc, starts[b], starts[b + 1], s)
    obs[b, 0] = vmax
    obs[b, 1] = vmin
    obs[b, 2] = fmax
    obs[b, 3] = fmin


# numba's parfors cannot pass a tuple holding arrays into the parallel region: the model parameters
# are unpacked into plain variables before the region and re-packed inside it (free: no copies).
_FIELDS = LTDParams._fields
_UNPACK = "\n    ".join(f"f_{f} = p.{f}" for f in _FIELDS)
_PACK = "LTDParams(" + ", ".join(f"f_{f}" for f in _FIELDS) + ")"
_SRC = """
def ltd_rhs_threads{suffix}(t, y, pp, dydt):
    \"\"\"Partitioned LTD right-hand side on numba threads (integrator contract): one parallel region
    per evaluation over the vehicle ranges (static schedule: contiguous ranges per thread).{doc}
    Source: Bosso et al. 2024 §2 (hidden-vehicle blocks), eqs (1)-(7).\"\"\"
    p = pp.model
    notch, _cmd_notch, cmd_brake = driver_command(t, y, p, dydt)
    starts = pp.starts
    work = pp.work
    {unpack}
    for b in prange(starts.size - 1):
        {job}(t, y, {pack}, starts, work, dydt, b, notch, cmd_brake)
    sum_power(pp, dydt)


def ltd_observe_threads{suffix}(t, y, pp, acc):
    \"\"\"Partitioned observer (metrics over every accepted step) on numba threads: per-coupler envelopes
    per range in parallel, global extremes folded in range order (same result as ``ltd_observe``).{doc}\"\"\"
    p = pp.model
    starts = pp.starts
    obs = pp.obs
    {unpack}
    for b in prange(starts.size - 1):
        _observe_job(t, y, {pack}, starts, obs, acc, b)
    for b in range(starts.size - 1):
        observe_combine(t, y, p, acc, obs[b, 0], obs[b, 1], obs[b, 2], obs[b, 3])
    if y[0] + p.front_offset > p.route_end:
        acc[ACC_OFFROUTE] = 1.0
    {tail}
"""
#: the variants of the threads kernels: suffix -> (range job, observer tail, docstring note).  The pneumatic
#: brake's is selected in Python (:func:`thread_kernels`), so the plain kernels never compile the brake code.
_VARIANTS = {
    "": ("_range_job", "", ""),
    "_pneumatic": ("_range_job_pneumatic", "brake_observe(t, y, p, acc)",
                   "\n    With the pneumatic brake: each range also evaluates its vehicles' brake states "
                   "(:func:`_range_job_pneumatic`);\n    the observer adds the brake metrics of the whole train "
                   "after the ranges (:func:`~hpcrail.models.brakes.kernel.brake_observe`)."),
}
# compiled under this module's name and globals so that numba can cache it (its cache is keyed by
# file and function name and rebuilds the function's globals from the module when loading)
_ns = globals()
for _sfx, (_job, _tail, _doc) in _VARIANTS.items():
    exec(compile(_SRC.format(suffix=_sfx, job=_job, tail=_tail, doc=_doc, unpack=_UNPACK, pack=_PACK), __file__,
                 "exec"), _ns)  # noqa: S102 - fixed source built from field names
ltd_rhs_threads = njit(parallel=True, **JIT)(_ns["ltd_rhs_threads"])
ltd_observe_threads = njit(parallel=True, **JIT)(_ns["ltd_observe_threads"])
ltd_rhs_threads_pneumatic = njit(parallel=True, **JIT)(_ns["ltd_rhs_threads_pneumatic"])
ltd_observe_threads_pneumatic = njit(parallel=True, **JIT)(_ns["ltd_observe_threads_pneumatic"])


@njit(**JIT_NRT_FREE)
def ltd_jac_shared_pneumatic(t, y, pp, vals):
    """Analytic Jacobian of a shared-state partitioned run with the pneumatic brake: the monolithic
    :func:`~hpcrail.models.ltd.jacobian.ltd_jac_pneumatic` of ``pp.model`` (serial; bitwise the monolithic
    entries, so an implicit method takes the monolithic run's steps).  Finite differences over the pattern
    would be wrong here: the default brake pattern is reduced (``air_brake.pneumatic.jacobian: reduced``,
    :func:`hpcrail.models.brakes.layout.reduced_pattern`), and differences grouped by that pattern's column
    colouring add the left-out valve couplings into the kept entries (measured on a 36-vehicle rack, BDF2 rtol
    1e-6: 4925 steps against the analytic Jacobian's 2536, 10x the wall time)."""
    ltd_jac_pneumatic(t, y, pp.model, vals)


class SharedKernels(NamedTuple):
    """The functions of a shared-state partitioned run (integrator contract, parameters
    :class:`PartitionedParams`): right-hand side, observer and the analytic Jacobian (``None``: the integrators
    difference the right-hand side over the monolithic pattern)."""

    rhs: object
    observe: object
    jac: object


def thread_kernels(p: LTDParams) -> SharedKernels:
    """The shared-state threads kernels for a train of parameters ``p`` (as
    :func:`hpcrail.models.ltd.kernels.ltd_kernels` selects the monolithic ones): the pneumatic brake's variants
    for ``p.air_brake == 2`` (with its analytic Jacobian, :func:`ltd_jac_shared_pneumatic`), the plain ones
    otherwise."""
    if p.air_brake == 2:
        return SharedKernels(ltd_rhs_threads_pneumatic, ltd_observe_threads_pneumatic, ltd_jac_shared_pneumatic)
    return SharedKernels(ltd_rhs_threads, ltd_observe_threads, None)


@njit(inline="always", **JIT)
def own_ranges(t, y, pp, dydt, eval_range):
    """The driver's command, then this process's ranges ``b_lo <= b < b_hi`` one after the other with
    ``eval_range`` (:func:`eval_one_range` or :func:`eval_one_range_pneumatic`)."""
    notch, _cmd_notch, cmd_brake = driver_command(t, y, pp.model, dydt)
    for b in range(pp.b_lo, pp.b_hi):
        eval_range(t, y, pp, dydt, b, notch, cmd_brake)


@njit(**JIT)
def ltd_rhs_serial_ranges(t, y, pp, dydt):
    """The partitioned evaluation without threads (one range after the other): the reference the
    parallel backends are tested against, and what an MPI rank runs for its own ranges."""
    own_ranges(t, y, pp, dydt, eval_one_range)
    sum_power(pp, dydt)


# ================================================================================================
# distributed-state runs (hpcrail.integrators.distributed): every worker integrates its own ranges' states
# ================================================================================================
# A worker's vectors hold its own states and the global ones (applied notch, work integrals); the
# states of the neighbouring ranges that its ranges read (the connection and vehicle ahead, the
# first speed behind) go through the exchange rows ``xs``.  Positions keep the monolithic kernel's bits:
# the first worker chains its own vehicles' positions and exports the centre position of the vehicle
# behind its ranges (``xs[., X_END]``); a middle worker exports its connections' lengths d_j + e_j
# (``xl``), which the workers further behind chain from that position in the monolithic order; the last
# worker exports no position (with 2 workers no lengths travel at all).  Export own rows, barrier, import
# into the worker's vector.  Threads exchange through shared memory and a barrier, MPI ranks through
# MPI_Allgatherv (:mod:`hpcrail.partition.mpi`).  Every collective function ends with a second barrier
# after which nobody reads ``xs``/``xl`` until the next export.

@njit(inline="always", **JIT)
def spmd_chain_own(p, y, s, ja, jb):
    """Centre position [m] of vehicle ``jb`` from that of vehicle ``ja`` (``s``) over vehicles whose
    connection states this worker holds: s − (c_j + e_j) one after the other, the arithmetic of the
    monolithic kernel's position chain (:func:`hpcrail.models.ltd.kernel._eval_range`; ~1 ns per vehicle,
    a dependent chain)."""
    B = p.block
    for j in range(ja, jb):
        s = s - (p.center_dist[j] + y[B * j + B])
    return s


@njit(inline="always", **JIT)
def spmd_chain(pp, s, ja, jb):
    """:func:`spmd_chain_own` over another worker's vehicles, from its exported lengths ``xl`` (the same
    sums: ``xl[j]`` is c_j + e_j)."""
    for j in range(ja, jb):
        s = s - pp.xl[j]
    return s


@njit(**JIT_NRT_FREE)
def spmd_export(y, pp):
    """Fill the exchange rows of this worker's ranges from its states (and its part of the position
    chain: the first worker its end position, a middle worker its connection lengths)."""
    p = pp.model
    B = p.block
    starts = pp.starts
    P = starts.size - 1
    middle = pp.b_lo > 0 and pp.b_hi < P
    for b in range(pp.b_lo, pp.b_hi):
        j0 = starts[b]
        j1 = starts[b + 1]
        if middle:
            for j in range(j0, j1):
                pp.xl[j] = p.center_dist[j] + y[B * j + B]
        pp.xs[b, X_HEAD] = y[0]
        pp.xs[b, X_FIRST] = y[B * j0 + 1]
        if b < P - 1:
            for q in range(B):
                pp.xs[b, X_LAST + q] = y[B * j1 - B + 1 + q]
    if pp.b_lo == 0 and pp.b_hi < P:
        pp.xs[pp.b_hi - 1, X_END] = spmd_chain_own(p, y, y[0], 0, starts[pp.b_hi])


@njit(**JIT_NRT_FREE)
def spmd_import(y, pp):
    """Write the neighbours' boundary states (and the head position) from the exchange rows into this
    worker's vector."""
    p = pp.model
    B = p.block
    starts = pp.starts
    P = starts.size - 1
    b0 = pp.b_lo
    b1 = pp.b_hi
    if b0 > 0:
        y[0] = pp.xs[0, X_HEAD]
        j0 = starts[b0]
        for q in range(B):
            y[B * j0 - B + 1 + q] = pp.xs[b0 - 1, X_LAST + q]
    if b1 < P:
        y[B * starts[b1] + 1] = pp.xs[b1, X_FIRST]


@njit(inline="always", **JIT)
def spmd_start(y, pp):
    """Centre position [m] of this worker's first vehicle (after the import): the head's for the first
    worker, else the first worker's end position chained over the middle workers' lengths."""
    if pp.b_lo == 0:
        return y[0]
    k = pp.owner[1]
    return spmd_chain(pp, pp.xs[k - 1, X_END], pp.starts[k], pp.starts[pp.b_lo])


@njit(**JIT_NRT_FREE)
def spmd_eval(t, y, pp, dydt):
    """This worker's ranges (after the import): their derivatives and power partial sums (``work``)."""
    p = pp.model
    notch, _cmd_notch, cmd_brake = driver_command(t, y, p, dydt)
    s = spmd_start(y, pp)
    ja = pp.starts[pp.b_lo]
    for b in range(pp.b_lo, pp.b_hi):
        s = spmd_chain_own(p, y, s, ja, pp.starts[b])
        ja = pp.starts[b]
        w_t, w_r, w_b, w_c = ltd_eval_range(t, y, p, dydt, p.no_record, False, pp.starts[b], pp.starts[b + 1], s,
                                            notch, cmd_brake)
        pp.work[b, 0] = w_t
        pp.work[b, 1] = w_r
        pp.work[b, 2] = w_b
        pp.work[b, 3] = w_c


@njit(**JIT_NRT_FREE)
def spmd_observe_ranges(t, y, pp, acc):
    """Per-coupler envelopes of this worker's ranges and their extremes (``obs``)."""
    p = pp.model
    s = spmd_start(y, pp)
    ja = pp.starts[pp.b_lo]
    for b in range(pp.b_lo, pp.b_hi):
        s = spmd_chain_own(p, y, s, ja, pp.starts[b])
        ja = pp.starts[b]
        vmax, vmin, fmax, fmin = ltd_observe_range_tables(t, y, p, acc, pp.starts[b], pp.starts[b + 1], s)
        pp.obs[b, 0] = vmax
        pp.obs[b, 1] = vmin
        pp.obs[b, 2] = fmax
        pp.obs[b, 3] = fmin


@njit(**JIT_NRT_FREE)
def spmd_observe_fold(t, y, pp, acc):
    """Fold every range's extremes in range order (every worker: the same global metrics)."""
    p = pp.model
    for b in range(pp.starts.size - 1):
        observe_combine(t, y, p, acc, pp.obs[b, 0], pp.obs[b, 1], pp.obs[b, 2], pp.obs[b, 3])
    if y[0] + p.front_offset > p.route_end:
        acc[ACC_OFFROUTE] = 1.0


@njit(**JIT_NRT_FREE)
def spmd_jac_ranges(t, y, pp, vals):
    """Jacobian slots of this worker's ranges and of the global rows (after the import)."""
    p = pp.model
    ic = schedule_index(p, t, y)
    cmd_brake = p.sched_brake[ic]
    notch = y[p.i_notch]
    s = spmd_start(y, pp)
    ja = pp.starts[pp.b_lo]
    for b in range(pp.b_lo, pp.b_hi):
        s = spmd_chain_own(p, y, s, ja, pp.starts[b])
        ja = pp.starts[b]
        ltd_jac_range(t, y, p, vals, pp.starts[b], pp.starts[b + 1], s, notch, cmd_brake)
    ltd_jac_tail(t, y, p, vals)


@njit(**JIT_NRT_FREE)
def ltd_rhs_spmd(t, y, pp, dydt):
    """Collective right-hand side of a distributed-state run on threads: exchange, this worker's ranges,
    barrier, the global states' rates (applied notch, power integrals summed in range order)."""
    spmd_export(y, pp)
    barrier(pp.bar, pp.nworkers, pp.spin)
    spmd_import(y, pp)
    spmd_eval(t, y, pp, dydt)
    barrier(pp.bar, pp.nworkers, pp.spin)
    sum_power(pp, dydt)


@njit(**JIT_NRT_FREE)
def ltd_observe_spmd(t, y, pp, acc):
    """Collective observer of a distributed-state run on threads: each worker keeps the envelopes of its
    own couplers and the global extremes (folded in range order: every worker holds the same)."""
    spmd_export(y, pp)
    barrier(pp.bar, pp.nworkers, pp.spin)
    spmd_import(y, pp)
    spmd_observe_ranges(t, y, pp, acc)
    barrier(pp.bar, pp.nworkers, pp.spin)
    spmd_observe_fold(t, y, pp, acc)


@njit(**JIT_NRT_FREE)
def ltd_jac_spmd(t, y, pp, vals):
    """Collective analytic Jacobian of a distributed-state run on threads: the slots of this worker's
    rows (:func:`hpcrail.models.ltd.jacobian.ltd_jac_range` per range) and of the global rows."""
    spmd_export(y, pp)
    barrier(pp.bar, pp.nworkers, pp.spin)
    spmd_import(y, pp)
    spmd_jac_ranges(t, y, pp, vals)
    barrier(pp.bar, pp.nworkers, pp.spin)


def spmd_slots(p: LTDParams, layout: Layout, owner: np.ndarray) -> tuple[np.ndarray, int]:
    """``(slots int64[W, 2], tail)``: the Jacobian value slots each worker fills (its vehicles' slots and
    the kinematic slots of the first vehicle behind it) and the first slot of the global rows."""
    from hpcrail.models.ltd.jacobian import slots_per_vehicle

    S = slots_per_vehicle(p)
    N = p.n_veh
    starts = layout.range_starts()
    out = np.zeros((owner.size - 1, 2), np.int64)
    for w in range(owner.size - 1):
        j0, j1 = int(starts[owner[w]]), int(starts[owner[w + 1]])
        out[w] = (S * j0, S * j1 + 2 if j1 < N else S * N)
    return out, S * N


def spmd_bounds(p: LTDParams, layout: Layout) -> np.ndarray:
    """int64[P+1] state bounds of the ranges (range b owns ``[bounds[b], bounds[b+1])``; the states from
    ``B·N`` on — applied notch, work integrals — are global)."""
    B, N = p.block, p.n_veh
    starts = layout.range_starts()
    b = [0] + [B * int(j) + 1 for j in starts[1:-1]] + [B * N]
    return np.asarray(b, np.int64)


def combine_accs(accs: list, p: LTDParams, layout: Layout, owner: np.ndarray, n_head: int) -> np.ndarray:
    """One accumulator from the workers' (per-coupler envelopes from each coupler's owner; the global
    extremes are the same on every worker)."""
    out = accs[0].copy()
    M = p.n_veh - 1
    starts = layout.range_starts()
    for w, a in enumerate(accs):
        k0, k1 = int(starts[owner[w]]), min(int(starts[owner[w + 1]]), M)
        for q in range(N_ENV):
            sl = slice(n_head + q * M + k0, n_head + q * M + k1)
            out[sl] = a[sl]
    return out


from hpcrail.partition.layout import thread_count  # noqa: E402,F401  (re-exported)
