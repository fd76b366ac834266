"""Small ODEs with known solutions for integrator tests (module-level kernels: numba disk cache hits)."""
from typing import NamedTuple

import numpy as np
from numba import njit


class Osc(NamedTuple):
    w: float      # angular frequency [rad/s]
    zeta: float   # damping ratio


@njit(cache=True)
def osc_rhs(t, y, p, out):
    """Damped linear oscillator x'' + 2ζω x' + ω² x = 0, y = [x, x']."""
    out[0] = y[1]
    out[1] = -2.0 * p.zeta * p.w * y[1] - p.w * p.w * y[0]


@njit(cache=True)
def osc_observe(t, y, p, acc):
    if y[0] > acc[0]:
        acc[0] = y[0]
    acc[1] += 1.0


def osc_exact(t, w, zeta, x0=1.0):
    wd = w * np.sqrt(1 - zeta ** 2)
    return np.exp(-zeta * w * t) * x0 * (np.cos(wd * t) + zeta * w / wd * np.sin(wd * t))


class Blow(NamedTuple):
    k: float


@njit(cache=True)
def blow_rhs(t, y, p, out):
    """y' = k y², y(0) = 1: blows up at t = 1/k."""
    out[0] = p.k * y[0] * y[0]


@njit(cache=True)
def no_observe(t, y, p, acc):
    pass
