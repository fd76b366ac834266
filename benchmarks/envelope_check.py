"""Cost and fidelity of the checked envelopes (issue 26 item 3): the check's reference settings side by side.

Per train (the shipped scenario, its own method and tolerances): the run's thread CPU (median of ``--repeat``
runs, compiled kernels), then the envelope check of :mod:`hpcrail.results.envelope_check` (span run) with each
reference setting — ``auto`` (variable-order BDF at rtol/100 for BDF-family runs), ``same`` (the run's own
method at rtol/100: the setting before this benchmark) — with its CPU, its CPU relative to the run, and the
largest difference it reports for the checked peaks.  "truth" is the same peaks' difference against a far
tighter reference (variable-order BDF at rtol/``--truth-tighten``): a check is faithful when it reports what the
truth reports (to well inside the 1 % warning threshold).  The load average is recorded before and after.

Usage:  python benchmarks/envelope_check.py [--trains linear30,train2,train4] [--repeat 3] [--truth-tighten 1e4]
        [--references auto:10,auto:100,same:100]
        [--set simulation.duration_s=600 ...] [--out benchmarks/results/envelope_check.md]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "results" / "envelope_check.md"


def main():
    from hpcrail.integrators import integrate
    from hpcrail.kinds import load_scenario
    from hpcrail.kinds.ltd.problem import ltd_problem
    from hpcrail.results.envelope_check import check_envelopes

    ap = argparse.ArgumentParser()
    ap.add_argument("--trains", default="linear30,train2,train4")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--truth-tighten", type=float, default=1e4)
    ap.add_argument("--references", default="auto:10,auto:100,same:100",
                    help="reference:tighten pairs (reference auto, same or rk4)")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    load0 = os.getloadavg()
    rows = []
    for name in a.trains.split(","):
        sc, _ = load_scenario(ROOT / "configs" / "trains" / f"{name}.yaml", list(a.set))
        model, prob = ltd_problem(sc)
        M = model.params.n_veh - 1
        method, kw = sc.integrator.method, sc.integrator.kwargs()
        T = sc.simulation.duration_s
        t_out = np.arange(0.0, T + 1e-9, sc.output.interval_s)
        integrate(prob, method, t_out[:2], min(T, 1.0), **kw)           # compile / load the kernel
        cpus, sol = [], None
        for _ in range(a.repeat):
            c0 = time.thread_time()
            sol = integrate(prob, method, t_out, T, **kw)
            cpus.append(time.thread_time() - c0)
        cpu = statistics.median(cpus)
        base = sc.output.envelope_check
        found = {}
        refs = a.references.split(",")
        for ref in refs + ["truth"]:
            if ref == "truth":
                cfg = base.model_copy(update=dict(reference="auto", tighten=a.truth_tighten))
            else:
                r, tg = ref.split(":")
                cfg = base.model_copy(update=dict(reference=r, tighten=float(tg)))
            check_envelopes(prob, sol, method, kw, cfg, M)                # compile the reference's kernel
            ccpus, vals = [], None
            for _ in range(a.repeat if ref != "truth" else 1):
                vals, _w, ccpu = check_envelopes(prob, sol, method, kw, cfg, M)
                ccpus.append(ccpu)
            found[ref] = (statistics.median(ccpus), vals)
        truth = found["truth"][1]["checked_peak_error"]
        for ref in refs:
            ccpu, vals = found[ref]
            err = vals["checked_peak_error"]
            rows.append(dict(train=name, setting=f"{method} rtol {kw['rtol']:g}", cpu=cpu, ref=f"{ref}: " + vals[
                "envelope_check_reference"], ccpu=ccpu, worst=np.nanmax(err), truth=np.nanmax(truth),
                dev=np.nanmax(np.abs(err - truth))))
            print(rows[-1], flush=True)
    load1 = os.getloadavg()
    cmd = (f"python benchmarks/envelope_check.py --trains {a.trains} --repeat {a.repeat} --truth-tighten "
           f"{a.truth_tighten:g} --references {a.references}" + "".join(f" --set {s}" for s in a.set))
    L = ["# Checked envelopes: cost and fidelity of the reference settings", "",
         f"`{cmd}`; load average (1/5/15 min) {load0[0]:.2f}/{load0[1]:.2f}/{load0[2]:.2f} before, "
         f"{load1[0]:.2f}/{load1[1]:.2f}/{load1[2]:.2f} after (2 cores; thread CPU, medians).", "",
         "`reported`: the largest difference of the 3 + 3 checked peaks the check reports; `truth`: the same peaks "
         f"against variable-order BDF at rtol/{a.truth_tighten:g}; `|reported - truth|`: the largest per-peak "
         "disagreement (percentage points).", "",
         "| train | run setting | run CPU [s] | reference | check CPU [s] | check / run | reported | truth "
         "| \\|reported − truth\\| |", "|" + "---|" * 9]
    for r in rows:
        L.append(f"| {r['train']} | {r['setting']} | {r['cpu']:.3f} | {r['ref']} | {r['ccpu']:.3f} | "
                 f"{r['ccpu'] / r['cpu']:.2f} | {100 * r['worst']:.3f} % | {100 * r['truth']:.3f} % | "
                 f"{100 * r['dev']:.3f} pp |")
    Path(a.out).write_text("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()
