"""Multirate blocks and checked envelopes (issue 26): steps, CPU and accuracy of the multirate BDF (mrbdf2,
blocks of ``partition.multirate_block_vehicles`` vehicles walked by one core) against the shipped single-rate
setting (bdf2 at the config's rtol) in the same run, and the checked-envelope report of the shipped settings.

Per train and method: global steps, rejected steps, the re-integrated sub-steps, block-steps (Σ over steps of the
blocks advanced), LU factorisations, thread CPU time (median of ``--repeat`` runs, compiled kernels), and the
accuracy reached: the largest difference of the per-coupler draft and buff envelopes from a reference run (the
same problem with bdf2 at rtol/100, atol/100) relative to the largest force of the reference, and the error of
the train's largest draft and buff forces.  The load average is recorded before and after.

The checked-envelope table runs the envelope check of :mod:`hpcrail.results.envelope_check` (span run, reference
the run's method at rtol/100) on each train's shipped setting and prints every checked peak's difference and the
check's CPU against the run's.

``--variants`` adds mrbdf2 rows with method options, ``;`` between variants and ``,`` between options (e.g.
``run_lu_keep=1;run_lu_change=0.6`` — the runs' LU reuse — or ``refine_fraction=0.25``): the same run, the same
reference.

Usage:  python benchmarks/multirate.py [--trains train2,train4,linear30] [--repeat 3] [--block-vehicles 32]
        [--variants "run_lu_keep=1;run_lu_change=0.6"] [--set simulation.duration_s=600 ...]
Writes benchmarks/results/multirate.md.
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
OUT = ROOT / "benchmarks" / "results" / "multirate.md"


def _solve(path, over, method, kw, repeat):
    from hpcrail.integrators import integrate
    from hpcrail.kinds import load_scenario
    from hpcrail.kinds.ltd.problem import ltd_problem

    sc, _ = load_scenario(path, over + [f"integrator.method={method}"])
    model, prob = ltd_problem(sc)
    T = sc.simulation.duration_s
    t_out = np.arange(0.0, T + 1e-9, sc.output.interval_s)
    integrate(prob, method, t_out[:2], min(T, 1.0), **kw)          # compile / load the kernel
    cpus, sol = [], None
    for _ in range(repeat):
        c0 = time.thread_time()
        sol = integrate(prob, method, t_out, T, **kw)
        cpus.append(time.thread_time() - c0)
    return sc, prob, sol, statistics.median(cpus), model.params.n_veh - 1


def main():
    from hpcrail.kinds import load_scenario
    from hpcrail.models.couplers.envelope import coupler_envelopes
    from hpcrail.results.envelope_check import check_envelopes

    ap = argparse.ArgumentParser()
    ap.add_argument("--trains", default="train2,train4,linear30")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--block-vehicles", type=int, default=32)
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--variants", default="", help="mrbdf2 option sets: 'a=1,b=2;c=3'")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    load0 = os.getloadavg()
    rows, checks = [], []
    for name in a.trains.split(","):
        path = ROOT / "configs" / "trains" / f"{name}.yaml"
        over = list(a.set) + [f"partition.multirate_block_vehicles={a.block_vehicles}"]
        sc0, _ = load_scenario(path, over)
        kw = sc0.integrator.kwargs()
        ref_kw = dict(kw, rtol=kw["rtol"] / 100, atol=kw["atol"] / 100)
        _sc, _p, ref, ref_cpu, M = _solve(path, over, "bdf2", ref_kw, 1)
        rf = coupler_envelopes(ref.acc, M)[:2]
        fscale = max(rf[0].max(), -rf[1].min())
        runs = [("bdf2", "bdf2", {}), ("mrbdf2", "mrbdf2", {})]
        for v in filter(None, a.variants.split(";")):
            opts = {k.strip(): float(x) for k, x in (kv.split("=") for kv in v.split(","))}
            runs.append(("mrbdf2", "mrbdf2 " + v, opts))
        for method, label, opts in runs:
            kw_m = dict(kw, options=dict(kw.get("options") or {}, **opts)) if opts else kw
            sc, prob, sol, cpu, M = _solve(path, over, method, kw_m, a.repeat)
            f = coupler_envelopes(sol.acc, M)[:2]
            env = max(np.max(np.abs(f[0] - rf[0])), np.max(np.abs(f[1] - rf[1]))) / fscale
            peak = max(abs(f[0].max() / rf[0].max() - 1), abs(f[1].min() / rf[1].min() - 1))
            st = sol.stats
            P = prob.blocks.n_blocks if prob.blocks is not None else 1
            rows.append(dict(train=name, N=M + 1, T=sc.simulation.duration_s, method=label, P=P,
                             ok=sol.success, steps=st["steps"], rejected=st["rejected"],
                             substeps=st.get("substeps", 0), block_steps=st.get("block_steps", st["steps"] * P),
                             nlu=st["nlu"], cpu=cpu, env=env, peak=peak))
            print(rows[-1], flush=True)
            if label == sc0.integrator.method:                      # the shipped setting's checked envelopes
                vals, _w, ccpu = check_envelopes(prob, sol, method, kw, sc.output.envelope_check, M)
                checks.append(dict(train=name, method=method, rtol=kw["rtol"], cpu=cpu, check_cpu=ccpu,
                                   ref=vals["envelope_check_reference"], err=vals["checked_peak_error"],
                                   coupler=vals["checked_peak_coupler"], t=vals["checked_peak_time"]))
                print(checks[-1], flush=True)
    load1 = os.getloadavg()
    cmd = (f"python benchmarks/multirate.py --trains {a.trains} --repeat {a.repeat} --block-vehicles "
           f"{a.block_vehicles}" + "".join(f" --set {s}" for s in a.set)
           + (f' --variants "{a.variants}"' if a.variants else ""))
    L = ["# Multirate blocks (mrbdf2) against the shipped bdf2, and the checked envelopes", "",
         f"`{cmd}`; load average (1/5/15 min) {load0[0]:.2f}/{load0[1]:.2f}/{load0[2]:.2f} before, "
         f"{load1[0]:.2f}/{load1[1]:.2f}/{load1[2]:.2f} after (2 cores shared with other sessions: CPU times are "
         "thread CPU, medians; re-run on a quiet machine).", "",
         "Accuracy against bdf2 at rtol/100 and atol/100 over the same run: `envelope` the largest difference of "
         "the per-coupler draft and buff envelopes relative to the largest force; `peak` the error of the train's "
         "largest draft and buff forces.", "",
         "| train | vehicles | T [s] | method | blocks | steps | rejected | sub-steps | block-steps | LUs | CPU [s] "
         "| CPU ratio | envelope | peak |", "|" + "---|" * 14]
    base = {r["train"]: r for r in rows if r["method"] == "bdf2"}
    for r in rows:
        L.append(f"| {r['train']} | {r['N']} | {r['T']:g} | {r['method']} | {r['P']} | {r['steps']:,} | "
                 f"{r['rejected']:,} | {r['substeps']:,} | {r['block_steps']:,} | {r['nlu']:,} | {r['cpu']:.3f} | "
                 f"{r['cpu'] / base[r['train']]['cpu']:.2f} | {100 * r['env']:.3f} % | {100 * r['peak']:.3f} % |")
    L += ["", "## Checked envelopes of the shipped settings (span run, reference the run's method at rtol/100)", "",
          "| train | setting | run CPU [s] | check CPU [s] | check / run | reference | checked peaks: coupler @ time "
          "[s]: difference |", "|---|---|---|---|---|---|---|"]
    for c in checks:
        peaks = "; ".join(f"{int(k)} @ {t:.1f}: {100 * e:.3f} %" for k, t, e in zip(c["coupler"], c["t"], c["err"])
                          if k > 0)
        L.append(f"| {c['train']} | {c['method']} rtol {c['rtol']:g} | {c['cpu']:.3f} | {c['check_cpu']:.3f} | "
                 f"{c['check_cpu'] / c['cpu']:.1f} | {c['ref']} | {peaks} |")
    Path(a.out).write_text("\n".join(L) + "\n")
    print("\n".join(L))


if __name__ == "__main__":
    main()
