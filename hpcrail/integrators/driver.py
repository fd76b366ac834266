"""Python-side driver: compiles a method for a problem's parameter type and runs it in chunks.

Compilation is per (method, parameter type), against ``FunctionType`` signatures for ``rhs`` and
``observe`` so that the compiled integrator is independent of the model function identity and is
cached on disk by numba (a new Python process loads it instead of recompiling).
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

from hpcrail.integrators import registry
from hpcrail.integrators.contract import (
    DONE, N_SETTINGS, N_STATS, RUNNING, SET_HMAX, SET_HMIN, SET_MAX_STEPS, SET_RTOL, SET_SAFETY,
    SET_STEP, STAT_NAMES, TS_H, TS_T, Problem, Solution, Status,
)

_COMPILED: dict = {}
_CLONES: dict = {}


def _kernel_for(info, params):
    """A dispatcher of ``info.kernel`` private to the parameter type of ``params``.

    numba keeps one on-disk cache index per function, pickling every compiled signature with its
    types.  A clone with a qualname derived from the parameter type gets its own index, so compiling
    an integrator for a model defined in a user's script never affects other models' caches.
    """
    ptype = numba.typeof(params)
    cls = type(params)
    tag = re.sub(r"[^A-Za-z0-9_]", "_", f"{cls.__module__}.{cls.__qualname__}")
    key = (info.name, tag)
    disp = _CLONES.get(key)
    if disp is None:
        py = info.kernel.py_func
        clone = pytypes.FunctionType(py.__code__, py.__globals__, py.__name__, py.__defaults__, py.__closure__)
        clone.__qualname__ = f"{py.__qualname__}__{tag}"
        clone.__doc__ = py.__doc__
        clone.__module__ = py.__module__
        opts = {k: v for k, v in info.kernel.targetoptions.items() if k != "nopython"}
        disp = numba.njit(cache=True, **opts)(clone)
        _CLONES[key] = disp
    _ = ptype
    return disp


def model_function_type(params) -> types.FunctionType:
    """numba type of ``f(t, y, params, out) -> None`` for the given parameter object."""
    ptype = numba.typeof(params)
    return types.FunctionType(types.void(types.float64, types.float64[::1], ptype, types.float64[::1]))


def kernel_argtypes(params) -> tuple:
    """Argument types of an integrator kernel specialised for ``params`` (see contract)."""
    fty = model_function_type(params)
    f1 = types.float64[::1]
    return (fty, fty, numba.typeof(params), f1, f1, f1, types.float64[:, ::1], types.int64[::1],
            types.float64, types.float64, f1, types.int64[::1], f1, f1)


def compiled_kernel(method: str, params, functions=()) -> tuple[Callable, float]:
    """Return ``(entry_point, seconds_spent_compiling_or_loading)`` for ``method`` and ``params``.

    ``functions``: the model's numba functions (rhs, observe, ...) to compile for the same
    signature now, so that timing an integration never includes their compilation.
    """
    info = registry.get(method)
    argtys = kernel_argtypes(params)
    key = (info.name, argtys)
    t0 = time.perf_counter()
    fsig = model_function_type(params).signature
    for f in functions:
        if fsig.args not in f.overloads:
            f.compile(fsig.args)
    if key in _COMPILED:
        return _COMPILED[key], time.perf_counter() - t0
    kernel = _kernel_for(info, params)
    cres = kernel.overloads.get(argtys)
    if cres is None:
        kernel.compile(argtys)
        cres = kernel.overloads[argtys]
    _COMPILED[key] = cres.entry_point
    return cres.entry_point, time.perf_counter() - t0


def make_settings(*, step: float = 0.0, hmin: float = 0.0, hmax: float = 0.0, max_steps: float = 1e8,
                  rtol: float = 1e-6, safety: float = 0.9, extra: tuple = ()) -> np.ndarray:
    """Pack the common settings into the float64[8] array of the contract."""
    s = np.zeros(N_SETTINGS)
    s[SET_STEP], s[SET_HMIN], s[SET_HMAX] = step, hmin, hmax
    s[SET_MAX_STEPS], s[SET_RTOL], s[SET_SAFETY] = max_steps, rtol, safety
    for i, v in enumerate(extra):
        s[6 + i] = v
    return s


def integrate(problem: Problem, method: str, t_out: np.ndarray, t_final: float, *,
              step: float = 0.0, rtol: float = 1e-6, atol: float = 1e-6, hmin: float = 0.0,
              hmax: float = 0.0, max_steps: int = 100_000_000, extra_settings: tuple = (),
              progress: Callable[[float, float, dict], None] | None = None,
              n_chunks: int = 200) -> Solution:
    """Integrate ``problem`` from ``problem.t0`` to ``t_final`` [s] with the named method.

    Parameters
    ----------
    t_out : float64[k] sample times [s], sorted, within [t0, t_final].
    step : fixed step [s] for fixed-step methods, initial step for adaptive ones (0 = automatic).
    rtol, atol : tolerances; the absolute tolerance of state i is ``atol * problem.atol_scale[i]``.
    progress : called after each chunk as ``progress(t, t_final, stats)``; chunking does not
        change the step sequence (methods never shorten a step to land on a chunk end).

    Returns
    -------
    :class:`Solution`; a failure is reported in ``status``/``message``, never raised.

    Raises
    ------
    KeyError for an unknown method; ValueError for a fixed-step method without ``step`` or
    sample times outside [t0, t_final].
    """
    info = registry.get(method)
    t0 = float(problem.t0)
    t_out = np.ascontiguousarray(t_out, dtype=np.float64)
    if t_final <= t0:
        raise ValueError(f"t_final = {t_final} must be greater than t0 = {t0}")
    if t_out.size and (t_out[0] < t0 - 1e-12 or t_out[-1] > t_final + 1e-9 or np.any(np.diff(t_out) < 0)):
        raise ValueError("sample times must be sorted and lie within [t0, t_final]")
    if not info.adaptive and step <= 0.0:
        raise ValueError(f"method {info.name!r} has a fixed step: give step > 0")
    kernel, ctime = compiled_kernel(info.name, problem.params, (problem.rhs, problem.observe))
    n = problem.y0.size
    y = problem.y0.copy()
    tstate = np.zeros(info.state_size(n))
    tstate[TS_T] = t0
    tstate[TS_H] = 0.0
    Y_out = np.full((t_out.size, n), np.nan)
    iout = np.zeros(1, dtype=np.int64)
    acc = problem.acc0.copy()
    stats = np.zeros(N_STATS, dtype=np.int64)
    settings = make_settings(step=step, hmin=hmin, hmax=hmax, max_steps=max_steps, rtol=rtol,
                             extra=extra_settings)
    atol_vec = np.ascontiguousarray(atol * problem.atol_scale)
    # the observer sees the initial state too
    problem.observe(t0, y, problem.params, acc)
    pauses = np.linspace(t0, t_final, max(1, n_chunks) + 1)[1:]
    code = RUNNING
    w0 = time.perf_counter()
    for tp in pauses:
        if tp < tstate[TS_T] and tp < t_final:
            continue
        code = kernel(problem.rhs, problem.observe, problem.params, y, tstate, t_out, Y_out, iout,
                      float(tp), float(t_final), acc, stats, settings, atol_vec)
        if progress is not None:
            progress(float(tstate[TS_T]), float(t_final), dict(zip(STAT_NAMES, stats.tolist())))
        if code != RUNNING:
            break
    wall = time.perf_counter() - w0
    if code == RUNNING:  # numerically unreachable; defensive
        code = DONE if math.isclose(tstate[TS_T], t_final) else code
    status = Status(code)
    return Solution(t=t_out, y=Y_out, status=status, message=status.describe(float(tstate[TS_T])),
                    t_reached=float(tstate[TS_T]), stats=dict(zip(STAT_NAMES, stats.tolist())),
                    acc=acc, wall_time=wall, compile_time=ctime, method=info.name, y_final=y)
