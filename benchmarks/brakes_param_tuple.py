"""What the integrators' parameter tuple costs (stop 46, issue 24/26): the two-pass motion pass of
``train4_pneumatic.yaml`` with its shipped callbacks' tuple ``P`` against the same ``P`` with the full layout's
``LTDParams`` appended (the callbacks index ``P`` by position and never read the appended item, so the arithmetic,
the steps and the results are the same: checked bitwise).  numba passes a tuple argument flattened to every call it
does not inline (the callbacks, ``newton_solve``, ``newton_iterate``), so the difference is the cost of carrying one
more ``LTDParams`` (50 arrays) through them.  Train 4 is timed in the same rounds for scale.

Thread CPU time of the integration (compilation excluded: one warm-up run of each), medians of ``--repeats``
interleaved rounds; one core.

Usage:  python benchmarks/brakes_param_tuple.py [--repeats 5]
Writes benchmarks/results/brakes_param_tuple.md (and prints it).  Records the load average.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from brakes import ROOT, TRAINS, case, run  # noqa: E402
from brakes_two_pass import timed  # noqa: E402

from hpcrail.integrators import integrate  # noqa: E402
from hpcrail.kinds.ltd.two_pass import brake_pass, motion_problem  # noqa: E402
from hpcrail.results.sampling import sample_times  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "brakes_param_tuple.md"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    load = lambda: " / ".join(f"{x:.2f}" for x in os.getloadavg()[:2])  # noqa: E731
    sc, model, prob = case(TRAINS / "train4_pneumatic.yaml")
    sc4, _m4, prob4 = case(TRAINS / "train4.yaml")
    T = sc.simulation.duration_s
    t_out = sample_times(0.0, T, 10.0)
    kw = sc.integrator.kwargs()
    table = brake_pass(prob, sc.integrator.method, t_out, T, kw)[2]
    shipped, motion = motion_problem(prob, table)
    padded = dataclasses.replace(shipped, params=shipped.params + (model.params,))
    f = np.sqrt(prob.y0.size / motion.size)       # the motion pass's tolerances (kinds/ltd/two_pass.py)
    mkw = dict(kw, rtol=kw["rtol"] * f, atol=kw["atol"] * f)

    def motion_pass(mp):
        def go():
            c0 = time.thread_time()
            sol = integrate(mp, sc.integrator.method, t_out, T, **mkw)
            return time.thread_time() - c0, sol
        return go

    l0 = load()
    (c4, _s4), (c_s, (sol_s,)), (c_p, (sol_p,)) = timed(
        [lambda: run(sc4, prob4), motion_pass(shipped), motion_pass(padded)], a.repeats)
    l1 = load()
    same = np.array_equal(sol_s.acc, sol_p.acc, equal_nan=True) and sol_s.stats == sol_p.stats
    lines = [
        "# What the parameter tuple costs: the two-pass motion pass with one more LTDParams in P", "",
        f"`python benchmarks/brakes_param_tuple.py --repeats {a.repeats}`; thread CPU of the integration (compilation "
        f"excluded), medians of interleaved rounds; one core; load average (1 / 5 min) {l0} → {l1}.  "
        f"Results and step statistics of the two motion passes bitwise equal: {same}.", "",
        "| run | CPU [s] | × train 4 | × shipped motion pass | steps |",
        "|---|---|---|---|---|",
        f"| train 4 (no air brake) | {c4:.3f} | 1.00 | | |",
        f"| motion pass, shipped `P` ({len(shipped.params)} items, one LTDParams) | {c_s:.3f} | {c_s / c4:.2f} | 1.00 "
        f"| {sol_s.stats['steps']:,} |",
        f"| motion pass, `P` + the full layout's LTDParams | {c_p:.3f} | {c_p / c4:.2f} | {c_p / c_s:.3f} "
        f"| {sol_p.stats['steps']:,} |",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
