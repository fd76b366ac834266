"""Variable-order (1-5), variable-step BDF and NDF ("ode15s") in numba.

The quasi-constant step-size formulation of Shampine & Reichelt (1997) as in MATLAB's ode15s and
scipy's ``BDF``: the solution history is kept as modified divided (backward) differences D of the
interpolating polynomial at the current step size; a step-size change multiplies D by the
matrix R·U (``change_D``).  The implicit equation of order k

    M [(1 − κ_k) γ_k (y_{n+1} − y⁽⁰⁾_{n+1}) + Σ_{j=1..k} γ_j ∇^j y_n] = h f(t_{n+1}, y_{n+1}),
    γ_j = Σ_{i=1..j} 1/i,   y⁽⁰⁾ = Σ_{j=0..k} D_j (predictor)

is solved by simplified Newton on M/c − J, c = h/α_k, α_k = (1 − κ_k)γ_k, with the bordered-band
sparse LU of :mod:`hpcrail.integrators.linalg` (train chains: banded/block-tridiagonal).  κ = 0
gives BDF; the NDF values κ = (−0.1850, −1/9, −0.0823, −0.0415, 0) (ode15s) trade a little
stability for a smaller error constant.  Error estimate (κ_k γ_k + 1/(k+1))·(y_{n+1} − y⁽⁰⁾); the
order is chosen among k−1, k, k+1 after k+1 steps at constant step; step-size increases below 20 %
at unchanged order are not taken (the LU factors are kept).  Dense output: the interpolating
polynomial of order k.  Index-1 DAEs with a diagonal, singular M (paper 000's "BDF with DAE").

Sources: Shampine & Reichelt, SIAM J. Sci. Comput. 18 (1997) 1-22 (ode15s); HNW II §III.5, §VI.2;
scipy ``integrate._ivp.bdf`` (algorithm and constants); paper 000 (ode15s, SODASRT2), paper 004.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.collectives import NORM_ALL, copy_own, error_norm, seg, wrms
from hpcrail.integrators.common import (
    EPS, STEP_ON, dense_needed, event_work, failed_step_status, finish_step, initial_step, loop_gate, step_factor,
)
from hpcrail.integrators.contract import (
    EVENT_STOP, RUNNING, SET_HMAX, SET_HMIN, SET_MAX_STEPS, SET_NEWTON_JUPD,
    SET_NEWTON_MAXITER, SET_NEWTON_TOL, SET_OBS_DT, SET_OPT0, SET_STEP, ST_NFAIL, ST_NFEV, ST_REJECTED,
    TS_F0, TS_FVALID, TS_H, TS_T,
)
from hpcrail.integrators.linalg import SP_NEV
from hpcrail.integrators.newton import (
    JS_CURJAC, JS_ETA, JS_JAGE, JS_LU_C, N_JS, NEWTON_CONVERGED, NEWTON_NONFINITE, factorise_at,
    jac_values, jacobian_at_stall, jacobian_if_due, jacobian_reset, lin_storage, lin_storage_py, matrices,
    needs_factorisation, newton_solve, newton_tol_err, record_newton,
)

MAX_ORDER = 5
#: step increases below this factor at unchanged order are not taken (keeps the LU; 1.5 as in CVODE measured
#: worse on train 4: +8 % steps)
BDF_KEEP = 1.2
_N_SCAL = 8
#: rows of the history D: orders 0..MAX_ORDER and the two differences of the order-change test
_ROWS = MAX_ORDER + 3
#: order, steps at constant step, then the Jacobian bookkeeping ``js`` (:data:`~hpcrail.integrators.newton.JS_LU_C`..)
_SC_ORDER, _SC_NEQ, _SC_LU_C, _SC_CURJAC, _SC_ETA, _SC_RECOMP, _SC_JVALID, _SC_JAGE = range(8)

_KAPPA = np.array([0.0, -0.1850, -1.0 / 9.0, -0.0823, -0.0415, 0.0])
_GAMMA = np.concatenate((np.zeros(1), np.cumsum(1.0 / np.arange(1, MAX_ORDER + 1))))


def bdf_state_size(n: int, spec, sspec=None, P: int = 1) -> int:
    """t, h, init, f (n), events, scalars, D ((MAX_ORDER+3)·n), J, LU, pivots (``sspec``, ``P``: the
    partitioned solver's layout on blocks)."""
    L, npiv = lin_storage_py(spec, sspec, P)
    return 3 + n + int(spec[SP_NEV]) + _N_SCAL + (MAX_ORDER + 3) * n + 2 * L + npiv


@njit(inline="always", **JIT)
def _r_entry(i, j, factor):
    """R[i, j] = Π_{m=1..i} (m − 1 − factor·j)/m (Shampine & Reichelt 1997, the step-change matrix)."""
    r = 1.0
    for m in range(1, i + 1):
        r *= (m - 1 - factor * j) / m
    return r


@njit(**JIT)
def change_D(D, order, factor, tmp, own):
    """Rescale the difference array D[0:order+1] from step h to factor·h (D ← (R U)ᵀ D), in place on this
    worker's states; ``tmp`` float64[≥ order+1, n] work."""
    RU = np.empty((MAX_ORDER + 1, MAX_ORDER + 1))
    for k in range(order + 1):
        for j in range(order + 1):
            acc = 0.0
            for m in range(order + 1):
                acc += _r_entry(k, m, factor) * _r_entry(m, j, 1.0)
            RU[k, j] = acc
    for s in range(2):
        a, z = seg(own, s)
        for j in range(order + 1):
            for i in range(a, z):
                tmp[j, i] = D[j, i]
        for j in range(order + 1):   # row-wise: contiguous, vectorisable passes
            dj = D[j]
            r0 = RU[0, j]
            t0 = tmp[0]
            for i in range(a, z):
                dj[i] = r0 * t0[i]
            for k in range(1, order + 1):
                r = RU[k, j]
                tk = tmp[k]
                for i in range(a, z):
                    dj[i] += r * tk[i]


@njit(**JIT)
def _bdf_dense(D, order, Q, own):
    """Monomial coefficients in θ ∈ [0, 1] (t = t_old + θh) of the interpolating polynomial
    y = D_0 + Σ_j D_j Π_{m<j} (θ − 1 + m)/(m + 1) (this worker's states)."""
    P = np.zeros((order + 1, order + 1))
    P[0, 0] = 1.0
    for j in range(1, order + 1):
        m = j - 1
        a = (m - 1.0) / (m + 1.0)
        b = 1.0 / (m + 1.0)
        for i in range(j + 1):
            v = a * P[j - 1, i]
            if i > 0:
                v += b * P[j - 1, i - 1]
            P[j, i] = v
    for s in range(2):
        a, z = seg(own, s)
        for i in range(order + 1):
            for q in range(a, z):
                acc = 0.0
                for j in range(i, order + 1):
                    acc += P[j, i] * D[j, q]
                Q[i, q] = acc


@njit(inline="always", **JIT)
def bdf_coefficients(ndf):
    """``(gamma, alpha, error_const)`` of the BDF (``ndf`` False) or NDF (True) formulas of orders 0..5:
    γ_k = Σ_{j≤k} 1/j, α_k = (1 − κ_k) γ_k and the error constants κ_k γ_k + 1/(k + 1) (float64[6], [6], [7];
    κ the NDF coefficients, 0 for BDF).  Source: Shampine & Reichelt 1997 (the MATLAB ODE suite), §2.3 and
    Table 1; the variable-step quasi-constant form as in scipy's BDF.  """
    kappa = np.zeros(MAX_ORDER + 1)
    if ndf:
        for k in range(MAX_ORDER + 1):
            kappa[k] = _KAPPA[k]
    gamma = _GAMMA
    alpha = np.empty(MAX_ORDER + 1)
    error_const = np.empty(MAX_ORDER + 2)
    for k in range(MAX_ORDER + 1):
        alpha[k] = (1.0 - kappa[k]) * gamma[k]
        error_const[k] = kappa[k] * gamma[k] + 1.0 / (k + 1)
    error_const[MAX_ORDER + 1] = 1.0 / (MAX_ORDER + 2)
    return gamma, alpha, error_const


#: outcomes of :func:`bdf_correct`
CORR_OK, CORR_RETRY, CORR_FAIL, CORR_NONFINITE = 0, 1, 2, 3


@njit(inline="always", **JIT)
def bdf_predict(D, order, gamma, alpha, ypred, base, own):
    """Predictor y⁽⁰⁾ = Σ_{j≤k} D_j into ``ypred`` and ``base`` such that (α_k/h) M (y − base) = f is the
    step's implicit equation (base = y⁽⁰⁾ − Σ_{j≥1} γ_j D_j / α_k), on the states ``own`` selects (row-wise
    passes: contiguous and vectorisable)."""
    inv_alpha = 1.0 / alpha[order]
    d0 = D[0]
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            ypred[i] = d0[i]
            base[i] = 0.0
        for k in range(1, order + 1):
            dk = D[k]
            gk = gamma[k]
            for i in range(a, z):
                ypred[i] += dk[i]
                base[i] += gk * dk[i]
        for i in range(a, z):
            base[i] = ypred[i] - base[i] * inv_alpha


@njit(inline="always", **JIT)
def bdf_try_step(rhs, jac, params, t, h, t_final, D, order, n_equal, coef, newton, ypred, base, ynew, js, f, mass,
                 spec, lin, wt, work, jac_fresh, stats, sync, vb):
    """One attempt of a BDF step t → t + h (cut to end exactly at ``t_final``): the predictor, the corrector
    (the Jacobian and LU reuse policy of :mod:`~hpcrail.integrators.newton` on the bookkeeping view ``js``,
    simplified Newton from the predictor into ``ynew`` with tolerance ``tol_given`` or 0.1 of the error-test
    unit) and the reaction to its failure: ``CORR_RETRY`` (same step again: a fresh Jacobian at the stalled
    iterate, or factors at this step size), ``CORR_FAIL`` / ``CORR_NONFINITE`` (the history rescaled to h/2); on
    ``CORR_OK`` ``dz`` holds the local error estimate (not yet normed: the caller's error test).  Returns
    ``(outcome, t_new, h, n_equal, iterations, jac_fresh)``.  Grouped arguments: ``coef`` = (γ, α,
    error constants) of :func:`bdf_coefficients`, ``newton`` = (tolerance, iterations, Jacobian updates per
    solve), ``lin`` = (J, LU, pivots), ``work`` = (Jacobian values, ytmp, ftmp, tmp, dz, dtmp) — at most 30
    arguments, so that numba can inline it (Python compiles a call with more as ``f(*args)``, which numba's
    inliner refuses)."""
    gamma, alpha, error_const = coef
    tol_given, maxit, max_upd = newton
    J, LU, piv = lin
    vals, ytmp, ftmp, tmp, dz, dtmp = work
    own = vb.own
    t_new = t + h
    if t_new >= t_final or t_final - t_new <= 1e-12 * max(1.0, abs(t_final)):
        t_new = t_final
        change_D(D, order, (t_new - t) / h, dtmp, own)
        n_equal = 0
        h = t_new - t
    # predictor, and base such that (alpha/h) M (y - base) = f  <=>  M (d + psi) = c f, d = y - ypred
    bdf_predict(D, order, gamma, alpha, ypred, base, own)
    cc = alpha[order] / h
    # Newton tolerance on the error-test scale: the error estimate is error_const·(y − y_pred)
    tol = tol_given if tol_given > 0.0 else newton_tol_err(0.0) / error_const[order]
    if jacobian_if_due(rhs, jac, params, t_new, ypred, f, spec, J, vals, ytmp, ftmp, js, stats, vb):
        jac_fresh = True
    code = NEWTON_CONVERGED
    if needs_factorisation(cc, js[JS_LU_C]):
        if not factorise_at(J, LU, cc, mass, spec, piv, tmp, js, stats, sync, vb):
            code = NEWTON_NONFINITE
    iters = 0
    if code == NEWTON_CONVERGED:
        copy_own(ynew, ypred, own)
        code, iters, eta, upd = newton_solve(rhs, jac, params, t_new, ynew, base, cc, js[JS_LU_C], mass, J, LU, piv,
                                             spec, wt, tol, maxit, js[JS_ETA], ftmp, dz, tmp, vals, ytmp, f, max_upd,
                                             stats, sync, vb)
        record_newton(js, code, eta, upd, cc)
        if upd > 0:
            jac_fresh = True
    if code == NEWTON_CONVERGED:
        bdf_error_vector(dz, error_const[order], ynew, ypred, own)
        return CORR_OK, t_new, h, n_equal, iters, jac_fresh
    stats[ST_REJECTED] += 1
    stats[ST_NFAIL] += 1
    if not jac_fresh and code != NEWTON_NONFINITE:
        jacobian_at_stall(rhs, jac, params, t_new, ynew, f, spec, J, vals, ytmp, ftmp, js, stats, vb)
        return CORR_RETRY, t_new, h, n_equal, iters, True
    if js[JS_LU_C] != cc and code != NEWTON_NONFINITE:
        js[JS_LU_C] = 0.0      # old factors: refactorise at this step size first
        return CORR_RETRY, t_new, h, n_equal, iters, jac_fresh
    change_D(D, order, 0.5, dtmp, own)
    return (CORR_NONFINITE if code == NEWTON_NONFINITE else CORR_FAIL), t_new, 0.5 * h, 0, iters, False


@njit(inline="always", **JIT)
def bdf_correct(rhs, jac, params, t, h, t_final, D, order, n_equal, coef, newton, ypred, base, ynew, js, f, mass,
                spec, lin, wt, work, jac_fresh, min_step, stats, sync, vb):
    """Attempts of the step from t (:func:`bdf_try_step`) until its corrector converges, the step halved after each
    failure, at most down to ``min_step``.  Returns ``(status, t_new, h, n_equal, iterations, jac_fresh)``:
    ``STEP_ON`` with the error estimate in ``work``'s ``dz`` (the caller's error test), or the failed step's
    status (:func:`~hpcrail.integrators.common.failed_step_status`)."""
    newton_failed = False
    nonfinite = False
    t_new = t
    while not (h < min_step):
        outcome, t_new, h, n_equal, iters, jac_fresh = bdf_try_step(
            rhs, jac, params, t, h, t_final, D, order, n_equal, coef, newton, ypred, base, ynew, js, f, mass, spec,
            lin, wt, work, jac_fresh, stats, sync, vb)
        if outcome == CORR_OK:
            return STEP_ON, t_new, h, n_equal, iters, jac_fresh
        if outcome != CORR_RETRY:
            newton_failed = True
            nonfinite = outcome == CORR_NONFINITE
    return failed_step_status(newton_failed, nonfinite), t_new, h, n_equal, 0, jac_fresh


@njit(inline="always", **JIT)
def bdf_reject(D, order, err, safety, h, dtmp, stats, own):
    """A step whose error norm ``err`` failed the test (> 1, or NaN): counted as rejected, the history rescaled to
    the step the error asks for (factor 0.2-10 times ``safety``).  Returns the new step."""
    stats[ST_REJECTED] += 1
    fac = step_factor(err, 1.0 / (order + 1), safety, 0.2, 10.0, False, h, 0.0, 0.0, False)
    change_D(D, order, fac, dtmp, own)
    return h * fac


@njit(inline="always", **JIT)
def bdf_change(D, order, delta, factor, h, t, t_final, hmax, dtmp, own):
    """Apply the order change ``delta`` and step factor of :func:`bdf_select` (the step at most ``hmax``);
    an increase below ``BDF_KEEP`` at unchanged order is not taken (the LU factors are kept).  Returns
    ``(order, h, changed)``."""
    if delta == 0 and 1.0 <= factor < BDF_KEEP:
        return order, h, False
    order += delta
    if t_final - t > 0.0:
        factor = min(factor, hmax / h)
    change_D(D, order, factor, dtmp, own)
    return order, h * factor, True


@njit(inline="always", **JIT)
def bdf_error_vector(dz, ec, ynew, ypred, own):
    """dz ← ec·(y_{n+1} − y⁽⁰⁾) (the local error estimate; ``ec`` the order's error constant)."""
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            dz[i] = ec * (ynew[i] - ypred[i])


@njit(inline="always", **JIT)
def bdf_update_history(D, order, ynew, ypred, own):
    """After an accepted step: D_{k+2} ← d − D_{k+1}, D_{k+1} ← d (d = y_{n+1} − y⁽⁰⁾) and D_j ← D_j + D_{j+1}
    for j = k..0 (D^{j+1} y_n = D^j y_n − D^j y_{n−1})."""
    # (row by row: contiguous, vectorisable passes; one fused pass with a strided inner loop over
    # the rows measured 2.5 us per step on train 4)
    d2 = D[order + 2]
    d1 = D[order + 1]
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            d = ynew[i] - ypred[i]
            d2[i] = d - d1[i]
            d1[i] = d
        for k in range(order, -1, -1):
            dk = D[k]
            dk1 = D[k + 1]
            for i in range(a, z):
                dk[i] += dk1[i]


@njit(**JIT)
def bdf_select(D, order, max_order, error_const, err_norm, safety, cap, dz, wt, norm, eb, refine, b0, b1, sync, vb,
               own):
    """Order and step selection after k+1 steps at constant step (Shampine & Reichelt 1997): the error
    estimates of orders k−1 and k+1 from D_k and D_{k+2} (their norm :func:`~hpcrail.integrators.collectives.
    error_norm` of kind ``norm`` with ``eb``, ``refine``, ``b0``, ``b1``; the order-k one ``err_norm``), each
    turned into a step factor; returns ``(delta, factor)``: the order change (−1, 0, +1) of the largest and that
    factor times ``safety``, at most ``cap``."""
    em = 1e300
    ep = 1e300
    if order > 1:
        ec = error_const[order - 1]
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                dz[i] = ec * D[order, i]
        em = error_norm(norm, dz, wt, eb, refine, b0, b1, sync, vb)
    if order < max_order:
        ec = error_const[order + 1]
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                dz[i] = ec * D[order + 2, i]
        ep = error_norm(norm, dz, wt, eb, refine, b0, b1, sync, vb)
    fm = em ** (-1.0 / order) if em > 0.0 else 1e300
    f0 = err_norm ** (-1.0 / (order + 1)) if err_norm > 0.0 else 1e300
    fp = ep ** (-1.0 / (order + 2)) if ep > 0.0 else 1e300
    if em >= 1e300:
        fm = 0.0
    if ep >= 1e300:
        fp = 0.0
    delta = 0
    best = f0
    if fm > best:
        best = fm
        delta = -1
    if fp > best:
        best = fp
        delta = 1
    return delta, min(cap, safety * best)


@njit(**JIT)
def bdf_work(n, rows, spec, vb):
    """Work arrays of a BDF kernel: Jacobian values, ``ytmp``, ``ftmp``, ``tmp``, ``dz``, ``base``, ``ypred``,
    ``ynew``, ``wt`` (float64[n]) and ``dtmp`` (float64[rows, n], :func:`change_D`)."""
    vals = np.zeros(max(jac_values(spec, vb), 1))
    return (vals, np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n),
            np.empty(n), np.empty((rows, n)))


