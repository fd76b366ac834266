"""Numba kernels of the vertical vehicle model (element loop; no per-model matrices).

The integration state is the **dynamic** state y = X − X_s, the deviation from the static
equilibrium X_s under gravity (Yu et al. 2023 plots exactly this), in the order of Yu et al. 2023 eq (6):
y = [q̇ (m), s (n), q (m)].  Element forces are evaluated as their change from the static force
F_0 (for linear elements F − F_0 = −k δ_dyn exactly), so that gravity and static preloads cancel
without round-off and the right-hand side of a linear model equals A y + B_u u + B_ud u̇ to the
last bit; Hertz contacts use F(δ_0 + δ_dyn) − F_0 (loss of contact included).

Kernels (signatures of the integrator contract):
* ``vertical_rhs(t, y, p, dydt)`` — the state-space ODE form (massless nodes as first-order states);
* ``vertical_inputs(t, y, p, w)`` — w = [u (W), u̇ (W)], the rail inputs under each wheel;
* ``vertical_observe(t, y, p, acc)`` — envelopes over every step (floor accelerations, element
  forces, wheel loads);
* ``vertical_dae_rhs(t, y, p, out)`` — the index-1 DAE form M ẏ = F(t, y) with a singular diagonal
  mass matrix (hook for implicit DAE integrators), y = [q̇, s, q, ṡ].
"""
from __future__ import annotations

import math

from numba import njit

from hpcrail._numba import JIT, JIT_NRT_FREE

SPRING, DAMPER, SERIES_DAMPER, CONTACT_LINEAR, CONTACT_HERTZ = range(5)
TRACK_NONE, TRACK_HARMONIC, TRACK_GRID = range(3)


@njit(inline="always", **JIT)
def rail_input(p, j, t):
    """Rail irregularity under wheel j at time t and its rate: (u [m], u̇ [m/s]).

    Wheel j is at track position s_j = s0 + V t + x_j (the leading wheel starts at s = 0).
    Harmonic: u = A sin(ω (t − τ_j) + φ) with the delay τ_j = (x_lead − x_j)/V (Ω = ω/V), zero
    before the wheel reaches s = 0 (the track behind the leading wheel's start is smooth).
    Grid: linear interpolation of the synthesised profile (clamped at the grid ends).
    """
    kind = p.trk_kind
    if kind == TRACK_NONE:
        return 0.0, 0.0
    xj = p.wheel_x[j]
    if kind == TRACK_HARMONIC:
        if p.speed * t < p.h_xref - xj:
            return 0.0, 0.0
        arg = p.h_omega_t * t + p.h_omega_x * (xj - p.h_xref) + p.h_phase
        return p.h_amp * math.sin(arg), p.h_amp * p.h_omega_t * math.cos(arg)
    s = p.s0 + p.speed * t + xj
    u = (s - p.g_x0) * p.g_inv_dx
    ng = p.g_z.size
    if u <= 0.0:
        return p.g_z[0], p.speed * p.g_dz[0]
    i = int(u)
    if i >= ng - 1:
        return p.g_z[ng - 1], p.speed * p.g_dz[ng - 1]
    w = u - i
    z = p.g_z[i] * (1.0 - w) + p.g_z[i + 1] * w
    dz = p.g_dz[i] * (1.0 - w) + p.g_dz[i + 1] * w
    return z, p.speed * dz


@njit(inline="always", **JIT)
def element_force(p, e, t, y):
    """Dynamic compression force F − F_0 [N] of element e at dynamic state y."""
    m = p.m
    oq = m + p.n
    d = 0.0
    dd = 0.0
    for k in range(p.el_nt[e]):
        i = p.el_dof[e, k]
        c = p.el_coef[e, k]
        d += c * y[oq + i]
        dd += c * y[i]
    j = p.el_wheel[e]
    if j >= 0:
        u, ud = rail_input(p, j, t)
        d += p.el_rsign[e] * u
        dd += p.el_rsign[e] * ud
    kind = p.el_kind[e]
    if kind == SPRING or kind == CONTACT_LINEAR:
        return -p.el_k[e] * d
    if kind == DAMPER:
        return -p.el_c[e] * dd
    if kind == SERIES_DAMPER:
        return -p.el_k[e] * (d - y[m + p.el_node[e]])
    comp = -(p.el_d0[e] + d)
    if comp <= 0.0:
        return -p.el_F0[e]
    return p.el_k[e] * comp * math.sqrt(comp) - p.el_F0[e]


@njit(**JIT_NRT_FREE)
def vertical_rhs(t, y, p, dydt):
    """ẏ = f(t, y): the state-space form of Yu et al. 2023 eq (7) evaluated element by element."""
    m = p.m
    n = p.n
    for i in range(m):
        dydt[i] = 0.0
    for e in range(p.el_kind.size):
        F = element_force(p, e, t, y)
        for k in range(p.el_nt[e]):
            dydt[p.el_dof[e, k]] += p.el_coef[e, k] * F
        node = p.el_node[e]
        if node >= 0:
            dydt[m + node] = -F / p.el_c[e]
    for i in range(m):
        dydt[i] *= p.inv_mass[i]
        dydt[m + n + i] = y[i]


