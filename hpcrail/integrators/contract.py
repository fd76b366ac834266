"""The integrator contract shared by every method in :mod:`hpcrail.integrators`.

Integrators know nothing about trains.  A model hands them a :class:`Problem`:

* ``rhs(t, y, params, dydt) -> None`` — a numba ``@njit`` function; ``y`` and ``dydt`` are
  ``float64[::1]`` of length ``n``; ``params`` is any numba-typable object (hpcrail models use
  ``NamedTuple``s of contiguous arrays).  Parameters are data: changing a value never recompiles.
* ``observe(t, y, params, acc) -> None`` — called after every accepted step (and once at ``t0``);
  it updates the float64 accumulator ``acc`` in place.  Models use it for quantities that must be
  taken over *every* step (peak in-train forces), not only over the sampled output.

Every method is a numba function with the signature ::

    status = method(rhs, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final,
                    acc, stats, settings, atol)

=========  ======================================================================================
``y``        state, float64[n], in/out
``tstate``   solver state float64[m] (``m = state_size(n)``): ``[0]`` t, ``[1]`` next step size,
             ``[2]`` 1.0 if ``tstate[3:3+n]`` holds f(t, y); further entries are method specific.
             Carrying it between calls lets a run be cut into chunks (progress, checkpoints)
             without changing the step sequence: methods never shorten a step to land on
             ``t_pause``, only on ``t_final``.
``t_out``    sorted sample times float64[k]; ``Y_out`` float64[k, n] receives the state at each
             sample, by the method's dense output; ``iout`` int64[1] is the next sample to write.
``acc``      accumulator for ``observe`` (float64[n_acc]).
``stats``    int64[8] counters, see ``ST_*``.
``settings`` float64[8]: ``[0]`` step (fixed-step methods) or initial step (0 = automatic),
             ``[1]`` hmin, ``[2]`` hmax (0 = unlimited), ``[3]`` max_steps (accepted + rejected,
             over the whole run), ``[4]`` rtol, ``[5]`` safety factor, ``[6..7]`` method specific.
``atol``     absolute tolerance per state, float64[n].
=========  ======================================================================================

The return value is a status code (``RUNNING``/``DONE`` or a failure).  Failures are values, never
exceptions raised inside numba: a failed scenario in a sweep is recorded with its reason.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Any, Callable

import numpy as np

# ---- status codes returned by every method --------------------------------------------------
RUNNING = 0          #: reached ``t_pause`` before ``t_final``; call again to continue
DONE = 1             #: reached ``t_final``
EVENT_STOP = 2       #: a terminal event stopped the run (a success)
MAX_STEPS = -1       #: the step budget ``settings[3]`` is exhausted
STEP_UNDERFLOW = -2  #: the step size fell below ``hmin`` or the floating-point resolution of t
NON_FINITE = -3      #: the state or its derivative became NaN/inf
NEWTON_FAILURE = -4  #: an implicit method's Newton iteration failed at the smallest step
MODEL_FAILURE = -5   #: the model flagged an unrecoverable condition
EVENT_FAILURE = -6   #: event-driven integration: too many events, or events piling up at one instant (chattering)

# ---- indices into the int64[8] statistics array ---------------------------------------------
ST_STEPS, ST_REJECTED, ST_NFEV, ST_NJEV, ST_NLU, ST_NEWTON, ST_EVENTS = range(7)
N_STATS = 8
STAT_NAMES = ("steps", "rejected", "nfev", "njev", "nlu", "newton_iterations", "events")

# ---- indices into the float64[8] settings array ---------------------------------------------
SET_STEP, SET_HMIN, SET_HMAX, SET_MAX_STEPS, SET_RTOL, SET_SAFETY = range(6)
N_SETTINGS = 8

# ---- tstate layout common to all methods ----------------------------------------------------
TS_T, TS_H, TS_FVALID, TS_F0 = 0, 1, 2, 3


class Status(enum.IntEnum):
    """Final status of an integration, as stored in result datasets (``status`` attribute/variable)."""

    COMPLETED = DONE
    EVENT_STOP = EVENT_STOP
    MAX_STEPS = MAX_STEPS
    STEP_UNDERFLOW = STEP_UNDERFLOW
    NON_FINITE = NON_FINITE
    NEWTON_FAILURE = NEWTON_FAILURE
    MODEL_FAILURE = MODEL_FAILURE
    EVENT_FAILURE = EVENT_FAILURE

    @property
    def success(self) -> bool:
        return self.value > 0

    def describe(self, t: float) -> str:
        """Human-readable reason, e.g. ``"step size underflow at t = 12.5 s"``."""
        return {
            Status.COMPLETED: "completed",
            Status.EVENT_STOP: f"stopped by a terminal event at t = {t:.6g} s",
            Status.MAX_STEPS: f"maximum number of steps reached at t = {t:.6g} s "
                              "(raise integrator.max_steps or loosen the tolerances)",
            Status.STEP_UNDERFLOW: f"step size underflow at t = {t:.6g} s (the problem is too stiff "
                                   "for this method/tolerance, or the model is discontinuous)",
            Status.NON_FINITE: f"non-finite state at t = {t:.6g} s (the integration diverged; "
                               "reduce the step or use an implicit method)",
            Status.NEWTON_FAILURE: f"Newton iteration failed at t = {t:.6g} s",
            Status.MODEL_FAILURE: f"the model reported a failure at t = {t:.6g} s",
            Status.EVENT_FAILURE: f"too many events, or events piling up at one instant (chattering), at "
                                  f"t = {t:.6g} s (raise the event limits or widen the stick band)",
        }[self]


@dataclasses.dataclass
class Problem:
    """An initial-value problem as seen by the integrators.

    Attributes
    ----------
    rhs, observe : numba dispatchers with the signatures given in the module docstring.
    params : numba-typable parameters passed through to ``rhs``/``observe`` unchanged.
    y0 : float64[n] initial state.
    t0 : initial time [s].
    atol_scale : float64[n] per-state scale multiplying the user's ``atol`` (states of very
        different magnitude, e.g. coupler deflections [m] and speeds [m/s]).
    acc0 : float64[n_acc] initial accumulator for ``observe``.
    """

    rhs: Callable
    observe: Callable
    params: Any
    y0: np.ndarray
    t0: float = 0.0
    atol_scale: np.ndarray | None = None
    acc0: np.ndarray | None = None

    def __post_init__(self):
        self.y0 = np.ascontiguousarray(self.y0, dtype=np.float64)
        if self.atol_scale is None:
            self.atol_scale = np.ones_like(self.y0)
        self.atol_scale = np.ascontiguousarray(self.atol_scale, dtype=np.float64)
        if self.acc0 is None:
            self.acc0 = np.zeros(1)
        self.acc0 = np.ascontiguousarray(self.acc0, dtype=np.float64)
        if self.atol_scale.shape != self.y0.shape:
            raise ValueError(f"atol_scale has shape {self.atol_scale.shape}, y0 has {self.y0.shape}")


@dataclasses.dataclass
class Solution:
    """What every integrator returns (through :func:`hpcrail.integrators.integrate`).

    Attributes
    ----------
    t : float64[k] sample times [s]; ``y`` : float64[k, n] states at those times (rows after a
        failure are NaN).
    status : :class:`Status`; ``message`` its description; ``t_reached`` the last accepted time.
    stats : dict of step statistics (``STAT_NAMES``); ``acc`` the final ``observe`` accumulator;
    ``wall_time`` [s] of the integration (compilation excluded); ``compile_time`` [s].
    """

    t: np.ndarray
    y: np.ndarray
    status: Status
    message: str
    t_reached: float
    stats: dict
    acc: np.ndarray
    wall_time: float
    compile_time: float
    method: str
    y_final: np.ndarray

    @property
    def success(self) -> bool:
        return self.status.success
