"""Self-adjusting multirate BDF on blocks of the state: one global step, then the blocks whose local error
failed re-integrated with their own, shorter steps ("local time stepping" of hidden-vehicle blocks).

A long train has a draft gear entering or leaving its slack somewhere at almost every instant: a method with
one global step size resolves every such local event for the whole train, and its step count grows with the
train length (docs/performance.md, "Cost against train length").  The strategy here is that of Savcenco,
Hundsdorfer & Verwer (2007) with the BDF of order 1-2 of :mod:`hpcrail.integrators.bdf` as the single-rate
method (Bonaventura, Casella, Delpopolo & Ranade 2018 do the same with TR-BDF2):

1. **Global step** t → t + H of every state (one Newton on the whole bordered-band Jacobian, exactly the
   ``bdf`` kernel's step), and its error estimate per block: the RMS norm of the block's states
   ``E_b = ‖C_k (y_{n+1} − y⁽⁰⁾)‖_b`` (and of the global states).
2. Every block with E_b ≤ 1 is **latent**: its values at t + H are accepted.  The blocks with E_b > 1 (and their
   neighbours with E_b > ``BUFFER``, so that the interface between a refined and a latent block lies where the
   global step was accurate) are **active**; if the global states fail, or more than ``refine_fraction`` of the
   blocks are active, the global step is rejected and H reduced as by single-rate BDF.
3. Each maximal run of active blocks is **re-integrated** from t to t + H by the same BDF on its own states
   with its own adaptive steps h ≤ H, starting from the global history rescaled to h: the states the run's
   functions read outside it (the halo: the last states of the block ahead, the first states of the block
   behind, the states every block reads and the global states) are taken from the global step's interpolating
   polynomial at each stage time — the latent solution, accurate by the error test.  The run's Newton
   (:func:`~hpcrail.integrators.newton.newton_iterate`, the iteration of every implicit kernel, on the run's
   linear system) uses the band of the global Jacobian restricted to its states with its own LU, re-evaluating
   the run's rows only (the model's functions evaluate the blocks ``act`` says,
   :mod:`~hpcrail.integrators.collectives`); the factors are reused while the run's c = α/h stays within
   ``run_lu_change`` of theirs and, with ``run_lu_keep``, by the same run at later global steps while the global
   Jacobian is unchanged (measured: fewer LUs barely move the CPU — the runs' sub-steps, their right-hand
   sides and Newton iterations, cost — and loose reuse lets Newton stop on a wrong iterate, so both stay at
   CVODE's 0.3 without reuse by default; docs/performance.md).
4. The global history is updated with the final values of every state (latent: the global step's; active: the
   re-integration's), so that the next global step interpolates accepted values on both.  The next H is chosen
   from the latent blocks (and the global states) only: active blocks do not hold the whole train back.

The observer sees every accepted step of every block: the latent blocks at the global step ends, the active
runs at each of their steps (their envelopes over their own steps); samples of the active runs come from their
own dense output.

Accuracy of the coupling: a latent block next to an active run was integrated with the global step's values of
its neighbour, the run with the latent block's interpolant; the buffer keeps the interface where both are within
the tolerance.  With one block (or no multirate description in the layout) the method is the ``bdf`` kernel's
BDF of order ≤ 2 with the per-block error norm.  One worker only (the serial bordered-band linear algebra on the
whole state); events and observation intervals are not supported.

The global step and the runs' steps are the BDF step of :mod:`hpcrail.integrators.bdf` (its predictor,
corrector with the Jacobian/LU policy, error vector, history update, order and step selection), called on the
whole vector or on the run's states; only the per-block error test and the refinement are this module's.

Sources: V. Savcenco, W. Hundsdorfer, J.G. Verwer, "A multirate time stepping strategy for stiff ordinary
differential equations", BIT 47 (2007) 137-155; L. Bonaventura, F. Casella, L. Delpopolo, A. Ranade, "A self
adjusting multirate algorithm based on the TR-BDF2 method", MOX report 08/2018 (Comput. Math. Appl. 2020);
Shampine & Reichelt 1997 (the BDF formulation, :mod:`hpcrail.integrators.bdf`).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.bdf import (
    _bdf_dense, bdf_change, bdf_coefficients, bdf_correct, bdf_error_vector, bdf_predict, bdf_reject, bdf_resume, bdf_select,
    bdf_step_begin, bdf_update_history, bdf_work, change_D,
)
from hpcrail.integrators.collectives import (
    MR_G0, MR_HA, MR_HB, MR_NG, NORM_BLOCKS, NORM_LATENT, OW_BHI, OW_BLO, OW_BOUNDS, OW_G0, OW_MR, OW_N, OW_P,
    block_errors, copy_own, seg, wsumsq,
)
from hpcrail.integrators.common import (
    dense_needed, EPS, event_work, finish_step, loop_gate, step_factor, STEP_ON, step_settings,
)
from hpcrail.integrators.contract import (
    RUNNING, SET_NEWTON_TOL, SET_OPT0, SET_STEP, ST_NFAIL, ST_NJEV, ST_REJECTED, ST_STEPS, TS_F0, TS_H,
    TS_T,
)
from hpcrail.integrators.linalg import SP_ML, SP_MU, SP_PERM_FROM
from hpcrail.integrators.newton import (
    DGMAX, N_JS, NEWTON_CONVERGED, NEWTON_NONFINITE, lin_storage, lin_storage_py, matrices,
    newton_iterate, newton_settings, newton_tol_err, subband_factorise,
)

#: rows of the BDF history kept (orders ≤ 2: D_0..D_2 and the two correction rows)
ROWS = 5
MAX_ORDER_MR = 2
#: neighbours of a failing block are refined too when their own error estimate exceeds this
BUFFER = 0.5
#: largest step growth of the global step right after a step with re-integrated blocks
GROW_AFTER_REFINE = 2.0
_N_SCAL = 16
#: the first eight slots are the bdf kernel's (its helpers read them), then the re-integration counters
_SC_ORDER, _SC_NEQ, _SC_LU_C, _SC_CURJAC, _SC_ETA, _SC_RECOMP, _SC_JVALID, _SC_JAGE, _SC_SUBSTEPS, \
    _SC_SUBREJ, _SC_REFINED, _SC_BLOCKSTEPS = range(12)


def mrbdf_state_size(n: int, spec, sspec=None, P: int = 1) -> int:
    """t, h, init, f (n), scalars, D and the runs' history (2·ROWS·n), J, LU, the runs' LU, pivots (2)."""
    L, npiv = lin_storage_py(spec, sspec, P)
    return 3 + n + _N_SCAL + 2 * ROWS * n + 3 * L + 2 * npiv


def block_slot_ranges(rows: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(slot_lo, slot_hi)`` int64[P]: per block b the Jacobian value slots ``[slot_lo[b], slot_hi[b])`` holding
    every entry whose row is one of the block's states ``[bounds[b], bounds[b+1])`` (``rows`` int64[nnz] of the
    pattern, −1 for placeholders).  Raises ``ValueError`` if the slots of the blocks' rows are not contiguous
    and in block order (a multirate method re-evaluates a run of blocks' rows by slot range)."""
    rows = np.asarray(rows, np.int64)
    bounds = np.asarray(bounds, np.int64)
    P = bounds.size - 1
    blk = np.searchsorted(bounds, rows, side="right") - 1
    blk[(rows < 0) | (rows >= bounds[-1])] = -1
    lo = np.zeros(P, np.int64)
    hi = np.zeros(P, np.int64)
    for b in range(P):
        k = np.flatnonzero(blk == b)
        if k.size == 0:
            raise ValueError(f"multirate: block {b} (states {bounds[b]}..{bounds[b + 1] - 1}) has no Jacobian entry")
        lo[b], hi[b] = k[0], k[-1] + 1
        inside = blk[lo[b]:hi[b]]
        if np.any((inside != b) & (inside >= 0)):
            raise ValueError(f"multirate: the Jacobian slots of block {b} are interleaved with another block's")
    if np.any(lo[1:] < hi[:-1]):
        raise ValueError("multirate: the blocks' Jacobian slots are not in block order")
    return lo, hi


