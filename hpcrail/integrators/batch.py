"""Batched integration: many problems of one parameter type through one compiled call.

A sweep runs thousands of problems that differ only in parameter *values*: they share the numba type
of their parameters, hence one compiled integrator.  :func:`integrate_batch` groups the problems by
parameter type and runs each group either

* ``mode="prange"`` — one call of a ``parallel=True`` kernel looping over the problems with
  ``numba.prange`` (dynamic scheduling, chunk size 1, so unequal problem costs balance), or
* ``mode="threads"`` — one call of the method per problem from a pool of Python threads (the
  kernels release the GIL).

Both give bit-for-bit the results of :func:`hpcrail.integrators.integrate` (one call with
``t_pause = t_final`` takes the same steps as the chunked driver: methods never shorten a step to
land on a pause).  Like every method, the batch kernel is compiled against ``FunctionType``
signatures — here of the method itself too — so it is compiled once per parameter type, for every
method, and cached on disk.  Integrators know nothing of trains: this module sees only
:class:`~hpcrail.integrators.contract.Problem` objects.
"""
from __future__ import annotations

import dataclasses
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Sequence

import numba
import numpy as np
from numba import njit, prange, types
from numba.core.errors import NumbaTypeSafetyWarning
from numba.typed import List

from hpcrail._numba import JIT
from hpcrail.integrators import registry
from hpcrail.integrators.collectives import no_sync, one_block, sync_type
from hpcrail.integrators.common import _monotonic_ns, deadline_ns
from hpcrail.integrators.contract import N_SETTINGS, N_STATS, SET_WALL_BUDGET, Problem, Solution
from hpcrail.integrators.driver import (
    _kernel_for, call_arrays, compiled_kernel, integrate, kernel_argtypes, make_solution, method_options,
    model_function_type, model_jacobian,
    no_function, problem_spec,
)

@njit(parallel=True, **JIT)
def _batch_prange(method, rhs, jac, events, observe, params, ys, tstates, t_outs, Y_outs, iouts, t_final, accs,
                  stats, settings, atols, rtols, masses, specs, ev_outs, status, wall, sync):
    """Integrate problem i = 0..len(params)-1 with ``method`` from ``tstates[i][0]`` to ``t_final[i]``.

    Per problem: ``ys[i]`` float64[n_i] (in/out), ``tstates[i]``, ``t_outs[i]``, ``Y_outs[i]``
    float64[k_i, n_i], ``accs[i]``, ``atols[i]``, ``rtols[i]``, ``masses[i]`` float64[n_i],
    ``specs[i]`` int64[:], ``ev_outs[i]`` float64[r_i, n_i + 2] (typed lists, sizes may differ);
    rows of ``iouts`` int64[m, 1], ``stats`` int64[m, N_STATS], ``settings`` float64[m, N_SETTINGS];
    writes ``status[i]`` and ``wall[i]`` [s].  The observer sees the initial state first, as in
    ``integrate``.  Every problem is one block (``sync`` the do-nothing reduction hook).
    """
    m = len(params)
    for j in prange(m):
        i = np.int64(j)
        w0 = _monotonic_ns()
        if settings[i, SET_WALL_BUDGET] > 0.0 and w0 >= 0:   # the item's budget starts with the item
            iouts[i, 1] = w0 + np.int64(settings[i, SET_WALL_BUDGET] * 1e9)
        p = params[i]
        y = ys[i]
        ts = tstates[i]
        acc = accs[i]
        observe(ts[0], y, p, acc)
        status[i] = method(rhs, jac, events, observe, p, y, ts, t_outs[i], Y_outs[i], iouts[i], t_final[i],
                           t_final[i], acc, stats[i], settings[i], atols[i], rtols[i], masses[i], specs[i],
                           ev_outs[i], sync, one_block(y.size))
        wall[i] = (_monotonic_ns() - w0) * 1e-9 if w0 >= 0 else np.nan


_BATCH_COMPILED: dict = {}
#: the batch kernel seen as a registry entry, so that it gets a dispatcher (and an on-disk cache
#: index) private to each parameter type, like the integrators (``driver._kernel_for``)
_BATCH_INFO = SimpleNamespace(name="batch_prange", kernel=_batch_prange)


def _method_dispatcher(method: str, params):
    """The dispatcher of ``method`` specialised for ``params``' type and its FunctionType."""
    info = registry.get(method)
    disp = _kernel_for(info, params)
    argtys = kernel_argtypes(params)
    cres = disp.overloads[argtys]          # compiled by compiled_kernel()
    return disp, types.FunctionType(cres.signature.return_type(*argtys))


