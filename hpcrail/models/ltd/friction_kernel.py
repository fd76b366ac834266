"""Numba kernels of the dry-friction layer of LTD consists (Oprea 2018): LTD with friction draft gears.

Two treatments of the same physics:

* **event-driven** (Oprea 2018 §3-4): :func:`ed_rhs` is smooth for the current modes (held in
  ``params.mode``): sliding connections get T = ±T_sMax inside the Karnopp band (break-away) and
  ±T_kin(|ė|) outside it, sticking connections the static forces of their rigid clusters
  (:func:`~hpcrail.models.couplers.dry_friction.rigid_clusters`, the generalised-inverse solution).
  :func:`ed_guard` gives the switching functions and :func:`ed_jump` the mode selection of §4.1
  (:func:`~hpcrail.models.couplers.dry_friction.select_contacts`); the model-agnostic driver
  :mod:`hpcrail.integrators.hybrid` integrates between events with any registered method.
* **regularised**: :func:`reg_rhs` replaces the set-valued law by the smooth
  T = T_kin(|ė|)·s(ė/w) — an ordinary ODE for any integrator (stiff for small w).

Both start from the LTD right-hand side (:func:`hpcrail.models.ltd.kernel.ltd_rhs`) evaluated with
the friction connections reduced to their spring-damper part, so every non-friction force is the
LTD model's.  Limitation: the LTD standstill treatment of the running resistance (a regularised
static friction against the rail, :mod:`hpcrail.models.ltd.kernel`) sees the connection forces
without the draft-gear friction.

Event functions of connection k (3 per connection, positive while nothing happens):

=====  ==============================================================================================
g[3k]   stick: 1 − |T_s|/(T_sMax r) (stick→slip); slide: (ė·d − η)/η (slip→stick: |ė| enters the
        band); break-away once outside the band: the same; free (inside the slack): distance to the
        end of the slack / 1 mm (engagement)
g[3k+1] break-away inside the band: ė·d/η — the relative velocity returns to zero (the excess force
        over T_sMax turned negative before the connection left the band: it sticks again, or
        reverses); when T_kin(η) ≠ T_sMax also (η − ė·d)/η (leaving the band changes the force)
g[3k+2] engaged with slack: deflection beyond the slack / 1 mm (disengagement)
=====  ==============================================================================================
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT, JIT_NRT_FREE
from hpcrail.models.couplers.dry_friction import (
    MODE_BREAK_NEG, MODE_BREAK_POS, MODE_OFF, MODE_SLIP_NEG, MODE_SLIP_POS, MODE_STICK, SELECT_FAILED,
    engagement, kinetic_friction, regularised_friction, rigid_clusters, select_contacts,
)
from hpcrail.models.couplers.hysteretic import connection_force
from hpcrail.models.couplers.envelope import ACC_OFFROUTE, envelope_fold, envelope_update
from hpcrail.models.ltd.friction_layer import (
    FACC_COUNT, FACC_ENTRY, FACC_INBAND, FACC_PREV, FACC_TIME, FACC_TPREV, N_GUARDS, facc_index,
)
from hpcrail.models.ltd.kernel import ltd_rhs

#: length scale of the slack event functions [m]
_XS = 1e-3

#: jump() return codes
JUMP_SELECT_FAILED = -1
JUMP_LOG_FULL = -2


# ---- state layout helpers (the only place that knows the LTD state layout) ----------------------
@njit(inline="always", **JIT)
def _speed(y, q, j):
    return y[q.block * j + 1]


@njit(inline="always", **JIT)
def _extension(y, q, k):
    return y[q.block * (k + 1)]


# ---- event-driven ---------------------------------------------------------------------------------
@njit(**JIT_NRT_FREE)
def _apply_modes(y, p, dydt):
    """Add the friction forces of the current modes to the LTD accelerations in ``dydt``; static
    forces of sticking clusters by the generalised inverse (rigid clusters).  Writes ``p.T``, ``p.a``
    and the friction power into ``dydt[p.i_work]``."""
    q = p.ltd
    N = q.n_veh
    B = q.block
    M = N - 1
    a = p.a
    m = p.m_eff
    for j in range(N):
        a[j] = dydt[B * j + 1]
    power = 0.0
    for k in range(M):
        md = p.mode[k]
        if md == MODE_OFF or md == MODE_STICK:
            p.T[k] = 0.0
            continue
        de = _speed(y, q, k) - _speed(y, q, k + 1)
        _x, r = engagement(_extension(y, q, k), p.fr_gap[k, 0], p.fr_gap[k, 1], p.fr_inv_ramp[k])
        d = 1.0 if md > 0 else -1.0
        if (md == MODE_BREAK_POS or md == MODE_BREAK_NEG) and d * de < p.eta:
            mag = p.fr_ts[k]   # break-away inside the band: T_sMax (Oprea 2018 §4.1)
        else:
            mag = kinetic_friction(abs(de), p.fr_ts[k], p.fr_tc[k], p.fr_law[k], p.fr_inv_vs[k], p.fr_delta[k])
        tk = d * mag * r
        p.T[k] = tk
        a[k] -= tk / m[k]
        a[k + 1] += tk / m[k + 1]
        power += tk * de
    rigid_clusters(p.mode, m, a, p.T)
    for k in range(M):
        if p.mode[k] == MODE_STICK:
            power += p.T[k] * (_speed(y, q, k) - _speed(y, q, k + 1))
    for j in range(N):
        dydt[B * j + 1] = a[j]
    dydt[p.i_work] = power


@njit(**JIT_NRT_FREE)
def ed_rhs(t, y, p, dydt):
    """Right-hand side for the current stick/slip modes (integrator contract); ``y``/``dydt``
    float64[n] (LTD layout + friction work).  Source: Oprea 2018 eqs (4)-(7), (16)."""
    ltd_rhs(t, y, p.ltd, dydt)
    _apply_modes(y, p, dydt)


@njit(**JIT_NRT_FREE)
def ed_guard(t, y, p, g):
    """Switching functions g[3M] of the current modes (table in the module docstring)."""
    ed_rhs(t, y, p, p.dydt)
    q = p.ltd
    M = q.n_veh - 1
    eta = p.eta
    for k in range(M):
        i = N_GUARDS * k
        g[i] = 1.0
        g[i + 1] = 1.0
        g[i + 2] = 1.0
        if p.fr_on[k] == 0:
            continue
        md = p.mode[k]
        e = _extension(y, q, k)
        de = _speed(y, q, k) - _speed(y, q, k + 1)
        slack = p.fr_inv_ramp[k] != 0.0
        if md == MODE_OFF:
            if slack:
                g[i] = min(p.fr_gap[k, 0] - e, e + p.fr_gap[k, 1]) / _XS
            continue
        x, r = engagement(e, p.fr_gap[k, 0], p.fr_gap[k, 1], p.fr_inv_ramp[k])
        if slack:
            g[i + 2] = x / _XS
        if md == MODE_STICK:
            lim = p.fr_ts[k] * r
            g[i] = 1.0 - abs(p.T[k]) / lim if lim > 0.0 else -1.0
        elif md == MODE_SLIP_POS or md == MODE_SLIP_NEG:
            d = 1.0 if md > 0 else -1.0
            g[i] = (d * de - eta) / eta
        else:  # break-away
            d = 1.0 if md > 0 else -1.0
            u = d * de
            if p.fr_leave[k] != 0:
                # leaving the band changes the force (T_sMax -> T_kin(η)): an event
                g[i + 1] = min(u / eta, (eta - u) / eta)
            elif u < eta:
                g[i + 1] = u / eta
            else:
                g[i] = (u - eta) / eta


@njit(**JIT)
def _log_change(p, t, k, mnew):
    n = p.log_n[0]
    if n < p.log_t.size:
        p.log_t[n] = t
        p.log_k[n] = k
        p.log_m[n] = mnew
    p.log_n[0] = n + 1


@njit(**JIT)
def ed_jump(t, y, p, which):
    """Mode selection at t0 (``which`` = −1) and at each event (Oprea 2018 §4.1).

    Provisional sets from the state: outside the slack → free; |ė| ≥ η → sliding along ė; a
    break-away still moving along its direction keeps sliding (until its relative velocity returns to
    zero, its own event); the rest inside the band → candidates, whose stick/slip split is the
    consistent solution of
    :func:`~hpcrail.models.couplers.dry_friction.select_contacts` (started from the previous modes; the
    connection whose static force reached T_sMax starts sliding along its force).  With
    ``project``, the relative velocities of every rigid cluster are then removed by the momentum-
    conserving projection (Gauss's principle at velocity level: all members take the cluster's
    mean velocity); the kinetic energy removed is added to the friction work.  Mode changes are
    appended to the log.  Returns the number of changed connections, ``JUMP_SELECT_FAILED`` or
    ``JUMP_LOG_FULL``.
    """
    q = p.ltd
    N = q.n_veh
    B = q.block
    M = N - 1
    m = p.m_eff
    eta = p.eta
    hint = -1
    hdir = 0
    if which >= 0 and which % N_GUARDS == 0:
        kh = which // N_GUARDS
        if p.mode[kh] == MODE_STICK:
            ed_rhs(t, y, p, p.dydt)    # static force of the old modes at the event
            hint = kh
            hdir = MODE_BREAK_POS if p.T[kh] > 0.0 else MODE_BREAK_NEG
    for rep in range(8):
        ltd_rhs(t, y, q, p.dydt)
        for j in range(N):
            p.a0[j] = p.dydt[B * j + 1]
        ncand = 0
        for k in range(M):
            p.cand[k] = 0
            p.mode_new[k] = MODE_OFF
            if p.fr_on[k] == 0:
                continue
            e = _extension(y, q, k)
            if p.fr_inv_ramp[k] != 0.0 and -p.fr_gap[k, 1] < e < p.fr_gap[k, 0]:
                continue  # inside the slack
            de = _speed(y, q, k) - _speed(y, q, k + 1)
            _x, r = engagement(e, p.fr_gap[k, 0], p.fr_gap[k, 1], p.fr_inv_ramp[k])
            old = p.mode[k]
            moving = (old == MODE_BREAK_POS and de > 0.0) or (old == MODE_BREAK_NEG and de < 0.0)
            if abs(de) >= eta:
                d = 1.0 if de > 0.0 else -1.0
                p.mode_new[k] = MODE_SLIP_POS if de > 0.0 else MODE_SLIP_NEG
                tk = d * r * kinetic_friction(abs(de), p.fr_ts[k], p.fr_tc[k], p.fr_law[k], p.fr_inv_vs[k],
                                              p.fr_delta[k])
                p.a0[k] -= tk / m[k]
                p.a0[k + 1] += tk / m[k + 1]
            elif moving and k != hint:
                # a break-away already sliding keeps sliding until its relative velocity returns to
                # zero (its own event) or it leaves the band
                p.mode_new[k] = old
                tk = (1.0 if old > 0 else -1.0) * r * p.fr_ts[k]
                p.a0[k] -= tk / m[k]
                p.a0[k + 1] += tk / m[k + 1]
            else:
                p.cand[k] = 1
                ncand += 1
                p.lim[k] = p.fr_ts[k] * r
                if k == hint:
                    p.mode_new[k] = hdir
                elif old == MODE_BREAK_POS or old == MODE_BREAK_NEG:
                    p.mode_new[k] = old
                else:
                    p.mode_new[k] = MODE_STICK
        if ncand > 0:
            it = select_contacts(p.cand, p.mode_new, p.lim, m, p.a0, p.a, p.T, p.tol_force, p.tol_acc,
                                 p.max_select_iter)
            if it == SELECT_FAILED:
                p.fail[0] = JUMP_SELECT_FAILED
                return JUMP_SELECT_FAILED
        if p.project == 0:
            break
        # momentum-conserving projection of the rigid clusters; repeat the selection if it moved a
        # sliding connection into the band
        moved = False
        k = 0
        while k < M:
            if p.mode_new[k] != MODE_STICK:
                k += 1
                continue
            s = k
            r_ = k
            while r_ < M and p.mode_new[r_] == MODE_STICK:
                r_ += 1
            sm = 0.0
            sp = 0.0
            for j in range(s, r_ + 1):
                sm += m[j]
                sp += m[j] * y[B * j + 1]
            vc = sp / sm
            dke = 0.0
            for j in range(s, r_ + 1):
                v = y[B * j + 1]
                dke += 0.5 * m[j] * (v * v - vc * vc)
                y[B * j + 1] = vc
            y[p.i_work] += dke
            k = r_
        for k in range(M):
            if p.fr_on[k] != 0 and p.cand[k] == 0 and p.mode_new[k] != MODE_OFF:
                de = _speed(y, q, k) - _speed(y, q, k + 1)
                if abs(de) < eta:
                    moved = True
        if not moved:
            break
    changes = 0
    for k in range(M):
        if p.mode_new[k] != p.mode[k]:
            _log_change(p, t, k, p.mode_new[k])
            p.mode[k] = p.mode_new[k]
            changes += 1
    if p.log_n[0] > p.log_t.size:
        p.fail[0] = JUMP_LOG_FULL
        return JUMP_LOG_FULL
    return changes


# ---- regularised ----------------------------------------------------------------------------------
@njit(**JIT_NRT_FREE)
def _regularised_forces(y, p, dydt):
    q = p.ltd
    B = q.block
    M = q.n_veh - 1
    power = 0.0
    for k in range(M):
        if p.fr_on[k] == 0:
            p.T[k] = 0.0
            continue
        de = _speed(y, q, k) - _speed(y, q, k + 1)
        _x, r = engagement(_extension(y, q, k), p.fr_gap[k, 0], p.fr_gap[k, 1], p.fr_inv_ramp[k])
        tk = regularised_friction(de, r, p.fr_ts[k], p.fr_tc[k], p.fr_law[k], p.fr_inv_vs[k], p.fr_delta[k],
                                  p.reg_law, p.reg_inv_w)
        p.T[k] = tk
        dydt[B * k + 1] -= tk * q.inv_mass_eff[k]
        dydt[B * (k + 1) + 1] += tk * q.inv_mass_eff[k + 1]
        power += tk * de
    dydt[p.i_work] = power


@njit(**JIT_NRT_FREE)
def reg_rhs(t, y, p, dydt):
    """Right-hand side with regularised friction T = r·T_kin(|ė|)·s(ė/w) (integrator contract)."""
    ltd_rhs(t, y, p.ltd, dydt)
    _regularised_forces(y, p, dydt)


# ---- observers (metrics over every accepted step, friction included) ------------------------------
@njit(**JIT_NRT_FREE)
def _observe(t, y, p, acc):
    """The LTD metrics (layout of :mod:`hpcrail.models.couplers.envelope`) with the in-train force including
    the friction force ``p.T``, and the stick-phase bookkeeping of the friction section."""
    q = p.ltd
    N = q.n_veh
    B = q.block
    M = N - 1
    vmax = -np.inf
    vmin = np.inf
    for j in range(N):
        v = y[B * j + 1]
        if v > vmax:
            vmax = v
        if v < vmin:
            vmin = v
    fmax = -np.inf
    fmin = np.inf
    o = p.acc_off
    for k in range(M):
        e = y[B * (k + 1)]
        de = y[B * k + 1] - y[B * (k + 1) + 1]
        f = connection_force(e, de, q.conn_type[k], q.conn_rowpar, q.conn_typepar, q.conn_fm, q.conn_fa) + p.T[k]
        envelope_update(acc, M, k, f, e, t)
        if f > fmax:
            fmax = f
        if f < fmin:
            fmin = f
        if p.fr_on[k] != 0:
            _x, r = engagement(e, p.fr_gap[k, 0], p.fr_gap[k, 1], p.fr_inv_ramp[k])
            ade = abs(de)
            inband = ade <= p.eta and r > 0.0
            i_in = facc_index(o, M, FACC_INBAND, k)
            i_en = facc_index(o, M, FACC_ENTRY, k)
            i_pv = facc_index(o, M, FACC_PREV, k)
            if inband != (acc[i_in] != 0.0):
                # time of the band crossing, interpolated between the observations
                tx = t
                tp = acc[o + FACC_TPREV]
                dv = acc[i_pv] - ade
                if t > tp and dv != 0.0:
                    w = (acc[i_pv] - p.eta) / dv
                    if 0.0 <= w <= 1.0:
                        tx = tp + w * (t - tp)
                if inband:
                    acc[i_in] = 1.0
                    acc[i_en] = tx
                else:
                    acc[i_in] = 0.0
                    dur = tx - acc[i_en]
                    if dur >= p.min_stick:
                        acc[facc_index(o, M, FACC_COUNT, k)] += 1.0
                        acc[facc_index(o, M, FACC_TIME, k)] += dur
            acc[i_pv] = ade
    acc[o + FACC_TPREV] = t
    envelope_fold(t, acc, vmax, vmin, fmax, fmin)
    if y[0] + q.front_offset > q.route_end:
        acc[ACC_OFFROUTE] = 1.0


@njit(**JIT_NRT_FREE)
def ed_observe(t, y, p, acc):
    """Observer of the event-driven treatment (integrator contract)."""
    ed_rhs(t, y, p, p.dydt)
    _observe(t, y, p, acc)


@njit(**JIT_NRT_FREE)
def reg_observe(t, y, p, acc):
    """Observer of the regularised treatment (integrator contract)."""
    reg_rhs(t, y, p, p.dydt)
    _observe(t, y, p, acc)


# ---- outputs at the sample times ------------------------------------------------------------------
@njit(**JIT)
def friction_outputs(t, Y, p, modes, T_out, accel):
    """Friction forces ``T_out[k, M]`` [N] and accelerations ``accel[k, N]`` [m/s²] at the samples.

    ``Y``: float64[k, n] sampled states; ``modes``: int64[k, M] the mode in force at each sample
    (event-driven; ignored by the regularised treatment).  Rows with NaN states are left NaN.
    """
    q = p.ltd
    N = q.n_veh
    B = q.block
    M = N - 1
    n = Y.shape[1]
    dydt = np.empty(n)
    saved = p.mode.copy()
    for s in range(t.size):
        if not math.isfinite(Y[s, 0]):
            continue
        if p.treatment == 0:
            for k in range(M):
                p.mode[k] = modes[s, k]
            ed_rhs(t[s], Y[s], p, dydt)
        else:
            reg_rhs(t[s], Y[s], p, dydt)
        for k in range(M):
            T_out[s, k] = p.T[k]
        for j in range(N):
            accel[s, j] = dydt[B * j + 1]
    for k in range(M):
        p.mode[k] = saved[k]
