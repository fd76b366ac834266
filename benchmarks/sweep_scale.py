"""Sweeps at cluster scale (issue 31 item 7): the per-scenario overhead of a 100 000-scenario sweep.

Tiny scenarios (the demo train, 10 vehicles, 0.05 s simulated: a few RK4 steps), one swept parameter
(autocoupler slack over 100 000 levels), so that the sweep machinery — not the physics — is measured, on
an embedded LocalCluster (``--workers`` single-threaded worker processes) writing one zarr store:

* expansion in the driver (every scenario validated and hashed) and store creation;
* the fan-out: scheduler tasks (counted from the task stream: should be batches + 1 warm-up), wall,
  scenarios/s, peak driver and scheduler RSS (sampled every second: the LocalCluster's scheduler runs in
  the driver process), the tasks' own time split (validate/prepare, integrate, extract, zarr write);
* the baseline: the same batches computed in this process without dask (``--inline``) on a subset —
  the ratio dask/inline per scenario is the cluster overhead;
* resume: the same command again on the finished store (expansion + state read + nothing to do), and after
  10 % of the batches were lost (marked not done) — time per scenario recomputed;
* ``hpcrail status`` (the store state read) and the store size per scenario;
* layout: every variable chunked by the batch along ``scenario`` (the unit one task writes whole, so two
  writers never share a chunk — zarr-python issue 3682 lost data when dask chunks were smaller than shards).

Usage::

    python benchmarks/sweep_scale.py                     # 100 000 scenarios (an hour or more on 2 loaded cores)
    python benchmarks/sweep_scale.py --scenarios 10000 --baseline 1024 --out benchmarks/results/sweep_scale_10k.md

Writes benchmarks/results/sweep_scale.md (and .json).  Record of the load with every figure.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail.sweep.runner import run_sweep  # noqa: E402
from hpcrail.sweep.spec import expand  # noqa: E402
from hpcrail.sweep.store import open_group, read_state  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "sweep_scale.md"


def quiet(*_a, **_k):
    pass


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def write_spec(path: Path, n: int, duration: float) -> Path:
    spec = {"base": str(ROOT / "configs" / "trains" / "demo.yaml"),
            "set": {"simulation.duration_s": duration, "output.interval_s": duration},
            "parameters": {"connection_types.autocoupler.slack_mm": {"linspace": [0.0, 30.0, n]}},
            "design": "grid", "budget": {"wall_time_s": 60}}
    path.write_text("# benchmarks/sweep_scale.py\n" + yaml.safe_dump(spec, sort_keys=False))
    return path


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class Memory:
    """Peak RSS of this process (it hosts the LocalCluster's scheduler) sampled every ``dt`` s."""

    def __init__(self, dt: float = 1.0):
        import psutil

        self.me = psutil.Process()
        self.dt = dt
        self.peak = self.me.memory_info().rss
        self.start = self.peak
        self._stop = threading.Event()

    def _run(self):
        while not self._stop.wait(self.dt):
            self.peak = max(self.peak, self.me.memory_info().rss)

    def __enter__(self):
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()
        self.peak = max(self.peak, self.me.memory_info().rss)


def layout_check(store: Path) -> dict:
    """Chunking along scenario of every array (and shards, if any)."""
    g = open_group(store)
    bs = int(g.attrs["batch_size"])
    n = int(g.attrs["n_scenarios"])
    per, coords = {}, 0
    for name in g.array_keys():
        a = g[name]
        if not a.shape or a.shape[0] != n or name == "scenario":
            continue
        unit = getattr(a, "shards", None) or a.chunks
        if name in ("scenario_id", "slack_mm"):
            coords += 1          # coordinates: one chunk, written once at creation
            continue
        per[name] = int(unit[0])
    return {"batch_size": bs, "aligned": all(u == bs for u in per.values()), "arrays": len(per),
            "zarr_format": int(g.metadata.zarr_format), "sharded": any(getattr(g[k], "shards", None) for k in per)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", type=int, default=100_000)
    ap.add_argument("--duration", type=float, default=0.05, help="simulated seconds per scenario")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--baseline", type=int, default=2048, help="scenarios of the in-process baseline")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--out", type=Path, default=OUT, help="report (markdown; the JSON beside it)")
    args = ap.parse_args()
    from distributed import Client, LocalCluster, get_task_stream

    tmp = Path(tempfile.mkdtemp(prefix="sweep_scale_"))
    res: dict = {"scenarios": args.scenarios, "duration_s": args.duration, "workers": args.workers,
                 "load_start": load(), "cores": os.cpu_count()}
    try:
        spec = write_spec(tmp / "scale.yaml", args.scenarios, args.duration)
        t0 = time.perf_counter()
        exp = expand(spec)
        res["expand_s"] = time.perf_counter() - t0
        res["expand_load"] = load()
        print(f"expanded {exp.size} scenarios in {res['expand_s']:.1f} s (load {load()})", flush=True)
        res["driver_rss_after_expand_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        # baseline: the first batches in this process, no dask
        sub = write_spec(tmp / "sub.yaml", args.baseline, args.duration)
        run_sweep(sub, tmp / "warm.zarr", inline=True, progress=False, say=quiet)      # compile / load kernels
        t0 = time.perf_counter()
        base = run_sweep(sub, tmp / "base.zarr", inline=True, progress=False, say=quiet)
        res["baseline"] = {"scenarios": base.ran, "wall_s": time.perf_counter() - t0, "fanout_s": base.seconds,
                           "task_seconds": base.task_seconds, "load": load()}
        print(f"baseline inline: {base.ran} in {base.seconds:.1f} s (load {load()})", flush=True)

        store = tmp / "scale.zarr"
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                          silence_logs=50) as lc, Client(lc) as client:
            with Memory() as mem, get_task_stream(client) as ts:
                t0 = time.perf_counter()
                r = run_sweep(spec, store, client=client, expansion=exp, progress=False, say=quiet)
                wall = time.perf_counter() - t0
            keys = [str(t["key"]) for t in ts.data]
            res["dask"] = {"scenarios": r.ran, "completed": r.counts["completed"], "wall_s": wall,
                           "fanout_s": r.seconds, "startup_s": r.startup_seconds, "tasks": len(keys),
                           "batch_tasks": r.tasks, "batches": -(-exp.size // int(exp.batch_size())),
                           "other_keys": sorted({k.split("-")[0] for k in keys if not k.startswith("hpcrail_")}),
                           "driver_peak_rss_mb": mem.peak / 2 ** 20, "driver_rss_start_mb": mem.start / 2 ** 20,
                           "task_seconds": r.task_seconds, "cluster": r.cluster, "load": load()}
            print(f"dask: {r.ran} in {r.seconds:.1f} s, {len(keys)} tasks (load {load()})", flush=True)
            res["layout"] = layout_check(store)
            res["store_bytes_per_scenario"] = du(store) / exp.size
            t0 = time.perf_counter()
            read_state(store)
            res["status_read_s"] = time.perf_counter() - t0
            # resume: nothing to do
            t0 = time.perf_counter()
            again = run_sweep(spec, store, client=client, progress=False, say=quiet)
            res["resume_done_s"] = time.perf_counter() - t0
            assert again.ran == 0
            t0 = time.perf_counter()
            again = run_sweep(spec, store, client=client, expansion=exp, progress=False, say=quiet)
            res["resume_done_noexpand_s"] = time.perf_counter() - t0
            # resume after losing 10 % of the batches
            g = open_group(store, mode="r+")
            bs = int(g.attrs["batch_size"])
            nb = -(-exp.size // bs)
            rng = np.random.default_rng(31)
            lost = rng.choice(nb, size=max(1, nb // 10), replace=False)
            done = np.asarray(g["done"][:])
            for b in lost:
                done[b * bs:(b + 1) * bs] = 0
            g["done"][:] = done
            n_lost = int((done == 0).sum())
            t0 = time.perf_counter()
            again = run_sweep(spec, store, client=client, expansion=exp, progress=False, say=quiet)
            res["resume_lost"] = {"scenarios": n_lost, "ran": again.ran, "wall_s": time.perf_counter() - t0,
                                  "fanout_s": again.seconds, "load": load()}
        res["load_end"] = load()
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    report(res, args.out)


def report(r: dict, out: Path = OUT) -> None:
    import subprocess

    n = r["scenarios"]
    d = r["dask"]
    b = r["baseline"]
    ts, bts = d["task_seconds"], b["task_seconds"]
    per = lambda s, k: 1e3 * s / k  # noqa: E731  (ms per scenario)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout
    rows = [
        ("scenarios (tiny: demo train, {:g} s simulated)".format(r["duration_s"]), f"{n:,}", ""),
        ("expansion in the driver (validate + hash each scenario)", f"{r['expand_s']:.1f} s",
         f"{per(r['expand_s'], n):.2f} ms"),
        ("scheduler tasks (task stream)", f"{d['tasks']:,} = {d['batch_tasks']:,} batches + "
         f"{d['tasks'] - d['batch_tasks']} warm-up", f"{n / max(1, d['batch_tasks']):.0f} scenarios/task"),
        ("other task keys (dask collections built in tasks)", ", ".join(d["other_keys"]) or "none", ""),
        ("fan-out wall (dask, {} workers)".format(r["workers"]), f"{d['fanout_s']:.1f} s",
         f"{per(d['fanout_s'], n):.2f} ms"),
        ("  in the tasks: validate the scenarios", f"{ts.get('prepare', 0):.1f} s", f"{per(ts.get('prepare', 0), n):.2f} ms"),
        ("  in the tasks: build, integrate, datasets (run_batch)", f"{ts.get('integrate', 0):.1f} s", f"{per(ts.get('integrate', 0), n):.2f} ms"),
        ("  in the tasks: datasets -> store rows", f"{ts.get('extract', 0):.1f} s", f"{per(ts.get('extract', 0), n):.2f} ms"),
        ("  in the tasks: zarr write (whole chunks, then done)", f"{ts.get('write', 0):.1f} s",
         f"{per(ts.get('write', 0), n):.2f} ms"),
        ("baseline: same batches in one process, no dask ({:,} scenarios)".format(b["scenarios"]),
         f"{b['fanout_s']:.1f} s", f"{per(b['fanout_s'], b['scenarios']):.2f} ms"),
        ("dask / baseline per scenario (x workers: parallel speed-up would be < 1)",
         f"{(d['fanout_s'] / n) / (b['fanout_s'] / b['scenarios']):.2f}", ""),
        ("peak driver RSS (hosts the scheduler)", f"{d['driver_peak_rss_mb']:.0f} MiB",
         f"start {d['driver_rss_start_mb']:.0f} MiB"),
        ("resume, all done (expansion + state read)", f"{r['resume_done_s']:.1f} s", f"{per(r['resume_done_s'], n):.3f} ms"),
        ("resume, all done, expansion given", f"{r['resume_done_noexpand_s']:.2f} s",
         f"{per(r['resume_done_noexpand_s'], n):.3f} ms"),
        ("resume after 10 % of the batches lost ({:,} scenarios)".format(r["resume_lost"]["scenarios"]),
         f"{r['resume_lost']['wall_s']:.1f} s",
         f"{per(r['resume_lost']['wall_s'], r['resume_lost']['scenarios']):.2f} ms per lost scenario"),
        ("hpcrail status (state read)", f"{r['status_read_s']:.2f} s", f"{per(r['status_read_s'], n):.4f} ms"),
        ("store size", f"{r['store_bytes_per_scenario']:.0f} bytes/scenario", ""),
        ("layout: arrays chunked by the batch along scenario", f"{r['layout']['arrays']} arrays, aligned: "
         f"{r['layout']['aligned']}, zarr format {r['layout']['zarr_format']}, sharded: {r['layout']['sharded']}",
         f"batch {r['layout']['batch_size']}"),
    ]
    lines = [f"# Sweep at scale: {n:,} tiny scenarios (benchmarks/sweep_scale.py)", "",
             f"Machine: {r['cores']} cores, shared; load average (1/5/15 min) at start {r['load_start']}, after "
             f"expansion {r['expand_load']}, after the dask run {d['load']}, at the end {r['load_end']}.  "
             f"git {commit.strip()}.  Command: `python benchmarks/sweep_scale.py --scenarios {n}`.", "",
             "| quantity | value | per scenario |", "|---|---|---|"]
    lines += [f"| {a} | {v} | {p} |" for a, v, p in rows]
    lines += ["", f"Cluster events of the run: {d['cluster'].get('workers_lost', 0)} workers lost, "
              f"{d['cluster'].get('task_retries', 0)} retries.  Completed: {d['completed']:,} of {n:,}."]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps(r, indent=1, default=str))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
