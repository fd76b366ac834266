"""Small piecewise-smooth problems with known solutions for the event-driven driver
(:mod:`hpcrail.integrators.hybrid`): documentation of its contract and test cases.

They live in the package, not in the test files, on purpose: numba's on-disk cache index of an
integrator holds every parameter type it was compiled for, and a type defined in a module that is
not importable later (a test file) makes the whole index unreadable for every other process.

Coulomb oscillator: x'' = −x − F sign(x') (unit mass and stiffness); from x0 > F at rest the
amplitude about ±F drops by 2F every half period π until |x| ≤ F at a velocity zero, where static
friction holds the mass for good.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from hpcrail._numba import JIT


class CoulombOscillator(NamedTuple):
    F: float              #: friction force / (mass · stiffness · length scale)
    mode: np.ndarray      #: int64[1]: 0 stick, +1 friction +F (moving −), −1 friction −F (moving +)
    log: np.ndarray       #: float64[L] event times
    nlog: np.ndarray      #: int64[1]


def coulomb_oscillator(F: float = 1.0, mode: int = 0, log_size: int = 64) -> CoulombOscillator:
    return CoulombOscillator(float(F), np.array([mode], np.int64), np.zeros(log_size), np.zeros(1, np.int64))


@njit(**JIT)
def osc_rhs(t, y, p, dydt):
    """y = [x, x']."""
    if p.mode[0] == 0:
        dydt[0] = 0.0
        dydt[1] = 0.0
    else:
        dydt[0] = y[1]
        dydt[1] = -y[0] + p.F * p.mode[0]


@njit(**JIT)
def osc_observe(t, y, p, acc):
    """acc[0]: largest speed."""
    acc[0] = max(acc[0], abs(y[1]))


@njit(**JIT)
def osc_guard(t, y, p, g):
    """g[0]: velocity along the sliding direction (reaches 0 at the turning point)."""
    g[0] = 1.0 if p.mode[0] == 0 else -p.mode[0] * y[1]


@njit(**JIT)
def osc_jump(t, y, p, which):
    """Mode at a turning point: stick if |x| ≤ F, else slide back towards the centre."""
    if which >= 0 and p.nlog[0] < p.log.size:
        p.log[p.nlog[0]] = t
        p.nlog[0] += 1
    x = y[0]
    if abs(y[1]) > 1e-9:
        p.mode[0] = 1 if y[1] < 0 else -1
    elif abs(x) <= p.F:
        p.mode[0] = 0
        y[1] = 0.0
    else:
        p.mode[0] = 1 if x > 0 else -1
    return 0


@njit(**JIT)
def chatter_guard(t, y, p, g):
    """A faulty model: crosses zero at t = 0.5 and keeps decreasing whatever the mode, so every
    mode change is followed at once by another event (the driver must stop with EVENT_FAILURE)."""
    g[0] = 1e3 * (0.5 - t)


@njit(**JIT)
def chatter_jump(t, y, p, which):
    p.mode[0] = -p.mode[0] if p.mode[0] != 0 else 1
    return 0
