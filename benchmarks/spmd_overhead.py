"""Where one distributed-state worker loses against the serial run (issue 25): per-call cost of the LTD
right-hand side and observer, monolithic against the distributed-state kernels of one worker owning 2 blocks
(``partition.state: distributed``, ``threads: 1``), and the parts of the latter (the exchange export, the
ranges' evaluation; the observer's ranges and fold).  Kernels compiled first; per call the best of ``--repeats``
loops of ``--calls`` calls (wall time, one thread, nothing else should run).

Usage:  python benchmarks/spmd_overhead.py [--vehicles 20000] [--calls 400] [--repeats 5]
Writes benchmarks/results/spmd_overhead.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
OUT = HERE / "results" / "spmd_overhead.md"


def best_us(f, args, calls: int, repeats: int) -> float:
    """Best per-call wall time [µs] over ``repeats`` loops of ``calls`` calls."""
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _i in range(calls):
            f(*args)
        out.append((time.perf_counter() - t0) / calls * 1e6)
    return min(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vehicles", type=int, default=20000)
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)

    from partition import TRAIN4, consist_overrides

    from hpcrail.kinds import load_scenario
    from hpcrail.kinds.ltd.problem import ltd_problem
    from hpcrail.models.ltd.kernel import ltd_observe_tables, ltd_rhs_tables
    from hpcrail.partition.layout import layout_from_blocks
    from hpcrail.partition.ltd import (
        ltd_observe_spmd, ltd_rhs_spmd, partitioned_params, spmd_eval, spmd_export, spmd_observe_fold,
        spmd_observe_ranges, worker_params,
    )

    sc, _ = load_scenario(TRAIN4, consist_overrides(a.vehicles) + ["simulation.initial_speed_kmh=40",
                                                                    "simulation.duration_s=1"])
    model, prob = ltd_problem(sc)
    p = model.params
    if p.n_noninertial or p.air_brake == 2:
        raise SystemExit("the table-law LTD kernels only")
    y = model.y0.copy()
    yw = y.copy()
    d = np.zeros_like(y)
    acc = np.array(prob.acc0, dtype=float).copy()
    accw = acc.copy()
    wp = worker_params(partitioned_params(p, layout_from_blocks(model.n_vehicles, 2)), np.array([0, 2], np.int64))[0]
    cases = [("right-hand side, monolithic (`ltd_rhs_tables`)", ltd_rhs_tables, (0.0, y, p, d)),
             ("right-hand side, one worker (`ltd_rhs_spmd`)", ltd_rhs_spmd, (0.0, yw, wp, d)),
             ("  of which the exchange export (`spmd_export`)", spmd_export, (yw, wp)),
             ("  of which the ranges (`spmd_eval`)", spmd_eval, (0.0, yw, wp, d)),
             ("observer, monolithic (`ltd_observe_tables`)", ltd_observe_tables, (0.0, y, p, acc)),
             ("observer, one worker (`ltd_observe_spmd`)", ltd_observe_spmd, (0.0, yw, wp, accw)),
             ("  of which the ranges (`spmd_observe_ranges`)", spmd_observe_ranges, (0.0, yw, wp, accw)),
             ("  of which the fold (`spmd_observe_fold`)", spmd_observe_fold, (0.0, yw, wp, accw))]
    for _name, f, args in cases:      # compile
        f(*args)
    load0 = os.getloadavg()[0]
    rows = [(name, best_us(f, args, a.calls, a.repeats)) for name, f, args in cases]
    load1 = os.getloadavg()[0]
    lines = ["# One distributed-state worker against the serial LTD kernels", "",
             f"`python benchmarks/spmd_overhead.py --vehicles {a.vehicles} --calls {a.calls} --repeats {a.repeats}`; "
             f"train 4 made {a.vehicles:,} vehicles long (benchmarks/partition.py's layout), at its initial state; one "
             f"worker owning 2 blocks; per call the best of {a.repeats} loops of {a.calls} calls (wall time, one "
             f"thread); load average {load0:.2f} before / {load1:.2f} after.", "",
             "| function | µs per call | ns per vehicle |", "|---|---|---|"]
    for name, us in rows:
        lines.append(f"| {name} | {us:.1f} | {1e3 * us / a.vehicles:.2f} |")
    text = "\n".join(lines) + "\n"
    Path(a.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
