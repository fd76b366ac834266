"""Benchmark of dry-friction draft gears (issue 7, Oprea 2018): event-driven vs regularised friction.

Two cases, each timed in one run on one core (compilation excluded and reported separately):
* ``configs/friction/startup_6.yaml`` — Oprea 2018 Table 1 (6 vehicles, 10 s);
* ``configs/friction/train_100.yaml`` — a 100-vehicle start-up, every connection a friction gear (40 s).

Accuracy is measured against a converged reference (event-driven, Karnopp band 1e-6 m/s (6 vehicles) /
1e-5 m/s (100 vehicles), rtol 1e-11 / 1e-10): the *stationary deflections* at the end of the run (max over
connections of the deflection error, relative to the largest deflection — the quantity Oprea 2018 Fig 4 shows
and that the regularised model gets wrong by creeping), the per-connection max in-train force envelope
(relative to the largest force), and the number of detected stick phases.  Every configuration uses
DOPRI5 between events (event-driven) or throughout (regularised), atol = rtol/100.

"Equal accuracy": for each target error, the cheapest configuration of each treatment that reaches it.

Usage:  python benchmarks/friction.py [--quick] [--repeats 3]
Writes benchmarks/results/friction.md.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numba
import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.kinds.ltd.friction_layer import build_friction  # noqa: E402
from hpcrail.models.ltd.build import ACC_HEAD  # noqa: E402
from hpcrail.kinds.ltd.result import stick_statistics  # noqa: E402
from hpcrail.results.sampling import sample_times  # noqa: E402
from hpcrail.kinds.ltd.friction_layer import friction_solve  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "friction.md"
TARGETS = (0.10, 0.03, 0.01, 0.003)


def solve(cfg: Path, sets: list[str]):
    sc, _ = load_scenario(cfg, sets)
    model = build_friction(sc)
    T = sc.simulation.duration_s
    sol = friction_solve(model, sc, sample_times(0.0, T, T / 10), T)
    p = model.params
    B, N = p.ltd.block, p.ltd.n_veh
    M = N - 1
    defl = sol.y_final[B:B * N:B]
    env = sol.acc[ACC_HEAD:ACC_HEAD + M]
    sticks, _ = stick_statistics(model, sol.acc, sol.t_reached)
    return dict(status=sol.status.name.lower(), wall=sol.wall_time, compile=sol.compile_time, nfev=sol.stats["nfev"],
                steps=sol.stats["steps"], events=sol.stats.get("events", 0), defl=defl, env=env,
                sticks=np.nansum(sticks))


def timed(cfg, sets, repeats):
    r = solve(cfg, sets)
    walls = [r["wall"]]
    if r["wall"] < 5.0:
        for _ in range(repeats - 1):
            walls.append(solve(cfg, sets)["wall"])
    r["wall"] = float(np.median(walls))
    r["nrep"] = len(walls)
    return r


def configurations(case: str, quick: bool):
    if case == "startup_6":
        ed = [(eta, rtol) for eta in (1e-3, 1e-4) for rtol in (1e-4, 1e-6, 1e-8)]
        reg = [(w, rtol) for w in (1e-2, 1e-3, 1e-4, 1e-5, 1e-6) for rtol in (1e-4, 1e-6, 1e-8)]
        ref = (1e-6, 1e-11)
    else:
        ed = [(eta, rtol) for eta in (1e-3, 1e-4) for rtol in (1e-5, 1e-7)]
        reg = [(w, rtol) for w in (1e-2, 1e-3, 1e-4, 3e-5) for rtol in (1e-5, 1e-7)]
        ref = (1e-5, 1e-10)
    if quick:
        ed = ed[::2]
        reg = [c for c in reg if c[0] >= 1e-4][::2]
    return ed, reg, ref


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer configurations (a smoke run)")
    ap.add_argument("--repeats", type=int, default=3, help="timing repeats of runs shorter than 5 s (median)")
    args = ap.parse_args()
    lines = ["# Dry-friction draft gears: event-driven vs regularised (Oprea 2018)", "",
             f"Machine: {os.cpu_count()} cores, numba {numba.__version__}, NUMBA_NUM_THREADS="
             f"{os.environ['NUMBA_NUM_THREADS']}.  Command: `python benchmarks/friction.py"
             f"{' --quick' if args.quick else ''}`.  wall = integration only (median of {args.repeats} runs when "
             "shorter than 5 s, else one run); DOPRI5 everywhere, atol = rtol/100.", "",
             "Errors against the converged event-driven reference: *deflection* = max over connections of the "
             "error of the final (stationary) deflection / largest deflection; *envelope* = max over connections "
             "of the error of the max in-train force / largest force; *stick phases* = total number detected "
             "(stays in |ė| ≤ 1e-4 m/s of ≥ 10 ms; reference value in the header).", ""]
    summary = []
    for case in ("startup_6", "train_100"):
        cfg = ROOT / "configs" / "friction" / f"{case}.yaml"
        ed, reg, (eta_ref, rtol_ref) = configurations(case, args.quick)
        t0 = time.perf_counter()
        ref = solve(cfg, [f"friction.stick_band_mps={eta_ref}", f"integrator.rtol={rtol_ref}",
                          f"integrator.atol={rtol_ref / 100}"])
        print(f"{case}: reference {ref['status']} wall {ref['wall']:.2f} s", flush=True)
        dscale = np.abs(ref["defl"]).max()
        fscale = np.abs(ref["env"]).max()
        rows = []
        for treatment, confs in (("event_driven", ed), ("regularised", reg)):
            for band, rtol in confs:
                sets = [f"friction.treatment={treatment}", f"integrator.rtol={rtol}", f"integrator.atol={rtol / 100}",
                        "friction.stick_band_mps=" + (str(band) if treatment == "event_driven" else "1e-4")]
                if treatment == "regularised":
                    sets.append(f"friction.regularisation_width_mps={band}")
                r = timed(cfg, sets, args.repeats)
                r.update(treatment=treatment, band=band, rtol=rtol,
                         e_defl=float(np.abs(r["defl"] - ref["defl"]).max() / dscale),
                         e_env=float(np.abs(r["env"] - ref["env"]).max() / fscale))
                print(f"  {treatment:13s} band {band:g} rtol {rtol:g}: {r['status']} wall {r['wall']:.3f} s "
                      f"nfev {r['nfev']} events {r['events']} defl err {100 * r['e_defl']:.3f} % "
                      f"env err {100 * r['e_env']:.3f} %", flush=True)
                rows.append(r)
        ncoup = ref["defl"].size
        lines += [f"## {case} ({ncoup + 1} vehicles)", "",
                  f"Reference: event-driven, band {eta_ref:g} m/s, rtol {rtol_ref:g}: wall {ref['wall']:.2f} s, "
                  f"{ref['events']} events, {ref['sticks']:.0f} stick phases, largest deflection "
                  f"{1e3 * dscale:.2f} mm, largest force {fscale / 1e3:.1f} kN.  "
                  f"Case time {time.perf_counter() - t0:.0f} s.",
                  "", "| treatment | band / width [m/s] | rtol | wall [s] | RHS evals | steps | events | "
                  "deflection err | envelope err | stick phases | status |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(f"| {r['treatment'].replace('_', '-')} | {r['band']:g} | {r['rtol']:g} | {r['wall']:.3f} | "
                         f"{r['nfev']:,} | {r['steps']:,} | {r['events']:,} | {100 * r['e_defl']:.3f} % | "
                         f"{100 * r['e_env']:.3f} % | {r['sticks']:.0f} | {r['status']} |")
        lines += ["", f"Equal accuracy ({case}): cheapest configuration reaching a deflection error target "
                  "(and, in brackets, the envelope error it has).", "",
                  "| target | event-driven | regularised | regularised / event-driven wall |", "|---|---|---|---|"]
        for tgt in TARGETS:
            best = {}
            for tr in ("event_driven", "regularised"):
                ok = [r for r in rows if r["treatment"] == tr and r["status"] == "completed" and r["e_defl"] <= tgt]
                best[tr] = min(ok, key=lambda r: r["wall"]) if ok else None
            cells = []
            for tr in ("event_driven", "regularised"):
                b = best[tr]
                cells.append("not reached" if b is None else
                             f"{b['wall']:.3f} s (band {b['band']:g}, rtol {b['rtol']:g}; "
                             f"env {100 * b['e_env']:.2f} %)")
            ratio = (f"{best['regularised']['wall'] / best['event_driven']['wall']:.1f}x"
                     if best["event_driven"] and best["regularised"] else "–")
            lines.append(f"| {100 * tgt:g} % | {cells[0]} | {cells[1]} | {ratio} |")
            summary.append((case, tgt, best, ratio))
        lines.append("")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
