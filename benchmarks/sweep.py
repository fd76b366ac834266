"""Benchmark of the sweep engine (issue 4) on this machine.

Scenarios: benchmark-like train 2 re-made with N vehicles (2 L + wagons + 2 L + wagons, wagons in pairs),
600 s of its schedule, RK4 at 2 ms (the base file's step), a random design over autocoupler slack,
stiffness scale and wagon mass (every scenario differs).

Measures, in one run:

1. ``modes`` — the same batch computed in this process: one ``integrate()`` per scenario (no batching),
   the batch kernel with ``prange`` on 1 and 2 threads, and one method call per scenario from 2 Python
   threads (``mode="threads"``): scenarios/s (median of ``--repeats``).
2. ``overhead`` — the same batches computed (a) in one process without dask or zarr (prange, 2
   threads) and (b) by ``hpcrail sweep`` on an embedded LocalCluster (2 single-threaded workers)
   writing the zarr store: wall of the fan-out, scenarios/s, overhead = b / a - 1 (cluster start-up
   and per-worker kernel loading reported separately), interleaved repeats.
3. ``scale`` — ``--scenarios`` (default 10 000) through dask: expansion time, fan-out wall and
   scenarios/s, peak scheduler and driver memory (sampled every second), store bytes per scenario.
4. ``target`` — 100-vehicle scenarios on dask: scenarios/s with rk4 and dopri5 against the 20/s target.

Usage::

    python benchmarks/sweep.py                       # everything, full size (hours on 2 cores)
    python benchmarks/sweep.py --scale-duration 5    # the 10 000-scenario run on 5 s scenarios
    python benchmarks/sweep.py --quick               # small sizes, to check the script

Writes benchmarks/results/sweep.md.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail.kinds import validate_document  # noqa: E402
from hpcrail.integrators import integrate  # noqa: E402
from hpcrail.kinds import get as get_kind  # noqa: E402
from hpcrail.kinds.ltd.problem import ltd_problem  # noqa: E402
from hpcrail.kinds.ltd.run import finish  # noqa: E402
from hpcrail.kinds.ltd.safety import sample_grid  # noqa: E402
from hpcrail.results.dataset import build_dataset  # noqa: E402
from hpcrail.sweep.cluster import make_client  # noqa: E402
from hpcrail.sweep.runner import make_tasks, run_sweep, warm_cache  # noqa: E402
from hpcrail.sweep.spec import expand  # noqa: E402
from hpcrail.sweep.store import make_layout  # noqa: E402
from hpcrail.sweep.worker import compute_rows  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "sweep.md"


def consist(n: int) -> list:
    w = n - 4
    wa = 2 * (w // 4)
    return [{"type": "loco", "count": 2}, {"type": "wagon", "count": wa, "pairs": "drawbar"},
            {"type": "loco", "count": 2}, {"type": "wagon", "count": w - wa, "pairs": "drawbar"}]


def write_spec(path: Path, *, n_scen: int, n_veh: int, duration: float, method: str = "rk4",
               batch_size: int = 64, envelopes: bool = True, seed: int = 1, rtol: float = 1e-6) -> Path:
    s = {"name": path.stem, "base": str(ROOT / "configs" / "trains" / "train2.yaml"),
         "set": {"simulation.duration_s": duration, "output.reference_coupler": None, "consist": consist(n_veh),
                 "integrator.method": method},
         "parameters": {"connection_types.autocoupler.slack_mm": {"uniform": [0, 30]},
                        "connection_types.autocoupler.stiffness_scale": {"uniform": [0.7, 1.5]},
                        "vehicle_types.wagon.mass_t": {"uniform": [90, 120]}},
         "design": "random", "samples": n_scen, "seed": seed, "outputs": {"envelopes": envelopes},
         "batch_size": batch_size}
    if method != "rk4":
        s["set"]["integrator.rtol"] = rtol
    path.write_text(yaml.safe_dump(s, sort_keys=False))
    return path


def quiet(*_a, **_k):
    pass


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# ------------------------------------------------------------------------------------------------
def bench_modes(tmp: Path, n: int, n_veh: int, duration: float, repeats: int) -> list:
    spec = write_spec(tmp / "modes.yaml", n_scen=n, n_veh=n_veh, duration=duration, batch_size=n)
    exp = expand(spec)
    warm_cache(exp)
    lay = make_layout(exp, n)
    (_key, task), = make_tasks(exp, lay, tmp / "none.zarr", np.ones(n, bool))

    def one_by_one():
        """The same work per scenario (validate, build, integrate, dataset) with the plain driver."""
        for p in exp.points:
            sc = validate_document(exp.scenario_doc(p))
            model, prob = ltd_problem(sc)
            t_req = np.array([duration])
            sol = integrate(prob, sc.integrator.method, sample_grid(sc, t_req), duration, n_chunks=1,
                            **sc.integrator.kwargs())
            build_dataset(get_kind("ltd"), sc, finish(sc, (model, t_req), sol), attrs=False)

    def batch(mode, threads):
        task.mode, task.threads = mode, threads
        compute_rows(task)

    cases = [("integrate() one by one (no batch, 1 core)", one_by_one),
             ("batch kernel, prange, 1 thread", lambda: batch("prange", 1)),
             ("batch kernel, prange, 2 threads", lambda: batch("prange", 2)),
             ("one call per scenario from 2 threads", lambda: batch("threads", 2))]
    times = {name: [] for name, _ in cases}
    for _ in range(repeats):
        for name, fn in cases:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return [(name, n / statistics.median(ts), statistics.median(ts)) for name, ts in times.items()]


def baseline_in_process(exp, batch_size: int, threads: int = 2) -> float:
    """The sweep's batches computed in this process: no dask, no zarr."""
    lay = make_layout(exp, batch_size)
    tasks = make_tasks(exp, lay, Path("/nonexistent.zarr"), np.ones(exp.size, bool), mode="prange", threads=threads)
    t0 = time.perf_counter()
    for _k, task in tasks:
        compute_rows(task)
    return time.perf_counter() - t0