@njit(inline="always", **JIT)
def bdf_step_begin(D, order, h, n_equal, t, hmin, hmax, y, atol, rtolv, wt, dtmp, own):
    """Start of a step from (t, y): the step cut to ``hmax`` (the history rescaled), the error weights
    1/(atol + rtol·|y_n|) of its Newton iteration and error test (CVODE's), the smallest step.  Returns
    ``(h, n_equal, min_step)``."""
    if h > hmax:
        change_D(D, order, hmax / h, dtmp, own)
        h = hmax
        n_equal = 0
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            wt[i] = 1.0 / (atol[i] + rtolv[i] * abs(y[i]))
    return h, n_equal, max(hmin, 10.0 * EPS * max(abs(t), 1e-300))


@njit(**JIT)
def bdf_resume(rhs, events, params, t, y, f, g0, D, rows, h0, t_final, hmax, rtolv, atol, mass, tstate, sc, stats,
               sync, vb):
    """A BDF kernel's state at entry: ``(h, order, n_equal)`` from ``tstate`` and ``sc``, after the first call's
    set-up when ``tstate`` is fresh — f(t, y), the event functions into ``g0`` (if any), the initial step (``h0``
    if > 0, else :func:`initial_step`, at most ``hmax``), the history D_0 = y, D_1 = h·M⁻¹f (0 for algebraic
    rows), D_2.. = 0 over ``rows`` rows, and the scalars ``sc``: order 1, the Jacobian bookkeeping reset (its
    slots from ``_SC_LU_C``), every other slot 0."""
    if tstate[TS_FVALID] != 0.0:
        return tstate[TS_H], int(sc[_SC_ORDER]), int(sc[_SC_NEQ])
    own = vb.own
    rhs(t, y, params, f)
    stats[ST_NFEV] += 1
    if g0.size > 0:
        events(t, y, params, g0)
    if h0 <= 0.0:
        h0 = initial_step(rhs, params, t, y, f, t_final - t, rtolv, atol, 1.0, mass, stats, sync, vb)
    h0 = min(h0, hmax)
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            D[0, i] = y[i]
            D[1, i] = h0 * f[i] / mass[i] if mass[i] != 0.0 else 0.0
        for k in range(2, rows):
            for i in range(a, z):
                D[k, i] = 0.0
    for k in range(sc.size):
        sc[k] = 0.0
    sc[_SC_ORDER] = 1.0
    jacobian_reset(sc[_SC_LU_C:_SC_LU_C + N_JS])
    tstate[TS_H] = h0
    tstate[TS_FVALID] = 1.0
    return h0, 1, 0