def multirate_counters(tstate: np.ndarray, n: int) -> dict:
    """The re-integration statistics a run of :func:`mrbdf` leaves in its ``tstate``: steps and rejected steps
    of the active runs (``substeps``, ``subrejected``), global steps with re-integrated blocks (``refined``) and
    block-steps (``block_steps``: Σ over steps of the blocks they advanced, global steps counting every block)."""
    sc = tstate[3 + n:3 + n + _N_SCAL]
    return {"substeps": int(sc[_SC_SUBSTEPS]), "subrejected": int(sc[_SC_SUBREJ]), "refined": int(sc[_SC_REFINED]),
            "block_steps": int(sc[_SC_BLOCKSTEPS])}


@njit(inline="always", **JIT)
def _poly_at(Q, K, th, i):
    acc = Q[K, i]
    for k in range(K - 1, -1, -1):
        acc = acc * th + Q[k, i]
    return acc


@njit(**JIT)
def _write_halo(own, Qc, K, th, zf, a, z):
    """The latent states a run ``[a, z)`` of blocks reads, from the global step's polynomial at θ: the halo
    ahead and behind, the states every block reads and the global states (outside the run)."""
    mro = own[OW_MR]
    ha = own[mro + MR_HA]
    hb = own[mro + MR_HB]
    ng = own[mro + MR_NG]
    g0 = own[OW_G0]
    n = own[OW_N]
    for i in range(max(0, a - ha), a):
        zf[i] = _poly_at(Qc, K, th, i)
    for i in range(z, min(g0, z + hb)):
        zf[i] = _poly_at(Qc, K, th, i)
    for k in range(ng):
        i = own[mro + MR_G0 + k]
        if i < a or i >= z:
            zf[i] = _poly_at(Qc, K, th, i)
    for i in range(g0, n):
        zf[i] = _poly_at(Qc, K, th, i)