@njit(**JIT_NRT_FREE)
def vertical_inputs(t, y, p, w):
    """w[0:W] = rail irregularity u_j(t) [m], w[W:2W] = its rate [m/s] (``y`` unused)."""
    nw = p.wheel_x.size
    for j in range(nw):
        u, ud = rail_input(p, j, t)
        w[j] = u
        w[nw + j] = ud


@njit(**JIT_NRT_FREE)
def vertical_observe(t, y, p, acc):
    """Envelopes over every accepted step: max |floor acceleration|, max/min total element force,
    max/min wheel load (total force transmitted to the rail), in the layout of ``p.o_*``.
    Uses ``p.scratch`` (m + W) as work space."""
    m = p.m
    Q = p.scratch
    nw = p.wheel_x.size
    for i in range(m + nw):
        Q[i] = 0.0
    ne = p.el_kind.size
    for e in range(ne):
        F = element_force(p, e, t, y)
        for k in range(p.el_nt[e]):
            Q[p.el_dof[e, k]] += p.el_coef[e, k] * F
        Ft = F + p.el_F0[e]
        if Ft > acc[p.o_elmax + e]:
            acc[p.o_elmax + e] = Ft
        if Ft < acc[p.o_elmin + e]:
            acc[p.o_elmin + e] = Ft
        j = p.el_wheel[e]
        if j >= 0 and p.el_rsign[e] < 0.0:
            Q[m + j] += Ft
    for j in range(nw):
        if Q[m + j] > acc[p.o_wmax + j]:
            acc[p.o_wmax + j] = Q[m + j]
        if Q[m + j] < acc[p.o_wmin + j]:
            acc[p.o_wmin + j] = Q[m + j]
    for f in range(p.fp_nt.size):
        a = 0.0
        for k in range(p.fp_nt[f]):
            i = p.fp_dof[f, k]
            a += p.fp_coef[f, k] * Q[i] * p.inv_mass[i]
        a = abs(a)
        if a > acc[f]:
            acc[f] = a


@njit(**JIT_NRT_FREE)
def vertical_outputs(t, Y, p, body_acc, el_force, wheel_load, rail, fp_acc):
    """Per-sample outputs for the result dataset.

    ``t`` float64[k]; ``Y`` float64[k, N] dynamic states.  Writes ``body_acc`` float64[k, m]
    (q̈: m/s² or rad/s²), ``el_force`` float64[k, E] total compression force [N], ``wheel_load``
    float64[k, W] total force on the rail under each wheel [N], ``rail`` float64[k, W] rail
    irregularity [m], ``fp_acc`` float64[k, F] floor accelerations [m/s²] (gravity excluded).
    """
    m = p.m
    nw = p.wheel_x.size
    for r in range(t.size):
        y = Y[r]
        for i in range(m):
            body_acc[r, i] = 0.0
        for j in range(nw):
            wheel_load[r, j] = 0.0
            u, ud = rail_input(p, j, t[r])
            rail[r, j] = u
        for e in range(p.el_kind.size):
            F = element_force(p, e, t[r], y)
            for k in range(p.el_nt[e]):
                body_acc[r, p.el_dof[e, k]] += p.el_coef[e, k] * F
            el_force[r, e] = F + p.el_F0[e]
            j = p.el_wheel[e]
            if j >= 0 and p.el_rsign[e] < 0.0:
                wheel_load[r, j] += F + p.el_F0[e]
        for i in range(m):
            body_acc[r, i] *= p.inv_mass[i]
        for f in range(p.fp_nt.size):
            a = 0.0
            for k in range(p.fp_nt[f]):
                a += p.fp_coef[f, k] * body_acc[r, p.fp_dof[f, k]]
            fp_acc[r, f] = a


@njit(**JIT_NRT_FREE)
def vertical_dae_rhs(t, y, p, out):
    """Index-1 DAE form M ẏ = F(t, y) with the singular diagonal mass matrix
    M = diag(masses (m), 1 (n), 1 (m), 0 (n)) and y = [q̇ (m), s (n), q (m), ṡ (n)]:

        M q̈ = Σ D_eᵀ F_e,   ṡ = w,   q̇ = v,   0 = −F_e − c_e w_e   (series dampers; ∂/∂w = −c ≠ 0)

    Eliminating the algebraic stroke rates w gives :func:`vertical_rhs` (the ODE form).  This is the
    damper equation of Yu et al. 2023 eq (16) with the massless node velocity as an algebraic unknown.
    """
    m = p.m
    n = p.n
    for i in range(m):
        out[i] = 0.0
    for e in range(p.el_kind.size):
        F = element_force(p, e, t, y)
        for k in range(p.el_nt[e]):
            out[p.el_dof[e, k]] += p.el_coef[e, k] * F
        node = p.el_node[e]
        if node >= 0:
            out[2 * m + n + node] = -F - p.el_c[e] * y[2 * m + n + node]
            out[m + node] = y[2 * m + n + node]
    for i in range(m):
        out[m + n + i] = y[i]
