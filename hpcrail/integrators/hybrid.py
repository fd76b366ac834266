"""Event-driven integration of piecewise-smooth systems (non-smooth mechanics, Oprea 2018 §3).

The system has a discrete *mode* held by the model (in its parameters); for a fixed mode
``y' = rhs(t, y)`` is smooth and any registered method integrates it.  Oprea 2018 §3 (after Acary &
Brogliato 2008): (1) determine the next smooth mode, (2) integrate while the constraints hold,
(3) locate the next event within a tolerance.  The driver knows nothing about trains; a model gives

* ``guard(t, y, params, g) -> None`` — event functions g (float64[m]) of the current mode, > 0
  while nothing happens.  An event is the first time a function that was positive at the start of a
  step reaches g ≤ 0.  A function left at g ≤ 0 by a mode change (a tie: the switching condition
  holds with equality) fires when it *decreases* further by ``event_rearm`` (it moves deeper into
  the switching condition); it is not re-triggered by its starting value.  Return a positive
  constant for functions that do not apply in the current mode.
* ``jump(t, y, params, which) -> int64`` — called at t0 (``which`` = −1) and at every located event
  (``which`` = index of the first function that fired): chooses the new mode (it may also reset
  ``y``, e.g. a velocity projection) and returns ≥ 0, or < 0 to stop with ``MODEL_FAILURE``.

Event location: the step (t_n, t_n+1] in which a function crossed its threshold is re-integrated from
t_n with the *same method* to trial end points chosen by the Illinois variant of regula falsi (with
bisection when it stalls) on the function whose linearly interpolated crossing is the earliest
— evaluated on the exact integrator solution, not an interpolant — until the bracket is shorter
than ``event_tolerance_s`` or that function lies within [−``event_g_tolerance``, 0].  The integration
resumes at the event side of the bracket (g ≤ 0), so the switching condition holds when ``jump`` is
called.  Sampled output and the ``observe``
accumulator are rolled back to t_n before each trial, so nothing from beyond the event survives.

Kernel signature (numba), an extension of :mod:`hpcrail.integrators.contract`::

    status = hybrid(method, rhs, jac, nofn, observe, guard, jump, params, y, tstate, t_out, Y_out,
                    iout, t_pause, t_final, acc, stats, settings, atol, rtol, mass, spec, ev_out,
                    hsettings, hstate)

``method`` is any registered method kernel (passed as a first-class function) and ``jac``,
``atol``..``ev_out`` are passed through to it unchanged (``nofn`` is the contract's placeholder
events function: the guard functions are located here, not by the method); ``hsettings``
float64[8]: ``[0]`` event time tolerance [s], ``[1]`` event-function tolerance, ``[2]`` maximum
number of events, ``[3]`` maximum number of consecutive events closer than ``[4]`` seconds
(chattering / Zeno detection), ``[5]`` the number of event functions, ``[6]`` the re-arming decrease
of functions that start a step at g ≤ 0.  ``hstate`` float64[8] carries the event bookkeeping between chunks.
Failures are status codes (``EVENT_FAILURE`` for too many events), never exceptions.
"""
from __future__ import annotations

import math
import re
import time
import types as pytypes
from typing import Callable

import numba
import numpy as np
from numba import types

from hpcrail._numba import JIT
from hpcrail.integrators import registry
from hpcrail.integrators.contract import (
    DONE, EVENT_FAILURE, MAX_STEPS, MODEL_FAILURE, RUNNING, ST_EVENTS, STAT_NAMES, TS_FVALID, TS_T, Problem, Solution,
    next_pause,
)
from hpcrail.integrators.collectives import blocks_type, no_sync, sync_type
from hpcrail.integrators.driver import (
    _kernel_for, call_arrays, compiled_kernel, start_clock, kernel_argtypes, make_solution, method_options, model_function_type,
    no_function, problem_spec,
)