def _batch_entry(params, method_type) -> tuple:
    """Entry point of :func:`_batch_prange` for ``params``' type and a method's FunctionType."""
    ptype = numba.typeof(params)
    key = (ptype, method_type)
    hit = _BATCH_COMPILED.get(key)
    if hit is not None:
        return hit, 0.0
    batch = _kernel_for(_BATCH_INFO, params)
    fty = model_function_type(params)
    f1, f2, i1, i2 = types.float64[::1], types.float64[:, ::1], types.int64[::1], types.int64[:, ::1]
    L = types.ListType
    sig = (method_type, fty, fty, fty, fty, L(ptype), L(f1), L(f1), L(f1), L(f2), i2, f1, L(f1), i2, f2, L(f1),
           L(f1), L(f1), L(i1), L(f2), types.int64[::1], f1, sync_type())
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # typed-list indexing by the (unsigned) parallel loop index
        warnings.simplefilter("ignore", NumbaTypeSafetyWarning)
        if sig not in batch.overloads:
            batch.compile(sig)
    entry = batch.overloads[sig].entry_point
    _BATCH_COMPILED[key] = entry
    return entry, time.perf_counter() - t0


@dataclasses.dataclass
class BatchItem:
    """One problem of a batch and how to integrate it (the keyword arguments of :func:`integrate`).

    ``t_out`` float64[k] sample times [s] within [t0, t_final]; ``step``, ``rtol``, ``atol``,
    ``hmin``, ``hmax``, ``max_steps``, ``options``, ``jacobian``, ``observe_interval``,
    ``extra_settings`` and ``wall_budget_s`` mean what they mean for :func:`hpcrail.integrators.integrate`
    (the budget of an item starts when the batch kernel starts that item).
    """

    problem: Problem
    method: str
    t_out: np.ndarray
    t_final: float
    step: float = 0.0
    rtol: float = 1e-6
    atol: float = 1e-6
    hmin: float = 0.0
    hmax: float = 0.0
    max_steps: int = 100_000_000
    options: dict | None = None
    jacobian: str = "auto"
    observe_interval: float = 0.0
    extra_settings: tuple | None = None
    wall_budget_s: float | None = None


def check_item(item: BatchItem, index: int | None = None) -> None:
    """Raise ``ValueError`` (naming the item) if ``item`` cannot be integrated: ``t_final <= t0``,
    sample times unsorted or outside [t0, t_final], a fixed-step method without ``step``, an
    unknown option or Jacobian mode, a mass matrix given to an explicit method; KeyError for an
    unknown method."""
    item.t_out = np.ascontiguousarray(item.t_out, dtype=np.float64)
    index = "" if index is None else f" {index}"
    info = registry.get(item.method)
    t0 = float(item.problem.t0)
    t_out = item.t_out
    if item.t_final <= t0:
        raise ValueError(f"batch item{index}: t_final = {item.t_final} must be greater than t0 = {t0}")
    if t_out.size and (t_out[0] < t0 - 1e-12 or t_out[-1] > item.t_final + 1e-9 or np.any(np.diff(t_out) < 0)):
        raise ValueError(f"batch item{index}: sample times must be sorted and lie within [t0, t_final]")
    if not info.adaptive and item.step <= 0.0:
        raise ValueError(f"batch item{index}: method {info.name!r} has a fixed step: give step > 0")
    if not info.implicit and not item.problem.mass_identity:
        raise ValueError(f"batch item{index}: method {info.name!r} is explicit: it cannot integrate a mass matrix")
    if item.observe_interval < 0:
        raise ValueError(f"batch item{index}: observe_interval = {item.observe_interval} must be >= 0")
    try:
        if item.extra_settings is None:
            method_options(info, item.options)
        problem_spec(item.problem, info, item.jacobian)
    except ValueError as exc:
        raise ValueError(f"batch item{index}: {exc}") from None


def integrate_batch(items: Sequence[BatchItem], *, mode: str = "prange", threads: int = 1) -> list[Solution]:
    """Integrate every item; returns one :class:`Solution` per item, in order.

    Items are grouped by (method, numba type of the parameters); each group is one call of the
    batch kernel (``mode="prange"``, ``threads`` numba threads) or one method call per item from
    ``threads`` Python threads (``mode="threads"``).  Results equal those of :func:`integrate`
    bit for bit; ``wall_time`` is measured per item inside the kernel; ``compile_time`` is the
    time to compile/load the group's kernels (the same value for every item of the group).

    Raises
    ------
    KeyError for an unknown method; ValueError (naming the item) for a fixed-step method without
    ``step``, sample times outside [t0, t_final] or ``t_final <= t0``; ValueError for an unknown
    ``mode``.  Integration failures are statuses of the solutions, never exceptions.
    """
    if mode not in ("prange", "threads"):
        raise ValueError(f"mode must be 'prange' or 'threads', got {mode!r}")
    threads = max(1, int(threads))
    items = list(items)
    for i, it in enumerate(items):
        check_item(it, i)
    groups: dict = {}
    for i, it in enumerate(items):
        pr = it.problem
        key = (registry.get(it.method).name, numba.typeof(pr.params), pr.rhs, pr.observe, pr.jac,
               pr.events.fn if pr.events is not None else None)
        groups.setdefault(key, []).append(i)
    out: list = [None] * len(items)
    for (method, *_rest), idx in groups.items():
        sols = _run_group(method, [items[i] for i in idx], mode, threads)
        for i, s in zip(idx, sols):
            out[i] = s
    return out


