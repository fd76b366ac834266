"""Distributed-state (``partition.state: distributed``) against serial and shared-state threads, in one
process: longer integrations than ``benchmarks/partition.py`` (whose runs start a new process each), so that
start-up effects (first touch of the workers' vectors) do not weigh on the 100 000-vehicle rows.

Train 4 and long consists built from it (``partition.consist_overrides``), moving at 40 km/h, 2 blocks on 2
threads; each repetition runs serial, spmd2, threads2 one after the other (interleaved) after a warm-up round;
integration wall time (the dataset's ``wall_time``, compilation excluded), median and minimum of the
repetitions, ratio serial / variant, and the 1-minute load average after each round.

Usage:  python benchmarks/partition_inprocess.py N DURATION_S REPEATS [rk4|bdf2]
Prints one line per repetition and the medians; the numbers quoted in docs/performance.md come from it.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from partition import TRAIN4, consist_overrides  # noqa: E402

from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.simulate import run_scenario  # noqa: E402

CASES = (("serial", ["partition.backend=off"]),
         ("spmd2", ["partition.backend=threads", "partition.state=distributed", "partition.threads=2"]),
         ("threads2", ["partition.backend=threads", "partition.state=shared", "partition.threads=2"]))


def main():
    n, dur, reps = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
    method = sys.argv[4] if len(sys.argv) > 4 else "rk4"
    base = consist_overrides(n) + [f"simulation.duration_s={dur}", "simulation.initial_speed_kmh=40",
                                   f"integrator.method={method}", f"output.interval_s={dur}",
                                   "output.reference_coupler=1", "partition.blocks=2"]
    if method == "rk4":
        base.append("integrator.step_s=0.002")
    res: dict = {}
    loads = []
    for rep in range(reps + 1):  # round 0: warm-up (compilation, cache loading)
        for name, over in CASES:
            ds = run_scenario(load_scenario(TRAIN4, base + over)[0])
            if rep:
                res.setdefault(name, []).append(float(ds.wall_time))
        loads.append(os.getloadavg()[0])
        if rep:
            print(rep, {k: round(v[-1], 3) for k, v in res.items()}, f"load {loads[-1]:.2f}", flush=True)
    med = {k: float(np.median(v)) for k, v in res.items()}
    mn = {k: float(np.min(v)) for k, v in res.items()}
    print(f"{method} {n} vehicles {dur} s: median [s] " + ", ".join(f"{k} {v:.3f}" for k, v in med.items())
          + "; speed-up " + ", ".join(f"{k} {med['serial'] / v:.2f}x" for k, v in med.items() if k != "serial")
          + "; min-based " + ", ".join(f"{k} {mn['serial'] / v:.2f}x" for k, v in mn.items() if k != "serial")
          + f"; load {min(loads):.2f}-{max(loads):.2f}")


if __name__ == "__main__":
    main()
