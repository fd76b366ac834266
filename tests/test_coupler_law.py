"""The connection law (Bosso et al. 2024 eq 7): every branch, continuity, slack, end stop, hysteresis loop."""
import numpy as np
import pytest
from numba import njit, uint64

from hpcrail.models.couplers.hysteretic import connection_force
from hpcrail.kinds.ltd.build import build_ltd
from helpers.ltd import make_scenario, scenario_tree

DRAFT = {"deflection_mm": [0, 10, 20, 40, 60, 80, 100, 120, 140, 160, 170],
         "loading_kN": [0, 60, 130, 300, 480, 680, 860, 1020, 1170, 1340, 1450],
         "unloading_ratio": 0.3}
BUFF = {"deflection_mm": [0, 25, 50, 100], "loading_kN": [0, 100, 300, 900],
        "unloading_kN": [0, 40, 100, 400]}
SLACK = 10.0
VEPS = 0.02
KEND = 400.0


@pytest.fixture(scope="module")
def law():
    tree = scenario_tree(2, connection={"kind": "hysteretic", "slack_mm": SLACK, "draft": DRAFT, "buff": BUFF,
                                        "end_stop_stiffness_MN_per_m": KEND, "transition_speed_mps": VEPS})
    p = build_ltd(make_scenario(tree)).params

    @njit
    def f(e, de):
        return connection_force(e, de, uint64(0), p.conn_rowpar, p.conn_typepar, p.conn_fm, p.conn_fa)

    def force(e, de):
        return f(float(e), float(de))
    return force


def fl(x_mm, curve):
    fu = curve.get("unloading_kN") or [curve["unloading_ratio"] * v for v in curve["loading_kN"]]
    return (np.interp(x_mm, curve["deflection_mm"], curve["loading_kN"]) * 1e3,
            np.interp(x_mm, curve["deflection_mm"], fu) * 1e3)


@pytest.mark.parametrize("x_mm", [3.0, 10.0, 37.5, 99.0, 165.0])
def test_draft_loading_unloading_and_blend(law, x_mm):
    e = SLACK / 2e3 + x_mm * 1e-3
    FL, FU = fl(x_mm, DRAFT)
    # |dv| >= v_eps and x*dv >= 0: loading curve; x*dv < 0: unloading curve
    assert law(e, 2 * VEPS) == pytest.approx(FL, rel=1e-12)
    assert law(e, VEPS) == pytest.approx(FL, rel=1e-12)
    assert law(e, -3 * VEPS) == pytest.approx(FU, rel=1e-12)
    # |dv| < v_eps: F_M + |F_A| dv / v_eps
    for frac in (-0.7, 0.0, 0.4):
        expect = 0.5 * (FL + FU) + 0.5 * abs(FL - FU) * frac
        assert law(e, frac * VEPS) == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize("x_mm", [5.0, 25.0, 80.0])
def test_buff_side_uses_buff_curves(law, x_mm):
    e = -(SLACK / 2e3 + x_mm * 1e-3)
    FL, FU = fl(x_mm, BUFF)
    assert law(e, -2 * VEPS) == pytest.approx(-FL, rel=1e-12)   # compressing further: loading
    assert law(e, +2 * VEPS) == pytest.approx(-FU, rel=1e-12)   # releasing: unloading
    assert law(e, 0.0) == pytest.approx(-0.5 * (FL + FU), rel=1e-12)


def test_continuity_at_transition_speed(law):
    e = SLACK / 2e3 + 0.05
    for side in (1, -1):
        ee = side * e
        for dv in (VEPS, -VEPS):
            assert law(ee, dv * (1 - 1e-9)) == pytest.approx(law(ee, dv * (1 + 1e-9)), rel=1e-7)


def test_zero_force_inside_slack_and_continuous_at_its_edges(law):
    for e in np.linspace(-SLACK / 2e3, SLACK / 2e3, 11):
        for dv in (-1.0, 0.0, 1.0):
            assert law(e, dv) == 0.0
    g = SLACK / 2e3
    assert abs(law(g + 1e-9, 1.0)) < 10.0      # 60 kN over 10 mm → 6 mN at 1 nm
    assert abs(law(-g - 1e-9, -1.0)) < 10.0


def test_end_stop_beyond_table(law):
    x_end = 170.0
    e_end = SLACK / 2e3 + x_end * 1e-3
    FL, FU = fl(x_end, DRAFT)
    for extra in (0.001, 0.01):
        assert law(e_end + extra, 1.0) == pytest.approx(FL + KEND * 1e6 * extra, rel=1e-9)
        assert law(e_end + extra, -1.0) == pytest.approx(FU + KEND * 1e6 * extra, rel=1e-9)


def test_loading_unloading_cycle_dissipates_the_loop_area(law):
    """A slow cycle 0 → 100 mm → 0 beyond the slack dissipates ∫(F_L − F_U) dx (transition band negligible)."""
    x = np.linspace(0.0, 0.1, 20001)
    g = SLACK / 2e3
    up = np.array([law(g + xi, 0.5) for xi in x])
    down = np.array([law(g + xi, -0.5) for xi in x])
    work = np.trapezoid(up, x) - np.trapezoid(down, x)
    FLs, FUs = fl(x * 1e3, DRAFT)
    assert work > 0
    assert work == pytest.approx(np.trapezoid(FLs - FUs, x), rel=1e-6)


def test_rigid_bar_is_linear_spring_damper():
    tree = scenario_tree(2, connection={"kind": "rigid_bar", "stiffness_MN_per_m": 80.0, "damping_kNs_per_m": 100.0})
    p = build_ltd(make_scenario(tree)).params

    @njit
    def f(e, de):
        return connection_force(e, de, uint64(0), p.conn_rowpar, p.conn_typepar, p.conn_fm, p.conn_fa)

    for e, de in [(0.002, 0.1), (-0.004, 0.3), (0.0005, -0.2), (0.05, 0.0)]:
        assert f(e, de) == pytest.approx(80e6 * e + 100e3 * de, rel=1e-12)
