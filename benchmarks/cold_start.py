"""Cold start of a first run (issue 17 item 5, issue 30 item 5): how long a first run takes from an empty numba
cache, what it compiles, and (``--families``) one row per shipped scenario family.

Every cold run gets its own empty ``XDG_CACHE_HOME`` (so numba compiles every kernel, as after ``pip install``),
in a fresh process.  Two modes:

* ``--scenario FILE`` (the issue-17 measurement, default train 4): ``hpcrail run --json`` with and without the
  compile helper process (``HPCRAIL_COMPILE_JOBS=2`` / ``=1``), interleaved rounds; the median (and range) of the
  compile/load time before the first step (the dataset's ``compile_time``), of the process's wall time and of
  its CPU time (helper included), and one warm run.  Writes ``benchmarks/results/cold_start.md``.
* ``--families`` (issue 30): for each shipped scenario family (:data:`FAMILIES`) a fresh process runs the
  family's scenario for ``--duration`` simulated seconds (0.2 s: the time to the first step plus a negligible
  integration), instrumented: wall time of the imports, of loading the scenario, and of the run (build,
  compilation, integration, outputs); the seconds during which something compiled (``compile_notice``: this
  process and the compile helper); the top-level numba compilations of this process with their durations
  (the ``numba:compile`` events of depth 1: nested compilations are inside them); CPU time (helper
  included); then the same run again on the filled cache (warm).  Writes
  ``benchmarks/results/cold_start_families.md``.

Compile times are meaningless on a loaded machine: the load averages at the start and end of every run are
recorded next to it; re-run on a quiet machine for the README's numbers.

Usage:
  python benchmarks/cold_start.py --families [--only trains,mixed] [--repeats 1] [--duration 0.2]
  python benchmarks/cold_start.py [--repeats 3] [--scenario configs/trains/train4.yaml] [--pythonpath DIR]
``--pythonpath DIR`` runs another checkout (e.g. a ``git worktree`` of an older commit) for a before/after.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "cold_start.md"
OUT_FAMILIES = ROOT / "benchmarks" / "results" / "cold_start_families.md"

#: one scenario per shipped family: (family, scenario relative to the repository, overrides)
FAMILIES = [
    ("LTD train, BDF2 (train 4)", "configs/trains/train4.yaml", []),
    ("LTD train, RK4 (demo)", "configs/trains/demo.yaml", []),
    ("LTD hidden-vehicle blocks on threads", "configs/trains/train4_blocks.yaml", []),
    ("dry-friction draft gears (event-driven)", "configs/friction/startup_6.yaml", []),
    ("planar train, inertial couplers", "configs/couplers/two_car_loaded.yaml", []),
    ("vertical vehicle on irregular track", "configs/vertical/full_vehicle_track.yaml", []),
    ("railway vehicle, KEC contact (Manchester)", "configs/wheelrail/manchester_R500.yaml", []),
    ("mixed train, short consist (RK4)", "configs/mixed/short_consist_curve.yaml", []),
    ("mixed train, train 4 + wagon (DOPRI5)", "configs/mixed/train4_empty_wagon.yaml", []),
]

#: the instrumented child of ``--families`` (argv: scenario, duration, overrides as JSON)
CHILD = r"""
import json, os, resource, sys, time
t0 = time.perf_counter()
import hpcrail
from hpcrail._numba import compile_notice
from hpcrail.kinds import load_scenario
from hpcrail.simulate import run_scenario
from numba.core import event
t_import = time.perf_counter() - t0
scenario, duration, overrides = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
t1 = time.perf_counter()
sc, _ = load_scenario(scenario, overrides)
d = min(duration, sc.simulation.duration_s)
sc, _ = load_scenario(scenario, [*overrides, f"simulation.duration_s={d!r}"])
t_load = time.perf_counter() - t1
top, depth = [], [0]
class L(event.Listener):
    def on_start(self, ev):
        depth[0] += 1
        if depth[0] == 1:
            top.append([ev.data["dispatcher"].py_func.__module__ + "." + ev.data["dispatcher"].py_func.__qualname__,
                        time.perf_counter(), 0.0])
    def on_end(self, ev):
        if depth[0] == 1:
            top[-1][2] = time.perf_counter() - top[-1][1]
        depth[0] -= 1
listener = L()
event.register("numba:compile", listener)
t2 = time.perf_counter()
with compile_notice(lambda s: None, tick_s=0) as notice:
    ds = run_scenario(sc)
