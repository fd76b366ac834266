"""A study grown and drilled into (issue 30): adding levels, samples or parameters keeps the finished
scenarios and runs only the new ones; one member's full scenario and its re-run with every output; export of
run and study stores to CSV, netCDF and MATLAB with their units."""
from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from helpers.sweep import DEMO, assert_same_results, cli_app, load_results, write_spec
from typer.testing import CliRunner

import hpcrail
from hpcrail.config import config_hash
from hpcrail.sweep.runner import SweepMismatchError, run_sweep

SLACK = "connection_types.autocoupler.slack_mm"
MASS = "vehicle_types.wagon.mass_t"


def run(spec, store, **kw):
    said = []
    res = run_sweep(spec, store, inline=True, progress=False, say=said.append, **kw)
    return res, said


@pytest.fixture(scope="module")
def grown(tmp_path_factory):
    """A 2 x 2 grid grown by a level (3 x 2), then by a parameter whose first value is the base's."""
    d = tmp_path_factory.mktemp("grow")
    spec = write_spec(d / "g.yaml", {SLACK: {"values": [0, 10]}, MASS: {"values": [80, 120]}}, duration=1.0,
                      extra={"outputs": {"envelopes": True, "series": {"interval_s": 0.5, "variables": ["speed"]}}})
    store = d / "g.zarr"
    first, _ = run(spec, store, batch_size=3)
    before = xr.open_zarr(store).load()
    write_spec(spec, {SLACK: {"values": [0, 10, 20]}, MASS: {"values": [80, 120]}}, duration=1.0,
               extra={"outputs": {"envelopes": True, "series": {"interval_s": 0.5, "variables": ["speed"]}}})
    second, said = run(spec, store)
    return d, spec, store, first, before, second, said


def test_adding_a_level_keeps_the_finished_scenarios_and_runs_only_the_new(grown, tmp_path):
    d, spec, store, first, before, second, said = grown
    assert first.ran == 4 and second.ran == 2 and second.skipped == 4
    assert any("growing the study" in m and "4 -> 6 scenarios" in m for m in said), said
    after = xr.open_zarr(store).load()
    assert after.slack_mm.values.tolist() == [0, 0, 10, 10, 20, 20]
    # the four finished scenarios are the very same results (their wall times too: not recomputed)
    for i in range(4):
        j = int(np.flatnonzero(after.scenario_id.values == before.scenario_id.values[i])[0])
        assert after.wall_time.values[j] == before.wall_time.values[i]
        np.testing.assert_array_equal(after.speed.values[j], before.speed.values[i])
    # and the grown store equals a study computed from scratch
    ref = tmp_path / "ref.zarr"
    run(spec, ref)
    assert_same_results(ref, store)
    assert '"kept": 4' in after.attrs["growth_history"]
    # the parameters' MultiIndex selects the nearest level (pandas' MultiIndex alone refuses method=)
    ds = hpcrail.open_sweep(store)
    near = ds.sel(slack_mm=11, mass_t=100.5, method="nearest")
    assert float(near.max_draft_force) == float(ds.sel(slack_mm=10, mass_t=120).max_draft_force)
    with pytest.raises(KeyError, match="no level within 0.5"):
        ds.sel(slack_mm=4, method="nearest", tolerance=0.5)


def test_growth_by_a_parameter_and_refusals(grown, tmp_path):
    d, spec, store, *_ = grown
    extra = {"outputs": {"envelopes": True, "series": {"interval_s": 0.5, "variables": ["speed"]}}}
    # a new parameter whose first value is the base's: the six finished scenarios keep their ids
    write_spec(spec, {SLACK: {"values": [0, 10, 20]}, MASS: {"values": [80, 120]},
                      "integrator.method": {"values": ["rk4", "dopri5"]}}, duration=1.0, extra=extra)
    res, said = run(spec, store)
    assert res.ran == 6 and res.skipped == 6 and res.counts["completed"] == 12
    # a finished scenario the spec no longer has: refused, the store untouched
    write_spec(spec, {SLACK: {"values": [0, 20]}, MASS: {"values": [80, 120]},
                      "integrator.method": {"values": ["rk4", "dopri5"]}}, duration=1.0, extra=extra)
    with pytest.raises(SweepMismatchError, match="scenarios in the store"):
        run(spec, store)
    assert xr.open_zarr(store).sizes["scenario"] == 12
    # other outputs: refused
    write_spec(spec, {SLACK: {"values": [0, 10, 20, 30]}, MASS: {"values": [80, 120]},
                      "integrator.method": {"values": ["rk4", "dopri5"]}}, duration=1.0)
    with pytest.raises(SweepMismatchError, match="outputs"):
        run(spec, store)


def test_adding_samples_to_a_sobol_design_keeps_the_first_ones(tmp_path):
    params = {SLACK: {"uniform": [0.0, 25.0]}, MASS: {"uniform": [80.0, 120.0]}}
    spec = write_spec(tmp_path / "s.yaml", params, duration=0.5, design="sobol", extra={"samples": 4, "seed": 3})
    store = tmp_path / "s.zarr"
    run(spec, store)
    write_spec(spec, params, duration=0.5, design="sobol", extra={"samples": 8, "seed": 3})
    res, _ = run(spec, store)
    assert res.ran == 4 and res.skipped == 4 and res.counts["completed"] == 8