HS_TOL_T, HS_TOL_G, HS_MAX_EVENTS, HS_MAX_BURST, HS_BURST_DT, HS_N_FUNCTIONS, HS_REARM = range(7)
N_HSETTINGS = 8
H_INIT, H_NEVENTS, H_LAST_T, H_BURST, H_LAST_WHICH, H_TRIALS = range(6)
N_HSTATE = 8


@numba.njit(**JIT)
def _shifted_min(thr, g):
    """min over i of g[i] − thr[i] and its index (the event indicator G of the current step)."""
    best = math.inf
    which = -1
    for i in range(g.size):
        v = g[i] - thr[i]
        if v < best:
            best = v
            which = i
    return best, which


@numba.njit(**JIT)
def _thresholds(g_a, rearm, thr):
    """Event thresholds of a step that starts with g_a: 0 for positive functions, g_a − rearm otherwise."""
    for i in range(g_a.size):
        thr[i] = 0.0 if g_a[i] > 0.0 else g_a[i] - rearm


@numba.njit(**JIT)
def hybrid(method, rhs, jac, nofn, observe, guard, jump, params, y, tstate, t_out, Y_out, iout, t_pause, t_final,
           acc, stats, settings, atol, rtol, mass, spec, ev_out, hsettings, hstate, sync, vb):
    """Event-driven integration with ``method`` between events; see the module docstring.

    Returns ``DONE``, ``RUNNING`` (reached ``t_pause``) or a failure code of the contract
    (``EVENT_FAILURE``, ``MODEL_FAILURE`` or the method's own failure).
    """
    n = y.size
    m_ts = tstate.size
    tol_t = hsettings[HS_TOL_T]
    tol_g = hsettings[HS_TOL_G]
    max_events = hsettings[HS_MAX_EVENTS]
    max_burst = hsettings[HS_MAX_BURST]
    burst_dt = hsettings[HS_BURST_DT]
    t = tstate[TS_T]
    if hstate[H_INIT] == 0.0:
        code = jump(t, y, params, -1)
        if code < 0:
            return MODEL_FAILURE
        tstate[TS_FVALID] = 0.0
        observe(t, y, params, acc)
        hstate[H_INIT] = 1.0
        hstate[H_LAST_T] = -math.inf
    m = int(hsettings[HS_N_FUNCTIONS])
    rearm = hsettings[HS_REARM]
    thr = np.empty(m)
    f_lo = np.empty(m)
    f_hi = np.empty(m)
    g_a = np.empty(m)
    g_b = np.empty(m)
    y_n = np.empty(n)
    ts_n = np.empty(m_ts)
    acc_n = np.empty(acc.size)
    y_b = np.empty(n)
    ts_b = np.empty(m_ts)
    acc_b = np.empty(acc.size)
    guard(t, y, params, g_a)
    status = RUNNING
    while True:
        if t_final - t <= 1e-12 * max(1.0, abs(t_final)):
            status = DONE
            break
        if t >= t_pause:
            break
        # one step of the method from the saved state
        for i in range(n):
            y_n[i] = y[i]
        for i in range(m_ts):
            ts_n[i] = tstate[i]
        for i in range(acc.size):
            acc_n[i] = acc[i]
        iout_n = iout[0]
        t_n = t
        code = method(rhs, jac, nofn, observe, params, y, tstate, t_out, Y_out, iout, np.nextafter(t, math.inf),
                      t_final, acc, stats, settings, atol, rtol, mass, spec, ev_out, sync, vb)
        if code != RUNNING and code != DONE:
            status = code
            break
        t = tstate[TS_T]
        guard(t, y, params, g_b)
        _thresholds(g_a, rearm, thr)
        gb, which = _shifted_min(thr, g_b)
        if not gb <= 0.0:
            for i in range(m):
                g_a[i] = g_b[i]
            continue
        # ---- a function crossed its threshold in (t_n, t]: locate the first crossing ----------
        # bracket [lo, hi]: f_lo = g − thr > 0 everywhere at lo, some f_hi ≤ 0 at hi.  Each trial
        # targets the function whose linear-interpolation root is earliest (Illinois on that
        # function alone: the individual functions are smooth, their minimum is not).
        lo = t_n
        hi = t
        for i in range(m):
            f_lo[i] = g_a[i] - thr[i]
            f_hi[i] = g_b[i] - thr[i]
        for i in range(n):
            y_b[i] = y[i]
        for i in range(m_ts):
            ts_b[i] = tstate[i]
        for i in range(acc.size):
            acc_b[i] = acc[i]
        iout_b = iout[0]
        target = -1
        fa = 0.0
        fb = 0.0
        side = 0
        failed = 0
        while True:
            best = math.inf
            which = -1
            for i in range(m):
                if f_hi[i] <= 0.0:
                    tau = lo + (hi - lo) * f_lo[i] / (f_lo[i] - f_hi[i])
                    if tau < best:
                        best = tau
                        which = i
            if which != target:
                target = which
                fa = f_lo[target]
                fb = f_hi[target]
                side = 0
            if hi - lo <= tol_t or f_hi[target] >= -tol_g:
                break
            width = hi - lo
            if side >= 3 or side <= -3:
                c = 0.5 * (lo + hi)
                side = 0
            else:
                c = hi - fb * width / (fb - fa)
                if c < lo + 1e-3 * width:
                    c = lo + 1e-3 * width
                elif c > hi - 1e-3 * width:
                    c = hi - 1e-3 * width
            # re-integrate from t_n to c with the same method
            for i in range(n):
                y[i] = y_n[i]
            for i in range(m_ts):
                tstate[i] = ts_n[i]
            for i in range(acc.size):
                acc[i] = acc_n[i]
            iout[0] = iout_n
            code = method(rhs, jac, nofn, observe, params, y, tstate, t_out, Y_out, iout, c, c, acc, stats, settings,
                          atol, rtol, mass, spec, ev_out, sync, vb)
            hstate[H_TRIALS] += 1.0
            if code != RUNNING and code != DONE:
                failed = code
                break
            tc = tstate[TS_T]
            guard(tc, y, params, g_b)
            crossed = False
            for i in range(m):
                g_b[i] -= thr[i]
                if g_b[i] <= 0.0:
                    crossed = True
            if crossed:
                hi = tc
                for i in range(m):
                    f_hi[i] = g_b[i]
                for i in range(n):
                    y_b[i] = y[i]
                for i in range(m_ts):
                    ts_b[i] = tstate[i]
                for i in range(acc.size):
                    acc_b[i] = acc[i]
                iout_b = iout[0]
                fb = g_b[target]
                if side < 0:
                    fa *= 0.5
                    side -= 1
                else:
                    side = -1
            else:
                lo = tc
                for i in range(m):
                    f_lo[i] = g_b[i]
                fa = g_b[target]
                if side > 0:
                    fb *= 0.5
                    side += 1
                else:
                    side = 1
        if failed != 0:
            status = failed
            break
        # resume at the event side b
        for i in range(n):
            y[i] = y_b[i]
        for i in range(m_ts):
            tstate[i] = ts_b[i]
        for i in range(acc.size):
            acc[i] = acc_b[i]
        iout[0] = iout_b
        t = tstate[TS_T]
        code = jump(t, y, params, which)
        if code < 0:
            status = MODEL_FAILURE
            break
        tstate[TS_FVALID] = 0.0
        stats[ST_EVENTS] += 1
        hstate[H_NEVENTS] += 1.0
        hstate[H_LAST_WHICH] = which
        observe(t, y, params, acc)
        if t - hstate[H_LAST_T] <= burst_dt:
            hstate[H_BURST] += 1.0
        else:
            hstate[H_BURST] = 0.0
        hstate[H_LAST_T] = t
        if hstate[H_BURST] > max_burst or hstate[H_NEVENTS] > max_events:
            status = EVENT_FAILURE
            break
        guard(t, y, params, g_a)
    tstate[TS_T] = t
    return status