t_run = time.perf_counter() - t2
event.unregister("numba:compile", listener)
agg, count = {}, {}
for name, _t, dur in top:
    agg[name] = agg.get(name, 0.0) + dur
    count[name] = count.get(name, 0) + 1
agg = {(f"{k} x{count[k]}" if count[k] > 1 else k): v for k, v in agg.items()}
print(json.dumps({"import": t_import, "load": t_load, "run": t_run, "compiling": notice.seconds,
                  "kernel_compile_time": float(ds["compile_time"]) if ds is not None else float("nan"),
                  "n_compiles": len(top), "top": sorted(agg.items(), key=lambda kv: -kv[1])[:6],
                  "status": str(ds["status"].values) if ds is not None else "completed"}))
"""


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def _env(cache: str, pythonpath: str | None, jobs: int | None = None) -> dict:
    env = dict(os.environ, XDG_CACHE_HOME=cache, PYTHONPATH=pythonpath or str(ROOT))
    if jobs is not None:
        env["HPCRAIL_COMPILE_JOBS"] = str(jobs)
    env.pop("NUMBA_CACHE_DIR", None)
    return env


def one_run(scenario: str, jobs: int, pythonpath: str | None, cache: str) -> dict:
    """One ``hpcrail run --json`` in a fresh process; cache directory ``cache`` (empty = cold)."""
    env = _env(cache, pythonpath, jobs)
    with tempfile.TemporaryDirectory() as out:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-P", "-m", "hpcrail", "run", str(Path(scenario).resolve()), "--json", "-o",
                            f"{out}/r.zarr"], env=env, capture_output=True, text=True, cwd=out)
        wall = time.perf_counter() - w0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"hpcrail run failed:\n{p.stderr[-3000:]}")
    info = json.loads(p.stdout)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)   # the run and its helper process
    return {"first_step": info["compile_time_s"], "wall": wall, "cpu": cpu}


def family_run(scenario: str, overrides: list, duration: float, pythonpath: str | None, cache: str) -> dict:
    """The instrumented short run of one family in a fresh process (see the module docstring)."""
    env = _env(cache, pythonpath)
    l0 = load()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as work:   # not the checkout: ``python -c`` puts the cwd first on the path
        p = subprocess.run([sys.executable, "-P", "-c", CHILD, scenario, str(duration), json.dumps(overrides)], env=env,
                           capture_output=True, text=True, cwd=work)
    wall = time.perf_counter() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        return {"error": p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}",
                "wall": wall, "loadavg": f"{l0} → {load()}"}
    info = json.loads(p.stdout.strip().splitlines()[-1])
    info.update(wall=wall, cpu=(r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
                loadavg=f"{l0} → {load()}")
    return info


def families(a) -> None:
    chosen = [f for f in FAMILIES if not a.only or any(k.lower() in f[0].lower() or k in f[1] for k in a.only)]
    rows = []
    # the scenarios of the checkout measured (its configs match its schemas), else this checkout's
    croot = Path(a.pythonpath) if a.pythonpath and (Path(a.pythonpath) / "configs").is_dir() else ROOT
    for fam, scen, over in chosen:
        for r in range(a.repeats):
            with tempfile.TemporaryDirectory() as cache:
                cold = family_run(str(croot / scen), over, a.duration, a.pythonpath, cache)
                warm = family_run(str(croot / scen), over, a.duration, a.pythonpath, cache) if "error" not in cold \
                    else {}
            rows.append((fam, scen, cold, warm))
            if "error" in cold:
                print(f"{fam}: FAILED {cold['error']}", flush=True)
                continue
            print(f"{fam} ({scen}): cold {cold['wall']:.1f} s wall (imports {cold['import']:.1f}, load "
                  f"{cold['load']:.1f}, run {cold['run']:.1f}; compiling {cold['compiling']:.1f} s, "
                  f"{cold['n_compiles']} top-level compilations), CPU {cold['cpu']:.1f} s; warm {warm.get('wall', 0):.1f} s;"
                  f" load average {cold['loadavg']}", flush=True)
    who = f"checkout {a.pythonpath}" if a.pythonpath else "this checkout"
    lines = [f"# Cold start per scenario family: a {a.duration:g} s run from an empty numba cache",
             "",
             f"`python benchmarks/cold_start.py --families --repeats {a.repeats} --duration {a.duration:g}` ({who}, "
             f"{time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs).  Each row: a fresh process on an empty "
             "cache, then the same run on the filled cache (warm).  Seconds of wall time; *compiling*: while numba "
             "compiled in this process or the compile helper; CPU: user + system of the process and its helper.  "
             "The load averages (1/5/15 min) at the start → end of the cold run say how much the numbers are worth: "
             "compile times on a loaded machine are not the machine's.",
             "",
             "| family | scenario | cold: total | imports | load | build + compile + run | compiling | CPU | "
             "top-level compilations (largest) | warm: total (compiling) | load avg |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for fam, scen, c, w in rows:
        if "error" in c:
            lines.append(f"| {fam} | `{scen}` | failed: {c['error']} | | | | | | | | {c['loadavg']} |")
            continue
        top = "; ".join(f"{n.split('.')[-1]} {s:.1f}" for n, s in c["top"][:3])
        lines.append(f"| {fam} | `{scen}` | {c['wall']:.1f} | {c['import']:.1f} | {c['load']:.1f} | {c['run']:.1f} | "
                     f"{c['compiling']:.1f} | {c['cpu']:.1f} | {c['n_compiles']}: {top} | {w.get('wall', float('nan')):.1f}"
                     f" ({w.get('compiling', float('nan')):.1f}) | {c['loadavg']} |")
    Path(a.out or OUT_FAMILIES).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--families", action="store_true", help="one row per shipped scenario family")
    ap.add_argument("--only", type=lambda s: [x.strip() for x in s.split(",") if x.strip()], default=None,
                    help="--families: only the families whose name or scenario contains one of these words")
    ap.add_argument("--duration", type=float, default=0.2, help="--families: simulated seconds per run")
    ap.add_argument("--repeats", type=int, default=None)
    ap.add_argument("--scenario", default=str(ROOT / "configs" / "trains" / "train4.yaml"))
    ap.add_argument("--pythonpath", default=None, help="another checkout to measure (PYTHONPATH)")
    ap.add_argument("--jobs", default="2,1", help="HPCRAIL_COMPILE_JOBS values to compare")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.families:
        a.repeats = a.repeats or 1
        families(a)
        return
    a.repeats = a.repeats or 3
    jobs = [int(j) for j in a.jobs.split(",")]
    runs: dict = {j: [] for j in jobs}
    loads = []
    for r in range(a.repeats):
        for j in jobs:
            with tempfile.TemporaryDirectory() as cache:
                loads.append(load())
                res = one_run(a.scenario, j, a.pythonpath, cache)
                if r == 0 and j == jobs[0]:
                    res["warm"] = one_run(a.scenario, j, a.pythonpath, cache)
            runs[j].append(res)
            print(f"round {r + 1}, jobs {j}: first step after {res['first_step']:.1f} s, wall {res['wall']:.1f} s, "
                  f"CPU {res['cpu']:.1f} s (load {loads[-1]})", flush=True)

    def stat(vals):
        v = np.asarray(vals)
        return f"{np.median(v):.1f} ({v.min():.1f}-{v.max():.1f})"

    who = f"checkout {a.pythonpath}" if a.pythonpath else "this checkout"
    lines = [f"# Cold start: `hpcrail run {Path(a.scenario).name}` on an empty numba cache",
             "",
             f"`python benchmarks/cold_start.py --repeats {a.repeats}` ({who}, {time.strftime('%Y-%m-%d %H:%M')}, "
             f"{os.cpu_count()} CPUs; load averages 1/5/15 min at the start of each run: {', '.join(loads)}).",
             "Median (min-max) over the rounds, seconds.", "",
             "| HPCRAIL_COMPILE_JOBS | compile/load before the first step | wall time of the run | CPU time (with helper) |",
             "|---|---|---|---|"]
    for j in jobs:
        lines.append(f"| {j} | {stat([x['first_step'] for x in runs[j]])} | {stat([x['wall'] for x in runs[j]])} "
                     f"| {stat([x['cpu'] for x in runs[j]])} |")
    w = runs[jobs[0]][0]["warm"]
    lines += ["", f"Warm run (cache filled by the first run): {w['first_step']:.2f} s to load the kernels, "
              f"{w['wall']:.1f} s wall, {w['cpu']:.1f} s CPU."]
    Path(a.out or OUT).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
