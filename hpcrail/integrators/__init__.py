"""Numba integrators behind one contract (see :mod:`hpcrail.integrators.contract`).

>>> from hpcrail.integrators import integrate, Problem
"""
from hpcrail.integrators import registry
from hpcrail.integrators.contract import Events, Problem, Solution, Status
from hpcrail.integrators.driver import integrate
from hpcrail.integrators.linalg import JacobianPattern
from hpcrail.integrators.registry import get, method_names

__all__ = ["Events", "JacobianPattern", "Problem", "Solution", "Status", "integrate", "get", "method_names",
           "registry"]
