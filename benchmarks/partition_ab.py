"""A/B of the distributed-state path: this tree against a base revision (default 75f87e3: the separate
``integrators/spmd.py`` copy of RK4 and BDF), serial and 2 threads with distributed state (``spmd2`` of
benchmarks/partition.py), interleaved fresh processes, 20 000 vehicles.

Usage:  python benchmarks/partition_ab.py [--base 75f87e3] [--repeats 3] [--sizes 20000] [--methods rk4,bdf2]
Prints one line per (method, tree, variant): median wall time [s], steps and the load range.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import partition as pb  # noqa: E402
from serial_hotpath import base_tree  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default="75f87e3")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="20000")
    ap.add_argument("--methods", default="rk4,bdf2")
    a = ap.parse_args()
    trees = {"base": base_tree(a.base), "this": HERE.parent}
    tmp = Path(tempfile.mkdtemp())
    for n in (int(x) for x in a.sizes.split(",")):
        for m in a.methods.split(","):
            res = {}
            for tree in trees.values():   # warm-up: compile / load the caches
                pb.TRAIN4 = tree / "configs" / "trains" / "train4.yaml"
                for v in ("serial", "spmd2"):
                    pb.run_once(v, n, tmp, dict(os.environ, PYTHONPATH=str(tree)), m)
            for _ in range(a.repeats):
                for name, tree in trees.items():
                    pb.TRAIN4 = tree / "configs" / "trains" / "train4.yaml"
                    for v in ("serial", "spmd2"):
                        t, k = pb.run_once(v, n, tmp, dict(os.environ, PYTHONPATH=str(tree)), m)
                        res.setdefault((name, v), []).append((t, k, os.getloadavg()[0]))
            for (name, v), r in res.items():
                print(f"{m} {n} {name} {v}: median wall {statistics.median(x[0] for x in r):.3f} s, steps {r[-1][1]}, "
                      f"load {min(x[2] for x in r):.1f}-{max(x[2] for x in r):.1f}", flush=True)


if __name__ == "__main__":
    main()
