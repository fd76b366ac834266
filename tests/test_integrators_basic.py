"""RK4 and DOPRI5 against exact solutions: convergence order, tolerance, dense output, failure
statuses, and chunking/sampling independence (the integrator contract)."""
import numpy as np
import pytest

from hpcrail.integrators import Problem, Status, integrate
from helpers.basic_problems import Blow, Osc, blow_rhs, no_observe, osc_exact, osc_observe, osc_rhs

W, ZETA = 2.0, 0.05
P = Osc(W, ZETA)
T = 10.0
TOUT = np.linspace(0.0, T, 41)


def prob():
    return Problem(osc_rhs, osc_observe, P, np.array([1.0, 0.0]), acc0=np.array([-np.inf, 0.0]))


def err(sol):
    return np.max(np.abs(sol.y[:, 0] - osc_exact(TOUT, W, ZETA)))


def observed_order(hs, errs):
    return np.polyfit(np.log(hs), np.log(errs), 1)[0]


def test_rk4_order_4():
    hs = np.array([0.1, 0.05, 0.025, 0.0125])
    errs = [err(integrate(prob(), "rk4", TOUT, T, step=h)) for h in hs]
    assert observed_order(hs, errs) == pytest.approx(4.0, abs=0.15)


def test_dopri5_order_5_at_fixed_steps():
    # huge tolerances + hmax = h: every step accepted at exactly h
    hs = np.array([0.2, 0.1, 0.05, 0.025])
    errs = [err(integrate(prob(), "dopri5", TOUT, T, step=h, hmax=h, rtol=0.5, atol=1e6)) for h in hs]
    assert observed_order(hs, errs) == pytest.approx(5.0, abs=0.25)


@pytest.mark.parametrize("tol", [1e-5, 1e-8, 1e-11])
def test_dopri5_meets_its_tolerance(tol):
    sol = integrate(prob(), "ode45", TOUT, T, rtol=tol, atol=tol)
    assert sol.status is Status.COMPLETED
    # global error within a modest multiple of the local tolerance over ~3 periods
    assert err(sol) < 30 * tol
    assert sol.stats["rejected"] < sol.stats["steps"]


def test_dense_output_matches_steps():
    """Samples between steps (dense output) are as accurate as the steps themselves."""
    fine = np.linspace(0, T, 4001)
    for method, kw in [("rk4", dict(step=0.01)), ("dopri5", dict(rtol=1e-10, atol=1e-12))]:
        sol = integrate(prob(), method, fine, T, **kw)
        e = np.max(np.abs(sol.y[:, 0] - osc_exact(fine, W, ZETA)))
        assert e < (1e-7 if method == "rk4" else 1e-8), (method, e)


def test_sampling_and_chunking_do_not_change_the_steps(monkeypatch):
    """Pauses for the progress callback (chunks) return between steps: the same steps and bits with 1 chunk,
    with 50 fixed ones and with the wall-time spaced ones of ``next_pause`` (a short run: a few chunks)."""
    from hpcrail.integrators import contract

    a = integrate(prob(), "dopri5", TOUT, T, rtol=1e-7, atol=1e-9, n_chunks=1)
    calls = {"fixed": [], "timed": []}
    monkeypatch.setattr(contract, "PAUSE_TARGET_S", 0.0)   # pauses every 1/n_chunks of the run
    b = integrate(prob(), "dopri5", np.linspace(0, T, 7), T, rtol=1e-7, atol=1e-9, n_chunks=50,
                  progress=lambda t, te, st: calls["fixed"].append(t))
    monkeypatch.undo()
    c = integrate(prob(), "dopri5", TOUT, T, rtol=1e-7, atol=1e-9, n_chunks=50,
                  progress=lambda t, te, st: calls["timed"].append(t))
    assert 45 <= len(calls["fixed"]) <= 50 and calls["fixed"] == sorted(calls["fixed"])
    assert 1 <= len(calls["timed"]) < 10 and calls["timed"][-1] == T   # a run of microseconds: few pauses
    for other in (b, c):
        assert a.stats == other.stats
        np.testing.assert_array_equal(a.y_final, other.y_final)
        np.testing.assert_array_equal(a.acc, other.acc)
    assert a.acc[1] == a.stats["steps"] + 1       # observe: every accepted step and t0


def test_next_pause_spaces_chunks_by_wall_time_within_n_chunks():
    from hpcrail.integrators.contract import next_pause

    assert next_pause(0.0, 100.0, 0.0, 50, 0.0) == 2.0                # first pause: 1/50 of the run
    assert next_pause(0.0, 100.0, 2.0, 50, 1.0, target_s=0.25) == 4.0  # slow run (2 s/s): never < 1/50
    assert next_pause(0.0, 100.0, 2.0, 50, 0.01, target_s=0.25) == 52.0  # fast: 0.25 s of wall at 200 s/s
    assert next_pause(0.0, 100.0, 90.0, 50, 0.01, target_s=0.25) == 100.0  # never past the end


def test_diverging_problem_reports_failure_not_exception():
    p = Problem(blow_rhs, no_observe, Blow(k=1.0), np.array([1.0]))
    s = integrate(p, "dopri5", np.array([0.0, 2.0]), 2.0, rtol=1e-6, atol=1e-9)
    assert s.status in (Status.STEP_UNDERFLOW, Status.NON_FINITE, Status.MAX_STEPS) and not s.success
    assert 0.99 < s.t_reached < 1.01   # the blow-up is at t = 1
    r = integrate(p, "rk4", np.array([0.0, 2.0]), 2.0, step=0.01)
    assert r.status is Status.NON_FINITE and r.t_reached < 1.1
    assert np.isnan(r.y[-1]).all()


def test_max_steps_status():
    s = integrate(prob(), "rk4", TOUT, T, step=0.001, max_steps=500)
    assert s.status is Status.MAX_STEPS and s.stats["steps"] == 500
    assert s.t_reached == pytest.approx(0.5)
