"""Railway-vehicle benchmark (issue 14) → benchmarks/results/railway_vehicle.md.

Manchester wagon 1 on the irregular R = 500 m track of paper 004 (configs/wheelrail/manchester_R500_irregular.yaml:
20 m/s, German low-disturbance irregularities in four channels), 25 s simulated, one core, numba warm:

1. CPU time (``time.process_time`` around the integration only; median of interleaved repeats) of
   KEC + ABM4 at 1 ms (the issue's target: ≤ 1 s), LUT + ABM4 at 1 ms (ratio LUT/KEC in the same run; paper
   004: KEC up to 20 % cheaper), KEC + RK4 at 1 ms, KEC + DOPRI5 at the paper's ode45 tolerances and
   BDF (ode15s) / RADAU5 with finite-difference Jacobians, with the cost per right-hand-side evaluation;
2. accuracy of each against a DOPRI5 reference of the same contact method at rtol = atol = 1e-10
   (max |Δy| over the wheelsets' lateral displacements at the 5 ms samples), to name the cheapest method at
   matched accuracy;
3. with ``--sweep``: throughput of ``hpcrail sweep jobs/wagon_curving.yaml`` on 2 worker processes.

Paper 004's Matlab numbers (i5 2.5 GHz, Tables 7, 11-18) are quoted for context, not run here.

    python benchmarks/railway_vehicle.py            # full run (5 repeats)
    python benchmarks/railway_vehicle.py --quick    # 2 repeats, no reference run
    python benchmarks/railway_vehicle.py --sweep    # also the sweep throughput

The machine is shared: the load average is printed next to every number.
"""
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.kinds.railway_vehicle.build import build_railway_vehicle  # noqa: E402
from hpcrail.kinds.railway_vehicle.run import solve  # noqa: E402

CONFIG = ROOT / "configs" / "wheelrail" / "manchester_R500_irregular.yaml"
JOB = ROOT / "jobs" / "wagon_curving.yaml"
OUT = ROOT / "benchmarks" / "results" / "railway_vehicle.md"

CASES = {
    "KEC + ABM4 1 ms": ["contact.method=kec", "integrator.method=abm4", "integrator.step_s=1e-3"],
    "LUT + ABM4 1 ms": ["contact.method=lut", "integrator.method=abm4", "integrator.step_s=1e-3"],
    "KEC + RK4 1 ms": ["contact.method=kec", "integrator.method=rk4", "integrator.step_s=1e-3"],
    "KEC + DOPRI5 1e-4": ["contact.method=kec", "integrator.method=dopri5", "integrator.rtol=1e-4",
                          "integrator.atol=1e-4"],
    "KEC + DOPRI5 1e-6": ["contact.method=kec", "integrator.method=dopri5", "integrator.rtol=1e-6",
                          "integrator.atol=1e-6"],
    "KEC + BDF 1e-4": ["contact.method=kec", "integrator.method=bdf", "integrator.rtol=1e-4", "integrator.atol=1e-4"],
    "KEC + BDF 1e-6": ["contact.method=kec", "integrator.method=bdf", "integrator.rtol=1e-6", "integrator.atol=1e-6"],
    "KEC + RADAU5 1e-6": ["contact.method=kec", "integrator.method=radau5", "integrator.rtol=1e-6",
                          "integrator.atol=1e-6"],
    "LUT + BDF 1e-6": ["contact.method=lut", "integrator.method=bdf", "integrator.rtol=1e-6", "integrator.atol=1e-6"],
    "KEC + DOPRI5 1e-6, h ≤ 1 ms": ["contact.method=kec", "integrator.method=dopri5", "integrator.rtol=1e-6",
                                    "integrator.atol=1e-6", "integrator.max_step_s=1e-3"],
}
REFERENCE = ["integrator.method=dopri5", "integrator.rtol=1e-10", "integrator.atol=1e-10"]
PAPER = ("Paper 004 (Matlab, i5 2.5 GHz, 25 s): KEC + ABM ≈ 265 s CPU, KEC + RK4 ≈ 590 s, KEC + ode45 1e-4 "
         "≈ 200 s; LUT at K_hertz 7.075e13: ode15s 1e-7 11 193 s, RK4/ABM fail.")


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def prepare(overrides):
    sc, _ = load_scenario(CONFIG, overrides)
    return sc, build_railway_vehicle(sc)


