"""Event location on the dense output of every method: a falling ball hitting the ground (terminal,
direction −1) and its apex (non-terminal), oscillator zero crossings, restarts at an event."""
import numpy as np
import pytest

from hpcrail.integrators import Events, Problem, Status, integrate, registry
from hpcrail.integrators import testproblems as tp

H0, V0, G = 10.0, 3.0, 9.81
T_GROUND = (V0 + np.sqrt(V0 ** 2 + 2 * G * H0)) / G
T_APEX = V0 / G
ALL = ["rk4", "abm4", "dopri5", "bdf", "ndf", "radau5", "trbdf2", "esdirk3", "implicit_euler", "trapezoidal",
       "linear_implicit_euler"]
# methods whose solution of y'' = −g (a quadratic) is exact, with an exact dense output
EXACT_ON_QUADRATICS = ["rk4", "abm4", "dopri5", "radau5", "trbdf2", "esdirk3", "trapezoidal"]


def kwargs(method, h=0.05):
    if registry.get(method).adaptive:
        return dict(rtol=1e-12, atol=1e-12)
    return dict(step=h, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", ALL)
def test_falling_ball_events(method):
    t = np.linspace(0.0, 3.0, 31)
    sol = integrate(tp.falling_ball(H0, V0, G), method, t, 3.0, **kwargs(method))
    assert sol.status is Status.EVENT_STOP
    # the apex (non-terminal) is recorded first, then the ground contact (terminal) stops the run
    assert list(sol.event_index) == [1, 0]
    assert sol.stats["events"] == 2
    t_apex, t_ground = sol.event_t
    assert sol.t_reached == t_ground
    np.testing.assert_allclose(sol.y_final, sol.event_y[1])
    if method in EXACT_ON_QUADRATICS:
        assert t_ground == pytest.approx(T_GROUND, rel=1e-10)
        assert t_apex == pytest.approx(T_APEX, rel=1e-10)
        assert abs(sol.y_final[0]) < 1e-9
    else:  # first-order methods: the event is located on their own (first-order) solution
        tol = 0.05 if method != "bdf" else 1e-6
        assert t_ground == pytest.approx(T_GROUND, rel=tol)
    # samples after the terminal event are not written
    assert np.isnan(sol.y[t > t_ground + 1e-12]).all()
    assert not np.isnan(sol.y[t <= t_ground]).any()


@pytest.mark.parametrize("method", ["dopri5", "bdf", "radau5", "trbdf2"])
def test_root_located_to_round_off_on_the_dense_output(method):
    """Oscillator zero crossings of y1 (direction 0, non-terminal) at (k + ½)π: located to 1e-10
    relative at a tight tolerance, none missed, the integration continues past them."""
    prob = tp.oscillator()
    ev = Events(tp.height_event, direction=[0, 0], terminal=[False, False])
    prob = Problem(prob.rhs, prob.observe, prob.params, prob.y0, jac=prob.jac, jac_pattern=prob.jac_pattern,
                   events=ev, acc0=prob.acc0)
    T = 20.0
    sol = integrate(prob, method, np.array([0.0, T]), T, rtol=1e-13, atol=1e-14)
    assert sol.status is Status.COMPLETED
    crossings = sol.event_t[sol.event_index == 0]
    exact = (np.arange(len(crossings)) + 0.5) * np.pi
    assert len(crossings) == int(T / np.pi + 0.5)
    np.testing.assert_allclose(crossings, exact, rtol=1e-10 if method != "trbdf2" else 1e-6)
    assert np.all(np.diff(sol.event_t) >= 0)


def test_restart_at_an_event_does_not_stop_at_once():
    """Integrate to the ground contact, then restart from there (the ball bounces with its speed
    reversed): the event function is zero at the new t0 and must not trigger again."""
    sol = integrate(tp.falling_ball(H0, V0, G), "radau5", np.array([0.0]), 3.0, rtol=1e-10, atol=1e-12)
    p = tp.falling_ball(H0, V0, G)
    y = sol.y_final.copy()
    y[1] = -y[1]
    p2 = Problem(p.rhs, p.observe, p.params, y, t0=sol.t_reached, jac=p.jac, jac_pattern=p.jac_pattern,
                 events=p.events, acc0=p.acc0)
    sol2 = integrate(p2, "radau5", np.array([sol.t_reached]), sol.t_reached + 5.0, rtol=1e-10, atol=1e-12)
    assert sol2.status is Status.EVENT_STOP
    t_flight = 2 * (-sol.y_final[1]) / G       # up and down again with the same speed
    assert sol2.event_t[-1] - sol.t_reached == pytest.approx(t_flight, rel=1e-8)


def test_event_records_beyond_capacity_are_counted():
    prob = tp.oscillator()
    ev = Events(tp.height_event, direction=[0, 0], terminal=[False, False], max_records=3)
    prob = Problem(prob.rhs, prob.observe, prob.params, prob.y0, events=ev, acc0=prob.acc0)
    sol = integrate(prob, "dopri5", np.array([0.0, 20.0]), 20.0, rtol=1e-8, atol=1e-10)
    assert sol.stats["events"] == 12 and len(sol.event_t) == 3      # 6 zeros of cos t, 6 of sin t in (0, 20]
