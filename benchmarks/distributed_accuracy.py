"""How far apart distributed and shared state land with an adaptive method (issue 31 item 7, issue 25).

With shared state one integrator drives the (parallel) right-hand side and takes the serial method's steps;
with distributed state every worker integrates its own blocks and every error norm is a sum of per-block
partial sums: the step sequences agree only to rounding, then drift apart where the controller's decisions
flip, and the two runs are two solutions within the method's tolerance.  This script measures the difference
on a shipped train (default: train 4 on its paper blocks, the full 3 863 s trip, BDF2 at the config's rtol
5e-5): the largest difference of the coupler-force series and of the per-coupler draft/buff envelopes, both
relative to the largest force of the run, and the step counts.  RK4 (fixed step) is printed alongside: it is
bitwise the same in both.

Usage:  python benchmarks/distributed_accuracy.py [--config configs/trains/train4_blocks.yaml] [--methods bdf2,rk4]
        [--set simulation.duration_s=600 ...]
Writes benchmarks/results/distributed_accuracy.md.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "results" / "distributed_accuracy.md"


def main():
    from hpcrail.kinds import load_scenario
    from hpcrail.simulate import run_scenario

    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(ROOT / "configs" / "trains" / "train4_blocks.yaml"))
    ap.add_argument("--methods", default="bdf2,rk4")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    load0 = os.getloadavg()[0]
    rows = []
    for m in a.methods.split(","):
        over = list(a.set) + [f"integrator.method={m}", "partition.backend=threads", "partition.threads=2"]
        if m == "rk4":
            over.append("integrator.step_s=0.0005")
        ds = {st: run_scenario(load_scenario(a.config, over + [f"partition.state={st}"])[0])
              for st in ("shared", "distributed")}
        sh, di = ds["shared"], ds["distributed"]
        fmax = float(np.nanmax(np.abs(sh.coupler_force.values)))
        series = float(np.nanmax(np.abs(sh.coupler_force.values - di.coupler_force.values))) / fmax
        env = max(float(np.nanmax(np.abs(sh[v].values - di[v].values)))
                  for v in ("coupler_max_draft_force", "coupler_max_buff_force")) / fmax
        rows.append((m, float(sh.attrs.get("duration_s", sh.time.values[-1])), int(sh.nsteps), int(di.nsteps),
                     fmax, series, env, di.attrs.get("partition", "")))
        print(rows[-1], flush=True)
    load1 = os.getloadavg()[0]
    lines = ["# Distributed vs shared state: how far apart the two runs land", "",
             f"`python benchmarks/distributed_accuracy.py --config {Path(a.config).relative_to(ROOT)} --methods "
             f"{a.methods}" + "".join(f" --set {s}" for s in a.set) + f"`; load {load0:.2f} / {load1:.2f}.", "",
             "Both runs on 2 threads; differences relative to the largest coupler force of the run.", "",
             "| method | simulated [s] | steps shared / distributed | largest force [kN] | force series | "
             "envelopes | partition |", "|---|---|---|---|---|---|---|"]
    for m, T, ks, kd, f, s, e, part in rows:
        lines.append(f"| {m} | {T:g} | {ks:,} / {kd:,} | {f / 1e3:.1f} | {100 * s:.2f} % | {100 * e:.2f} % | {part} |")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
