"""Integrators register by name; scenario configs select them by that name (``integrator.method``).

A :class:`MethodInfo` describes one method: its numba kernel (contract in
:mod:`hpcrail.integrators.contract`), whether it is adaptive or implicit, its order, the size of
its solver state and its named options (stored in ``settings[6:]``).  Aliases map the names used in
the papers and in MATLAB/scipy (``ode45``, ``ode15s``, ``radau``) to hpcrail's names.  Several
names may share one kernel with different option defaults (one compilation for all of them).
"""
from __future__ import annotations

import dataclasses
from typing import Callable


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
class MethodInfo:
    name: str
    kernel: Callable          #: numba dispatcher following the contract
    adaptive: bool            #: step size chosen from rtol/atol (else ``step`` is required)
    order: int                #: classical order of convergence (maximum order for BDF/NDF)
    state_size: Callable      #: ``(n, spec) -> len(tstate)``
    description: str
    implicit: bool = False    #: uses the Jacobian / Newton machinery (accepts a mass matrix)
    options: dict = dataclasses.field(default_factory=dict)  #: name -> :class:`Option`
    source: str = ""
    #: methods run by an external library instead of a numba kernel (``kernel`` is None):
    #: ``external(problem, t_out, t_final, **integrate_kwargs) -> Solution`` (see ``integrators/cvode.py``)
    external: Callable | None = None


_REGISTRY: dict[str, MethodInfo] = {}
_ALIASES: dict[str, str] = {}


def register(info: MethodInfo, aliases: tuple[str, ...] = ()) -> None:
    """Add a method (and its aliases) to the registry; names are case-insensitive."""
    _REGISTRY[info.name.lower()] = info
    for a in aliases:
        _ALIASES[a.lower()] = info.name.lower()


def canonical_name(name: str) -> str:
    """Resolve an alias; raises ``KeyError`` listing the known names for an unknown method."""
    key = name.lower()
    key = _ALIASES.get(key, key)
    if key not in _REGISTRY:
        raise KeyError(f"unknown integrator {name!r}; known: {', '.join(method_names())}")
    return key


def get(name: str) -> MethodInfo:
    return _REGISTRY[canonical_name(name)]


def method_names(include_aliases: bool = True) -> list[str]:
    """Sorted names accepted by ``integrator.method``."""
    names = set(_REGISTRY)
    if include_aliases:
        names |= set(_ALIASES)
    return sorted(names)


def aliases_of(name: str) -> list[str]:
    key = canonical_name(name)
    return sorted(a for a, k in _ALIASES.items() if k == key)