def jump_function_type(params) -> types.FunctionType:
    """numba type of ``jump(t, y, params, which) -> int64``."""
    return types.FunctionType(types.int64(types.float64, types.float64[::1], numba.typeof(params), types.int64))


def hybrid_argtypes(params) -> tuple:
    """Argument types of :func:`hybrid` specialised for ``params``."""
    kt = kernel_argtypes(params)
    method_ty = types.FunctionType(types.int64(*kt))
    fty = model_function_type(params)
    f1 = types.float64[::1]
    i1 = types.int64[::1]
    f2 = types.float64[:, ::1]
    return (method_ty, fty, fty, fty, fty, fty, jump_function_type(params), numba.typeof(params), f1, f1, f1,
            f2, i1, types.float64, types.float64, f1, i1, f1, f1, f1, f1, i1, f2, f1, f1, sync_type(), blocks_type())


_COMPILED: dict = {}
_CLONES: dict = {}


def _hybrid_for(params):
    """A dispatcher of :func:`hybrid` private to the parameter type of ``params`` (its own on-disk
    cache index, as :func:`hpcrail.integrators.driver._kernel_for` does for the methods)."""
    cls = type(params)
    tag = re.sub(r"[^A-Za-z0-9_]", "_", f"{cls.__module__}.{cls.__qualname__}")
    disp = _CLONES.get(tag)
    if disp is None:
        py = hybrid.py_func
        clone = pytypes.FunctionType(py.__code__, py.__globals__, py.__name__, py.__defaults__, py.__closure__)
        clone.__qualname__ = f"{py.__qualname__}__{tag}"
        clone.__doc__ = py.__doc__
        clone.__module__ = py.__module__
        opts = {k: v for k, v in hybrid.targetoptions.items() if k != "nopython"}
        disp = numba.njit(cache=True, **opts)(clone)
        _CLONES[tag] = disp
    return disp


