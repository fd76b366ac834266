"""One-step implicit methods with the shared Newton machinery (:mod:`hpcrail.integrators.newton`):
implicit Euler and the trapezoidal rule (fixed step), TR-BDF2 (adaptive), and the state-space
implicit-Euler recurrence of paper 001 (Jacobian factorised once).

All solve ``M y' = f(t, y)`` with a diagonal, possibly singular mass matrix (index-1 DAE).

ESDIRK form.  Stage i ≥ 1 of an s-stage ESDIRK tableau (explicit first stage, constant diagonal d)
solves  M (z_i − y_n − h Σ_{j<i} a_ij K_j) = h d f(t_n + c_i h, z_i)  and sets
K_i = (z_i − y_n − h Σ_{j<i} a_ij K_j)/(h d) (so that M K_i = f(t_i, z_i)); K_1 is the stage
derivative of the last stage of the previous step (first-same-as-last).  All tableaux here are
stiffly accurate: y_{n+1} = z_s.  One iteration matrix M/(hd) − J serves every stage.

* implicit Euler: c = (0, 1), a = [[0], [0, 1]]; order 1, L-stable.
* trapezoidal:    c = (0, 1), a = [[0], [½, ½]]; order 2, A-stable (not L-stable).
* TR-BDF2 (Hosea & Shampine 1996, MATLAB ode23tb): γ = 2 − √2, d = γ/2, w = √2/4,
  c = (0, γ, 1), a = [[0], [d, d], [w, w, d]]; order 2, L-stable; embedded 3rd-order weights
  b̂ = ((1−w)/3, (3w+1)/3, d/3); the error estimate h Σ (b̂_i − b_i) K_i is filtered by
  (M − hdJ)⁻¹M (Hosea & Shampine §3) and the step follows safety·err^(−1/3).
* ESDIRK3(2) (Kværnø 2004, the "Kvaerno3" of diffrax): γ = 0.4358665215, c = (0, 2γ, 1, 1),
  4 stages, order 3, L-stable, stiffly accurate; the third stage is the embedded order-2
  solution; error filtered as for TR-BDF2, step ∝ err^(−1/3).

Dense output: cubic Hermite from (y_n, K_1) and (y_{n+1}, K_s).  Fixed-step methods halve the
step locally when Newton fails with a fresh Jacobian and return to the nominal step afterwards.

Sources: Hairer & Wanner, *Solving ODEs II*, §IV.6 (SDIRK), §IV.8 (Newton), §VI.1 (index-1
DAEs); Hosea & Shampine, Appl. Numer. Math. 20 (1996) 21-37; paper 001 eq (12).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.collectives import all_finite, copy_own, seg, wrms
from hpcrail.integrators.common import (
    dense_needed, EPS, event_work, finish_step, hermite_coeffs, initial_step, loop_gate, step_end, step_factor,
    STEP_ON, step_settings,
)
from hpcrail.integrators.contract import (
    EVENT_STOP, NEWTON_FAILURE, NON_FINITE, RUNNING, SET_MAX_STEPS, SET_NEWTON_TOL, SET_OBS_DT, SET_OPT0, SET_RTOL,
    SET_SAFETY, SET_STEP, ST_NFAIL, ST_NFEV, ST_REJECTED, ST_STEPS, STEP_UNDERFLOW, TS_F0, TS_FVALID, TS_H, TS_T,
)
from hpcrail.integrators.linalg import SP_NEV
from hpcrail.integrators.newton import (
    default_newton_tol, evaluate_jacobian, factorise, factorise_at, jac_values, jacobian_at_stall, jacobian_if_due,
    jacobian_reset, lin_solve, lin_storage, lin_storage_py, matrices, N_JS, needs_factorisation, NEWTON_CONVERGED,
    NEWTON_NONFINITE, newton_settings, newton_solve, newton_tol_err, record_newton,
)

_N_SCAL = 12
# scalar slots of the implicit one-step methods
# (the first six: the Jacobian bookkeeping ``js`` of :mod:`~hpcrail.integrators.newton`, in its order)
_SC_LU_C, _SC_CURJAC, _SC_ETA, _SC_RECOMP, _SC_JVALID, _SC_JAGE, _SC_HNOM, _SC_TPREV, _SC_HPREV, _SC_HOLD, \
    _SC_EOLD = range(11)
#: step-size factors below this are not taken (keeps the step; CVODE's threshold is 1.5)
FAC_KEEP = 1.2
#: Gustafsson's predictive controller (else elementary) for the adaptive ESDIRK methods
PREDICTIVE = False


def esdirk_state_size(n: int, spec, sspec=None, P: int = 1) -> int:
    """t, h, init, K (n), events, scalars, J, LU, pivots, previous step's dense polynomial (4n)."""
    L, npiv = lin_storage_py(spec, sspec, P)
    return 3 + n + int(spec[SP_NEV]) + _N_SCAL + 2 * L + npiv + 4 * n


