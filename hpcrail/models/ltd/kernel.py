"""Numba kernels of the longitudinal train dynamics model, Bosso et al. 2024 eqs (1)-(7).

m_j dv_j/dt = F_TDB,j − F_res,j + F_c,j−1 − F_c,j − F_air,j            (Bosso et al. 2024 eq 5)

* F_c: connection laws of :mod:`hpcrail.models.couplers.hysteretic` (eq 7).
* F_res: modified Davis (eq 6) with each vehicle's grade and curvature averaged over its own
  length at its own position.  The constant and curving parts act like dry friction and, together
  with the brake-shoe force, go through a standstill treatment: F_fric = clamp(F_other + k_s v,
  −R_s, R_s) with k_s = m/τ_s.  At speed this is R_s·sign(v); at rest it cancels any applied force
  below breakaway (no creep backwards) and above it lets the vehicle start.  It is continuous.
* F_TDB: locomotive traction / dynamic-brake tables per notch, notch interpolated while it ramps,
  optional power and adhesion limits.
* F_air: empirical air brake (brake-pipe signal chain, cylinder lag, μ(V) shoe friction), or the
  pneumatic brake (:mod:`hpcrail.models.brakes.kernel`: μ(V) times the block force of the cylinder state).

State layout: see :mod:`hpcrail.models.ltd.build`.  All kernels read parameters from runtime arrays.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, uint64

from hpcrail._numba import JIT, JIT_NRT_FREE
from hpcrail.models.brakes.kernel import block_force, brake_eval_range, brake_observe
from hpcrail.models.couplers.envelope import ACC_OFFROUTE, envelope_fold, envelope_update
from hpcrail.models.couplers.hysteretic import connection_force
from hpcrail.models.couplers.ltd_noninertial import NC_F, ltd_noninertial_force
from hpcrail.models.schedule import last_le

# rows of the per-sample record written by ltd_eval when record=True
REC_POSITION, REC_COUPLER_FORCE, REC_DEFLECTION, REC_TRACTION, REC_BRAKE, REC_RESISTANCE, REC_GRADE, \
    REC_COMMAND = range(8)
N_REC = 8


@njit(inline="always", **JIT)
def route_means(hk, sk, s0, inv_ds, inv_len, a, b):
    """Grade [-] and curvature [1/m] averaged over [a, b] (a vehicle's length, inv_len = 1/(b−a)).

    ``hk[R, 2]``: cumulative elevation and ∫1/|R| on a uniform grid (piecewise linear, linearly
    extrapolated beyond the route); ``sk[R-1, 2]``: their slope per cell.  A vehicle inside one
    cell (the common case) needs one lookup.
    """
    nr = hk.shape[0]
    ua = (a - s0) * inv_ds
    ub = (b - s0) * inv_ds
    ia = int(ua)
    ib = int(ub)
    if ia == ib and ua >= 0.0 and ia < nr - 1:
        return sk[ia, 0], sk[ia, 1]
    if ia < 0:
        ia = 0
    elif ia > nr - 2:
        ia = nr - 2
    if ib < 0:
        ib = 0
    elif ib > nr - 2:
        ib = nr - 2
    wa = ua - ia
    wb = ub - ib
    g = (hk[ib, 0] * (1.0 - wb) + hk[ib + 1, 0] * wb) - (hk[ia, 0] * (1.0 - wa) + hk[ia + 1, 0] * wa)
    c = (hk[ib, 1] * (1.0 - wb) + hk[ib + 1, 1] * wb) - (hk[ia, 1] * (1.0 - wa) + hk[ia + 1, 1] * wa)
    return g * inv_len, c * inv_len


@njit(inline="always", **JIT)
def _table3(tab, lt, k, nv, dv, speed):
    u = speed / dv
    i = int(u)
    if i >= nv - 1:
        return tab[lt, k, nv - 1]
    w = u - i
    return tab[lt, k, i] * (1.0 - w) + tab[lt, k, i + 1] * w


@njit(inline="always", **JIT)
def tractive_force(p, j, v, notch):
    """Traction (+) or dynamic-brake (opposing motion) force [N] of locomotive vehicle j at speed v
    [m/s] and applied notch ``notch`` (+ traction, − dynamic brake; fractional while ramping)."""
    lt = p.loco_type[j]
    speed = abs(v)
    nv = p.trac_nv[lt]
    dv = p.trac_dv[lt]
    if notch >= 0.0:
        nk = p.trac_nk[lt]
        a = min(notch, float(nk))
        k0 = int(a)
        fr = a - k0
        k1 = min(k0 + 1, nk)
        f = _table3(p.trac, lt, k0, nv, dv, speed)
        if fr > 0.0:
            f += fr * (_table3(p.trac, lt, k1, nv, dv, speed) - f)
        pm = p.p_max[lt]
        if pm > 0.0 and speed > 0.0:
            plim = pm * a / nk / speed
            if f > plim:
                f = plim
        if f > p.f_adhesion[j]:
            f = p.f_adhesion[j]
        return f
    nk = p.dynb_nk[lt]
    if nk == 0:
        return 0.0
    a = min(-notch, float(nk))
    k0 = int(a)
    fr = a - k0
    k1 = min(k0 + 1, nk)
    f = _table3(p.dynb, lt, k0, nv, dv, speed)
    if fr > 0.0:
        f += fr * (_table3(p.dynb, lt, k1, nv, dv, speed) - f)
    if f > p.f_adhesion[j]:
        f = p.f_adhesion[j]
    if v < 0.0:
        return f
    return -f


@njit(inline="always", **JIT)
def schedule_index(p, t, y):
    """Index of the driver command in force (time basis: t; distance basis: front travel)."""
    x = t if p.basis == 0 else y[0] + p.front_offset - p.start_front
    return last_le(p.sched_x, x)


@njit(**JIT_NRT_FREE)
def _noninertial(t, j, e, s, v_a, v_b, p):
    """Force of noninertial connection j (couplers.ltd_noninertial): vehicle j's centre at s, the next
    one at s − d_j − e; the mean route curvature between the two centres sets the coupler geometry."""
    u = p.center_dist[j] + e
    _g, kappa = route_means(p.route_hk, p.route_sk, p.route_s0, p.route_inv_ds, 1.0 / u, s - u, s)
    return ltd_noninertial_force(t, j, p.conn_type[j], e, u, v_a, v_b, kappa, p.ni_cp, p.ni_conn, p.ni_work)


@njit(**JIT_NRT_FREE)
def _noninertial_forces(t, y, p):
    """In-train forces of every noninertial connection into ``p.ni_conn[:, NC_F]`` (a separate pass keeps the
    solver's call out of the vehicle loop, which LLVM then optimises as before)."""
    N = p.n_veh
    B = p.block
    s = y[0]
    for j in range(N - 1):
        e = y[B * (j + 1)]
        if p.conn_type[j] >= p.n_table_types:
            p.ni_conn[j, NC_F] = _noninertial(t, j, e, s, y[B * j + 1], y[B * (j + 1) + 1], p)
        s -= p.center_dist[j] + e


@njit(inline="always", **JIT)
def driver_command(t, y, p, dydt):
    """Driver command in force and the applied-notch rate (written to ``dydt[p.i_notch]``).

    Returns ``(applied notch, commanded notch, commanded brake demand)`` of the lead group.  Global: every
    vehicle range of a partitioned evaluation uses the same values.  Remote locomotive groups (distributed
    power, ``p.n_groups > 1``) follow the command after their radio delay (time-based schedules)."""
    ic = schedule_index(p, t, y)
    cmd_notch = p.sched_notch[ic]
    cmd_brake = p.sched_brake[ic]
    notch = y[p.i_notch]
    dn = (cmd_notch - notch) / p.notch_tau
    if dn > p.notch_rate:
        dn = p.notch_rate
    elif dn < -p.notch_rate:
        dn = -p.notch_rate
    dydt[p.i_notch] = dn
    for g in range(1, p.n_groups):
        icg = last_le(p.sched_x, t - p.group_delay[g])
        dg = (p.sched_notch[icg] - y[p.i_notch + g]) / p.notch_tau
        if dg > p.notch_rate:
            dg = p.notch_rate
        elif dg < -p.notch_rate:
            dg = -p.notch_rate
        dydt[p.i_notch + g] = dg
    return notch, cmd_notch, cmd_brake


@njit(inline="always", **JIT)
def _eval_range(t, y, p, dydt, rec, record, j0, j1, s, notch, cmd_brake, ni, pn):
    """Evaluate the LTD right-hand side of vehicles ``j0 <= j < j1`` (0-based, head first).

    The only physics of the LTD model: the monolithic right-hand side calls it once for the whole
    train, the partitioned ones (:mod:`hpcrail.partition`) once per block of hidden vehicles.

    Inputs beyond the range are read from ``y`` itself: the connection ahead of vehicle ``j0``
    (its force is evaluated here from e_{j0} and v_{j0-1} − v_{j0}, bitwise the same value the
    range ahead computes as its rear force: action = reaction exactly), the brake-pipe signal of
    vehicle ``j0-1`` (upstream; ``cmd_brake`` at the head) and, at the rear, e_{j1} and v_{j1}.
    ``s`` [m] is the centre position of vehicle ``j0`` (``y[0]`` for the head; a partitioned
    evaluation gets it from an exclusive scan over blocks).

    Writes ``dydt[B*j0+1 : B*j1+1]`` (``dydt[0]`` too when ``j0 == 0``; up to ``B*N`` for the tail),
    i.e. the speed/brake derivatives of the range and the extension rates of the connections
    behind its vehicles; with ``record`` also ``rec[:, j0:j1]`` (see ``REC_*``).
    Returns the range's contributions to the four power integrals (traction, running resistance,
    air brake, coupler) [W].  ``ni``: the train has noninertial couplers, whose forces were solved
    before (:func:`_noninertial_forces`, ``p.ni_conn``); a constant, so each case compiles its own loop.
    ``pn``: the brake force comes from the pneumatic brake's cylinder states (a constant too; the brake
    states' own derivatives are :func:`hpcrail.models.brakes.kernel.brake_eval_range`'s).  ``notch`` is
    the lead group's applied notch; remote groups' notches are read from ``y``.
    Source: Bosso et al. 2024 eqs (1)-(7).
    """
    N = p.n_veh
    B = p.block
    air = p.air_brake == 1
    energy = p.i_energy >= 0
    s0 = p.route_s0
    inv_ds = p.route_inv_ds
    # unsigned indices: numba skips the negative-index check on every array access (PERFORMANCE_NOTES)
    one = uint64(1)
    Nu = uint64(N)
    Bu = uint64(B)
    last = Nu - one
    n_table = uint64(p.n_table_types)
    ju0 = uint64(j0)
    ju1 = uint64(j1)
    f_front = 0.0
    upstream = cmd_brake
    if ju0 == 0:
        dydt[0] = y[1]
    else:
        jp = ju0 - one
        if ni and p.conn_type[jp] >= uint64(p.n_table_types):
            f_front = p.ni_conn[jp, NC_F]
        else:
            f_front = connection_force(y[Bu * ju0], y[Bu * jp + one] - y[Bu * ju0 + one], p.conn_type[jp],
                                       p.conn_rowpar, p.conn_typepar, p.conn_fm, p.conn_fa)
        if air:
            upstream = y[Bu * jp + uint64(2)]
    w_t = 0.0
    w_r = 0.0
    w_b = 0.0
    w_c = 0.0
    for jj in range(ju1 - ju0):
        j = ju0 + jj
        base = Bu * j
        v = y[base + one]
        e = 0.0
        f_rear = 0.0
        if j < last:
            e = y[base + Bu]
            de = v - y[base + Bu + one]
            if ni and p.conn_type[j] >= n_table:   # noninertial coupler, solved before the loop
                f_rear = p.ni_conn[j, NC_F]
            else:
                f_rear = connection_force(e, de, p.conn_type[j], p.conn_rowpar, p.conn_typepar, p.conn_fm, p.conn_fa)
            dydt[base + Bu] = de
            w_c += f_rear * de
        hl = p.half_len[j]
        slope, kappa = route_means(p.route_hk, p.route_sk, s0, inv_ds, p.inv_len[j], s - hl, s + hl)
        f_grade = p.mass[j] * 9.81 * slope
        f_tr = 0.0
        if p.loco_type[j] >= 0:
            grp = p.notch_group[j]
            f_tr = tractive_force(p, j, v, notch if grp == 0 else y[p.i_notch + grp])
        f_brk = 0.0
        if pn:
            fn = block_force(y, p, j)
            if fn > 0.0:
                sp = abs(v)
                f_brk = p.mu0[j] * (1.0 + p.mu_a[j] * sp) / (1.0 + p.mu_b[j] * sp) * fn
        elif air:
            b = y[base + uint64(2)]
            pc = y[base + uint64(3)]
            if upstream > b:
                c = p.ab_c_emergency if upstream > p.ab_emergency_level else p.ab_c_service
            else:
                c = p.ab_c_release
            dydt[base + uint64(2)] = (upstream - b) * c / p.link_len[j]
            if b > pc:
                tau = p.ab_tau_emergency if b > p.ab_emergency_level else p.ab_tau_apply
            else:
                tau = p.ab_tau_release
            dydt[base + uint64(3)] = (b - pc) / tau
            upstream = b
            if pc > 0.0:
                sp = abs(v)
                mu = p.mu0[j] * (1.0 + p.mu_a[j] * sp) / (1.0 + p.mu_b[j] * sp)
                f_brk = mu * p.shoe_full[j] * pc
        r_static = p.r0[j] + p.rcurve[j] * kappa
        r_s = r_static + f_brk
        f_speed = (p.r1[j] + p.r2[j] * abs(v)) * v
        f_other = f_tr + f_front - f_rear - f_grade - f_speed
        f_fric = f_other + p.k_stand[j] * v
        if f_fric > r_s:
            f_fric = r_s
        elif f_fric < -r_s:
            f_fric = -r_s
        dydt[base + one] = (f_other - f_fric) * p.inv_mass_eff[j]
        if energy or record:
            share_b = f_brk / r_s if f_brk > 0.0 else 0.0
            if energy:
                w_t += v * f_tr
                w_r += v * (f_speed + f_fric * (1.0 - share_b))
                w_b += v * f_fric * share_b
            if record:
                rec[REC_POSITION, j] = s
                rec[REC_TRACTION, j] = f_tr
                rec[REC_BRAKE, j] = -f_fric * share_b
                rec[REC_RESISTANCE, j] = -(f_speed + f_fric * (1.0 - share_b))
                rec[REC_GRADE, j] = -f_grade
                if j < last:
                    rec[REC_COUPLER_FORCE, j] = f_rear
                    rec[REC_DEFLECTION, j] = e
        f_front = f_rear
        if j < last:
            s = s - (p.center_dist[j] + e)  # one dependent add per vehicle on the loop-carried chain
    return w_t, w_r, w_b, w_c


@njit(**JIT_NRT_FREE)
def ltd_eval_range(t, y, p, dydt, rec, record, j0, j1, s, notch, cmd_brake):
    """:func:`_eval_range` for trains whose connections are all table laws (what the partitioned
    backends evaluate per block; see there for arguments and returns)."""
    return _eval_range(t, y, p, dydt, rec, record, j0, j1, s, notch, cmd_brake, False, False)


@njit(**JIT_NRT_FREE)
def _ltd_eval_range_ni(t, y, p, dydt, rec, record, j0, j1, s, notch, cmd_brake):
    return _eval_range(t, y, p, dydt, rec, record, j0, j1, s, notch, cmd_brake, True, False)


@njit(**JIT_NRT_FREE)
def ltd_eval_range_pneumatic(t, y, p, dydt, rec, record, j0, j1, s, notch, cmd_brake):
    """:func:`_eval_range` of a train with the pneumatic brake (table-law connections): the vehicles'
    motion; the brake states are :func:`hpcrail.models.brakes.kernel.brake_eval_range`'s."""
    return _eval_range(t, y, p, dydt, rec, record, j0, j1, s, notch, cmd_brake, False, True)


@njit(inline="always", **JIT)
def _store_totals(p, dydt, rec, record, w_t, w_r, w_b, w_c, cmd_notch, cmd_brake):
    """Energy rates into ``dydt`` (when the model integrates the energies) and the commands into ``rec``."""
    if p.i_energy >= 0:
        ie = p.i_energy
        dydt[ie] = w_t
        dydt[ie + 1] = w_r
        dydt[ie + 2] = w_b
        dydt[ie + 3] = w_c
    if record:
        rec[REC_COMMAND, 0] = cmd_notch
        rec[REC_COMMAND, 1] = cmd_brake


@njit(**JIT_NRT_FREE)
def ltd_eval_tables(t, y, p, dydt, rec, record):
    """:func:`ltd_eval` for trains whose connections are all table laws (``p.n_noninertial == 0``),
    compiled without the noninertial path: the kernels of such trains (:func:`ltd_rhs_tables`, ...) never
    compile the coupler Newton solver, which cuts the first run's compilation (issue 17 item 5).
    Bitwise the same result as :func:`ltd_eval` on those trains (it is what :func:`ltd_eval` runs)."""
    notch, cmd_notch, cmd_brake = driver_command(t, y, p, dydt)
    w_t, w_r, w_b, w_c = ltd_eval_range(t, y, p, dydt, rec, record, np.int64(0), p.n_veh, y[0], notch, cmd_brake)
    _store_totals(p, dydt, rec, record, w_t, w_r, w_b, w_c, cmd_notch, cmd_brake)


@njit(**JIT_NRT_FREE)
def ltd_eval(t, y, p, dydt, rec, record):
    """Evaluate the LTD right-hand side into ``dydt`` (float64[n]); with ``record`` also write the
    per-vehicle force breakdown into ``rec[N_REC, N]`` (see ``REC_*``).  One call of
    :func:`ltd_eval_range` over the whole train.  Trains with noninertial couplers first solve those
    (couplers.ltd_noninertial) and run their own compiled copy of the vehicle loop, which reads the
    solved forces; trains without them run the plain table-law loop (:func:`ltd_eval_tables`)."""
    if p.n_noninertial == 0:
        ltd_eval_tables(t, y, p, dydt, rec, record)
        return
    notch, cmd_notch, cmd_brake = driver_command(t, y, p, dydt)
    _noninertial_forces(t, y, p)
    w_t, w_r, w_b, w_c = _ltd_eval_range_ni(t, y, p, dydt, rec, record, 0, p.n_veh, y[0], notch, cmd_brake)
    _store_totals(p, dydt, rec, record, w_t, w_r, w_b, w_c, cmd_notch, cmd_brake)


@njit(**JIT_NRT_FREE)
def ltd_eval_pneumatic(t, y, p, dydt, rec, record):
    """:func:`ltd_eval` of a train with the pneumatic brake (``p.air_brake == 2``): the vehicles' motion
    with the block forces of the cylinder states, then every brake state (brake pipe, valves, driver's
    brake valves; :mod:`hpcrail.models.brakes.kernel`)."""
    notch, cmd_notch, cmd_brake = driver_command(t, y, p, dydt)
    w_t, w_r, w_b, w_c = ltd_eval_range_pneumatic(t, y, p, dydt, rec, record, 0, p.n_veh, y[0], notch, cmd_brake)
    brake_eval_range(t, y, p, dydt, np.int64(0), p.n_veh)
    _store_totals(p, dydt, rec, record, w_t, w_r, w_b, w_c, cmd_notch, cmd_brake)


@njit(**JIT_NRT_FREE)
def ltd_rhs_pneumatic(t, y, p, dydt):
    """:func:`ltd_rhs` of a train with the pneumatic brake (:func:`ltd_eval_pneumatic`)."""
    ltd_eval_pneumatic(t, y, p, dydt, p.no_record, False)


@njit(**JIT_NRT_FREE)
def ltd_rhs(t, y, p, dydt):
    """Right-hand side dy/dt = f(t, y) of the LTD model (integrator contract).

    ``y``, ``dydt``: float64[n] in the layout of :mod:`hpcrail.models.ltd.build`; SI units.
    Source: Bosso et al. 2024 eqs (1)-(7).
    """
    ltd_eval(t, y, p, dydt, p.no_record, False)


@njit(**JIT_NRT_FREE)
def ltd_rhs_tables(t, y, p, dydt):
    """:func:`ltd_rhs` of a train without noninertial couplers, compiled without their path
    (:func:`ltd_eval_tables`)."""
    ltd_eval_tables(t, y, p, dydt, p.no_record, False)


@njit(**JIT_NRT_FREE)
def _no_noninertial(t, j, e, s, v_a, v_b, p):
    """Stand-in for :func:`_noninertial` in the table-law kernels (never called there: every connection
    of such a train is a table law)."""
    return 0.0


@njit(inline="always", **JIT)
def _observe_range(t, y, p, acc, j0, j1, s, noninertial):
    """Per-coupler envelopes of the couplers behind vehicles ``j0 <= j < j1`` (updated in ``acc``)
    and the range's extremes ``(v_max, v_min, F_max, F_min)`` of speed [m/s] and in-train force [N].
    ``s`` [m]: centre position of vehicle ``j0`` (noninertial connections need positions).
    ``noninertial``: the force law of noninertial connections (:func:`_noninertial`, or
    :func:`_no_noninertial` in the table-law kernels, which then never compile the coupler solver).
    The observer's physics in one place: :func:`ltd_observe` calls it for the whole train, the
    partitioned observers once per vehicle range."""
    N = p.n_veh
    B = p.block
    M = N - 1
    vmax = -np.inf
    vmin = np.inf
    fmax = -np.inf
    fmin = np.inf
    for j in range(j0, j1):
        v = y[B * j + 1]
        if v > vmax:
            vmax = v
        if v < vmin:
            vmin = v
    s_k = s   # centre of vehicle k
    for k in range(j0, min(j1, M)):
        e = y[B * (k + 1)]
        de = y[B * k + 1] - y[B * (k + 1) + 1]
        if p.conn_type[k] < p.n_table_types:
            f = connection_force(e, de, p.conn_type[k], p.conn_rowpar, p.conn_typepar, p.conn_fm, p.conn_fa)
        else:
            f = noninertial(t, k, e, s_k, y[B * k + 1], y[B * (k + 1) + 1], p)
        s_k -= p.center_dist[k] + e
        envelope_update(acc, M, k, f, e, t)
        if f > fmax:
            fmax = f
        if f < fmin:
            fmin = f
    return vmax, vmin, fmax, fmin


@njit(**JIT_NRT_FREE)
def ltd_observe_range_tables(t, y, p, acc, j0, j1, s):
    """Per-coupler envelopes of the couplers behind vehicles ``j0 <= j < j1`` of a train whose connections are
    all table laws (see :func:`_observe_range`; compiled without the noninertial path, as the partitioned
    backends' right-hand side :func:`ltd_eval_range`, which refuse other connections)."""
    return _observe_range(t, y, p, acc, j0, j1, s, _no_noninertial)


@njit(inline="always", **JIT)
def observe_combine(t, y, p, acc, vmax, vmin, fmax, fmin):
    """Fold a range's extremes into the global metrics of ``acc`` (ranges in head-to-tail order give
    the monolithic result: the time of a maximum is the first step where it occurs)."""
    envelope_fold(t, acc, vmax, vmin, fmax, fmin)


@njit(inline="always", **JIT)
def _observe(t, y, p, acc, noninertial):
    vmax, vmin, fmax, fmin = _observe_range(t, y, p, acc, np.int64(0), p.n_veh, y[0], noninertial)
    observe_combine(t, y, p, acc, vmax, vmin, fmax, fmin)
    if y[0] + p.front_offset > p.route_end:
        acc[ACC_OFFROUTE] = 1.0


@njit(**JIT_NRT_FREE)
def ltd_observe(t, y, p, acc):
    """Accumulate the benchmark metrics over every accepted step (Bosso et al. 2024 Tables 1-2):
    speed extremes, per-coupler force and extension extremes, time of the largest draft/buff force,
    and a flag when the front of the train leaves the route."""
    _observe(t, y, p, acc, _noninertial)


@njit(**JIT_NRT_FREE)
def ltd_observe_tables(t, y, p, acc):
    """:func:`ltd_observe` of a train without noninertial couplers, compiled without their path."""
    _observe(t, y, p, acc, _no_noninertial)


@njit(**JIT_NRT_FREE)
def ltd_observe_pneumatic(t, y, p, acc):
    """:func:`ltd_observe_tables` plus the brake metrics of the pneumatic brake
    (:func:`hpcrail.models.brakes.kernel.brake_observe`)."""
    _observe(t, y, p, acc, _no_noninertial)
    brake_observe(t, y, p, acc)


@njit(inline="always", **JIT)
def _outputs(t, Y, p, rec, accel, notch_cmd, brake_cmd, evaluate):
    n = Y.shape[1]
    N = p.n_veh
    B = p.block
    dydt = np.empty(n)
    for k in range(t.size):
        if not math.isfinite(Y[k, 0]):
            continue
        evaluate(t[k], Y[k], p, dydt, rec[k], True)
        for j in range(N):
            accel[k, j] = dydt[B * j + 1]
        notch_cmd[k] = rec[k, REC_COMMAND, 0]
        brake_cmd[k] = rec[k, REC_COMMAND, 1]


@njit(**JIT)
def ltd_outputs(t, Y, p, rec, accel, notch_cmd, brake_cmd):
    """Per-sample outputs from sampled states.

    ``t``: float64[k]; ``Y``: float64[k, n]; writes ``rec[k, N_REC, N]`` (force breakdown),
    ``accel[k, N]`` [m/s²], ``notch_cmd[k]``, ``brake_cmd[k]``.  Rows with NaN states (after a
    failure) are left NaN.
    """
    _outputs(t, Y, p, rec, accel, notch_cmd, brake_cmd, ltd_eval)


@njit(**JIT)
def ltd_outputs_tables(t, Y, p, rec, accel, notch_cmd, brake_cmd):
    """:func:`ltd_outputs` of a train without noninertial couplers, compiled without their path."""
    _outputs(t, Y, p, rec, accel, notch_cmd, brake_cmd, ltd_eval_tables)


@njit(**JIT)
def ltd_outputs_pneumatic(t, Y, p, rec, accel, notch_cmd, brake_cmd):
    """:func:`ltd_outputs` of a train with the pneumatic brake."""
    _outputs(t, Y, p, rec, accel, notch_cmd, brake_cmd, ltd_eval_pneumatic)