@njit(**JIT)
def bdf(rhs, jac, events, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats,
        settings, atol, rtolv, mass, spec, ev_out, sync, vb):
    """Variable-order BDF / NDF; ``settings[6]`` highest order (1-5), ``settings[7]`` 1 for NDF,
    ``settings[8:10]`` Newton tolerance and iterations (default 4).  See the module docstring.  On the
    blocks of ``vb`` with the reduction hook ``sync`` (:mod:`~hpcrail.integrators.collectives`).

    The step is the multirate BDF's (:func:`bdf_step_begin`, :func:`bdf_try_step`,
    :func:`bdf_update_history`, :func:`bdf_select`, :func:`bdf_change`); the step's pieces are inlined
    (``inline="always"``) so that their loops run on this kernel's own work arrays and stay vectorised (a
    separate call measured 19-35 % more CPU on train 4's bdf2 trip, stop 34)."""
    n = y.size
    own = vb.own
    nev = spec[SP_NEV]
    L, npiv = lin_storage(spec, vb)
    max_order = min(MAX_ORDER, max(1, int(settings[SET_OPT0]))) if settings[SET_OPT0] > 0.0 else MAX_ORDER
    ndf = settings[SET_OPT0 + 1] > 0.5
    hmin = settings[SET_HMIN]
    hmax = settings[SET_HMAX] if settings[SET_HMAX] > 0.0 else 1e300
    max_steps = settings[SET_MAX_STEPS]
    obs_dt = settings[SET_OBS_DT]
    tol_given = settings[SET_NEWTON_TOL]
    maxit = int(settings[SET_NEWTON_MAXITER]) if settings[SET_NEWTON_MAXITER] > 0.0 else 4
    max_upd = int(settings[SET_NEWTON_JUPD])
    coef = bdf_coefficients(ndf)    # (gamma, alpha, error constants)
    # ---- persistent state
    t = tstate[TS_T]
    f = tstate[TS_F0:TS_F0 + n]
    og = TS_F0 + n
    g0 = tstate[og:og + nev]
    osc = og + nev
    sc = tstate[osc:osc + _N_SCAL]
    js = sc[_SC_LU_C:_SC_LU_C + N_JS]
    od = osc + _N_SCAL
    D = tstate[od:od + _ROWS * n].reshape((_ROWS, n))
    oj = od + _ROWS * n
    J, LU, piv = matrices(tstate, oj, L, npiv)
    # ---- work (allocated here, not in a helper: the inlined loops then know they do not alias)
    vals = np.zeros(max(jac_values(spec, vb), 1))
    ytmp = np.empty(n)
    ftmp = np.empty(n)
    tmp = np.empty(n)
    dz = np.empty(n)
    base = np.empty(n)
    ypred = np.empty(n)
    ynew = np.empty(n)
    wt = np.empty(n)
    dtmp = np.empty((_ROWS, n))
    Q = np.empty((MAX_ORDER + 1, n))
    g1, gtmp, roots = event_work(nev)
    newton = (tol_given, maxit, max_upd)
    lin = (J, LU, piv)
    work = (vals, ytmp, ftmp, tmp, dz, dtmp)
    h, order, n_equal = bdf_resume(rhs, events, params, t, y, f, g0, D, _ROWS, settings[SET_STEP], t_final, hmax,
                                   rtolv, atol, mass, tstate, sc, stats, sync, vb)
    status = RUNNING
    while True:
        status = loop_gate(t, y, t_out, Y_out, iout, t_pause, t_final, stats, max_steps, own)
        if status != STEP_ON:
            break
        h, n_equal, min_step = bdf_step_begin(D, order, h, n_equal, t, hmin, hmax, y, atol, rtolv, wt, dtmp, own)
        jac_fresh = False
        err_norm = 0.0
        while True:
            status, t_new, h, n_equal, iters, jac_fresh = bdf_correct(
                rhs, jac, params, t, h, t_final, D, order, n_equal, coef, newton, ypred, base, ynew, js, f, mass, spec,
                lin, wt, work, jac_fresh, min_step, stats, sync, vb)
            if status != STEP_ON:
                break
            safety = 0.9 * (2 * maxit + 1) / (2 * maxit + iters)
            err_norm = wrms(sync, vb, dz, 1.0, wt)
            if err_norm <= 1.0:
                break
            h = bdf_reject(D, order, err_norm, safety, h, dtmp, stats, own)
            n_equal = 0
        if status != STEP_ON:
            break
        n_equal += 1
        bdf_update_history(D, order, ynew, ypred, own)
        if dense_needed(spec, obs_dt, t, t_new, t_out, iout):
            _bdf_dense(D, order, Q, own)
        hs = t_new - t
        th = finish_step(events, observe, params, spec, obs_dt, t, hs, t_new, y, ynew, g0, g1, Q, order, t_out, Y_out, iout,
                         ev_out, acc, stats, ytmp, gtmp, roots, own)
        if th <= 1.0:
            t = t + th * hs
            tstate[TS_FVALID] = 0.0
            status = EVENT_STOP
            break
        t = t_new
        js[JS_CURJAC] = 0.0
        js[JS_JAGE] += 1.0
        # ---- order and step selection
        if n_equal < order + 1:
            continue
        safety = 0.9 * (2 * maxit + 1) / (2 * maxit + iters)
        delta, factor = bdf_select(D, order, max_order, coef[2], err_norm, safety, 10.0, dz, wt, NORM_ALL, wt,
                                   wt, 0, 0, sync, vb, own)
        order, h, changed = bdf_change(D, order, delta, factor, h, t, t_final, hmax, dtmp, own)
        if changed:
            n_equal = 0
    sc[_SC_ORDER] = order
    sc[_SC_NEQ] = n_equal
    tstate[TS_T] = t
    tstate[TS_H] = h
    return status
