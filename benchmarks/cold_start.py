"""Cold start of a first run (issue 17 item 5): time to the first step and total wall time of
``hpcrail run`` on a fresh numba cache, with and without the compile helper process.

Every run gets its own empty ``XDG_CACHE_HOME`` (so numba compiles every kernel, as after ``pip install``),
in a fresh process, interleaved: one run of each configuration, then the next round.  Reported per
configuration: the median (and range) of the compile/load time before the first step (the dataset's
``compile_time``, from ``hpcrail run --json``), of the process's wall time (imports, compilation,
integration, outputs, store) and of its CPU time (user + system, helper included), and one warm run
(cache filled) for comparison.

Configurations: ``HPCRAIL_COMPILE_JOBS=2`` (the integrator compiles in a helper process while the model's
functions compile in the run's process; the default on two or more CPUs) and ``=1`` (all in one process).
``--pythonpath DIR`` runs another checkout (e.g. a ``git worktree`` of an older commit) for a before/after.

Usage:  python benchmarks/cold_start.py [--repeats 3] [--scenario configs/trains/train4.yaml] [--pythonpath DIR]
Writes benchmarks/results/cold_start.md (``--out`` to change; and prints it).
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


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def one_run(scenario: str, jobs: int, pythonpath: str | None, cache: str) -> dict:
    """One ``hpcrail run --json`` in a fresh process; cache directory ``cache`` (empty = cold)."""
    env = dict(os.environ, XDG_CACHE_HOME=cache, HPCRAIL_COMPILE_JOBS=str(jobs))
    env.pop("NUMBA_CACHE_DIR", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    with tempfile.TemporaryDirectory() as out:
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "hpcrail", "run", scenario, "--json", "-o", f"{out}/r.zarr"],
                           env=env, capture_output=True, text=True)
        wall = time.perf_counter() - w0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"hpcrail run failed:\n{p.stderr[-3000:]}")
    info = json.loads(p.stdout)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)   # the run and its helper process
    return {"first_step": info["compile_time_s"], "wall": wall, "cpu": cpu}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scenario", default=str(ROOT / "configs" / "trains" / "train4.yaml"))
    ap.add_argument("--pythonpath", default=None, help="another checkout to measure (PYTHONPATH)")
    ap.add_argument("--jobs", default="2,1", help="HPCRAIL_COMPILE_JOBS values to compare")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
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
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
