"""The serial hot path before and after the one-kernel-per-method refactor (issue 25): train 4's full trip with
BDF2 (the run behind the "1.57x CVODE" figure of docs/performance.md), this tree against a base revision
(default 75f87e3, the last commit with the separate distributed-state copy of the integrators), in one script
run.

Each repetition runs both trees in fresh processes, interleaved (base, this, base, this, ...), so that load
changes hit both alike; inside a process the run is integrated once to load the compiled kernels, then timed
``--inner`` times.  Reported: the thread CPU time of ``integrate`` (median), its wall time, the step count and a
fingerprint of the outputs (the two trees must agree bitwise), the 1-minute load average around each run, and
the ratio this/base of the medians.

Usage:  python benchmarks/serial_hotpath.py [--base 75f87e3] [--repeats 5] [--inner 3]
Writes benchmarks/results/serial_hotpath.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "serial_hotpath.md"

CHILD = r"""
import hashlib, json, sys, time
import numpy as np
from hpcrail.kinds import load_scenario
from hpcrail.kinds.ltd.problem import ltd_problem
from hpcrail.integrators import integrate
from hpcrail.results.sampling import sample_times
import hpcrail
from pathlib import Path
assert Path(hpcrail.__file__).resolve().is_relative_to(Path(sys.argv[1]).resolve().parents[2]), hpcrail.__file__
sc, _ = load_scenario(sys.argv[1], ["partition.backend=off"] + json.loads(sys.argv[3]))
inner = int(sys.argv[2])
model, prob = ltd_problem(sc)
t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
kw = sc.integrator.kwargs()
sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, **kw)   # load the kernels
cpu, wall = [], []
for _ in range(inner):
    c0 = time.thread_time(); w0 = time.perf_counter()
    sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, **kw)
    cpu.append(time.thread_time() - c0); wall.append(time.perf_counter() - w0)
h = hashlib.sha256(np.ascontiguousarray(sol.y).tobytes() + sol.acc.tobytes()).hexdigest()[:16]
print(json.dumps(dict(cpu=cpu, wall=wall, steps=sol.stats["steps"], digest=h, status=sol.status.name)))
"""


def base_tree(rev: str) -> Path:
    """The package at ``rev`` extracted into a temporary directory (``git archive``; no worktree is touched)."""
    d = Path(tempfile.mkdtemp(prefix=f"hpcrail-{rev}-"))
    data = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "hpcrail", "configs"], capture_output=True,
                          check=True).stdout
    tf = d / "src.tar"
    tf.write_bytes(data)
    with tarfile.open(tf) as t:
        t.extractall(d)
    return d


def child_json(code: str, args: list, env: dict) -> dict:
    """Run ``code`` in a fresh Python process with ``args`` and ``env``; its last stdout line parsed as JSON, plus
    the 1-minute load average at its end (``load``).  Raises RuntimeError with the child's stderr tail."""
    # -P: the child's sys.path does not start with the working directory, so a checkout run from its root does
    # not shadow the tree named by PYTHONPATH (it did: before this, both "trees" of an A/B ran this checkout)
    r = subprocess.run([sys.executable, "-P", "-c", code, *map(str, args)], env=env, capture_output=True,
                       text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-3000:])
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["load"] = os.getloadavg()[0]
    return out


def run(tree: Path, inner: int, sets=()) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    env.pop("NUMBA_CACHE_DIR", None)   # each tree its own cache (keyed by its source)
    return child_json(CHILD, [tree / "configs/trains/train4.yaml", inner, json.dumps(list(sets))], env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="75f87e3")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--inner", type=int, default=3)
    ap.add_argument("--set", action="append", default=[], help="overrides of train 4 (e.g. a 20 000-vehicle RK4 "
                    "run: --set consist.2.count=2 --set consist.1.count=9998 --set consist.3.count=9998 --set "
                    "integrator.method=rk4 --set integrator.step_s=0.002 --set simulation.duration_s=0.25)")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    trees = {"base": base_tree(a.base), "this": ROOT}
    for name, tree in trees.items():   # compile / load the caches
        run(tree, 1, a.set)
    res = {k: [] for k in trees}
    for _ in range(a.repeats):
        for name, tree in trees.items():
            res[name].append(run(tree, a.inner, a.set))
            print(name, res[name][-1], flush=True)
    med = {k: (float(np.median([c for r in v for c in r["cpu"]])), float(np.median([w for r in v for w in r["wall"]])))
           for k, v in res.items()}
    steps = {k: v[-1]["steps"] for k, v in res.items()}
    digests = {k: {r["digest"] for r in v} for k, v in res.items()}
    loads = [r["load"] for v in res.values() for r in v]
    lines = ["# Serial hot path before/after the one-kernel-per-method refactor (issue 25)", "",
             f"`python benchmarks/serial_hotpath.py --base {a.base} --repeats {a.repeats} --inner {a.inner}"
             + "".join(f" --set {x}" for x in a.set) + "`; train 4 "
             + ("with the overrides above" if a.set else "full trip (3 863 s), BDF2 rtol 5e-5 (configs/trains/train4.yaml)")
             + ", serial.  Thread CPU time and wall "
             "time of `integrate` (kernels loaded), medians over "
             f"{a.repeats} x {a.inner} runs per tree, trees interleaved in fresh processes; 1-minute load average "
             f"{min(loads):.2f}-{max(loads):.2f} on {os.cpu_count()} cores (shared machine).", "",
             "| tree | CPU [s] | wall [s] | steps | outputs fingerprint |", "|---|---|---|---|---|"]
    for k in trees:
        lines.append(f"| {k} ({a.base if k == 'base' else 'this branch'}) | {med[k][0]:.3f} | {med[k][1]:.3f} | "
                     f"{steps[k]:,} | {', '.join(sorted(digests[k]))} |")
    lines += ["", f"Ratio this/base: CPU {med['this'][0] / med['base'][0]:.3f}, wall {med['this'][1] / med['base'][1]:.3f}; "
              f"bitwise the same outputs: {digests['this'] == digests['base']}.", ""]
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
