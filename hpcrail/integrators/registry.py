"""Integrators register by name; scenario configs select them by that name (``integrator.method``).

A :class:`MethodInfo` describes one method: its numba kernel (contract in
:mod:`hpcrail.integrators.contract`), whether it is adaptive, its order and the size of its solver
state.  Aliases map the names used in the papers (``ode45``) to hpcrail's names.
"""
from __future__ import annotations

import dataclasses
from typing import Callable


@dataclasses.dataclass(frozen=True)
class MethodInfo:
    name: str
    kernel: Callable          #: numba dispatcher following the contract
    adaptive: bool            #: step size chosen from rtol/atol (else ``step`` is required)
    order: int                #: classical order of convergence
    state_size: Callable[[int], int]  #: ``n -> len(tstate)``
    description: str
    implicit: bool = False


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


def _register_builtin() -> None:
    from hpcrail.integrators.explicit import dopri5, explicit_state_size, rk4

    register(MethodInfo("rk4", rk4, adaptive=False, order=4, state_size=explicit_state_size,
                        description="classical Runge-Kutta, fixed step, Hermite dense output"))
    register(MethodInfo("dopri5", dopri5, adaptive=True, order=5, state_size=explicit_state_size,
                        description="Dormand-Prince 5(4), adaptive, 4th-order dense output"),
             aliases=("ode45", "rk45"))


_register_builtin()
