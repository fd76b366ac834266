"""Pieces shared by every method: the dense-output polynomial, sampling, event location, norms and
the starting step.

Dense output.  After an accepted step from ``t0`` to ``t0 + h`` every method describes its
continuous solution as a polynomial in θ = (t − t0)/h ∈ [0, 1] ::

    y(t0 + θh) = Σ_{k=0..K} Q[k] θ^k          Q: float64[K+1, n], K ≤ 5

(cubic Hermite for RK4, ABM4 and the ESDIRK methods, the 4th-order Dormand-Prince continuous
extension, the BDF interpolating polynomial, the Radau IIA collocation polynomial).  Samples
(``t_out``) and event roots are taken from this polynomial.

Events.  ``events(t, y, params, g)`` writes float64[nev] event functions.  Event i triggers on a
step when g_i changes sign in its direction (+1: − to +, −1: + to −, 0: either), i.e. for
direction +1 when g_i(t0) < 0 ≤ g_i(t0+h); a value exactly zero at t0 does not trigger again (a run
restarted at an event does not stop at once).  The root is located on the dense output with
Brent's method to |Δt| ≤ 4·u·max(|t|, |h|) (u the unit round-off).  Non-terminal events are
recorded and the step is kept; at the earliest terminal event the step is cut: y and t become the
dense-output state at the root and the method returns ``EVENT_STOP``.  Records are
``ev_out[k] = [t, event index, y...]`` (at most ``ev_out.shape[0]``; ``stats[ST_EVENTS]`` counts
them all).

Sources: Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.4 (starting step), §II.6 (dense output);
Shampine & Thompson, "Event location for ordinary differential equations", Comput. Math. Appl. 39
(2000); Brent, *Algorithms for Minimization without Derivatives* (1973), ch. 4 (zeroin).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.collectives import (  # noqa: F401 (_monotonic_ns re-exported)
    OW_BHI, OW_BLO, OW_P, _monotonic_ns, all_sum, block_range, copy_own, seg,
)
from hpcrail.integrators.contract import (
    DONE, MAX_STEPS, NEWTON_FAILURE, NON_FINITE, RUNNING, SET_HMAX, SET_HMIN, SET_MAX_STEPS, SET_OBS_DT, ST_EVENTS, ST_NFEV, ST_REJECTED, ST_STEPS, STEP_UNDERFLOW,
    TIME_BUDGET,
)
from hpcrail.integrators.linalg import SP_NEV, SP_OFF_EVDIR, SP_OFF_EVTERM

EPS = 2.220446049250313e-16

@njit(**JIT)
def monotonic_ns():
    """The clock the kernels compare deadlines with [ns] (callable from Python)."""
    return _monotonic_ns()


def deadline_ns(budget_s: float) -> int:
    """The deadline ``iout[1]`` of a run starting now with a wall-time budget [s] (0 = none)."""
    if not budget_s or budget_s <= 0:
        return 0
    now = int(monotonic_ns())
    return now + int(budget_s * 1e9) if now >= 0 else 0


@njit(inline="always", **JIT)
def step_end(t, h, t_final, fixed):
    """``(hs, tn)``: the step from t and its end; the last step lands exactly on ``t_final`` (a
    sample there must not be lost to rounding).  Fixed-step methods also stretch a step that would
    leave a sliver below 1e-9 h."""
    tn = t + h
    lim = 1e-12 * max(1.0, abs(t_final))
    if fixed:
        lim = max(lim, 1e-9 * h)
    if tn >= t_final or t_final - tn <= lim:
        return t_final - t, t_final
    return h, tn


@njit(inline="always", **JIT)
def rms_norm(x, scale):
    """sqrt(mean((x/scale)²)) of float64[n] vectors (one worker: Radau IIA, which has no block form)."""
    n = x.size
    s = 0.0
    for i in range(n):
        v = x[i] / scale[i]
        s += v * v
    return math.sqrt(s / n)


@njit(**JIT)
def poly_eval(Q, K, theta, out, own):
    """``out = Σ_k Q[k] θ^k`` (Horner) on this worker's states (``own``: the block layout,
    :mod:`~hpcrail.integrators.collectives`), float64[n]."""
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            acc = Q[K, i]
            for k in range(K - 1, -1, -1):
                acc = acc * theta + Q[k, i]
            out[i] = acc


@njit(**JIT)
def poly_samples(t0, h, Q, K, t_end, t_out, Y_out, iout, own):
    """Write every sample ``t_out[iout] <= t_end`` (t_end ≤ t0 + h) from the dense polynomial (this worker's
    columns)."""
    k = iout[0]
    nout = t_out.size
    while k < nout and t_out[k] <= t_end:
        theta = (t_out[k] - t0) / h
        poly_eval(Q, K, theta, Y_out[k], own)
        k += 1
    iout[0] = k


@njit(inline="always", **JIT)
def samples_due(t_end, t_out, iout):
    """True if a sample falls at or before ``t_end``."""
    return iout[0] < t_out.size and t_out[iout[0]] <= t_end


@njit(**JIT)
def samples_at_t(t, y, t_out, Y_out, iout, own):
    """Write the samples that fall exactly at (or, by round-off, before) the current time (this worker's
    columns)."""
    k = iout[0]
    while k < t_out.size and t_out[k] <= t:
        copy_own(Y_out[k], y, own)
        k += 1
    iout[0] = k


#: :func:`loop_gate`'s "take a step" answer (not a status code of the contract)
STEP_ON = 99


@njit(inline="always", **JIT)
def loop_gate(t, y, t_out, Y_out, iout, t_pause, t_final, stats, max_steps, own):
    """Top of every method's step loop: write the samples due at ``t`` (float64[n] state ``y`` into
    ``Y_out`` float64[k, n], this worker's columns), then return ``DONE`` at ``t_final``, ``RUNNING`` at ``t_pause`` [s],
    ``MAX_STEPS`` when ``stats`` (int64[8]) counts ``max_steps`` step attempts, ``TIME_BUDGET`` when
    the deadline ``iout[1]`` (monotonic ns, 0 = none; read every 16 step attempts) has passed, else
    ``STEP_ON``.  Every worker of a distributed run takes the same decisions: the drivers set no deadline
    there (workers could read the clock on either side of it)."""
    samples_at_t(t, y, t_out, Y_out, iout, own)
    if t_final - t <= 1e-12 * max(1.0, abs(t_final)):
        return DONE
    if t >= t_pause:
        return RUNNING
    attempts = stats[ST_STEPS] + stats[ST_REJECTED]
    if attempts >= max_steps:
        return MAX_STEPS
    if iout.size > 1 and iout[1] > 0 and attempts % 16 == 0 and _monotonic_ns() > iout[1]:
        return TIME_BUDGET
    return STEP_ON


@njit(inline="always", **JIT)
def step_settings(settings):
    """``(hmin, hmax, max_steps, obs_dt)`` of a kernel's ``settings`` (hmax 1e300 when not given)."""
    hmax = settings[SET_HMAX] if settings[SET_HMAX] > 0.0 else 1e300
    return settings[SET_HMIN], hmax, settings[SET_MAX_STEPS], settings[SET_OBS_DT]