def test_a_member_rebuilt_printed_rerun_and_exported(grown, tmp_path):
    """`hpcrail scenario` prints the member's full YAML (it loads back to the same id), `hpcrail rerun` runs it
    with every output (the study's values exactly, full series), and exports keep values and units."""
    d, spec, store, *_ = grown
    ds = xr.open_zarr(store).load()
    i = 5
    sid = str(ds.scenario_id.values[i])
    runner = CliRunner()
    r = runner.invoke(cli_app(), ["scenario", str(store), sid[:8]])
    assert r.exit_code == 0, r.output
    one = tmp_path / "one.yaml"
    one.write_text(r.stdout)
    sc = hpcrail.load(one)
    assert config_hash(sc) == sid
    assert sc.connection_types["autocoupler"].slack_mm == float(ds.slack_mm.values[i])
    assert config_hash(hpcrail.study_scenario(store, i)) == sid
    bad = runner.invoke(cli_app(), ["scenario", str(store), "nosuchid"])
    assert bad.exit_code == 2 and "no scenario 'nosuchid'" in " ".join(bad.output.split())
    # the re-run: every output at the scenario's own sampling, the study's metrics bit for bit
    out = tmp_path / "one.zarr"
    r = runner.invoke(cli_app(), ["rerun", str(store), sid, "-o", str(out), "-q"])
    assert r.exit_code == 0, r.output
    full = xr.open_zarr(out).load()
    assert full.attrs["config_hash"] == sid and full.attrs["study_scenario"] == i
    for name in ("max_draft_force", "max_speed", "nsteps", "energy_balance_residual"):
        assert full[name].values == ds[name].values[i], name
    np.testing.assert_array_equal(full.coupler_max_draft_force.values, ds.coupler_max_draft_force.values[i])
    assert {"coupler_force", "position", "acceleration"} <= set(full.data_vars)      # not kept by the study
    np.testing.assert_array_equal(full.speed.sel(time=[0.0, 0.5, 1.0]).values, ds.speed.values[i])

    # exports: csv (units in the headers), netCDF and MATLAB, of the study and of the run
    from scipy.io import loadmat

    from hpcrail.analysis.export import read_csv

    r = runner.invoke(cli_app(), ["export", str(store), "--to", "csv", "-o", str(tmp_path / "csv")])
    assert r.exit_code == 0, r.output
    table, units = read_csv(tmp_path / "csv" / "scalars.csv")
    assert units["max_draft_force"] == "N" and units["slack_mm"] == "mm" and units["wall_time"] == "s"
    np.testing.assert_array_equal(table["max_draft_force"].values, ds.max_draft_force.values)
    assert table["status"].tolist() == ds.status.values.tolist()
    env, eu = read_csv(tmp_path / "csv" / "scenario_coupler.csv")
    assert eu["coupler_max_draft_force"] == "N" and len(env) == ds.sizes["scenario"] * ds.sizes["coupler"]
    np.testing.assert_array_equal(env["coupler_max_draft_force"].values, ds.coupler_max_draft_force.values.ravel())
    files = hpcrail.export(store, "netcdf", tmp_path / "s.nc", select={"slack_mm": [20], "mass_t": slice(100, None)},
                           variables=["max_draft_force"])
    nc = xr.open_dataset(files[0]).load()
    want = np.flatnonzero((ds.slack_mm.values == 20) & (ds.mass_t.values >= 100))
    assert nc.sizes["scenario"] == want.size >= 1 and nc.max_draft_force.attrs["units"] == "N"
    np.testing.assert_array_equal(nc.max_draft_force.values, ds.max_draft_force.values[want])
    np.testing.assert_array_equal(nc.scenario_id.values, ds.scenario_id.values[want])
    r = runner.invoke(cli_app(), ["export", str(out), "--to", "mat", "--select", "coupler=2:4", "--var", "coupler_force"])
    assert r.exit_code == 0, r.output
    m = loadmat(str(tmp_path / "one.mat"), simplify_cells=True)
    assert m["units"]["coupler_force"] == "N" and m["dims"]["coupler_force"] == "time,coupler"
    np.testing.assert_array_equal(m["coupler_force"], full.coupler_force.sel(coupler=[2, 3, 4]).values)
    np.testing.assert_array_equal(m["coupler"], [2, 3, 4])
    r = runner.invoke(cli_app(), ["export", str(out), "--to", "csv", "--select", "vehicel=1"])
    assert r.exit_code == 2 and "not a dimension or coordinate" in " ".join(r.output.split())
    assert load_results(store).sizes["scenario"] >= 6 and DEMO.exists()


