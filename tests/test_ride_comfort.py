"""Ride comfort weightings and indices against their standard definitions and published values."""
from __future__ import annotations

import numpy as np
import pytest

from hpcrail.results import ride_comfort as rc


@pytest.mark.parametrize("name,value", [("Wb", 0.8126), ("Wc", 0.5145), ("Wd", 0.1261)])
def test_weightings_equal_iso8041_reference_values(name, value):
    """|W| at the ISO 8041 reference frequency ω = 100 rad/s (15.915 Hz)."""
    assert abs(rc.weighting(name, 100.0 / (2 * np.pi))) == pytest.approx(value, abs=1e-4)


def test_weighting_shapes():
    """Wb: 0.4 at low frequency (K·(f5/f6)² = 1.024·0.39), ≈1 between 5 and 10 Hz, band-limited
    above 100 Hz and below 0.4 Hz; Wd falls as 1/f above 2 Hz (a-v transition)."""
    assert abs(rc.weighting("Wb", 1.0)) == pytest.approx(0.385, abs=0.005)
    assert 0.95 < abs(rc.weighting("Wb", 7.0)) < 1.07
    assert abs(rc.weighting("Wb", 400.0)) < 0.02 and abs(rc.weighting("Wb", 0.05)) < 0.01
    r = abs(rc.weighting("Wd", 10.0)) / abs(rc.weighting("Wd", 20.0))
    assert r == pytest.approx(2.0, rel=0.05)


@pytest.mark.parametrize("f", [1.0, 2.0, 4.0, 8.0])
def test_weighted_rms_of_a_sinusoid(f):
    dt = 0.005
    t = np.arange(0, 60, dt)
    A = 0.3
    a = A * np.sin(2 * np.pi * f * t)
    expect = A / np.sqrt(2) * abs(rc.weighting("Wb", f))
    assert rc.weighted_rms(a, dt, "Wb") == pytest.approx(expect, rel=5e-3)
    # stationary signal: every 5 s window has the same r.m.s.
    assert rc.p95_of_window_rms(a, dt, 5.0, "Wb") == pytest.approx(expect, rel=1e-2)


@pytest.mark.parametrize("f", [1.0, 2.0, 3.0, 5.0, 8.0])
def test_sperling_filter_form_equals_single_frequency_formula(f):
    """For a sinusoid of amplitude A [cm/s²] the filter form gives W_z = (A·B_s(f))^0.3, within 1.5 %
    of Sperling's original 0.896 (A³ F(f)/f)^0.1."""
    dt = 0.005
    t = np.arange(0, 40, dt)
    A = 50.0  # cm/s²
    wz = rc.sperling_wz(A / 100 * np.sin(2 * np.pi * f * t), dt)
    assert wz == pytest.approx((A * rc.sperling_weighting(f)) ** 0.3, rel=2e-3)
    assert wz == pytest.approx(float(rc.sperling_classic(A, f)), rel=0.015)


def test_ride_metrics_shapes_and_short_records():
    rng = np.random.default_rng(0)
    a = rng.normal(scale=0.1, size=(3, 4000))
    m = rc.ride_metrics(a, 0.005, 5.0)
    for k in ("wz", "wb_rms", "wb_p95", "n_mv_z", "rms", "peak"):
        assert m[k].shape == (3,)
    assert np.all(m["n_mv_z"] == 6 * m["wb_p95"])
    short = rc.ride_metrics(a[:, :500], 0.005, 5.0)   # 2.5 s < one window
    assert np.all(np.isnan(short["wb_p95"]))
    with pytest.raises(KeyError, match="allowed: Wb"):
        rc.weighting("Wz", 1.0)
