"""The integration-method catalogue and the ``integrator:`` block shared by scenario kinds.

The catalogue is data: every method's name, aliases, whether it is adaptive or implicit, its order,
named options (stored in ``settings[6:]`` of the integrator contract) and source.  Validating a
scenario reads it without importing numba or :mod:`hpcrail.integrators`; the integrator registry
(:mod:`hpcrail.integrators.registry`) binds each entry to its numba kernel (``kernel`` and
``state_size`` name the functions as ``module:function``) and checks at import that every entry has
one.  Aliases map the names used in the papers and in MATLAB/scipy (``ode45``, ``ode15s``,
``radau``) to hpcrail's names.  Several names may share one kernel with different option defaults
(one compilation for all of them).
"""
from __future__ import annotations

import dataclasses
from typing import Literal, Optional

from pydantic import Field, field_validator, model_validator

from hpcrail.config.base import MAX_DURATION_S, Strict
from hpcrail.config.errors import ConfigValueError

#: range of integrator steps [s]: below 1 ns no model of hpcrail has dynamics
MIN_STEP_S = 1e-9
#: tightest relative tolerance (a few units of the float64 rounding)
MIN_RTOL = 1e-14
#: largest step budget
MAX_STEPS = 10 ** 12


@dataclasses.dataclass(frozen=True)
class Option:
    """A method option: position in ``settings[6:]``, default and allowed range."""

    index: int
    default: float
    low: float
    high: float
    description: str
    internal: bool = False   #: fixed by the method's name (one kernel, several methods): not settable


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """Catalogue entry of one integration method (see the module docstring).

    The capability flags are what every other place reads: ``events`` (event location on the dense output),
    ``blocks`` (runs on a state split into blocks over threads or MPI ranks: distributed state,
    :mod:`hpcrail.integrators.distributed`), ``batch`` (in :func:`hpcrail.integrators.batch.integrate_batch`'s
    parallel loop), ``dae`` (a singular diagonal mass matrix: implicit methods), ``multirate`` (the blocks step
    at their own rates: :mod:`hpcrail.integrators.multirate`).  The config's allowed values,
    ``hpcrail integrators``, the registry, the partition's choice of distributed state and the tests derive
    from them (``tests/test_integrator_suite.py``, ``tests/test_partition.py``).
    """

    name: str
    kernel: str               #: ``module:function`` of the numba kernel following the contract
    state_size: str           #: ``module:function`` ``(n, spec) -> len(tstate)``
    adaptive: bool            #: step size chosen from rtol/atol (else ``step`` is required)
    order: int                #: classical order of convergence (maximum order for BDF/NDF)
    description: str
    implicit: bool = False    #: uses the Jacobian / Newton machinery (accepts a mass matrix)
    options: dict = dataclasses.field(default_factory=dict)  #: name -> :class:`Option`
    source: str = ""
    aliases: tuple = ()
    #: ``module:function`` of a library-driven runner ``(problem, t_out, t_final, **kw) -> Solution``
    #: for methods without a numba kernel (``kernel`` and ``state_size`` empty), e.g. SUNDIALS CVODE
    external: str = ""
    events: bool = True       #: event location (terminal and recorded events)
    blocks: bool = False      #: distributed state: the kernel runs on blocks of the state (threads, MPI ranks)
    batch: bool = True        #: runs in the batch kernel's parallel loop (a numba kernel)
    #: multirate: the blocks step at their own rates (:mod:`hpcrail.integrators.multirate`); a kind runs it on a
    #: block layout of one worker that describes the blocks' halos (``BlockLayout.multirate``)
    multirate: bool = False

    @property
    def step_control(self) -> str:
        """``"error-controlled"`` (step from rtol/atol) or ``"fixed"``."""
        return "error-controlled" if self.adaptive else "fixed"

    @property
    def dae(self) -> bool:
        """Integrates index-1 DAEs (a singular diagonal mass matrix)."""
        return self.implicit


