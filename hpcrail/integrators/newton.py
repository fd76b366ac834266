"""Newton machinery shared by the implicit methods: Jacobian evaluation (analytic or finite
differences over column groups) into the bordered-band storage, iteration matrices c·M − J, and a
simplified Newton iteration with Hairer's convergence-rate test.

Jacobian reuse and refactorisation policy (all implicit methods):

* the Jacobian is evaluated at the start and then only when (a) a Newton iteration fails with a
  Jacobian that is not current, or (b) the previous Newton solve needed more than two iterations
  and contracted slowly (rate > 1e-3, as in RADAU5 / scipy Radau);
* the iteration matrix is refactorised only when its coefficient c = γ/h changes (a new step size
  or order) or the Jacobian changed; step-size increases below 20 % are not taken, to keep the
  factors;
* a Newton failure with a current Jacobian halves the step.

Convergence test (Hairer & Wanner, *Solving ODEs II*, §IV.8, RADAU5): with contraction estimate
θ_k = ‖Δ_k‖/‖Δ_{k−1}‖ and η = θ/(1 − θ) (carried over from the previous solve as
η ← max(η, u)^0.8 for the first iteration), the iteration has converged when η‖Δ_k‖ ≤ κ and is
abandoned when θ ≥ 1 or θ^(kmax−k)/(1−θ)·‖Δ_k‖ > κ; κ = max(10u/rtol, min(0.03, √rtol)) unless
given (norms are RMS norms scaled by atol + rtol·|y|).
"""
from __future__ import annotations

import math

from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.common import EPS, all_finite, rms_norm
from hpcrail.integrators.contract import ST_NEWTON, ST_NFEV, ST_NJEV, ST_NLU
from hpcrail.integrators.linalg import (
    SP_HAS_JAC, bordered_lu, fd_values, form_matrix, scatter_values, solve_state_order,
)

NEWTON_CONVERGED = 0
NEWTON_SLOW = 1       #: diverging or predicted not to converge in time
NEWTON_NONFINITE = 2  #: the RHS returned NaN/inf at an iterate


@njit(inline="always", **JIT)
def default_newton_tol(rtol, given):
    if given > 0.0:
        return given
    return max(10.0 * EPS / rtol, min(0.03, math.sqrt(rtol)))


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
def newton_solve(rhs, jac, params, t, z, base, c, mass, J, LU, piv, spec, scale, tol, maxit, eta, f, dz, tmp, vals,
                 ytmp, ftmp, max_updates, stats):
    """Newton for  c·M (z − base) = f(t, z)  (one implicit stage), ``z`` in/out from its predictor.
    ``LU`` holds the factors of c·M − J.

    Simplified Newton (the given factors) while it contracts; when it stalls (θ ≥ 0.99 or
    predicted not to converge within ``maxit``) and ``max_updates`` > 0, the Jacobian is
    re-evaluated at the current iterate and refactorised (a semi-smooth Newton step: the right
    linearisation after the iterate crossed a kink of a piecewise-smooth model such as coupler
    slack or a friction band), at most ``max_updates`` times, each granting ``maxit`` more
    iterations.

    Returns ``(code, iterations, eta, updates)``: code ``NEWTON_CONVERGED``, ``NEWTON_SLOW`` or
    ``NEWTON_NONFINITE``; eta the contraction measure to carry to the next solve; ``updates`` the
    number of Jacobian updates made (``J``/``LU`` then belong to the last iterate).
    """
    n = z.size
    eta = max(eta, EPS) ** 0.8
    nrm_old = 0.0
    kk = 0           # iterations since the last (re)factorisation
    upd = 0
    it = 0
    limit = maxit
    while it < limit:
        rhs(t, z, params, f)
        stats[ST_NFEV] += 1
        it += 1
        if not all_finite(f):
            return NEWTON_NONFINITE, it, eta, upd
        for i in range(n):
            dz[i] = f[i] - c * mass[i] * (z[i] - base[i])
        solve_state_order(LU, spec, piv, dz, tmp)
        stats[ST_NEWTON] += 1
        nrm = rms_norm(dz, scale)
        if not math.isfinite(nrm):
            return NEWTON_NONFINITE, it, eta, upd
        if kk > 0:
            theta = nrm / nrm_old
            stalled = theta >= 0.99
            if not stalled:
                eta = theta / (1.0 - theta)
                stalled = theta ** (limit - it) * eta * nrm > tol
            if stalled:
                if upd >= max_updates:
                    return NEWTON_SLOW, it, eta, upd
                evaluate_jacobian(rhs, jac, params, t, z, f, spec, J, vals, ytmp, ftmp, stats)
                if not factorise(J, LU, c, mass, spec, piv, tmp, stats):
                    return NEWTON_NONFINITE, it, eta, upd + 1
                upd += 1
                limit = it + maxit
                for i in range(n):
                    dz[i] = f[i] - c * mass[i] * (z[i] - base[i])
                solve_state_order(LU, spec, piv, dz, tmp)
                stats[ST_NEWTON] += 1
                nrm = rms_norm(dz, scale)
                if not math.isfinite(nrm):
                    return NEWTON_NONFINITE, it, eta, upd
                kk = 0
                eta = 1.0
        for i in range(n):
            z[i] += dz[i]
        if nrm == 0.0 or (kk > 0 and eta * nrm <= tol) or (kk == 0 and upd == 0 and eta * nrm <= tol):
            return NEWTON_CONVERGED, it, eta, upd
        nrm_old = max(nrm, EPS)
        kk += 1
    return NEWTON_SLOW, it, eta, upd