@njit(inline="always", **JIT)
def failed_step_status(newton_failed, nonfinite):
    """Status of a step that could not be taken: ``NON_FINITE`` / ``NEWTON_FAILURE`` if its last attempt's
    Newton iteration failed (on a non-finite right-hand side / by not converging), else ``STEP_UNDERFLOW``."""
    if newton_failed:
        return NON_FINITE if nonfinite else NEWTON_FAILURE
    return STEP_UNDERFLOW


@njit(inline="always", **JIT)
def step_factor(err, expo, safety, fac_min, fac_max, rejected_last, h, h_old, err_old, predictive):
    """The step-size controller shared by every adaptive method: the factor on the step ``h`` [s]
    after a step attempt whose scaled error norm is ``err`` (≤ 1: accepted).

    Elementary control ``safety · err^(−expo)`` (expo = 1/(q+1), q the order of the error
    estimate; HNW I §II.4), or with ``predictive`` Gustafsson's predictive controller, which also
    uses the previous accepted step ``h_old`` and its error ``err_old`` (> 0, else elementary):
    ``safety · err^(−expo) · min(1, (h/h_old)·(err_old/err)^expo)`` (Gustafsson, BIT 34 (1994)
    77-89; HNW II §IV.8 eq (8.21)).  Clamped to [fac_min, fac_max]; not above 1 right after a
    rejection (``rejected_last``); a non-finite or NaN ``err`` gives ``fac_min``."""
    if not err == err or err > 1e300:
        return fac_min
    if err == 0.0:
        fac = fac_max
    else:
        fac = safety * err ** (-expo)
        if predictive and err_old > 0.0 and h_old > 0.0:
            mult = h / h_old * (err_old / err) ** expo
            if mult < 1.0:
                fac *= mult
    if fac > fac_max:
        fac = fac_max
    if fac < fac_min:
        fac = fac_min
    if rejected_last and fac > 1.0:
        fac = 1.0
    return fac