def compiled_hybrid(params) -> tuple[Callable, float]:
    """``(entry_point, seconds)`` of :func:`hybrid` for the parameter type of ``params``."""
    argtys = hybrid_argtypes(params)
    t0 = time.perf_counter()
    if argtys not in _COMPILED:
        disp = _hybrid_for(params)
        cres = disp.overloads.get(argtys)
        if cres is None:
            disp.compile(argtys)
            cres = disp.overloads[argtys]
        _COMPILED[argtys] = cres.entry_point
    return _COMPILED[argtys], time.perf_counter() - t0


def integrate_hybrid(rhs, observe, guard, jump, params, y0: np.ndarray, n_events: int, method: str,
                     t_out: np.ndarray, t_final: float, *, t0: float = 0.0, atol_scale=None, acc0=None,
                     step: float = 0.0, rtol: float = 1e-6, atol: float = 1e-6, hmin: float = 0.0,
                     hmax: float = 0.0, max_steps: int = 100_000_000, event_tolerance: float = 1e-10,
                     event_g_tolerance: float = 1e-12, event_rearm: float = 1e-9,
                     max_events: int = 1_000_000, max_burst: int = 1000,
                     burst_dt: float | None = None, progress: Callable | None = None,
                     n_chunks: int = 200, jac: Callable | None = None, jac_pattern=None,
                     rtol_scale=None, options: dict | None = None, jacobian: str = "auto") -> Solution:
    """Event-driven integration of a piecewise-smooth problem from ``t0`` to ``t_final`` [s].

    Parameters
    ----------
    rhs, observe : model kernels of the integrator contract (mode read from ``params``).
    guard, jump : event functions and mode update (module docstring); ``n_events`` the length of g.
    method : any registered integrator name, used between events and for the event location.
    event_tolerance : event time tolerance [s]; event_g_tolerance : accept an event point once
        −tol ≤ G ≤ 0; event_rearm : decrease that fires a function which starts a step at g ≤ 0.
        max_events : total limit; max_burst : limit on consecutive events closer
        than ``burst_dt`` (default: the event tolerance × 10) — chattering gives ``EVENT_FAILURE``.
    jac, jac_pattern, rtol_scale, options, jacobian : as for :class:`~hpcrail.integrators.Problem`
        and :func:`~hpcrail.integrators.integrate` (implicit methods between events).

    Returns a :class:`~hpcrail.integrators.contract.Solution` (``stats['events']`` counts the
    events); failures are reported in ``status``, never raised.

    Raises ValueError for a fixed-step method without ``step`` or bad sample times; KeyError for an
    unknown method.
    """
    info = registry.get(method)
    t_out = np.ascontiguousarray(t_out, dtype=np.float64)
    if t_final <= t0:
        raise ValueError(f"t_final = {t_final} must be greater than t0 = {t0}")
    if t_out.size and (t_out[0] < t0 - 1e-12 or t_out[-1] > t_final + 1e-9 or np.any(np.diff(t_out) < 0)):
        raise ValueError("sample times must be sorted and lie within [t0, t_final]")
    if not info.adaptive and step <= 0.0:
        raise ValueError(f"method {info.name!r} has a fixed step: give step > 0")
    y0 = np.ascontiguousarray(y0, dtype=np.float64)
    n = y0.size
    atol_scale = np.ones(n) if atol_scale is None else np.asarray(atol_scale, float)
    acc0 = np.zeros(1) if acc0 is None else np.ascontiguousarray(acc0, dtype=np.float64)
    prob = Problem(rhs, observe, params, y0, t0=t0, atol_scale=atol_scale, acc0=acc0, jac=jac,
                   jac_pattern=jac_pattern, rtol_scale=rtol_scale)
    spec, _ = problem_spec(prob, info, jacobian)
    _entry, ctime = compiled_kernel(info.name, params, (rhs, observe, guard, jac if info.implicit else None))
    kernel = _kernel_for(info, params)     # the method's dispatcher private to this parameter type
    jsig = jump_function_type(params).signature
    if jsig.args not in jump.overloads:
        jump.compile(jsig.args)
    hyb, ctime2 = compiled_hybrid(params)
    a = call_arrays(prob, info, spec, t_out, step=step, rtol=rtol, atol=atol, hmin=hmin, hmax=hmax,
                    max_steps=max_steps, extra=method_options(info, options), event_records=0)
    hsettings = np.zeros(N_HSETTINGS)
    hsettings[HS_TOL_T] = event_tolerance
    hsettings[HS_TOL_G] = event_g_tolerance
    hsettings[HS_MAX_EVENTS] = max_events
    hsettings[HS_MAX_BURST] = max_burst
    hsettings[HS_BURST_DT] = 10.0 * event_tolerance if burst_dt is None else burst_dt
    hsettings[HS_N_FUNCTIONS] = n_events
    hsettings[HS_REARM] = event_rearm
    hstate = np.zeros(N_HSTATE)
    # chunks only serve the progress callback (driver.next_pause: at most n_chunks, ~0.25 s of wall time each)
    chunks = max(1, n_chunks) if progress is not None else 1
    code = RUNNING
    start_clock(a)
    w0 = time.perf_counter()
    tp = next_pause(t0, t_final, t0, chunks, 0.0)
    while True:
        code = hyb(kernel, rhs, a.jac, no_function, observe, guard, jump, params, a.y, a.tstate, t_out, a.Y_out,
                   a.iout, float(tp), float(t_final), a.acc, a.stats, a.settings, a.atol, a.rtol, a.mass, spec,
                   a.ev_out, hsettings, hstate, no_sync, a.vb)
        if progress is not None:
            progress(float(a.tstate[TS_T]), float(t_final), dict(zip(STAT_NAMES, a.stats.tolist())))
        if code != RUNNING or tp >= t_final:
            break
        tp = next_pause(t0, t_final, float(a.tstate[TS_T]), chunks, time.perf_counter() - w0)
    wall = time.perf_counter() - w0
    if code == RUNNING:  # defensive: the last pause is t_final
        code = DONE if math.isclose(a.tstate[TS_T], t_final) else MAX_STEPS
    st = dict(zip(STAT_NAMES, a.stats.tolist()))
    st["event_trials"] = int(hstate[H_TRIALS])
    return make_solution(info, code, t_out, t_final, a, wall, ctime + ctime2, stats=st)
