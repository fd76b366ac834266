"""Numba integrators behind one contract (see :mod:`hpcrail.integrators.contract`).

>>> from hpcrail.integrators import integrate, Problem
"""
from hpcrail.integrators.contract import Problem, Solution, Status
from hpcrail.integrators.driver import integrate
from hpcrail.integrators.registry import get, method_names

__all__ = ["Problem", "Solution", "Status", "integrate", "get", "method_names"]
