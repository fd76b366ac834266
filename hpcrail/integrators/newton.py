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
from hpcrail.integrators.collectives import MR_G0, MR_NG, OW_MR, OW_P, seg, wrms
from hpcrail.integrators.common import EPS
from hpcrail.integrators.contract import SET_NEWTON_JUPD, SET_NEWTON_MAXITER, ST_NEWTON, ST_NFEV, ST_NJEV, ST_NLU
from hpcrail.integrators.linalg import (
    SP_HAS_JAC, SP_N, SP_NNZ, SP_OFF_DEST, band_lu, band_solve, bordered_lu, fd_values, form_matrix, lin_size,
    scatter_values, solve_state_order, spec_lin_size_py,
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
#: the Jacobian and LU bookkeeping of the methods under CVODE's reuse policy (BDF/NDF, multirate BDF, the ESDIRK
#: family): a view ``js`` of six of their scalars — the factorised coefficient c_lu (0: none), "the Jacobian is
#: current" (evaluated during this step), the Newton rate carried between solves, "re-evaluate it", "it is
#: valid", its age in accepted steps
JS_LU_C, JS_CURJAC, JS_ETA, JS_RECOMP, JS_JVALID, JS_JAGE = range(6)
N_JS = 6


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


@njit(inline="always", **JIT)
def newton_settings(settings, maxit_default):
    """``(maxit, max_updates)``: Newton iterations per solve (``maxit_default`` when not given) and Jacobian
    updates within a solve, from a kernel's ``settings``."""
    maxit = int(settings[SET_NEWTON_MAXITER]) if settings[SET_NEWTON_MAXITER] > 0.0 else maxit_default
    return maxit, int(settings[SET_NEWTON_JUPD])


@njit(inline="always", **JIT)
def jacobian_reset(js):
    """The bookkeeping ``js`` of a method's first call: no Jacobian, no factors, rate 1."""
    for k in range(N_JS):
        js[k] = 0.0
    js[JS_ETA] = 1.0


@njit(**JIT)
def jacobian_if_due(rhs, jac, params, t, y, f, spec, J, vals, ytmp, ftmp, js, stats, vb):
    """Evaluate the Jacobian at (t, y) if it is due (none yet, requested, or ``MSBJ`` accepted steps old; f(t, y)
    into ``f`` first when it is taken by finite differences); returns True if it was evaluated (the factors are
    then stale: ``js[JS_LU_C]`` = 0)."""
    if js[JS_JVALID] == 0.0 or js[JS_RECOMP] != 0.0 or js[JS_JAGE] >= MSBJ:
        jacobian_at_stall(rhs, jac, params, t, y, f, spec, J, vals, ytmp, ftmp, js, stats, vb)
        js[JS_JVALID] = 1.0
        js[JS_RECOMP] = 0.0
        return True
    return False


@njit(**JIT)
def jacobian_at_stall(rhs, jac, params, t, z, f, spec, J, vals, ytmp, ftmp, js, stats, vb):
    """The Jacobian at (t, z) (f(t, z) into ``f`` first when it is taken by finite differences), recorded in
    ``js`` as current and new, its factors stale.  Also after a Newton failure with a Jacobian that was not
    current, at the iterate where it stalled (a kink of a non-smooth model — coupler slack, a friction band —
    may lie between the predictor and the solution)."""
    if needs_f_for_jacobian(spec, vb):
        rhs(t, z, params, f)
        stats[ST_NFEV] += 1
    evaluate_jacobian(rhs, jac, params, t, z, f, spec, J, vals, ytmp, ftmp, stats, vb)
    js[JS_CURJAC] = 1.0
    js[JS_LU_C] = 0.0
    js[JS_JAGE] = 0.0


@njit(**JIT)
def factorise_at(J, LU, c, mass, spec, piv, tmp, js, stats, sync, vb):
    """Factorise c·M − J into ``LU`` and record it in ``js`` (c_lu = c and the rate reset, or no factors if the
    matrix is singular); returns False if singular."""
    if not factorise(J, LU, c, mass, spec, piv, tmp, stats, sync, vb):
        js[JS_LU_C] = 0.0
        return False
    js[JS_LU_C] = c
    js[JS_ETA] = 1.0
    return True


@njit(inline="always", **JIT)
def record_newton(js, code, rate, upd, c):
    """Record a Newton solve of :func:`newton_solve` in ``js``: its rate, and when it updated the Jacobian
    (``upd`` > 0) the new factors at ``c`` (none if the last update failed)."""
    js[JS_ETA] = rate
    if upd > 0:
        js[JS_CURJAC] = 1.0
        js[JS_JAGE] = 0.0
        js[JS_LU_C] = c if code != NEWTON_NONFINITE else 0.0


# ---- the linear-solver hook ----------------------------------------------------------------------
# The implicit kernels reach the Jacobian and the iteration matrix only through the functions below.  One block
# (``vb.sspec`` empty) uses the bordered-band LU of :mod:`~hpcrail.integrators.linalg` on the kernel's ``spec``
# (analytic Jacobian or finite differences over column groups); blocks on several workers use the partitioned
# (SPIKE) LU of :mod:`~hpcrail.integrators.spmd_linalg` on ``vb.sspec`` with the model's analytic Jacobian.  The
# bordered band may carry local blocks (a mixed train's multibody wagons, issue 27), eliminated into the band by
# the same LU (``JacobianPattern.blocks``, selected by the layout arrays): no method changes.
def lin_storage_py(spec, sspec=None, P: int = 1) -> tuple[int, int]:
    """:func:`lin_storage` in Python: for one block (``sspec`` None or empty) or ``P`` blocks."""
    if sspec is None or len(sspec) == 0:
        return spec_lin_size_py(spec), int(spec[SP_N])
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


# ---- a run of blocks' sub-band (the multirate BDF's re-integrated runs) --------------------------------------
# ``sub`` int64[6] = (a, z, ml, mu, ba, bz): the states [a, z) of the blocks [ba, bz), the band's ml, mu; the
# run's factors live in the LU storage's columns a..z-1 (local indices), its pivots in piv[a:z].  Empty: the
# kernel's whole linear system (:func:`factorise`, :func:`lin_solve`).
SUB_A, SUB_Z, SUB_ML, SUB_MU, SUB_BA, SUB_BZ = range(6)


@njit(**JIT)
def subband_jacobian(jac, params, t, z, spec, J, vals, own, sub, stats):
    """Re-evaluate the Jacobian rows of the run of blocks ``sub`` (the model's ``jac`` with ``act`` on the run;
    the rows' value slots from the layout's multirate description) into the band storage ``J``."""
    ba = sub[SUB_BA]
    bz = sub[SUB_BZ]
    mro = own[OW_MR]
    ng = own[mro + MR_NG]
    P = own[OW_P]
    k0 = own[mro + MR_G0 + ng + ba]
    k1 = own[mro + MR_G0 + ng + P + bz - 1]
    jac(t, z, params, vals)
    od = spec[SP_OFF_DEST]
    for k in range(k0, k1):
        d = spec[od + k]
        if d >= 0:
            J[d] = 0.0
    for k in range(k0, k1):
        d = spec[od + k]
        if d >= 0:
            J[d] += vals[k]
    stats[ST_NJEV] += 1


@njit(**JIT)
def subband_factorise(J, LU, piv, c, mass, sub, stats):
    """Band LU of c·M − J restricted to the run's states (the columns of the band storage ``J`` from a on,
    factorised in ``LU`` with local indices); False if singular."""
    a = sub[SUB_A]
    z = sub[SUB_Z]
    ml = sub[SUB_ML]
    mu = sub[SUB_MU]
    w = 2 * ml + mu + 1
    kv = ml + mu
    o = a * w
    for k in range(o, z * w):
        LU[k] = -J[k]
    for i in range(a, z):
        LU[i * w + kv] += c * mass[i]
    stats[ST_NLU] += 1
    return band_lu(LU[o:z * w], z - a, ml, mu, piv[a:z])


@njit(inline="always", **JIT)
def subband_solve(LU, piv, dz, sub):
    """dz ← (c_lu·M − J)⁻¹ dz on the run's states with its sub-band factors."""
    a = sub[SUB_A]
    z = sub[SUB_Z]
    ml = sub[SUB_ML]
    mu = sub[SUB_MU]
    w = 2 * ml + mu + 1
    band_solve(LU[a * w:z * w], z - a, ml, mu, piv[a:z], dz[a:z])


@njit(inline="always", **JIT)
def subband_norm(dz, scl, wt, sub):
    """dz ← scl·dz on the run's states and its weighted RMS norm there."""
    a = sub[SUB_A]
    z = sub[SUB_Z]
    s = 0.0
    for i in range(a, z):
        v = dz[i] * scl
        dz[i] = v
        v *= wt[i]
        s += v * v
    return math.sqrt(s / (z - a))


@njit(**JIT)
def _sys_refresh(rhs, jac, params, t, z, f, c, mass, J, LU, piv, spec, tmp, vals, ytmp, ftmp, sub, stats, sync, vb):
    """The Jacobian at the iterate (``f`` = f(t, z)) and the LU at ``c``: the kernel's, or the run's rows and
    sub-band; False if singular."""
    if sub.size == 0:
        evaluate_jacobian(rhs, jac, params, t, z, f, spec, J, vals, ytmp, ftmp, stats, vb)
        return factorise(J, LU, c, mass, spec, piv, tmp, stats, sync, vb)
    subband_jacobian(jac, params, t, z, spec, J, vals, vb.own, sub, stats)
    return subband_factorise(J, LU, piv, c, mass, sub, stats)


@njit(**JIT)
def newton_solve(rhs, jac, params, t, z, base, c, c_lu, mass, J, LU, piv, spec, wt, tol, maxit, rate, f, dz, tmp,
                 vals, ytmp, ftmp, max_updates, stats, sync, vb):
    """Newton for  c·M (z − base) = f(t, z)  (one implicit stage), ``z`` in/out from its predictor.
    ``LU`` holds the factors of c_lu·M − J (``c_lu`` may differ from ``c``: LU reuse across step-size
    changes; the correction is then scaled by 2·c_lu/(c_lu + c), CVODE's compromise between the
    stiff and the non-stiff components).  The iteration is :func:`newton_iterate` on the kernel's linear
    solver (:func:`factorise`, :func:`lin_solve`) and the RMS norm over every state.

    ``wt``: float64[n] error weights 1/(atol_i + rtol_i·|y_i|) of the RMS norms.  On blocks every vector
    operation is on this worker's states and every norm a collective (``sync``, ``vb``:
    :mod:`~hpcrail.integrators.collectives`).

    Returns ``(code, iterations, rate, updates)``: code ``NEWTON_CONVERGED``, ``NEWTON_SLOW`` or
    ``NEWTON_NONFINITE``; ``updates`` the number of Jacobian updates made (``J``/``LU`` then belong
    to the last iterate and to ``c``).
    """
    return newton_iterate(rhs, jac, params, t, z, base, c, c_lu, mass, J, LU, piv, spec, wt, tol, maxit, rate, f,
                          dz, tmp, vals, ytmp, ftmp, max_updates, stats, sync, vb, vb.own, vb.own[:0])


@njit(**JIT)
def newton_iterate(rhs, jac, params, t, z, base, c, c_lu, mass, J, LU, piv, spec, wt, tol, maxit, rate, f, dz, tmp,
                   vals, ytmp, ftmp, max_updates, stats, sync, vb, own, sub):
    """Simplified Newton for  c·M (z − base) = f(t, z)  on the states ``own`` selects, on the kernel's linear
    system (``sub`` empty: :func:`newton_solve`) or on a run of blocks' sub-band (``sub`` = (a, z, ml, mu, ba,
    bz): the multirate BDF's re-integrated runs, their norms over the run's states).

    Convergence (CVODE's test, Hindmarsh et al. 2005 §2.1): with the contraction-rate estimate
    ``rate`` ← max(0.3·rate, ‖Δ_k‖/‖Δ_{k−1}‖), carried from the previous solve for the first
    iteration (1 after a refactorisation), the iteration has converged when ‖Δ_k‖·min(1, rate) ≤
    ``tol``.  It stalls when the rate reaches 0.9 or ‖Δ_k‖·rate^(kmax−k)/(1 − rate) > tol (Hairer &
    Wanner II §IV.8).  When it stalls and ``max_updates`` > 0, the Jacobian is re-evaluated at the
    current iterate and refactorised at ``c`` (a semi-smooth Newton step: the right linearisation
    after the iterate crossed a kink of a piecewise-smooth model such as coupler slack or a
    friction band), at most ``max_updates`` times, each granting ``maxit`` more iterations.

    Returns ``(code, iterations, rate, updates)`` as :func:`newton_solve`.
    """
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
        if sub.size == 0:
            lin_solve(LU, spec, piv, dz, tmp, sync, vb)
        else:
            subband_solve(LU, piv, dz, sub)
        stats[ST_NEWTON] += 1
        # scaled correction and its norm in one pass (a NaN/inf in f shows up here: no separate check)
        nrm = wrms(sync, vb, dz, scl, wt) if sub.size == 0 else subband_norm(dz, scl, wt, sub)
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
                if not _sys_refresh(rhs, jac, params, t, z, f, c, mass, J, LU, piv, spec, tmp, vals, ytmp, ftmp, sub,
                                    stats, sync, vb):
                    return NEWTON_NONFINITE, it, rate, upd + 1
                upd += 1
                scl = 1.0
                limit = it + maxit
                _residual(f, c, mass, z, base, dz, own)
                if sub.size == 0:
                    lin_solve(LU, spec, piv, dz, tmp, sync, vb)
                else:
                    subband_solve(LU, piv, dz, sub)
                stats[ST_NEWTON] += 1
                nrm = wrms(sync, vb, dz, 1.0, wt) if sub.size == 0 else subband_norm(dz, 1.0, wt, sub)
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
