"""The noninertial coupler of Massa et al. 2012 as a connection law (``kind: noninertial``) of the LTD consist.

The LTD model has one coordinate per vehicle (arc length s along the route).  The reduction of the
planar coupler (``kinematics``) to that model assumes:

* **the vehicles follow the track centre line**: both bogie centres of a vehicle are on it, the body
  axis is their chord (no lateral or yaw dynamics, no suspension or guidance compliance — the planar
  model shows those deflections are tens of µm for these forces);
* **between the two vehicle centres the track is a circular arc** of the mean curvature
  κ̄ = ∫κ ds / Δs over [s_{k+1}, s_k], taken from the route's cumulative curvature table.  This is exact
  on constant-curvature sections and averages the curvature step at a section end (LTD routes have no
  spirals).  LTD routes give |1/R| without the direction of the curve: every curve is treated as a
  left-hand one, which is exact for a symmetric coupler except across a reverse-curve junction;
* **the knuckle sits at the vehicle ends** (the LTD free length between vehicle centres is the sum of
  the half lengths): x_P = length/2 − l_0 − l_s − l_r0/2, so on tangent track the LTD extension e is the
  coupler's total deflection d_a + d_b + knuckle stretch;
* the coupler's equilibrium and noninertial velocities are those of the planar model (eqs 41-45), and
  **the in-train force is the mean draft-gear force** ½ Σ (k_B d + c_B ḋ) of its two ends.  The force
  the coupler puts on a vehicle's arc-length coordinate also contains (1 − κ y) factors and κ times
  the coupler's moment on the body: relative corrections ~ b²κ²/2 and ~ L·θ/R, below 2·10⁻⁴ for
  R ≥ 300 m, neglected;
* the coupler's kinematics adds no state: the Newton solution of connection k is kept in
  ``params.ni_conn[k, NC_X:NC_X+4]`` as the warm start of the next evaluation (per scenario).

On tangent track (zero mean curvature) the result is exactly a linear spring-damper,
k_eq = 1/(2/k_B + 1/k_rr) with damping c_B·k_eq/k_B (the draft gear's damper at the quasistatic slider
rate, eq 43); the kernel uses that closed form there and Newton-Raphson only in curves.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT_NRT_FREE
from hpcrail.models.couplers.kinematics import (
    CP_A0, CP_CB, CP_KB, CP_KRR, NS_FAIL, NS_ITER, NS_K_FAIL, NS_MAXIT, NS_SOLVES, NS_T_FAIL, coupler_newton,
    noninertial_rates,
)

#: extra slots of the per-type parameter row used by the LTD connection
CP_TOL, CP_MAXIT = 14, 15
#: columns of the per-connection array ``ni_conn``: pin distances L = x_P + l_0, bogie half spacings,
#: warm start x (4), force of the current evaluation
NC_LA, NC_LB, NC_BA, NC_BB, NC_X, NC_F = 0, 1, 2, 3, 4, 8
N_NC = 9
#: rows of the scratch array ``ni_work``; row NW_STATS holds the Newton statistics (kinematics.NS_*)
NW_G, NW_PZ, NW_VZ, NW_X, NW_DX, NW_RHS, NW_XD, NW_STATS = range(8)


@njit(inline="always", **JIT_NRT_FREE)
def _force(t, k, ct, e, u, v_a, v_b, kappa, cp_all, conn, work, jac):
    """``(F, ∂F/∂e, ∂F/∂ė)`` of noninertial connection ``k``; the derivatives only when ``jac`` (a
    compile-time constant of each caller), see :func:`ltd_noninertial_force_jac`."""
    cp = cp_all[ct]
    if kappa == 0.0:
        # tangent track: collinear cars, α = 0, the coupler is k_B, k_rr, k_B in series (exact closed form
        # of the same equilibrium; the warm start is kept consistent for the next curve)
        kB = cp[CP_KB]
        keq = 1.0 / (2.0 / kB + 1.0 / cp[CP_KRR])
        f_el = keq * e
        conn[k, NC_X] = f_el / kB
        conn[k, NC_X + 1] = cp[CP_A0]
        conn[k, NC_X + 2] = f_el / kB
        conn[k, NC_X + 3] = cp[CP_A0]
        c_eq = cp[CP_CB] * keq / kB
        return f_el + c_eq * (v_a - v_b), keq, c_eq
    g = work[NW_G]
    pz = work[NW_PZ]
    vz = work[NW_VZ]
    x = work[NW_X]
    stats = work[NW_STATS]
    la = conn[k, NC_LA]
    lb = conn[k, NC_LB]
    ba = conn[k, NC_BA]
    bb = conn[k, NC_BB]
    # circular arc of curvature κ through both centres: b at the origin heading +X, a at arc length u
    th = kappa * u
    half = 0.5 * th
    if abs(half) > 1e-4:
        sinc_h = math.sin(half) / half
    else:
        sinc_h = 1.0 - half * half / 6.0
    chord = u * sinc_h                      # |r(u) − r(0)|, direction at angle θ/2
    tx = chord * math.cos(half)
    ty = chord * math.sin(half)
    # body centres inside the track by the versine of their bogie chord (bogie centres on the track)
    ya = kappa * ba * ba / (1.0 + math.sqrt(max(0.0, 1.0 - kappa * kappa * ba * ba)))
    yb = kappa * bb * bb / (1.0 + math.sqrt(max(0.0, 1.0 - kappa * kappa * bb * bb)))
    c = math.cos(th)
    s = math.sin(th)
    pz[0] = tx - ya * s
    pz[1] = ty + ya * c - yb
    pz[2] = c
    pz[3] = s
    pz[4] = la             # L = x_P + l_0: centre to the shank pin
    pz[5] = 0.0
    pz[6] = 0.0
    pz[7] = 1.0
    pz[8] = 0.0
    pz[9] = lb
    qa = (1.0 - kappa * ya) * v_a
    qb = (1.0 - kappa * yb) * v_b
    vz[0] = qa * c
    vz[1] = qa * s
    vz[2] = kappa * v_a
    vz[3] = qb
    vz[4] = 0.0
    vz[5] = kappa * v_b
    for i in range(4):
        x[i] = conn[k, NC_X + i]
    it = coupler_newton(pz, x, cp, cp[CP_TOL], int(cp[CP_MAXIT]), g, work[NW_DX])
    stats[NS_SOLVES] += 1.0
    ok = it > 0
    xd = work[NW_XD]
    if ok:
        stats[NS_ITER] += it
        if it > stats[NS_MAXIT]:
            stats[NS_MAXIT] = it
        ok = noninertial_rates(pz, vz, cp, g, work[NW_RHS], xd)
    if not ok:
        stats[NS_FAIL] += 1.0
        stats[NS_T_FAIL] = t
        stats[NS_K_FAIL] = k + 1
        return np.nan, np.nan, np.nan
    for i in range(4):
        conn[k, NC_X + i] = x[i]
    _ = e
    f = 0.5 * (cp[CP_KB] * (x[0] + x[2]) + cp[CP_CB] * (xd[0] + xd[2]))
    if not jac:
        return f, 0.0, 0.0
    # dx/du: the rates of the same equilibrium when car a moves 1 m along its arc and car b stands still
    # (moving a along the arc by du is exactly the configuration at u + du); the velocity terms depend on
    # v_a − v_b only (equal speeds rotate the pair rigidly about the curve's centre: no coupler motion)
    qa = 1.0 - kappa * ya
    vz[0] = qa * c
    vz[1] = qa * s
    vz[2] = kappa
    vz[3] = 0.0
    vz[4] = 0.0
    vz[5] = 0.0
    if not noninertial_rates(pz, vz, cp, g, work[NW_RHS], xd):
        return f, np.nan, np.nan
    r = xd[0] + xd[2]
    return f, 0.5 * cp[CP_KB] * r, 0.5 * cp[CP_CB] * r


@njit(**JIT_NRT_FREE)
def ltd_noninertial_force(t, k, ct, e, u, v_a, v_b, kappa, cp_all, conn, work):
    """In-train force [N] (+ draft) of noninertial connection ``k`` (type row ``ct``) between vehicle
    k (leading, speed ``v_a``) and k+1 (speed ``v_b``) whose centres are ``u`` [m] apart along a track
    of mean curvature ``kappa`` [1/m] (≥ 0) between them; ``e`` is the LTD extension (on tangent track
    u = D + e).  ``conn``/``work``: see :func:`hpcrail.kinds.ltd.build.noninertial_arrays`; the warm start in
    ``conn[k, NC_X:NC_X+4]`` is updated.  NaN if the Newton iteration fails (counted in the
    statistics row of ``work``).

    Source: Massa et al. 2012 eqs 24-45 (kinematics), reduced as described in the module docstring.
    """
    f, _d1, _d2 = _force(t, k, ct, e, u, v_a, v_b, kappa, cp_all, conn, work, False)
    return f


@njit(**JIT_NRT_FREE)
def ltd_noninertial_force_jac(t, k, ct, e, u, v_a, v_b, kappa, cp_all, conn, work):
    """``(F, ∂F/∂e, ∂F/∂ė)`` [N, N/m, N·s/m] of noninertial connection ``k`` (arguments as
    :func:`ltd_noninertial_force`), ė = v_a − v_b.

    Tangent track: the closed form, ∂F/∂e = k_eq, ∂F/∂ė = c_B k_eq/k_B.  In a curve, by the implicit
    function theorem on the equilibrium G(x, u) = 0 (Massa et al. 2012 eqs 42-45): dx/du = H⁻¹ ∂G/∂u,
    which is the noninertial velocity (eq 43) of car a moving 1 m along its arc with car b at rest, and
    the coupler velocities are ẋ = (v_a − v_b)·dx/du (equal speeds rotate both cars rigidly about the
    centre of curvature).  With F = ½[k_B (d_a + d_b) + c_B (ḋ_a + ḋ_b)]:

        ∂F/∂e = ½ k_B (dd_a/du + dd_b/du),        ∂F/∂ė = ½ c_B (dd_a/du + dd_b/du).

    Neglected (as the grade and curvature of the LTD Jacobian): the change of dx/du itself with u in
    the damping term, ½ c_B ė d²(d_a + d_b)/du² (relative size ~ (c_B ė/k_B) κ, below 1e-8 for the
    couplers of Massa et al. 2012 at ė ~ 0.01 m/s in a 400 m curve), and the dependence of the mean
    curvature κ̄ on the vehicles' positions (zero inside a curve or tangent).  NaN derivatives when the
    Newton iteration fails.
    """
    return _force(t, k, ct, e, u, v_a, v_b, kappa, cp_all, conn, work, True)

