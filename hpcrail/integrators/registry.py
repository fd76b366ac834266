"""Integrators register by name; scenario configs select them by that name (``integrator.method``).

The names, aliases, options and properties of the built-in methods are data in the catalogue
:mod:`hpcrail.config.integrator` (read by config validation without importing numba); this module
binds every catalogue entry to its numba kernel and state-size function.  A :class:`MethodInfo`
describes one method: its kernel (contract in :mod:`hpcrail.integrators.contract`), whether it is
adaptive or implicit, its order, the size of its solver state and its named options (stored in
``settings[6:]``).  Several names may share one kernel with different option defaults (one
compilation for all of them).
"""
from __future__ import annotations

import dataclasses
import importlib
from typing import Callable

from hpcrail.config.integrator import METHODS, MethodSpec, Option, block_methods

__all__ = ["Option", "MethodInfo", "register", "canonical_name", "get", "method_names", "aliases_of", "block_methods",
           "spec_of"]


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


def spec_of(name: str) -> MethodSpec:
    """The catalogue entry (capabilities) of a registered method or alias."""
    return METHODS[canonical_name(name)]


def _resolve(ref: str) -> Callable:
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def _register_builtin() -> None:
    """Bind every catalogue entry to its kernel (or, for a library-driven method, its runner); an entry
    whose kernel does not exist fails here."""
    for spec in METHODS.values():
        register(MethodInfo(spec.name, _resolve(spec.kernel) if spec.kernel else None, adaptive=spec.adaptive,
                            order=spec.order,
                            state_size=_resolve(spec.state_size) if spec.state_size else _no_state,
                            description=spec.description, implicit=spec.implicit, options=dict(spec.options),
                            source=spec.source, external=_lazy(spec.external) if spec.external else None),
                 aliases=spec.aliases)


def _lazy(ref: str) -> Callable:
    """A runner imported on its first call (library-driven methods load their module only when used)."""

    def run(*args, **kw):
        return _resolve(ref)(*args, **kw)

    run.__qualname__ = run.__name__ = ref
    return run


def _no_state(n: int, spec) -> int:
    """Solver-state size of a library-driven method (it keeps its own state)."""
    return 0


_register_builtin()