@pytest.mark.xdist_group("mixed_train")   # the worker that loads the mixed-train kernels (conftest.MIXED_GROUP)
def test_a_mixed_train_sweep_keeps_the_consist_series_around_the_wagon(tmp_path):
    """outputs.series.select: the in-train forces of couplers 3..5 of a mixed train (the detailed wagon is at
    position 4: couplers 3 and 4 are its own) kept at the sweep's samples, equal to the single run's; the
    detailed wagon's front coupler force is the consist's coupler 3 (the force its car body feels)."""
    from hpcrail.kinds import load_scenario
    from hpcrail.simulate import run_scenario
    from helpers.sweep import ROOT

    base = ROOT / "configs" / "mixed" / "short_consist_curve.yaml"
    rate = "vehicle_types.loco.traction.notch_rate_per_s"
    series = {"interval_s": 0.1, "variables": ["coupler_force", "front_coupler_force"], "select": {"coupler": [3, 5]}}
    spec = write_spec(tmp_path / "m.yaml", {rate: {"values": [0.5, 2.0]}}, duration=0.6, base=base,
                      extra={"outputs": {"series": series}})
    store = tmp_path / "m.zarr"
    res, _ = run(spec, store)
    assert res.counts["completed"] == 2
    ds = xr.open_zarr(store).load()
    assert ds.coupler_force.dims == ("scenario", "time", "coupler_kept")
    assert ds.coupler_kept.values.tolist() == [3, 4, 5] and ds.sizes["time"] == 7
    sc, _ = load_scenario(base, ["simulation.duration_s=0.6", f"{rate}=2.0"])
    one = run_scenario(sc)
    assert one.coupler_force.sizes["coupler"] == 5
    at = one.coupler_force.sel(time=ds.time.values, method="nearest")
    np.testing.assert_array_equal(ds.coupler_force.values[1], at.isel(coupler=slice(2, 5)).values)
    np.testing.assert_array_equal(ds.coupler_force.values[1][:, 0], ds.front_coupler_force.values[1][:, 0])
    bad = write_spec(tmp_path / "b.yaml", {rate: {"values": [0.5]}}, duration=0.6, base=base,
                     extra={"outputs": {"series": {**series, "select": {"wheel": [1, 2]}}}})
    from hpcrail.config import ConfigError

    with pytest.raises(ConfigError, match="outputs.series.select.wheel"):
        run(bad, tmp_path / "b.zarr")


def test_the_run_log_counts_cluster_events_and_status_reads_them(tmp_path):
    """Scheduler and task events (as dask delivers them) become counts, lines said at once, the run file and
    the one-line summary of the progress line, the final summary and `hpcrail status`."""
    from hpcrail.commands.sweep import status_json
    from hpcrail.sweep.runlog import RunLog, cluster_summary, read_run_file, run_file

    said = []
    store = tmp_path / "s.zarr"
    log = RunLog(store, say=said.append, prefix="hpcrail_s")
    log.listening = True
    log.scheduler_event((1.0, {"action": "remove-worker", "worker": "tls://w1", "expected": False,
                               "processing-tasks": ["hpcrail_s-f-00000004", "other-key"]}))
    log.scheduler_event((2.0, {"action": "add-worker", "worker": "tls://w3"}))
    log.task_event((3.0, {"action": "attempt-failed", "key": "hpcrail_s-f-00000008", "start": 8, "stop": 12,
                          "worker": "tls://w2", "error": "OSError: disk full"}))
    log.task_event((4.0, {"action": "attempt-failed", "key": "hpcrail_s-f-00000008", "start": 8, "stop": 12}))
    log.task_failed("hpcrail_s-f-00000008", "task hpcrail_s-f-00000008 failed after 1 retries")
    log.scheduler_event((5.0, {"action": "remove-worker", "worker": "tls://w3", "expected": True,
                               "processing-tasks": []}))
    info = log.as_dict()
    assert (info["workers_lost"], info["workers_joined"], info["workers_retired"], info["tasks_restarted"],
            info["task_retries"], info["failed_tasks"]) == (1, 1, 1, 1, 1, ["hpcrail_s-f-00000008"])
    assert cluster_summary(info) == ("1 worker lost, 1 worker retired, 1 worker joined (restarted or replaced), "
                                     "1 task restarted on another worker, 1 task attempt failed and retried, "
                                     "1 task failed after their retries")
    assert said[0].startswith("warning: worker tls://w1 lost") and "1 of its tasks restarted" in said[0]
    assert "scenarios 8..11" in said[2] and "disk full" in said[2]
    log.finish("finished")
    back = read_run_file(store)
    assert back["state"] == "finished" and back["workers_lost"] == 1 and len(back["events"]) == 6
    assert run_file(store).name == ".s.zarr.run.json"
    log.listening = False
    log.scheduler_event((6.0, {"action": "remove-worker", "worker": "tls://w2", "processing-tasks": []}))
    assert log.workers_lost == 1                          # the cluster closing after the run is no event of it
    assert status_json(store, {"done": np.ones(2, bool), "status": np.array(["completed"] * 2, dtype=object),
                               "attrs": {}}, 0)["run"]["task_retries"] == 1
