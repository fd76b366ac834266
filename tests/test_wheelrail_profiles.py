"""Wheel/rail profiles: the S1002 sections against the independent CONTACT point set, the smoothing
splines, the UIC60 1:40 head (un-canting, crown radius, gauge point), placement from gauge and
flange-back spacing, and the configuration errors (file, field, value, allowed)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hpcrail.config import ConfigError
from hpcrail.models.wheelrail import profiles as pr
from hpcrail.models.wheelrail.config import build_profiles, load_profile_pair

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT / "configs" / "wheelrail" / "s1002_uic60.yaml"


def test_s1002_sections_reproduce_the_contact_benchmark_points():
    """The analytical S1002 (UIC 510-2 sections) equals CONTACT's MBench_S1002_v3 points (raw file:
    lateral = -s, vertical = F) to 2e-6 mm over all 399 points: two independent sources of the profile."""
    raw = pr.read_points(pr.builtin_path("MBench_S1002_v3_wheel_points_mm.csv"))
    F = pr.s1002_F(-raw[:, 0])
    ok = np.isfinite(F)
    assert ok.sum() >= 395
    assert np.max(np.abs(F[ok] - raw[ok, 1])) < 2e-6


def test_s1002_smoothing_spline_keeps_the_profile_and_its_slope():
    """The quintic smoothing spline (RMS 0.1 µm as requested) stays within 2 µm of the sections — the
    largest deviation is at the joint of the 70° flange line and the flange arc, where the sections' curvature
    jumps — and its slope at the taping line is the section-B coefficient (-BB = -0.0336) within 1 %."""
    w = pr.s1002_profile(smoothing_rms=1e-7)
    s = np.linspace(-69.6, 59.9, 20000)
    F = pr.s1002_F(s) * 1e-3
    assert np.max(np.abs(w(s * 1e-3) - F)) < 2e-6
    assert w.rms == pytest.approx(1e-7, rel=0.05)
    assert float(w(0.0, 1)) == pytest.approx(-3.358537058e-02, rel=0.01)
    # the flange tip (largest radius) sits at s = -55 mm, 28 mm above the taping line
    u = np.linspace(-0.065, -0.045, 4001)
    i = np.argmax(w(u))
    assert u[i] == pytest.approx(-0.055, abs=2e-4)
    assert float(w(u[i])) == pytest.approx(0.028, abs=5e-6)


def test_uic60_uncanted_crown_radius_and_gauge_point():
    """Rotating the 1:40 points back by β = 1/40 gives a head whose crown is a 300 mm arc (UIC60/60E1,
    EN 13674-1) and the 14 mm gauge point sits 43.031 mm on the gauge side of the origin (the value
    CONTACT's benchmark script computes from the same file)."""
    r = pr.uic60_profile()
    assert r.gauge_point[0] == pytest.approx(-43.031e-3, abs=2e-6)
    # crown: top of the un-canted head, circle fit over ±8 mm
    v = np.linspace(r.u_min, r.u_max, 20001)
    top = v[np.argmax(r(v))]
    vv = np.linspace(top - 8e-3, top + 8e-3, 401)
    g = r(vv)
    # fit g = c0 - (v - v0)^2/(2R)
    c = np.polyfit(vv, g, 2)
    assert -1.0 / (2.0 * c[0]) == pytest.approx(0.300, rel=0.01)
    # the curvature reported by the spline on the crown is 1/300 mm
    k = -r(vv, 2) / (1 + r(vv, 1) ** 2) ** 1.5
    assert np.median(k) == pytest.approx(1 / 0.3, rel=0.02)


def test_placement_from_gauge_and_flange_back_spacing():
    w = pr.s1002_profile()
    r = pr.uic60_profile()
    L_w = pr.L_w_from_flange_back(1.360, w)
    L_r = pr.L_r_from_gauge(1.435, r)
    assert L_w == pytest.approx(0.750, abs=1e-12)
    assert L_r == pytest.approx(0.7175 + 0.043031, abs=2e-6)
    P = pr.Placement(L_w, L_r, 0.457, 1 / 40)
    assert P.gauge(r) == pytest.approx(1.435, abs=1e-12)
    assert P.flange_back_spacing(w) == pytest.approx(1.360, abs=1e-12)
    # paper 004 Table 1 (L_r = 0.7555 m) with the UIC60 origin: a 1425.2 mm gauge (said in the configs)
    assert pr.Placement(0.7515, 0.7555, 0.457, 1 / 40).gauge(r) == pytest.approx(1.42494, abs=1e-5)


def test_shipped_pair_builds_standard_gauge():
    cfg, doc = load_profile_pair(PAIR)
    wheel, rail, P = build_profiles(cfg, doc)
    assert P.gauge(rail) == pytest.approx(1.435, abs=1e-12)
    assert P.flange_back_spacing(wheel) == pytest.approx(1.360, abs=1e-12)
    assert (P.r0, P.cant) == (0.46, 0.025)      # the Manchester contact benchmark's NOMRAD 460 mm


def test_profile_from_file_equals_builtin(tmp_path):
    """A two-column file (here the S1002 sampled every 0.25 mm, with a header and blank-separated) gives
    the same profile as the built-in sections within the smoothing tolerance."""
    s = np.arange(-70.0, 60.0001, 0.25)
    F = pr.s1002_F(s)
    f = tmp_path / "wheel.txt"
    f.write_text("# S1002 sampled\nlateral vertical\n" + "\n".join(f"{a:.4f} {b:.9f}" for a, b in zip(s, F)))
    yaml = tmp_path / "pair.yaml"
    yaml.write_text(PAIR.read_text().replace("builtin: s1002 ", "file: wheel.txt ")
                    .replace("  builtin: s1002\n", "  file: wheel.txt\n  flange_back_mm: -70\n"))
    cfg, doc = load_profile_pair(yaml)
    wheel, rail, P = build_profiles(cfg, doc)
    ref = pr.s1002_profile()
    u = np.linspace(-0.05, 0.055, 500)
    assert np.max(np.abs(wheel(u) - ref(u))) < 1e-5
    assert P.L_w == pytest.approx(0.75)


def test_bad_profile_file_names_file_and_line(tmp_path):
    f = tmp_path / "rail.csv"
    f.write_text("y,z\n" + "\n".join(f"{i},{0.1 * i}" for i in range(20)) + "\n3,abc\n")
    with pytest.raises(pr.ProfileError, match=r"rail\.csv: line 22: column 2 is not a number"):
        pr.read_points(f)


@pytest.mark.parametrize("override, field, fragment", [
    ("placement.L_r_m=0.76", "placement", "exactly one of gauge_mm and L_r_m"),
    ("rail.builtin=uic54", "rail.builtin", "uic60_1in40"),
    ("friction.kS=1.5", "friction.kS", "less than or equal to 1"),
    ("kec.s_step_mm=0.3", "kec", "whole number of steps"),
    ("wheel.file=missing.csv", "wheel", "exactly one of builtin and file"),
])
def test_config_errors_name_field_and_allowed(override, field, fragment):
    with pytest.raises(ConfigError) as ei:
        load_profile_pair(PAIR, [override])
    text = str(ei.value)
    assert field in text and fragment in text
    assert "s1002_uic60.yaml" in text or "--set" in text


def test_pair_nested_in_another_yaml(tmp_path):
    """A vehicle YAML that includes the pair: files resolve relative to the pair's own YAML and errors name
    the nested field."""
    from hpcrail.config import load_document
    from hpcrail.models.wheelrail.config import ProfilePairConfig, check_profile_pair

    sub = tmp_path / "pair"
    sub.mkdir()
    s = np.arange(-70.0, 60.0001, 0.25)
    (sub / "w.csv").write_text("\n".join(f"{a},{b}" for a, b in zip(s, pr.s1002_F(s))))
    (sub / "pair.yaml").write_text(PAIR.read_text().replace("  builtin: s1002 ", "  file: w.csv "))
    (tmp_path / "vehicle.yaml").write_text("contact: pair/pair.yaml\n")
    doc = load_document(tmp_path / "vehicle.yaml")
    cfg = ProfilePairConfig.model_validate(doc.tree["contact"])
    assert check_profile_pair(cfg, doc, ("contact",)) == []
    wheel, rail, P = build_profiles(cfg, doc, ("contact",))
    assert P.L_w == pytest.approx(0.75)
    bad = cfg.model_copy(update={"wheel": cfg.wheel.model_copy(update={"file": "nope.csv"})})
    issues = check_profile_pair(bad, doc, ("contact",))
    assert issues and issues[0].path == "contact.wheel.file" and "pair.yaml" in issues[0].file


def test_interpolation_helpers_reproduce_polynomials():
    """pp_eval gives a PPoly's value and three derivatives; hermite5 reproduces a quintic exactly (value,
    slope, curvature) from its nodal values and first two derivatives."""
    from scipy.interpolate import PPoly

    from hpcrail.models.wheelrail.interp import hermite5, pp_eval

    c = np.array([[0.5, -1.0], [2.0, 0.3], [-1.0, 1.5], [0.25, -2.0], [3.0, 0.0], [1.0, -1.0]])
    x = np.array([0.0, 1.0, 2.5])
    p = PPoly(c, x)
    for xq in (0.3, 1.0, 1.7, 2.4):
        got = pp_eval(x, np.ascontiguousarray(c), xq)
        ref = [p(xq), p.derivative(1)(xq), p.derivative(2)(xq), p.derivative(3)(xq)]
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    q = np.polynomial.Polynomial([0.3, -1.0, 2.0, 0.5, -0.7, 0.2])
    g = np.linspace(-1.0, 2.0, 7)
    d1, d2 = q.deriv(1), q.deriv(2)
    for xq in (-0.83, 0.11, 1.999):
        v, s1, s2 = hermite5(q(g), d1(g), d2(g), g.size, g[0], g[1] - g[0], xq)
        assert (v, s1, s2) == pytest.approx((q(xq), d1(xq), d2(xq)), rel=1e-11, abs=1e-11)
