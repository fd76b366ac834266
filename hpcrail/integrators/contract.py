"""The integrator contract shared by every method in :mod:`hpcrail.integrators`.

Integrators know nothing about trains.  A model hands them a :class:`Problem`:

* ``rhs(t, y, params, dydt) -> None`` — a numba ``@njit`` function; ``y`` and ``dydt`` are
  ``float64[::1]`` of length ``n``; ``params`` is any numba-typable object (hpcrail models use
  ``NamedTuple``s of contiguous arrays).  Parameters are data: changing a value never recompiles.
  With a diagonal mass matrix the system is ``M y' = f(t, y)``, M = diag(``mass``); zero entries
  make algebraic equations (index-1 DAE; implicit methods only).
* ``observe(t, y, params, acc) -> None`` — called after every accepted step (and once at ``t0``);
  it updates the float64 accumulator ``acc`` in place.  Models use it for quantities that must be
  taken over *every* step (peak in-train forces), not only over the sampled output.
* optional ``jac(t, y, params, vals) -> None`` — the Jacobian ∂f/∂y as the float64[nnz] values of a
  declared :class:`~hpcrail.integrators.linalg.JacobianPattern` (dense, banded,
  block-tridiagonal or sparse; ``vals[k]`` = ∂f_rows[k]/∂y_cols[k]).  Without ``jac`` the implicit
  methods use finite differences over column groups of the pattern (a dense pattern if none).
* optional ``events(t, y, params, g) -> None`` — float64[nev] event functions with a direction
  (+1, −1, 0) and a terminal flag each (:class:`Events`); roots are located on the dense output
  (:mod:`hpcrail.integrators.common`).

All four functions have the same numba type, so a method is compiled once per *parameter type*
(:mod:`hpcrail.integrators.driver`) and cached on disk.  Every method is a numba function ::

    status = method(rhs, jac, events, observe, params, y, tstate, t_out, Y_out, iout, t_pause,
                    t_final, acc, stats, settings, atol, rtol, mass, spec, ev_out, sync, blocks)

=========  ======================================================================================
``y``        state, float64[n], in/out
``tstate``   solver state float64[m] (``m = MethodInfo.state_size(n, spec)``): ``[0]`` t,
             ``[1]`` next step size, ``[2]`` 1.0 once the method is initialised (``tstate[3:3+n]``
             holds f(t, y), or y' for the ESDIRK methods); further entries are method specific
             (history, event values, Jacobian, LU factors, the previous step's interpolant).
             Carrying it between calls lets a run be cut into chunks (progress, checkpoints)
             without changing the step sequence: methods never shorten a step to land on
             ``t_pause``, only on ``t_final``.
``t_out``    sorted sample times float64[k]; ``Y_out`` float64[k, n] receives the state at each
             sample, by the method's dense output; ``iout`` int64[2]: ``[0]`` the next sample to
             write, ``[1]`` the wall-clock deadline of the run (monotonic clock [ns], 0 = none;
             checked by :func:`~hpcrail.integrators.common.loop_gate`, the run then returns
             ``TIME_BUDGET``).
``acc``      accumulator for ``observe`` (float64[n_acc]).
``stats``    int64[8] counters, see ``ST_*`` / ``STAT_NAMES``.
``settings`` float64[16]: ``[0]`` step (fixed-step methods) or initial step (0 = automatic),
             ``[1]`` hmin, ``[2]`` hmax (0 = unlimited), ``[3]`` max_steps (accepted + rejected,
             over the whole run), ``[4]`` rtol, ``[5]`` safety factor, ``[6..10]`` method options
             (``MethodInfo.options`` names them; the driver fills in their defaults),
             ``[11]`` observation interval: ``observe`` also runs on the dense output every this
             many seconds inside long steps (0 = only at step ends), ``[12]`` wall-time budget [s]
             (0 = none: see ``iout``).
``atol``     absolute tolerance per state, float64[n].
``rtol``     relative tolerance per state, float64[n]: error weights are atol_i + rtol_i·|y_i|
             (``settings[4]`` keeps the scalar rtol for the Newton tolerance).
``mass``     diagonal of the mass matrix, float64[n] (ones for an ODE).
``spec``     int64 description of the Jacobian pattern, its bordered-band layout, the
             finite-difference column groups and the event flags (``linalg.SP_*``).
``ev_out``   float64[cap, n+2] event records ``[t, event index, y...]``.
``sync``     the reduction hook ``sync(buf, blocks)`` and ``blocks`` the vector layout
``blocks``   (:mod:`hpcrail.integrators.collectives`): the worker's blocks of the state, the reduction
             buffers, barrier and MPI handles.  A serial run is one block ``[0, n)`` with a do-nothing
             hook; on several workers every vector loop of the method runs over the worker's own
             blocks and every global number is a reduction (:mod:`hpcrail.integrators.distributed`).
=========  ======================================================================================

The return value is a status code (``RUNNING``/``DONE``/``EVENT_STOP`` or a failure).  Failures
are values, never exceptions raised inside numba: a failed scenario in a sweep is recorded with its
reason.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Any, Callable, Sequence

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
TIME_BUDGET = -7     #: the wall-time budget ``settings[12]`` is exhausted (the deadline in ``iout[1]`` passed)

# ---- indices into the int64[8] statistics array ---------------------------------------------
ST_STEPS, ST_REJECTED, ST_NFEV, ST_NJEV, ST_NLU, ST_NEWTON, ST_EVENTS, ST_NFAIL = range(8)
N_STATS = 8
#: ``rejected`` counts every rejected step attempt; ``newton_failures`` those rejected because the
#: Newton iteration did not converge (the rest failed the error test)
STAT_NAMES = ("steps", "rejected", "nfev", "njev", "nlu", "newton_iterations", "events", "newton_failures")

# ---- indices into the float64[16] settings array --------------------------------------------
SET_STEP, SET_HMIN, SET_HMAX, SET_MAX_STEPS, SET_RTOL, SET_SAFETY = range(6)
SET_OPT0 = 6         #: first method-specific option (see ``MethodInfo.options``)
SET_NEWTON_TOL = 8   #: implicit methods: Newton tolerance on the scaled norm (0 = default)
SET_NEWTON_MAXITER = 9  #: implicit methods: maximum Newton iterations per solve (0 = default)
SET_NEWTON_JUPD = 10  #: implicit methods: Jacobian updates allowed inside one stalled Newton solve
SET_OBS_DT = 11      #: all methods: also ``observe`` the dense output every this many seconds (0 = step ends)
SET_WALL_BUDGET = 12  #: all methods: wall-time budget [s] of the whole run (0 = none); the drivers turn it into
#:                       the deadline ``iout[1]`` when the run starts
#: slots 13-15: method options 7-9 (``SET_OPT0 + 7``..; options 5 and 6 do not exist, their slots are the two above)
N_SETTINGS = 16

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
    TIME_BUDGET = TIME_BUDGET

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
            Status.TIME_BUDGET: f"wall-time budget exhausted at t = {t:.6g} s (the run took longer than its "
                                "budget: raise the sweep's budget.wall_time_s, or loosen the tolerances)",
        }[self]


@dataclasses.dataclass
class Events:
    """Event functions of a problem: ``fn(t, y, params, g)`` writes float64[nev].

    Attributes
    ----------
    fn : numba dispatcher with the ``rhs`` signature.
    direction : int per event: +1 only − → + crossings, −1 only + → −, 0 both.
    terminal : bool per event: stop the integration at the first such root (``EVENT_STOP``).
    max_records : capacity of the event record (events beyond it are counted, not stored).
    """

    fn: Callable
    direction: Sequence[int]
    terminal: Sequence[bool]
    max_records: int = 10_000

    def __post_init__(self):
        self.direction = [int(d) for d in self.direction]
        self.terminal = [bool(x) for x in self.terminal]
        if len(self.direction) != len(self.terminal):
            raise ValueError(f"events: {len(self.direction)} directions but {len(self.terminal)} terminal flags")
        if any(d not in (-1, 0, 1) for d in self.direction):
            raise ValueError(f"events: direction must be -1, 0 or +1, got {self.direction}")
        if len(self.direction) == 0:
            raise ValueError("events: at least one event function")

    @property
    def n(self) -> int:
        return len(self.direction)


@dataclasses.dataclass
class BlockLayout:
    """The states of a :class:`Problem` split into contiguous blocks owned by workers (threads of this process
    or MPI ranks), each integrating its own blocks (distributed state, :mod:`hpcrail.integrators.distributed`).

    Attributes
    ----------
    bounds : int64[P+1] block bounds: block b owns states ``[bounds[b], bounds[b+1])``; the states
        ``[bounds[P], n)`` are global (replicated on every worker).
    owner : int64[W+1]: worker w owns blocks ``[owner[w], owner[w+1])``.
    params : the parameter object of every local worker (threads: W of them; MPI: this rank's only).
        The problem's ``rhs``, ``observe`` and ``jac`` are *collective* on blocks: every worker calls them at
        the same point with its own parameters, each fills the derivatives of its own and of the global states
        (``jac``: its value slots ``slots[w]`` and the global rows' slots from ``tail``) and exchanges what it
        needs from its neighbours itself.
    workers : ``"threads"`` or ``"mpi"``; ``rank`` this process's worker (MPI); ``comm`` the mpi4py
        communicator (MPI).
    slots : int64[W, 2] Jacobian value slots ``[lo, hi)`` each worker fills; ``tail`` the first slot of the
        global rows (implicit methods).
    bar : int64 barrier array shared with the model's own exchanges (threads; a fresh one if None).
    combine_acc : ``(list of per-worker accumulators) -> accumulator`` (threads).
    act : int64[3] per worker (a list, threads) or this rank's (MPI): the blocks ``[act[0], act[1])`` the
        collective functions evaluate now and ``act[2]`` = 1 when those are all of the worker's; shared with the
        model's parameters (a multirate method evaluates the blocks it refines only; None: not shared).
    multirate : what a multirate method (:mod:`~hpcrail.integrators.multirate`) needs besides the bounds:
        ``(halo_ahead, halo_behind, every_block_states, slot_lo, slot_hi)`` — how many states at the end of the
        block ahead and at the start of the block behind a block's functions read, the states every block reads
        (e.g. a train's head position), and each block's Jacobian value slots ``[slot_lo[b], slot_hi[b])``
        (the slots whose rows are the block's states).  None: the problem cannot run multirate.
    """

    bounds: np.ndarray
    owner: np.ndarray
    params: list
    workers: str = "threads"
    rank: int = 0
    comm: Any = None
    slots: np.ndarray | None = None
    tail: int = 0
    bar: np.ndarray | None = None
    combine_acc: Callable | None = None
    act: Any = None
    multirate: tuple | None = None

    def __post_init__(self):
        self.bounds = np.ascontiguousarray(self.bounds, dtype=np.int64)
        self.owner = np.ascontiguousarray(self.owner, dtype=np.int64)
        P, W = self.n_blocks, self.n_workers
        if P < 1 or self.bounds[0] != 0 or np.any(np.diff(self.bounds) < 1):
            raise ValueError(f"block bounds must increase from 0, got {self.bounds.tolist()}")
        if self.owner[0] != 0 or self.owner[-1] != P or np.any(np.diff(self.owner) < 1):
            raise ValueError(f"owner must split the {P} blocks into non-empty ranges, got {self.owner.tolist()}")
        if self.workers not in ("threads", "mpi"):
            raise ValueError(f"workers = {self.workers!r}; allowed: threads, mpi")
        if self.workers == "threads" and len(self.params) != W:
            raise ValueError(f"{W} workers but {len(self.params)} parameter objects")
        if self.workers == "mpi" and len(self.params) != 1:
            raise ValueError("an MPI block layout holds the parameters of this rank only")
        self.slots = (np.zeros((W, 2), np.int64) if self.slots is None
                      else np.ascontiguousarray(self.slots, dtype=np.int64))

    @property
    def n_blocks(self) -> int:
        return self.bounds.size - 1

    @property
    def n_workers(self) -> int:
        return self.owner.size - 1


@dataclasses.dataclass
class Problem:
    """An initial-value problem ``M y' = f(t, y)``, y(t0) = y0, as seen by the integrators.

    Attributes
    ----------
    rhs, observe : numba dispatchers with the signatures given in the module docstring.
    params : numba-typable parameters passed through to every function unchanged.
    y0 : float64[n] initial state (consistent with the algebraic equations for a DAE).
    t0 : initial time [s].
    atol_scale : float64[n] per-state scale multiplying the user's ``atol`` (states of very
        different magnitude, e.g. coupler deflections [m] and speeds [m/s]).
    rtol_scale : float64[n] per-state factor on the user's ``rtol`` (e.g. speeds whose
        *differences* matter, not their relative size); default ones.
    acc0 : float64[n_acc] initial accumulator for ``observe``.
    jac : optional analytic Jacobian ``jac(t, y, params, vals)`` filling the values of
        ``jac_pattern``.
    jac_pattern : :class:`~hpcrail.integrators.linalg.JacobianPattern` of ∂f/∂y (default dense).
    events : optional :class:`Events`.
    mass : optional float64[n] diagonal mass matrix (default identity; zeros = algebraic states).
    precompile : ``((dispatcher, argument types), ...)`` the run calls after the integration (the
        kind's outputs from the samples); on a first run the driver compiles them while the
        integrator compiles in its helper process (:func:`hpcrail.integrators.driver.compiled_kernel`).
    blocks : optional :class:`BlockLayout`: the states split into blocks owned by several workers
        (``params`` is then worker 0's; the functions are collective).  None: one block ``[0, n)``.
    """

    rhs: Callable
    observe: Callable
    params: Any
    y0: np.ndarray
    t0: float = 0.0
    atol_scale: np.ndarray | None = None
    acc0: np.ndarray | None = None
    jac: Callable | None = None
    jac_pattern: Any = None
    events: Events | None = None
    mass: np.ndarray | None = None
    rtol_scale: np.ndarray | None = None
    precompile: tuple = ()
    blocks: BlockLayout | None = None

    def __post_init__(self):
        self.y0 = np.ascontiguousarray(self.y0, dtype=np.float64)
        n = self.y0.size
        if self.atol_scale is None:
            self.atol_scale = np.ones_like(self.y0)
        self.atol_scale = np.ascontiguousarray(self.atol_scale, dtype=np.float64)
        if self.acc0 is None:
            self.acc0 = np.zeros(1)
        self.acc0 = np.ascontiguousarray(self.acc0, dtype=np.float64)
        if self.atol_scale.shape != self.y0.shape:
            raise ValueError(f"atol_scale has shape {self.atol_scale.shape}, y0 has {self.y0.shape}")
        self.rtol_scale = (np.ones_like(self.y0) if self.rtol_scale is None
                           else np.ascontiguousarray(self.rtol_scale, dtype=np.float64))
        if self.rtol_scale.shape != self.y0.shape or np.any(self.rtol_scale < 0):
            raise ValueError(f"rtol_scale must be non-negative with the shape of y0 {self.y0.shape}")
        if self.mass is not None:
            self.mass = np.ascontiguousarray(self.mass, dtype=np.float64)
            if self.mass.shape != self.y0.shape:
                raise ValueError(f"mass has shape {self.mass.shape}, y0 has {self.y0.shape}")
            if np.any(self.mass < 0) or not np.all(np.isfinite(self.mass)):
                raise ValueError("mass must be finite and non-negative (zeros mark algebraic states)")
        if self.jac_pattern is not None and self.jac_pattern.n != n:
            raise ValueError(f"jac_pattern is for n = {self.jac_pattern.n} states, y0 has {n}")
        if self.jac is not None and self.jac_pattern is None:
            raise ValueError("an analytic jac needs its jac_pattern (the order of its values)")
        if self.blocks is not None:
            if self.blocks.bounds[-1] > n:
                raise ValueError(f"block bounds end at {self.blocks.bounds[-1]}, beyond the n = {n} states")
            if self.events is not None:
                raise ValueError("events need the whole state: a problem on blocks cannot have events")

    @property
    def mass_identity(self) -> bool:
        return self.mass is None or bool(np.all(self.mass == 1.0))


@dataclasses.dataclass
class Solution:
    """What every integrator returns (through :func:`hpcrail.integrators.integrate`).

    Attributes
    ----------
    t : float64[k] sample times [s]; ``y`` : float64[k, n] states at those times (rows after a
        failure or a terminal event are NaN).
    status : :class:`Status`; ``message`` its description; ``t_reached`` the last accepted time.
    stats : dict of step statistics (``STAT_NAMES``); ``acc`` the final ``observe`` accumulator;
    ``wall_time`` [s] of the integration (compilation excluded); ``compile_time`` [s].
    event_t : float64[m] times of the recorded events [s]; ``event_index`` int64[m] which event
    function; ``event_y`` float64[m, n] the states there.
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
    event_t: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0))
    event_index: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    event_y: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def success(self) -> bool:
        return self.status.success


#: wall time [s] a chunk of a run with a progress callback aims at (:func:`next_pause`)
PAUSE_TARGET_S = 0.25


def next_pause(t0: float, t_final: float, t_now: float, n_chunks: int, elapsed: float,
               target_s: float | None = None) -> float:
    """Simulated time [s] of the next pause of a run integrated in chunks (for its progress callback): at
    least ``1/n_chunks`` of the run [t0, t_final] after ``t_now``, and about ``target_s`` of wall time at the
    rate so far (``elapsed`` wall seconds since the start for ``t_now − t0`` simulated ones; ``target_s`` None:
    :data:`PAUSE_TARGET_S`).  A run thus
    pauses at most ``n_chunks`` times, and a short one a few times only: every kernel call costs 0.3-3 ms of
    argument unboxing and work-array set-up (measured on a 20 000-vehicle train: 1 ms serial, 2.5 ms on 2
    distributed-state threads, i.e. 0.35 s of a 1.2 s run with 50 fixed chunks).  Pauses return between steps
    and never change them (bitwise: tests/test_integrators_basic.py).  Used by the drivers (:mod:`~hpcrail.integrators.driver`,
    :mod:`~hpcrail.integrators.distributed`, :mod:`~hpcrail.integrators.hybrid`)."""
    target_s = PAUSE_TARGET_S if target_s is None else target_s
    step = (t_final - t0) / max(1, n_chunks)
    if elapsed > 0.0 and t_now > t0:
        step = max(step, (t_now - t0) / elapsed * target_s)
    return min(t_final, t_now + step)
