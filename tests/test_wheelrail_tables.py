"""Contact lookup table (LUT, paper 004 eqs 14-21) and KEC tables (eqs 22-23) of the S1002/UIC60 pair:
eq 12 on the whole LUT grid, interpolation against direct solves, derivatives of both on-line kernels
against finite differences, the flange indentation's zero at the rigid two-point jump, KEC against LUT,
the regularised transition, irregularity inputs, and the zarr round trip of the cache."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hpcrail.models.wheelrail import kec as K
from hpcrail.models.wheelrail import layout as L
from hpcrail.models.wheelrail import lut as LU
from hpcrail.models.wheelrail.config import load_profile_pair
from hpcrail.models.wheelrail.tables import contact_tables

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT / "configs" / "wheelrail" / "s1002_uic60.yaml"
NAN = float("nan")


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    cfg, doc = load_profile_pair(PAIR)
    cache = tmp_path_factory.getbasetemp() / "hpcrail_cache" / "wheelrail"
    return contact_tables(cfg, doc, cache_dir=cache)


@pytest.fixture(scope="module")
def solver(tables):
    return tables.solver()


def lut_eval(T, y, irr=(0.0, 0.0, 0.0, 0.0), rates=(0.0,) * 5, zphi=(NAN, NAN)):
    out = np.zeros(L.N_OUT)
    LU.lut_wheelset(T, y, np.array(irr, float), np.array(rates, float), np.array(zphi, float), out)
    return out


def kec_eval(Kp, y, irr=(0.0, 0.0, 0.0, 0.0), rates=(0.0,) * 5, x=None):
    out = np.zeros(L.N_OUT)
    x = np.full(4, NAN) if x is None else x
    it = K.kec_wheelset(Kp, y, np.array(irr, float), np.array(rates, float), x, out)
    assert it > 0, f"KEC Newton did not converge at y = {y}"
    return out


def test_lut_grid_satisfies_eq12(tables, solver):
    """Every LUT node (361 × 11) satisfies eq 12 to 1e-12 (tread contact; a tread end point touching where
    flagged) — well inside the 1e-9 m asked for."""
    lut = tables.lut
    V = lut["V"].values
    q = {n: i for i, n in enumerate(lut["quantity"].values)}
    us = lut.attrs["u_split"]
    worst = 0.0
    for ix, xi in enumerate(lut["xi_g"].values):
        for iy, y in enumerate(lut["y"].values):
            v = V[ix, iy]
            x = np.array([v[q["z"]], v[q["phi"]], v[q["u_l"]], v[q["v_l"]], v[q["u_r"]], v[q["v_r"]]])
            c = tuple(us if lut["corner"].values[ix, iy, k] else NAN for k in range(2))
            worst = max(worst, float(np.max(np.abs(solver.residual(y, xi, x, c)))))
    assert worst < 1e-12


def test_lut_interpolation_against_direct_solves(tables, solver):
    """Between grid points the LUT reproduces direct solves of the tread contact.  On a ξ_g column (quintic
    Hermite in y) the error of z is below 5e-12 m in 95 % of the points (1.7e-12 measured with r0 = 460 mm: the
    tread region now ends at the flange root's ridge, -34.8 mm) and below 5e-6 m in the few cells that contain a
    rigid contact jump.  Halfway between columns (ξ_g = 0.5 mm, cubic Hermite over the
    1 mm spacing of Table 10) the median error is below 1e-8 m, 90 % below 1e-6 m and the largest below
    5e-5 m, where a contact jump or the tread end moves with the gauge (z kinked along ξ_g)."""
    T = tables.lut_params
    us = tables.lut.attrs["u_split"]
    reg = ((us, solver.u_max), (us, solver.u_max))
    rng = np.random.default_rng(4)
    for xi, bounds in ((0.0, ((0.95, 5e-12), (1.0, 5e-6))),
                       (0.5e-3, ((0.5, 1e-8), (0.9, 1e-6), (1.0, 5e-5)))):
        err = []
        for y in rng.uniform(-0.0179, 0.0179, 600):
            out = lut_eval(T, y, (0.5 * xi, -0.5 * xi, 0.0, 0.0))
            x, _, _ = solver.solve(y, xi, reg)
            err.append(abs(out[L.Z] - x[0]))
        err = np.array(err)
        for q, tol in bounds:
            assert np.quantile(err, q) < tol, (xi, q)


def test_lut_derivatives_match_finite_differences(tables):
    """∂z/∂p, ∂φ/∂p (p = y, y_l, y_r, z_l, z_r) and the convective terms of the LUT kernel against central
    differences of the kernel itself (a smooth point between columns)."""
    T = tables.lut_params
    y0 = 0.0031
    irr0 = np.array([0.4e-3, -0.3e-3, 1e-3, -0.5e-3])
    pdot = np.array([0.02, 0.005, -0.01, 0.003, 0.001])
    base = lut_eval(T, y0, irr0, pdot)
    h = 1e-7
    for k in range(5):
        dp = np.zeros(5)
        dp[k] = h
        op = lut_eval(T, y0 + dp[0], irr0 + dp[1:])
        om = lut_eval(T, y0 - dp[0], irr0 - dp[1:])
        assert base[L.DZ_DP + k] == pytest.approx((op[L.Z] - om[L.Z]) / (2 * h), rel=1e-5, abs=1e-9)
        assert base[L.DPHI_DP + k] == pytest.approx((op[L.PHI] - om[L.PHI]) / (2 * h), rel=1e-5, abs=1e-9)
    # second derivative along p(t) = p0 + ṗ t: z(t) = z0 + ż t + (CZ) t²/2
    dt = 1e-4
    zp = lut_eval(T, y0 + pdot[0] * dt, irr0 + pdot[1:] * dt)
    zm = lut_eval(T, y0 - pdot[0] * dt, irr0 - pdot[1:] * dt)
    for val, conv, dot in ((L.Z, L.CZ, L.ZDOT), (L.PHI, L.CPHI, L.PHIDOT)):
        assert base[conv] == pytest.approx((zp[val] - 2 * base[val] + zm[val]) / dt ** 2, rel=1e-3, abs=1e-9)
        assert base[dot] == pytest.approx((zp[val] - zm[val]) / (2 * dt), rel=1e-6)


def test_lut_irregularities_shift_the_table(tables):
    """Eq 18: with rail irregularities the LUT is read at ȳ = y - ξ_a, ξ_g = y_l - y_r, and z, φ are offset by
    ξ_v and ξ_c/(2 L_r)."""
    T = tables.lut_params
    y, yl, yr, zl, zr = 0.002, 0.8e-3, 0.2e-3, 1.5e-3, -0.5e-3
    o = lut_eval(T, y, (yl, yr, zl, zr))
    ref = lut_eval(T, y - 0.5 * (yl + yr), (0.5 * (yl - yr), -0.5 * (yl - yr), 0.0, 0.0))
    assert o[L.Z] == pytest.approx(ref[L.Z] + 0.5 * (zl + zr), abs=1e-15)
    assert o[L.PHI] == pytest.approx(ref[L.PHI] + (zl - zr) / (2 * T.L_r), abs=1e-15)


def test_flange_indentation_vanishes_where_the_flange_first_touches(tables, solver):
    """The LUT flange indentation δ(y) (eq 15, at the tread-contact position) crosses zero at the lateral
    shift where the rigid contact jumps to the flange (two-point contact), within 2 µm; it is negative
    (clearance) at the centre and grows with y beyond."""
    from scipy.optimize import brentq

    T = tables.lut_params
    yf = tables.lut.attrs["y_flange"]
    d = lambda y: lut_eval(T, y)[L.L_SECONDARY + L.C_DELTA]  # noqa: E731
    assert d(0.0) < -3e-3
    root = brentq(d, yf - 1e-3, yf + 1e-3, xtol=1e-10)
    assert root == pytest.approx(yf, abs=2e-6)
    assert d(yf + 1e-3) > 0.5e-3
    # mirrored on the right wheel
    assert lut_eval(T, -root)[L.R_SECONDARY + L.C_DELTA] == pytest.approx(0.0, abs=1e-6)


def test_flange_indentation_first_order_in_z_and_phi(tables, solver):
    """δ passed with the actual (z, φ) of the wheelset equals, to first order, the maximum relative
    indentation (eq 15) solved directly at that perturbed position; lifting the wheelset reduces the
    indentation by cos γ and a lateral move increases it by sin γ."""
    T = tables.lut_params
    y = tables.lut.attrs["y_flange"] + 1e-3
    o = lut_eval(T, y)
    rec = L.L_SECONDARY
    gam = o[rec + L.C_GAMMA]
    assert o[rec + L.C_DDZ] == pytest.approx(-np.cos(gam), rel=1e-12)
    assert o[rec + L.C_DDY] == pytest.approx(np.sin(gam), rel=1e-12)
    assert np.degrees(gam) > 60.0
    us = tables.lut.attrs["u_split"]
    x, _, _ = solver.solve(y, 0.0, ((us, solver.u_max), (us, solver.u_max)))
    dz, dphi = 1e-6, 2e-6
    o2 = lut_eval(T, y, zphi=(o[L.Z] + dz, o[L.PHI] + dphi))
    xp = x.copy()
    xp[0] += dz
    xp[1] += dphi
    ok, u, v, d = solver.indentation(y, 0.0, xp, 1, (solver.u_tip, us))
    assert ok
    assert o2[rec + L.C_DELTA] == pytest.approx(d, abs=5e-9)
    ok, u, v, d0 = solver.indentation(y, 0.0, x, 1, (solver.u_tip, us))
    assert o[rec + L.C_DELTA] == pytest.approx(d0, abs=5e-9)


def test_kec_reproduces_rigid_contact_outside_bands(tables, solver):
    """With no irregularity the KEC solve (eq 22) gives the rigid contact's z and φ within 5e-8 m / rad
    wherever neither wheel is in a regularisation band, and the same as the LUT where both are one-point
    tread contacts."""
    Kp = tables.kec_params
    T = tables.lut_params
    lo, hi = Kp.lo, Kp.hi
    worst = worst_lut = 0.0
    x = np.full(4, NAN)
    for y in np.linspace(-0.0175, 0.0175, 1401):
        o = kec_eval(Kp, y, x=x)
        kl, kr = o[L.SK_L], -o[L.SK_R]
        if any((lo[b] - 1e-5 <= k <= hi[b] + 1e-5) for b in range(Kp.nb) for k in (kl, kr)):
            continue
        xs, _, _ = solver.solve(y)
        worst = max(worst, abs(o[L.Z] - xs[0]), abs(o[L.PHI] - xs[1]))
        if abs(y) < tables.lut.attrs["y_flange"] - 1e-4:
            ol = lut_eval(T, y)
            worst_lut = max(worst_lut, abs(o[L.Z] - ol[L.Z]), abs(o[L.PHI] - ol[L.PHI]))
    assert worst < 5e-8
    assert worst_lut < 5e-6  # the LUT's own error in the cells of the tread contact jumps


def test_kec_regularised_transition(tables):
    """Inside a band the normal force is shared between the tread-end contact A and the flange-start
    contact B with w rising smoothly from 0 to 1; at both band ends the records equal the rigid contact
    next to the band (continuous force application), and the profile keeps C2 (f'' continuous)."""
    Kp = tables.kec_params
    for b in range(Kp.nb):
        lo, hi = Kp.lo[b], Kp.hi[b]
        ks = np.linspace(lo + 1e-12, hi - 1e-12, 41)  # neighbouring bands may share an end node
        ws = []
        for k in ks:
            out = np.zeros(L.N_OUT)
            w = K.kec_contact(Kp, k, 1.0, 0.0, 1.0, 0.0, out, L.L_PRIMARY, L.L_SECONDARY)
            ws.append(w)
            assert out[L.L_PRIMARY + L.C_W] + out[L.L_SECONDARY + L.C_W] == pytest.approx(1.0)
        ws = np.array(ws)
        assert ws[0] == pytest.approx(1.0) and ws[-1] == pytest.approx(0.0, abs=1e-12)
        assert np.all(np.diff(ws) <= 0)
        for edge in (lo, hi):  # the contact carrying the load is the same on both sides of a band end
            sw = []
            for k in (edge - 1e-9, edge + 1e-9):
                o = np.zeros(L.N_OUT)
                K.kec_contact(Kp, k, 1.0, 0.0, 1.0, 0.0, o, L.L_PRIMARY, L.L_SECONDARY)
                rec = L.L_PRIMARY if o[L.L_PRIMARY + L.C_W] > 0.5 else L.L_SECONDARY
                sw.append(o[rec + L.C_SW])
            assert sw[0] == pytest.approx(sw[1], abs=1e-7)
        f2 = [K.kec_profile(Kp, k)[2] for k in (lo - 1e-11, lo + 1e-11, hi - 1e-11, hi + 1e-11)]
        assert f2[0] == pytest.approx(f2[1], rel=1e-5, abs=1e-6)
        assert f2[2] == pytest.approx(f2[3], rel=1e-5, abs=1e-6)


def test_kec_derivatives_match_finite_differences(tables):
    """∂(z, φ)/∂p of the KEC solve (implicit function theorem on eq 22) and the convective terms against
    finite differences of the solve, on the tread and on the flange."""
    Kp = tables.kec_params
    for y0 in (0.0021, 0.0093):
        irr0 = np.array([0.3e-3, -0.2e-3, 0.7e-3, -0.4e-3])
        pdot = np.array([0.03, -0.01, 0.004, 0.002, -0.003])
        base = kec_eval(Kp, y0, irr0, pdot)
        h = 1e-7
        for k in range(5):
            dp = np.zeros(5)
            dp[k] = h
            op = kec_eval(Kp, y0 + dp[0], irr0 + dp[1:])
            om = kec_eval(Kp, y0 - dp[0], irr0 - dp[1:])
            assert base[L.DZ_DP + k] == pytest.approx((op[L.Z] - om[L.Z]) / (2 * h), rel=1e-5, abs=1e-9)
            assert base[L.DPHI_DP + k] == pytest.approx((op[L.PHI] - om[L.PHI]) / (2 * h), rel=1e-5, abs=1e-9)
        dt = 1e-4
        zp = kec_eval(Kp, y0 + pdot[0] * dt, irr0 + pdot[1:] * dt)
        zm = kec_eval(Kp, y0 - pdot[0] * dt, irr0 - pdot[1:] * dt)
        for val, conv in ((L.Z, L.CZ), (L.PHI, L.CPHI)):
            assert base[conv] == pytest.approx((zp[val] - 2 * base[val] + zm[val]) / dt ** 2, rel=2e-3, abs=1e-9)


def test_kec_common_rail_shift_is_a_wheelset_shift(tables):
    """Shifting both knife edges by a and raising both by b (eq 22) equals moving the wheelset by -a and
    lifting it by b: z(y, a, a, b, b) = z(y - a) + b, same φ and contact positions."""
    Kp = tables.kec_params
    a, b = 0.7e-3, 2e-3
    o1 = kec_eval(Kp, 0.004, (a, a, b, b))
    o0 = kec_eval(Kp, 0.004 - a)
    assert o1[L.Z] == pytest.approx(o0[L.Z] + b, abs=1e-13)
    assert o1[L.PHI] == pytest.approx(o0[L.PHI], abs=1e-13)
    assert o1[L.L_PRIMARY + L.C_SW] == pytest.approx(o0[L.L_PRIMARY + L.C_SW], abs=1e-12)


def test_kec_wheelset_is_mirror_symmetric(tables):
    Kp = tables.kec_params
    for y in (0.0008, 0.0045, 0.0071, 0.016):
        p = kec_eval(Kp, y)
        m = kec_eval(Kp, -y)
        assert p[L.Z] == pytest.approx(m[L.Z], abs=1e-13)
        assert p[L.PHI] == pytest.approx(-m[L.PHI], abs=1e-13)
        assert p[L.L_PRIMARY + L.C_SW] == pytest.approx(-m[L.R_PRIMARY + L.C_SW], abs=1e-12)
        assert p[L.L_PRIMARY + L.C_GAMMA] == pytest.approx(m[L.R_PRIMARY + L.C_GAMMA], abs=1e-12)


def test_tables_cache_round_trip(tables, tmp_path_factory):
    """A second call loads the stored zarr tables (same key) with identical arrays."""
    cfg, doc = load_profile_pair(PAIR)
    again = contact_tables(cfg, doc, cache_dir=tmp_path_factory.getbasetemp() / "hpcrail_cache" / "wheelrail")
    assert again.key == tables.key
    np.testing.assert_array_equal(again.lut["V"].values, tables.lut["V"].values)
    np.testing.assert_array_equal(again.kec["f"].values, tables.kec["f"].values)


def test_kec_bands_lie_on_the_grid(solver):
    """A jump the rigid sweep finds in its margin beyond the grid (here the flange jump at s^k ≈ -6.25 mm
    for a grid ending at -6 mm) gets no band; every band lies on the grid around its jump (a band from the
    grid's first node to a negative index once spanned the whole worn-pair table)."""
    ds = K.build_kec(solver, s_min=-6.0e-3, s_max=6.0e-3)
    lo, hi = ds["band_lo"].values, ds["band_hi"].values
    kj = ds["jump_s_k"].values
    assert np.any(kj < -6.0e-3)                       # found beyond the grid
    assert len(lo) == np.sum(np.abs(kj) < 6.0e-3) and len(lo) >= 2
    assert np.all(lo < hi) and np.all(lo >= -6.0e-3 - 1e-12) and np.all(hi <= 6.0e-3 + 1e-12)
    for k in kj[np.abs(kj) < 6.0e-3]:
        assert np.any((lo <= k) & (k <= hi))
