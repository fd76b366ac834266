"""The noninertial coupler of Massa et al. 2012 as an LTD connection type (hpcrail.models.couplers.ltd_noninertial):
tangent-track reduction, curve geometry against the analytic zero-force spacing, a 100-vehicle train on
a curve that runs and can be swept."""
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from hpcrail.config import ConfigError
from hpcrail.kinds import load_scenario
from hpcrail.models.couplers.kinematics import G_N, N_NS, coupler_parameter_array
from hpcrail.models.couplers.ltd_noninertial import CP_MAXIT, CP_TOL, N_NC, NC_X, NW_STATS, ltd_noninertial_force
from hpcrail.simulate import run_scenario

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "configs" / "trains" / "noninertial_curve_100.yaml"
KB, CB, KRR, LS, L0 = 3e7, 2.5e5, 5e8, 0.6, 0.289
KEQ = 1.0 / (2.0 / KB + 1.0 / KRR)


def cp_row(lr0):
    cp = coupler_parameter_array(kB=KB, cB=CB, l0=L0, kr=3e7, cr=1e5, alpha0=0.0, ls=LS, lg=0.3, m_slider=50,
                                 m_shank=140, I_shank=8, krr=KRR, crr=5e5, lr0=lr0)
    cp[CP_TOL] = 1e-12
    cp[CP_MAXIT] = 50
    return cp[None, :].copy()


def force(e, kappa, *, lr0=0.204, half=8.0, ratio=0.7, v_a=10.0, v_b=10.0):
    """Force of one connection between two identical vehicles of length 2·half."""
    L = half - LS - 0.5 * lr0
    conn = np.zeros((1, N_NC))
    conn[0, :4] = (L, L, ratio * half, ratio * half)
    D = 2 * half
    work = np.zeros((8, G_N))
    f = ltd_noninertial_force(0.0, 0, 0, e, D + e, v_a, v_b, kappa, cp_row(lr0), conn, work)
    return f, conn[0, NC_X:NC_X + 4].copy(), work[NW_STATS, :N_NS].copy()


@pytest.mark.parametrize("lr0", [0.204, 0.0])
def test_tangent_track_is_a_linear_spring_damper(lr0):
    """Newton path at a vanishing curvature = the closed form k_eq e + c_B k_eq/k_B ė used on tangents."""
    for e, dv in ((-0.02, 0.0), (0.01, 0.3), (0.004, -0.5)):
        f_newton, x, stats = force(e, 1e-12, lr0=lr0, v_a=10.0 + dv)
        assert stats[2] == 0 and stats[0] >= 1          # solved by Newton, no failure
        assert f_newton == pytest.approx(KEQ * e + CB * KEQ / KB * dv, rel=1e-7, abs=1e-3)
        f_closed, x_closed, stats = force(e, 0.0, lr0=lr0, v_a=10.0 + dv)
        assert stats[0] == 0                            # closed form, no Newton solve
        assert f_closed == pytest.approx(f_newton, rel=1e-7, abs=1e-3)
        np.testing.assert_allclose(x_closed, x, atol=1e-9)


@pytest.mark.parametrize("R", [300.0, 800.0])
def test_curve_geometry_zero_force_spacing(R):
    """Knuckle as a pin (l_r0 = 0), identical vehicles on a circle of radius R: the body axes are the
    tangents at the track points, the bodies sit inside by the versine y = R − √(R² − b²), and the
    coupler carries no force when the axes meet at L + l_s from each body centre:
    (R − y) tan(u/2R) = L + l_s  →  e0 = u − D.  Around it the stiffness is k_eq."""
    half, ratio = 8.0, 0.7
    b = ratio * half
    L = half - LS
    y = R - math.sqrt(R * R - b * b)
    u0 = 2 * R * math.atan((L + LS) / (R - y))
    e0 = u0 - 2 * half
    f0, x, _ = force(e0, 1.0 / R, lr0=0.0, half=half, ratio=ratio)
    assert abs(f0) < KEQ * 1e-8                        # < 0.15 N
    np.testing.assert_allclose(x, 0.0, atol=1e-9)       # sliders at rest, shanks along the bodies
    assert 1e-5 < abs(e0) < 2e-3                        # the curve shifts the force-free spacing by ~1 mm
    for de in (-0.01, 0.005):
        f, _, _ = force(e0 + de, 1.0 / R, lr0=0.0, half=half, ratio=ratio)
        assert f == pytest.approx(KEQ * de, rel=0.01)


