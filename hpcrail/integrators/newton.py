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
def newton_solve(rhs, params, t, z, base, c, mass, LU, piv, spec, scale, tol, maxit, eta, f, dz, tmp, stats):
    """Simplified Newton for  c·M (z − base) = f(t, z)  (one implicit stage), ``z`` in/out from
    its predictor.  ``LU`` holds the factors of c·M − J.

    Returns ``(code, iterations, eta)``: code ``NEWTON_CONVERGED``, ``NEWTON_SLOW`` or
    ``NEWTON_NONFINITE``; eta the contraction measure to carry to the next solve.  On exit
    ``f`` holds f(t, z) at the last evaluated iterate (the converged ``z`` minus the last
    correction).
    """
    n = z.size
    eta = max(eta, EPS) ** 0.8
    nrm_old = 0.0
    for k in range(maxit):
        rhs(t, z, params, f)
        stats[ST_NFEV] += 1
        if not all_finite(f):
            return NEWTON_NONFINITE, k + 1, eta
        for i in range(n):
            dz[i] = f[i] - c * mass[i] * (z[i] - base[i])
        solve_state_order(LU, spec, piv, dz, tmp)
        stats[ST_NEWTON] += 1
        nrm = rms_norm(dz, scale)
        if not math.isfinite(nrm):
            return NEWTON_NONFINITE, k + 1, eta
        if k > 0:
            theta = nrm / nrm_old
            if theta >= 0.99:
                return NEWTON_SLOW, k + 1, eta
            eta = theta / (1.0 - theta)
            if theta ** (maxit - 1 - k) * eta * nrm > tol:
                return NEWTON_SLOW, k + 1, eta
        for i in range(n):
            z[i] += dz[i]
        if nrm == 0.0 or eta * nrm <= tol:
            return NEWTON_CONVERGED, k + 1, eta
        nrm_old = max(nrm, EPS)
    return NEWTON_SLOW, maxit, eta