def linear_euler_state_size(n: int, spec, sspec=None, P: int = 1) -> int:
    return esdirk_state_size(n, spec, sspec, P)


_SQ2 = math.sqrt(2.0)
_GAM = 2.0 - _SQ2
_D_TRB = _GAM / 2.0
_W_TRB = _SQ2 / 4.0
# Kværnø's ESDIRK 3(2): 4 stages, stiffly accurate, L-stable, embedded order 2 (the third stage)
_GK = 0.43586652150845899942
_K31 = (-4.0 * _GK ** 2 + 6.0 * _GK - 1.0) / (4.0 * _GK)
_K32 = (-2.0 * _GK + 1.0) / (4.0 * _GK)
_K41 = (6.0 * _GK - 1.0) / (12.0 * _GK)
_K42 = -1.0 / ((24.0 * _GK - 12.0) * _GK)
_K43 = (-6.0 * _GK ** 2 + 6.0 * _GK - 1.0) / (6.0 * _GK - 3.0)
# tableaux: rows of A (stage 0 explicit), c, number of stages, error weights b_hat - b
_A_TAB = np.array([
    [[0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0] * 4, [0.0] * 4],                       # implicit Euler
    [[0.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.0, 0.0], [0.0] * 4, [0.0] * 4],                       # trapezoidal
    [[0.0] * 4, [_D_TRB, _D_TRB, 0.0, 0.0], [_W_TRB, _W_TRB, _D_TRB, 0.0], [0.0] * 4],        # TR-BDF2
    [[0.0] * 4, [_GK, _GK, 0.0, 0.0], [_K31, _K32, _GK, 0.0], [_K41, _K42, _K43, _GK]],       # ESDIRK3(2)
])
_C_TAB = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, _GAM, 1.0, 0.0], [0.0, 2.0 * _GK, 1.0, 1.0]])
_S_TAB = np.array([2, 2, 3, 4])
_P_TAB = np.array([1.0, 2.0, 2.0, 2.0])   # order of the embedded solution (step control exponent 1/(p+1))
_E_TAB = np.array([[0.0] * 4, [0.0] * 4,
                   [(1.0 - _W_TRB) / 3.0 - _W_TRB, (3.0 * _W_TRB + 1.0) / 3.0 - _W_TRB, _D_TRB / 3.0 - _D_TRB, 0.0],
                   [_K31 - _K41, _K32 - _K42, _GK - _K43, -_GK]])


