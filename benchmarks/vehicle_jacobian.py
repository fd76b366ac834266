"""The railway vehicle's structured Jacobian (``models/vehicle/jacobian.py:vehicle_jac``), this tree against a base
revision: cold compile time, cost per call and the matrices themselves.

For each tree a fresh process with an empty numba cache builds the Manchester wagon
(configs/wheelrail/manchester_R500_irregular.yaml, KEC and LUT), integrates 12 s with the scenario's method to get
visited states, then times the first ``vehicle_jac`` call (its compilation; the right-hand side is compiled by
then) and hashes the Jacobians at 25 visited states per contact method.  Then ``--repeats`` warm processes per
tree, interleaved (base, this, ...), time ``--calls`` calls at the middle state (thread CPU time per call).

Usage:  python benchmarks/vehicle_jacobian.py [--base 1ee172c] [--repeats 3] [--calls 300]
Writes benchmarks/results/vehicle_jacobian.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from serial_hotpath import base_tree, child_json  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "vehicle_jacobian.md"

CHILD = r"""
import hashlib, json, sys, time
from pathlib import Path
import numpy as np
from hpcrail.kinds import load_scenario
from hpcrail.kinds.railway_vehicle.build import build_railway_vehicle
from hpcrail.kinds.railway_vehicle.run import solve
from hpcrail.models.vehicle.jacobian import jac_work_size, vehicle_jac
tree, calls = Path(sys.argv[1]), int(sys.argv[2])
import hpcrail
assert Path(hpcrail.__file__).resolve().is_relative_to(tree.resolve()), hpcrail.__file__   # the tree asked for
out = {"compile_s": None, "digest": {}, "call_us": {}}
h = hashlib.sha256()
for contact in ("kec", "lut"):
    sc, _ = load_scenario(tree / "configs/wheelrail/manchester_R500_irregular.yaml",
                          ["simulation.duration_s=12", f"contact.method={contact}"])
    model = build_railway_vehicle(sc)
    P = model.params
    sol = solve(sc, model)
    n = P.n_state
    J = np.zeros((n, n))
    work = np.zeros(jac_work_size(P))
    idx = np.linspace(0, len(sol.t) - 1, 25).astype(int)
    for i, k in enumerate(idx):
        y = np.ascontiguousarray(sol.y[k])
        t0 = time.perf_counter()
        vehicle_jac(float(sol.t[k]), y, P, np.zeros(0), J, work)
        if out["compile_s"] is None:
            out["compile_s"] = time.perf_counter() - t0
        h.update(J.tobytes())
    k = idx[12]
    y = np.ascontiguousarray(sol.y[k])
    c0 = time.thread_time()
    for _ in range(calls):
        vehicle_jac(float(sol.t[k]), y, P, np.zeros(0), J, work)
    out["call_us"][contact] = 1e6 * (time.thread_time() - c0) / calls
out["digest"] = h.hexdigest()[:16]
print(json.dumps(out))
"""


def run(tree: Path, calls: int, cache: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=cache, HPCRAIL_COMPILE_JOBS="1")
    return child_json(CHILD, [tree, calls], env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="1ee172c")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    trees = {"base": base_tree(a.base), "this": ROOT}
    caches = {k: tempfile.mkdtemp(prefix=f"nbcache-{k}-") for k in trees}
    cold = {k: run(t, a.calls, caches[k]) for k, t in trees.items()}
    for k, v in cold.items():
        print(k, "cold", v, flush=True)
    warm = {k: [] for k in trees}
    for _ in range(a.repeats):
        for k, t in trees.items():
            warm[k].append(run(t, a.calls, caches[k]))
            print(k, warm[k][-1], flush=True)
    loads = [cold[k]["load"] for k in trees] + [r["load"] for v in warm.values() for r in v]
    med = {k: {c: float(np.median([r["call_us"][c] for r in v])) for c in ("kec", "lut")} for k, v in warm.items()}
    digests = {k: {cold[k]["digest"]} | {r["digest"] for r in warm[k]} for k in trees}
    lines = ["# The railway vehicle's structured Jacobian: compile time and cost per call", "",
             f"`python benchmarks/vehicle_jacobian.py --base {a.base} --repeats {a.repeats} --calls {a.calls}`; "
             "Manchester wagon (configs/wheelrail/manchester_R500_irregular.yaml, 70 states), 12 s integrated for "
             "visited states.  Compile: wall time of the first `vehicle_jac` call in a process with an empty numba "
             "cache (the right-hand side already compiled).  Call: thread CPU time per call at the middle visited "
             f"state, median over {a.repeats} warm processes per tree (interleaved).  Fingerprint: the Jacobians at "
             f"25 visited states for KEC and LUT.  1-minute load average {min(loads):.2f}-{max(loads):.2f} on "
             f"{os.cpu_count()} cores.", "",
             "| tree | compile [s] | call KEC [µs] | call LUT [µs] | Jacobians fingerprint |", "|---|---|---|---|---|"]
    for k in trees:
        lines.append(f"| {k} ({a.base if k == 'base' else 'this branch'}) | {cold[k]['compile_s']:.1f} | "
                     f"{med[k]['kec']:.0f} | {med[k]['lut']:.0f} | {', '.join(sorted(digests[k]))} |")
    lines += ["", f"Ratio this/base per call: KEC {med['this']['kec'] / med['base']['kec']:.3f}, LUT "
              f"{med['this']['lut'] / med['base']['lut']:.3f}; compile {cold['this']['compile_s'] / cold['base']['compile_s']:.2f}; "
              f"bitwise the same Jacobians: {digests['this'] == digests['base']}.", ""]
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
