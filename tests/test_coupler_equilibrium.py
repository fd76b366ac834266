"""Noninertial coupler equilibrium of Massa et al. 2012 (eqs 41-45): Newton-Raphson convergence, the analytic
Jacobian, the velocity-level equations (eq 43) and the tangent-track reduction to springs in series."""
import math

import numpy as np
import pytest

from hpcrail.models.couplers.kinematics import (
    G_FE, G_G, G_H, G_N, G_QA, G_QB, coupler_geometry, coupler_newton, coupler_parameter_array, noninertial_rates,
    solve4,
)

# Massa et al. 2012 Table 1, shank length 0.6 m (assumed), cars of Table 2 geometry
KB, KR, KRR, LR0, LS = 3e7, 3e7, 5e8, 0.204, 0.6
L = 5.997 + 0.289
D = 2 * (L + LS) + LR0


def params(lr0=LR0):
    return coupler_parameter_array(kB=KB, cB=2.5e5, l0=0.289, kr=KR, cr=1e5, alpha0=0.0, ls=LS, lg=0.3,
                                   m_slider=50, m_shank=140, I_shank=8, krr=KRR, crr=5e5, lr0=lr0)


def pose(dx=0.0, dy=0.0, psa=0.0, psb=0.0):
    """Car a (leading) at (D + dx, dy) with yaw psa, car b at the origin with yaw psb."""
    return np.array([D + dx, dy, math.cos(psa), math.sin(psa), L, 0.0, 0.0, math.cos(psb), math.sin(psb), L])


def newton_history(pz, cp, x0, n=10):
    g = np.zeros(G_N)
    dx = np.zeros(4)
    x = x0.copy()
    xs = [x.copy()]
    for _ in range(n):
        coupler_geometry(pz, x, cp, g)
        assert solve4(g, g, G_G, dx)
        x = x + dx
        xs.append(x.copy())
    return xs


# strongly nonlinear configurations: large relative yaw and lateral offset of the two cars
HARD = [(-0.02, 0.3, 0.1, -0.1), (0.01, 0.5, 0.15, -0.15), (-0.03, -0.4, -0.12, 0.05)]


@pytest.mark.parametrize("conf", HARD)
def test_newton_converges_quadratically(conf):
    """Errors e_k = |x_k − x*| (m, angles × shank length) of the Newton iterates from a cold start:
    in the asymptotic range e_{k+1} ≤ C e_k² with a bounded C, and the observed order
    log(e_{k+1}/e_k)/log(e_k/e_{k-1}) is about 2 (eq 42 with the exact Jacobian of eqs 44-45)."""
    cp = params()
    xs = newton_history(pose(*conf), cp, np.zeros(4), n=12)
    w = np.array([1.0, LS, 1.0, LS])
    err = [float(np.max(np.abs((x - xs[-1]) * w))) for x in xs]
    asym = [k for k in range(len(err) - 1) if 1e-14 < err[k + 1] and err[k] < 1e-2]
    assert len(asym) >= 2, err
    for k in asym:
        assert err[k + 1] <= 100.0 * err[k] ** 2, (k, err)
    orders = [math.log(err[k + 1] / err[k]) / math.log(err[k] / err[k - 1]) for k in asym if k >= 1]
    assert max(orders) > 1.8, (orders, err)
    # converged to round-off
    assert err[-2] < 1e-13


@pytest.mark.parametrize("lr0", [LR0, 0.0])
def test_analytic_jacobian_matches_finite_differences(lr0):
    """H = −∂G/∂x (eq 45) against central differences of the residual, including the geometric
    stiffness of the shanks and the isotropic (l_r0 = 0) knuckle."""
    cp = params(lr0)
    pz = pose(-0.03, 0.2, 0.08, -0.05)
    x = np.array([0.01, 0.05, -0.02, -0.03])
    g = np.zeros(G_N)
    coupler_geometry(pz, x, cp, g)
    H = g[G_H:G_H + 16].reshape(4, 4).copy()
    fd = np.zeros((4, 4))
    for j in range(4):
        h = 1e-7
        xp = x.copy()
        xm = x.copy()
        xp[j] += h
        xm[j] -= h
        coupler_geometry(pz, xp, cp, g)
        gp = g[G_G:G_G + 4].copy()
        coupler_geometry(pz, xm, cp, g)
        gm = g[G_G:G_G + 4].copy()
        fd[:, j] = -(gp - gm) / (2 * h)
    np.testing.assert_allclose(H, fd, rtol=1e-6, atol=1e-6 * np.abs(H).max())
    np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=1e-9)   # G = −∇V: symmetric


def test_velocity_level_equations_match_time_derivative():
    """ẋ from eq (43) equals the time derivative of the equilibrium x*(t) for moving cars."""
    cp = params()
    g = np.zeros(G_N)
    dx = np.zeros(4)
    # car a translates and yaws, car b moves differently
    va = np.array([0.3, -0.2, 0.05])
    vb = np.array([-0.1, 0.15, -0.04])
    base = np.array([D - 0.02, 0.1, 0.06, 0.0, 0.0, -0.03])

    def equilibrium(t):
        qa = base[:3] + t * va
        qb = base[3:] + t * vb
        pz = np.array([qa[0], qa[1], math.cos(qa[2]), math.sin(qa[2]), L,
                       qb[0], qb[1], math.cos(qb[2]), math.sin(qb[2]), L])
        x = np.zeros(4)
        it = coupler_newton(pz, x, cp, 1e-14, 50, g, dx)
        assert it > 0
        return x, pz

    x0, pz0 = equilibrium(0.0)
    coupler_newton(pz0, x0, cp, 1e-14, 50, g, dx)
    vz = np.array([va[0], va[1], va[2], vb[0], vb[1], vb[2]])
    xd = np.zeros(4)
    assert noninertial_rates(pz0, vz, cp, g, np.zeros(4), xd)
    h = 1e-5
    fd = (equilibrium(h)[0] - equilibrium(-h)[0]) / (2 * h)
    np.testing.assert_allclose(xd, fd, rtol=1e-6, atol=1e-9)


def test_tangent_track_reduces_to_springs_in_series():
    """Collinear cars whose pins are Δ closer than at rest: the coupler is k_B, k_rr, k_B in series —
    d_a = d_b = −F/k_B, knuckle shortened by F/k_rr, α = 0, F = Δ / (2/k_B + 1/k_rr)."""
    cp = params()
    g = np.zeros(G_N)
    dx = np.zeros(4)
    for delta in (-0.03, -0.001, 0.002, 0.05):
        x = np.zeros(4)
        it = coupler_newton(pose(delta), x, cp, 1e-14, 20, g, dx)
        assert it > 0
        F = delta / (2 / KB + 1 / KRR)
        np.testing.assert_allclose(x[[0, 2]], F / KB, rtol=1e-10)
        np.testing.assert_allclose(x[[1, 3]], 0.0, atol=1e-14)
        knuckle = (g[G_QA] - g[G_QB]) - LR0
        assert knuckle == pytest.approx(F / KRR, rel=1e-8)
        assert g[G_FE] == pytest.approx(F, rel=1e-8)     # force on Q^b along +X in draft


def test_newton_reports_failure_instead_of_raising():
    """An iteration cap of 1 from a cold start far from equilibrium returns −1 (status, no exception)."""
    cp = params()
    g = np.zeros(G_N)
    x = np.zeros(4)
    assert coupler_newton(pose(-0.02, 0.3, 0.1, -0.1), x, cp, 1e-12, 1, g, np.zeros(4)) == -1