def _register_builtin() -> None:
    from hpcrail.integrators.bdf import bdf, bdf_state_size
    from hpcrail.integrators.explicit import abm4, abm_state_size, dopri5, explicit_state_size, rk4
    from hpcrail.integrators.implicit import esdirk, esdirk_state_size, linear_euler, linear_euler_state_size
    from hpcrail.integrators.radau import radau5, radau_state_size

    newton = {
        "newton_tol": Option(2, 0.0, 0.0, 1.0, "Newton convergence tolerance on the scaled norm (0 = "
                             "max(10 u/rtol, min(0.03, sqrt(rtol))))"),
        "newton_maxiter": Option(3, 0.0, 0.0, 50.0, "maximum Newton iterations per solve (0 = method default)"),
        "jacobian_updates": Option(4, 2.0, 0.0, 10.0, "Jacobian re-evaluations at the current iterate allowed "
                                   "inside one stalled Newton solve (semi-smooth Newton for non-smooth models; "
                                   "0 = simplified Newton only)"),
    }
    register(MethodInfo("rk4", rk4, adaptive=False, order=4, state_size=explicit_state_size,
                        description="classical Runge-Kutta, fixed step, Hermite dense output",
                        source="HNW I §II.1; paper 004 §4"))
    register(MethodInfo("abm4", abm4, adaptive=False, order=4, state_size=abm_state_size,
                        description="Adams-Bashforth-Moulton 4 predictor-corrector PE(CE)^m, fixed step, RK4 start",
                        options={"corrector_iterations": Option(0, 1.0, 1.0, 10.0, "corrector evaluations m "
                                                                "(1 = PECE)")},
                        source="HNW I §III.1; paper 004 eq (32)"),
             aliases=("abm", "adams"))
    register(MethodInfo("dopri5", dopri5, adaptive=True, order=5, state_size=explicit_state_size,
                        description="Dormand-Prince 5(4), adaptive, 4th-order dense output",
                        source="Dormand & Prince 1980; HNW I §II.5"),
             aliases=("ode45", "rk45"))
    bdf_opts = dict(newton)
    bdf_opts["max_order"] = Option(0, 5.0, 1.0, 5.0, "highest order used (1-5)")
    ndf_opts = dict(bdf_opts)
    bdf_opts["ndf"] = Option(1, 0.0, 0.0, 1.0, "numerical differentiation formulas", internal=True)
    ndf_opts["ndf"] = Option(1, 1.0, 0.0, 1.0, "numerical differentiation formulas", internal=True)
    register(MethodInfo("bdf", bdf, adaptive=True, order=5, state_size=bdf_state_size, implicit=True,
                        description="variable-order (1-5) variable-step BDF, quasi-constant step, Newton on "
                                    "the sparse Jacobian; index-1 DAEs with a diagonal mass matrix",
                        options=bdf_opts, source="Shampine & Reichelt 1997; scipy BDF; paper 000"))
    bdf2_opts = dict(bdf_opts)
    bdf2_opts["max_order"] = Option(0, 2.0, 1.0, 2.0, "highest order used (1-2)")
    register(MethodInfo("bdf2", bdf, adaptive=True, order=2, state_size=bdf_state_size, implicit=True,
                        description="variable-step BDF of order 1-2 (the bdf kernel with max_order 2): on trains, "
                                    "whose draft-gear kinks make orders 3-5 stability-limited, the fastest implicit "
                                    "method (docs/performance.md)",
                        options=bdf2_opts, source="Shampine & Reichelt 1997; CVODE with max order 2"))
    register(MethodInfo("ndf", bdf, adaptive=True, order=5, state_size=bdf_state_size, implicit=True,
                        description="variable-order (1-5) numerical differentiation formulas (MATLAB ode15s)",
                        options=ndf_opts, source="Shampine & Reichelt 1997 (ode15s); papers 000, 004"),
             aliases=("ode15s",))
    for name, scheme, adaptive, order, desc, aliases, src in (
            ("implicit_euler", 0, False, 1, "implicit (backward) Euler, fixed step, Newton", ("backward_euler",),
             "HNW II §IV.3; paper 001"),
            ("trapezoidal", 1, False, 2, "trapezoidal rule (Crank-Nicolson), fixed step, Newton",
             ("trapezoid", "crank_nicolson"), "HNW II §IV.3"),
            ("trbdf2", 2, True, 2, "TR-BDF2 (L-stable ESDIRK), adaptive, embedded error estimate", ("ode23tb",),
             "Hosea & Shampine 1996 (MATLAB ode23tb)"),
            ("esdirk3", 3, True, 3, "ESDIRK 3(2), 4 stages, L-stable, stiffly accurate, adaptive", ("kvaerno3",),
             "Kværnø, BIT 44 (2004) 489-502")):
        opts = dict(newton)
        opts["scheme"] = Option(0, float(scheme), 0.0, 3.0, "ESDIRK tableau", internal=True)
        register(MethodInfo(name, esdirk, adaptive=adaptive, order=order, state_size=esdirk_state_size,
                            implicit=True, description=desc, options=opts, source=src), aliases=aliases)
    register(MethodInfo("linear_implicit_euler", linear_euler, adaptive=False, order=1,
                        state_size=linear_euler_state_size, implicit=True,
                        options={"jacobian_every": Option(0, 0.0, 0.0, 1e9, "re-evaluate and refactorise the "
                                                          "Jacobian every k steps (0 = once, paper 001)")},
                        description="state-space implicit-Euler recurrence: Jacobian factorised once "
                                    "(exact implicit Euler for linear systems)",
                        source="paper 001 eq (12)"),
             aliases=("state_space_euler", "linearly_implicit_euler"))
    register(MethodInfo("radau5", radau5, adaptive=True, order=5, state_size=radau_state_size, implicit=True,
                        description="Radau IIA order 5 (3-stage, L-stable), simplified Newton with complex "
                                    "splitting; index-1 DAEs with a diagonal mass matrix",
                        options=dict(newton), source="Hairer & Wanner 1996 (RADAU5); scipy Radau"),
             aliases=("radau", "radau_iia"))
    register(MethodInfo("cvode", None, adaptive=True, order=5, state_size=lambda n, spec: 0, implicit=True,
                        description="SUNDIALS CVODE BDF (variable order, band Newton on the model's analytic Jacobian "
                                    "without its border), driven from numba; needs `pip install 'hpcrail[cvode]'`",
                        options={"max_order": Option(0, 5.0, 1.0, 5.0, "highest BDF order (1-5)"),
                                 "stability_limit_detection": Option(1, 0.0, 0.0, 1.0, "CVODE's BDF stability-limit "
                                                                     "detection (1 = on)"),
                                 "max_nonlin_iters": Option(2, 3.0, 1.0, 20.0, "Newton iterations per step "
                                                            "before a convergence failure")},
                        source="Hindmarsh et al. 2005 (SUNDIALS); Byrne & Hindmarsh 1975", external=_run_cvode),
             aliases=("sundials", "cvode_bdf"))


def _run_cvode(problem, t_out, t_final, *, options=None, extra_settings=None, **kw):
    """:func:`hpcrail.integrators.cvode.integrate_cvode` with hpcrail's option names."""
    from hpcrail.integrators.cvode import integrate_cvode

    opts = dict(options or {})
    kw.pop("n_chunks", None)
    return integrate_cvode(problem, t_out, t_final, max_order=int(opts.get("max_order", 5)),
                           stability_limit_detection=bool(opts.get("stability_limit_detection", 0)),
                           max_nonlin_iters=int(opts.get("max_nonlin_iters", 3)), **kw)


_register_builtin()
