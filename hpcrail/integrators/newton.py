"""Newton machinery shared by the implicit methods: Jacobian evaluation (analytic or finite
differences over column groups) into the bordered-band storage, iteration matrices c·M − J, and a
simplified Newton iteration with Hairer's convergence-rate test.

Jacobian reuse and refactorisation policy (BDF/NDF and the ESDIRK family; CVODE's rules,
Hindmarsh et al. 2005 §2.1, see :func:`needs_factorisation`):

* the Jacobian is evaluated at the start, every ``MSBJ`` = 50 accepted steps, and when a Newton
  iteration fails with a Jacobian that is not current (at the iterate where it stalled);
* the iteration matrix c·M − J is refactorised when the Jacobian changed, when its coefficient c
  moved by more than ``DGMAX`` = 30 % from the factorised one, or after a Newton failure; in
  between, Newton runs on the old factors with its correction scaled (:func:`newton_solve`);
* a Newton failure with current factors and Jacobian halves the step.

Radau IIA keeps its own policy (RADAU5's: refactorise on every step-size change, step changes
below 20 % not taken) and the Hairer convergence test below.

Convergence test of RADAU5 (Hairer & Wanner, *Solving ODEs II*, §IV.8): with contraction estimate
θ_k = ‖Δ_k‖/‖Δ_{k−1}‖ and η = θ/(1 − θ) (carried over from the previous solve as
η ← max(η, u)^0.8 for the first iteration), the iteration has converged when η‖Δ_k‖ ≤ κ and is
abandoned when θ ≥ 1 or θ^(kmax−k)/(1−θ)·‖Δ_k‖ > κ; κ = max(10u/rtol, min(0.03, √rtol)) unless
given (norms are RMS norms scaled by atol + rtol·|y|).  BDF and ESDIRK use CVODE's test
(:func:`newton_solve`) with κ = ``NEWTON_TOL_ERR`` = 0.1 of the error-test unit unless given.
"""
from __future__ import annotations

import math

from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.common import EPS
from hpcrail.integrators.contract import ST_NEWTON, ST_NFEV, ST_NJEV, ST_NLU
from hpcrail.integrators.linalg import (
    SP_HAS_JAC, bordered_lu, fd_values, form_matrix, scatter_values, solve_state_order,
)

NEWTON_CONVERGED = 0
NEWTON_SLOW = 1       #: diverging or predicted not to converge in time
NEWTON_NONFINITE = 2  #: the RHS returned NaN/inf at an iterate

#: Jacobian age (accepted steps) after which it is re-evaluated (CVODE's MSBJ is 51)
MSBJ = 50
#: relative change of the iteration-matrix coefficient c that forces a refactorisation (CVODE's DGMAX)
DGMAX = 0.3
#: Newton tolerance of the BDF/ESDIRK methods on the error-test norm (CVODE's 0.1)
NEWTON_TOL_ERR = 0.1


@njit(inline="always", **JIT)
def default_newton_tol(rtol, given):
    if given > 0.0:
        return given
    return max(10.0 * EPS / rtol, min(0.03, math.sqrt(rtol)))


@njit(inline="always", **JIT)
def scaled_norm(x, s, wt):
    """``x ← s·x`` in place and its weighted RMS norm sqrt(mean((x_i·wt_i)²)) (four partial sums:
    the adds do not wait for each other)."""
    n = x.size
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    m = n - n % 4
    for i in range(0, m, 4):
        v0 = x[i] * s
        v1 = x[i + 1] * s
        v2 = x[i + 2] * s
        v3 = x[i + 3] * s
        x[i] = v0
        x[i + 1] = v1
        x[i + 2] = v2
        x[i + 3] = v3
        v0 *= wt[i]
        v1 *= wt[i + 1]
        v2 *= wt[i + 2]
        v3 *= wt[i + 3]
        a0 += v0 * v0
        a1 += v1 * v1
        a2 += v2 * v2
        a3 += v3 * v3
    for i in range(m, n):
        v = x[i] * s
        x[i] = v
        v *= wt[i]
        a0 += v * v
    return math.sqrt(((a0 + a1) + (a2 + a3)) / n)


@njit(inline="always", **JIT)
def newton_tol_err(given):
    """Newton tolerance of the BDF/ESDIRK methods: ``given`` if > 0, else ``NEWTON_TOL_ERR``."""
    return given if given > 0.0 else NEWTON_TOL_ERR


@njit(inline="always", **JIT)
def needs_factorisation(c, c_lu):
    """True if the factors of c_lu·M − J (c_lu = 0: none) are too far from c·M − J (|c/c_lu − 1| > DGMAX)."""
    return c_lu == 0.0 or abs(c - c_lu) > DGMAX * c_lu