def _run_group(method: str, items: list[BatchItem], mode: str, threads: int) -> list[Solution]:
    info = registry.get(method)
    if info.external is not None:  # a library-driven method (cvode): one integrate() call per item
        return [integrate(it.problem, method, it.t_out, it.t_final, step=it.step, rtol=it.rtol, atol=it.atol,
                          hmin=it.hmin, hmax=it.hmax, max_steps=it.max_steps, options=it.options,
                          jacobian=it.jacobian, observe_interval=it.observe_interval) for it in items]
    p0 = items[0].problem
    fns = (p0.rhs, p0.observe, p0.jac if info.implicit else None, p0.events.fn if p0.events is not None else None)
    kernel, ctime = compiled_kernel(method, p0.params, fns)
    jac = model_jacobian(p0, info)     # explicit methods: the do-nothing function (the model's is never called)
    evf = p0.events.fn if p0.events is not None else no_function
    m = len(items)
    arrays, specs = [], []
    for it in items:
        spec, _ = problem_spec(it.problem, info, it.jacobian)
        specs.append(spec)
        extra = method_options(info, it.options) if it.extra_settings is None else tuple(it.extra_settings)
        arrays.append(call_arrays(it.problem, info, spec, it.t_out, step=it.step, rtol=it.rtol, atol=it.atol,
                                  hmin=it.hmin, hmax=it.hmax, max_steps=it.max_steps, extra=extra,
                                  observe_interval=it.observe_interval, wall_budget_s=it.wall_budget_s))
    # per-problem rows of the batch kernel's 2-D arguments (each call's own arrays are views of them)
    iouts = np.zeros((m, 2), np.int64)
    stats = np.zeros((m, N_STATS), np.int64)
    settings = np.zeros((m, N_SETTINGS))
    t_final = np.array([float(it.t_final) for it in items])
    for i, a in enumerate(arrays):
        settings[i] = a.settings
        a.iout, a.stats, a.settings = iouts[i], stats[i], settings[i]
    status = np.zeros(m, np.int64)
    wall = np.zeros(m)
    if mode == "prange":
        method_disp, mtype = _method_dispatcher(method, p0.params)
        entry, bt = _batch_entry(p0.params, mtype)
        ctime += bt
        L = List
        params = L()
        for it in items:
            params.append(it.problem.params)
        prev = numba.get_num_threads()
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        try:
            with numba.parallel_chunksize(1):
                entry(method_disp, p0.rhs, jac, evf, p0.observe, params, L([a.y for a in arrays]),
                      L([a.tstate for a in arrays]), L([it.t_out for it in items]), L([a.Y_out for a in arrays]),
                      iouts, t_final, L([a.acc for a in arrays]), stats, settings, L([a.atol for a in arrays]),
                      L([a.rtol for a in arrays]), L([a.mass for a in arrays]), L(specs),
                      L([a.ev_out for a in arrays]), status, wall, no_sync)
        finally:
            numba.set_num_threads(prev)
    else:
        def one(i):
            it, a = items[i], arrays[i]
            pr = it.problem
            w0 = time.perf_counter()
            a.iout[1] = deadline_ns(float(a.settings[SET_WALL_BUDGET]))
            pr.observe(float(pr.t0), a.y, pr.params, a.acc)
            status[i] = kernel(pr.rhs, jac, evf, pr.observe, pr.params, a.y, a.tstate, it.t_out, a.Y_out, a.iout,
                               t_final[i], t_final[i], a.acc, a.stats, a.settings, a.atol, a.rtol, a.mass, specs[i],
                               a.ev_out, no_sync, a.vb)
            wall[i] = time.perf_counter() - w0

        if threads == 1 or m == 1:
            for i in range(m):
                one(i)
        else:
            with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="hpcrail-batch") as ex:
                list(ex.map(one, range(m)))
    return [make_solution(info, int(status[i]), it.t_out, float(t_final[i]), a, float(wall[i]), float(ctime))
            for i, (it, a) in enumerate(zip(items, arrays))]


_WARM_LOCK = threading.Lock()


def warm(problem: Problem, methods: Sequence[str]) -> float:
    """Compile (or load from the disk cache) every kernel a batch of ``problem``'s parameter type
    needs for each method; returns the seconds spent.  Call once before fanning out to many
    processes: concurrent first compilations into a shared cache can race."""
    t0 = time.perf_counter()
    with _WARM_LOCK:
        for method in methods:
            info = registry.get(method)
            if info.external is not None:
                continue
            compiled_kernel(info.name, problem.params, (problem.rhs, problem.observe,
                                                        problem.jac if info.implicit else None,
                                                        problem.events.fn if problem.events is not None else None))
            _batch_entry(problem.params, _method_dispatcher(info.name, problem.params)[1])
    return time.perf_counter() - t0


__all__ = ["BatchItem", "check_item", "integrate_batch", "warm"]
