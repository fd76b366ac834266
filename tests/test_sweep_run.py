"""Sweep execution: failures recorded, resume, spec mismatch, store contents equal single runs,
identical results for any batch size and worker count, kills of the driver and of a worker."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import xarray as xr
import zarr
from helpers.sweep import DEMO, ROOT, assert_same_results, load_results, write_spec

import hpcrail.analysis  # noqa: F401  (ds.hpcrail)
from hpcrail.analysis import open_sweep
from hpcrail.kinds import load_scenario
from hpcrail.simulate import run_scenario
from hpcrail.sweep.runner import SweepMismatchError, run_sweep
from hpcrail.sweep.store import read_state

SLACK = "connection_types.autocoupler.slack_mm"
MASS = "vehicle_types.wagon.mass_t"


def quiet(*_a, **_k):
    pass


def run(spec, store, **kw):
    kw.setdefault("inline", True)
    return run_sweep(spec, store, progress=False, say=quiet, **kw)


@pytest.fixture(scope="module")
def failing_spec(tmp_path_factory):
    """Six scenarios, three of them failing differently: invalid override, max steps, divergence."""
    d = tmp_path_factory.mktemp("fail")
    return write_spec(d / "fail.yaml", {
        SLACK: {"values": [10, 10, 10, 10, 0, 20]},
        "consist.1.count": {"values": [8, 7, 8, 8, 8, 8]},          # 7 wagons cannot form pairs
        "integrator.max_steps": {"values": [10 ** 8, 10 ** 8, 20, 10 ** 8, 10 ** 8, 10 ** 8]},
        "integrator.step_s": {"values": [0.002, 0.002, 0.002, 0.2, 0.002, 0.002]},
        # an adaptive method for the step budget (a fixed-step run needing more steps is refused upfront)
        "integrator.method": {"values": ["rk4", "rk4", "dopri5", "rk4", "rk4", "rk4"]},
    }, design="zip", duration=3.0, extra={"outputs": {"envelopes": True}})


@pytest.fixture(scope="module")
def failing_store(failing_spec, tmp_path_factory):
    store = tmp_path_factory.mktemp("fs") / "fail.zarr"
    res = run(failing_spec, store, batch_size=4)
    return store, res


def test_failing_scenarios_are_recorded_and_the_sweep_goes_on(failing_store):
    store, res = failing_store
    ds = xr.open_zarr(store)
    status = ds.status.values.tolist()
    msg = ds.message.values.tolist()
    assert status == ["completed", "invalid", "max_steps", "non_finite", "completed", "completed"]
    assert "consist.1.count" in msg[1] and "even count" in msg[1]
    assert "maximum number of steps" in msg[2]
    assert "non-finite" in msg[3]
    assert ds.done.values.all() and res.counts == {"total": 6, "done": 6, "completed": 3, "failed": 3,
                                                   "pending": 0, "by_status": {"completed": 3, "invalid": 1,
                                                                               "max_steps": 1, "non_finite": 1}}
    assert np.isnan(ds.max_draft_force.values[1]) and ds.nsteps.values[1] == 0     # never ran
    assert ds.nsteps.values[2] + ds.nrejected.values[2] == 20
    assert ds.scenario_id.values[1].startswith("x")


def test_stored_values_are_those_of_single_runs(failing_store):
    """A completed scenario of the store holds exactly what `hpcrail run` computes for it."""
    store, _ = failing_store
    ds = xr.open_zarr(store).load()
    for i, slack in ((0, 10), (4, 0), (5, 20)):
        sc, _ = load_scenario(DEMO, ["simulation.duration_s=3.0", f"{SLACK}={slack}", "integrator.max_steps=100000000",
                                     "integrator.step_s=0.002"])
        ref = run_scenario(sc)
        assert ds.scenario_id.values[i] == ref.attrs["config_hash"]
        for name in ("max_draft_force", "max_buff_force", "mean_max_draft_force", "max_speed", "mean_speed",
                     "max_draft_deflection", "nsteps", "nfev", "t_reached", "energy_balance_residual",
                     "max_draft_force_coupler"):
            assert ds[name].values[i] == ref[name].values, name
        assert ds.reference_coupler.values[i] == ref.attrs["reference_coupler"]
        assert ds.time_of_max_draft_force.values[i] == ref.max_draft_force.attrs["time_of_max"]
        np.testing.assert_array_equal(ds.coupler_max_draft_force.values[i], ref.coupler_max_draft_force.values)


def test_rerun_skips_done_and_retry_failed_reruns_only_failures(failing_spec, failing_store, tmp_path):
    store, _ = failing_store
    res = run(failing_spec, store)
    assert res.ran == 0 and res.skipped == 6
    before = xr.open_zarr(store).wall_time.values.copy()
    res = run(failing_spec, store, retry_failed=True)
    assert res.ran == 3 and res.counts["failed"] == 3
    after = xr.open_zarr(store).wall_time.values
    ok = [0, 4, 5]
    np.testing.assert_array_equal(before[ok], after[ok])          # completed ones untouched


def test_pending_scenarios_are_run_on_resume(tmp_path):
    spec = write_spec(tmp_path / "r.yaml", {SLACK: {"linspace": [0, 30, 7]}})
    ref, store = tmp_path / "ref.zarr", tmp_path / "s.zarr"
    run(spec, ref, batch_size=3)
    run(spec, store, batch_size=3)
    g = zarr.open_group(str(store), mode="r+", zarr_format=2)
    g["done"][3:6] = 0                     # as if the batch [3, 6) had been lost
    g["max_draft_force"][3:6] = -1.0
    res = run(spec, store)
    assert res.ran == 3 and res.skipped == 4
    assert_same_results(ref, store)


def test_a_changed_spec_is_refused_unless_new(tmp_path):
    spec = write_spec(tmp_path / "a.yaml", {SLACK: {"values": [0, 10]}})
    store = tmp_path / "a.zarr"
    run(spec, store)
    write_spec(spec, {SLACK: {"values": [0, 20]}})
    with pytest.raises(SweepMismatchError, match="1 scenario ids differ .*--new"):
        run(spec, store)
    with pytest.raises(SweepMismatchError, match="2 scenarios in the store, 3 in the spec"):
        write_spec(spec, {SLACK: {"values": [0, 20, 30]}})
        run(spec, store)
    res = run(spec, store, new=True)
    assert res.ran == 3 and xr.open_zarr(store).slack_mm.values.tolist() == [0, 20, 30]
    not_a_sweep = tmp_path / "other"
    not_a_sweep.mkdir()
    with pytest.raises(SweepMismatchError, match="refusing to touch it"):
        run(spec, not_a_sweep, new=True)
    assert not_a_sweep.exists()


def test_store_opens_with_xarray_and_selects_by_parameter(tmp_path):
    spec = write_spec(tmp_path / "g.yaml", {SLACK: {"values": [0, 10, 20]}, MASS: {"values": [90, 120]},
                                            "integrator.method": {"values": ["rk4", "dopri5"]}},
                      extra={"outputs": {"envelopes": True, "series": {"interval_s": 0.5,
                                                                       "variables": ["coupler_force", "speed"]}}})
    store = tmp_path / "g.zarr"
    run(spec, store, batch_size=5)
    ds = xr.open_zarr(store)
    assert ds.sizes == {"scenario": 12, "coupler": 9, "vehicle": 10, "time": 5}
    assert ds.slack_mm.attrs["sweep_path"] == SLACK and ds.slack_mm.attrs["units"] == "mm"
    assert ds.mass_t.attrs["units"] == "t"
    sel = ds.set_xindex("slack_mm").sel(slack_mm=10)
    assert sel.sizes["scenario"] == 4 and set(sel.mass_t.values.tolist()) == {90, 120}
    byp = open_sweep(store)
    assert byp.sel(slack_mm=10).scenario_index.values.tolist() == [4, 5, 6, 7]
    one = byp.sel(slack_mm=20, mass_t=120, integrator_method="dopri5")
    assert "scenario" not in one.dims and one.scenario_index.item() == 11
    # the series are the run's own samples at the same times
    sc, _ = load_scenario(DEMO, ["simulation.duration_s=2.0", f"{SLACK}=20", f"{MASS}=120",
                                 "integrator.method=dopri5", "output.interval_s=0.5"])
    ref = run_scenario(sc)
    np.testing.assert_array_equal(one.coupler_force.values, ref.coupler_force.values)
    np.testing.assert_array_equal(one.speed.values, ref.speed.values)
    assert float(one.max_draft_force) == float(ref.max_draft_force)
    # grid view, groupby, dataframe
    grid = ds.hpcrail.grid()
    assert dict(grid.max_draft_force.sizes) == {"slack_mm": 3, "mass_t": 2, "integrator_method": 2}
    assert float(grid.max_draft_force.sel(slack_mm=20, mass_t=120, integrator_method="dopri5")) == float(one.max_draft_force)
    heavier = open_sweep(store, indexed=False).max_draft_force.groupby("mass_t").mean().values
    assert heavier[1] > heavier[0]            # heavier wagons pull harder on the couplers
    table = ds.hpcrail.metrics_table()
    assert len(table) == 12 and {"slack_mm", "mass_t", "integrator_method", "status", "max_draft_force [kN]"} <= set(table)
    np.testing.assert_allclose(table["max_draft_force [kN]"].values, ds.max_draft_force.values / 1e3)
    assert ds.attrs["spec_yaml"] == spec.read_text() and ds.attrs["git_commit"]


def test_cli_status_and_report(failing_store, tmp_path):
    store, _ = failing_store
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "hpcrail", "status", str(store)], capture_output=True, text=True,
                         env=env, check=True).stdout
    assert "done 6 / failed 3 / pending 0" in out and "max_steps" in out and "1 x " in out
    rep = tmp_path / "rep"
    out = subprocess.run([sys.executable, "-m", "hpcrail", "report", str(store), "-o", str(rep)],
                         capture_output=True, text=True, env=env, check=True).stdout
    assert "max_draft_force" in out
    files = sorted(p.name for p in rep.iterdir())
    # a 3 s start from rest never compresses a coupler: the buff metrics are constant (0) and listed, not plotted;
    # every varying draft/speed metric is plotted, the failure map because three scenarios failed; the quasi-static
    # running-safety metrics (issue 28) vary with the draft forces too
    assert [f for f in files if not f.startswith("metric_worst_qs_")] == [
        "envelopes.png", "failures.png", "metric_max_draft_deflection.png", "metric_max_draft_force.png",
        "metric_max_speed.png", "metric_mean_max_draft_force.png", "metric_mean_speed.png"]
    assert "metric_worst_qs_ratio.png" in files
    assert "not plotted: max_buff_force: constant" in " ".join(out.split())
    bad = subprocess.run([sys.executable, "-m", "hpcrail", "status", str(tmp_path)], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 2 and "is not an hpcrail sweep store" in " ".join(bad.stderr.split())


# ---------------------------------------------------------------------------------------------
# dask
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def grid_spec(tmp_path_factory):
    d = tmp_path_factory.mktemp("grid")
    return write_spec(d / "grid.yaml", {SLACK: {"values": [0, 10, 25]}, MASS: {"linspace": [80, 120, 3]},
                                        "integrator.method": {"values": ["rk4", "dopri5"]}},
                      duration=2.0, extra={"outputs": {"envelopes": True}})


@pytest.fixture(scope="module")
def reference(grid_spec, tmp_path_factory):
    """The grid computed in this process (no dask), 64 scenarios per batch."""
    store = tmp_path_factory.mktemp("ref") / "ref.zarr"
    run(grid_spec, store, batch_size=64)
    return store


@pytest.fixture(scope="module")
def cluster2():
    from distributed import Client, LocalCluster

    lc = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=50)
    client = Client(lc)
    yield client
    client.close()
    lc.close()


def test_identical_results_for_batch_size_1_and_64_and_1_or_2_workers(grid_spec, reference, cluster2, tmp_path):
    s1 = tmp_path / "b1.zarr"
    res = run(grid_spec, s1, inline=False, client=cluster2, batch_size=1)
    assert res.ran == 18 and not res.failed_tasks
    assert_same_results(reference, s1)
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=50) as lc, Client(lc) as c1:
        s2 = tmp_path / "w1.zarr"
        run(grid_spec, s2, inline=False, client=c1, batch_size=4)
    assert_same_results(reference, s2)


def test_a_12_scenario_sweep_schedules_one_task_per_batch(cluster2, tmp_path):
    """The dashboard shows the study's batches, nothing else (issue 30: 232 tasks for 12 scenarios when the
    tasks built dask collections): 12 scenarios in batches of 3 are 4 batch tasks (each computes and writes
    its chunks) and the warm-up task; a wheel/rail table read inside a task is one task too."""
    from distributed import get_task_stream

    spec = write_spec(tmp_path / "n.yaml", {SLACK: {"values": [0, 10, 20]}, MASS: {"values": [80, 100, 120, 140]}},
                      duration=1.0)
    with get_task_stream(cluster2) as ts:
        res = run(spec, tmp_path / "n.zarr", inline=False, client=cluster2, batch_size=3)
    keys = [str(t["key"]) for t in ts.data]
    assert res.counts["completed"] == 12
    assert len(keys) == 4 + 1, keys
    assert all(k.startswith("hpcrail_n") for k in keys)
    # the contact tables of a wheel/rail scenario: read as numpy inside the task, no open_dataset/finalize tasks
    from hpcrail.models.wheelrail.tables import read_zarr, write_zarr

    table = xr.Dataset({"V": (("y", "q"), np.arange(60.0).reshape(20, 3))}, coords={"y": np.arange(20.0)})
    write_zarr(table.chunk({"y": 5}), tmp_path / "lut.zarr")
    with get_task_stream(cluster2) as ts:
        back = cluster2.submit(read_zarr, tmp_path / "lut.zarr", pure=False).result()
    assert len(ts.data) == 1 and isinstance(back.V.data, np.ndarray)
    xr.testing.assert_identical(back, table)


def test_a_worker_killed_mid_task_does_not_corrupt_the_store(grid_spec, reference, cluster2, tmp_path, capsys):
    """A worker killed while it runs a batch: the sweep says so (as it happens, in the progress line, in the
    final summary and in ``hpcrail status``), its batch is restarted elsewhere and nothing is lost."""
    store = tmp_path / "k.zarr"
    spec = write_spec(tmp_path / "slow.yaml", {SLACK: {"values": [0, 10, 25]}, MASS: {"linspace": [80, 120, 3]},
                                               "integrator.method": {"values": ["rk4", "dopri5"]}},
                      duration=60.0, extra={"outputs": {"envelopes": True}})
    out = {}
    said = []
    t = threading.Thread(target=lambda: out.update(res=run_sweep(spec, store, inline=False, client=cluster2,
                                                                 batch_size=2, say=said.append, progress=True)))
    t.start()
    pids = cluster2.run(os.getpid)
    deadline = time.time() + 900   # a bound on the wait, not a timing (a loaded machine compiles and runs slowly)
    killed = False
    while time.time() < deadline and t.is_alive():
        processing = cluster2.processing()
        busy = [w for w, keys in processing.items() if keys]
        if busy and store.exists() and read_state(store)["done"].sum() >= 2:
            os.kill(pids[busy[0]], signal.SIGKILL)   # a task is running there
            killed = True
            break
        time.sleep(0.02)
    t.join(timeout=1200)
    assert killed and "res" in out
    res = out["res"]
    assert not res.failed_tasks and res.counts["done"] == 18 and res.counts["completed"] == 18
    # told: as it happened, in the progress line, the summary, the store and `hpcrail status`
    from hpcrail.commands.sweep import status_json
    from hpcrail.sweep.runlog import cluster_summary

    assert res.cluster["workers_lost"] == 1 and res.cluster["tasks_restarted"] >= 1, res.cluster
    assert any("lost" in m and "restarted on the other workers" in m for m in said), said
    summary = cluster_summary(res.cluster)
    assert summary.startswith("1 worker lost") and "restarted on another worker" in summary
    progress = capsys.readouterr().err
    assert "1 worker lost" in progress and "18/18 done (100 %), 0 failed" in progress
    info = status_json(store, read_state(store), 0)
    assert info["run"]["state"] == "finished" and info["run"]["workers_lost"] == 1
    assert xr.open_zarr(store).attrs["last_run_cluster"] == summary
    ref = tmp_path / "kref.zarr"
    run(spec, ref, batch_size=18)
    assert_same_results(ref, store)
    assert not list(store.rglob("*.partial"))


def _mpi_sweep_missing():
    import shutil

    for mod in ("mpi4py", "dask_mpi"):
        try:
            __import__(mod)
        except ImportError:
            return f"{mod} is not installed (pip install -e .[mpi])"
    return None if shutil.which("mpiexec") else "mpiexec is not on PATH (pip install -e .[mpi] provides MPICH's)"


@pytest.mark.mpi
@pytest.mark.skipif(_mpi_sweep_missing() is not None and os.environ.get("CI") != "true",
                    reason=str(_mpi_sweep_missing()))
def test_an_mpi_allocation_is_a_dask_cluster(grid_spec, reference, tmp_path):
    """`mpiexec -n 4 hpcrail sweep --cluster mpi` (dask-mpi): rank 0 the scheduler, rank 1 the driver, ranks 2
    and 3 workers; the store equals the in-process one and only the driver reports."""
    store = tmp_path / "mpi.zarr"
    env = dict(os.environ, PYTHONPATH=str(ROOT), HPCRAIL_MPI_INTERFACE="lo")
    cmd = ["mpiexec", "-n", "4", sys.executable, "-m", "hpcrail", "sweep", str(grid_spec), "-o", str(store),
           "--cluster", "mpi", "--batch-size", "5", "--dashboard-address", "127.0.0.1:0", "-q"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 worker ranks" in r.stdout and r.stdout.count("18/18 done (18 completed") == 1, r.stdout
    assert_same_results(reference, store)


def test_driver_sigkill_then_resume_gives_the_uninterrupted_dataset(tmp_path):
    """`hpcrail sweep` killed with SIGKILL mid-run, re-run with the same command: the store equals
    an uninterrupted run's, every scenario exactly once."""
    spec = write_spec(tmp_path / "kill.yaml", {SLACK: {"linspace": [0, 30, 6]}, MASS: {"values": [80, 100, 120, 140]}},
                      duration=20.0, extra={"batch_size": 2, "outputs": {"envelopes": True}})
    store = tmp_path / "kill.zarr"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # one worker process: the embedded cluster, its nanny and worker all belong to the killed driver
    cmd = [sys.executable, "-m", "hpcrail", "sweep", str(spec), "-o", str(store), "--workers", "1",
           "--dashboard-address", ":0", "-q"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    done_at_kill = None
    deadline = time.time() + 900
    while time.time() < deadline and proc.poll() is None:
        if store.exists():
            n = int(read_state(store)["done"].sum())
            if n >= 4:
                os.kill(proc.pid, signal.SIGKILL)
                done_at_kill = n
                break
        time.sleep(0.02)
    proc.wait(timeout=60)
    first = proc.stdout.read().decode()
    time.sleep(0.5)
    try:   # orphaned workers exit when their parent dies; make sure of it (a crashed node)
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    assert proc.returncode == -signal.SIGKILL, first
    assert "dask dashboard: http" in first
    assert done_at_kill is not None and done_at_kill < 24
    st = read_state(store)
    assert 0 < st["done"].sum() < 24
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "resuming:" in second.stdout and "24/24 done" in second.stdout
    ref = tmp_path / "ref.zarr"
    run(spec, ref)
    assert_same_results(ref, store)
    ds = load_results(store)
    assert len(set(ds.scenario_id.values.tolist())) == 24


def test_a_friction_draft_gear_sweep_keeps_the_friction_results(tmp_path):
    """Sweeping T_sMax of the paper-003 start-up: the store holds each scenario's friction work,
    event count and stationary deflections exactly as its single run gives them."""
    base = ROOT / "configs" / "friction" / "startup_6.yaml"
    path = "connection_types.friction_gear.static_friction_kN"
    spec = write_spec(tmp_path / "fr.yaml", {path: {"values": [3.0, 5.0]},
                                             "connection_types.friction_gear.kinetic_friction_kN": {"values": [3.0, 5.0]}},
                      duration=2.0, design="zip", base=base, extra={"outputs": {"envelopes": True}})
    store = tmp_path / "fr.zarr"
    run(spec, store, batch_size=2)
    ds = xr.open_zarr(store).load()
    assert ds.status.values.tolist() == ["completed", "completed"]
    for i, t in enumerate((3.0, 5.0)):
        sc, _ = load_scenario(base, ["simulation.duration_s=2", f"{path}={t}",
                                     f"connection_types.friction_gear.kinetic_friction_kN={t}"])
        ref = run_scenario(sc)
        assert ds.friction_work.values[i] == ref.friction_work.item()
        assert ds.n_events.values[i] == ref.n_events.item()
        np.testing.assert_array_equal(ds.final_deflection.values[i], ref.final_deflection.values)
    assert ds.friction_work.values[0] != ds.friction_work.values[1]


def test_a_scenario_over_its_budget_is_recorded_as_a_failure_and_the_sweep_goes_on(tmp_path):
    """The per-scenario budget (issue 18): a scenario that would run for minutes stops at its wall-time
    budget and is recorded as ``time_budget`` with its reason; the others complete, with exactly the
    results they have without a budget."""
    spec = write_spec(tmp_path / "b.yaml", {"integrator.step_s": {"values": [0.002, 2e-6]}}, duration=20.0,
                      extra={"budget": {"wall_time_s": 0.3}})
    store = tmp_path / "b.zarr"
    t0 = time.perf_counter()
    res = run(spec, store, batch_size=2)
    ds = xr.open_zarr(store).load()
    assert ds.status.values.tolist() == ["completed", "time_budget"], ds.message.values
    assert "wall-time budget exhausted" in str(ds.message.values[1]) and "budget.wall_time_s" in str(ds.message.values[1])
    assert 0 < float(ds.t_reached.values[1]) < 20.0 and res.counts["failed"] == 1
    assert time.perf_counter() - t0 < 600        # 10 M steps of RK4 would take far longer (not a timing test)
    sc, _ = load_scenario(DEMO, ["simulation.duration_s=20.0", "integrator.step_s=0.002"])
    assert float(ds.max_draft_force.values[0]) == float(run_scenario(sc).max_draft_force)
    assert '"wall_time_s": 0.3' in ds.attrs["budget"]
