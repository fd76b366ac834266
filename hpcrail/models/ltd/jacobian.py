"""Sparsity pattern of the LTD Jacobian ∂f/∂y (and, below, its analytic values).

The state layout of :mod:`hpcrail.models.ltd.build` is vehicle-major, so ∂f/∂y is banded in the
natural order (lower = upper = B, B the block size) except for the applied-notch column (every
locomotive's tractive force depends on it), which the integrators keep as a dense border.

Values are written per vehicle into ``S`` fixed slots (``S = 8`` without, 13 with the air brake),
vehicle j's slots at ``vals[S*j : S*j + S]``, then the tail slots:

====  ===========================  ===================================================
slot  entry (row, column)          meaning
====  ===========================  ===================================================
0     (e_j, v_{j−1}) / (s_1, v_1)  extension rate ė_j = v_{j−1} − v_j (j ≥ 1); ṡ_1 = v_1
1     (e_j, v_j)                   (j ≥ 1)
2     (v_j, v_j)                   coupler damping, resistance, traction-speed slope
3     (v_j, v_{j−1})               front connection rate (j ≥ 1)
4     (v_j, e_j)                   front connection stiffness (j ≥ 1)
5     (v_j, e_{j+1})               rear connection stiffness (j ≤ N−2)
6     (v_j, v_{j+1})               rear connection rate (j ≤ N−2)
7     (v_j, notch)                 tractive force per notch (locomotives)
8     (v_j, p_j)                   air brake: shoe force per cylinder pressure
9     (b_j, b_j)                   brake-pipe signal
10    (b_j, b_{j−1})               signal from upstream (j ≥ 1)
11    (p_j, b_j)                   cylinder pressure lag
12    (p_j, p_j)
====  ===========================  ===================================================

tail: (notch, notch), (notch, s_1) (distance-based schedule), then four unused slots (the work
integrals: their rows depend on the whole train but no state depends on them; they are left out of
the pattern entirely, see :func:`ltd_jacobian_pattern`), then (notch_g, notch_g) of the remote
locomotive groups g ≥ 1 (distributed power).  Slot 7 of a locomotive is (v_j, notch of its group).

With the pneumatic brake (``air_brake == 2``) the vehicles have the 8 plain slots and the brake rows
follow the tail (:mod:`hpcrail.models.brakes.layout`); the brake force's dependence on the cylinder
state is left out (the brake states do not depend on the motion: block-triangular system).

Connections: the table laws' derivatives come from :func:`~hpcrail.models.couplers.hysteretic.connection_force_jac`,
the noninertial couplers' from :func:`~hpcrail.models.couplers.ltd_noninertial.ltd_noninertial_force_jac`
(the law table, :mod:`hpcrail.kinds.ltd.couplers`, says which laws have analytic entries).

Neglected everywhere: the dependence of each vehicle's grade and curvature on its position (the
lead position and every extension ahead of it).  It is zero except while a vehicle straddles a
grade or curvature change, where it is at most m·g·Δi/L ≈ 1e3 N/m against coupler stiffnesses of
1e6-1e8 N/m.
"""
from __future__ import annotations

import numpy as np

N_SLOTS_PLAIN = 8
N_SLOTS_AIR = 13
N_TAIL = 6

#: relative-tolerance factor of the speed states (see :func:`ltd_rtol_scale`)
SPEED_RTOL_FACTOR = 0.05


def ltd_rtol_scale(p, n_states: int) -> np.ndarray:
    """Per-state factor on the relative tolerance, float64[n].

    In-train forces depend on the *difference* of neighbouring speeds, through the draft gears'
    transition band v_ε ≈ 0.01 m/s, while the speeds themselves are ~20 m/s: a relative tolerance
    applied to |v| would allow speed errors of rtol·20 m/s, a sizeable fraction of v_ε.  The speeds
    therefore get rtol × ``SPEED_RTOL_FACTOR`` (0.05: relative speed errors measured against
    ~1 m/s); every other state keeps the user's rtol.  (Measured on train 4: the envelope error
    at rtol = 1e-4 halves for ~40 % more RHS evaluations, docs/performance.md.)
    """
    r = np.ones(n_states)
    r[1:p.block * p.n_veh:p.block] = SPEED_RTOL_FACTOR
    return r


