"""Contact geometry solver (paper 004 eq 12, eq 15): a coned wheelset on narrow circular rails against an
independent closed-form solution, the S1002/UIC60 pair's symmetry and centred state, eq 12 residuals,
implicit-function derivatives against finite differences, and the two-point contact jumps."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import fsolve

from hpcrail.models.wheelrail import profiles as pr
from hpcrail.models.wheelrail.config import build_profiles, load_profile_pair
from hpcrail.models.wheelrail.conicity import equivalent_conicity, rolling_radius_difference
from hpcrail.models.wheelrail.geometry import ContactSolver

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT / "configs" / "wheelrail" / "s1002_uic60.yaml"

T_CONE = 0.05       # tan γ of the cone
RHO = 0.5e-3        # radius of the narrow rail head [m]
L_W, L_R, R0 = 0.75, 0.75, 0.45


def cone_solver():
    u = np.linspace(-0.06, 0.06, 1201)
    wheel = pr.wheel_profile(np.column_stack([u, -T_CONE * u]), name="cone", source="test", smoothing_rms=0.0)
    v = np.linspace(-RHO * math.sin(math.radians(79.0)), RHO * math.sin(math.radians(79.0)), 301)
    rail = pr.fit_profile(np.column_stack([v, -RHO + np.sqrt(RHO ** 2 - v ** 2)]), name="circle", kind="rail",
                          source="test", smoothing_rms=0.0)
    return ContactSolver(wheel, rail, pr.Placement(L_W, L_R, R0, 0.0), scan_step=2e-6)


def cone_reference(y):
    """Closed form: each cone generatrix is tangent to its rail circle (centre (±L_r, -ρ)); unknowns z, φ."""
    n0 = math.sqrt(1.0 + T_CONE ** 2)

    def side(ys, ps, z):
        c, s = math.cos(ps), math.sin(ps)
        W0 = np.array([ys + c * L_W + s * R0, z + s * L_W - c * R0])
        d = np.array([c - s * T_CONE, s + c * T_CONE])          # R(ps)(1, t)
        n = np.array([-c * T_CONE - s, -s * T_CONE + c]) / n0   # R(ps)(-t, 1)/|.|
        C = np.array([L_R, -RHO])
        u = (C - W0) @ d / (1.0 + T_CONE ** 2)
        return (C - W0) @ n + RHO, u

    def eqs(p):
        z, phi = p
        return [side(y, phi, z)[0], side(-y, -phi, z)[0]]

    z, phi = fsolve(eqs, [R0, 0.0], xtol=1e-13)
    ul = side(y, phi, z)[1]
    ur = side(-y, -phi, z)[1]
    return z, phi, (R0 - T_CONE * ul) - (R0 - T_CONE * ur)


@pytest.fixture(scope="module")
def cone():
    return cone_solver()


@pytest.fixture(scope="module")
def s1002():
    cfg, doc = load_profile_pair(PAIR)
    return ContactSolver(*build_profiles(cfg, doc))


def test_cone_on_narrow_rails_matches_closed_form(cone):
    """z, φ and Δr of the solver equal the closed-form tangency solution within 1e-10 m (1e-10 rad)."""
    for y in (-0.009, -0.004, -0.0005, 0.0, 0.0013, 0.006, 0.01):
        x, st, _ = cone.solve(y)
        z, phi, dr = cone_reference(y)
        assert x[0] == pytest.approx(z, abs=1e-10)
        assert x[1] == pytest.approx(phi, abs=1e-10)
        rl = R0 + float(cone.wheel(x[2]))
        rr = R0 + float(cone.wheel(x[4]))
        assert rl - rr == pytest.approx(dr, abs=1e-10)


def test_cone_conicity_with_roll_coupling(cone):
    """Δr(y) of the coned wheelset is linear, Δr = 2 tan γ_e y, with tan γ_e = tan γ / (1 - r0 tan γ / L):
    the roll φ = Δr/(2L) of the wheelset about its centre moves the wheels at rail level by r0 φ (first
    order; without roll Δr = 2 tan γ y exactly).  The EN 15302 equivalent conicity of the computed Δr
    equals tan γ_e at every amplitude (both methods, 1e-4 relative)."""
    ys = np.linspace(-0.01, 0.01, 401)
    dr, X = rolling_radius_difference(cone, ys)
    te = T_CONE / (1.0 - R0 * T_CONE / L_R)
    assert np.max(np.abs(dr - 2 * te * ys)) < 2e-3 * np.max(np.abs(dr))  # second-order terms only
    for meth in ("klingel", "harmonic"):
        ce = equivalent_conicity(ys, dr, [0.001, 0.003, 0.006], meth)
        np.testing.assert_allclose(ce, te, rtol=2e-3)


def test_linear_rolling_radius_difference_gives_its_cone_exactly():
    """Δr = 2 tan γ y (a cone without roll coupling): tan γ_e = tan γ at every amplitude, both methods."""
    ys = np.linspace(-0.02, 0.02, 41)
    for t in (0.025, 0.05, 0.2):
        for meth in ("klingel", "harmonic"):
            ce = equivalent_conicity(ys, 2 * t * ys, [0.0005, 0.003, 0.01], meth)
            np.testing.assert_allclose(ce, t, rtol=1e-7)


def test_centred_symmetric_wheelset(s1002):
    """S1002/UIC60: at y = 0, Δr = 0 and φ = 0; z(y) is even with its minimum at y = 0 (gravitational
    stiffness); φ(y) is odd."""
    ys = np.linspace(-0.012, 0.012, 241)
    dr, X = rolling_radius_difference(s1002, ys)
    i0 = 120
    assert abs(dr[i0]) < 1e-12 and abs(X[i0, 1]) < 1e-14
    assert np.argmin(X[:, 0]) == i0
    np.testing.assert_allclose(X[:, 0], X[::-1, 0], atol=1e-12)
    np.testing.assert_allclose(X[:, 1], -X[::-1, 1], atol=1e-13)
    np.testing.assert_allclose(dr, -dr[::-1], atol=1e-12)


def test_eq12_residual_and_no_penetration(s1002):
    """Every solution of a fine sweep satisfies eq 12 to 1e-12 (positions [m]) and no other point of either
    wheel penetrates its rail (scan)."""
    ys = np.arange(-0.02, 0.02 + 1e-12, 2e-5)
    X, C, S = s1002.sweep(ys)
    worst = max(np.max(np.abs(s1002.residual(y, 0.0, x))) for y, x in zip(ys, X))
    assert worst < 1e-12
    for y, x in zip(ys[::50], X[::50]):
        for side in (1, -1):
            U, V, G = s1002.gap_curve(y, 0.0, x, side)
            assert G.min() > -2e-8


@pytest.mark.parametrize("y", [-0.011, -0.003, 0.0025, 0.0058])
def test_sensitivities_match_finite_differences(s1002, y):
    """dx/dy and dx/dξ_g from the implicit function theorem agree with central differences (h = 1e-7 m)."""
    xi = 0.0007
    x, _, _ = s1002.solve(y, xi)
    dy, dxi = s1002.sensitivities(y, xi, x)
    h = 1e-7
    xp, _ = s1002.newton(y + h, xi, x)
    xm, _ = s1002.newton(y - h, xi, x)
    np.testing.assert_allclose(dy, (xp - xm) / (2 * h), rtol=1e-5, atol=1e-8)
    xp, _ = s1002.newton(y, xi + h, x)
    xm, _ = s1002.newton(y, xi - h, x)
    np.testing.assert_allclose(dxi, (xp - xm) / (2 * h), rtol=1e-5, atol=1e-8)


def test_two_point_contact_jumps(s1002):
    """At each located jump both contact points touch: the tread and the new contact solve eq 12 with the
    same z and φ, and the new basin's maximum relative indentation (eq 15) is zero there.  S1002/UIC60 has four
    jumps per wheel: on the tread (0.22 mm), tread to flange root (4.85 mm) and two at the flange within 1 µm
    (6.2494 and 6.2503 mm: the contact runs onto the flange face over the root's concave arc)."""
    ys = np.arange(0.0, 0.008, 1e-5)
    X, C, S = s1002.sweep(ys)
    jumps = s1002.find_jumps(ys, X, 1)
    assert [j["kind"] for j in jumps] == ["two-point"] * 4
    np.testing.assert_allclose([j["y"] for j in jumps], [0.21826e-3, 4.847387e-3, 6.24936e-3, 6.250286e-3],
                               atol=5e-8)
    for j in jumps:
        xa, xb = j["x_outer"], j["x_inner"]
        assert j["ok"]
        assert abs(xa[0] - xb[0]) < 2e-9 and abs(xa[1] - xb[1]) < 1e-8
        assert abs(j["u_outer"] - j["u_inner"]) > 1e-3
        assert np.max(np.abs(s1002.residual(j["y"], 0.0, xa))) < 1e-12
        assert np.max(np.abs(s1002.residual(j["y"], 0.0, xb))) < 1e-12


def test_find_jumps_is_independent_of_the_grid(s1002):
    """Issue 29: every jump, the flange ones included, is found on a 0.5 mm grid as on a 0.01 mm one, at the same
    lateral shift within 0.1 µm, for both wheels (the right wheel's at -y: the pair is symmetric), whichever way
    the sweep runs across them (the right wheel's flange jumps are crossed from the flange to the tread)."""
    fine = [0.21826e-3, 4.847387e-3, 6.24936e-3, 6.250286e-3]
    ys = np.arange(-0.012, 0.012 + 1e-9, 5e-4)
    X, C, S = s1002.sweep(ys)
    left = s1002.find_jumps(ys, X, 1)
    right = s1002.find_jumps(ys, X, -1)
    assert [j["kind"] for j in left + right] == ["two-point"] * 8
    np.testing.assert_allclose([j["y"] for j in left], fine, atol=1e-7)
    np.testing.assert_allclose(sorted(-j["y"] for j in right), fine, atol=1e-7)
