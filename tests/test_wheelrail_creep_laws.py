"""The creep-force law table (issue 29): FASTSIM next to Polach, selectable by name; Kalker's coefficients over
the patch shapes of flange contact (a/b up to 20 and beyond: Table E.3 joined to Kalker's asymptotes); the
flange's patch on S1002/UIC60 (a/b ≈ 17-21) with its linear creep force from the extended table."""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

from hpcrail.config import ConfigError
from hpcrail.models.wheelrail import creep as C
from hpcrail.models.wheelrail import hertz as H
from hpcrail.models.wheelrail import kalker as K
from hpcrail.models.wheelrail.config import build_profiles, load_profile_pair

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "wheelrail"
PAIR = ROOT / "configs" / "wheelrail" / "s1002_uic60.yaml"
G = 82e9
NU = 0.28
E = 2 * G * (1 + NU)


def _rows(name):
    return list(csv.DictReader(ln for ln in (DATA / name).read_text().splitlines() if ln.strip() and
                                not ln.startswith("#")))


def test_fastsim_linear_limit_is_kalker_and_saturates_at_mu_n():
    """FASTSIM's flexibilities reproduce Kalker's linear theory at small creepage — F_x = -G ab C11 ξ_x,
    F_y = -G ab C22 ξ_y, F_y = -G (ab)^1.5 C23 φ — within the discretisation (0.1 % with 24 strips), for
    a/b = 0.2 … 20; at large creepage the force is μN (0.1 %)."""
    P = C.creep_params("fastsim", mu=0.3, E=E, nu=NU, strips=24)
    Kc = C.kalker_params(NU)
    N = 1e5
    for aob in (0.2, 1.0, 5.0, 20.0):
        a, b = 5e-3 * math.sqrt(aob), 5e-3 / math.sqrt(aob)
        c11, c22, c23 = C.kalker_coefficients(Kc, aob)
        fx = C.fastsim(P, N, a, b, c11, c22, c23, 1e-8, 0.0, 0.0)[0]
        fy = C.fastsim(P, N, a, b, c11, c22, c23, 0.0, 1e-8, 0.0)[1]
        fs = C.fastsim(P, N, a, b, c11, c22, c23, 0.0, 0.0, 1e-6)[1]
        assert fx == pytest.approx(-G * a * b * c11 * 1e-8, rel=2e-3)
        assert fy == pytest.approx(-G * a * b * c22 * 1e-8, rel=2e-3)
        assert fs == pytest.approx(-G * (a * b) ** 1.5 * c23 * 1e-6, rel=2e-3)
        sat = C.fastsim(P, N, a, b, c11, c22, c23, 0.1, 0.05, 0.0)
        assert math.hypot(sat[0], sat[1]) == pytest.approx(0.3 * N, rel=2e-3)
        odd = C.fastsim(P, N, a, b, c11, c22, c23, -1e-3, -2e-3, -0.5)
        pos = C.fastsim(P, N, a, b, c11, c22, c23, 1e-3, 2e-3, 0.5)
        np.testing.assert_allclose(odd, [-v for v in pos], rtol=1e-12, atol=1e-9)


def test_fastsim_against_exact_kalker_eurosprinter():
    """FASTSIM against Kalker's exact theory (CONTACT, Polach 2005's Eurosprinter case, a/b = 0.5, μ = 0.33): the
    same slope at small creepage (2 %) and the known error of the simplified theory in the transition — at most
    0.05 μN (measured 0.048: FASTSIM saturates a little late)."""
    Q = 106.7e3
    hp = H.hertz_params(E, NU)
    A = 0.8
    B = brentq(lambda B: H.hertz_ellipse(hp, A, B, Q)[0] / H.hertz_ellipse(hp, A, B, Q)[1] - 0.5, 0.01, 0.79)
    a, b, _, _ = H.hertz_ellipse(hp, A, B, Q)
    c = C.kalker_coefficients(C.kalker_params(NU), a / b)
    P = C.creep_params("fastsim", mu=0.33, E=E, nu=NU)
    worst = 0.0
    for r in _rows("contact_tractcurv_eurosprinter_ref.csv"):
        if r["series"] != "exact_Kalker_Coulomb_mu0.33":
            continue
        x = float(r["cksi"])
        f = C.fastsim(P, Q, a, b, *c, x, 0.0, 0.0)[0] / (0.33 * Q)
        ref = float(r["fx_over_mu_fn"])
        if x <= 1e-5:
            assert f == pytest.approx(ref, rel=0.03)
        worst = max(worst, abs(f - ref))
    assert worst < 0.05


