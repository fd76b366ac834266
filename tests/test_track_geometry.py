"""Track alignment of the planar train: clothoid spirals, circular curves, superelevation (Massa et al. 2012
§11, Fig. 15)."""
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad

from hpcrail.kinds import load_scenario
from hpcrail.kinds.planar_train.schema import DEGREE_OF_CURVE_RADIUS_M
from hpcrail.models.track.geometry import build_track_table, exact_theta_kappa_cant, sections_from_spec, track_point


CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.fixture(scope="module")
def curved():
    sc, _ = load_scenario(CONFIGS / "couplers" / "curved_track.yaml")
    secs = sections_from_spec(sc.track.sections)
    return sc, secs, build_track_table(secs, sc.track.grid_m)


def lookup(tab, s):
    return track_point(tab.nodes, tab.slopes, tab.s0, tab.h, 1.0 / tab.h, s)


def test_degree_of_curve_radius():
    """US degree of curve, arc definition: R = 5729.58 ft / D (MODELS.md §3: 3° ≈ 582 m)."""
    assert DEGREE_OF_CURVE_RADIUS_M / 3.0 == pytest.approx(5729.578 * 0.3048 / 3.0, rel=1e-6)
    assert DEGREE_OF_CURVE_RADIUS_M / 3.0 == pytest.approx(582.1, abs=0.05)


def test_positions_match_quadrature_of_the_exact_tangent(curved):
    """X(s), Y(s) of the table (Hermite between exactly integrated nodes) against adaptive quadrature
    of cos θ, sin θ with θ(s) from the section data: < 1e-9 m over the whole 853 m route."""
    _sc, secs, tab = curved

    def th(s):
        return float(exact_theta_kappa_cant(secs, np.array([s]))[0][0])

    rng = np.random.default_rng(1)
    ss = np.sort(rng.uniform(0.0, tab.length, 25))
    x_ref = y_ref = 0.0
    s_prev = 0.0
    for s in ss:
        x_ref += quad(lambda u: math.cos(th(u)), s_prev, s, epsabs=1e-13, epsrel=1e-14, limit=200)[0]
        y_ref += quad(lambda u: math.sin(th(u)), s_prev, s, epsabs=1e-13, epsrel=1e-14, limit=200)[0]
        s_prev = s
        X, Y, t_, k, kp, e = lookup(tab, s)
        assert X == pytest.approx(x_ref, abs=1e-9)
        assert Y == pytest.approx(y_ref, abs=1e-9)
        assert t_ == pytest.approx(th(s), abs=1e-12)


def test_curvature_superelevation_and_heading(curved):
    """Curvature and superelevation follow Fig. 15 (linear on spirals), the heading after the first
    spiral and curve is ∫κ ds, and the reverse curve brings the heading back to zero."""
    _sc, _secs, tab = curved
    R = DEGREE_OF_CURVE_RADIUS_M / 3.0
    ends = np.cumsum([60.96, 121.92, 91.44, 91.44, 121.92, 91.44, 91.44, 121.92, 60.96])
    k_mid_spiral = lookup(tab, 60.96 + 60.96)[3]
    assert k_mid_spiral == pytest.approx(0.5 / R, rel=1e-12)
    X, Y, th, k, kp, e = lookup(tab, ends[1] + 10.0)
    assert k == pytest.approx(1.0 / R, rel=1e-12) and kp == 0.0
    assert e == pytest.approx(0.0762, rel=1e-12)
    assert lookup(tab, ends[1] - 10.0)[5] == pytest.approx(0.0762 * (121.92 - 10.0) / 121.92, rel=1e-10)
    assert lookup(tab, ends[1])[2] == pytest.approx(121.92 / (2 * R), rel=1e-12)
    assert lookup(tab, ends[2])[2] == pytest.approx(121.92 / (2 * R) + 91.44 / R, rel=1e-12)
    X, Y, th, k, kp, e = lookup(tab, ends[5] + 5.0)
    assert k == pytest.approx(-1.0 / R, rel=1e-12) and e == pytest.approx(-0.0762, rel=1e-12)
    # symmetric reverse curve (spirals swapped): heading back to zero at the end
    assert lookup(tab, tab.length)[2] == pytest.approx(0.0, abs=1e-12)


def test_circular_curve_lies_on_a_circle(curved):
    """Points of the constant-curvature section are at distance R from one centre."""
    _sc, _secs, tab = curved
    R = DEGREE_OF_CURVE_RADIUS_M / 3.0
    s0 = 60.96 + 121.92
    X0, Y0, th0, *_ = lookup(tab, s0)
    cx, cy = X0 - R * math.sin(th0), Y0 + R * math.cos(th0)
    for s in np.linspace(s0, s0 + 91.44, 13):
        X, Y, *_ = lookup(tab, s)
        assert math.hypot(X - cx, Y - cy) == pytest.approx(R, abs=1e-9)


def test_straight_continuation_beyond_the_ends(curved):
    _sc, _secs, tab = curved
    X1, Y1, th1, *_ = lookup(tab, tab.length)
    X, Y, th, k, kp, e = lookup(tab, tab.length + 25.0)
    assert (k, kp) == (0.0, 0.0) and th == th1
    assert X == pytest.approx(X1 + 25.0 * math.cos(th1), abs=1e-12)
    assert Y == pytest.approx(Y1 + 25.0 * math.sin(th1), abs=1e-12)
    X, Y, th, k, kp, e = lookup(tab, -5.0)
    assert (X, Y, th) == (pytest.approx(-5.0), pytest.approx(0.0), 0.0)