@njit(**JIT)
def hermite_coeffs(h, y0, f0, y1, f1, Q, own):
    """Cubic Hermite interpolant on [t0, t0+h] from y, y' at both ends into ``Q[0:4]`` (this worker's
    states)."""
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            dy = y1[i] - y0[i]
            Q[0, i] = y0[i]
            Q[1, i] = h * f0[i]
            Q[2, i] = 3.0 * dy - h * (2.0 * f0[i] + f1[i])
            Q[3, i] = -2.0 * dy + h * (f0[i] + f1[i])


# ---- events ---------------------------------------------------------------------------------
@njit(inline="always", **JIT)
def _crosses(g0, g1, direction):
    if direction >= 0 and g0 < 0.0 and g1 >= 0.0:
        return True
    if direction <= 0 and g0 > 0.0 and g1 <= 0.0:
        return True
    return False


@njit(**JIT)
def any_event(spec, g0, g1):
    """True if some event function changed sign in its direction over the step."""
    nev = spec[SP_NEV]
    od = spec[SP_OFF_EVDIR]
    for i in range(nev):
        if _crosses(g0[i], g1[i], spec[od + i]):
            return True
    return False


@njit(**JIT)
def _g_at(events, params, t0, h, Q, K, theta, i, ytmp, gtmp, stats, own):
    poly_eval(Q, K, theta, ytmp, own)
    events(t0 + theta * h, ytmp, params, gtmp)
    return gtmp[i]


