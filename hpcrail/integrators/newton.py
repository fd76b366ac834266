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

import numpy as np

from hpcrail._numba import JIT
from hpcrail.integrators.collectives import OW_P, seg, wrms
from hpcrail.integrators.common import EPS
from hpcrail.integrators.contract import ST_NEWTON, ST_NFEV, ST_NJEV, ST_NLU
from hpcrail.integrators.linalg import (
    SP_HAS_JAC, SP_ML, SP_MU, SP_N, SP_NB, SP_NC, SP_NNZ, bordered_lu, fd_values, form_matrix, lin_size,
    lin_size_py, scatter_values, solve_state_order,
)
from hpcrail.integrators.spmd_linalg import (
    SS_ML, SS_MU, SS_NC, SS_NG, SS_NNZ, spmd_factorise, spmd_jacobian, spmd_lin_size, spmd_lin_size_py, spmd_solve,
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
def newton_tol_err(given):
    """Newton tolerance of the BDF/ESDIRK methods: ``given`` if > 0, else ``NEWTON_TOL_ERR``."""
    return given if given > 0.0 else NEWTON_TOL_ERR


@njit(inline="always", **JIT)
def needs_factorisation(c, c_lu):
    """True if the factors of c_lu·M − J (c_lu = 0: none) are too far from c·M − J (|c/c_lu − 1| > DGMAX)."""
    return c_lu == 0.0 or abs(c - c_lu) > DGMAX * c_lu


# ---- the linear-solver hook ----------------------------------------------------------------------
# The implicit kernels reach the Jacobian and the iteration matrix only through the functions below.  One block
# (``vb.sspec`` empty) uses the bordered-band LU of :mod:`~hpcrail.integrators.linalg` on the kernel's ``spec``
# (analytic Jacobian or finite differences over column groups); blocks on several workers use the partitioned
# (SPIKE) LU of :mod:`~hpcrail.integrators.spmd_linalg` on ``vb.sspec`` with the model's analytic Jacobian.  A
# further structure (a fixed-pattern sparse LU for mixed trains, issue 27) is one more branch here, selected by
# the layout arrays, and no method changes.
def lin_storage_py(spec, sspec=None, P: int = 1) -> tuple[int, int]:
    """:func:`lin_storage` in Python: for one block (``sspec`` None or empty) or ``P`` blocks."""
    if sspec is None or len(sspec) == 0:
        return (lin_size_py(int(spec[SP_NC]), int(spec[SP_ML]), int(spec[SP_MU]), int(spec[SP_NB])),
                int(spec[SP_N]))
    nc, ng, ml, mu = int(sspec[SS_NC]), int(sspec[SS_NG]), int(sspec[SS_ML]), int(sspec[SS_MU])
    return spmd_lin_size_py(nc, ng, ml, mu, P), nc + ng + P * (ml + mu)


@njit(inline="always", **JIT)
def lin_storage(spec, vb):
    """``(L, npiv)``: length of one matrix storage (J, LU) and of the pivots."""
    ss = vb.sspec
    if ss.size == 0:
        return lin_size(spec), spec[SP_N]
    ml = ss[SS_ML]
    mu = ss[SS_MU]
    return spmd_lin_size(ss), ss[SS_NC] + ss[SS_NG] + vb.own[OW_P] * (ml + mu)


@njit(inline="always", **JIT)
def matrices(tstate, oj, L, npiv):
    """Views of a method's Jacobian, LU and pivot storage in its ``tstate`` from offset ``oj`` (sizes from
    :func:`lin_storage`)."""
    return tstate[oj:oj + L], tstate[oj + L:oj + 2 * L], tstate[oj + 2 * L:oj + 2 * L + npiv].view(np.int64)


@njit(inline="always", **JIT)
def jac_values(spec, vb):
    """Length of the Jacobian value array (the pattern's slots)."""
    return spec[SP_NNZ] if vb.sspec.size == 0 else vb.sspec[SS_NNZ]


@njit(inline="always", **JIT)
def needs_f_for_jacobian(spec, vb):
    """True if the Jacobian is taken by finite differences (which need f(t, y) at the point)."""
    return vb.sspec.size == 0 and spec[SP_HAS_JAC] == 0


@njit(**JIT)
def evaluate_jacobian(rhs, jac, params, t, y, f, spec, J, vals, ytmp, ftmp, stats, vb):
    """Fill the Jacobian storage ``J`` at (t, y): the model's ``jac`` or finite differences
    (``f`` must then hold f(t, y)); collective on blocks."""
    if vb.sspec.size != 0:
        spmd_jacobian(jac, params, t, y, vb.sspec, vb.own, J, vals, stats)
        return
    if spec[SP_HAS_JAC] != 0:
        jac(t, y, params, vals)
    else:
        stats[ST_NFEV] += fd_values(rhs, params, t, y, f, spec, vals, ytmp, ftmp)
    scatter_values(vals, spec, J)
    stats[ST_NJEV] += 1


@njit(**JIT)
def factorise(J, LU, c, mass, spec, piv, tmp, stats, sync, vb):
    """LU of the iteration matrix c·M − J (c real or complex: one block only); False if singular (on blocks
    the same answer on every worker)."""
    if vb.sspec.size != 0:
        return spmd_factorise(sync, vb, J, LU, c, mass, vb.sspec, vb.own, piv, tmp, stats)
    return factorise_one_block(J, LU, c, mass, spec, piv, tmp, stats)


@njit(**JIT)
def factorise_one_block(J, LU, c, mass, spec, piv, tmp, stats):
    """The bordered-band LU of c·M − J of one block (c real or complex: Radau IIA's complex pair)."""
    form_matrix(J, LU, c, mass, spec)
    stats[ST_NLU] += 1
    return bordered_lu(LU, spec, piv, tmp)


@njit(**JIT)
def lin_solve(LU, spec, piv, x, tmp, sync, vb):
    """x ← (c·M − J)⁻¹ x in place (state order) with the factors of :func:`factorise` (collective on
    blocks)."""
    if vb.sspec.size != 0:
        spmd_solve(sync, vb, LU, vb.sspec, vb.own, piv, x)
    else:
        solve_state_order(LU, spec, piv, x, tmp)


@njit(inline="always", **JIT)
def _residual(f, c, mass, z, base, dz, own):
    """dz ← f − c·M (z − base) on this worker's states."""
    for s in range(2):
        a, zz = seg(own, s)
        for i in range(a, zz):
            dz[i] = f[i] - c * mass[i] * (z[i] - base[i])


@njit(**JIT)
def newton_solve(rhs, jac, params, t, z, base, c, c_lu, mass, J, LU, piv, spec, wt, tol, maxit, rate, f, dz, tmp,
                 vals, ytmp, ftmp, max_updates, stats, sync, vb):
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

    ``wt``: float64[n] error weights 1/(atol_i + rtol_i·|y_i|) of the RMS norms.  On blocks every vector
    operation is on this worker's states and every norm a collective (``sync``, ``vb``:
    :mod:`~hpcrail.integrators.collectives`).

    Returns ``(code, iterations, rate, updates)``: code ``NEWTON_CONVERGED``, ``NEWTON_SLOW`` or
    ``NEWTON_NONFINITE``; ``updates`` the number of Jacobian updates made (``J``/``LU`` then belong
    to the last iterate and to ``c``).
    """
    own = vb.own
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
        _residual(f, c, mass, z, base, dz, own)
        lin_solve(LU, spec, piv, dz, tmp, sync, vb)
        stats[ST_NEWTON] += 1
        # scaled correction and its norm in one pass (a NaN/inf in f shows up here: no separate check)
        nrm = wrms(sync, vb, dz, scl, wt)
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
                evaluate_jacobian(rhs, jac, params, t, z, f, spec, J, vals, ytmp, ftmp, stats, vb)
                if not factorise(J, LU, c, mass, spec, piv, tmp, stats, sync, vb):
                    return NEWTON_NONFINITE, it, rate, upd + 1
                upd += 1
                scl = 1.0
                limit = it + maxit
                _residual(f, c, mass, z, base, dz, own)
                lin_solve(LU, spec, piv, dz, tmp, sync, vb)
                stats[ST_NEWTON] += 1
                nrm = wrms(sync, vb, dz, 1.0, wt)
                if not math.isfinite(nrm):
                    return NEWTON_NONFINITE, it, rate, upd
                kk = 0
                rate = 1.0
        for s in range(2):
            a, zz = seg(own, s)
            for i in range(a, zz):
                z[i] += dz[i]
        if nrm == 0.0 or nrm * min(1.0, rate) <= tol:
            return NEWTON_CONVERGED, it, rate, upd
        nrm_old = max(nrm, EPS)
        kk += 1
    return NEWTON_SLOW, it, rate, upd