@njit(**JIT)
def esdirk(rhs, jac, events, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats,
           settings, atol, rtolv, mass, spec, ev_out, sync, vb):
    """Implicit Euler / trapezoidal (fixed step ``settings[0]``), TR-BDF2 or ESDIRK3(2) (adaptive),
    chosen by ``settings[6]`` (0, 1, 2, 3); see the module docstring.  Newton options in
    ``settings[8:11]``."""
    n = y.size
    own = vb.own
    nev = spec[SP_NEV]
    L, npiv = lin_storage(spec, vb)
    scheme = int(settings[SET_OPT0])
    A = _A_TAB[scheme]
    C = _C_TAB[scheme]
    E = _E_TAB[scheme]
    ns = _S_TAB[scheme]
    d = A[ns - 1, ns - 1]
    adaptive = scheme >= 2
    expo = 1.0 / (_P_TAB[scheme] + 1.0)
    rtol = settings[SET_RTOL]
    hmin, hmax, max_steps, obs_dt = step_settings(settings)
    safety = settings[SET_SAFETY] if settings[SET_SAFETY] > 0.0 else 0.9
    tol = newton_tol_err(settings[SET_NEWTON_TOL]) if adaptive else default_newton_tol(rtol, settings[SET_NEWTON_TOL])
    maxit, max_upd = newton_settings(settings, 5)
    # ---- persistent state
    t = tstate[TS_T]
    K0 = tstate[TS_F0:TS_F0 + n]
    og = TS_F0 + n
    g0 = tstate[og:og + nev]
    osc = og + nev
    sc = tstate[osc:osc + _N_SCAL]
    js = sc[:N_JS]
    oj = osc + _N_SCAL
    J, LU, piv = matrices(tstate, oj, L, npiv)
    oq = oj + 2 * L + npiv
    Qp = tstate[oq:oq + 4 * n].reshape((4, n))
    # ---- work
    vals = np.zeros(max(jac_values(spec, vb), 1))
    f = np.empty(n)
    ytmp = np.empty(n)
    ftmp = np.empty(n)
    tmp = np.empty(n)
    dz = np.empty(n)
    base = np.empty(n)
    wt = np.empty(n)
    Ks = np.empty((4, n))
    Zs = np.empty((4, n))
    Q = np.empty((4, n))
    g1, gtmp, roots = event_work(nev)
    if tstate[TS_FVALID] == 0.0:
        rhs(t, y, params, f)
        stats[ST_NFEV] += 1
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                K0[i] = f[i] / mass[i] if mass[i] != 0.0 else 0.0
        if nev > 0:
            events(t, y, params, g0)
        jacobian_reset(js)
        sc[_SC_HPREV] = 0.0
        sc[_SC_EOLD] = 0.0
        sc[_SC_HOLD] = 0.0
        h0 = settings[SET_STEP]
        if adaptive and h0 <= 0.0:
            h0 = initial_step(rhs, params, t, y, f, t_final - t, rtolv, atol, 2.0, mass, stats, sync, vb)
        tstate[TS_H] = min(h0, hmax)
        sc[_SC_HNOM] = settings[SET_STEP]
        tstate[TS_FVALID] = 1.0
    h = tstate[TS_H]
    status = RUNNING
    rejected_last = False
    newton_failed = False
    jac_fresh = False   # the Jacobian was evaluated during the current step attempt
    while True:
        status = loop_gate(t, y, t_out, Y_out, iout, t_pause, t_final, stats, max_steps, own)
        if status != STEP_ON:
            break
        if h < max(hmin, 16.0 * EPS * abs(t)):
            status = NEWTON_FAILURE if newton_failed else STEP_UNDERFLOW
            break
        hs, tn = step_end(t, h, t_final, not adaptive)
        c = 1.0 / (hs * d)
        # Jacobian (at the start, every MSBJ steps, on request) and iteration matrix (CVODE's rules)
        if jacobian_if_due(rhs, jac, params, t, y, f, spec, J, vals, ytmp, ftmp, js, stats, vb):
            jac_fresh = True
        if (needs_factorisation(c, sc[_SC_LU_C]) if adaptive else abs(sc[_SC_LU_C] - c) > 1e-9 * c):
            if not factorise_at(J, LU, c, mass, spec, piv, tmp, js, stats, sync, vb):
                stats[ST_REJECTED] += 1
                newton_failed = True
                h = 0.5 * hs
                continue
        c_lu = sc[_SC_LU_C]
        for s in range(2):
            a, z = seg(own, s)
            for i in range(a, z):
                wt[i] = 1.0 / (atol[i] + rtolv[i] * abs(y[i]))
                Ks[0, i] = K0[i]
        code = NEWTON_CONVERGED
        iters_max = 0
        s_fail = 0
        for s in range(1, ns):
            # base = y + h Σ_j a_sj K_j (row-wise passes: contiguous, vectorisable)
            a0 = A[s, 0]
            for sg in range(2):
                a, z = seg(own, sg)
                for i in range(a, z):
                    base[i] = a0 * Ks[0, i]
                for j in range(1, s):
                    asj = A[s, j]
                    for i in range(a, z):
                        base[i] += asj * Ks[j, i]
                for i in range(a, z):
                    base[i] = y[i] + hs * base[i]
            if s >= 2:
                # predictor of the later stages: the cubic Hermite interpolant through (t, y, K_0) and
                # the previous stage (t + c_{s-1} h, z_{s-1}, K_{s-1}) of this step, extrapolated
                hg = C[s - 1] * hs
                th2 = C[s] / C[s - 1]
                for sg in range(2):
                    a, z = seg(own, sg)
                    for i in range(a, z):
                        dy = Zs[s - 1, i] - y[i]
                        q2 = 3.0 * dy - hg * (2.0 * Ks[0, i] + Ks[s - 1, i])
                        q3 = -2.0 * dy + hg * (Ks[0, i] + Ks[s - 1, i])
                        Zs[s, i] = ((q3 * th2 + q2) * th2 + hg * Ks[0, i]) * th2 + y[i]
            elif sc[_SC_HPREV] > 0.0:
                # predictor of the first implicit stage: the previous step's interpolant extrapolated to the stage time
                th_p = (t + C[s] * hs - sc[_SC_TPREV]) / sc[_SC_HPREV]
                for sg in range(2):
                    a, z = seg(own, sg)
                    for i in range(a, z):
                        Zs[s, i] = ((Qp[3, i] * th_p + Qp[2, i]) * th_p + Qp[1, i]) * th_p + Qp[0, i]
            else:
                for sg in range(2):
                    a, z = seg(own, sg)
                    for i in range(a, z):
                        Zs[s, i] = base[i] + hs * d * Ks[s - 1, i]
            code, iters, rate, upd = newton_solve(rhs, jac, params, t + C[s] * hs, Zs[s], base, c, c_lu, mass, J,
                                                  LU, piv, spec, wt, tol, maxit, sc[_SC_ETA], f, dz, tmp, vals,
                                                  ytmp, ftmp, max_upd, stats, sync, vb)
            record_newton(js, code, rate, upd, c)
            if upd > 0:
                jac_fresh = True
                c_lu = c
            iters_max = max(iters_max, iters)
            if code != NEWTON_CONVERGED:
                s_fail = s
                break
            for sg in range(2):
                a, z = seg(own, sg)
                for i in range(a, z):
                    Ks[s, i] = (Zs[s, i] - base[i]) * c
        if code != NEWTON_CONVERGED:
            stats[ST_REJECTED] += 1
            stats[ST_NFAIL] += 1
            if not jac_fresh and code != NEWTON_NONFINITE:
                # retry once with the Jacobian at the iterate where Newton stalled: a non-smooth
                # model (coupler slack, friction band) may have crossed a kink within the step
                jacobian_at_stall(rhs, jac, params, t + C[s_fail] * hs, Zs[s_fail], f, spec, J, vals, ytmp, ftmp, js,
                                  stats, vb)
                jac_fresh = True
                continue
            if c_lu != c and code != NEWTON_NONFINITE:
                # old factors: refactorise at this step size before cutting the step
                sc[_SC_LU_C] = 0.0
                c_lu = 0.0
                continue
            jac_fresh = False
            newton_failed = True
            if code == NEWTON_NONFINITE and h * 0.5 < max(hmin, 16.0 * EPS * abs(t)):
                status = NON_FINITE
                break
            h = 0.5 * hs
            rejected_last = True
            continue
        y1 = Zs[ns - 1]
        fac = 1.0
        err = 0.0
        if adaptive:
            for sg in range(2):
                a, z = seg(own, sg)
                for i in range(a, z):
                    dz[i] = E[0] * Ks[0, i]
                for s in range(1, ns):
                    es = E[s]
                    for i in range(a, z):
                        dz[i] += es * Ks[s, i]
                for i in range(a, z):
                    dz[i] = hs * dz[i] * mass[i] * c_lu
            lin_solve(LU, spec, piv, dz, tmp, sync, vb)
            for sg in range(2):
                a, z = seg(own, sg)
                for i in range(a, z):
                    wt[i] = 1.0 / (atol[i] + rtolv[i] * max(abs(y[i]), abs(y1[i])))
            err = wrms(sync, vb, dz, 1.0, wt)
            if not math.isfinite(err):
                err = 1e10
            fac = step_factor(err, expo, safety, 0.2, 5.0, rejected_last, hs, sc[_SC_HOLD], sc[_SC_EOLD],
                              PREDICTIVE)
            if err > 1.0:
                stats[ST_REJECTED] += 1
                h = hs * fac
                rejected_last = True
                newton_failed = False
                continue
            if fac < FAC_KEEP:
                fac = 1.0
        # accept (the interpolant also predicts the next step's stages)
        hermite_coeffs(hs, y, K0, y1, Ks[ns - 1], Q, own)
        th = finish_step(events, observe, params, spec, obs_dt, t, hs, tn, y, y1, g0, g1, Q, 3, t_out, Y_out, iout,
                         ev_out, acc, stats, ytmp, gtmp, roots, own)
        if th <= 1.0:
            t = t + th * hs
            tstate[TS_FVALID] = 0.0
            status = EVENT_STOP
            break
        copy_own(K0, Ks[ns - 1], own)
        for k in range(4):
            copy_own(Qp[k], Q[k], own)
        sc[_SC_TPREV] = t
        sc[_SC_HPREV] = hs
        sc[_SC_HOLD] = hs
        sc[_SC_EOLD] = max(err, 1e-4)
        sc[_SC_JAGE] += 1.0
        t = tn
        sc[_SC_CURJAC] = 0.0
        jac_fresh = False
        if not adaptive and iters_max > 2 and sc[_SC_ETA] > 1e-3:
            sc[_SC_RECOMP] = 1.0
        rejected_last = False
        newton_failed = False
        if adaptive:
            h = min(hmax, hs * fac)
        else:
            h = min(sc[_SC_HNOM], 2.0 * h)
    tstate[TS_T] = t
    tstate[TS_H] = h
    return status


