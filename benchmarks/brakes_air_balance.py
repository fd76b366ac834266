"""The air balance of the pneumatic trip against the brake Jacobian and the number of passes (issue 24, stop 45).

``air_brake.pneumatic.jacobian: reduced`` (shipped) gives the implicit integrators the pipe and every state's
diagonal, so the air balance closes to the Newton tolerance; ``full`` closes it to rounding.  This script runs
``train4_pneumatic.yaml``'s full trip in one and two passes with each Jacobian and reports the relative air-mass
balance residual of each (``hpcrail.simulate``), and the thread CPU of the two-pass integration with each Jacobian
(interleaved rounds, the first discarded as warm-up, medians of ``--repeats``).

Usage:  python benchmarks/brakes_air_balance.py [--repeats 3]
Writes benchmarks/results/brakes_air_balance.md (and prints it).
"""
from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

import numpy as np

import hpcrail
from hpcrail.kinds import load_scenario
from hpcrail.kinds.ltd.problem import ltd_problem
from hpcrail.kinds.ltd.two_pass import integrate_two_pass
from hpcrail.results.sampling import sample_times

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "brakes_air_balance.md"
TRIP = ROOT / "configs" / "trains" / "train4_pneumatic.yaml"
JACOBIANS = ("reduced", "full")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    load = lambda: " / ".join(f"{x:.2f}" for x in os.getloadavg()[:2])  # noqa: E731
    l0 = load()
    res = {}
    for passes in ("one", "two"):
        for jac in JACOBIANS:
            ds = hpcrail.simulate(TRIP, **{"air_brake.pneumatic.passes": passes, "air_brake.pneumatic.jacobian": jac,
                                           "output.envelope_check.enabled": False,
                                           "output.running_safety.enabled": False})
            res[passes, jac] = float(ds["air_mass_balance_residual"])
    probs = {}
    for jac in JACOBIANS:
        sc, _ = load_scenario(TRIP, [f"air_brake.pneumatic.jacobian={jac}"])
        probs[jac] = (sc, ltd_problem(sc)[1])
    T = sc.simulation.duration_s
    t_out = sample_times(0.0, T, 10.0)
    cpu = {j: [] for j in JACOBIANS}
    for r in range(a.repeats + 1):
        for jac, (sc, prob) in probs.items():
            c0 = time.thread_time()
            integrate_two_pass(prob, sc.integrator.method, t_out, T, **sc.integrator.kwargs())
            if r:
                cpu[jac].append(time.thread_time() - c0)
    l1 = load()
    lines = ["# Air balance of the pneumatic trip: brake Jacobian and passes", "",
             f"`python benchmarks/brakes_air_balance.py --repeats {a.repeats}`; load average (1 / 5 min) {l0} → {l1}.  "
             "Relative air-mass balance residual of the full trip ((pipe + reservoirs + cylinders + vented − initial) "
             "/ initial); thread CPU of the two-pass integration, medians of interleaved rounds.", "",
             "| brake Jacobian | residual, one pass | residual, two passes | two passes: CPU [s] |", "|---|---|---|---|"]
    for jac in JACOBIANS:
        lines.append(f"| {jac} | {res['one', jac]:.3g} | {res['two', jac]:.3g} | {np.median(cpu[jac]):.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
