"""Explicit Runge-Kutta methods: classical RK4 (fixed step) and Dormand-Prince 5(4) ("ode45").

Both follow the contract of :mod:`hpcrail.integrators.contract`.  Sources: classical RK4 and the
Dormand & Prince (1980) 5(4) pair with its 4th-order continuous extension as given by Hairer,
Nørsett & Wanner, *Solving ODEs I*, §II.5-II.6 (the coefficients of scipy's ``RK45``); paper 004
(Yu et al. 2022) uses both methods (§5, "RK4", "ode45").
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.contract import (
    DONE, MAX_STEPS, NON_FINITE, RUNNING, SET_HMAX, SET_HMIN, SET_MAX_STEPS, SET_RTOL, SET_SAFETY,
    SET_STEP, ST_NFEV, ST_REJECTED, ST_STEPS, STEP_UNDERFLOW, TS_F0, TS_FVALID, TS_H, TS_T,
)


def explicit_state_size(n: int) -> int:
    """Length of ``tstate`` for the explicit methods: t, h, f-valid flag and f(t, y)."""
    return 3 + n


@njit(inline="always", **JIT)
def _hermite_samples(t, h, tn, y0, f0, y1, f1, t_out, Y_out, iout):
    """Write every sample ``t_out[iout] <= tn`` (the step's end, ``t + h`` up to rounding) by cubic
    Hermite interpolation on [t, t+h]."""
    n = y0.size
    k = iout[0]
    nout = t_out.size
    while k < nout and t_out[k] <= tn:
        th = (t_out[k] - t) / h
        h00 = (1.0 + 2.0 * th) * (1.0 - th) ** 2
        h10 = th * (1.0 - th) ** 2
        h01 = th * th * (3.0 - 2.0 * th)
        h11 = th * th * (th - 1.0)
        for i in range(n):
            Y_out[k, i] = h00 * y0[i] + h10 * h * f0[i] + h01 * y1[i] + h11 * h * f1[i]
        k += 1
    iout[0] = k


@njit(inline="always", **JIT)
def _samples_at_t(t, y, t_out, Y_out, iout):
    """Write the samples that fall exactly at (or, by round-off, before) the current time."""
    k = iout[0]
    while k < t_out.size and t_out[k] <= t:
        for i in range(y.size):
            Y_out[k, i] = y[i]
        k += 1
    iout[0] = k


@njit(**JIT)
def rk4(rhs, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats, settings, atol):
    """Classical 4th-order Runge-Kutta with fixed step ``settings[0]`` [s].

    Dense output: cubic Hermite (4th order) from y, f at both step ends, so samples need not lie on
    the step grid and cost no extra RHS evaluations.  Only the last step is shortened, to land on
    ``t_final``.  ``atol``/``rtol`` are ignored.  Returns a status code (see contract).
    """
    n = y.size
    h = settings[SET_STEP]
    max_steps = settings[SET_MAX_STEPS]
    t = tstate[TS_T]
    f0 = tstate[TS_F0:TS_F0 + n]
    if tstate[TS_FVALID] == 0.0:
        rhs(t, y, params, f0)
        stats[ST_NFEV] += 1
        tstate[TS_FVALID] = 1.0
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    tmp = np.empty(n)
    y1 = np.empty(n)
    f1 = np.empty(n)
    status = RUNNING
    while True:
        _samples_at_t(t, y, t_out, Y_out, iout)
        if t_final - t <= 1e-12 * max(1.0, abs(t_final)):
            status = DONE
            break
        if t >= t_pause:
            break
        if stats[ST_STEPS] + stats[ST_REJECTED] >= max_steps:
            status = MAX_STEPS
            break
        hs = h
        tn = t + hs
        if tn > t_final or t_final - tn <= max(1e-9 * h, 1e-12 * max(1.0, abs(t_final))):
            hs = t_final - t
            tn = t_final  # land exactly on the end (a sample there must not be lost to rounding)
        for i in range(n):
            tmp[i] = y[i] + 0.5 * hs * f0[i]
        rhs(t + 0.5 * hs, tmp, params, k2)
        for i in range(n):
            tmp[i] = y[i] + 0.5 * hs * k2[i]
        rhs(t + 0.5 * hs, tmp, params, k3)
        for i in range(n):
            tmp[i] = y[i] + hs * k3[i]
        rhs(t + hs, tmp, params, k4)
        finite = True
        for i in range(n):
            y1[i] = y[i] + hs * (f0[i] + 2.0 * (k2[i] + k3[i]) + k4[i]) / 6.0
        s = 0.0
        for i in range(n):
            s += y1[i]
        if not math.isfinite(s):
            finite = False
        if finite:
            rhs(tn, y1, params, f1)
            s = 0.0
            for i in range(n):
                s += f1[i]
            finite = math.isfinite(s)
        stats[ST_NFEV] += 4
        if not finite:
            status = NON_FINITE
            break
        _hermite_samples(t, hs, tn, y, f0, y1, f1, t_out, Y_out, iout)
        for i in range(n):
            y[i] = y1[i]
            f0[i] = f1[i]
        t = tn
        stats[ST_STEPS] += 1
        observe(t, y, params, acc)
    tstate[TS_T] = t
    tstate[TS_H] = h
    return status


# ---- Dormand-Prince 5(4) coefficients (Hairer, Nørsett & Wanner, Table II.5.2) -----------------
_C2, _C3, _C4, _C5 = 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0
_A21 = 1.0 / 5.0
_A31, _A32 = 3.0 / 40.0, 9.0 / 40.0
_A41, _A42, _A43 = 44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0
_A51, _A52, _A53, _A54 = 19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0
_A61, _A62, _A63, _A64, _A65 = 9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0
_B1, _B3, _B4, _B5, _B6 = 35.0 / 384.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0
# error estimate coefficients (5th-order minus embedded 4th-order weights)
_E1, _E3, _E4, _E5, _E6, _E7 = (71.0 / 57600.0, -71.0 / 16695.0, 71.0 / 1920.0, -17253.0 / 339200.0,
                                22.0 / 525.0, -1.0 / 40.0)
# continuous extension: y(t + th*h) = y + h * sum_s K_s * (P[s,0] th + P[s,1] th^2 + P[s,2] th^3 + P[s,3] th^4)
_P = np.array([
    [1.0, -8048581381.0 / 2820520608.0, 8663915743.0 / 2820520608.0, -12715105075.0 / 11282082432.0],
    [0.0, 0.0, 0.0, 0.0],
    [0.0, 131558114200.0 / 32700410799.0, -68118460800.0 / 10900136933.0, 87487479700.0 / 32700410799.0],
    [0.0, -1754552775.0 / 470086768.0, 14199869525.0 / 1410260304.0, -10690763975.0 / 1880347072.0],
    [0.0, 127303824393.0 / 49829197408.0, -318862633887.0 / 49829197408.0, 701980252875.0 / 199316789632.0],
    [0.0, -282668133.0 / 205662961.0, 2019193451.0 / 616988883.0, -1453857185.0 / 822651844.0],
    [0.0, 40617522.0 / 29380423.0, -110615467.0 / 29380423.0, 69997945.0 / 29380423.0],
])


@njit(inline="always", **JIT)
def _initial_step(rhs, params, t, y, f0, direction_end, rtol, atol, order, stats):
    """Hairer's starting-step heuristic (HNW I, §II.4) for an explicit method of the given order."""
    n = y.size
    d0 = 0.0
    d1 = 0.0
    for i in range(n):
        sc = atol[i] + rtol * abs(y[i])
        d0 += (y[i] / sc) ** 2
        d1 += (f0[i] / sc) ** 2
    d0 = math.sqrt(d0 / n)
    d1 = math.sqrt(d1 / n)
    if d0 < 1e-5 or d1 < 1e-5:
        h0 = 1e-6
    else:
        h0 = 0.01 * d0 / d1
    h0 = min(h0, direction_end)
    y1 = np.empty(n)
    f1 = np.empty(n)
    for i in range(n):
        y1[i] = y[i] + h0 * f0[i]
    rhs(t + h0, y1, params, f1)
    stats[ST_NFEV] += 1
    d2 = 0.0
    for i in range(n):
        sc = atol[i] + rtol * abs(y[i])
        d2 += ((f1[i] - f0[i]) / sc) ** 2
    d2 = math.sqrt(d2 / n) / h0
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1.0 / (order + 1.0))
    return min(100.0 * h0, h1, direction_end)