def _catalogue() -> list[MethodSpec]:
    ex, bdf, imp, rad = ("hpcrail.integrators.explicit", "hpcrail.integrators.bdf", "hpcrail.integrators.implicit",
                         "hpcrail.integrators.radau")
    newton = {
        "newton_tol": Option(2, 0.0, 0.0, 1.0, "Newton convergence tolerance on the scaled norm (0 = "
                             "max(10 u/rtol, min(0.03, sqrt(rtol))))"),
        "newton_maxiter": Option(3, 0.0, 0.0, 50.0, "maximum Newton iterations per solve (0 = method default)"),
        "jacobian_updates": Option(4, 2.0, 0.0, 10.0, "Jacobian re-evaluations at the current iterate allowed "
                                   "inside one stalled Newton solve (semi-smooth Newton for non-smooth models; "
                                   "0 = simplified Newton only)"),
    }
    out = [
        MethodSpec("rk4", f"{ex}:rk4", f"{ex}:explicit_state_size", adaptive=False, order=4, blocks=True,
                   description="classical Runge-Kutta, fixed step, Hermite dense output",
                   source="Hairer, Nørsett & Wanner 1993 §II.1; Yu et al. 2022 §4"),
        MethodSpec("abm4", f"{ex}:abm4", f"{ex}:abm_state_size", adaptive=False, order=4, blocks=True,
                   description="Adams-Bashforth-Moulton 4 predictor-corrector PE(CE)^m, fixed step, RK4 start",
                   options={"corrector_iterations": Option(0, 1.0, 1.0, 10.0, "corrector evaluations m (1 = PECE)")},
                   source="Hairer, Nørsett & Wanner 1993 §III.1; Yu et al. 2022 eq (32)", aliases=("abm", "adams")),
        MethodSpec("dopri5", f"{ex}:dopri5", f"{ex}:explicit_state_size", adaptive=True, order=5, blocks=True,
                   description="Dormand-Prince 5(4), adaptive, 4th-order dense output",
                   source="Dormand & Prince 1980; Hairer, Nørsett & Wanner 1993 §II.5", aliases=("ode45", "rk45")),
    ]
    bdf_opts = dict(newton)
    bdf_opts["max_order"] = Option(0, 5.0, 1.0, 5.0, "highest order used (1-5)")
    ndf_opts = dict(bdf_opts)
    bdf_opts["ndf"] = Option(1, 0.0, 0.0, 1.0, "numerical differentiation formulas", internal=True)
    ndf_opts["ndf"] = Option(1, 1.0, 0.0, 1.0, "numerical differentiation formulas", internal=True)
    out.append(MethodSpec("bdf", f"{bdf}:bdf", f"{bdf}:bdf_state_size", adaptive=True, order=5, implicit=True, blocks=True,
                          description="variable-order (1-5) variable-step BDF, quasi-constant step, Newton on "
                                      "the sparse Jacobian; index-1 DAEs with a diagonal mass matrix",
                          options=bdf_opts, source="Shampine & Reichelt 1997; scipy BDF; Bosso et al. 2024"))
    bdf2_opts = dict(bdf_opts)
    bdf2_opts["max_order"] = Option(0, 2.0, 1.0, 2.0, "highest order used (1-2)")
    out.append(MethodSpec("bdf2", f"{bdf}:bdf", f"{bdf}:bdf_state_size", adaptive=True, order=2, implicit=True,
                          blocks=True,
                          description="variable-step BDF of order 1-2 (the bdf kernel with max_order 2): on trains, "
                                      "whose draft-gear kinks make orders 3-5 stability-limited, the fastest implicit "
                                      "method (docs/performance.md)",
                          options=bdf2_opts, source="Shampine & Reichelt 1997; CVODE with max order 2"))
    out.append(MethodSpec("ndf", f"{bdf}:bdf", f"{bdf}:bdf_state_size", adaptive=True, order=5, implicit=True,
                          blocks=True,
                          description="variable-order (1-5) numerical differentiation formulas (MATLAB ode15s)",
                          options=ndf_opts, source="Shampine & Reichelt 1997 (ode15s); Bosso et al. 2024; "
                                                   "Yu et al. 2022", aliases=("ode15s",)))
    mr_opts = {k: v for k, v in bdf2_opts.items() if k != "ndf"}
    mr_opts["refine_fraction"] = Option(1, 0.25, 0.05, 1.0, "largest fraction of the blocks re-integrated with "
                                        "their own steps before the global step is rejected instead (0.25: "
                                        "8-16 % less CPU than 0.5 on trains 2 and 4 at equal or better "
                                        "envelopes, docs/performance.md)")
    mr_opts["run_lu_change"] = Option(7, 0.3, 0.01, 4.0, "relative change of the iteration-matrix coefficient "
                                      "c = α/h within a re-integrated run before it refactorises (0.3: CVODE's "
                                      "DGMAX, as the global step)")
    mr_opts["run_lu_keep"] = Option(8, 0.0, 0.0, 1.0, "1: a re-integrated run starts from its factors of an "
                                    "earlier global step (while the global Jacobian is unchanged)")
    out.append(MethodSpec("mrbdf2", "hpcrail.integrators.multirate:mrbdf", "hpcrail.integrators.multirate:"
                          "mrbdf_state_size", adaptive=True, order=2, implicit=True, blocks=True, batch=False,
                          events=False, multirate=True,
                          description="multirate BDF of order 1-2 on hidden-vehicle blocks: a global step, then the "
                                      "blocks whose error test failed re-integrated with their own steps "
                                      "(self-adjusting local time stepping; one core walks the blocks)",
                          options=mr_opts, aliases=("multirate_bdf2",),
                          source="Savcenco, Hundsdorfer & Verwer 2007; Bonaventura, Casella et al. 2018 (MOX "
                                 "08/2018); Shampine & Reichelt 1997"))
    for name, scheme, adaptive, order, desc, aliases, src in (
            ("implicit_euler", 0, False, 1, "implicit (backward) Euler, fixed step, Newton", ("backward_euler",),
             "Hairer & Wanner 1996 §IV.3; Yu et al. 2023"),
            ("trapezoidal", 1, False, 2, "trapezoidal rule (Crank-Nicolson), fixed step, Newton",
             ("trapezoid", "crank_nicolson"), "Hairer & Wanner 1996 §IV.3"),
            ("trbdf2", 2, True, 2, "TR-BDF2 (L-stable ESDIRK), adaptive, embedded error estimate", ("ode23tb",),
             "Hosea & Shampine 1996 (MATLAB ode23tb)"),
            ("esdirk3", 3, True, 3, "ESDIRK 3(2), 4 stages, L-stable, stiffly accurate, adaptive", ("kvaerno3",),
             "Kværnø 2004")):
        opts = dict(newton)
        opts["scheme"] = Option(0, float(scheme), 0.0, 3.0, "ESDIRK tableau", internal=True)
        out.append(MethodSpec(name, f"{imp}:esdirk", f"{imp}:esdirk_state_size", adaptive=adaptive, order=order,
                              implicit=True, blocks=True, description=desc, options=opts, source=src, aliases=aliases))
    out.append(MethodSpec("linear_implicit_euler", f"{imp}:linear_euler", f"{imp}:linear_euler_state_size",
                          adaptive=False, order=1, implicit=True, blocks=True,
                          options={"jacobian_every": Option(0, 0.0, 0.0, 1e9, "re-evaluate and refactorise the "
                                                            "Jacobian every k steps (0 = once, Yu et al. 2023)")},
                          description="state-space implicit-Euler recurrence: Jacobian factorised once "
                                      "(exact implicit Euler for linear systems)",
                          source="Yu et al. 2023 eq (12)", aliases=("state_space_euler", "linearly_implicit_euler")))
    out.append(MethodSpec("radau5", f"{rad}:radau5", f"{rad}:radau_state_size", adaptive=True, order=5, implicit=True,
                          description="Radau IIA order 5 (3-stage, L-stable), simplified Newton with complex "
                                      "splitting; index-1 DAEs with a diagonal mass matrix",
                          options=dict(newton), source="Hairer & Wanner 1996 (RADAU5); scipy Radau",
                          aliases=("radau", "radau_iia")))
    out.append(MethodSpec("cvode", "", "", adaptive=True, order=5, implicit=True,
                          description="SUNDIALS CVODE BDF (variable order, band Newton on the model's analytic "
                                      "Jacobian without its border), driven from numba; needs "
                                      "`pip install 'hpcrail[cvode]'`",
                          options={"max_order": Option(0, 5.0, 1.0, 5.0, "highest BDF order (1-5)"),
                                   "stability_limit_detection": Option(1, 0.0, 0.0, 1.0, "CVODE's BDF "
                                                                       "stability-limit detection (1 = on)"),
                                   "max_nonlin_iters": Option(2, 3.0, 1.0, 20.0, "Newton iterations per step "
                                                              "before a convergence failure")},
                          source="Hindmarsh et al. 2005 (SUNDIALS); Byrne & Hindmarsh 1975",
                          aliases=("sundials", "cvode_bdf"), external="hpcrail.integrators.cvode:run_cvode",
                          events=False, batch=False))
    return out