class MemorySampler:
    """Peak RSS of the scheduler (via the client) and of this process, sampled every ``dt`` s."""

    def __init__(self, client, dt: float = 1.0):
        import psutil

        self.client, self.dt = client, dt
        self.peak_sched = 0
        self.peak_driver = 0
        self._me = psutil.Process()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                rss = self.client.run_on_scheduler(_scheduler_rss)
                self.peak_sched = max(self.peak_sched, rss)
            except Exception:  # noqa: BLE001 - the cluster may be closing
                pass
            self.peak_driver = max(self.peak_driver, self._me.memory_info().rss)
            self._stop.wait(self.dt)

    def __enter__(self):
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join()


def _scheduler_rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def dask_run(spec: Path, store: Path, client, *, sample_memory: bool = False):
    if store.exists():
        shutil.rmtree(store)
    mem = None
    t0 = time.perf_counter()
    if sample_memory:
        with MemorySampler(client) as mem:
            res = run_sweep(spec, store, client=client, progress=False, say=quiet)
    else:
        res = run_sweep(spec, store, client=client, progress=False, say=quiet)
    total = time.perf_counter() - t0
    assert res.counts["pending"] == 0, res.counts
    return res, total, mem


def bench_overhead(tmp: Path, n: int, n_veh: int, duration: float, batch_size: int, repeats: int) -> dict:
    spec = write_spec(tmp / "overhead.yaml", n_scen=n, n_veh=n_veh, duration=duration, batch_size=batch_size)
    exp = expand(spec)
    warm_cache(exp)
    t0 = time.perf_counter()
    client, close = make_client(workers=2, dashboard_address=":0")
    start = time.perf_counter() - t0
    t0 = time.perf_counter()
    client.run(_warm_worker, str(spec))        # per-worker kernel loading, measured once
    worker_load = time.perf_counter() - t0
    base, dsk = [], []
    try:
        for _ in range(repeats):
            base.append(baseline_in_process(exp, batch_size))
            res, _total, _ = dask_run(spec, tmp / "overhead.zarr", client)
            dsk.append(res.seconds)
    finally:
        close()
    b, d = statistics.median(base), statistics.median(dsk)
    return {"n": n, "base": b, "dask": d, "start": start, "worker_load": worker_load, "base_all": base,
            "dask_all": dsk, "overhead": d / b - 1.0, "overhead_with_start": (d + start + worker_load) / b - 1.0}


def _cluster_cpu(client) -> float:
    """CPU seconds used so far by the cluster's worker processes (user + system)."""
    def cpu():
        t = os.times()
        return t.user + t.system
    return float(sum(client.run(cpu).values()))


def _warm_worker(spec: str) -> float:
    from hpcrail.sweep.runner import warm_cache as wc
    from hpcrail.sweep.spec import expand as ex

    return wc(ex(spec), quiet)


