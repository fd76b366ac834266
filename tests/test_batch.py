"""Batched integration: one compiled call over many problems gives exactly what one-by-one
integration gives; failures stay per problem; the coupler stiffness scale used by sweeps."""
from __future__ import annotations

import numpy as np
import pytest
from helpers.sweep import DEMO

from hpcrail.kinds import load_scenario
from hpcrail.integrators import Status, integrate
from hpcrail.integrators.batch import BatchItem, integrate_batch
from hpcrail.models.couplers.hysteretic import connection_force
from hpcrail.kinds.ltd.build import build_ltd
from hpcrail.kinds.ltd.problem import ltd_problem
from hpcrail.results.sampling import sample_times
from hpcrail.simulate import run_batch, run_scenario


def _item(overrides, duration=4.0):
    sc, _ = load_scenario(DEMO, [f"simulation.duration_s={duration}"] + overrides)
    _model, prob = ltd_problem(sc)
    t_out = sample_times(0.0, duration, 0.5)
    return sc, BatchItem(prob, sc.integrator.method, t_out, duration, **sc.integrator.kwargs())


@pytest.fixture(scope="module")
def mixed_items():
    """Different methods, coupler slacks and train lengths (state sizes) in one batch."""
    cases = [["integrator.method=rk4"], ["integrator.method=dopri5", "integrator.rtol=1e-7"],
             ["connection_types.autocoupler.slack_mm=25"], ["consist.1.count=4"],
             ["integrator.method=dopri5", "consist.1.count=2", "connection_types.autocoupler.slack_mm=0"]]
    return [_item(c)[1] for c in cases]


@pytest.mark.parametrize("mode, threads", [("prange", 1), ("prange", 2), ("threads", 2)])
def test_batch_equals_one_by_one_integration_bit_for_bit(mixed_items, mode, threads):
    sols = integrate_batch(mixed_items, mode=mode, threads=threads)
    for it, sol in zip(mixed_items, sols):
        ref = integrate(it.problem, it.method, it.t_out, it.t_final, step=it.step, rtol=it.rtol, atol=it.atol,
                        hmin=it.hmin, hmax=it.hmax, max_steps=it.max_steps)
        assert sol.status == ref.status == Status.COMPLETED
        assert sol.stats == ref.stats
        np.testing.assert_array_equal(sol.y, ref.y)
        np.testing.assert_array_equal(sol.acc, ref.acc)
        np.testing.assert_array_equal(sol.y_final, ref.y_final)
        assert sol.t_reached == ref.t_reached == it.t_final
        assert sol.wall_time > 0


def test_a_failing_problem_does_not_disturb_the_others(mixed_items):
    # an adaptive method: a fixed-step run needing more steps than max_steps is refused by validation
    _sc, bad = _item(["integrator.method=dopri5", "integrator.max_steps=50"])
    items = [mixed_items[0], bad, mixed_items[1]]
    sols = integrate_batch(items, mode="prange", threads=2)
    assert sols[1].status == Status.MAX_STEPS and "maximum number of steps" in sols[1].message
    assert sols[1].stats["steps"] + sols[1].stats["rejected"] == 50 and sols[1].t_reached < bad.t_final
    ref = integrate_batch([mixed_items[0], mixed_items[1]], mode="prange", threads=1)
    for a, b in zip([sols[0], sols[2]], ref):
        np.testing.assert_array_equal(a.y, b.y)


def test_run_batch_gives_the_run_datasets_and_records_build_errors():
    scs = [load_scenario(DEMO, ["simulation.duration_s=3", f"connection_types.autocoupler.slack_mm={s}"])[0]
           for s in (0, 20)]
    out = run_batch(scs + ["not a scenario"], mode="prange", threads=2)
    assert isinstance(out[2], Exception)
    for sc, ds in zip(scs, out[:2]):
        ref = run_scenario(sc)
        for name in ("max_draft_force", "max_buff_force", "mean_speed", "nsteps", "energy_balance_residual"):
            assert ds[name].item() == ref[name].item()
        np.testing.assert_array_equal(ds.coupler_force.values, ref.coupler_force.values)
        assert ds.attrs["status"] == "completed" and "git_commit" not in ds.attrs


def test_stiffness_scale_scales_both_gear_curves():
    """stiffness_scale = 2 is the same draft gear as loading/unloading tables with doubled forces:
    identical force tables, identical connection forces in and out of the slack, end stop unscaled."""
    table = "[0, 60, 130, 300, 480, 680, 860, 1020, 1170, 1340, 1450]"
    doubled = "[0, 120, 260, 600, 960, 1360, 1720, 2040, 2340, 2680, 2900]"
    a, _ = load_scenario(DEMO, ["connection_types.autocoupler.stiffness_scale=2"])
    b, _ = load_scenario(DEMO, [f"connection_types.autocoupler.draft.loading_kN={doubled}"])
    c, _ = load_scenario(DEMO, [f"connection_types.autocoupler.draft.loading_kN={table}"])
    pa, pb, pc = build_ltd(a).params, build_ltd(b).params, build_ltd(c).params
    np.testing.assert_array_equal(pa.conn_fm, pb.conn_fm)
    np.testing.assert_array_equal(pa.conn_fa, pb.conn_fa)
    np.testing.assert_array_equal(pa.conn_rowpar, pc.conn_rowpar)       # slack, grid, end stop unscaled
    k = int(np.flatnonzero(np.array(build_ltd(a).connection_types) == "autocoupler")[0])
    ct = pa.conn_type[k]

    def force(p, e, de):
        return connection_force(e, de, ct, p.conn_rowpar, p.conn_typepar, p.conn_fm, p.conn_fa)

    for e in (-0.09, -0.004, 0.0, 0.003, 0.05, 0.12):
        for de in (-0.1, 0.0, 0.004, 0.2):
            fc = force(pc, e, de)
            if abs(e) < 0.17 + 0.005:      # on the gear curves: twice the force
                assert force(pa, e, de) == pytest.approx(2 * fc, rel=1e-12, abs=1e-9)
    # beyond the table (solid gear) the end stop adds the same, unscaled, stiffness to both
    e1, e2 = 0.19, 0.20
    assert force(pa, e2, 0.0) - force(pa, e1, 0.0) == pytest.approx(force(pc, e2, 0.0) - force(pc, e1, 0.0), rel=1e-9)


def test_run_batch_runs_friction_consists_through_their_event_driven_runner():
    """A dry-friction consist (Oprea 2018) in a batch is not sent to the smooth batch kernel: it gets
    exactly the dataset of ``hpcrail run`` (friction scalars included), the others stay batched."""
    from pathlib import Path

    fric = Path(__file__).resolve().parents[1] / "configs" / "friction" / "startup_6.yaml"
    sf, _ = load_scenario(fric, ["simulation.duration_s=2"])
    sd, _ = load_scenario(DEMO, ["simulation.duration_s=3"])
    out = run_batch([sf, sd], mode="prange", threads=1)
    ref = run_scenario(sf)
    assert str(out[0]["status"].values) == "completed"
    for name in ("friction_work", "n_events", "max_draft_force"):
        assert out[0][name].item() == ref[name].item()
    np.testing.assert_array_equal(out[0]["final_deflection"].values, ref["final_deflection"].values)
    assert "friction_work" not in out[1] and out[1]["nsteps"].item() == run_scenario(sd)["nsteps"].item()
