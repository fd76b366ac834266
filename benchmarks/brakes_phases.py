"""Where the pneumatic trip's cost goes (issue 24): the quiet phase against the brake application, the same
manoeuvre with the empirical brake, and which states' error control sets the steps.

``benchmarks/brakes.py`` compares ``train4_pneumatic.yaml`` (a full-service application at 1300 s, released at
1330 s) with the shipped ``train4.yaml`` trip, which applies no air brake at all.  This script splits that
ratio (thread CPU of the integration, compilation excluded, medians of ``--repeats`` runs):

1. **Phases**: both trips over 0-1290 s (before the application: the same driving, the brake system charged
   and quiet) and over 0-1400 s; the window 1290-1400 s (application, run-in, release) is the difference.
2. **The same manoeuvre with the empirical brake** (``air_brake.model=empirical`` on the pneumatic trip's
   schedule): CPU, steps and envelope error (max over couplers of the per-coupler max draft/buff force error
   relative to the largest force) against the same scenario at rtol 1e-7, for the pneumatic and the empirical
   brake at the shipped bdf2 rtol 3e-6 and at 5e-5.
3. **Which states set the steps**: the pneumatic trip with the brake states' absolute tolerance 1e3 times
   larger (the mechanics alone decide the error norm, the brake states stay controlled loosely), and with the
   mechanical states left out of the norm (the brake states decide).

Usage:  python benchmarks/brakes_phases.py [--repeats 3]
Writes benchmarks/results/brakes_phases.md (and prints it).  Records the load average with every block.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from brakes import ROOT, TRAINS, case, envelope_error, reference, run  # noqa: E402

from hpcrail.integrators import integrate  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "brakes_phases.md"
T_QUIET, T_END = 1290.0, 1400.0


def timed(sc, prob, repeats, **extra):
    """Median thread CPU of ``repeats`` runs (one warm-up first) and the last solution."""
    kw = dict(sc.integrator.kwargs(), **extra)
    integrate(prob, sc.integrator.method, np.array([0.0]), 1.0, **kw)
    cs, sol = [], None
    for _ in range(repeats):
        c, sol = run(sc, prob, **extra)
        cs.append(c)
    return float(np.median(cs)), sol


def stats(sol):
    s = sol.stats
    return s["steps"], s["rejected"], s["nlu"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    load = lambda: " / ".join(f"{x:.2f}" for x in os.getloadavg()[:2])  # noqa: E731
    lines = ["# Pneumatic trip: where the cost goes (issue 24)", "",
             f"`python benchmarks/brakes_phases.py --repeats {a.repeats}`; thread CPU of the integration "
             "(compilation excluded), medians; one core (NUMBA_NUM_THREADS=1); load average (1 / 5 min) with every "
             "block.", ""]

    # ---- 1. phases
    l0 = load()
    rows = {}
    for name in ("train4", "train4_pneumatic"):
        for T in (T_QUIET, T_END):
            sc, model, prob = case(TRAINS / f"{name}.yaml", [f"simulation.duration_s={T:g}"])
            rows[name, T] = (timed(sc, prob, a.repeats), prob.y0.size, sc)
    lines += ["## 1. Phases: before the application (0-1290 s) and the application window (1290-1400 s)", "",
              f"Load {l0} → {load()}.  Shipped settings of each file.  The window's figures are the 0-1400 s run "
              "minus the 0-1290 s run.", "",
              "| scenario | states | method | phase | CPU [s] | steps | rejected | LU | µs per step |",
              "|---|---|---|---|---|---|---|---|---|"]
    for name in ("train4", "train4_pneumatic"):
        (cq, sq), n, sc = rows[name, T_QUIET]
        (ce, se), _n, _sc = rows[name, T_END]
        q, e = np.array(stats(sq)), np.array(stats(se))
        for phase, c, st in (("0-1290 s", cq, q), ("1290-1400 s", ce - cq, e - q), ("0-1400 s", ce, e)):
            lines.append(f"| {name}.yaml | {n:,} | {sc.integrator.method} rtol {sc.integrator.rtol:g} | {phase} | "
                         f"{c:.3f} | {st[0]:,} | {st[1]:,} | {st[2]:,} | {1e6 * c / max(1, st[0]):.1f} |")
    (cq4, sq4), _, _ = rows["train4", T_QUIET]
    (cqp, sqp), _, _ = rows["train4_pneumatic", T_QUIET]
    lines += ["", f"Before the application the two trips take {stats(sq4)[0]:,} and {stats(sqp)[0]:,} steps; "
              f"the pneumatic trip's step costs **{(cqp / stats(sqp)[0]) / (cq4 / stats(sq4)[0]):.2f}×** train 4's "
              "(the brake states ride along in every Newton iteration and factorisation while they are quiet).", ""]
    print("\n".join(lines), flush=True)

    # ---- 2. the same manoeuvre with the empirical brake
    l0 = load()
    over = [f"simulation.duration_s={T_END:g}"]
    table = []
    for model_name in ("pneumatic", "empirical"):
        sc, model, prob = case(TRAINS / "train4_pneumatic.yaml", over + [f"air_brake.model={model_name}"])
        M = model.params.n_veh - 1
        ref, note = reference(sc, prob, M)
        for rtol in (3e-6, 5e-5):
            c, sol = timed(sc, prob, a.repeats, rtol=rtol)
            table.append((model_name, prob.y0.size, rtol, c, stats(sol), 100 * envelope_error(M, sol.acc, ref), note))
    start = len(lines)
    lines += ["## 2. The same manoeuvre (train4_pneumatic's schedule, 0-1400 s) with the empirical brake", "",
              f"Load {l0} → {load()}.  bdf2; envelope error against the same scenario at rtol 1e-7.", "",
              "| air brake | states | rtol | CPU [s] | steps | rejected | LU | envelope error [%] | reference |",
              "|---|---|---|---|---|---|---|---|---|"]
    for m, n, rtol, c, st, err, note in table:
        lines.append(f"| {m} | {n:,} | {rtol:g} | {c:.3f} | {st[0]:,} | {st[1]:,} | {st[2]:,} | {err:.3f} | {note} |")
    lines.append("")
    print("\n".join(lines[start:]), flush=True)

    # ---- 3. which states' error control sets the steps
    l0 = load()
    sc, model, prob = case(TRAINS / "train4_pneumatic.yaml", over)
    N, B = model.params.n_veh, model.params.block
    brake = np.zeros(prob.y0.size, bool)
    brake[:B * N].reshape(N, B)[:, 2:] = True
    a0 = prob.atol_scale.copy()
    rows3 = []
    for label, mask, scale in (("shipped", None, 1.0), ("brake states' atol × 1e3", brake, 1e3),
                               ("mechanical states out of the norm (atol × 1e12)", ~brake, 1e12)):
        prob.atol_scale[:] = a0
        if mask is not None:
            prob.atol_scale[mask] *= scale
        c, sol = timed(sc, prob, a.repeats)
        rows3.append((label, c, stats(sol), sol.success))
    prob.atol_scale[:] = a0
    start = len(lines)
    lines += ["## 3. Which states' error control sets the steps (pneumatic trip, 0-1400 s, bdf2 rtol 3e-6)", "",
              f"Load {l0} → {load()}.", "", "| error norm | CPU [s] | steps | rejected | LU | completed |",
              "|---|---|---|---|---|---|"]
    for label, c, st, ok in rows3:
        lines.append(f"| {label} | {c:.3f} | {st[0]:,} | {st[1]:,} | {st[2]:,} | {ok} |")
    lines.append("")
    print("\n".join(lines[start:]), flush=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