@njit(**JIT)
def dopri5(rhs, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats, settings, atol):
    """Dormand-Prince 5(4) with local extrapolation, FSAL and 4th-order dense output ("ode45").

    Step control on the RMS norm of the embedded error scaled by ``atol[i] + rtol*max(|y|, |y_new|)``
    with factor ``safety * err**(-1/5)`` limited to [0.2, 10] (no growth right after a rejection).
    ``settings[0]`` is the initial step (0 = automatic), ``settings[2]`` the maximum step.
    """
    n = y.size
    rtol = settings[SET_RTOL]
    hmin = settings[SET_HMIN]
    hmax = settings[SET_HMAX] if settings[SET_HMAX] > 0.0 else 1e300
    safety = settings[SET_SAFETY] if settings[SET_SAFETY] > 0.0 else 0.9
    max_steps = settings[SET_MAX_STEPS]
    t = tstate[TS_T]
    f0 = tstate[TS_F0:TS_F0 + n]
    if tstate[TS_FVALID] == 0.0:
        rhs(t, y, params, f0)
        stats[ST_NFEV] += 1
        tstate[TS_FVALID] = 1.0
    h = tstate[TS_H]
    if h <= 0.0:
        h = settings[SET_STEP]
        if h <= 0.0:
            h = _initial_step(rhs, params, t, y, f0, t_final - t, rtol, atol, 5.0, stats)
    h = min(h, hmax)
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    k5 = np.empty(n)
    k6 = np.empty(n)
    k7 = np.empty(n)
    tmp = np.empty(n)
    y1 = np.empty(n)
    P = _P
    status = RUNNING
    rejected_last = False
    while True:
        _samples_at_t(t, y, t_out, Y_out, iout)
        if t_final - t <= 1e-12 * max(1.0, abs(t_final)):
            status = DONE
            break
        if t >= t_pause:
            break
        if stats[ST_STEPS] + stats[ST_REJECTED] >= max_steps:
            status = MAX_STEPS
            break
        if h < max(hmin, 16.0 * 2.220446049250313e-16 * abs(t)):
            status = STEP_UNDERFLOW
            break
        hs = h
        tn = t + hs
        if tn >= t_final or t_final - tn <= 1e-12 * max(1.0, abs(t_final)):
            hs = t_final - t
            tn = t_final  # land exactly on the end
        for i in range(n):
            tmp[i] = y[i] + hs * _A21 * f0[i]
        rhs(t + _C2 * hs, tmp, params, k2)
        for i in range(n):
            tmp[i] = y[i] + hs * (_A31 * f0[i] + _A32 * k2[i])
        rhs(t + _C3 * hs, tmp, params, k3)
        for i in range(n):
            tmp[i] = y[i] + hs * (_A41 * f0[i] + _A42 * k2[i] + _A43 * k3[i])
        rhs(t + _C4 * hs, tmp, params, k4)
        for i in range(n):
            tmp[i] = y[i] + hs * (_A51 * f0[i] + _A52 * k2[i] + _A53 * k3[i] + _A54 * k4[i])
        rhs(t + _C5 * hs, tmp, params, k5)
        for i in range(n):
            tmp[i] = y[i] + hs * (_A61 * f0[i] + _A62 * k2[i] + _A63 * k3[i] + _A64 * k4[i] + _A65 * k5[i])
        rhs(t + hs, tmp, params, k6)
        for i in range(n):
            y1[i] = y[i] + hs * (_B1 * f0[i] + _B3 * k3[i] + _B4 * k4[i] + _B5 * k5[i] + _B6 * k6[i])
        rhs(tn, y1, params, k7)
        stats[ST_NFEV] += 6
        err = 0.0
        for i in range(n):
            e = hs * (_E1 * f0[i] + _E3 * k3[i] + _E4 * k4[i] + _E5 * k5[i] + _E6 * k6[i] + _E7 * k7[i])
            sc = atol[i] + rtol * max(abs(y[i]), abs(y1[i]))
            err += (e / sc) ** 2
        err = math.sqrt(err / n)
        if not math.isfinite(err):
            # a non-finite trial state: shrink hard; give up only at the underflow limit
            stats[ST_REJECTED] += 1
            h = 0.1 * hs
            rejected_last = True
            if h < max(hmin, 16.0 * 2.220446049250313e-16 * abs(t)):
                status = NON_FINITE
                break
            continue
        if err <= 1.0:
            if err == 0.0:
                fac = 10.0
            else:
                fac = min(10.0, safety * err ** -0.2)
            if rejected_last:
                fac = min(1.0, fac)
            # dense output for samples in (t, t+hs]
            k = iout[0]
            while k < t_out.size and t_out[k] <= tn:
                th = (t_out[k] - t) / hs
                b0 = th * (P[0, 0] + th * (P[0, 1] + th * (P[0, 2] + th * P[0, 3])))
                b2 = th * (P[2, 0] + th * (P[2, 1] + th * (P[2, 2] + th * P[2, 3])))
                b3 = th * (P[3, 0] + th * (P[3, 1] + th * (P[3, 2] + th * P[3, 3])))
                b4 = th * (P[4, 0] + th * (P[4, 1] + th * (P[4, 2] + th * P[4, 3])))
                b5 = th * (P[5, 0] + th * (P[5, 1] + th * (P[5, 2] + th * P[5, 3])))
                b6 = th * (P[6, 0] + th * (P[6, 1] + th * (P[6, 2] + th * P[6, 3])))
                for i in range(n):
                    Y_out[k, i] = y[i] + hs * (b0 * f0[i] + b2 * k3[i] + b3 * k4[i] + b4 * k5[i]
                                               + b5 * k6[i] + b6 * k7[i])
                k += 1
            iout[0] = k
            for i in range(n):
                y[i] = y1[i]
                f0[i] = k7[i]
            t = tn
            stats[ST_STEPS] += 1
            observe(t, y, params, acc)
            rejected_last = False
            h = min(hmax, hs * fac)
        else:
            stats[ST_REJECTED] += 1
            h = hs * max(0.2, safety * err ** -0.2)
            rejected_last = True
    tstate[TS_T] = t
    tstate[TS_H] = h
    return status
