"""Cost and fidelity of the checked envelopes (issue 26 item 3): the check's reference settings side by side.

Per train (the shipped scenario, its own method and tolerances, or a train given as
``name@field=value@field=value`` with overrides of its own): the run's thread CPU (median of ``--repeat`` runs,
compiled kernels), then the envelope check of :mod:`hpcrail.results.envelope_check` with each setting
``reference:tighten[:span]`` — reference ``auto`` (variable-order BDF at rtol/tighten for BDF-family runs) or
``same`` (the run's own method), span ``auto`` (windows with the memory test, the default), ``window`` or ``run``
— with its CPU, its CPU relative to the run, and the largest difference it reports for the checked peaks.
"truth" is the same peaks' difference against a far tighter reference over the whole run (variable-order BDF at
rtol/``--truth-tighten``, span run): a check is faithful when it reports what the truth reports (to well inside
the 1 % warning threshold).  The load average is recorded before and after.

Usage:  python benchmarks/envelope_check.py [--trains linear30,linear30@integrator.method=bdf2@integrator.rtol=5e-5,
        train2,train4] [--repeat 3] [--truth-tighten 1e4] [--references auto:100:auto,auto:100:window,auto:100:run]
        [--scenarios mixed/train4_empty_wagon,trains/train4_pneumatic] [--set simulation.duration_s=600 ...] [--out benchmarks/results/envelope_check.md]
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
    ap.add_argument("--trains", default="linear30,linear30@integrator.method=bdf2@integrator.rtol=5e-5,train2,"
                    "train4")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--truth-tighten", type=float, default=1e4)
    ap.add_argument("--references", default="auto:100:auto,auto:100:window,auto:100:run",
                    help="reference:tighten[:span] (reference auto, same or rk4; span auto, window or run)")
    ap.add_argument("--scenarios", default="mixed/train4_empty_wagon,trains/train4_pneumatic,trains/train4_emergency",
                    help="configs (configs/NAME.yaml) checked through hpcrail.simulate with spans auto and run: the "
                         "mixed train and the pneumatic-brake trains ('' for none)")
    ap.add_argument("--leads", default="3,6,12,24,48",
                    help="window leads [s] of the memory table: each checked peak's difference in a window "
                         "starting that far back ('' for none)")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    load0 = os.getloadavg()
    rows, memory = [], []
    for spec in a.trains.split(","):
        name, *own = spec.split("@")
        sc, _ = load_scenario(ROOT / "configs" / "trains" / f"{name}.yaml", list(a.set) + own)
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
                cfg = base.model_copy(update=dict(reference="auto", tighten=a.truth_tighten, span="run"))
            else:
                r, tg, *sp = ref.split(":")
                cfg = base.model_copy(update=dict(reference=r, tighten=float(tg), span=sp[0] if sp else base.span))
            check_envelopes(prob, sol, method, kw, cfg, M)                # compile the reference's kernel
            ccpus, vals = [], None
            for _ in range(a.repeat if ref != "truth" else 1):
                vals, _w, ccpu = check_envelopes(prob, sol, method, kw, cfg, M)
                ccpus.append(ccpu)
            found[ref] = (statistics.median(ccpus), vals)
        truth = found["truth"][1]["checked_peak_error"]
        for lead in [float(x) for x in a.leads.split(",") if x]:
            cfg = base.model_copy(update=dict(reference="auto", tighten=100.0, span="window"))
            vals = leads_row(prob, sol, method, kw, cfg, M, lead)
            memory.append((spec, lead, vals))
        for ref in refs:
            ccpu, vals = found[ref]
            err = vals["checked_peak_error"]
            rows.append(dict(train=spec.replace("@integrator.", " ").replace("@", " "), setting=f"{method} rtol {kw['rtol']:g}", cpu=cpu, ref=f"{ref}: " + vals[
                "envelope_check_reference"], ccpu=ccpu, worst=np.nanmax(err), truth=np.nanmax(truth),
                dev=np.nanmax(np.abs(err - truth))))
            print(rows[-1], flush=True)
    mixed_rows = mixed(a) if a.scenarios else []
    memory_lines = []
    if memory:
        memory_lines = ["", "Memory: each checked peak's difference (%) when its own window (`auto` reference, not merged "
                        "with others) starts `lead` seconds before it, from the run's stored sample at or before that "
                        "time (`--leads`): error carried into the windows shows as differences that grow with the "
                        "lead.", "", "| train | lead [s] | differences of the 3 draft + 3 buff peaks [%] | check / run |",
                        "|---|---|---|---|"]
        cpu_of = {r["train"]: r["cpu"] for r in rows}
        for spec, lead, (errs, ccpu) in memory:
            t = spec.replace("@integrator.", " ").replace("@", " ")
            memory_lines.append(f"| {t} | {lead:g} | " + ", ".join(f"{100 * e:.3f}" for e in errs) +
                                f" | {ccpu / cpu_of[t]:.2f} |")
    load1 = os.getloadavg()
    cmd = (f"python benchmarks/envelope_check.py --trains {a.trains} --repeat {a.repeat} --truth-tighten "
           f"{a.truth_tighten:g} --references {a.references} --scenarios '{a.scenarios}'" + "".join(f" --set {s}" for s in a.set))
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
    L += memory_lines
    if mixed_rows:
        L += ["", f"Scenarios (`--scenarios {a.scenarios}`): the shipped scenario through `hpcrail.simulate.run_scenario` "
              "with the check on; run CPU = the call's thread CPU "
              "less the check's (median of the repeats); `reported` the check's largest difference.", "",
              "| scenario | span | run CPU [s] | check CPU [s] | check / run | reported | reference |",
              "|---|---|---|---|---|---|---|"]
        L += [f"| {r['train']} | {r['span']} | {r['cpu']:.3f} | {r['ccpu']:.3f} | {r['ccpu'] / r['cpu']:.2f} | "
              f"{100 * r['worst']:.3f} % | {r['ref']} |" for r in mixed_rows]
    Path(a.out).write_text("\n".join(L) + "\n")
    print("\n".join(L))


def leads_row(prob, sol, method, kw, cfg, M, lead):
    """``(per-peak differences, thread CPU)``: each peak the check picks (with the shipped lead and lag) checked
    on its own window starting ``lead`` seconds before it."""
    from hpcrail.results import envelope_check as ec

    errs, cpu = [], 0.0
    one = cfg.model_copy(update=dict(lead_s=lead, peaks=1))
    fmax, fmin, tmax, tmin = ec_peaks(sol, M)
    big = float(np.nanmax(np.abs(np.concatenate([fmax, fmin]))))
    for p in ec.select_peaks(fmax, fmin, tmax, tmin, cfg.peaks, cfg.lead_s, cfg.lag_s, ec.PEAK_FLOOR * big):
        vals, _w, ccpu = ec.check_envelopes(prob, sol, method, kw, one, M, peaks=[p])
        e = vals["checked_peak_error"]
        errs.append(float(e[0] if p.sign > 0 else e[1]))
        cpu += ccpu
    return errs, cpu


def ec_peaks(sol, M):
    from hpcrail.models.couplers.envelope import coupler_envelopes, coupler_peak_times

    fmax, fmin, _a, _b = coupler_envelopes(np.asarray(sol.acc), M)
    return (fmax, fmin, *coupler_peak_times(np.asarray(sol.acc), M))


def mixed(a) -> list:
    """Rows of the ``--scenarios``: per span, the run's and the check's thread CPU (medians) and the reported error."""
    from hpcrail.kinds import load_scenario
    from hpcrail.simulate import run_scenario

    rows = []
    for name in a.scenarios.split(","):
        for span in ("auto", "run"):
            sc, _ = load_scenario(ROOT / "configs" / f"{name}.yaml", list(a.set) + [
                "output.envelope_check.enabled=true", f"output.envelope_check.span={span}"])
            run_scenario(sc)                                                   # compile / load the kernels
            cpus, ccpus, ds = [], [], None
            for _ in range(a.repeat):
                c0 = time.thread_time()
                ds = run_scenario(sc)
                total = time.thread_time() - c0
                ccpus.append(float(ds.attrs["envelope_check_cpu_s"]))
                cpus.append(total - ccpus[-1])
            rows.append(dict(train=name, span=span, cpu=statistics.median(cpus), ccpu=statistics.median(ccpus),
                             worst=float(ds["envelope_check_error"]), ref=str(ds["envelope_check_reference"].values)))
            print(rows[-1], flush=True)
    return rows


if __name__ == "__main__":
    main()