def timed(sc, model):
    t0 = time.process_time()
    sol = solve(sc, model)
    return time.process_time() - t0, sol


def wheelset_y(model, sol) -> np.ndarray:
    """Lateral displacements of the wheelsets at the samples (states), float64[k, n_ws]."""
    offs = [int(model.layout.body_off[b]) for b, k in enumerate(model.layout.body_kinds) if k == "wheelset"]
    return np.asarray(sol.y)[:, offs]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sweep", action="store_true")
    args = ap.parse_args()
    repeats = 2 if args.quick else 5
    built = {name: prepare(ov) for name, ov in CASES.items()}
    for sc, model in built.values():          # warm-up: compile / load from the cache
        timed(sc, model)
    cpu = {name: [] for name in CASES}
    sols = {}
    loads = [load()]
    for _ in range(repeats):                  # interleaved repeats
        for name, (sc, model) in built.items():
            c, sol = timed(sc, model)
            cpu[name].append(c)
            sols[name] = sol
        loads.append(load())
    ref = {}
    ref_cpu = {}
    if not args.quick:
        for method in ("kec", "lut"):            # each contact method against its own reference
            sc, model = prepare(REFERENCE + [f"contact.method={method}"])
            ref_cpu[method], ref_sol = timed(sc, model)
            ref[method] = wheelset_y(model, ref_sol)
    lines = ["# Railway-vehicle benchmark (issue 14)", "",
             f"`python benchmarks/railway_vehicle.py{' --quick' if args.quick else ''}` on {platform.node()} "
             f"({platform.processor() or platform.machine()}), {repeats} interleaved repeats, CPU time of the "
             "integration only (numba warm), one core.  Loads during the run: " + "; ".join(loads) + ".", "",
             "Manchester wagon 1, irregular R = 500 m track (manchester_R500_irregular.yaml), 20 m/s, 25 s.", "",
             "| method | CPU median [s] | min [s] | RHS evaluations | µs per RHS | max abs Δy wheelsets vs "
             "DOPRI5 1e-10 of the same contact method [mm] |", "|---|---|---|---|---|---|"]
    for name, (sc, model) in built.items():
        sol = sols[name]
        nfev = int(sol.stats.get("nfev", 0)) if hasattr(sol, "stats") else 0
        med = float(np.median(cpu[name]))
        err = ""
        r = ref.get(sc.contact.method)
        if r is not None and sol.t.size == r.shape[0]:
            err = f"{np.max(np.abs(wheelset_y(model, sol) - r)) * 1e3:.3f}"
        us = f"{med / nfev * 1e6:.1f}" if nfev else ""
        lines.append(f"| {name} | {med:.3f} | {min(cpu[name]):.3f} | {nfev} | {us} | {err} |")
    kec = float(np.median(cpu["KEC + ABM4 1 ms"]))
    lut = float(np.median(cpu["LUT + ABM4 1 ms"]))
    lines += ["", f"LUT / KEC cost ratio (ABM4 1 ms, same run): {lut / kec:.2f}.  "
              f"KEC + ABM4 1 ms target ≤ 1 s: {'met' if kec <= 1.0 else 'missed'} ({kec:.3f} s).", "", PAPER]
    if ref:
        lines.append(f"\nReferences DOPRI5 1e-10: KEC {ref_cpu['kec']:.1f} s, LUT {ref_cpu['lut']:.1f} s CPU.")
    if args.sweep:
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            l0 = load()
            subprocess.run([sys.executable, "-m", "hpcrail", "sweep", str(JOB), "-o", str(Path(d) / "s.zarr"),
                            "--workers", "2", "-q"], check=True)
            wall = time.perf_counter() - t0
        lines.append(f"\nSweep `jobs/wagon_curving.yaml` (32 scenarios of 16 s), 2 worker processes: {wall:.1f} s "
                     f"wall including cluster start-up, {32 / wall:.2f} scenarios/s ({l0} at the start).")
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.quick:
        OUT.write_text(text)


if __name__ == "__main__":
    main()