#: name (lower case) -> :class:`MethodSpec`, in registration order
METHODS: dict[str, MethodSpec] = {m.name: m for m in _catalogue()}

#: solvers of the state-space formulation of linear models (the vertical kind, :mod:`hpcrail.integrators.
#: statespace`), which are not integrators of the contract: name or alias -> solver
STATE_SPACE_SOLVERS = {"recurrence": "recurrence", "implicit_euler": "recurrence", "paper001": "recurrence",
                       "exact": "exact", "expm": "exact"}


def block_methods() -> list[str]:
    """Names of the methods that run on blocks (distributed state), in catalogue order."""
    return [m.name for m in METHODS.values() if m.blocks]


def multirate_methods() -> list[str]:
    """Names of the multirate methods (the blocks step at their own rates), in catalogue order."""
    return [m.name for m in METHODS.values() if m.multirate]
#: alias (lower case) -> canonical name
ALIASES: dict[str, str] = {a.lower(): m.name for m in METHODS.values() for a in m.aliases}


def canonical_method(name: str) -> str:
    """Resolve an alias (case-insensitive); raises ``KeyError`` listing the known names."""
    key = name.lower()
    key = ALIASES.get(key, key)
    if key not in METHODS:
        raise KeyError(f"unknown integrator {name!r}; known: {', '.join(method_names())}")
    return key