def test_hundred_vehicle_train_on_a_curve_runs():
    """2 locomotives + 98 wagons with noninertial couplers through a 400 m curve: completes, every
    Newton solve converges, the in-train forces are those of the k_eq spring (±, draft and buff), and the
    head locomotives' couplers carry the largest draft force."""
    sc, _ = load_scenario(TRAIN, ["simulation.duration_s=60"])
    assert len(sc.vehicle_type_names()) == 100
    ds = run_scenario(sc)
    assert str(ds.status.values) == "completed", str(ds.message.values)
    assert int(ds.coupler_newton_failures) == 0 and int(ds.coupler_newton_solves) > 0
    # the train is in the curve (2.0-3.5 km) for part of the run
    assert float(ds.position.isel(vehicle=0).max()) > 2000.0
    F = ds.coupler_force.values
    E = ds.coupler_deflection.values
    assert np.all(np.isfinite(F))
    assert 1e5 < float(ds.max_draft_force) < 1e6
    assert int(ds.max_draft_force_coupler) <= 3
    # on tangent track the connection is the linear k_eq spring (+ damping): static part of F/e
    tangent = ds.position.values[:, 1:] < 1990.0
    mask = tangent & (np.abs(E) > 2e-3)
    ratio = F[mask] / E[mask]
    assert np.median(ratio) == pytest.approx(KEQ, rel=0.05)


def test_noninertial_connection_can_be_swept():
    """The study jobs/noninertial_coupler_curve.yaml varies dotted paths of the connection type: every
    value is a valid override, and a stiffer draft gear gives a stiffer train (higher force per
    deflection)."""
    job = yaml.safe_load((ROOT / "jobs" / "noninertial_coupler_curve.yaml").read_text())
    base = (ROOT / "jobs" / job["base"]).resolve()
    assert base == TRAIN.resolve()
    for path, spec in job["parameters"].items():
        for v in spec["values"]:
            load_scenario(base, [f"{path}={v}"])
    peaks = []
    for kb in (1.5e7, 6.0e7):
        sc, _ = load_scenario(base, ["simulation.duration_s=20",
                                     f"connection_types.coupler.draft_gear.stiffness_N_per_m={kb}"])
        ds = run_scenario(sc)
        assert str(ds.status.values) == "completed"
        peaks.append(float(ds.max_draft_force) / float(ds.max_draft_deflection))
    assert peaks[1] > 1.5 * peaks[0]


def test_bad_noninertial_connection_is_a_config_error():
    with pytest.raises(ConfigError) as exc:
        load_scenario(TRAIN, ["connection_types.coupler.bogie_spacing_ratio=0.95",
                              "connection_types.coupler.knuckle.free_length_m=-1"])
    text = str(exc.value)
    assert "connection_types.coupler.knuckle.free_length_m" in text and "greater than or equal to 0" in text
    with pytest.raises(ConfigError) as exc:
        load_scenario(TRAIN, ["connection_types.coupler.bogie_spacing_ratio=0.95"])
    assert "bogie_spacing_ratio" in str(exc.value) and "too short" in str(exc.value)


def test_ltd_newton_failure_is_a_model_failure():
    """A Newton budget that cannot converge in the curve ends the run as model_failure (coupler and
    time named), not with an exception."""
    sc, _ = load_scenario(TRAIN, ["simulation.duration_s=40", "connection_types.coupler.newton.max_iterations=1",
                                  "connection_types.coupler.newton.tolerance_m=1e-30"])
    ds = run_scenario(sc)
    assert str(ds.status.values) == "model_failure"
    assert "coupler" in str(ds.message.values) and int(ds.coupler_newton_failures) > 0
