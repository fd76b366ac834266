"""Radau IIA of order 5 (3 stages, L-stable, stiffly accurate) in numba.

The collocation system for Z_i = Y_i − y_n (i = 1..3, c = ((4−√6)/10, (4+√6)/10, 1))

    M Z = h (A ⊗ I) F(Z)

is solved by simplified Newton with the transformation T⁻¹AT = diag(μ_r, [[α, −β], [β, α]])
(Hairer & Wanner): one real system (μ_r/h·M − J) and one complex system ((α + iβ)/h·M − J) per
iteration, both with the bordered-band LU of :mod:`hpcrail.integrators.linalg` (complex
arithmetic for the second).  Error estimate (M/(γ₀h) − J)⁻¹(f(t_n, y_n) + M·Σ e_i Z_i/h), refined
once after a rejection; predictive (Gustafsson) step control with exponent 1/4; the step is kept
(no refactorisation) when the proposed increase is below 20 %; the Jacobian is re-evaluated after a
step whose Newton iteration needed more than two iterations at a rate above 1e-3.  Newton starts
from the extrapolated collocation polynomial of the previous step.  Dense output: the collocation
polynomial (cubic).  Index-1 DAEs with a diagonal, singular M.

Sources: Hairer & Wanner, *Solving ODEs II*, §IV.5 (Radau IIA), §IV.8 (implementation, RADAU5),
§VI.1 (DAEs); scipy ``integrate._ivp.radau`` (constants, controller and Newton tolerance — an
hpcrail ``rtol`` means the same as scipy's).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.common import (
    EPS, event_work, failed_step_status, finish_step, initial_step, loop_gate, rms_norm, step_end, step_factor,
    STEP_ON, step_settings,
)
from hpcrail.integrators.contract import (
    EVENT_STOP, RUNNING, SET_NEWTON_TOL, SET_RTOL, SET_STEP, ST_NEWTON, ST_NFAIL, ST_NFEV, ST_REJECTED, TS_F0,
    TS_FVALID, TS_H, TS_T,
)
from hpcrail.integrators.linalg import (
    SP_HAS_JAC, SP_NEV, SP_NNZ, lin_size, solve_state_order, spec_lin_size_py,
)
from hpcrail.integrators.newton import (
    default_newton_tol, evaluate_jacobian, factorise_one_block as factorise, newton_settings,
)

S6 = 6.0 ** 0.5
_C = np.array([(4.0 - S6) / 10.0, (4.0 + S6) / 10.0, 1.0])
_E = np.array([-13.0 - 7.0 * S6, -13.0 + 7.0 * S6, -1.0]) / 3.0
MU_REAL = 3.0 + 3.0 ** (2.0 / 3.0) - 3.0 ** (1.0 / 3.0)
MU_COMPLEX = complex(3.0 + 0.5 * (3.0 ** (1.0 / 3.0) - 3.0 ** (2.0 / 3.0)), -0.5 * (3.0 ** (5.0 / 6.0) + 3.0 ** (7.0 / 6.0)))
_T = np.array([
    [0.09443876248897524, -0.14125529502095421, 0.03002919410514742],
    [0.25021312296533332, 0.20412935229379994, -0.38294211275726192],
    [1.0, 1.0, 0.0]])
_TI = np.array([
    [4.17871859155190428, 0.32768282076106237, 0.52337644549944951],
    [-4.17871859155190428, -0.32768282076106237, 0.47662355450055044],
    [0.50287263494578682, -2.57192694985560522, 0.59603920482822492]])
_P = np.array([
    [13.0 / 3.0 + 7.0 * S6 / 3.0, -23.0 / 3.0 - 22.0 * S6 / 3.0, 10.0 / 3.0 + 5.0 * S6],
    [13.0 / 3.0 - 7.0 * S6 / 3.0, -23.0 / 3.0 + 22.0 * S6 / 3.0, 10.0 / 3.0 - 5.0 * S6],
    [1.0 / 3.0, -8.0 / 3.0, 10.0 / 3.0]])

_N_SCAL = 12
_SC_HOLD, _SC_EOLD, _SC_LU_H, _SC_CURJAC, _SC_ETA, _SC_RECOMP, _SC_HAVESOL, _SC_TOLD, _SC_HPREV, _SC_JVALID = \
    range(10)


def radau_state_size(n: int, spec, sspec=None, P: int = 1) -> int:
    """t, h, init, f (n), events, scalars, previous dense polynomial (4n), J, real LU, complex LU
    (2L), real and complex pivots."""
    L = spec_lin_size_py(spec)
    return 3 + n + int(spec[SP_NEV]) + _N_SCAL + 4 * n + 4 * L + 2 * n


@njit(**JIT)
def _collocation(rhs, jac, params, t, y, h, Z, W, F, mass, J, LUr, pivr, LUc, pivc, spec, scale, tol, maxit, eta,
                 fr, fc, tmp, ctmp, vals, ytmp2, ftmp, max_updates, stats, vb):
    """Simplified Newton for the collocation system; Z (3 × n) in/out from its predictor.  When it
    stalls, up to ``max_updates`` times, the Jacobian is re-evaluated at the end-stage iterate and
    both matrices refactorised (see :func:`hpcrail.integrators.newton.newton_solve`).
    Returns (converged, iterations, eta, nonfinite, updates)."""
    n = y.size
    mr = MU_REAL / h
    mc = MU_COMPLEX / h
    for s in range(3):
        for i in range(n):
            W[s, i] = _TI[s, 0] * Z[0, i] + _TI[s, 1] * Z[1, i] + _TI[s, 2] * Z[2, i]
    eta = max(eta, EPS) ** 0.8
    nrm_old = 0.0
    ytmp = tmp
    upd = 0
    kk = 0
    it = 0
    limit = maxit
    fresh_f = True
    while it < limit:
        if fresh_f:
            it += 1
            for s in range(3):
                for i in range(n):
                    ytmp[i] = y[i] + Z[s, i]
                rhs(t + _C[s] * h, ytmp, params, F[s])
            stats[ST_NFEV] += 3
            fin = 0.0
            for s in range(3):
                for i in range(n):
                    fin += F[s, i] * 0.0
            if fin != 0.0:
                return False, it, eta, True, upd
        fresh_f = True
        for i in range(n):
            fr[i] = _TI[0, 0] * F[0, i] + _TI[0, 1] * F[1, i] + _TI[0, 2] * F[2, i] - mr * mass[i] * W[0, i]
            fc[i] = (complex(_TI[1, 0] * F[0, i] + _TI[1, 1] * F[1, i] + _TI[1, 2] * F[2, i],
                             _TI[2, 0] * F[0, i] + _TI[2, 1] * F[1, i] + _TI[2, 2] * F[2, i])
                     - mc * mass[i] * complex(W[1, i], W[2, i]))
        solve_state_order(LUr, spec, pivr, fr, tmp)
        solve_state_order(LUc, spec, pivc, fc, ctmp)
        stats[ST_NEWTON] += 1
        s2 = 0.0
        for i in range(n):
            a = fr[i] / scale[i]
            b = fc[i].real / scale[i]
            c = fc[i].imag / scale[i]
            s2 += a * a + b * b + c * c
        nrm = math.sqrt(s2 / (3 * n))
        if not math.isfinite(nrm):
            return False, it, eta, True, upd
        if kk > 0:
            theta = nrm / nrm_old
            stalled = theta >= 0.99
            if not stalled:
                eta = theta / (1.0 - theta)
                stalled = theta ** (limit - it) * eta * nrm > tol
            if stalled:
                if upd >= max_updates:
                    return False, it, eta, False, upd
                # Jacobian at the end-stage iterate (F[2] = f(t+h, y+Z[2])), refactorise, restart
                for i in range(n):
                    ytmp2[i] = y[i] + Z[2, i]
                evaluate_jacobian(rhs, jac, params, t + h, ytmp2, F[2], spec, J, vals, ytmp, ftmp, stats, vb)
                ok = factorise(J, LUr, mr, mass, spec, pivr, tmp, stats)
                ok2 = factorise(J, LUc, mc, mass, spec, pivc, ctmp, stats)
                upd += 1
                if not (ok and ok2):
                    return False, it, eta, True, upd
                limit = it + maxit
                kk = 0
                eta = 1.0
                nrm_old = 0.0
                fresh_f = False   # same iterate: redo the correction with the new matrices
                continue
        for i in range(n):
            W[0, i] += fr[i]
            W[1, i] += fc[i].real
            W[2, i] += fc[i].imag
        for s in range(3):
            for i in range(n):
                Z[s, i] = _T[s, 0] * W[0, i] + _T[s, 1] * W[1, i] + _T[s, 2] * W[2, i]
        if nrm == 0.0 or ((kk > 0 or upd == 0) and eta * nrm <= tol):
            return True, it, eta, False, upd
        nrm_old = max(nrm, EPS)
        kk += 1
    return False, it, eta, False, upd


@njit(**JIT)
def radau5(rhs, jac, events, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats,
           settings, atol, rtolv, mass, spec, ev_out, sync, vb):
    """Radau IIA order 5 (see the module docstring); ``settings[8:10]`` Newton tolerance and
    iterations (default 6)."""
    n = y.size
    nev = spec[SP_NEV]
    L = lin_size(spec)
    rtol = settings[SET_RTOL]
    hmin, hmax, max_steps, obs_dt = step_settings(settings)
    tol = default_newton_tol(rtol, settings[SET_NEWTON_TOL])
    maxit, max_upd = newton_settings(settings, 6)
    # ---- persistent state
    t = tstate[TS_T]
    f = tstate[TS_F0:TS_F0 + n]
    og = TS_F0 + n
    g0 = tstate[og:og + nev]
    osc = og + nev
    sc = tstate[osc:osc + _N_SCAL]
    oq = osc + _N_SCAL
    Qp = tstate[oq:oq + 4 * n].reshape((4, n))
    oj = oq + 4 * n
    J = tstate[oj:oj + L]
    LUr = tstate[oj + L:oj + 2 * L]
    LUc = tstate[oj + 2 * L:oj + 4 * L].view(np.complex128)
    op = oj + 4 * L
    pivr = tstate[op:op + n].view(np.int64)
    pivc = tstate[op + n:op + 2 * n].view(np.int64)
    # ---- work
    nnz = spec[SP_NNZ]
    vals = np.empty(max(nnz, 1))
    ytmp = np.empty(n)
    ftmp = np.empty(n)
    tmp = np.empty(n)
    ctmp = np.empty(n, np.complex128)
    fr = np.empty(n)
    fc = np.empty(n, np.complex128)
    scale = np.empty(n)
    err = np.empty(n)
    ynew = np.empty(n)
    Z = np.empty((3, n))
    W = np.empty((3, n))
    F = np.empty((3, n))
    Q = np.empty((4, n))
    g1, gtmp, roots = event_work(nev)
    if tstate[TS_FVALID] == 0.0:
        rhs(t, y, params, f)
        stats[ST_NFEV] += 1
        if nev > 0:
            events(t, y, params, g0)
        h0 = settings[SET_STEP]
        if h0 <= 0.0:
            h0 = initial_step(rhs, params, t, y, f, t_final - t, rtolv, atol, 3.0, mass, stats, sync, vb)
        tstate[TS_H] = min(h0, hmax)
        for k in range(_N_SCAL):
            sc[k] = 0.0
        sc[_SC_ETA] = 1.0
        tstate[TS_FVALID] = 1.0
    h = tstate[TS_H]
    status = RUNNING
    while True:
        status = loop_gate(t, y, t_out, Y_out, iout, t_pause, t_final, stats, max_steps, vb.own)
        if status != STEP_ON:
            break
        min_step = max(hmin, 10.0 * EPS * abs(t))
        h_old = sc[_SC_HOLD]
        err_old = sc[_SC_EOLD]
        if h > hmax:
            h = hmax
            h_old = 0.0
            err_old = 0.0
        elif h < min_step:
            h = min_step
            h_old = 0.0
            err_old = 0.0
        rejected = False
        accepted = False
        newton_failed = False
        nonfinite = False
        jac_fresh = False
        iters = 0
        err_norm = 0.0
        hs = h
        tn = t + h
        while not accepted:
            if h < min_step:
                break
            hs, tn = step_end(t, h, t_final, False)
            # predictor from the previous collocation polynomial
            if sc[_SC_HAVESOL] != 0.0:
                for s in range(3):
                    x = (t + hs * _C[s] - sc[_SC_TOLD]) / sc[_SC_HPREV]
                    for i in range(n):
                        v = Qp[3, i]
                        v = v * x + Qp[2, i]
                        v = v * x + Qp[1, i]
                        v = v * x + Qp[0, i]
                        Z[s, i] = v - y[i]
            else:
                for s in range(3):
                    for i in range(n):
                        Z[s, i] = 0.0
            for i in range(n):
                scale[i] = atol[i] + rtolv[i] * abs(y[i])
            if sc[_SC_JVALID] == 0.0:
                evaluate_jacobian(rhs, jac, params, t, y, f, spec, J, vals, ytmp, ftmp, stats, vb)
                sc[_SC_JVALID] = 1.0
                sc[_SC_CURJAC] = 1.0
                sc[_SC_LU_H] = 0.0
                jac_fresh = True
            if sc[_SC_LU_H] != hs:
                ok = factorise(J, LUr, MU_REAL / hs, mass, spec, pivr, tmp, stats)
                ok2 = factorise(J, LUc, MU_COMPLEX / hs, mass, spec, pivc, ctmp, stats)
                if not (ok and ok2):
                    sc[_SC_LU_H] = 0.0
                    stats[ST_REJECTED] += 1
                    newton_failed = True
                    h = 0.5 * hs
                    continue
                sc[_SC_LU_H] = hs
            conv, iters, eta, nonf, upd = _collocation(rhs, jac, params, t, y, hs, Z, W, F, mass, J, LUr, pivr, LUc,
                                                       pivc, spec, scale, tol, maxit, sc[_SC_ETA], fr, fc, tmp, ctmp,
                                                       vals, ynew, ftmp, max_upd, stats, vb)
            sc[_SC_ETA] = eta
            if upd > 0:
                sc[_SC_CURJAC] = 1.0
                jac_fresh = True
                if nonf:
                    sc[_SC_LU_H] = 0.0
            if not conv:
                stats[ST_REJECTED] += 1
                stats[ST_NFAIL] += 1
                if not jac_fresh and not nonf:
                    # retry with the Jacobian at the end of the step as the stalled iterate has it
                    # (a non-smooth model may have crossed a kink within the step)
                    for i in range(n):
                        ytmp[i] = y[i] + Z[2, i]
                    if spec[SP_HAS_JAC] == 0:
                        rhs(t + hs, ytmp, params, ftmp)
                        stats[ST_NFEV] += 1
                        for i in range(n):
                            err[i] = ftmp[i]
                    evaluate_jacobian(rhs, jac, params, t + hs, ytmp, err, spec, J, vals, ynew, ftmp, stats, vb)
                    sc[_SC_CURJAC] = 1.0
                    sc[_SC_LU_H] = 0.0
                    jac_fresh = True
                    continue
                jac_fresh = False
                newton_failed = True
                nonfinite = nonf
                h = 0.5 * hs
                continue
            newton_failed = False
            for i in range(n):
                ynew[i] = y[i] + Z[2, i]
            for i in range(n):
                ze = (_E[0] * Z[0, i] + _E[1] * Z[1, i] + _E[2] * Z[2, i]) / hs
                err[i] = f[i] + mass[i] * ze
            solve_state_order(LUr, spec, pivr, err, tmp)
            for i in range(n):
                scale[i] = atol[i] + rtolv[i] * max(abs(y[i]), abs(ynew[i]))
            err_norm = rms_norm(err, scale)
            safety = 0.9 * (2 * maxit + 1) / (2 * maxit + iters)
            if rejected and err_norm > 1.0:
                for i in range(n):
                    ytmp[i] = y[i] + err[i]
                rhs(t, ytmp, params, ftmp)
                stats[ST_NFEV] += 1
                for i in range(n):
                    ze = (_E[0] * Z[0, i] + _E[1] * Z[1, i] + _E[2] * Z[2, i]) / hs
                    err[i] = ftmp[i] + mass[i] * ze
                solve_state_order(LUr, spec, pivr, err, tmp)
                err_norm = rms_norm(err, scale)
            if not (err_norm <= 1.0):
                stats[ST_REJECTED] += 1
                h = hs * step_factor(err_norm, 0.25, safety, 0.2, 10.0, False, hs, h_old, err_old, True)
                rejected = True
                continue
            accepted = True
        if not accepted:
            status = failed_step_status(newton_failed, nonfinite)
            break
        recompute = iters > 2 and sc[_SC_ETA] > 1e-3
        factor = step_factor(err_norm, 0.25, safety, 0.2, 10.0, False, hs, h_old, err_old, True)
        if not recompute and factor < 1.2:
            factor = 1.0
        # dense output of this step: y(t + x hs) = y + Σ_m (Z P)[:, m] x^{m+1}
        for i in range(n):
            Q[0, i] = y[i]
            for m in range(3):
                Q[m + 1, i] = Z[0, i] * _P[0, m] + Z[1, i] * _P[1, m] + Z[2, i] * _P[2, m]
        t_old = t
        th = finish_step(events, observe, params, spec, obs_dt, t, hs, tn, y, ynew, g0, g1, Q, 3, t_out, Y_out, iout, ev_out,
                         acc, stats, ytmp, gtmp, roots, vb.own)
        if th <= 1.0:
            t = t + th * hs
            tstate[TS_FVALID] = 0.0
            status = EVENT_STOP
            break
        t = tn
        for k in range(4):
            for i in range(n):
                Qp[k, i] = Q[k, i]
        sc[_SC_HAVESOL] = 1.0
        sc[_SC_TOLD] = t_old
        sc[_SC_HPREV] = hs
        rhs(t, y, params, f)
        stats[ST_NFEV] += 1
        if recompute:
            evaluate_jacobian(rhs, jac, params, t, y, f, spec, J, vals, ytmp, ftmp, stats, vb)
            sc[_SC_CURJAC] = 1.0
            sc[_SC_LU_H] = 0.0
        else:
            sc[_SC_CURJAC] = 0.0
        sc[_SC_HOLD] = hs
        sc[_SC_EOLD] = err_norm
        h = hs * factor
    tstate[TS_T] = t
    tstate[TS_H] = h
    return status