def method_names(include_aliases: bool = True, where=None) -> list[str]:
    """Sorted names accepted by ``integrator.method`` (``where(spec) -> bool``: only the methods a model kind
    can use, e.g. the explicit ones)."""
    keep = {m for m, spec in METHODS.items() if where is None or where(spec)}
    names = set(keep)
    if include_aliases:
        names |= {a for a, m in ALIASES.items() if m in keep}
    return sorted(names)


def method_spec(name: str) -> MethodSpec:
    """The catalogue entry of ``name`` or an alias; raises ``KeyError``."""
    return METHODS[canonical_method(name)]


class Integrator(Strict):
    """Integrator settings; ``method`` is any catalogued name or alias (``hpcrail integrators`` lists them:
    rk4, abm4, dopri5/ode45, bdf, ndf/ode15s, radau5/radau, trbdf2/ode23tb, implicit_euler,
    trapezoidal, linear_implicit_euler), so a sweep can vary it like any other field."""

    method: str = "rk4"
    step_s: Optional[float] = Field(None, ge=MIN_STEP_S, le=MAX_DURATION_S, description="fixed step (fixed-step "
                                    "methods) or initial step")
    rtol: float = Field(1e-6, ge=MIN_RTOL, lt=1)
    atol: float = Field(1e-6, ge=1e-30, le=1e6)
    max_steps: int = Field(200_000_000, ge=1, le=MAX_STEPS)
    max_step_s: Optional[float] = Field(None, ge=MIN_STEP_S, le=MAX_DURATION_S)
    min_step_s: float = Field(0.0, ge=0, le=MAX_DURATION_S)
    jacobian: Literal["auto", "analytic", "finite_difference", "dense"] = Field(
        "auto", description="implicit methods: the model's analytic Jacobian (auto, analytic), finite differences "
        "on its sparsity pattern, or finite differences with a dense LU (the 'JAC OFF' case of Bosso et al. 2024)")
    options: dict[str, float] = Field({}, description="method options by name, e.g. {max_order: 2} for bdf/ndf, "
                                      "{corrector_iterations: 2} for abm4 (`hpcrail integrators` lists them)")

    @field_validator("method")
    @classmethod
    def _known(cls, v):
        try:
            return canonical_method(v)
        except KeyError:
            import difflib

            close = difflib.get_close_matches(v.lower(), method_names(), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigValueError(f"unknown integrator {v!r}{hint}", allowed=", ".join(method_names())) from None

    @model_validator(mode="after")
    def _step(self):
        info = method_spec(self.method)
        if not info.adaptive and self.step_s is None:
            raise ConfigValueError(f"method {self.method!r} has a fixed step: set integrator.step_s", field="step_s",
                                   allowed=f"a step ≥ {MIN_STEP_S:g} s")
        settable = {k for k, o in info.options.items() if not o.internal}
        for name, value in self.options.items():
            if name not in settable:
                allowed = ", ".join(sorted(settable)) or "none"
                raise ConfigValueError(f"method {self.method!r} has no option {name!r}", field=f"options.{name}",
                                       allowed=allowed)
            opt = info.options[name]
            if not opt.low <= value <= opt.high:
                raise ConfigValueError(f"option out of range ({opt.description})", field=f"options.{name}",
                                       allowed=f"{opt.low:g} ≤ value ≤ {opt.high:g}")
        if self.jacobian != "auto" and not info.implicit:
            raise ConfigValueError(f"jacobian = {self.jacobian!r} needs an implicit method; {self.method!r} is "
                                   "explicit", field="jacobian", allowed="auto (explicit methods)")
        if self.max_step_s is not None and self.min_step_s > self.max_step_s:
            raise ConfigValueError("min_step_s exceeds max_step_s", field="min_step_s",
                                   allowed=f"≤ {self.max_step_s} (max_step_s)")
        return self

    def kwargs(self) -> dict:
        """Keyword arguments of :func:`hpcrail.integrators.integrate` (and ``BatchItem``) from this block."""
        return dict(step=self.step_s or 0.0, rtol=self.rtol, atol=self.atol, hmin=self.min_step_s,
                    hmax=self.max_step_s or 0.0, max_steps=self.max_steps, options=dict(self.options or {}),
                    jacobian=self.jacobian)


def steps_issue(method: str, step_s: float | None, duration_s: float, max_steps: int) -> str | None:
    """Why a fixed-step run cannot finish within its step budget (None if it can)."""
    if method_spec(method).adaptive or not step_s:
        return None
    n = duration_s / step_s
    if n > max_steps:
        return f"the run needs {n:.3g} steps of {step_s:g} s, more than integrator.max_steps = {max_steps}"
    return None


def step_multiple_issues(method: str, step_s: float | None, times: dict) -> list[tuple]:
    """For a fixed-step method: ``(location, message, value)`` for each of ``times`` (location → time [s], e.g.
    the duration and the sampling interval) that is not a whole multiple (≥ 1) of ``step_s`` [s]; [] for
    adaptive methods."""
    if method_spec(method).adaptive or not step_s:
        return []
    out = []
    for loc, val in times.items():
        r = val / step_s
        if abs(r - round(r)) > 1e-6 * max(1.0, r) or round(r) < 1:
            out.append((loc, f"must be a whole multiple of integrator.step_s = {step_s:g} s for fixed-step methods",
                        val))
    return out


__all__ = ["steps_issue", "step_multiple_issues", "Option", "MethodSpec", "METHODS", "ALIASES", "STATE_SPACE_SOLVERS",
           "block_methods", "multirate_methods", "canonical_method", "method_names", "method_spec", "Integrator"]
