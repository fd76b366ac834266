"""Planar coupler kinematics and the noninertial (quasistatic) coupler equilibrium of Massa et al. 2012.

A coupler joins car *a* (the leading vehicle, coupler at its rear end) and car *b* (the trailing
vehicle, coupler at its front end).  At each end (Massa et al. 2012 §6, Fig. 3):

* a slider (draft gear / EOC device) moves along the car axis on a prismatic joint; its pin B sits at
  ``σ (L + d) e1`` from the car's centre of gravity, L = x_P + l_0 the pivot distance plus the draft
  gear's free length, d = d_d the slider displacement (+ outward = draft), σ = −1 at the rear end
  (car a), +1 at the front end (car b), e1 the car axis;
* the shank (length l_s) is pinned at B and rotated by the shank angle α from the car axis
  (+ counter-clockwise): its end is Q = B + λ, λ = l_s σ (cos(ψ+α), sin(ψ+α))   (eqs 27-28);
* the knuckle spring-damper joins Q^a and Q^b (eq 37): with the vector d = Q^a − Q^b, l = |d|,
  the elastic force on Q^b is f = k_rr (1 − l_r0/l) d (= k_rr (l − l_r0) d̂; a zero free length gives
  the isotropic spring k_rr d) and −f acts on Q^a.

Noninertial coordinates x = [d^a, α^a, d^b, α^b] (eq 33).  With the coupler inertia neglected their
generalized forces vanish (eq 41).  Without the velocity terms (paper §8 step 1) these are the
elastic equilibrium

    G(x) = −diag(k_B, k_r, k_B, k_r)(x − x_0) − Dᵀ f = 0,      D = ∂d/∂x (2×4)

i.e. G = −∇V of the coupler's elastic energy V = ½k_B(d_a² + d_b²) + ½k_r((α_a−α_0)² + (α_b−α_0)²)
+ ½k_rr(l − l_r0)².  Newton-Raphson (eq 42) solves H Δx = G with the analytic 4×4 Jacobian (eqs 44-45)

    H = −∂G/∂x = diag(k) + Dᵀ K D + diag(0, −f·λ^a, 0, f·λ^b),   K = ∂f/∂d = k_rr[(1 − l_r0/l) I + (l_r0/l) d̂d̂ᵀ]

(the last term is the geometric stiffness of the shanks: a tensile force aligns them).  The
noninertial velocities solve the velocity-level equations (eq 43) H ẋ = ∂G/∂t|_x, the rate of G at
frozen x when the two cars move.

All functions are numba kernels working on small float64 work arrays (no allocation); the caller
keeps them per scenario.  Pose array ``pz[10]`` = [X_a, Y_a, cos ψ_a, sin ψ_a, L_a, X_b, Y_b, cos ψ_b,
sin ψ_b, L_b]; velocity array ``vz[6]`` = [Ẋ_a, Ẏ_a, ψ̇_a, Ẋ_b, Ẏ_b, ψ̇_b]; coupler parameters ``cp``
(``CP_*``); geometry ``g[G_N]`` (``G_*``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT, JIT_NRT_FREE

# ---- coupler parameters (SI) ----------------------------------------------------------------
CP_KB, CP_CB, CP_L0, CP_KR, CP_CR, CP_A0, CP_LS, CP_LG, CP_MS, CP_MSH, CP_ISH, CP_KRR, CP_CRR, CP_LR0 = range(14)
N_CP = 16

# ---- geometry work array ------------------------------------------------------------------
G_BA, G_BB = 0, 2            # pins B^a, B^b
G_LA, G_LB = 4, 6            # shank vectors λ^a, λ^b (B → Q)
G_QA, G_QB = 8, 10           # knuckle points Q^a, Q^b
G_D = 12                     # D columns: D0 (12,13), D1 (14,15), D2 (16,17), D3 (18,19)
G_DV = 20                    # d = Q^a − Q^b
G_L = 22                     # l = |d|
G_FE = 23                    # elastic knuckle force on Q^b (2)
G_K = 25                     # K00, K01, K11
G_G = 28                     # G (4)
G_H = 32                     # H (16, row-major)
G_W = 48                     # scratch for the 4x4 solve (20)
G_PHIA, G_PHIB = 68, 70      # cos/sin of the absolute shank angles (2 each)
G_N = 72

#: statistics array of the Newton solver (per scenario, updated by every solve)
NS_ITER, NS_SOLVES, NS_FAIL, NS_MAXIT, NS_T_FAIL, NS_K_FAIL = range(6)
N_NS = 8


def coupler_parameter_array(*, kB, cB, l0, kr, cr, alpha0, ls, lg, m_slider, m_shank, I_shank, krr, crr,
                            lr0) -> np.ndarray:
    """Pack the coupler parameters (SI) into the ``cp`` array used by the kernels."""
    cp = np.zeros(N_CP)
    cp[[CP_KB, CP_CB, CP_L0, CP_KR, CP_CR, CP_A0, CP_LS, CP_LG, CP_MS, CP_MSH, CP_ISH, CP_KRR, CP_CRR, CP_LR0]] = (
        kB, cB, l0, kr, cr, alpha0, ls, lg, m_slider, m_shank, I_shank, krr, crr, lr0)
    return cp


@njit(inline="always", **JIT)
def coupler_geometry(pz, x, cp, g):
    """Positions, Jacobian D = ∂d/∂x, knuckle force and stiffness, residual G and Jacobian H at the
    coupler coordinates ``x[4]`` (see the module docstring) into ``g``."""
    ca = pz[2]
    sa = pz[3]
    cb = pz[7]
    sb = pz[8]
    ls = cp[CP_LS]
    # pins
    ra = pz[4] + x[0]
    rb = pz[9] + x[2]
    bax = pz[0] - ra * ca
    bay = pz[1] - ra * sa
    bbx = pz[5] + rb * cb
    bby = pz[6] + rb * sb
    # absolute shank directions: car a's shank points backwards (σ = −1)
    ca_ = math.cos(x[1])
    sa_ = math.sin(x[1])
    cb_ = math.cos(x[3])
    sb_ = math.sin(x[3])
    cpa = ca * ca_ - sa * sa_
    spa = sa * ca_ + ca * sa_
    cpb = cb * cb_ - sb * sb_
    spb = sb * cb_ + cb * sb_
    lax = -ls * cpa
    lay = -ls * spa
    lbx = ls * cpb
    lby = ls * spb
    qax = bax + lax
    qay = bay + lay
    qbx = bbx + lbx
    qby = bby + lby
    g[G_BA] = bax
    g[G_BA + 1] = bay
    g[G_BB] = bbx
    g[G_BB + 1] = bby
    g[G_LA] = lax
    g[G_LA + 1] = lay
    g[G_LB] = lbx
    g[G_LB + 1] = lby
    g[G_QA] = qax
    g[G_QA + 1] = qay
    g[G_QB] = qbx
    g[G_QB + 1] = qby
    g[G_PHIA] = cpa
    g[G_PHIA + 1] = spa
    g[G_PHIB] = cpb
    g[G_PHIB + 1] = spb
    # D = ∂d/∂x: [σ_a e1_a, λ_a⊥, −σ_b e1_b, −λ_b⊥]
    g[G_D + 0] = -ca
    g[G_D + 1] = -sa
    g[G_D + 2] = -lay
    g[G_D + 3] = lax
    g[G_D + 4] = -cb
    g[G_D + 5] = -sb
    g[G_D + 6] = lby
    g[G_D + 7] = -lbx
    dx = qax - qbx
    dy = qay - qby
    l = math.sqrt(dx * dx + dy * dy)
    g[G_DV] = dx
    g[G_DV + 1] = dy
    g[G_L] = l
    krr = cp[CP_KRR]
    lr0 = cp[CP_LR0]
    if lr0 > 0.0:
        r = lr0 / l
        fx = krr * (1.0 - r) * dx
        fy = krr * (1.0 - r) * dy
        ux = dx / l
        uy = dy / l
        k00 = krr * ((1.0 - r) + r * ux * ux)
        k01 = krr * r * ux * uy
        k11 = krr * ((1.0 - r) + r * uy * uy)
    else:
        fx = krr * dx
        fy = krr * dy
        k00 = krr
        k01 = 0.0
        k11 = krr
    g[G_FE] = fx
    g[G_FE + 1] = fy
    g[G_K] = k00
    g[G_K + 1] = k01
    g[G_K + 2] = k11
    kB = cp[CP_KB]
    kr = cp[CP_KR]
    a0 = cp[CP_A0]
    # residual G = −diag(k)(x − x0) − Dᵀ f
    g[G_G + 0] = -kB * x[0] - (g[G_D + 0] * fx + g[G_D + 1] * fy)
    g[G_G + 1] = -kr * (x[1] - a0) - (g[G_D + 2] * fx + g[G_D + 3] * fy)
    g[G_G + 2] = -kB * x[2] - (g[G_D + 4] * fx + g[G_D + 5] * fy)
    g[G_G + 3] = -kr * (x[3] - a0) - (g[G_D + 6] * fx + g[G_D + 7] * fy)
    # H = diag(k) + Dᵀ K D + geometric terms
    for i in range(4):
        dix = g[G_D + 2 * i]
        diy = g[G_D + 2 * i + 1]
        kdx = k00 * dix + k01 * diy
        kdy = k01 * dix + k11 * diy
        for j in range(i, 4):
            v = kdx * g[G_D + 2 * j] + kdy * g[G_D + 2 * j + 1]
            g[G_H + 4 * i + j] = v
            g[G_H + 4 * j + i] = v
    g[G_H + 0] += kB
    g[G_H + 5] += kr - (fx * lax + fy * lay)
    g[G_H + 10] += kB
    g[G_H + 15] += kr + (fx * lbx + fy * lby)


@njit(inline="always", **JIT)
def solve4(g, rhs, off, out):
    """Solve H out = rhs[off:off+4] (H = g[G_H:G_H+16]) by Gaussian elimination with partial
    pivoting in the scratch g[G_W:G_W+20]; returns False if H is singular or not finite."""
    w = G_W
    for i in range(4):
        for j in range(4):
            g[w + 5 * i + j] = g[G_H + 4 * i + j]
        g[w + 5 * i + 4] = rhs[off + i]
    for c in range(4):
        p = c
        best = abs(g[w + 5 * c + c])
        for r in range(c + 1, 4):
            v = abs(g[w + 5 * r + c])
            if v > best:
                best = v
                p = r
        if not best > 0.0 or not math.isfinite(best):
            return False
        if p != c:
            for j in range(5):
                tmp = g[w + 5 * c + j]
                g[w + 5 * c + j] = g[w + 5 * p + j]
                g[w + 5 * p + j] = tmp
        piv = g[w + 5 * c + c]
        for r in range(c + 1, 4):
            fct = g[w + 5 * r + c] / piv
            if fct != 0.0:
                for j in range(c, 5):
                    g[w + 5 * r + j] -= fct * g[w + 5 * c + j]
    for i in range(3, -1, -1):
        s = g[w + 5 * i + 4]
        for j in range(i + 1, 4):
            s -= g[w + 5 * i + j] * out[j]
        out[i] = s / g[w + 5 * i + i]
    return True


@njit(**JIT_NRT_FREE)
def coupler_newton(pz, x, cp, tol, maxit, g, dx):
    """Newton-Raphson on the quasistatic coupler equilibrium G(x) = 0 (Massa et al. 2012 eqs 41-42, 44-45).

    ``x[4]`` is the start (warm start: the previous solution) and receives the solution; converged
    when every update satisfies |Δd| ≤ tol and |Δα|·l_s ≤ tol [m].  On return ``g`` holds the
    geometry at the solution.  ``dx[4]`` is scratch.  Returns the number of iterations, or −1 if
    the iteration failed (singular or non-finite Jacobian, or ``maxit`` iterations without
    convergence); ``x`` is then left at the last iterate.

    A tolerance below the round-off of the positions is raised to 32 ε·(size of the pose); give
    poses relative to one of the cars (the kernels do) to keep that floor at ~1e-13 m.
    """
    ls = cp[CP_LS]
    size = max(max(abs(pz[0]), abs(pz[1])), max(abs(pz[5]), abs(pz[6]))) + pz[4] + pz[9] + ls
    floor = 32.0 * 2.220446049250313e-16 * size
    if tol < floor:
        tol = floor
    for it in range(maxit):
        coupler_geometry(pz, x, cp, g)
        if not solve4(g, g, G_G, dx):
            return -1
        e = 0.0
        for i in range(4):
            x[i] += dx[i]
            a = abs(dx[i]) * (ls if (i & 1) else 1.0)
            if a > e:
                e = a
        if not math.isfinite(e):
            return -1
        if e <= tol:
            coupler_geometry(pz, x, cp, g)
            return it + 1
    return -1


@njit(inline="always", **JIT)
def frozen_knuckle_rate(pz, vz, g):
    """ḋ of d = Q^a − Q^b with the coupler coordinates frozen (points Q carried by the cars)."""
    qax = g[G_QA] - pz[0]
    qay = g[G_QA + 1] - pz[1]
    qbx = g[G_QB] - pz[5]
    qby = g[G_QB + 1] - pz[6]
    vax = vz[0] - vz[2] * qay
    vay = vz[1] + vz[2] * qax
    vbx = vz[3] - vz[5] * qby
    vby = vz[4] + vz[5] * qbx
    return vax - vbx, vay - vby


@njit(inline="always", **JIT)
def noninertial_rates(pz, vz, cp, g, rhs, xd):
    """Noninertial velocities ẋ from the velocity-level equilibrium H ẋ = ∂G/∂t|_x (Massa et al. 2012 eq 43)
    at the geometry in ``g`` (a converged Newton solution).  ``rhs[4]`` scratch; returns False if H
    is singular."""
    ddx, ddy = frozen_knuckle_rate(pz, vz, g)
    k00 = g[G_K]
    k01 = g[G_K + 1]
    k11 = g[G_K + 2]
    fdx = k00 * ddx + k01 * ddy
    fdy = k01 * ddx + k11 * ddy
    fx = g[G_FE]
    fy = g[G_FE + 1]
    wa = vz[2]
    wb = vz[5]
    ca = pz[2]
    sa = pz[3]
    cb = pz[7]
    sb = pz[8]
    # Ḋ at frozen x: Ḋ0 = σ_a ψ̇_a e2_a, Ḋ1 = −ψ̇_a λ_a, Ḋ2 = −σ_b ψ̇_b e2_b, Ḋ3 = ψ̇_b λ_b
    d0x = wa * sa
    d0y = -wa * ca
    d1x = -wa * g[G_LA]
    d1y = -wa * g[G_LA + 1]
    d2x = wb * sb
    d2y = -wb * cb
    d3x = wb * g[G_LB]
    d3y = wb * g[G_LB + 1]
    rhs[0] = -(g[G_D + 0] * fdx + g[G_D + 1] * fdy) - (d0x * fx + d0y * fy)
    rhs[1] = -(g[G_D + 2] * fdx + g[G_D + 3] * fdy) - (d1x * fx + d1y * fy)
    rhs[2] = -(g[G_D + 4] * fdx + g[G_D + 5] * fdy) - (d2x * fx + d2y * fy)
    rhs[3] = -(g[G_D + 6] * fdx + g[G_D + 7] * fdy) - (d3x * fx + d3y * fy)
    return solve4(g, rhs, 0, xd)


@njit(inline="always", **JIT)
def knuckle_rate(pz, vz, g, xd):
    """Full ḋ = ḋ|_frozen + D ẋ of the knuckle vector d = Q^a − Q^b for coordinate rates ``xd``."""
    ddx, ddy = frozen_knuckle_rate(pz, vz, g)
    for i in range(4):
        ddx += g[G_D + 2 * i] * xd[i]
        ddy += g[G_D + 2 * i + 1] * xd[i]
    return ddx, ddy


@njit(inline="always", **JIT)
def knuckle_force(g, cp, ddx, ddy):
    """Knuckle force on Q^b (elastic + damping; −this acts on Q^a) for the knuckle rate (ddx, ddy):
    damping c_rr l̇ d̂ along the knuckle (eq 37), or c_rr ḋ for a zero free length."""
    fx = g[G_FE]
    fy = g[G_FE + 1]
    c = cp[CP_CRR]
    if c > 0.0:
        if cp[CP_LR0] > 0.0:
            l = g[G_L]
            ux = g[G_DV] / l
            uy = g[G_DV + 1] / l
            ld = ux * ddx + uy * ddy
            fx += c * ld * ux
            fy += c * ld * uy
        else:
            fx += c * ddx
            fy += c * ddy
    return fx, fy


@njit(inline="always", **JIT)
def knuckle_displacement(pz, vz, g, xd, ddx, ddy, lr0):
    """Signed knuckle displacement along the coupler line (+ draft) and its rate.

    ê = unit vector from pin B^b to pin B^a; displacement = d·ê − l_r0 (= l − l_r0 on tangent track).
    ``xd``: coordinate rates, (ddx, ddy) the full knuckle rate ḋ."""
    px = g[G_BA] - g[G_BB]
    py = g[G_BA + 1] - g[G_BB + 1]
    pl = math.sqrt(px * px + py * py)
    ex = px / pl
    ey = py / pl
    kn = g[G_DV] * ex + g[G_DV + 1] * ey - lr0
    # pin velocities: Ṙ + ψ̇ (B − R)⊥ + σ ḋ e1
    rax = g[G_BA] - pz[0]
    ray = g[G_BA + 1] - pz[1]
    rbx = g[G_BB] - pz[5]
    rby = g[G_BB + 1] - pz[6]
    vax = vz[0] - vz[2] * ray - xd[0] * pz[2]
    vay = vz[1] + vz[2] * rax - xd[0] * pz[3]
    vbx = vz[3] - vz[5] * rby + xd[2] * pz[7]
    vby = vz[4] + vz[5] * rbx + xd[2] * pz[8]
    pdx = vax - vbx
    pdy = vay - vby
    pe = pdx * ex + pdy * ey
    edx = (pdx - ex * pe) / pl
    edy = (pdy - ey * pe) / pl
    knd = ddx * ex + ddy * ey + g[G_DV] * edx + g[G_DV + 1] * edy
    return kn, knd
