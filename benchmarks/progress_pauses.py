"""Cost of the progress pauses (stop 35): a run with a progress callback (every CLI run) against one without,
with the wall-time spaced pauses of ``integrators.contract.next_pause`` and with the old fixed chunks
(``PAUSE_TARGET_S = 0``: a pause every 1/n_chunks of the run).

Cases: train 4 (bdf2, the shipped trip) and the friction consist ``configs/friction/mixed_consist.yaml``
(event-driven runner; it paused 200 times even without a callback before).  Wall time of the integration
(the dataset's ``wall_time``), medians of ``--repeats`` interleaved runs in this process after a warm-up run.

Usage:  python benchmarks/progress_pauses.py [--repeats 3]
Writes benchmarks/results/progress_pauses.md (with the load average before/after).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail.integrators import contract  # noqa: E402
from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.simulate import run_scenario  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "progress_pauses.md"
CASES = {"train4.yaml (bdf2)": ROOT / "configs" / "trains" / "train4.yaml",
         "friction/mixed_consist.yaml": ROOT / "configs" / "friction" / "mixed_consist.yaml"}


def wall(sc, progress: bool, target: float) -> float:
    contract.PAUSE_TARGET_S = target
    try:
        ds = run_scenario(sc, progress=(lambda *a: None) if progress else None)
    finally:
        contract.PAUSE_TARGET_S = 0.25
    return float(ds.wall_time)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    l0 = os.getloadavg()[0]
    rows = []
    for name, path in CASES.items():
        sc, _ = load_scenario(path, [])
        run_scenario(sc)
        res = {"no callback": [], "callback, timed pauses": [], "callback, fixed chunks (old)": []}
        for _ in range(args.repeats):
            res["no callback"].append(wall(sc, False, 0.25))
            res["callback, timed pauses"].append(wall(sc, True, 0.25))
            res["callback, fixed chunks (old)"].append(wall(sc, True, 0.0))
        med = {k: float(np.median(v)) for k, v in res.items()}
        rows.append(f"| {name} | " + " | ".join(f"{v:.3f}" for v in med.values())
                    + f" | {med['callback, fixed chunks (old)'] / med['callback, timed pauses']:.2f}x |")
        print(rows[-1], flush=True)
    l1 = os.getloadavg()[0]
    lines = ["# Progress pauses: cost of a run with a progress callback", "",
             f"`python benchmarks/progress_pauses.py --repeats {args.repeats}`; load average {l0:.2f} before / "
             f"{l1:.2f} after (2 cores).  Integration wall time [s], medians.  The friction runner's old "
             "behaviour without a callback (200 pauses) is the fixed-chunks column.", "",
             "| case | no callback | callback, timed pauses | callback, fixed chunks (old) | old / new |",
             "|---|---|---|---|---|", *rows, ""]
    OUT.write_text("\n".join(lines))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
