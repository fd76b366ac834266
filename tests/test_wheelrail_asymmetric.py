"""Asymmetric wheel/rail pairs and EN 15302 (issue 29): left and right profiles and radii of their own; the
equivalent conicity as the standard defines it — ŷ half the peak-to-peak excursion about the (shifted)
equilibrium, 0 where the wheelset does not oscillate — against hand computations; a wheelset with different
wheel radii rolls where its radii are equal."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad

from hpcrail.models.wheelrail import profiles as pr
from hpcrail.models.wheelrail.conicity import equivalent_conicity, orbit, rolling_radius_difference
from hpcrail.models.wheelrail.config import build_profiles, load_profile_pair
from hpcrail.models.wheelrail.geometry import ContactSolver

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT / "configs" / "wheelrail" / "s1002_uic60.yaml"


def period_by_hand(dr, y1, y2):
    """Wavelength of y'' = -Δr(y)/2 (e0 r0 = 1) between the turning points y1 < y2: 2 ∫ dy / sqrt(2(E - V)),
    V(y) = ∫ Δr/2, singularities at the ends removed by y = c + h sin θ pieces (scipy quad)."""
    V = lambda y: quad(lambda s: 0.5 * dr(s), y1, y)[0]       # noqa: E731  V(y1) = 0 = E
    def half(a, b):
        # ∫_a^b dy / sqrt(-2 V(y)) with V(a) = V(b) = 0 < -V inside; y = (a+b)/2 + (b-a)/2 sin θ
        c, h = 0.5 * (a + b), 0.5 * (b - a)
        return quad(lambda th: h * math.cos(th) / math.sqrt(max(-2.0 * V(c + h * math.sin(th)), 1e-300)),
                    -math.pi / 2, math.pi / 2, limit=200)[0]
    return 2.0 * half(y1, y2)


def test_en15302_piecewise_linear_asymmetric_by_hand():
    """Δr with slopes k1 left and k2 right of an equilibrium y0 ≠ 0: the orbit is lopsided, its wavelength
    λ = π √2 (1/√k1 + 1/√k2), so tan γ_e = 2/(1/√k1 + 1/√k2)² at every amplitude (the standard's ŷ: half the
    peak-to-peak excursion).  Starting the oscillation at y = ŷ, as before, gives another answer."""
    y0, k1, k2 = 1.3e-3, 0.08, 0.5
    ys = np.linspace(-0.02, 0.02, 4001)
    dr = np.where(ys < y0, k1 * (ys - y0), k2 * (ys - y0))
    exact = 2.0 / (1 / math.sqrt(k1) + 1 / math.sqrt(k2)) ** 2
    amps = [1e-3, 3e-3, 6e-3]
    np.testing.assert_allclose(equivalent_conicity(ys, dr, amps, "en15302"), exact, rtol=1e-6)
    np.testing.assert_allclose(equivalent_conicity(ys, dr, amps, "klingel"), exact, rtol=1e-6)
    for a in amps:
        y1, y2 = orbit(ys, dr, a)
        assert y2 - y1 == pytest.approx(2 * a, rel=1e-12)
        # equal potential at the turning points: k1 (y0 - y1)² = k2 (y2 - y0)²
        assert k1 * (y0 - y1) ** 2 == pytest.approx(k2 * (y2 - y0) ** 2, rel=1e-9)


def test_en15302_nonlinear_shifted_by_hand():
    """Δr = 2t(y - y0) + c(y - y0)³ (odd about y0 = 2 mm): the orbit of amplitude ŷ is y0 ± ŷ, and tan γ_e equals
    (2π/λ)² with λ from the period integral computed by hand (quadrature, 1e-6)."""
    y0, t, c = 2e-3, 0.15, 4000.0
    ys = np.linspace(-0.02, 0.025, 9001)
    f = lambda y: 2 * t * (y - y0) + c * (y - y0) ** 3                # noqa: E731
    dr = f(ys)
    for a in (0.5e-3, 3e-3, 8e-3):
        y1, y2 = orbit(ys, dr, a)
        assert (y1, y2) == pytest.approx((y0 - a, y0 + a), abs=1e-9)
        lam = period_by_hand(f, y0 - a, y0 + a)
        got = equivalent_conicity(ys, dr, [a], "en15302")[0]
        assert got == pytest.approx((2 * math.pi / lam) ** 2, rel=2e-5)
    # the harmonic variant about the same centre: the describing function of the cubic, t + (3/8) c ŷ²... /2
    a = 3e-3
    harm = equivalent_conicity(ys, dr, [a], "harmonic")[0]
    assert harm == pytest.approx(t + 3.0 / 8.0 * c * a * a, rel=1e-4)


def test_en15302_no_oscillation_gives_zero():
    """A Δr that does not restore the wheelset (falling, zero, or an amplitude beyond the sampled range) gives
    tan γ_e = 0, as the standard reports it, instead of an error; unknown methods are refused by name."""
    ys = np.linspace(-0.01, 0.01, 201)
    for dr in (-0.2 * ys, 0 * ys, np.full_like(ys, 1e-3)):
        np.testing.assert_array_equal(equivalent_conicity(ys, dr, [1e-3, 4e-3], "en15302"), 0.0)
        np.testing.assert_array_equal(equivalent_conicity(ys, dr, [1e-3, 4e-3], "harmonic"), 0.0)
    assert equivalent_conicity(ys, 0.2 * ys, [0.02], "en15302")[0] == 0.0
    with pytest.raises(ValueError, match="allowed: en15302, klingel, harmonic"):
        equivalent_conicity(ys, 0.2 * ys, [1e-3], "describing")


@pytest.fixture(scope="module")
def s1002():
    cfg, doc = load_profile_pair(PAIR)
    return build_profiles(cfg, doc)


def test_asymmetric_solver_with_equal_sides_is_the_symmetric_one(s1002):
    """Giving the right side explicitly (equal profiles, placement) reproduces the symmetric solver to 1e-15; the
    mirrored solver of an asymmetric pair gives Δr_m(y) = -Δr(-y)."""
    w, r, P = s1002.wheel, s1002.rail, s1002.placement
    sym = ContactSolver(w, r, P)
    asy = ContactSolver(w, r, P, wheel_right=pr.Profile(**{**w.__dict__}), rail_right=r,
                        placement_right=pr.Placement(P.L_w, P.L_r, P.r0, P.cant))
    assert not asy.symmetric
    ys = np.linspace(-0.009, 0.009, 37)
    d1, X1 = rolling_radius_difference(sym, ys)
    d2, X2 = rolling_radius_difference(asy, ys)
    np.testing.assert_allclose(X2, X1, atol=1e-15)
    big = ContactSolver(w, r, P, placement_right=pr.Placement(P.L_w, P.L_r, P.r0 - 1e-3, P.cant))
    dm, Xm = rolling_radius_difference(big.mirrored(), -ys[::-1])
    db, Xb = rolling_radius_difference(big, ys)
    np.testing.assert_allclose(dm, -db[::-1], atol=1e-13)


def test_different_radii_roll_where_the_radii_are_equal(s1002):
    """A wheelset whose right wheel is 1 mm smaller in radius (2 mm in diameter) has Δr = r_l - r_r = +1.5 mm at
    y = 0 (the radius difference and the roll it causes, right side down, which moves both contacts towards the
    right flange); its rolling line (Δr = 0, where it runs without longitudinal creep) moves to the right, y* < 0,
    by about Δr(0) / (2 tan γ_e) — tan γ_e the harmonic conicity of the symmetric pair at that amplitude (hand
    estimate within 30 %, the profile is not a cone); the EN 15302 conicity of the asymmetric Δr at 3 mm is that
    of an orbit about y*, its turning points 6 mm apart."""
    w, r, P = s1002.wheel, s1002.rail, s1002.placement
    s = ContactSolver(w, r, P, placement_right=pr.Placement(P.L_w, P.L_r, P.r0 - 1e-3, P.cant))
    ys = np.arange(-12e-3, 12e-3 + 1e-9, 0.02e-3)
    dr, X = rolling_radius_difference(s, ys)
    i = int(np.argmin(np.abs(dr)))
    d0 = dr[np.argmin(np.abs(ys))]
    assert 1.2e-3 < d0 < 1.8e-3
    ystar = float(np.interp(0.0, dr[i - 5:i + 5], ys[i - 5:i + 5]))
    rl, rr = s.rolling_radii(s.solve(ystar)[0])
    assert abs(rl - rr) < 2e-6
    sym = ContactSolver(w, r, P)
    dr0, _ = rolling_radius_difference(sym, ys)
    te = equivalent_conicity(ys, dr0, [abs(ystar)], "harmonic")[0]
    assert ystar < 0 and ystar == pytest.approx(-d0 / (2 * te), rel=0.3)
    y1, y2 = orbit(ys, dr, 3e-3)
    assert y2 - y1 == pytest.approx(6e-3) and y1 < ystar < y2
    assert equivalent_conicity(ys, dr, [3e-3])[0] > 0