def bench_scale(tmp: Path, n: int, n_veh: int, duration: float, batch_size: int) -> dict:
    spec = write_spec(tmp / "scale.yaml", n_scen=n, n_veh=n_veh, duration=duration, batch_size=batch_size)
    t0 = time.perf_counter()
    exp = expand(spec)
    t_exp = time.perf_counter() - t0
    client, close = make_client(workers=2, dashboard_address=":0")
    try:
        client.run(_warm_worker, str(spec))
        rss0 = client.run_on_scheduler(_scheduler_rss)
        res, total, mem = dask_run(spec, tmp / "scale.zarr", client, sample_memory=True)
    finally:
        close()
    store = tmp / "scale.zarr"
    return {"n": n, "duration": duration, "expand": t_exp, "fanout": res.seconds, "total": total,
            "rate": res.ran / res.seconds, "sched_mb": mem.peak_sched / 2 ** 20, "driver_mb": mem.peak_driver / 2 ** 20,
            "sched_growth_mb": (mem.peak_sched - rss0) / 2 ** 20,
            "bytes_per_scenario": du(store) / n, "tasks": -(-n // batch_size), "completed": res.counts["completed"]}


def bench_target(tmp: Path, n: int, duration: float, methods: str = "rk4,dopri5:1e-6") -> list:
    """``methods``: comma-separated ``name[:rtol]`` (rk4 runs at the scenario's 2 ms step)."""
    rows = []
    client, close = make_client(workers=2, dashboard_address=":0")
    try:
        for entry in methods.split(","):
            method, _, rtol = entry.partition(":")
            tag = entry.replace(":", "_")
            spec = write_spec(tmp / f"target_{tag}.yaml", n_scen=n, n_veh=100, duration=duration, method=method,
                              batch_size=max(1, n // 8), rtol=float(rtol or 1e-6))
            exp = expand(spec)
            warm_cache(exp)
            client.run(_warm_worker, str(spec))
            load0 = os.getloadavg()[0]
            c0 = _cluster_cpu(client)
            res, _total, _ = dask_run(spec, tmp / f"target_{tag}.zarr", client)
            cpu = _cluster_cpu(client) - c0
            # the same work in this process on one thread, no dask/zarr: scenarios per CPU-second (robust to
            # other processes on a shared machine; 2 idle cores give about twice this, less the overhead)
            sub = write_spec(tmp / f"target_{tag}_one.yaml", n_scen=min(n, 64), n_veh=100, duration=duration,
                             method=method, batch_size=min(n, 64) // 4 or 1, rtol=float(rtol or 1e-6))
            c1 = time.process_time()
            baseline_in_process(expand(sub), min(n, 64) // 4 or 1, threads=1)
            per_cpu = min(n, 64) / (time.process_time() - c1)
            rows.append((entry, n, res.ran / res.seconds, res.counts["completed"], per_cpu, res.ran / cpu,
                         load0, os.getloadavg()[0]))
    finally:
        close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenarios", type=int, default=10_000, help="scenarios of the scale run")
    ap.add_argument("--vehicles", type=int, default=50)
    ap.add_argument("--duration", type=float, default=600.0, help="simulated seconds per scenario")
    ap.add_argument("--scale-duration", type=float, default=None, help="simulated seconds in the scale run")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--modes-scenarios", type=int, default=16)
    ap.add_argument("--overhead-scenarios", type=int, default=256)
    ap.add_argument("--target-scenarios", type=int, default=32)
    ap.add_argument("--target-methods", default="rk4,dopri5:1e-6,trbdf2:1e-4,radau5:1e-4",
                    help="methods of the 20 scenarios/s target, name[:rtol] comma-separated")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="modes,overhead,scale,target")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (checks the script, numbers meaningless)")
    ap.add_argument("--out", type=Path, default=OUT, help="result file (markdown)")
    args = ap.parse_args()
    if args.quick:
        args.scenarios, args.duration, args.modes_scenarios = 200, 5.0, 4
        args.overhead_scenarios, args.target_scenarios, args.repeats, args.batch_size = 16, 4, 1, 8
    scale_duration = args.scale_duration or args.duration
    only = set(args.only.split(","))
    cmd = "python benchmarks/sweep.py " + " ".join(sys.argv[1:])
    tmp = Path(tempfile.mkdtemp(prefix="hpcrail-bench-sweep-"))
    load0 = os.getloadavg()[0]
    lines = [f"# Sweep benchmark ({args.vehicles}-vehicle train 2 variant, {args.duration:g} s simulated, RK4 2 ms)", "",
             f"Machine: {os.cpu_count()} cores, shared (load average {load0:.1f} at start).  Command: `{cmd}`.", ""]
    try:
        if "modes" in only:
            rows = bench_modes(tmp, args.modes_scenarios, args.vehicles, args.duration, args.repeats)
            base = rows[0][1]
            lines += [f"## Batch execution modes ({args.modes_scenarios} scenarios, one process, median of "
                      f"{args.repeats})", "", "| mode | scenarios/s | wall [s] | vs one by one |", "|---|---|---|---|"]
            lines += [f"| {name} | {r:.3f} | {w:.2f} | {r / base:.2f}x |" for name, r, w in rows]
            lines.append("")
            print("\n".join(lines[-len(rows) - 4:]), flush=True)
        if "overhead" in only:
            o = bench_overhead(tmp, args.overhead_scenarios, args.vehicles, args.duration, args.batch_size,
                               args.repeats)
            lines += [f"## dask + zarr overhead ({o['n']} scenarios, batches of {args.batch_size}, median of "
                      f"{args.repeats} interleaved runs)", "",
                      "| execution | wall [s] | scenarios/s |", "|---|---|---|",
                      f"| one process, no dask, no zarr (prange, 2 threads) | {o['base']:.1f} | {o['n'] / o['base']:.3f} |",
                      f"| hpcrail sweep, LocalCluster 2 workers x 1 thread, zarr store | {o['dask']:.1f} | "
                      f"{o['n'] / o['dask']:.3f} |", "",
                      f"- overhead of dask + zarr: **{100 * o['overhead']:+.1f} %** (fan-out wall); including the "
                      f"one-off cluster start-up ({o['start']:.1f} s) and per-worker kernel loading "
                      f"({o['worker_load']:.1f} s): {100 * o['overhead_with_start']:+.1f} %.",
                      f"- all runs [s]: no dask {', '.join(f'{x:.1f}' for x in o['base_all'])}; dask "
                      f"{', '.join(f'{x:.1f}' for x in o['dask_all'])}.", ""]
            print("\n".join(lines[-9:]), flush=True)
        if "scale" in only:
            s = bench_scale(tmp, args.scenarios, args.vehicles, scale_duration, args.batch_size)
            lines += [f"## Scale: {s['n']:,} scenarios of {s['duration']:g} s on dask ({s['tasks']} tasks)", "",
                      "| quantity | value |", "|---|---|",
                      f"| expansion (validate + hash every scenario, driver) | {s['expand']:.1f} s "
                      f"({1e3 * s['expand'] / s['n']:.2f} ms/scenario) |",
                      f"| fan-out wall (compute + zarr writes) | {s['fanout']:.1f} s |",
                      f"| throughput | **{s['rate']:.2f} scenarios/s** |",
                      f"| completed | {s['completed']:,} |",
                      f"| peak RSS of the driver process, which hosts the LocalCluster scheduler | "
                      f"{s['sched_mb']:.0f} MiB |",
                      f"| its growth during the run (scheduler state, futures, progress) | "
                      f"{s['sched_growth_mb']:+.0f} MiB |",
                      f"| store size per scenario (metrics + envelopes of {args.vehicles - 1} couplers) | "
                      f"{s['bytes_per_scenario']:.0f} bytes |", ""]
            print("\n".join(lines[-13:]), flush=True)
        if "target" in only:
            rows = bench_target(tmp, args.target_scenarios, args.duration, args.target_methods)
            lines += [f"## Target: 100-vehicle, {args.duration:g} s scenarios on 2 cores (target >= 20 scenarios/s)", "",
                      "Wall rate on the (shared) machine; worker CPU: scenarios per CPU-second of the 2 dask "
                      "workers during the run; one process: the same scenarios computed in this process on one "
                      "thread without dask/zarr (thread-independent of the machine load).", "",
                      "| method | scenarios | scenarios/s (wall) | completed | gap to 20/s | per worker CPU-s | "
                      "per CPU-s, one process | 2 × one process | load before / after |",
                      "|---|---|---|---|---|---|---|---|---|"]
            lines += [f"| {m} | {n} | {r:.3f} | {c} | {20 / r:.2f}x | {wc:.1f} | {pc:.1f} | {2 * pc:.1f} | "
                      f"{l0:.1f} / {l1:.1f} |" for m, n, r, c, pc, wc, l0, l1 in rows]
            lines.append("")
            print("\n".join(lines[-len(rows) - 4:]), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    lines.append(f"Load average at the end: {os.getloadavg()[0]:.1f}.  git: "
                 f"{subprocess.run(['git', '-C', str(ROOT), 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