@njit(**JIT)
def _samples_range(t0, h, Q, K, t_end, t_out, Y_out, k0, a, z):
    """Samples ``t_out[k] <= t_end`` from index ``k0`` on, columns ``[a, z)`` from the polynomial of the step
    [t0, t0 + h]; returns the index of the next sample."""
    k = k0
    while k < t_out.size and t_out[k] <= t_end:
        th = (t_out[k] - t0) / h
        row = Y_out[k]
        for i in range(a, z):
            row[i] = _poly_at(Q, K, th, i)
        k += 1
    return k


@njit(**JIT)
def _refine_run(rhs, jac, observe, params, y, ynew, D, order, H, T, Qc, eb, ba, bz, spec, J, LUf, pivf, vals,
                atol, rtolv, mass, acc, stats, sc, t_out, Y_out, k0, tol_given, maxit, max_upd, max_order, hmin,
                own, act, Df, dtmp, Qf, zf, f, fr, dz, wt, base, ypred, eb_run, refine, c_lu, dg, sync, vb):
    """Re-integrate the run of blocks ``[ba, bz)`` from T to T + H (module docstring, step 3) into ``ynew``;
    observes every accepted sub-step, writes the run's samples from index ``k0``.  Work arrays float64[n]:
    ``f`` (the run's state at the sub-step start), ``fr`` (right-hand side), ``zf`` (the iterate with the halo),
    ``dz``, ``wt``, ``base``, ``ypred``; ``Df`` float64[ROWS, n] the run's history.  Returns ``(ok, k)``: False
    when the run's step fell below the smallest allowed step (the caller rejects the global step), and the
    next sample index, and the coefficient c of the factors the run leaves in ``LUf``/``pivf`` on its states
    (0: none).  ``c_lu`` > 0: the factors of c_lu·M − J already there (kept from an earlier global step);
    they are reused while |c/c_lu − 1| ≤ ``dg``."""
    gamma, alpha, error_const = bdf_coefficients(False)
    ml = spec[SP_ML]
    mu = spec[SP_MU]
    a = own[OW_BOUNDS + ba]
    z = own[OW_BOUNDS + bz]
    # the run's own vector layout: its blocks only, no global states (loops of change_D / _bdf_dense)
    ownf = own.copy()
    ownf[OW_BLO] = ba
    ownf[OW_BHI] = bz
    ownf[OW_G0] = own[OW_N]
    sub = np.array([a, z, ml, mu, ba, bz], np.int64)     # the run's sub-band (newton.SUB_A..)
    # start: the global history rescaled to the first sub-step
    e_run = 0.0
    for b in range(ba, bz):
        e_run = max(e_run, eb[b])
    fac0 = 0.9 * e_run ** (-1.0 / (order + 1)) if e_run > 0.0 else 0.5
    fac0 = min(0.5, max(0.05, fac0))
    h = H * fac0
    for k in range(ROWS):
        for i in range(a, z):
            Df[k, i] = D[k, i]
    change_D(Df, order, fac0, dtmp, ownf)
    for i in range(a, z):
        zf[i] = y[i]
    t = T
    t_end = T + H
    n_equal = 0
    rate = 1.0
    k = k0
    act[0] = ba
    act[1] = bz
    act[2] = 0
    ok = True
    while t_end - t > 4.0 * EPS * max(1.0, abs(t_end)):
        min_step = max(hmin, 10.0 * EPS * max(abs(t), 1e-300))
        if t + h >= t_end - 1e-9 * h:
            hn = t_end - t
            change_D(Df, order, hn / h, dtmp, ownf)
            h = hn
            n_equal = 0
        if h < min_step:
            ok = False
            break
        t_new = t + h if t + h < t_end else t_end
        for i in range(a, z):
            wt[i] = 1.0 / (atol[i] + rtolv[i] * abs(zf[i]))
        bdf_predict(Df, order, gamma, alpha, ypred, base, ownf)
        cc = alpha[order] / h
        if c_lu == 0.0 or abs(cc - c_lu) > dg * c_lu:
            if not subband_factorise(J, LUf, pivf, cc, mass, sub, stats):
                c_lu = 0.0
                ok = False
                break
            c_lu = cc
            rate = 1.0
        # the iterate starts at the predictor; the halo at the step end
        for i in range(a, z):
            f[i] = zf[i]        # keep the state at t (zf holds y(t) on [a, z))
            zf[i] = ypred[i]
        _write_halo(own, Qc, order, (t_new - T) / H, zf, a, z)
        tol = tol_given if tol_given > 0.0 else newton_tol_err(0.0) / error_const[order]
        code, iters, rate, upd = newton_iterate(rhs, jac, params, t_new, zf, base, cc, c_lu, mass, J, LUf, pivf,
                                                spec, wt, tol, maxit, rate, fr, dz, dtmp[0], vals, dtmp[1], dtmp[2],
                                                max_upd, stats, sync, vb, ownf, sub)
        if upd > 0:
            c_lu = cc
        if code != NEWTON_CONVERGED:
            for i in range(a, z):
                zf[i] = f[i]
            sc[_SC_SUBREJ] += 1.0
            stats[ST_NFAIL] += 1
            if code != NEWTON_NONFINITE and c_lu != cc:
                c_lu = 0.0          # old factors: refactorise at this step first
                continue
            change_D(Df, order, 0.25, dtmp, ownf)
            h *= 0.25
            n_equal = 0
            c_lu = 0.0
            continue
        safety = 0.9 * (2 * maxit + 1) / (2 * maxit + iters)
        bdf_error_vector(dz, error_const[order], zf, ypred, ownf)
        err = block_errors(own, dz, wt, eb_run, ba, bz)
        if not (err <= 1.0):
            for i in range(a, z):
                zf[i] = f[i]
            sc[_SC_SUBREJ] += 1.0
            fac = step_factor(err, 1.0 / (order + 1), safety, 0.2, 10.0, False, h, 0.0, 0.0, False)
            change_D(Df, order, fac, dtmp, ownf)
            h *= fac
            n_equal = 0
            continue
        # accept the sub-step
        n_equal += 1
        bdf_update_history(Df, order, zf, ypred, ownf)
        if k < t_out.size and t_out[k] <= t_new:
            _bdf_dense(Df, order, Qf, ownf)
            # the run's states before this step are in f: the polynomial interpolates from t
            k = _samples_range(t, h, Qf, order, t_new, t_out, Y_out, k, a, z)
        observe(t_new, zf, params, acc)
        sc[_SC_SUBSTEPS] += 1.0
        sc[_SC_BLOCKSTEPS] += float(bz - ba)
        t = t_new
        if n_equal < order + 1:
            continue
        delta, factor = bdf_select(Df, order, max_order, error_const, err, safety, 10.0, dz, wt, NORM_BLOCKS, eb_run,
                                   refine, ba, bz, sync, vb, ownf)
        order, h, changed = bdf_change(Df, order, delta, factor, h, t, t, 1e300, dtmp, ownf)
        if changed:
            n_equal = 0
    act[0] = own[OW_BLO]
    act[1] = own[OW_BHI]
    act[2] = 1
    for i in range(a, z):
        ynew[i] = zf[i]
    return ok, k, c_lu


