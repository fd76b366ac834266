"""Small ODEs with known solutions for integrator tests (module-level kernels: numba disk cache hits).

Their parameters are :class:`hpcrail.integrators.testproblems.TestParams` (one float array), the parameter type of
every other test problem: the integrator kernels are specialised on the parameter type, so sharing it makes each
method compile once for all test problems."""
import numpy as np
from numba import njit

from hpcrail.integrators.testproblems import TestParams, params


def Osc(w: float, zeta: float) -> TestParams:
    """Damped linear oscillator: angular frequency ``w`` [rad/s], damping ratio ``zeta`` (``p.p = [w, zeta]``)."""
    return params(w, zeta)


@njit(cache=True)
def osc_rhs(t, y, p, out):
    """Damped linear oscillator x'' + 2ζω x' + ω² x = 0, y = [x, x']."""
    w, zeta = p.p[0], p.p[1]
    out[0] = y[1]
    out[1] = -2.0 * zeta * w * y[1] - w * w * y[0]


@njit(cache=True)
def osc_observe(t, y, p, acc):
    if y[0] > acc[0]:
        acc[0] = y[0]
    acc[1] += 1.0


def osc_exact(t, w, zeta, x0=1.0):
    wd = w * np.sqrt(1 - zeta ** 2)
    return np.exp(-zeta * w * t) * x0 * (np.cos(wd * t) + zeta * w / wd * np.sin(wd * t))


def Blow(k: float) -> TestParams:
    """y' = k y² (``p.p = [k]``)."""
    return params(k)


@njit(cache=True)
def blow_rhs(t, y, p, out):
    """y' = k y², y(0) = 1: blows up at t = 1/k."""
    out[0] = p.p[0] * y[0] * y[0]


@njit(cache=True)
def no_observe(t, y, p, acc):
    pass
