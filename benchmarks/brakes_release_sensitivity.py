"""How the release of a long AAR train's rear valves moves with the integration tolerance (issue 24, stop 44).

The rear valves of ``train4_pneumatic.yaml`` (3.9 km of brake pipe, a remote locomotive at vehicle 123) see a weak
release signal; their service pistons are bistable (docs/models.md), so a marginal valve releases at the moment its
pipe first exceeds its reservoir by the release sensitivity, and that moment moves with the tolerance.  This script
runs the first 1 500 s of the trip (the application at 1 300 s, the release at 1 330 s) at the shipped rtol 3e-6 and
at 3e-7 and 1e-7 (bdf2, the shipped atol), in one pass and in two passes (``air_brake.pneumatic.passes``), and
compares each vehicle's release time (``brake_release_time``: the cylinder back below the release level after the
release command) with the one-pass 1e-7 run's, next to the train-level metrics.

Usage:  python benchmarks/brakes_release_sensitivity.py
Writes benchmarks/results/brakes_release_sensitivity.md (and prints it).
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

import hpcrail

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "brakes_release_sensitivity.md"
TRIP = ROOT / "configs" / "trains" / "train4_pneumatic.yaml"
#: (passes, rtol) of the runs; the last is the reference
RUNS = (("one", 3e-6), ("one", 3e-7), ("two", 3e-6), ("two", 3e-7), ("one", 1e-7))


def main():
    warnings.filterwarnings("ignore")
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg()[:2])
    runs = {(n, r): hpcrail.simulate(TRIP, **{"simulation.duration_s": 1500, "integrator.rtol": r,
                                              "air_brake.pneumatic.passes": n,
                                              "output.envelope_check.enabled": False}) for n, r in RUNS}
    ref = runs[RUNS[-1]]["brake_release_time"].values
    lines = ["# Release of the rear valves against the tolerance (train4_pneumatic, 0-1500 s)", "",
             f"`python benchmarks/brakes_release_sensitivity.py`; bdf2, atol as shipped; load {load}.  Release "
             "times relative to the release command [s]; differences against one pass at rtol 1e-7.", "",
             "| passes | rtol | release_time_tail [s] | max buff while braking [kN] | release time difference: median | "
             "worst (vehicle) |", "|---|---|---|---|---|---|"]
    for n, r in RUNS:
        ds = runs[n, r]
        d = np.abs(ds["brake_release_time"].values - ref)
        worst = int(np.nanargmax(d))
        lines.append(f"| {n} | {r:g} | {float(ds['release_time_tail']):.2f} | {float(ds['max_buff_force_braking']) / 1e3:.0f} "
                     f"| {np.nanmedian(d):.3g} | {np.nanmax(d):.3g} ({worst}) |")
    lines += ["", "Release times of every fourth vehicle from 200 (one pass rtol 1e-7 / one pass 3e-6 / two passes "
              "3e-6):", ""] + [
        "    " + " ".join(f"{x:.1f}" for x in runs[k]["brake_release_time"].values[200::4])
        for k in (RUNS[-1], RUNS[0], RUNS[2])]
    text = "\n".join(lines) + "\n"
    print(text)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
