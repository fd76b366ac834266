"""Physics of the LTD model against analytic solutions and hand calculations (Bosso et al. 2024 eqs 1-7)."""
import numpy as np
import pytest

from hpcrail.kinds.ltd.build import build_ltd
from hpcrail.models.ltd.build import G
from hpcrail.models.ltd.kernel import N_REC, REC_GRADE, REC_RESISTANCE, ltd_outputs
from hpcrail.simulate import run_scenario
from helpers.ltd import constant_loco, flat_route, frictionless_wagon, make_scenario, scenario_tree


def test_steady_pull_gives_forces_F_times_n_minus_k_over_n():
    """Identical vehicles, constant pull F on vehicle 1, no resistance, damped linear connections without
    slack: once the transient has died the train accelerates as one body and connection k carries
    F (N − k)/N."""
    n = 8
    F = 200e3
    tree = scenario_tree(n - 1, loco=constant_loco(mass_t=80, force_kN=F / 1e3), wagon=frictionless_wagon(80),
                         connection={"kind": "linear", "stiffness_MN_per_m": 20.0, "damping_kNs_per_m": 400.0},
                         duration=40.0, step=0.002, interval=0.5)
    ds = run_scenario(make_scenario(tree))
    assert str(ds.status.values) == "completed"
    f_end = ds.coupler_force.isel(time=-1).values
    k = np.arange(1, n)
    np.testing.assert_allclose(f_end, F * (n - k) / n, rtol=5e-3)
    a = ds.acceleration.isel(time=-1).values
    np.testing.assert_allclose(a, F / (n * 80e3), rtol=5e-3)


def test_two_mass_oscillator_frequency():
    """Two masses on an undamped linear spring under a step pull oscillate at √(k(1/m1+1/m2))/2π."""
    m1, m2, k = 60e3, 140e3, 5e6
    tree = scenario_tree(1, loco=constant_loco(mass_t=m1 / 1e3, force_kN=50.0, rate=1e3, tau=0.01),
                         wagon=frictionless_wagon(m2 / 1e3),
                         connection={"kind": "linear", "stiffness_MN_per_m": k / 1e6}, duration=20.0,
                         step=5e-4, interval=0.002)
    ds = run_scenario(make_scenario(tree))
    f = ds.coupler_force.sel(coupler=1).values
    t = ds.time.values
    x = f - f.mean()
    up = np.where((x[:-1] < 0) & (x[1:] >= 0))[0]
    # linear interpolation of the upward zero crossings
    tc = t[up] - x[up] * (t[up + 1] - t[up]) / (x[up + 1] - x[up])
    f_sim = (len(tc) - 1) / (tc[-1] - tc[0])
    f_exact = np.sqrt(k * (1 / m1 + 1 / m2)) / (2 * np.pi)
    assert f_sim == pytest.approx(f_exact, rel=1e-4)


def _single_state(sc, speed):
    model = build_ltd(sc)
    p = model.params
    y = model.y0.copy()
    y[1:p.block * p.n_veh:p.block] = speed
    rec = np.zeros((1, N_REC, p.n_veh))
    acc = np.zeros((1, p.n_veh))
    ltd_outputs(np.zeros(1), y[None, :].copy(), p, rec, acc, np.zeros(1), np.zeros(1))
    return rec[0], p


@pytest.mark.parametrize("speed_kmh, radius, grade", [(60.0, 0.0, 0.0), (30.0, 800.0, 0.0), (80.0, 0.0, 5.0),
                                                      (45.0, -600.0, -3.0)])
def test_davis_resistance_against_hand_calculation(speed_kmh, radius, grade):
    """Bosso et al. 2024 eq (6): F = m/1000 [Q(2.943 + 89.2/P + 0.0306 V + 0.122 V²/(P n)) + 6116/|R| + g i]."""
    wagon = {"kind": "wagon", "mass_t": 106.0, "length_m": 16.0, "axles": 4, "davis": {"adjustment": 0.9}}
    tree = scenario_tree(1, wagon=wagon, route=flat_route(grade=grade, radius=radius))
    tree["route"]["start_m"] = 20_000.0
    rec, p = _single_state(make_scenario(tree), speed_kmh / 3.6)
    m, P, nax, V, Q = 106.0, 26.5, 4, speed_kmh, 0.9
    running = m * (Q * (2.943 + 89.2 / P + 0.0306 * V + 0.122 * V ** 2 / (P * nax)) + (6116 / abs(radius) if radius else 0))
    assert -rec[REC_RESISTANCE, 1] == pytest.approx(running, rel=1e-12)
    assert -rec[REC_GRADE, 1] == pytest.approx(m * G * grade, rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("grade, rolls_back", [(0.5, False), (1.0, True)])
def test_train_on_a_grade_below_breakaway_does_not_creep(grade, rolls_back):
    """Standing train, no traction, uphill grade: below breakaway (grade force < static resistance
    m/1000 (2.943 + 89.2/P) per vehicle, here 0.64 ‰) it stays exactly at rest; above it, it rolls back."""
    wagon = {"kind": "wagon", "mass_t": 106.0, "length_m": 16.0, "axles": 4}
    loco = constant_loco(mass_t=106.0, force_kN=0.0)
    loco["davis"] = {}
    tree = scenario_tree(5, loco=loco, wagon=wagon, route=flat_route(grade=grade),
                         connection={"kind": "hysteretic", "slack_mm": 10,
                                     "draft": {"deflection_mm": [0, 100], "loading_kN": [0, 1000],
                                               "unloading_ratio": 0.3}},
                         commands=[{"time_s": 0.0, "notch": 0}], duration=60.0, step=0.002, interval=1.0)
    ds = run_scenario(make_scenario(tree))
    v = ds.speed.values
    if rolls_back:
        assert v[-1].max() < -0.05
    else:
        assert np.abs(v).max() < 1e-12
        assert np.abs(ds.position.values[-1] - ds.position.values[0]).max() < 1e-9


def test_energy_balance_over_a_run(configs_dir):
    """Traction − resistance − brake − coupler work = ΔKE + ΔPE within 0.5 % (demo train: traction,
    dynamic brake, air brake to a stop, grades, a curve, hysteretic couplers and drawbars)."""
    from hpcrail.kinds import load_scenario

    sc, _ = load_scenario(configs_dir / "trains/demo.yaml")
    ds = run_scenario(sc)
    w = {k: float(ds[k]) for k in ("traction_work", "resistance_work", "brake_work", "coupler_work",
                                   "kinetic_energy_change", "potential_energy_change")}
    assert w["traction_work"] > 1e8 and w["brake_work"] > 1e7 and w["coupler_work"] > 0
    lhs = w["traction_work"] - w["resistance_work"] - w["brake_work"] - w["coupler_work"]
    rhs = w["kinetic_energy_change"] + w["potential_energy_change"]
    assert abs(lhs - rhs) <= 5e-3 * w["traction_work"]
    # the hysteretic couplers dissipate energy over the run
    assert w["coupler_work"] > 0
