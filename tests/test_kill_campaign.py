"""The kill guarantees of sweeps as a campaign (issue 18, item 5), kept as one slow test.

A sweep driver is killed at least 10 times at seeded random moments — SIGKILL of the process, SIGKILL
of its process group (a crashed node), SIGTERM (a batch system's stop) — inline and on an embedded
dask cluster, during start-up, kernel loading and mid-batch; then worker processes are killed at least
3 times mid-batch.  Every re-run of the same command resumes; the finished stores are bit-identical
to an uninterrupted run, hold every scenario exactly once, and leave no temporary files and no
processes behind.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from helpers.sweep import ROOT, assert_same_results, load_results, wait_for_handler, write_spec

from hpcrail.sweep.runner import run_sweep

SLACK = "connection_types.autocoupler.slack_mm"
MASS = "vehicle_types.wagon.mass_t"
N = 96


def quiet(*_a, **_k):
    pass


def done(store) -> int:
    """Scenarios done (only the ``done`` array is read: cheap enough to poll)."""
    from hpcrail.sweep.store import open_group

    try:
        return int(np.asarray(open_group(store)["done"][:]).sum())
    except Exception:  # noqa: BLE001 - not created yet (or being created)
        return 0


def group_gone(pgid: int, wait: float = 20.0) -> bool:
    end = time.time() + wait
    while time.time() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def no_temporaries(store) -> list:
    parent = store.parent
    return [str(p) for p in store.rglob("*.partial")] + \
        [p.name for p in parent.iterdir() if p.name.startswith(f".{store.name}.")
         and not p.name.endswith((".lock", ".run.json"))]


@pytest.mark.slow
def test_driver_and_worker_kill_campaign(tmp_path):
    rng = np.random.default_rng(18)
    spec = write_spec(tmp_path / "camp.yaml", {SLACK: {"linspace": [0, 30, 12]}, MASS: {"linspace": [80, 140, 8]}},
                      duration=5.0, extra={"batch_size": 2})
    ref = tmp_path / "ref.zarr"
    run_sweep(spec, ref, inline=True, progress=False, say=quiet)

    # ---- the driver: >= 10 kills at random moments ----------------------------------------------
    store = tmp_path / "driver.zarr"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    base = [sys.executable, "-m", "hpcrail", "sweep", str(spec), "-o", str(store), "-q"]
    plan = [("inline", signal.SIGKILL, "process"), ("inline", signal.SIGKILL, "group"),
            ("inline", signal.SIGTERM, "group"), ("inline", signal.SIGKILL, "group"),
            ("cluster", signal.SIGKILL, "group")] * 2 + [("inline", signal.SIGKILL, "group")] * 4
    kills, progress, finished, seen = [], [], [], []
    for i, (where, sig, target) in enumerate((plan * 3)[:40]):
        cmd = base + (["--inline"] if where == "inline" else ["--workers", "1", "--dashboard-address", ":0"])
        before = done(store)
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                start_new_session=True)
        if sig == signal.SIGTERM:   # from the moment hpcrail's entry point runs: before it, in the interpreter's
            wait_for_handler(proc)  # own start, no Python code can catch a signal (tests/test_signals.py)
        # at a random moment from the start (import, kernel loading, lock, creation, batches), or, on
        # every other kill, at a random moment after the next batch is done (mid-batch or mid-write)
        deadline = time.time() + (float(rng.uniform(0.3, 5.0)) if i % 2 == 0 else 120.0)
        while time.time() < deadline and proc.poll() is None and done(store) <= before + 2 * (i % 2 == 0):
            time.sleep(0.02)
        time.sleep(float(rng.uniform(0.0, 0.2)))
        if proc.poll() is None:
            (os.kill if target == "process" else os.killpg)(proc.pid, sig)
            kills.append((where, sig.name, target))
        out = proc.communicate(timeout=120)[0].decode()
        if target == "process":   # a lone driver killed: its cluster's processes follow it
            os.killpg(proc.pid, signal.SIGKILL) if not group_gone(proc.pid, 5.0) else None
        assert group_gone(proc.pid), f"processes left behind by kill {i}"
        assert "Traceback" not in out, out
        if sig == signal.SIGTERM and proc.returncode not in (0, -signal.SIGKILL):
            assert proc.returncode == 130 and "interrupted (SIGTERM)" in out, out
        progress.append(done(store))
        seen.append(progress[-1])
        if len(kills) >= 10:
            break
        if progress[-1] == N:
            # the sweep finished inside a kill window (a fast machine with warm kernels, or a SIGTERM in
            # its closing phase, which rightly exits 0): that store is checked, and the campaign goes on
            # with a fresh one until it has its 10 kills
            assert_same_results(ref, store)
            assert not no_temporaries(store)
            finished.append((store.name, list(progress)))
            store = tmp_path / f"driver{len(finished)}.zarr"
            base[base.index("-o") + 1] = str(store)
            progress = []
    assert len(kills) >= 10, (kills, progress, finished)
    assert progress == sorted(progress), (progress, finished)
    assert any(0 < p < N for p in seen), seen   # at least one kill fell mid-sweep, with results kept
    final = subprocess.run(base + ["--inline"], env=env, capture_output=True, text=True, timeout=1200)
    assert final.returncode == 0 and f"{N}/{N} done" in final.stdout, final.stdout + final.stderr
    assert_same_results(ref, store)
    assert len(set(load_results(store).scenario_id.values.tolist())) == N
    assert not no_temporaries(store)

    # ---- workers: >= 3 kills mid-batch on a 2-worker cluster --------------------------------------
    from distributed import Client, LocalCluster

    wstore = tmp_path / "workers.zarr"
    worker_kills = 0
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=50) as lc, Client(lc, set_as_default=False) as client:
        out: dict = {}
        t = threading.Thread(target=lambda: out.update(res=run_sweep(spec, wstore, client=client, batch_size=2,
                                                                     progress=False, say=quiet)))
        t.start()
        deadline = time.time() + 900   # bounds the wait (3 kills happen long before on a quiet machine)
        next_at = 1
        while time.time() < deadline and t.is_alive() and worker_kills < 3:
            n_done = done(wstore)
            busy = [w for w, keys in client.processing().items() if keys]
            if busy and next_at <= n_done < N:   # a batch is running there
                # a worker killed a moment ago may still be listed while its nanny restarts it: skip it
                pids = client.run(os.getpid, on_error="ignore")
                if busy[0] in pids:
                    time.sleep(float(rng.uniform(0.0, 0.05)))
                    os.kill(pids[busy[0]], signal.SIGKILL)
                    worker_kills += 1
                    next_at = n_done + 2
            time.sleep(0.005)
        t.join(timeout=1200)
    assert worker_kills >= 3 and "res" in out
    res = out["res"]
    if res.counts["done"] < N:   # a batch whose worker died too often is left pending: resume it
        res = run_sweep(spec, wstore, inline=True, progress=False, say=quiet)
    assert res.counts["done"] == N and res.counts["completed"] == N
    assert_same_results(ref, wstore)
    assert not no_temporaries(wstore)