@njit(**JIT)
def mrbdf(rhs, jac, events, observe, params, y, tstate, t_out, Y_out, iout, t_pause, t_final, acc, stats,
          settings, atol, rtolv, mass, spec, ev_out, sync, vb):
    """Multirate BDF of order 1-2 on the blocks of ``vb`` (module docstring).  ``settings[6]`` highest order
    (1-2), ``settings[7]`` the largest fraction of blocks re-integrated before the global step is rejected
    instead, ``settings[8:11]`` Newton tolerance, iterations and Jacobian updates as for ``bdf``."""
    n = y.size
    own = vb.own
    act = vb.act
    P = own[OW_P]
    b_lo = own[OW_BLO]
    b_hi = own[OW_BHI]
    nev = 0
    L, npiv = lin_storage(spec, vb)
    max_order = min(MAX_ORDER_MR, max(1, int(settings[SET_OPT0]))) if settings[SET_OPT0] > 0.0 else MAX_ORDER_MR
    frac = settings[SET_OPT0 + 1] if settings[SET_OPT0 + 1] > 0.0 else 0.25
    hmin, hmax, max_steps, obs_dt = step_settings(settings)
    tol_given = settings[SET_NEWTON_TOL]
    maxit, max_upd = newton_settings(settings, 4)
    gamma, alpha, error_const = bdf_coefficients(False)
    # multirate needs its description, one worker with the serial band and unpermuted block states
    g0 = own[OW_G0]
    multirate = own[OW_MR] > 0 and vb.sspec.size == 0 and P > 1 and spec[SP_PERM_FROM] >= g0 and \
        b_lo == 0 and b_hi == P
    # ---- persistent state
    t = tstate[TS_T]
    f = tstate[TS_F0:TS_F0 + n]
    osc = TS_F0 + n
    sc = tstate[osc:osc + _N_SCAL]
    js = sc[_SC_LU_C:_SC_LU_C + N_JS]
    od = osc + _N_SCAL
    D = tstate[od:od + ROWS * n].reshape((ROWS, n))
    Df = tstate[od + ROWS * n:od + 2 * ROWS * n].reshape((ROWS, n))
    oj = od + 2 * ROWS * n
    J, LU, piv = matrices(tstate, oj, L, npiv)
    LUf = tstate[oj + 2 * L + npiv:oj + 3 * L + npiv]
    pivf = tstate[oj + 3 * L + npiv:oj + 3 * L + 2 * npiv].view(np.int64)
    # ---- work
    vals, ytmp, ftmp, tmp, dz, base, ypred, ynew, wt, dtmp = bdf_work(n, ROWS + 1, spec, vb)
    Q = np.empty((MAX_ORDER_MR + 1, n))
    Qc = np.empty((MAX_ORDER_MR + 1, n))
    Qf = np.empty((MAX_ORDER_MR + 1, n))
    Dc = np.empty((ROWS, n))
    zf = np.empty(n)
    fw = np.empty(n)
    fr = np.empty(n)
    bw = np.empty(n)
    pw = np.empty(n)
    ww = np.empty(n)
    eb = np.zeros(P)
    eb_run = np.zeros(P)
    refine = np.zeros(P, np.bool_)
    # the runs' factors kept across global steps: per block the run [run_lo, run_hi) whose factors (at run_c of
    # its first block) hold its rows of LUf; dropped when the global Jacobian is re-evaluated
    run_lo = np.full(P, -1, np.int64)
    run_hi = np.full(P, -1, np.int64)
    run_c = np.zeros(P)
    run_dg = settings[SET_OPT0 + 7] if settings[SET_OPT0 + 7] > 0.0 else DGMAX
    keep_lu = settings[SET_OPT0 + 8] > 0.5
    g0e = np.empty(0)
    g1e, gtmp, roots = event_work(nev)
    coef = (gamma, alpha, error_const)
    newton = (tol_given, maxit, max_upd)
    lin = (J, LU, piv)
    work = (vals, ytmp, ftmp, tmp, dz, dtmp)
    h, order, n_equal = bdf_resume(rhs, events, params, t, y, f, g0e, D, ROWS, settings[SET_STEP], t_final, hmax,
                                   rtolv, atol, mass, tstate, sc, stats, sync, vb)
    status = RUNNING
    while True:
        status = loop_gate(t, y, t_out, Y_out, iout, t_pause, t_final, stats, max_steps, own)
        if status != STEP_ON:
            break
        h, n_equal, min_step = bdf_step_begin(D, order, h, n_equal, t, hmin, hmax, y, atol, rtolv, wt, dtmp, own)
        refining = False
        jac_fresh = False
        err_lat = 0.0
        while True:
            njev = stats[ST_NJEV]
            status, t_new, h, n_equal, iters, jac_fresh = bdf_correct(
                rhs, jac, params, t, h, t_final, D, order, n_equal, coef, newton, ypred, base, ynew, js, f, mass, spec,
                lin, wt, work, jac_fresh, min_step, stats, sync, vb)
            if stats[ST_NJEV] != njev:     # a new Jacobian: the runs' kept factors are stale
                for b in range(P):
                    run_lo[b] = -1
            if status != STEP_ON:
                break
            safety = 0.9 * (2 * maxit + 1) / (2 * maxit + iters)
            # error estimate per block (and of the global states)
            emax = block_errors(own, dz, wt, eb, b_lo, b_hi)
            a, z = seg(own, 1)
            eg = math.sqrt(wsumsq(dz, wt, a, z) / max(1, z - a)) if z > a else 0.0
            if not (eg <= emax):
                emax = eg
            if emax <= 1.0:
                refining = False
                err_lat = emax
                break
            if multirate and eg <= 1.0 and emax == emax:
                nref = 0
                for b in range(P):
                    refine[b] = eb[b] > 1.0
                for b in range(P):
                    if not refine[b] and eb[b] > BUFFER and ((b > 0 and eb[b - 1] > 1.0) or
                                                             (b < P - 1 and eb[b + 1] > 1.0)):
                        refine[b] = True
                err_lat = eg
                for b in range(P):
                    if refine[b]:
                        nref += 1
                    elif eb[b] > err_lat:
                        err_lat = eb[b]
                if nref <= frac * P and nref < P:
                    refining = True
                    break
            h = bdf_reject(D, order, emax, safety, h, dtmp, stats, own)
            n_equal = 0
        if status != STEP_ON:
            break
        hs = t_new - t
        if refining:
            # the global step's interpolating polynomial (latent values at t_new) for the runs' halos
            for k in range(ROWS):
                for i in range(n):
                    Dc[k, i] = D[k, i]
            bdf_update_history(Dc, order, ynew, ypred, own)
            _bdf_dense(Dc, order, Qc, own)
            k_start = iout[0]
            ok = True
            b = 0
            while b < P:
                if not refine[b]:
                    b += 1
                    continue
                bz = b
                while bz < P and refine[bz]:
                    bz += 1
                # the run's factors from an earlier global step, if they are still in place
                c0 = run_c[b] if keep_lu else 0.0
                for bb in range(b, bz):
                    if run_lo[bb] != b or run_hi[bb] != bz:
                        c0 = 0.0
                good, kk, c1 = _refine_run(rhs, jac, observe, params, y, ynew, D, order, hs, t, Qc, eb, b, bz, spec,
                                           J, LUf, pivf, vals, atol, rtolv, mass, acc, stats, sc, t_out, Y_out,
                                           k_start, tol_given, maxit, max_upd, max_order, hmin, own, act, Df, dtmp, Qf,
                                           zf, fw, fr, dz, ww, bw, pw, eb_run, refine, c0, run_dg, sync, vb)
                for bb in range(b, bz):
                    run_lo[bb] = b
                    run_hi[bb] = bz
                run_c[b] = c1
                if not good:
                    ok = False
                    break
                b = bz
            if not ok:   # a run could not be re-integrated: reject the global step instead
                stats[ST_REJECTED] += 1
                change_D(D, order, 0.25, dtmp, own)
                h = 0.25 * hs
                n_equal = 0
                continue
            sc[_SC_REFINED] += 1.0
        # ---- accept: update differences with the final values of every state
        n_equal += 1
        bdf_update_history(D, order, ynew, ypred, own)
        sc[_SC_BLOCKSTEPS] += float(P)
        if not refining:
            if dense_needed(spec, obs_dt, t, t_new, t_out, iout):
                _bdf_dense(D, order, Q, own)
            finish_step(events, observe, params, spec, obs_dt, t, hs, t_new, y, ynew, g0e, g1e, Q, order, t_out,
                        Y_out, iout, ev_out, acc, stats, ytmp, gtmp, roots, own)
        else:
            # samples of the latent blocks and the global states from the global step (the runs wrote theirs)
            if iout[0] < t_out.size and t_out[iout[0]] <= t_new:
                _bdf_dense(D, order, Q, own)
                kk = iout[0]
                b = 0
                while b < P:
                    if refine[b]:
                        b += 1
                        continue
                    bz = b
                    while bz < P and not refine[bz]:
                        bz += 1
                    kk = _samples_range(t, hs, Q, order, t_new, t_out, Y_out, iout[0], own[OW_BOUNDS + b],
                                        own[OW_BOUNDS + bz])
                    b = bz
                kk = _samples_range(t, hs, Q, order, t_new, t_out, Y_out, iout[0], own[OW_G0], n)
                iout[0] = kk
            copy_own(y, ynew, own)
            stats[ST_STEPS] += 1
            observe(t_new, y, params, acc)
        t = t_new
        sc[_SC_CURJAC] = 0.0
        sc[_SC_JAGE] += 1.0
        # ---- order and step selection, from the latent blocks and the global states
        if n_equal < order + 1 and not refining:
            continue
        safety = 0.9 * (2 * maxit + 1) / (2 * maxit + iters)
        cap = GROW_AFTER_REFINE if refining else 10.0
        if n_equal >= order + 1:
            delta, factor = bdf_select(D, order, max_order, error_const, err_lat, safety, cap, dz, wt, NORM_LATENT,
                                       eb_run, refine, 1 if refining else 0, 0, sync, vb, own)
        else:
            delta = 0
            factor = min(cap, safety * (err_lat ** (-1.0 / (order + 1)) if err_lat > 0.0 else 1e300))
        order, h, changed = bdf_change(D, order, delta, factor, h, t, t_final, hmax, dtmp, own)
        if changed:
            n_equal = 0
    sc[_SC_ORDER] = order
    sc[_SC_NEQ] = n_equal
    tstate[TS_T] = t
    tstate[TS_H] = h
    return status
