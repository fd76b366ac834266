"""Explicit methods: classical RK4 (fixed step), Adams-Bashforth-Moulton 4 (fixed step, PECE) and
Dormand-Prince 5(4) ("ode45").

All follow the contract of :mod:`hpcrail.integrators.contract` (sampled output by dense output,
events, statistics, status as data).  They solve y' = f(t, y): a mass matrix other than the
identity is rejected by the driver.

Sources: classical RK4 and the Dormand & Prince (1980) 5(4) pair with its 4th-order continuous
extension as given by Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.5-II.6 (the coefficients of
scipy's ``RK45``); ABM4: HNW I §III.1 (Adams methods, predictor-corrector PECE); Yu et al. 2022
(Yu et al. 2022) eq (32) and §5 uses RK4, ABM, "ode45" and "ode15s".
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.collectives import OW_BHI, OW_BLO, OW_P, all_finite, all_sum, block_range, copy_own, seg
from hpcrail.integrators.common import (
    dense_needed, event_work, finish_step, hermite_coeffs, initial_step, STEP_ON, loop_gate, step_end, step_factor,
)
from hpcrail.integrators.contract import (
    EVENT_STOP, NON_FINITE, RUNNING, SET_HMAX, SET_HMIN, SET_MAX_STEPS, SET_OPT0, SET_OBS_DT, SET_SAFETY, SET_STEP,
    ST_NFEV, ST_REJECTED, STEP_UNDERFLOW, TS_F0, TS_FVALID, TS_H, TS_T,
)
from hpcrail.integrators.linalg import SP_NEV


def explicit_state_size(n: int, spec=None, sspec=None, P: int = 1) -> int:
    """Length of ``tstate`` for RK4 and DOPRI5: t, h, init flag, f(t, y), event values."""
    nev = 0 if spec is None else int(spec[SP_NEV])
    return 3 + n + nev


def abm_state_size(n: int, spec=None, sspec=None, P: int = 1) -> int:
    """Length of ``tstate`` for ABM4: t, h, init flag, f_n, f_{n-1..n-3}, history count, events."""
    nev = 0 if spec is None else int(spec[SP_NEV])
    return 4 + 4 * n + nev


@njit(**JIT)
def _end_step_hermite(events, observe, params, spec, obs_dt, t, hs, tn, y, f0, y1, f1, g0, g1, Q, t_out, Y_out, iout,
                      ev_out, acc, stats, ytmp, gtmp, roots, own):
    """Accept the step [t, t+hs] of a method with cubic Hermite dense output (see
    :func:`~hpcrail.integrators.common.finish_step`); on success ``f0`` takes ``f1``."""
    if dense_needed(spec, obs_dt, t, tn, t_out, iout):
        hermite_coeffs(hs, y, f0, y1, f1, Q, own)
    th = finish_step(events, observe, params, spec, obs_dt, t, hs, tn, y, y1, g0, g1, Q, 3, t_out, Y_out, iout, ev_out,
                     acc, stats, ytmp, gtmp, roots, own)
    if th > 1.0:
        copy_own(f0, f1, own)
    return th


@njit(inline="always", **JIT)
def _rk4_step(rhs, params, t, hs, y, f0, k2, k3, k4, tmp, y1, own):
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            tmp[i] = y[i] + 0.5 * hs * f0[i]
    rhs(t + 0.5 * hs, tmp, params, k2)
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            tmp[i] = y[i] + 0.5 * hs * k2[i]
    rhs(t + 0.5 * hs, tmp, params, k3)
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            tmp[i] = y[i] + hs * k3[i]
    rhs(t + hs, tmp, params, k4)
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            y1[i] = y[i] + hs * (f0[i] + 2.0 * (k2[i] + k3[i]) + k4[i]) / 6.0


@njit(inline="always", **JIT)
def _finite_step(rhs, params, tn, y1, f1, sync, vb):
    """f1 ← f(tn, y1) if y1 is finite; True if both are (collective: every worker takes the same answer)."""
    finite = all_finite(sync, vb, y1)
    if finite:
        rhs(tn, y1, params, f1)
        finite = all_finite(sync, vb, f1)
    return finite


@njit(**JIT)
def rk4(rhs, jac, events, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats,
        settings, atol, rtolv, mass, spec, ev_out, sync, vb):
    """Classical 4th-order Runge-Kutta with fixed step ``settings[0]`` [s].

    Dense output: cubic Hermite (4th order) from y, f at both step ends, so samples need not lie on
    the step grid and cost no extra RHS evaluations.  Only the last step is shortened, to land on
    ``t_final``.  ``atol``/``rtol`` are ignored.  Returns a status code (see contract).
    """
    n = y.size
    own = vb.own
    nev = spec[SP_NEV]
    h = settings[SET_STEP]
    max_steps = settings[SET_MAX_STEPS]
    obs_dt = settings[SET_OBS_DT]
    t = tstate[TS_T]
    f0 = tstate[TS_F0:TS_F0 + n]
    g0 = tstate[TS_F0 + n:TS_F0 + n + nev]
    if tstate[TS_FVALID] == 0.0:
        rhs(t, y, params, f0)
        stats[ST_NFEV] += 1
        if nev > 0:
            events(t, y, params, g0)
        tstate[TS_FVALID] = 1.0
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    tmp = np.empty(n)
    y1 = np.empty(n)
    f1 = np.empty(n)
    Q = np.empty((4, n))
    g1, gtmp, roots = event_work(nev)
    status = RUNNING
    while True:
        status = loop_gate(t, y, t_out, Y_out, iout, t_pause, t_final, stats, max_steps, own)
        if status != STEP_ON:
            break
        hs, tn = step_end(t, h, t_final, True)
        _rk4_step(rhs, params, t, hs, y, f0, k2, k3, k4, tmp, y1, own)
        finite = _finite_step(rhs, params, tn, y1, f1, sync, vb)
        stats[ST_NFEV] += 4
        if not finite:
            status = NON_FINITE
            break
        th = _end_step_hermite(events, observe, params, spec, obs_dt, t, hs, tn, y, f0, y1, f1, g0, g1, Q, t_out, Y_out,
                               iout, ev_out, acc, stats, tmp, gtmp, roots, own)
        if th <= 1.0:
            t = t + th * hs
            tstate[TS_FVALID] = 0.0
            status = EVENT_STOP
            break
        t = tn
    tstate[TS_T] = t
    tstate[TS_H] = h
    return status


@njit(**JIT)
def abm4(rhs, jac, events, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats,
         settings, atol, rtolv, mass, spec, ev_out, sync, vb):
    """Adams-Bashforth-Moulton 4th order, fixed step ``settings[0]`` [s], PE(CE)^m (Yu et al. 2022 eq 32).

    Predictor (Adams-Bashforth 4): y* = y_n + h/24 (55 f_n − 59 f_{n−1} + 37 f_{n−2} − 9 f_{n−3});
    corrector (Adams-Moulton 4), applied ``m = settings[6]`` times (default 1, i.e. PECE):
    y_{n+1} = y_n + h/24 (9 f(t_{n+1}, y*) + 19 f_n − 5 f_{n−1} + f_{n−2}).  (The corrector printed
    in Yu et al. 2022 eq 32 lost its last term in extraction; the coefficients must sum to 24.)
    Start-up: three RK4 steps; the final step, if shortened to land on ``t_final``, is an RK4
    step too.  Cost: 1 + m RHS evaluations per step.  Dense output: cubic Hermite.
    """
    n = y.size
    own = vb.own
    nev = spec[SP_NEV]
    h = settings[SET_STEP]
    m_corr = int(settings[SET_OPT0]) if settings[SET_OPT0] > 0.0 else 1
    max_steps = settings[SET_MAX_STEPS]
    obs_dt = settings[SET_OBS_DT]
    t = tstate[TS_T]
    f0 = tstate[TS_F0:TS_F0 + n]
    fm1 = tstate[TS_F0 + n:TS_F0 + 2 * n]
    fm2 = tstate[TS_F0 + 2 * n:TS_F0 + 3 * n]
    fm3 = tstate[TS_F0 + 3 * n:TS_F0 + 4 * n]
    ih = TS_F0 + 4 * n
    g0 = tstate[ih + 1:ih + 1 + nev]
    if tstate[TS_FVALID] == 0.0:
        rhs(t, y, params, f0)
        stats[ST_NFEV] += 1
        if nev > 0:
            events(t, y, params, g0)
        tstate[ih] = 0.0
        tstate[TS_FVALID] = 1.0
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    tmp = np.empty(n)
    y1 = np.empty(n)
    f1 = np.empty(n)
    Q = np.empty((4, n))
    g1, gtmp, roots = event_work(nev)
    c24 = 1.0 / 24.0
    status = RUNNING
    while True:
        status = loop_gate(t, y, t_out, Y_out, iout, t_pause, t_final, stats, max_steps, own)
        if status != STEP_ON:
            break
        hs, tn = step_end(t, h, t_final, True)
        nhist = int(tstate[ih])
        if nhist < 3 or abs(hs - h) > 1e-9 * h:
            _rk4_step(rhs, params, t, hs, y, f0, k2, k3, k4, tmp, y1, own)
            stats[ST_NFEV] += 3
        else:
            for s in range(2):
                a, z = seg(own, s)
                for i in range(a, z):
                    y1[i] = y[i] + h * c24 * (55.0 * f0[i] - 59.0 * fm1[i] + 37.0 * fm2[i] - 9.0 * fm3[i])
            for _ in range(m_corr):
                rhs(t + h, y1, params, f1)
                stats[ST_NFEV] += 1
                for s in range(2):
                    a, z = seg(own, s)
                    for i in range(a, z):
                        y1[i] = y[i] + h * c24 * (9.0 * f1[i] + 19.0 * f0[i] - 5.0 * fm1[i] + fm2[i])
        finite = _finite_step(rhs, params, tn, y1, f1, sync, vb)
        stats[ST_NFEV] += 1
        if not finite:
            status = NON_FINITE
            break
        # shift the history before f0 is overwritten by the accepted step
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                fm3[i] = fm2[i]
                fm2[i] = fm1[i]
                fm1[i] = f0[i]
        th = _end_step_hermite(events, observe, params, spec, obs_dt, t, hs, tn, y, f0, y1, f1, g0, g1, Q, t_out, Y_out,
                               iout, ev_out, acc, stats, tmp, gtmp, roots, own)
        tstate[ih] = min(nhist + 1, 3)
        if th <= 1.0:
            t = t + th * hs
            tstate[TS_FVALID] = 0.0
            status = EVENT_STOP
            break
        t = tn
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




@njit(**JIT)
def _dopri_dense(hs, y, f0, k3, k4, k5, k6, k7, Q, own):
    """Continuous extension of DOPRI5 as a quartic in θ into ``Q[0:5]`` (this worker's states)."""
    P = _P
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            Q[0, i] = y[i]
            for m in range(4):
                Q[m + 1, i] = hs * (P[0, m] * f0[i] + P[2, m] * k3[i] + P[3, m] * k4[i] + P[4, m] * k5[i]
                                    + P[5, m] * k6[i] + P[6, m] * k7[i])


@njit(inline="always", **JIT)
def _dopri_err(hs, y, y1, f0, k3, k4, k5, k6, k7, atol, rtolv, a, z):
    """Σ over [a, z) of the squared scaled embedded error (one accumulator, the serial order)."""
    err = 0.0
    for i in range(a, z):
        e = hs * (_E1 * f0[i] + _E3 * k3[i] + _E4 * k4[i] + _E5 * k5[i] + _E6 * k6[i] + _E7 * k7[i])
        sc = atol[i] + rtolv[i] * max(abs(y[i]), abs(y1[i]))
        err += (e / sc) ** 2
    return err


@njit(**JIT)
def dopri5(rhs, jac, events, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats,
           settings, atol, rtolv, mass, spec, ev_out, sync, vb):
    """Dormand-Prince 5(4) with local extrapolation, FSAL and 4th-order dense output ("ode45").

    Step control on the RMS norm of the embedded error scaled by ``atol[i] + rtol*max(|y|, |y_new|)``
    with factor ``safety * err**(-1/5)`` limited to [0.2, 10] (no growth right after a rejection).
    ``settings[0]`` is the initial step (0 = automatic), ``settings[2]`` the maximum step.
    """
    n = y.size
    own = vb.own
    P = own[OW_P]
    nev = spec[SP_NEV]
    hmin = settings[SET_HMIN]
    hmax = settings[SET_HMAX] if settings[SET_HMAX] > 0.0 else 1e300
    safety = settings[SET_SAFETY] if settings[SET_SAFETY] > 0.0 else 0.9
    max_steps = settings[SET_MAX_STEPS]
    obs_dt = settings[SET_OBS_DT]
    t = tstate[TS_T]
    f0 = tstate[TS_F0:TS_F0 + n]
    g0 = tstate[TS_F0 + n:TS_F0 + n + nev]
    if tstate[TS_FVALID] == 0.0:
        rhs(t, y, params, f0)
        stats[ST_NFEV] += 1
        if nev > 0:
            events(t, y, params, g0)
        tstate[TS_FVALID] = 1.0
    h = tstate[TS_H]
    if h <= 0.0:
        h = settings[SET_STEP]
        if h <= 0.0:
            h = initial_step(rhs, params, t, y, f0, t_final - t, rtolv, atol, 5.0, mass, stats, sync, vb)
    h = min(h, hmax)
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    k5 = np.empty(n)
    k6 = np.empty(n)
    k7 = np.empty(n)
    tmp = np.empty(n)
    y1 = np.empty(n)
    Q = np.empty((5, n))
    part = np.zeros((P, 1))
    gpart = np.zeros(1)
    g1, gtmp, roots = event_work(nev)
    status = RUNNING
    rejected_last = False
    while True:
        status = loop_gate(t, y, t_out, Y_out, iout, t_pause, t_final, stats, max_steps, own)
        if status != STEP_ON:
            break
        if h < max(hmin, 16.0 * 2.220446049250313e-16 * abs(t)):
            status = STEP_UNDERFLOW
            break
        hs, tn = step_end(t, h, t_final, False)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                tmp[i] = y[i] + hs * _A21 * f0[i]
        rhs(t + _C2 * hs, tmp, params, k2)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                tmp[i] = y[i] + hs * (_A31 * f0[i] + _A32 * k2[i])
        rhs(t + _C3 * hs, tmp, params, k3)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                tmp[i] = y[i] + hs * (_A41 * f0[i] + _A42 * k2[i] + _A43 * k3[i])
        rhs(t + _C4 * hs, tmp, params, k4)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                tmp[i] = y[i] + hs * (_A51 * f0[i] + _A52 * k2[i] + _A53 * k3[i] + _A54 * k4[i])
        rhs(t + _C5 * hs, tmp, params, k5)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                tmp[i] = y[i] + hs * (_A61 * f0[i] + _A62 * k2[i] + _A63 * k3[i] + _A64 * k4[i] + _A65 * k5[i])
        rhs(t + hs, tmp, params, k6)
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                y1[i] = y[i] + hs * (_B1 * f0[i] + _B3 * k3[i] + _B4 * k4[i] + _B5 * k5[i] + _B6 * k6[i])
        rhs(tn, y1, params, k7)
        stats[ST_NFEV] += 6
        for b in range(own[OW_BLO], own[OW_BHI]):
            a, z = block_range(own, b)
            part[b, 0] = _dopri_err(hs, y, y1, f0, k3, k4, k5, k6, k7, atol, rtolv, a, z)
        a, z = seg(own, 1)
        gpart[0] = _dopri_err(hs, y, y1, f0, k3, k4, k5, k6, k7, atol, rtolv, a, z)
        err = math.sqrt(all_sum(sync, vb, part, gpart)[0] / n)
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
            fac = step_factor(err, 0.2, safety, 0.2, 10.0, rejected_last, hs, 0.0, 0.0, False)
            if dense_needed(spec, obs_dt, t, tn, t_out, iout):
                _dopri_dense(hs, y, f0, k3, k4, k5, k6, k7, Q, own)
            th = finish_step(events, observe, params, spec, obs_dt, t, hs, tn, y, y1, g0, g1, Q, 4, t_out, Y_out, iout,
                             ev_out, acc, stats, tmp, gtmp, roots, own)
            if th <= 1.0:
                t = t + th * hs
                tstate[TS_FVALID] = 0.0
                status = EVENT_STOP
                break
            copy_own(f0, k7, own)
            t = tn
            rejected_last = False
            h = min(hmax, hs * fac)
        else:
            stats[ST_REJECTED] += 1
            h = hs * step_factor(err, 0.2, safety, 0.2, 10.0, False, hs, 0.0, 0.0, False)
            rejected_last = True
    tstate[TS_T] = t
    tstate[TS_H] = h
    return status