def test_creep_law_table_dispatch_and_config():
    """Every entry of the table has a kernel branch: creep_force gives polach() for ``polach`` and fastsim() for
    ``fastsim``; an unknown name is refused naming the allowed ones; a profile pair selects the law with
    ``friction.law`` and refuses Polach's parameters with FASTSIM."""
    assert set(C.CREEP_LAWS) == {"polach", "fastsim"}
    args = (8e4, 6e-3, 4e-3, 4.0, 3.5, 1.5, 2e-3, -1e-3, 0.2)
    for name, fn in (("polach", lambda P: C.polach(P, *args, 20.0)), ("fastsim", lambda P: C.fastsim(P, *args))):
        P = C.creep_params(name, mu=0.3, E=E, nu=NU)
        assert P.law == C.CREEP_LAWS[name].code
        assert C.creep_force(P, *args, 20.0) == fn(P)
    with pytest.raises(ValueError, match="allowed: polach, fastsim"):
        C.creep_params("coulomb")
    cfg, doc = load_profile_pair(PAIR, ["friction.law=fastsim", "friction.mu=0.3"])
    assert cfg.friction.law == "fastsim"
    with pytest.raises(ConfigError, match="FASTSIM uses Coulomb friction"):
        load_profile_pair(PAIR, ["friction.law=fastsim", "friction.kA=0.5", "friction.kS=0.4"])


def test_kalker_coefficients_beyond_table_e3():
    """Table E.3 ends at a/b = 1/10 and 10; flange contacts reach a/b ≈ 20.  The extended coefficients equal the
    table inside it, Kalker's slender-ellipse asymptotes from min(a/b, b/a) ≤ 1/40 on, and join both without a
    jump (0.05 % across a/b = 10 and 1/10); they keep growing beyond 10 (C11(20)/C11(10) = 1.58, C23 2.31)
    instead of the former clamp."""
    tab_aob, Ct = K.kalker_table()
    Cn = K.kalker_nu(Ct, NU)
    np.testing.assert_allclose(K.kalker_coefficients_extended(tab_aob, NU), Cn, rtol=1e-12)
    for aob in (1 / 50, 1 / 45, 45.0, 50.0):
        np.testing.assert_allclose(K.kalker_coefficients_extended(np.array([aob]), NU),
                                   K.kalker_asymptote(np.array([aob]), NU), rtol=1e-12)
    for edge in (0.1, 10.0):
        lo, hi = K.kalker_coefficients_extended(np.array([edge * (1 - 1e-6), edge * (1 + 1e-6)]), NU)
        np.testing.assert_allclose(lo, hi, rtol=5e-4)
    c10, c20 = K.kalker_coefficients_extended(np.array([10.0, 20.0]), NU)
    assert np.all(c20 > c10) and c20[0] / c10[0] == pytest.approx(1.579, abs=0.01)
    # the kernels' table follows the extended coefficients (linear interpolation in ln a/b)
    Kc = C.kalker_params(NU)
    for aob in (0.03, 0.5, 7.0, 20.0, 35.0):
        np.testing.assert_allclose(C.kalker_coefficients(Kc, aob), K.kalker_coefficients_extended(np.array([aob]),
                                                                                               NU)[0], rtol=2e-4)


def test_flange_patch_uses_the_extended_coefficients():
    """S1002/UIC60: the flange contact's ellipse (y = 6.3-10 mm, 50 kN) has a/b = 17-21; its linear creep forces
    (Polach at ξ = 1e-7) are G ab C(a/b) ξ with the coefficients of that a/b — 1.5-2.3 times what the clamp at
    a/b = 10 gave — within 0.1 %."""
    cfg, doc = load_profile_pair(PAIR)
    s = build_profiles(cfg, doc).solver()
    HK = H.contact_coef_params(cfg.material.E_Pa, cfg.material.nu)
    P = C.creep_params("polach", mu=0.3, E=cfg.material.E_Pa, nu=cfg.material.nu)
    Gm = P.G
    Kc = C.kalker_params(cfg.material.nu)
    c10 = C.kalker_coefficients(Kc, 10.0)
    ratios = []
    for y in (0.0063, 0.007, 0.008, 0.01):
        x, _, _ = s.solve(y)
        c = s.quantities(x, 1)
        assert c.gamma > 0.75
        a, b, c11, c22, c23 = H.hertz_kalker(HK, c.A, c.B, 5e4)
        assert 16 < a / b < 22
        ref = K.kalker_coefficients_extended(np.array([a / b]), cfg.material.nu)[0]
        np.testing.assert_allclose((c11, c22, c23), ref, rtol=3e-3)
        fx = C.polach(P, 5e4, a, b, c11, c22, c23, 1e-7, 0.0, 0.0, 10.0)[0]
        fy = C.polach(P, 5e4, a, b, c11, c22, c23, 0.0, 1e-7, 0.0, 10.0)[1]
        assert fx == pytest.approx(-Gm * a * b * c11 * 1e-7, rel=1e-3)
        assert fy == pytest.approx(-Gm * a * b * c22 * 1e-7, rel=1e-3)
        ratios.append((c11 / c10[0], c22 / c10[1], c23 / c10[2]))
    assert 1.4 < np.min(ratios) and np.max(ratios) < 2.5
