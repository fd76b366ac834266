"""Event-driven driver (hpcrail.integrators.hybrid) on a problem with a known solution.

A unit mass on a unit spring with Coulomb friction F = 1 (x'' = −x − F sign(x')), from x = 10 at
rest: every half period π the amplitude drops by 2F (10 → −8 → 6 → −4 → 2 → 0) and at t = 5π the
mass stops for good at x = 0 (|x| ≤ F: static friction holds).  The modes (slide −, slide +, stick)
switch at velocity zeros, which the driver must locate on the exact integrator solution.
"""
import numpy as np
import pytest

from hpcrail.integrators.contract import EVENT_FAILURE, Status
from hpcrail.integrators.examples import (
    chatter_guard, chatter_jump, coulomb_oscillator, osc_guard, osc_jump, osc_observe, osc_rhs,
)
from hpcrail.integrators.hybrid import integrate_hybrid


@pytest.mark.parametrize("method,kw", [("dopri5", dict(rtol=1e-10, atol=1e-12)), ("rk4", dict(step=1e-3))])
def test_coulomb_oscillator(method, kw):
    p = coulomb_oscillator(1.0)
    t_out = np.linspace(0.0, 20.0, 401)
    sol = integrate_hybrid(osc_rhs, osc_observe, osc_guard, osc_jump, p, np.array([10.0, 0.0]), 1, method,
                           t_out, 20.0, event_tolerance=1e-12, **kw)
    assert sol.status == Status.COMPLETED
    times = p.log[:p.nlog[0]]
    # velocity zeros at π, 2π, 3π, 4π, 5π; the last one sticks
    assert times.size == 5
    assert np.allclose(times, np.pi * np.arange(1, 6), rtol=0, atol=1e-8)
    assert p.mode[0] == 0
    assert abs(sol.y_final[0]) < 1e-8 and sol.y_final[1] == 0.0
    # the sampled solution: x(t) piecewise cosines about ±F
    x = sol.y[:, 0]
    amp = np.array([9.0, 7.0, 5.0, 3.0, 1.0])
    centre = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    ph = np.minimum((t_out // np.pi).astype(int), 5)
    ref = np.where(ph < 5, centre[np.minimum(ph, 4)] + amp[np.minimum(ph, 4)] * np.cos(t_out - ph * np.pi)
                   * (-1.0) ** ph, 0.0)
    assert np.allclose(x, ref, atol=2e-7)
    assert sol.stats["events"] == 5


def test_chattering_is_a_status():
    """A guard that fires again immediately after every mode change stops with EVENT_FAILURE."""
    p = coulomb_oscillator(1.0, mode=1)
    sol = integrate_hybrid(osc_rhs, osc_observe, chatter_guard, chatter_jump, p, np.array([0.0, 0.0]), 1,
                           "dopri5", np.linspace(0, 2, 3), 2.0, max_events=50)
    assert sol.status.value == EVENT_FAILURE
    assert not sol.success
    assert "chattering" in sol.message
    assert abs(sol.t_reached - 0.5) < 1e-6