def slots_per_vehicle(p) -> int:
    return N_SLOTS_AIR if p.air_brake == 1 else N_SLOTS_PLAIN


def tail_size(p) -> int:
    """Slots of the global rows after the vehicles' (:data:`N_TAIL` plus one per remote notch group)."""
    return N_TAIL + p.n_groups - 1


def ltd_jacobian_pattern(p, n_states: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, cols, border)`` of the LTD Jacobian for parameters ``p`` (:class:`LTDParams`).

    ``rows``/``cols``: int64[S·N + 6 + G − 1 (+ the brake rows)] (−1 for slots that do not exist for a
    vehicle); ``border``: int64[G], the applied-notch states.  The work-integral rows have no entries:
    nothing depends on those states, so a Newton iteration converges without them (they lag one
    iteration behind the train states).  Their rows must not be declared at all, not even their
    (zero) diagonal: those rows depend on every state, so finite differences over structurally
    orthogonal column groups would credit the whole group's change of dW/dt to the diagonal — a
    spurious entry of order ΣF δv/δW (760 s⁻¹ measured on noninertial_curve_100) that limits the
    steps of an implicit method to ~1/760 s (40 000 TR-BDF2 steps for 60 s instead of 1400).
    """
    N, B = p.n_veh, p.block
    S = slots_per_vehicle(p)
    rows = -np.ones(S * N + tail_size(p), np.int64)
    cols = -np.ones(S * N + tail_size(p), np.int64)
    inotch = p.i_notch
    for j in range(N):
        b = B * j
        k = S * j

        def put(slot, r, c):
            rows[k + slot] = r
            cols[k + slot] = c

        if j == 0:
            put(0, 0, 1)
        else:
            put(0, b, b - B + 1)
            put(1, b, b + 1)
            put(3, b + 1, b - B + 1)
            put(4, b + 1, b)
        put(2, b + 1, b + 1)
        if j < N - 1:
            put(5, b + 1, b + B)
            put(6, b + 1, b + B + 1)
        if p.loco_type[j] >= 0:
            put(7, b + 1, inotch + p.notch_group[j])
        if p.air_brake == 1:
            put(8, b + 1, b + 3)
            put(9, b + 2, b + 2)
            if j > 0:
                put(10, b + 2, b - B + 2)
            put(11, b + 3, b + 2)
            put(12, b + 3, b + 3)
    k = S * N
    rows[k], cols[k] = inotch, inotch
    if p.basis == 1:
        rows[k + 1], cols[k + 1] = inotch, 0
    # slots k + 2 .. k + 5 (the work integrals) stay −1: see the docstring
    for g in range(1, p.n_groups):
        rows[k + N_TAIL + g - 1], cols[k + N_TAIL + g - 1] = inotch + g, inotch + g
    assert n_states == B * N + p.n_groups + (4 if p.i_energy >= 0 else 0)
    border = inotch + np.arange(p.n_groups, dtype=np.int64)
    if p.air_brake == 2:
        from hpcrail.models.brakes.layout import brake_jacobian_pattern

        br, bc = brake_jacobian_pattern(p)
        rows, cols = np.concatenate([rows, br]), np.concatenate([cols, bc])
    return rows, cols, border


# ================================================================================================
# analytic values (numba)
# ================================================================================================
from numba import njit, uint64  # noqa: E402

from hpcrail._numba import JIT, JIT_NRT_FREE  # noqa: E402
from hpcrail.models.couplers.hysteretic import connection_force_jac  # noqa: E402
from hpcrail.models.couplers.ltd_noninertial import ltd_noninertial_force_jac  # noqa: E402
from hpcrail.models.brakes.kernel import block_force, brake_jac_range  # noqa: E402
from hpcrail.models.ltd.kernel import route_means, schedule_index  # noqa: E402
from hpcrail.models.schedule import last_le  # noqa: E402


@njit(**JIT_NRT_FREE)
def _noninertial_jac(t, j, e, s, v_a, v_b, p):
    """``(F, ∂F/∂e_j, ∂F/∂ė_j)`` of noninertial connection j with vehicle j's centre at ``s`` [m] (the
    geometry of ``kernel._noninertial``; the position dependence of the mean curvature is neglected)."""
    u = p.center_dist[j] + e
    _g, kappa = route_means(p.route_hk, p.route_sk, p.route_s0, p.route_inv_ds, 1.0 / u, s - u, s)
    return ltd_noninertial_force_jac(t, j, p.conn_type[j], e, u, v_a, v_b, kappa, p.ni_cp, p.ni_conn, p.ni_work)


@njit(inline="always", **JIT)
def _table_d(tab, lt, k, nv, dv, speed):
    """(value, d value/d speed) of a traction table row (see ``kernel._table3``)."""
    u = speed / dv
    i = int(u)
    if i >= nv - 1:
        return tab[lt, k, nv - 1], 0.0
    w = u - i
    a = tab[lt, k, i]
    b = tab[lt, k, i + 1]
    return a * (1.0 - w) + b * w, (b - a) / dv


@njit(inline="always", **JIT)
def tractive_force_jac(p, j, v, notch):
    """``(F, ∂F/∂v, ∂F/∂notch)`` of ``kernel.tractive_force`` (same arguments)."""
    lt = p.loco_type[j]
    speed = abs(v)
    sv = 1.0 if v >= 0.0 else -1.0
    nv = p.trac_nv[lt]
    dv = p.trac_dv[lt]
    if notch >= 0.0:
        nk = p.trac_nk[lt]
        a = min(notch, float(nk))
        da = 1.0 if notch < nk else 0.0
        k0 = int(a)
        fr = a - k0
        k1 = min(k0 + 1, nk)
        f, fs = _table_d(p.trac, lt, k0, nv, dv, speed)
        f1, fs1 = _table_d(p.trac, lt, k1, nv, dv, speed)
        dfn = (f1 - f) * da
        if fr > 0.0:
            f += fr * (f1 - f)
            fs += fr * (fs1 - fs)
        pm = p.p_max[lt]
        if pm > 0.0 and speed > 0.0:
            plim = pm * a / nk / speed
            if f > plim:
                f = plim
                fs = -plim / speed
                dfn = pm / nk / speed * da
        if f > p.f_adhesion[j]:
            return p.f_adhesion[j], 0.0, 0.0
        return f, fs * sv, dfn
    nk = p.dynb_nk[lt]
    if nk == 0:
        return 0.0, 0.0, 0.0
    a = min(-notch, float(nk))
    da = -1.0 if -notch < nk else 0.0
    k0 = int(a)
    fr = a - k0
    k1 = min(k0 + 1, nk)
    f, fs = _table_d(p.dynb, lt, k0, nv, dv, speed)
    f1, fs1 = _table_d(p.dynb, lt, k1, nv, dv, speed)
    dfn = (f1 - f) * da
    if fr > 0.0:
        f += fr * (f1 - f)
        fs += fr * (fs1 - fs)
    if f > p.f_adhesion[j]:
        f = p.f_adhesion[j]
        fs = 0.0
        dfn = 0.0
    if v < 0.0:
        return f, fs * sv, dfn
    return -f, -fs * sv, -dfn


@njit(**JIT_NRT_FREE)
def _no_noninertial_jac(t, j, e, s, v_a, v_b, p):
    """Stand-in for :func:`_noninertial_jac` in :func:`ltd_jac_tables` (never called there)."""
    return 0.0, 0.0, 0.0


@njit(**JIT_NRT_FREE)
def ltd_jac(t, y, p, vals):
    """Analytic Jacobian ∂f/∂y of ``kernel.ltd_rhs`` (see :func:`_jac`)."""
    _jac(t, y, p, vals, _noninertial_jac)


@njit(**JIT_NRT_FREE)
def ltd_jac_tables(t, y, p, vals):
    """:func:`ltd_jac` of a train without noninertial couplers (``p.n_noninertial == 0``), compiled
    without their path (``kernel.ltd_rhs_tables``); bitwise the same entries on such trains."""
    _jac(t, y, p, vals, _no_noninertial_jac)


@njit(inline="always", **JIT)
def _jac(t, y, p, vals, noninertial_jac):
    """Analytic Jacobian ∂f/∂y of ``kernel.ltd_rhs`` at (t, y), written into the slots of
    :func:`ltd_jacobian_pattern` (float64[S·N + 6]).  Mirrors ``kernel.ltd_eval`` branch by
    branch (slack, tables, transition band, noninertial couplers, standstill clamp, power/adhesion
    limits, air-brake phases); the grade/curvature dependence on position is neglected (module
    docstring).  Source: derivatives of Bosso et al. 2024 eqs (5)-(7) and Massa et al. 2012 eqs 42-45
    as implemented in the kernels.  ``noninertial_jac``: ``(F, ∂F/∂e, ∂F/∂ė)`` of a noninertial connection
    (:func:`_noninertial_jac`, or a stand-in for trains without them).

    ``vals``: float64[S·N + 6] written in place; ``t`` [s], ``y`` float64[n]."""
    N = p.n_veh
    for k in range(vals.size):
        vals[k] = 0.0
    ic = schedule_index(p, t, y)
    cmd_brake = p.sched_brake[ic]
    _jac_range(t, y, p, vals, np.int64(0), N, y[0], y[p.i_notch], cmd_brake, noninertial_jac, False)
    ltd_jac_tail(t, y, p, vals)


@njit(**JIT_NRT_FREE)
def ltd_jac_pneumatic(t, y, p, vals):
    """Analytic Jacobian of ``kernel.ltd_rhs_pneumatic``: the vehicles' slots (the brake force from the
    cylinder states, its speed dependence μ'(V) included), the global rows, then the brake rows
    (:func:`hpcrail.models.brakes.kernel.brake_jac_range`)."""
    N = p.n_veh
    ic = schedule_index(p, t, y)
    _jac_range(t, y, p, vals, np.int64(0), N, y[0], y[p.i_notch], p.sched_brake[ic], _no_noninertial_jac, True)
    ltd_jac_tail(t, y, p, vals)
    brake_jac_range(t, y, p, vals, np.int64(0), N)


@njit(**JIT_NRT_FREE)
def ltd_jac_range(t, y, p, vals, j0, j1, s, notch, cmd_brake):
    """The Jacobian slots of vehicles ``j0 <= j < j1`` (0-based; :func:`ltd_jacobian_pattern`), zeroed
    first, plus the kinematic slots 0-1 of vehicle ``j1`` (the extension rate of the connection behind
    the range, a row of the range's states).  ``s`` [m]: centre position of vehicle ``j0``; ``notch``,
    ``cmd_brake``: the applied notch and the commanded brake demand (``kernel.driver_command``).  The
    connection ahead of ``j0`` and, with the air brake, the upstream brake-pipe signal are read from
    ``y`` (as ``kernel._eval_range``), so that blocks of hidden vehicles fill their own rows (the
    distributed-state runs of :mod:`hpcrail.partition.ltd`); :func:`ltd_jac` is one range over the
    whole train.  ``vals`` float64[S·N + 6] written in place; ``t`` [s], ``y`` float64[n]."""
    _jac_range(t, y, p, vals, j0, j1, s, notch, cmd_brake, _noninertial_jac, False)


@njit(inline="always", **JIT)
def _jac_range(t, y, p, vals, j0, j1, s, notch, cmd_brake, noninertial_jac, pn):
    """:func:`ltd_jac_range` with the noninertial connection's derivative function as an argument;
    ``pn``: the brake force of the pneumatic brake (a constant)."""
    N = p.n_veh
    B = p.block
    S = N_SLOTS_AIR if p.air_brake == 1 else N_SLOTS_PLAIN
    k_end = S * j1 + 2 if j1 < N else S * N
    for k in range(S * j0, k_end):
        vals[k] = 0.0
    if j1 < N:
        vals[S * j1] = 1.0
        vals[S * j1 + 1] = -1.0
    air = p.air_brake == 1
    one = uint64(1)
    Nu = uint64(N)
    Bu = uint64(B)
    last = Nu - one
    f_front = 0.0
    dff_de = 0.0    # ∂F_front/∂e_j
    dff_dde = 0.0   # ∂F_front/∂ė_j (ė_j = v_{j−1} − v_j)
    upstream = cmd_brake
    ju0 = uint64(j0)
    if ju0 > 0:  # the connection ahead of the range, from the states (as kernel._eval_range)
        jp = ju0 - one
        e_f = y[Bu * ju0]
        if p.n_noninertial > 0 and p.conn_type[jp] >= uint64(p.n_table_types):
            f_front, dff_de, dff_dde = noninertial_jac(t, jp, e_f, s + p.center_dist[jp] + e_f, y[Bu * jp + one],
                                                       y[Bu * ju0 + one], p)
        else:
            f_front, dff_de, dff_dde = connection_force_jac(e_f, y[Bu * jp + one] - y[Bu * ju0 + one], p.conn_type[jp],
                                                            p.conn_rowpar, p.conn_typepar, p.conn_fm, p.conn_fa)
        if air:
            upstream = y[Bu * jp + uint64(2)]
    for jj in range(uint64(j1) - ju0):
        j = ju0 + jj
        base = Bu * j
        k = uint64(S) * j
        v = y[base + one]
        e = 0.0
        f_rear = 0.0
        dfr_de = 0.0
        dfr_dde = 0.0
        if j < last:
            e = y[base + Bu]
            de = v - y[base + Bu + one]
            if p.n_noninertial > 0 and p.conn_type[j] >= uint64(p.n_table_types):
                f_rear, dfr_de, dfr_dde = noninertial_jac(t, j, e, s, v, y[base + Bu + one], p)
            else:
                f_rear, dfr_de, dfr_dde = connection_force_jac(e, de, p.conn_type[j], p.conn_rowpar, p.conn_typepar,
                                                               p.conn_fm, p.conn_fa)
        # kinematic rows: ṡ_1 = v_1, ė_j = v_{j−1} − v_j
        if j == 0:
            vals[k] = 1.0
        else:
            vals[k] = 1.0
            vals[k + one] = -1.0
        f_tr = 0.0
        dtr_dv = 0.0
        dtr_dn = 0.0
        if p.loco_type[j] >= 0:
            grp = p.notch_group[j]
            f_tr, dtr_dv, dtr_dn = tractive_force_jac(p, j, v, notch if grp == 0 else y[p.i_notch + grp])
        f_brk = 0.0
        dbrk_dv = 0.0
        dbrk_dp = 0.0
        if pn:
            fn = block_force(y, p, j)
            if fn > 0.0:
                sp = abs(v)
                den = 1.0 + p.mu_b[j] * sp
                f_brk = p.mu0[j] * (1.0 + p.mu_a[j] * sp) / den * fn
                dbrk_dv = p.mu0[j] * (p.mu_a[j] - p.mu_b[j]) / (den * den) * fn * (1.0 if v >= 0.0 else -1.0)
        elif air:
            b = y[base + uint64(2)]
            pc = y[base + uint64(3)]
            if upstream > b:
                c = p.ab_c_emergency if upstream > p.ab_emergency_level else p.ab_c_service
            else:
                c = p.ab_c_release
            vals[k + uint64(9)] = -c / p.link_len[j]
            if j > 0:
                vals[k + uint64(10)] = c / p.link_len[j]
            if b > pc:
                tau = p.ab_tau_emergency if b > p.ab_emergency_level else p.ab_tau_apply
            else:
                tau = p.ab_tau_release
            vals[k + uint64(11)] = 1.0 / tau
            vals[k + uint64(12)] = -1.0 / tau
            upstream = b
            if pc > 0.0:
                sp = abs(v)
                den = 1.0 + p.mu_b[j] * sp
                mu = p.mu0[j] * (1.0 + p.mu_a[j] * sp) / den
                f_brk = mu * p.shoe_full[j] * pc
                dbrk_dp = mu * p.shoe_full[j]
                dmu = p.mu0[j] * (p.mu_a[j] - p.mu_b[j]) / (den * den)
                dbrk_dv = dmu * p.shoe_full[j] * pc * (1.0 if v >= 0.0 else -1.0)
        # grade and curvature at the vehicle's position (values only: their position derivative is
        # neglected) decide, with the forces, which side of the standstill clamp the vehicle is on
        hl = p.half_len[j]
        slope, kappa = route_means(p.route_hk, p.route_sk, p.route_s0, p.route_inv_ds, p.inv_len[j], s - hl, s + hl)
        r_static = p.r0[j] + p.rcurve[j] * kappa
        r_s = r_static + f_brk
        av = abs(v)
        f_speed = (p.r1[j] + p.r2[j] * av) * v
        df_speed = p.r1[j] + 2.0 * p.r2[j] * av
        f_grade = p.mass[j] * 9.81 * slope
        f_other = f_tr + f_front - f_rear - f_grade - f_speed
        f_fric = f_other + p.k_stand[j] * v
        im = p.inv_mass_eff[j]
        if f_fric > r_s or f_fric < -r_s:
            sg = 1.0 if f_fric > r_s else -1.0   # f_fric = ±r_s
            # a = (f_other ∓ r_s)/m
            vals[k + uint64(2)] = (dtr_dv - dff_dde - dfr_dde - df_speed - sg * dbrk_dv) * im
            if j > 0:
                vals[k + uint64(3)] = dff_dde * im
                vals[k + uint64(4)] = dff_de * im
            if j < last:
                vals[k + uint64(5)] = -dfr_de * im
                vals[k + uint64(6)] = dfr_dde * im
            if p.loco_type[j] >= 0:
                vals[k + uint64(7)] = dtr_dn * im
            if air:
                vals[k + uint64(8)] = -sg * dbrk_dp * im
        else:
            # standstill: the friction cancels every applied force, a = −k_s v/m
            vals[k + uint64(2)] = -p.k_stand[j] * im
        f_front = f_rear
        dff_de = dfr_de
        dff_dde = dfr_dde
        if j < last:
            s = s - (p.center_dist[j] + e)


@njit(**JIT_NRT_FREE)
def ltd_jac_tail(t, y, p, vals):
    """The slots of the global rows (applied notch) after the vehicles' slots of :func:`ltd_jac`
    (``vals`` float64[S·N + 6], written in place; zeroed first: a slot the clamp leaves out must not keep
    the previous Jacobian's value)."""
    S = N_SLOTS_AIR if p.air_brake == 1 else N_SLOTS_PLAIN
    kt = S * p.n_veh
    for k in range(kt, kt + N_TAIL + p.n_groups - 1):
        vals[k] = 0.0
    ic = schedule_index(p, t, y)
    cmd_notch = p.sched_notch[ic]
    notch = y[p.i_notch]
    # applied notch: ṅ = clamp((cmd − n)/τ, ±rate)
    dn = (cmd_notch - notch) / p.notch_tau
    if -p.notch_rate <= dn <= p.notch_rate:
        vals[kt] = -1.0 / p.notch_tau
    for g in range(1, p.n_groups):   # remote groups: the command after their radio delay
        dg = (p.sched_notch[last_le(p.sched_x, t - p.group_delay[g])] - y[p.i_notch + g]) / p.notch_tau
        if -p.notch_rate <= dg <= p.notch_rate:
            vals[kt + N_TAIL + g - 1] = -1.0 / p.notch_tau
