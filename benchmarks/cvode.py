"""hpcrail's implicit integrators against SUNDIALS CVODE on the same numba RHS and analytic Jacobian (issue 17).

Part 1 — matched accuracy.  Train 4 (243 vehicles, full 3863 s trip), train 2 (104 vehicles, 2711 s) and
the sweep scenario (train 2 re-made as a 100-vehicle consist, 600 s, benchmarks/sweep.py): CVODE BDF
with the band linear solver (``method: cvode``: callbacks compiled by numba, step loop in numba)
at max order 2 and 5 (with and without stability-limit detection), against hpcrail's TR-BDF2, BDF2
(the bdf kernel at max order 2) and Radau IIA.  Every configuration runs ``--repeats`` times, interleaved (one run of
each, then the next round); the table gives the median and the minimum thread CPU time of the
integration (compilation excluded), the step statistics and the envelope error (max over couplers
of the error of the per-coupler max draft/buff force against RK4 at 0.5 ms (``REF_STEP`` of
benchmarks/integrators.py), relative to the largest force; the reference is cached as in
benchmarks/integrators.py).  "Matched" compares the cheapest configuration of each family at ≤ 0.5 %
envelope error.

Part 2 — cost against train length (``--scaling``): train 4 re-made as N-vehicle consists (the
layout of benchmarks/partition.py), 600 s from rest, TR-BDF2 and CVODE at the settings chosen in
part 1; CPU time per simulated second per vehicle, steps, LUs.  No envelope error (an RK4
reference of a 20 000-vehicle train takes hours): the step counts show the effect.

Usage:  python benchmarks/cvode.py [--repeats 5] [--cases train4,train2,sweep100] [--scaling 243,1000,5000,20000]
Writes benchmarks/results/cvode.md (and prints it).  Needs ``pip install 'hpcrail[cvode]'``.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from integrators import REF_STEP, envelope_error, reference  # noqa: E402
from partition import consist_overrides  # noqa: E402
from sweep import consist as sweep_consist  # noqa: E402

from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.integrators import integrate  # noqa: E402
from hpcrail.integrators.cvode import available  # noqa: E402
from hpcrail.kinds.ltd.problem import ltd_problem  # noqa: E402
from hpcrail.results.sampling import sample_times  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "cvode.md"
TRAINS = ROOT / "configs" / "trains"
LIMIT = 0.005   # envelope error of the matched comparison

# (label, method, kwargs); the families are the first word of the label
CONFIGS = [
    ("CVODE BDF q≤2", "cvode", dict(rtol=1e-4, options={"max_order": 2})),
    ("CVODE BDF q≤2", "cvode", dict(rtol=5e-5, options={"max_order": 2})),
    ("CVODE BDF q≤2", "cvode", dict(rtol=3e-5, options={"max_order": 2})),
    ("CVODE BDF q≤5 + SLDET", "cvode", dict(rtol=3e-5, options={"max_order": 5, "stability_limit_detection": 1})),
    ("hpcrail TR-BDF2", "trbdf2", dict(rtol=1e-4)),
    ("hpcrail TR-BDF2", "trbdf2", dict(rtol=5e-5)),
    ("hpcrail TR-BDF2", "trbdf2", dict(rtol=3e-5)),
    ("hpcrail BDF2", "bdf2", dict(rtol=7e-5)),
    ("hpcrail BDF2", "bdf2", dict(rtol=5e-5)),
    ("hpcrail BDF2", "bdf2", dict(rtol=3e-5)),
]
SLOW = [  # one run each: stability-limited CVODE at order 5, Radau IIA
    ("CVODE BDF q≤5", "cvode", dict(rtol=3e-5, options={"max_order": 5})),
    ("hpcrail Radau IIA", "radau5", dict(rtol=1e-4)),
]


def case(name: str):
    """(scenario, model, problem) of a benchmark case."""
    if name == "sweep100":   # the sweep benchmark's scenario at the centre of nothing: train 2's own couplers
        from hpcrail.kinds import validate_document
        from hpcrail.config.loading import apply_overrides, load_document

        doc = load_document(TRAINS / "train2.yaml")
        apply_overrides(doc, ["simulation.duration_s=600", "output.reference_coupler=null", "name=sweep100"])
        doc.tree["consist"] = sweep_consist(100)
        sc = validate_document(doc)
    else:
        sc, _ = load_scenario(TRAINS / f"{name}.yaml")
    model, prob = ltd_problem(sc)
    return sc, model, prob


def setting(kw: dict) -> str:
    parts = [f"rtol {kw['rtol']:g}"]
    for k, v in (kw.get("options") or {}).items():
        parts.append(f"{k} {v:g}")
    return ", ".join(parts)


def run(prob, method, kw, T):
    c0 = time.thread_time()
    sol = integrate(prob, method, sample_times(0.0, T, 10.0), T, **kw)
    return time.thread_time() - c0, sol


def study(name: str, repeats: int, lines: list[str]) -> dict:
    sc, model, prob = case(name)
    N = model.params.n_veh
    M = N - 1
    T = sc.simulation.duration_s
    ref, note = reference(sc, prob, M)
    print(f"{name}: {N} vehicles, {T:g} s; reference RK4 {REF_STEP * 1e3:g} ms ({note})", flush=True)
    for _label, method, kw in CONFIGS + SLOW:
        integrate(prob, method, np.array([0.0]), 1.0, **kw)   # compile / load outside the timing
    cpu = {i: [] for i in range(len(CONFIGS))}
    sols = {}
    load0 = os.getloadavg()[0]
    for _ in range(repeats):
        for i, (_label, method, kw) in enumerate(CONFIGS):
            c, sols[i] = run(prob, method, kw, T)
            cpu[i].append(c)
    rows = []
    for i, (label, method, kw) in enumerate(CONFIGS):
        rows.append((label, kw, float(np.median(cpu[i])), min(cpu[i]), sols[i], repeats))
    for label, method, kw in SLOW:
        c, s = run(prob, method, kw, T)
        rows.append((label, kw, c, c, s, 1))
    load1 = os.getloadavg()[0]
    lines += [f"### {name}: {N} vehicles, {T:g} s, {prob.y0.size} states", "",
              f"Load average {load0:.2f} before / {load1:.2f} after (2 cores).  CPU: thread CPU time of the "
              f"integration, median (min) of {repeats} interleaved runs; rows marked ¹ ran once.", "",
              "| method | setting | CPU [s] | min [s] | steps | rejected | RHS | Jacobians | LU | Newton its | "
              "Newton its/step | µs/step | envelope error [%] |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    best: dict = {}
    for label, kw, med, mn, s, reps in rows:
        st = s.stats
        err = envelope_error(M, s.acc, ref)
        ok = s.success and err <= LIMIT
        fam = label.split()[0]
        if ok and (fam not in best or med < best[fam][2]):
            best[fam] = (label, kw, med, err, st)
        steps = max(1, st["steps"])
        mark = "" if reps > 1 else " ¹"
        lines.append(f"| {label}{mark} | {setting(kw)} | {med:.3f} | {mn:.3f} | {st['steps']:,} | {st['rejected']:,} | "
                     f"{st['nfev']:,} | {st['njev']:,} | {st['nlu']:,} | {st['newton_iterations']:,} | "
                     f"{st['newton_iterations'] / steps:.2f} | {1e6 * med / (st['steps'] + st['rejected']):.1f} | "
                     f"{100 * err:.3f}{'' if s.success else ' (' + s.status.name.lower() + ')'} |")
    lines.append("")
    if "CVODE" in best and "hpcrail" in best:
        cv, hp = best["CVODE"], best["hpcrail"]
        lines.append(f"**Matched at ≤ {100 * LIMIT:g} % envelope error: {hp[0]} ({setting(hp[1])}) {hp[2]:.3f} s "
                     f"({100 * hp[3]:.2f} %) vs {cv[0]} ({setting(cv[1])}) {cv[2]:.3f} s ({100 * cv[3]:.2f} %): "
                     f"hpcrail {cv[2] / hp[2]:.2f}× CVODE.**")
        lines.append("")
    for fam, b in best.items():
        print(f"  best {fam}: {b[0]} {setting(b[1])} {b[2]:.3f} s {100 * b[3]:.2f} %", flush=True)
    return best


SCALING = [("hpcrail TR-BDF2", "trbdf2", dict(rtol=3e-5)),
           ("hpcrail BDF2", "bdf2", dict(rtol=5e-5)),
           ("CVODE BDF q≤2", "cvode", dict(rtol=5e-5, options={"max_order": 2}))]


def scaling_one(n: int, label: str) -> dict:
    """One size and method in this process (called in a fresh process per point)."""
    method, kw = {lab: (m, k) for lab, m, k in SCALING}[label]
    sc, _ = load_scenario(TRAINS / "train4.yaml", consist_overrides(n) + ["simulation.duration_s=600"])
    model, prob = ltd_problem(sc)
    integrate(prob, method, np.array([0.0]), 0.1, **kw)
    c, s = run(prob, method, kw, 600.0)
    return dict(n=model.params.n_veh, cpu=c, ok=s.success, **s.stats)


def scaling(sizes: list[int], lines: list[str]) -> None:
    lines += ["## Cost against train length (issue 17 item 6)", "",
              "Train 4 re-made as N-vehicle consists (2 L + wagons + 2 L + wagons), 600 s of its schedule from rest, one "
              "fresh process per point (thread CPU time of the integration, one run).  Cost = CPU per simulated "
              "second per vehicle.", "",
              "| method | vehicles | CPU [s] | µs per simulated s per vehicle | vs 243 | steps | rejected | LU | "
              "LU/step | Newton its/step | load |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for label, _m, _k in SCALING:
        base = None
        for n in sizes:
            out = subprocess.run([sys.executable, __file__, "--scaling-point", f"{n}:{label}"], capture_output=True,
                                 text=True, check=True).stdout.strip().splitlines()[-1]
            r = eval(out)  # noqa: S307  (our own child's dict)
            per = 1e6 * r["cpu"] / 600.0 / r["n"]
            base = per if base is None else base
            steps = max(1, r["steps"])
            lines.append(f"| {label} | {r['n']:,} | {r['cpu']:.2f} | {per:.2f} | {per / base:.2f} | {r['steps']:,} | "
                         f"{r['rejected']:,} | {r['nlu']:,} | {r['nlu'] / steps:.2f} | "
                         f"{r['newton_iterations'] / steps:.2f} | {os.getloadavg()[0]:.1f} |")
            print(lines[-1], flush=True)
    lines.append("")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--cases", default="train4,train2,sweep100")
    ap.add_argument("--scaling", default="", help="comma-separated train lengths (e.g. 243,1000,5000,20000)")
    ap.add_argument("--scaling-point", default="", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    if args.scaling_point:
        n, label = args.scaling_point.split(":", 1)
        print(scaling_one(int(n), label))
        return
    if not available():
        sys.exit("CVODE is not available: pip install 'hpcrail[cvode]'")
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                         text=True).stdout.strip()
    lines = ["# hpcrail implicit integrators vs SUNDIALS CVODE (issue 17)", "",
             f"`python benchmarks/cvode.py --repeats {args.repeats} --cases {args.cases}"
             f"{' --scaling ' + args.scaling if args.scaling else ''}` — {time.strftime('%Y-%m-%d')}, "
             f"{os.cpu_count()} cores (shared), one thread, git {git}.  CVODE: SUNDIALS 7 from the scikit-sundae "
             "wheel, BDF + band linear solver on hpcrail's numba RHS and analytic Jacobian (numba cfunc callbacks, "
             "step loop in numba; the notch column of the Jacobian lies outside the band and is left out), error "
             "weights with hpcrail's per-state rtol.", ""]
    if args.cases:
        for name in args.cases.split(","):
            study(name, args.repeats, lines)
    if args.scaling:
        scaling([int(x) for x in args.scaling.split(",")], lines)
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