@njit(**JIT)
def linear_euler(rhs, jac, events, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats,
                 settings, atol, rtolv, mass, spec, ev_out, sync, vb):
    """State-space implicit-Euler recurrence of paper 001 eq (12), fixed step ``settings[0]``.

    With A = ∂f/∂y evaluated **once** at (t0, y0) and factorised once:
    (M/h − A) Δ_k = f(t_k, y_{k−1}),  y_k = y_{k−1} + Δ_k.
    For a linear system M y' = A y + b(t) this is exactly implicit Euler
    (paper: Ẋ_k = (I − AΔt)⁻¹(A X_{k−1} + B U_k), X_k = X_{k−1} + Δt Ẋ_k), one RHS evaluation and
    one back-substitution per step; for a nonlinear f it is the linearly implicit Euler method
    (a W-method of order 1 for any A).  The last step, shortened to land on ``t_final``, refactorises.
    ``settings[6]`` = k > 0 re-evaluates A every k steps (k = 1: the linearly implicit, Rosenbrock-
    Euler method, usable on nonlinear stiff models); 0 (default) keeps the paper's single factorisation.
    Dense output: linear interpolation (first-order method).
    """
    n = y.size
    own = vb.own
    nev = spec[SP_NEV]
    L, npiv = lin_storage(spec, vb)
    h = settings[SET_STEP]
    max_steps = settings[SET_MAX_STEPS]
    obs_dt = settings[SET_OBS_DT]
    jac_every = int(settings[SET_OPT0])
    t = tstate[TS_T]
    f = tstate[TS_F0:TS_F0 + n]
    og = TS_F0 + n
    g0 = tstate[og:og + nev]
    osc = og + nev
    sc = tstate[osc:osc + _N_SCAL]
    oj = osc + _N_SCAL
    J, LU, piv = matrices(tstate, oj, L, npiv)
    vals = np.zeros(max(jac_values(spec, vb), 1))
    ytmp = np.empty(n)
    ftmp = np.empty(n)
    tmp = np.empty(n)
    y1 = np.empty(n)
    dz = np.empty(n)
    Q = np.empty((2, n))
    g1, gtmp, roots = event_work(nev)
    if tstate[TS_FVALID] == 0.0:
        rhs(t, y, params, f)
        stats[ST_NFEV] += 1
        if nev > 0:
            events(t, y, params, g0)
        evaluate_jacobian(rhs, jac, params, t, y, f, spec, J, vals, ytmp, ftmp, stats, vb)
        sc[_SC_LU_C] = 0.0
        tstate[TS_FVALID] = 1.0
    status = RUNNING
    while True:
        status = loop_gate(t, y, t_out, Y_out, iout, t_pause, t_final, stats, max_steps, own)
        if status != STEP_ON:
            break
        hs, tn = step_end(t, h, t_final, True)
        c = 1.0 / hs
        if jac_every > 0 and stats[ST_STEPS] % jac_every == 0 and stats[ST_STEPS] > 0:
            rhs(t, y, params, f)
            stats[ST_NFEV] += 1
            evaluate_jacobian(rhs, jac, params, t, y, f, spec, J, vals, ytmp, ftmp, stats, vb)
            sc[_SC_LU_C] = 0.0
        if abs(sc[_SC_LU_C] - c) > 1e-9 * c:
            if not factorise(J, LU, c, mass, spec, piv, tmp, stats, sync, vb):
                status = NEWTON_FAILURE
                break
            sc[_SC_LU_C] = c
        rhs(tn, y, params, dz)
        stats[ST_NFEV] += 1
        lin_solve(LU, spec, piv, dz, tmp, sync, vb)
        for sg in range(2):
            a, z = seg(own, sg)
            for i in range(a, z):
                y1[i] = y[i] + dz[i]
        if not all_finite(sync, vb, dz):
            status = NON_FINITE
            break
        if dense_needed(spec, obs_dt, t, tn, t_out, iout):
            copy_own(Q[0], y, own)
            copy_own(Q[1], dz, own)
        th = finish_step(events, observe, params, spec, obs_dt, t, hs, tn, y, y1, g0, g1, Q, 1, t_out, Y_out, iout, ev_out,
                         acc, stats, ytmp, gtmp, roots, own)
        if th <= 1.0:
            t = t + th * hs
            tstate[TS_FVALID] = 0.0
            status = EVENT_STOP
            break
        t = tn
    tstate[TS_T] = t
    tstate[TS_H] = h
    return status