@njit(**JIT)
def evaluate_jacobian(rhs, jac, params, t, y, f, spec, J, vals, ytmp, ftmp, stats):
    """Fill the Jacobian storage ``J`` at (t, y): the model's ``jac`` or finite differences
    (``f`` must then hold f(t, y))."""
    if spec[SP_HAS_JAC] != 0:
        jac(t, y, params, vals)
    else:
        stats[ST_NFEV] += fd_values(rhs, params, t, y, f, spec, vals, ytmp, ftmp)
    scatter_values(vals, spec, J)
    stats[ST_NJEV] += 1


@njit(**JIT)
def factorise(J, LU, c, mass, spec, piv, tmp, stats):
    """LU of the iteration matrix c·M − J (c real or complex); False if singular."""
    form_matrix(J, LU, c, mass, spec)
    stats[ST_NLU] += 1
    return bordered_lu(LU, spec, piv, tmp)


@njit(**JIT)
def newton_solve(rhs, jac, params, t, z, base, c, c_lu, mass, J, LU, piv, spec, wt, tol, maxit, rate, f, dz, tmp,
                 vals, ytmp, ftmp, max_updates, stats):
    """Newton for  c·M (z − base) = f(t, z)  (one implicit stage), ``z`` in/out from its predictor.
    ``LU`` holds the factors of c_lu·M − J (``c_lu`` may differ from ``c``: LU reuse across step-size
    changes; the correction is then scaled by 2·c_lu/(c_lu + c), CVODE's compromise between the
    stiff and the non-stiff components).

    Convergence (CVODE's test, Hindmarsh et al. 2005 §2.1): with the contraction-rate estimate
    ``rate`` ← max(0.3·rate, ‖Δ_k‖/‖Δ_{k−1}‖), carried from the previous solve for the first
    iteration (1 after a refactorisation), the iteration has converged when ‖Δ_k‖·min(1, rate) ≤
    ``tol``.  It stalls when the rate reaches 0.9 or ‖Δ_k‖·rate^(kmax−k)/(1 − rate) > tol (Hairer &
    Wanner II §IV.8).  When it stalls and ``max_updates`` > 0, the Jacobian is re-evaluated at the
    current iterate and refactorised at ``c`` (a semi-smooth Newton step: the right linearisation
    after the iterate crossed a kink of a piecewise-smooth model such as coupler slack or a
    friction band), at most ``max_updates`` times, each granting ``maxit`` more iterations.

    ``wt``: float64[n] error weights 1/(atol_i + rtol_i·|y_i|) of the RMS norms.

    Returns ``(code, iterations, rate, updates)``: code ``NEWTON_CONVERGED``, ``NEWTON_SLOW`` or
    ``NEWTON_NONFINITE``; ``updates`` the number of Jacobian updates made (``J``/``LU`` then belong
    to the last iterate and to ``c``).
    """
    n = z.size
    scl = 1.0 if c_lu == c else 2.0 * c_lu / (c_lu + c)
    nrm_old = 0.0
    kk = 0           # iterations since the last (re)factorisation
    upd = 0
    it = 0
    limit = maxit
    while it < limit:
        rhs(t, z, params, f)
        stats[ST_NFEV] += 1
        it += 1
        for i in range(n):
            dz[i] = f[i] - c * mass[i] * (z[i] - base[i])
        solve_state_order(LU, spec, piv, dz, tmp)
        stats[ST_NEWTON] += 1
        # scaled correction and its norm in one pass (a NaN/inf in f shows up here: no separate check)
        nrm = scaled_norm(dz, scl, wt)
        if not math.isfinite(nrm):
            return NEWTON_NONFINITE, it, rate, upd
        if kk > 0:
            theta = nrm / nrm_old
            rate = max(0.3 * rate, theta)
            stalled = rate >= 0.9
            if not stalled:
                stalled = rate ** (limit - it) / (1.0 - rate) * nrm > tol
            if stalled:
                if upd >= max_updates:
                    return NEWTON_SLOW, it, rate, upd
                evaluate_jacobian(rhs, jac, params, t, z, f, spec, J, vals, ytmp, ftmp, stats)
                if not factorise(J, LU, c, mass, spec, piv, tmp, stats):
                    return NEWTON_NONFINITE, it, rate, upd + 1
                upd += 1
                scl = 1.0
                limit = it + maxit
                for i in range(n):
                    dz[i] = f[i] - c * mass[i] * (z[i] - base[i])
                solve_state_order(LU, spec, piv, dz, tmp)
                stats[ST_NEWTON] += 1
                nrm = scaled_norm(dz, 1.0, wt)
                if not math.isfinite(nrm):
                    return NEWTON_NONFINITE, it, rate, upd
                kk = 0
                rate = 1.0
        for i in range(n):
            z[i] += dz[i]
        if nrm == 0.0 or nrm * min(1.0, rate) <= tol:
            return NEWTON_CONVERGED, it, rate, upd
        nrm_old = max(nrm, EPS)
        kk += 1
    return NEWTON_SLOW, it, rate, upd