@njit(**JIT)
def _event_root(events, params, t0, h, Q, K, i, ga, gb, ytmp, gtmp, stats, own):
    """Brent's zeroin for g_i(θ) on [0, 1] given g_i(0) = ga, g_i(1) = gb of opposite signs."""
    a = 0.0
    b = 1.0
    fa = ga
    fb = gb
    if fb == 0.0:
        return 1.0
    tol_t = 4.0 * EPS * max(abs(t0), abs(t0 + h), abs(h))
    xtol = tol_t / abs(h)
    c = a
    fc = fa
    d = b - a
    e = d
    for _ in range(200):
        if (fb > 0.0) == (fc > 0.0):
            c = a
            fc = fa
            d = b - a
            e = d
        if abs(fc) < abs(fb):
            a = b
            b = c
            c = a
            fa = fb
            fb = fc
            fc = fa
        tol1 = 2.0 * EPS * abs(b) + 0.5 * xtol
        xm = 0.5 * (c - b)
        if abs(xm) <= tol1 or fb == 0.0:
            break
        if abs(e) >= tol1 and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:
                p = 2.0 * xm * s
                q = 1.0 - s
            else:
                q = fa / fc
                r = fb / fc
                p = s * (2.0 * xm * q * (q - r) - (b - a) * (r - 1.0))
                q = (q - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0.0:
                q = -q
            p = abs(p)
            if 2.0 * p < min(3.0 * xm * q - abs(tol1 * q), abs(e * q)):
                e = d
                d = p / q
            else:
                d = xm
                e = d
        else:
            d = xm
            e = d
        a = b
        fa = fb
        if abs(d) > tol1:
            b += d
        else:
            b += tol1 if xm > 0.0 else -tol1
        fb = _g_at(events, params, t0, h, Q, K, b, i, ytmp, gtmp, stats, own)
    # return the end of the bracket on the "after" side so that the event has happened
    if (fb == 0.0) or (gb > 0.0) == (fb > 0.0):
        return b
    return c


@njit(**JIT)
def locate_events(events, params, spec, t0, h, Q, K, g0, g1, ev_out, stats, ytmp, gtmp, roots, own):
    """Locate the events that triggered on the step [t0, t0+h] (see module docstring).

    Records every triggered event up to and including the earliest terminal one, in time order.
    Returns θ of the earliest terminal event (in (0, 1]) or 2.0 if none is terminal.
    """
    nev = spec[SP_NEV]
    od = spec[SP_OFF_EVDIR]
    ot = spec[SP_OFF_EVTERM]
    for i in range(nev):
        roots[i] = 2.0
        if _crosses(g0[i], g1[i], spec[od + i]):
            roots[i] = _event_root(events, params, t0, h, Q, K, i, g0[i], g1[i], ytmp, gtmp, stats, own)
    th_term = 2.0
    for i in range(nev):
        if roots[i] <= 1.0 and spec[ot + i] != 0 and roots[i] < th_term:
            th_term = roots[i]
    # record in time order (few events: selection by repeated minimum)
    last = -1.0
    last_i = -1
    cap = ev_out.shape[0]
    n = ytmp.size
    while True:
        best = 3.0
        bi = -1
        for i in range(nev):
            r = roots[i]
            if r <= 1.0 and r <= th_term and (r > last or (r == last and i > last_i)) and r < best:
                best = r
                bi = i
        if bi < 0:
            break
        k = stats[ST_EVENTS]
        if k < cap:
            poly_eval(Q, K, best, ytmp, own)
            ev_out[k, 0] = t0 + best * h
            ev_out[k, 1] = bi
            for j in range(n):
                ev_out[k, 2 + j] = ytmp[j]
        stats[ST_EVENTS] = k + 1
        last = best
        last_i = bi
    return th_term


# ---- starting step --------------------------------------------------------------------------
@njit(inline="always", **JIT)
def _init_norms(y, f0, rtolv, atol, mass, a, z, out):
    """Count, Σ(y/sc)², Σ(f/(m·sc))² over [a, z) of the states with mass (into ``out[0:3]``)."""
    for i in range(a, z):
        if mass[i] == 0.0:
            continue
        sc = atol[i] + rtolv[i] * abs(y[i])
        out[0] += 1.0
        out[1] += (y[i] / sc) ** 2
        out[2] += (f0[i] / mass[i] / sc) ** 2


@njit(inline="always", **JIT)
def _init_d2(y, f0, f1, rtolv, atol, mass, a, z):
    d2 = 0.0
    for i in range(a, z):
        if mass[i] == 0.0:
            continue
        sc = atol[i] + rtolv[i] * abs(y[i])
        d2 += ((f1[i] - f0[i]) / mass[i] / sc) ** 2
    return d2


@njit(**JIT)
def initial_step(rhs, params, t, y, f0, span, rtolv, atol, order, mass, stats, sync, vb):
    """Hairer's starting-step heuristic (HNW I, §II.4) for a method of the given order (collective: the
    norms are per-block sums, :mod:`~hpcrail.integrators.collectives`).

    States with zero mass (algebraic components of an index-1 DAE) are left out of the norms.
    """
    n = y.size
    own = vb.own
    P = own[OW_P]
    part = np.zeros((P, 3))
    gpart = np.zeros(3)
    for b in range(own[OW_BLO], own[OW_BHI]):
        a, z = block_range(own, b)
        _init_norms(y, f0, rtolv, atol, mass, a, z, part[b])
    a, z = seg(own, 1)
    _init_norms(y, f0, rtolv, atol, mass, a, z, gpart)
    tot = all_sum(sync, vb, part, gpart)
    m = tot[0]
    if m == 0.0:
        return min(1e-6, span)
    d0 = math.sqrt(tot[1] / m)
    d1 = math.sqrt(tot[2] / m)
    if d0 < 1e-5 or d1 < 1e-5:
        h0 = 1e-6
    else:
        h0 = 0.01 * d0 / d1
    h0 = min(h0, span)
    y1 = np.empty(n)
    f1 = np.empty(n)
    for s in range(2):
        a, z = seg(own, s)
        for i in range(a, z):
            y1[i] = y[i] + h0 * f0[i] / mass[i] if mass[i] != 0.0 else y[i]
    rhs(t + h0, y1, params, f1)
    stats[ST_NFEV] += 1
    part2 = np.zeros((P, 1))
    gpart2 = np.zeros(1)
    for b in range(own[OW_BLO], own[OW_BHI]):
        a, z = block_range(own, b)
        part2[b, 0] = _init_d2(y, f0, f1, rtolv, atol, mass, a, z)
    a, z = seg(own, 1)
    gpart2[0] = _init_d2(y, f0, f1, rtolv, atol, mass, a, z)
    d2 = math.sqrt(all_sum(sync, vb, part2, gpart2)[0] / m) / h0
    if not math.isfinite(d2):
        return min(h0, span)
    if d1 <= 1e-15 and d2 <= 1e-15:
        h1 = max(1e-6, h0 * 1e-3)
    else:
        h1 = (0.01 / max(d1, d2)) ** (1.0 / (order + 1.0))
    return min(100.0 * h0, h1, span)


@njit(inline="always", **JIT)
def event_work(nev):
    """Work arrays of the event location: g at the step end, g at a trial point, the roots (float64[nev])."""
    return np.empty(nev), np.empty(nev), np.empty(nev)


@njit(**JIT)
def dense_needed(spec, obs_dt, t, t_end, t_out, iout):
    """True if the dense polynomial of the step [t, t_end] will be needed (samples, events, or
    observations inside the step)."""
    return spec[SP_NEV] > 0 or samples_due(t_end, t_out, iout) or (obs_dt > 0.0 and t_end - t > obs_dt)


@njit(**JIT)
def finish_step(events, observe, params, spec, obs_dt, t, hs, tn, y, y1, g0, g1, Q, K, t_out, Y_out, iout, ev_out,
                acc, stats, ytmp, gtmp, roots, own):
    """Accept the step [t, tn] (tn = t + hs, exactly ``t_final`` on the last step) whose end state
    is ``y1``: locate events, write samples, count the step and call ``observe`` — at the step end
    and, if ``obs_dt`` > 0, on the dense output at t + k·obs_dt inside the step (so that extremes
    taken by ``observe`` do not depend on how long the steps are).  ``Q[0:K+1]`` must hold the dense polynomial whenever
    :func:`dense_needed` said so.

    Returns θ of a terminal event (≤ 1; ``y`` then holds the state at the event) or 2.0
    (``y`` and ``g0`` then take the new values).  Vectors are read and written on this worker's states
    (``own``); events need a single worker (the drivers refuse them on blocks).
    """
    nev = spec[SP_NEV]
    th = 2.0
    if nev > 0:
        events(tn, y1, params, g1)
        if any_event(spec, g0, g1):
            th = locate_events(events, params, spec, t, hs, Q, K, g0, g1, ev_out, stats, ytmp, gtmp, roots, own)
    t_end = tn if th > 1.0 else t + th * hs
    if samples_due(t_end, t_out, iout):
        poly_samples(t, hs, Q, K, t_end, t_out, Y_out, iout, own)
    if obs_dt > 0.0:
        k = 1
        while t + k * obs_dt < t_end:
            to = t + k * obs_dt
            poly_eval(Q, K, (to - t) / hs, ytmp, own)
            observe(to, ytmp, params, acc)
            k += 1
    if th <= 1.0:
        poly_eval(Q, K, th, y, own)
    else:
        copy_own(y, y1, own)
        for i in range(nev):
            g0[i] = g1[i]
    stats[ST_STEPS] += 1
    observe(t_end, y, params, acc)
    return th
