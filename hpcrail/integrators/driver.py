"""Python-side driver: compiles a method for a problem's parameter type and runs it in chunks.

Compilation is per (method, parameter type), against ``FunctionType`` signatures for ``rhs``,
``jac``, ``events`` and ``observe`` so that the compiled integrator is independent of the model
function identity and is cached on disk by numba (a new Python process loads it instead of
recompiling).  A problem without a Jacobian or events passes do-nothing functions of the same type.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import logging
import math
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
import types as pytypes
from typing import Any, Callable

import numba
import numpy as np
from numba import njit, types

from hpcrail._numba import JIT, compiling_elsewhere
from hpcrail.integrators import registry
from hpcrail.integrators.collectives import blocks_type, no_sync, serial_blocks, sync_type
from hpcrail.integrators.distributed import integrate_blocks
from hpcrail.integrators.contract import (
    DONE, N_SETTINGS, N_STATS, RUNNING, SET_HMAX, SET_HMIN, SET_MAX_STEPS, SET_OPT0, SET_RTOL, SET_SAFETY,
    SET_OBS_DT, SET_STEP, SET_WALL_BUDGET, ST_EVENTS, STAT_NAMES, TS_H, TS_T, Problem, Solution, Status,
    next_pause,
)
from hpcrail.integrators.linalg import JacobianPattern, analyse, build_spec, trivial_spec

_log = logging.getLogger(__name__)
_COMPILED: dict = {}
_CLONES: dict = {}
_LAYOUTS: dict = {}

#: Jacobian modes accepted by :func:`integrate` (``integrator.jacobian`` in scenarios)
JACOBIAN_MODES = ("auto", "analytic", "finite_difference", "dense")


@dataclasses.dataclass(frozen=True)
class Budget:
    """Limits of every integration run inside a :func:`budget` block: wall time [s] per run (0 = none)
    and step attempts per run (0 = none; the smaller of this and the run's own ``max_steps``)."""

    wall_time_s: float = 0.0
    max_steps: int = 0


_BUDGET: contextvars.ContextVar = contextvars.ContextVar("hpcrail_integration_budget", default=Budget())


@contextlib.contextmanager
def budget(wall_time_s: float | None = None, max_steps: int | None = None):
    """Apply a per-run budget to every integration started in this block (this thread or task): a run
    that exceeds it stops with status ``TIME_BUDGET`` (or ``MAX_STEPS``) instead of running on — how a
    sweep never stalls on one scenario.  The wall time of a run in a batch starts with that run."""
    token = _BUDGET.set(Budget(float(wall_time_s or 0.0), int(max_steps or 0)))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def current_budget() -> Budget:
    """The budget in force (see :func:`budget`)."""
    return _BUDGET.get()


@njit(**JIT)
def no_function(t, y, params, out):
    """Placeholder for an absent ``jac`` or ``events`` (never called: the ``spec`` says so)."""
    return


def _kernel_for(info, params):
    """A dispatcher of ``info.kernel`` private to the parameter type of ``params``.

    numba keeps one on-disk cache index per function, pickling every compiled signature with its
    types.  A clone with a qualname derived from the parameter type gets its own index, so compiling
    an integrator for a model defined in a user's script never affects other models' caches.
    Methods sharing a kernel (``bdf``/``ndf``, the ESDIRK family) share its clone: one compilation.
    """
    return _kernel_for_type(info, type(params))


def _kernel_for_type(info, cls):
    """:func:`_kernel_for` from the parameter class (what the compile helper process receives)."""
    tag = re.sub(r"[^A-Za-z0-9_]", "_", f"{cls.__module__}.{cls.__qualname__}")
    py = info.kernel.py_func
    key = (py.__module__, py.__qualname__, tag)
    disp = _CLONES.get(key)
    if disp is None:
        clone = pytypes.FunctionType(py.__code__, py.__globals__, py.__name__, py.__defaults__, py.__closure__)
        clone.__qualname__ = f"{py.__qualname__}__{tag}"
        clone.__doc__ = py.__doc__
        clone.__module__ = py.__module__
        opts = {k: v for k, v in info.kernel.targetoptions.items() if k != "nopython"}
        disp = numba.njit(cache=True, **opts)(clone)
        _CLONES[key] = disp
    return disp


def _on_disk(disp, argtys) -> bool:
    """Whether numba's disk cache holds ``disp`` compiled for ``argtys`` (numba's cache index, read
    without loading the code; any surprise in numba's internals reads as "not cached")."""
    try:
        cache = disp._cache
        key = cache._index_key(tuple(argtys), disp.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:   # noqa: BLE001 (an internal API of numba: fall back to compiling here)
        return False


def compile_jobs() -> int:
    """Processes that compile a first run's kernels: 2 (the integrator in a helper process while the
    model's functions compile in this one) when this process may use two CPUs, else 1.
    ``HPCRAIL_COMPILE_JOBS=1`` turns the helper off.  Never under MPI (every rank compiles
    already) and never for parameter types outside hpcrail (a helper process may not import them)."""
    env = os.environ.get("HPCRAIL_COMPILE_JOBS", "").strip()
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            raise ValueError(f"HPCRAIL_COMPILE_JOBS = {env!r}: give a whole number of processes (1 = no "
                             "helper process)") from None
    if "mpi4py.MPI" in sys.modules:
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:     # not on Linux
        cpus = os.cpu_count() or 1
    return 2 if cpus >= 2 else 1


def _start_compile_helper(method: str, params, argtys):
    """Start a process compiling the integrator ``method`` for ``argtys`` into the disk cache
    (:mod:`hpcrail.integrators._compile_helper`); ``None`` when not worth it or not possible."""
    cls = type(params)
    if compile_jobs() < 2 or not cls.__module__.startswith("hpcrail."):
        return None
    try:
        payload = pickle.dumps((method, cls, argtys))
        err = tempfile.TemporaryFile()
        proc = subprocess.Popen([sys.executable, "-m", "hpcrail.integrators._compile_helper"],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err)
        proc.stdin.write(payload)
        proc.stdin.close()
    except Exception:   # noqa: BLE001 (no helper: compile here, as without one)
        return None
    return proc, err


def model_function_type(params) -> types.FunctionType:
    """numba type of ``f(t, y, params, out) -> None`` for the given parameter object."""
    ptype = numba.typeof(params)
    return types.FunctionType(types.void(types.float64, types.float64[::1], ptype, types.float64[::1]))


def kernel_argtypes(params) -> tuple:
    """Argument types of an integrator kernel specialised for ``params`` (see contract)."""
    fty = model_function_type(params)
    f1 = types.float64[::1]
    i1 = types.int64[::1]
    f2 = types.float64[:, ::1]
    return (fty, fty, fty, fty, numba.typeof(params), f1, f1, f1, f2, i1, types.float64, types.float64, f1, i1,
            f1, f1, f1, f1, i1, f2, sync_type(), blocks_type())


def compiled_kernel(method: str, params, functions=(), precompile=()) -> tuple[Callable, float]:
    """Return ``(entry_point, seconds_spent_compiling_or_loading)`` for ``method`` and ``params``.

    ``functions``: the model's numba functions (rhs, observe, ...) to compile for the same
    signature now, so that timing an integration never includes their compilation.
    ``precompile``: ``(dispatcher, argument types)`` pairs compiled while a helper process compiles
    the integrator (:func:`compile_jobs`; a first run on two CPUs), else left to their first call.
    """
    info = registry.get(method)
    if info.kernel is None:
        raise ValueError(f"method {info.name!r} is run by an external library (integrators/cvode.py) and has no "
                         "numba kernel: it integrates single problems through integrate() only, not event-driven "
                         "(friction) or other kernel-level paths; use an hpcrail method (bdf2, trbdf2, radau5, ...)")
    argtys = kernel_argtypes(params)
    key = (info.kernel.py_func.__qualname__, argtys)
    t0 = time.perf_counter()
    fsig = model_function_type(params).signature
    pending = [f for f in tuple(functions) + (no_function,) if f is not None and fsig.args not in f.overloads]
    ssig = sync_type().signature
    if ssig.args not in no_sync.overloads:
        no_sync.compile(ssig.args)
    kernel = _kernel_for(info, params)
    helper = None
    with contextlib.ExitStack() as stack:
        if key not in _COMPILED and argtys not in kernel.overloads and pending and not _on_disk(kernel, argtys):
            # a first run: the integrator compiles in a helper process while the model's functions compile here
            helper = _start_compile_helper(info.name, params, argtys)
            if helper is not None:      # the compile notice says so even when nothing compiles here
                stack.enter_context(compiling_elsewhere())
        for f in pending:
            f.compile(fsig.args)
        if key in _COMPILED:
            return _COMPILED[key], time.perf_counter() - t0
        if helper is not None:
            proc, err = helper
            for disp, argtypes in precompile:   # work for this process while the helper compiles
                if tuple(argtypes) not in disp.overloads:
                    disp.compile(tuple(argtypes))
            with err:
                if proc.wait() != 0:   # compile here instead (the same error, if any, is then raised here)
                    err.seek(0)
                    _log.debug("compile helper for %s failed (%s): compiling in this process", info.name,
                               err.read().decode(errors="replace")[-2000:])
    cres = kernel.overloads.get(argtys)
    if cres is None:
        kernel.compile(argtys)     # loads what the helper compiled, if it did
        cres = kernel.overloads[argtys]
    _COMPILED[key] = cres.entry_point
    return cres.entry_point, time.perf_counter() - t0


def compile_for(problem: Problem, method: str) -> float:
    """Compile (or load from numba's disk cache) what :func:`integrate` compiles for ``problem`` and ``method``,
    without integrating: the method's kernel for the parameter type and the model's functions (on blocks: the
    reduction hook of the layout's workers too).  Returns the seconds spent.  Used by MPI runs, where rank 0
    compiles into the disk cache while the other ranks wait and then load it
    (:func:`hpcrail.integrators.mpi.compile_on_first_rank`).  Raises what :func:`integrate` raises for an
    unknown method or one without a numba kernel."""
    info = registry.get(method)
    t0 = time.perf_counter()
    if problem.blocks is not None:
        compiled_kernel(info.name, problem.params, (problem.rhs, problem.observe, problem.jac))
        if problem.blocks.workers == "mpi":
            from hpcrail.integrators.mpi import mpi_sync

            if sync_type().signature.args not in mpi_sync.overloads:
                mpi_sync.compile(sync_type().signature.args)
    else:
        compiled_kernel(info.name, problem.params, model_functions(problem, info), problem.precompile)
    return time.perf_counter() - t0


def model_functions(problem: Problem, info: registry.MethodInfo) -> tuple:
    """The model's numba functions a serial run of ``info`` calls (rhs, observe, the Jacobian of an implicit
    method, the event function; None where unused), compiled with the method's kernel."""
    return (problem.rhs, problem.observe, problem.jac if info.implicit else None,
            problem.events.fn if problem.events else None)


def make_settings(*, step: float = 0.0, hmin: float = 0.0, hmax: float = 0.0, max_steps: float = 1e8,
                  rtol: float = 1e-6, safety: float = 0.9, extra: tuple = ()) -> np.ndarray:
    """Pack the common settings into the float64[16] array of the contract (``extra``: the method options by
    index, from index 6; options 5 and 6 do not exist — their slots hold the observation interval and the wall
    budget — and options 7-9 go to slots 13-15)."""
    s = np.zeros(N_SETTINGS)
    s[SET_STEP], s[SET_HMIN], s[SET_HMAX] = step, hmin, hmax
    s[SET_MAX_STEPS], s[SET_RTOL], s[SET_SAFETY] = max_steps, rtol, safety
    for i, v in enumerate(extra[:N_SETTINGS - SET_OPT0]):
        if SET_OPT0 + i not in (SET_OBS_DT, SET_WALL_BUDGET):
            s[SET_OPT0 + i] = v
    return s


def method_options(info: registry.MethodInfo, options: dict | None) -> tuple:
    """Values of the method's options (defaults filled in) in settings order.

    Raises ``ValueError`` naming the method, the option and the allowed names for an unknown one.
    """
    options = dict(options or {})
    settable = {k for k, o in info.options.items() if not o.internal}
    unknown = sorted(set(options) - settable)
    if unknown:
        allowed = ", ".join(sorted(settable)) or "none"
        raise ValueError(f"method {info.name!r} has no option {unknown[0]!r}; allowed: {allowed}")
    vals = [0.0] * (N_SETTINGS - SET_OPT0)
    for name, opt in info.options.items():
        v = float(options.get(name, opt.default))
        if not (opt.low <= v <= opt.high):
            raise ValueError(f"method {info.name!r} option {name!r} = {v} is outside [{opt.low}, {opt.high}]")
        vals[opt.index] = v
    return tuple(vals)


def problem_spec(problem: Problem, info: registry.MethodInfo, jacobian: str = "auto"):
    """The int64 ``spec`` array (Jacobian layout, FD groups, event flags) and whether the model's
    analytic Jacobian is used.  Layout analyses are cached per pattern object."""
    n = problem.y0.size
    ev = problem.events
    evd = ev.direction if ev is not None else ()
    evt = [int(x) for x in ev.terminal] if ev is not None else ()
    if not info.implicit:
        return trivial_spec(n, evd, evt), False
    if jacobian not in JACOBIAN_MODES:
        raise ValueError(f"jacobian = {jacobian!r}; allowed: {', '.join(JACOBIAN_MODES)}")
    if jacobian == "analytic" and problem.jac is None:
        raise ValueError("jacobian = 'analytic' but the problem has no analytic Jacobian")
    if jacobian == "dense":
        pattern = JacobianPattern.dense(n)
        use_jac = False
    else:
        pattern = problem.jac_pattern if problem.jac_pattern is not None else JacobianPattern.dense(n)
        use_jac = problem.jac is not None and jacobian in ("auto", "analytic")
    key = (id(pattern), n)
    hit = _LAYOUTS.get(key)
    if hit is None or hit[0] is not pattern:
        hit = (pattern, analyse(pattern))
        _LAYOUTS[key] = hit
        if len(_LAYOUTS) > 64:
            _LAYOUTS.pop(next(iter(_LAYOUTS)))
    layout = hit[1]
    return build_spec(layout, pattern, use_jac, problem.mass_identity, evd, evt), use_jac


@dataclasses.dataclass
class CallArrays:
    """Everything a method kernel call needs besides the problem's functions (see the contract):
    state ``y``, solver state ``tstate``, samples ``Y_out``/``iout``, observer ``acc``, ``stats``,
    ``settings``, per-state ``atol``/``rtol``, ``mass``, event records ``ev_out``, the ``jac`` and
    ``events`` functions (do-nothing functions when absent) and the vector layout ``vb`` (one block,
    :mod:`~hpcrail.integrators.collectives`)."""

    y: np.ndarray
    tstate: np.ndarray
    Y_out: np.ndarray
    iout: np.ndarray
    acc: np.ndarray
    stats: np.ndarray
    settings: np.ndarray
    atol: np.ndarray
    rtol: np.ndarray
    mass: np.ndarray
    ev_out: np.ndarray
    jac: Callable
    events: Callable
    vb: Any = None


def call_arrays(problem: Problem, info: registry.MethodInfo, spec: np.ndarray, t_out: np.ndarray, *,
                step: float = 0.0, rtol: float = 1e-6, atol: float = 1e-6, hmin: float = 0.0, hmax: float = 0.0,
                max_steps: int = 100_000_000, extra: tuple = (), observe_interval: float = 0.0,
                event_records: int | None = None, wall_budget_s: float | None = None) -> CallArrays:
    """Fresh arrays of one kernel call of ``problem`` from ``problem.t0`` (the one place that prepares
    them: :func:`integrate`, :func:`hpcrail.integrators.batch.integrate_batch` and
    :func:`hpcrail.integrators.hybrid.integrate_hybrid`).  ``extra``: the method's option values in
    settings order; ``event_records``: capacity of ``ev_out`` (default: the problem's events');
    ``wall_budget_s``: wall-time budget of the run (None: the :func:`budget` in force), which also
    caps ``max_steps``.  The deadline ``iout[1]`` is set when the run starts (:func:`start_clock`)."""
    n = problem.y0.size
    tstate = np.zeros(info.state_size(n, spec))
    tstate[TS_T] = float(problem.t0)
    tstate[TS_H] = 0.0
    cap = current_budget()
    if cap.max_steps > 0:
        max_steps = min(int(max_steps), cap.max_steps)
    settings = make_settings(step=step, hmin=hmin, hmax=hmax, max_steps=max_steps, rtol=rtol, extra=tuple(extra))
    settings[SET_OBS_DT] = observe_interval
    settings[SET_WALL_BUDGET] = cap.wall_time_s if wall_budget_s is None else float(wall_budget_s)
    ev = problem.events
    cap = (ev.max_records if ev is not None else 0) if event_records is None else event_records
    return CallArrays(
        y=problem.y0.copy(), tstate=tstate, Y_out=np.full((np.asarray(t_out).size, n), np.nan),
        iout=np.zeros(2, dtype=np.int64), acc=problem.acc0.copy(), stats=np.zeros(N_STATS, dtype=np.int64),
        settings=settings, atol=np.ascontiguousarray(atol * problem.atol_scale),
        rtol=np.ascontiguousarray(rtol * problem.rtol_scale),
        mass=np.ascontiguousarray(problem.mass if problem.mass is not None else np.ones(n)),
        ev_out=np.full((cap, n + 2), np.nan), jac=model_jacobian(problem, info),
        events=ev.fn if ev is not None else no_function, vb=serial_blocks(n))


def model_jacobian(problem: Problem, info: registry.MethodInfo):
    """The Jacobian function a kernel call of ``info`` receives: the model's for implicit methods, else the
    do-nothing function (an explicit kernel never calls it: the model's Jacobian is then never compiled, which
    spares a first run of an explicit method its compilation)."""
    return problem.jac if problem.jac is not None and info.implicit else no_function


def start_clock(a: CallArrays) -> None:
    """Set the run's deadline ``iout[1]`` from its wall-time budget (call when the run starts)."""
    from hpcrail.integrators.common import deadline_ns

    a.iout[1] = deadline_ns(float(a.settings[SET_WALL_BUDGET]))


def make_solution(info: registry.MethodInfo, code: int, t_out: np.ndarray, t_final: float, a: CallArrays,
                  wall: float, compile_time: float, stats: dict | None = None) -> Solution:
    """The :class:`Solution` of a finished kernel call (a method returning ``RUNNING`` at ``t_final``
    counts as done, defensively)."""
    if code == RUNNING:
        code = DONE if abs(a.tstate[TS_T] - t_final) <= 1e-12 * max(1.0, abs(t_final)) else code
    status = Status(code)
    t_reached = float(a.tstate[TS_T])
    nrec = min(int(a.stats[ST_EVENTS]), a.ev_out.shape[0])
    return Solution(t=t_out, y=a.Y_out, status=status, message=status.describe(t_reached), t_reached=t_reached,
                    stats=stats if stats is not None else dict(zip(STAT_NAMES, a.stats.tolist())), acc=a.acc,
                    wall_time=wall, compile_time=compile_time, method=info.name, y_final=a.y,
                    event_t=a.ev_out[:nrec, 0].copy(), event_index=a.ev_out[:nrec, 1].astype(np.int64),
                    event_y=a.ev_out[:nrec, 2:].copy())


def integrate(problem: Problem, method: str, t_out: np.ndarray, t_final: float, *,
              step: float = 0.0, rtol: float = 1e-6, atol: float = 1e-6, hmin: float = 0.0,
              hmax: float = 0.0, max_steps: int = 100_000_000, options: dict | None = None,
              jacobian: str = "auto", observe_interval: float = 0.0, extra_settings: tuple | None = None,
              progress: Callable[[float, float, dict], None] | None = None,
              n_chunks: int = 200) -> Solution:
    """Integrate ``problem`` from ``problem.t0`` to ``t_final`` [s] with the named method.

    Parameters
    ----------
    t_out : float64[k] sample times [s], sorted, within [t0, t_final].
    step : fixed step [s] for fixed-step methods, initial step for adaptive ones (0 = automatic).
    rtol, atol : tolerances; state i is weighted by ``atol * problem.atol_scale[i] +
        rtol * problem.rtol_scale[i] * |y_i|``.
        Fixed-step implicit methods use them for the Newton convergence test.
    options : method options by name (``registry.get(method).options``), e.g. ``{"max_order": 2}``.
    jacobian : ``"auto"`` (the model's analytic Jacobian if it has one, else finite differences
        on its pattern), ``"analytic"``, ``"finite_difference"`` (on the pattern) or ``"dense"``
        (finite differences on a dense pattern with a dense LU: the "JAC OFF" case of Bosso et al. 2024).
    observe_interval : if > 0, ``observe`` also runs on the dense output every this many seconds
        inside longer steps [s] (envelopes resolved between the steps of large-step methods; note
        that the dense output of a stiff method can overshoot at the kinks of a non-smooth model).
    extra_settings : raw values for ``settings[6:11]`` (overrides ``options``; for experiments).
    progress : called after each of ``n_chunks`` chunks as ``progress(t, t_final, stats)``; chunking
        does not change the step sequence (methods never shorten a step to land on a chunk end).
        Without ``progress`` the method runs in one call.

    Returns
    -------
    :class:`Solution`; a failure is reported in ``status``/``message``, never raised.

    A problem with a block layout (``problem.blocks``) runs on its workers with distributed state
    (:mod:`hpcrail.integrators.distributed`): the same kernel, every worker on its own blocks.

    Raises
    ------
    KeyError for an unknown method; ValueError for a fixed-step method without ``step``, sample
    times outside [t0, t_final], an unknown option, a mass matrix given to an explicit method,
    a singular mass matrix given to a method that cannot integrate a DAE, or a block layout with a
    method that does not run on blocks.
    """
    info = registry.get(method)
    t0 = float(problem.t0)
    t_out = np.ascontiguousarray(t_out, dtype=np.float64)
    if info.external is not None:  # a method run by an external library (cvode)
        method_options(info, options)
        return info.external(problem, t_out, t_final, step=step, rtol=rtol, atol=atol, hmin=hmin, hmax=hmax,
                             max_steps=max_steps, options=options, jacobian=jacobian,
                             observe_interval=observe_interval, progress=progress)
    if t_final <= t0:
        raise ValueError(f"t_final = {t_final} must be greater than t0 = {t0}")
    if t_out.size and (t_out[0] < t0 - 1e-12 or t_out[-1] > t_final + 1e-9 or np.any(np.diff(t_out) < 0)):
        raise ValueError("sample times must be sorted and lie within [t0, t_final]")
    if not info.adaptive and step <= 0.0:
        raise ValueError(f"method {info.name!r} has a fixed step: give step > 0")
    if not info.implicit and not problem.mass_identity:
        raise ValueError(f"method {info.name!r} is explicit: it cannot integrate M y' = f with a mass matrix "
                         "other than the identity; use an implicit method (bdf, ndf, radau5, trbdf2, ...)")
    extra = method_options(info, options) if extra_settings is None else tuple(extra_settings)
    if observe_interval < 0:
        raise ValueError(f"observe_interval = {observe_interval} must be >= 0")
    if problem.blocks is not None:   # distributed state: every worker integrates its own blocks
        cap = current_budget()       # its step budget applies; a wall-time budget cannot (one clock per worker)
        if cap.max_steps > 0:
            max_steps = min(int(max_steps), cap.max_steps)
        settings = make_settings(step=step, hmin=hmin, hmax=hmax, max_steps=max_steps, rtol=rtol, extra=extra)
        settings[SET_OBS_DT] = observe_interval
        kernel, ctime = compiled_kernel(info.name, problem.params, (problem.rhs, problem.observe, problem.jac))
        serial = None   # a multirate method on one worker: the serial bordered band on the whole state
        if registry.spec_of(info.name).multirate and problem.blocks.n_workers > 1:
            raise ValueError(f"method {info.name!r} (multirate) walks its blocks on one worker: the layout has "
                             f"{problem.blocks.n_workers} workers")
        if registry.spec_of(info.name).multirate:
            if observe_interval > 0:
                raise ValueError(f"method {info.name!r} (multirate) does not observe inside its steps: "
                                 "observe_interval must be 0")
            if info.implicit:
                serial, _ = problem_spec(problem, info, jacobian)
        return integrate_blocks(problem, info, kernel, no_function, t_out, t_final, settings=settings,
                                atol_v=np.ascontiguousarray(atol * problem.atol_scale),
                                rtol_v=np.ascontiguousarray(rtol * problem.rtol_scale), jacobian=jacobian,
                                compile_time=ctime, progress=progress, n_chunks=n_chunks, serial_spec=serial)
    spec, _ = problem_spec(problem, info, jacobian)
    kernel, ctime = compiled_kernel(info.name, problem.params, model_functions(problem, info), problem.precompile)
    a = call_arrays(problem, info, spec, t_out, step=step, rtol=rtol, atol=atol, hmin=hmin, hmax=hmax,
                    max_steps=max_steps, extra=extra, observe_interval=observe_interval)
    # the observer sees the initial state too
    start_clock(a)
    problem.observe(t0, a.y, problem.params, a.acc)
    # chunks only serve the progress callback (next_pause: at most n_chunks, ~PAUSE_TARGET_S of wall time
    # each); chunking never changes the steps
    chunks = max(1, n_chunks) if progress is not None else 1
    code = RUNNING
    w0 = time.perf_counter()
    tp = next_pause(t0, t_final, t0, chunks, 0.0)
    while True:
        code = kernel(problem.rhs, a.jac, a.events, problem.observe, problem.params, a.y, a.tstate, t_out, a.Y_out,
                      a.iout, float(tp), float(t_final), a.acc, a.stats, a.settings, a.atol, a.rtol, a.mass, spec,
                      a.ev_out, no_sync, a.vb)
        if progress is not None:
            progress(float(a.tstate[TS_T]), float(t_final), dict(zip(STAT_NAMES, a.stats.tolist())))
        if code != RUNNING or tp >= t_final:
            break
        tp = next_pause(t0, t_final, float(a.tstate[TS_T]), chunks, time.perf_counter() - w0)
    wall = time.perf_counter() - w0
    if code == RUNNING and math.isclose(a.tstate[TS_T], t_final):  # numerically unreachable; defensive
        code = DONE
    return make_solution(info, code, t_out, t_final, a, wall, ctime)
