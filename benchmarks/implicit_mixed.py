"""Implicit methods on the mixed train (issue 27) → benchmarks/results/implicit_mixed.md.

configs/mixed/train4_empty_wagon.yaml (243 vehicles, the empty Manchester-type wagon at 124, KEC contact,
dynamic braking through R = 400 m) over ``--duration`` seconds, monolithic, one thread, numba warm.  Per case:
thread CPU time and wall time of the integration (``time.thread_time`` / ``time.perf_counter`` around
:func:`hpcrail.kinds.mixed_train.run.solve`; the integrator runs in the calling thread), medians of
``--repeats`` interleaved repeats, the load average beside each, the step statistics, and the accuracy against
RK4 0.25 ms in the same run (the issue's reference): peak buff force at the wagon, max (Y/Q) 2 m, ΔQ/Q and
ΣY/limit (EN 14363 sliding means of the run's own samples).

Cases: the shipped DOPRI5 rtol 1e-5 (the baseline: explicit, its step limited by stability), and TR-BDF2 /
BDF2 with the Jacobian of the mixed train's pattern (the consist's band, the wagon's block eliminated into it,
grouped finite differences: :func:`hpcrail.kinds.mixed_train.run.jacobian_pattern`).

    python benchmarks/implicit_mixed.py --duration 60 --repeats 3
    python benchmarks/implicit_mixed.py --duration 600 --repeats 1     # the issue's 600 s case (long)
    python benchmarks/implicit_mixed.py --vehicle --repeats 3           # the Manchester wagon alone

``--vehicle``: the railway vehicle alone (configs/wheelrail/manchester_R500_irregular.yaml, 25 s, KEC), ABM4 1 ms
(paper 004's setting, the baseline) against TR-BDF2 with the structured Jacobian (``vehicle_jac``) and with dense
finite differences (``integrator.jacobian=dense``); accuracy: the largest lateral-displacement difference of
the wheelsets and bodies against DOPRI5 rtol 1e-10 (paper 004 eq 33 is the mean absolute difference: both given)
→ benchmarks/results/implicit_vehicle.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.kinds.mixed_train import run as R  # noqa: E402
from hpcrail.kinds.mixed_train.build import build_mixed  # noqa: E402

CONFIG = ROOT / "configs" / "mixed" / "train4_empty_wagon.yaml"
OUT = ROOT / "benchmarks" / "results" / "implicit_mixed.md"     # --duration 600; 60 s: implicit_mixed_60s.md

CASES = {
    "dopri5 rtol 1e-5 (shipped, baseline)": ["integrator.method=dopri5", "integrator.rtol=1e-5"],
    "trbdf2 rtol 1e-5": ["integrator.method=trbdf2", "integrator.rtol=1e-5", "integrator.atol=1e-7"],
    "trbdf2 rtol 1e-6": ["integrator.method=trbdf2", "integrator.rtol=1e-6", "integrator.atol=1e-8"],
    "bdf2 rtol 1e-5": ["integrator.method=bdf2", "integrator.rtol=1e-5", "integrator.atol=1e-7"],
}
REFERENCE = ["integrator.method=rk4", "integrator.step_s=0.00025"]
METRICS = ("peak_buff_force_at_detailed", "worst_y_over_q", "worst_wheel_unloading", "worst_sum_y_ratio")


def load() -> float:
    return os.getloadavg()[0]


def one(duration, overrides):
    sc, _ = load_scenario(CONFIG, [f"simulation.duration_s={duration}", *overrides])
    model = build_mixed(sc)
    t0, c0 = time.perf_counter(), time.thread_time()
    sol, _ = R.solve(sc, model, backend="off")
    cpu, wall = time.thread_time() - c0, time.perf_counter() - t0
    res = R.mixed_result(sc, model, sol)
    vals = {k: float(np.asarray(res.values[k]).ravel()[0]) for k in METRICS}
    return cpu, wall, load(), sol, vals


VEHICLE = ROOT / "configs" / "wheelrail" / "manchester_R500_irregular.yaml"
VCASES = {
    "abm4 1 ms (baseline)": ["integrator.method=abm4", "integrator.step_s=0.001"],
    "trbdf2 rtol 1e-5, structured Jacobian": ["integrator.method=trbdf2", "integrator.rtol=1e-5",
                                              "integrator.atol=1e-8"],
    "trbdf2 rtol 1e-5, dense FD Jacobian": ["integrator.method=trbdf2", "integrator.rtol=1e-5",
                                            "integrator.atol=1e-8", "integrator.jacobian=dense"],
}


def vehicle(repeats: int, out: Path):
    from hpcrail.kinds.railway_vehicle.build import build_railway_vehicle
    from hpcrail.kinds.railway_vehicle.run import solve as rv_solve

    def one_v(ov):
        sc, _ = load_scenario(VEHICLE, ["simulation.duration_s=25", *ov])
        m = build_railway_vehicle(sc)
        t0, c0 = time.perf_counter(), time.thread_time()
        sol = rv_solve(sc, m)
        return time.thread_time() - c0, time.perf_counter() - t0, load(), sol, m

    for ov in VCASES.values():
        one_v(ov)
    _c, _w, lref, ref, m = one_v(["integrator.method=dopri5", "integrator.rtol=1e-10", "integrator.atol=1e-12"])
    P = m.params
    lat = [int(P.b_off[b]) + 0 for b in range(P.n_body)]     # y is the first coordinate of every body block
    rows = {k: [one_v(ov) for _ in range(repeats)] for k, ov in VCASES.items()}
    base = float(np.median([r[0] for r in rows[next(iter(VCASES))]]))
    lines = ["# The Manchester wagon alone, implicit with the structured Jacobian (issue 27)", "",
             f"`python benchmarks/implicit_mixed.py --vehicle --repeats {repeats}` — {time.strftime('%Y-%m-%d %H:%M')};"
             f" configs/wheelrail/manchester_R500_irregular.yaml, 25 s, KEC, numba warm, thread CPU / wall of the "
             f"integration, medians; reference DOPRI5 rtol 1e-10 ({_c:.2f} s CPU, load {lref:.2f}).", "",
             "| method | CPU s | wall s | ratio to ABM4 CPU | loads | steps | nfev | njev | max lateral error [m] | "
             "mean abs lateral error [m] |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, rr in rows.items():
        sol = rr[-1][3]
        d = np.abs(sol.y[:, lat] - ref.y[:, lat])
        st = sol.stats
        cpu = float(np.median([r[0] for r in rr]))
        lines.append(f"| {name} | {cpu:.3f} | {float(np.median([r[1] for r in rr])):.3f} | {base / cpu:.2f}× | "
                     f"{', '.join('%.1f' % r[2] for r in rr)} | {st['steps']} | {st['nfev']} | {st['njev']} | "
                     f"{d.max():.2e} | {d.mean():.2e} |")
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--vehicle", action="store_true", help="the Manchester wagon alone instead")
    a = ap.parse_args()
    if a.vehicle:
        return vehicle(a.repeats, a.out or OUT.with_name("implicit_vehicle.md"))
    a.out = a.out or OUT
    for ov in [REFERENCE, *CASES.values()]:          # warm: compile every kernel once (short run)
        one(0.2, ov)
    _c, _w, ref_load, ref, rv = one(a.duration, REFERENCE)
    print(f"reference RK4 0.25 ms: {_c:.1f} s CPU, load {ref_load:.2f}: {rv}", flush=True)
    rows = {k: [] for k in CASES}
    for _ in range(a.repeats):
        for name, ov in CASES.items():
            rows[name].append(one(a.duration, ov))
            c, w, ld, sol, vals = rows[name][-1]
            print(f"{name}: {c:.2f} s CPU, {w:.2f} s wall, load {ld:.2f}, steps {sol.stats['steps']}, "
                  f"{sol.status.name}", flush=True)
    base = float(np.median([r[0] for r in rows[next(iter(CASES))]]))
    lines = [
        "# Implicit methods on the mixed train (issue 27)", "",
        f"`python benchmarks/implicit_mixed.py --duration {a.duration:g} --repeats {a.repeats}` — "
        f"{platform.node()}, {platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d %H:%M')}.",
        "", f"configs/mixed/train4_empty_wagon.yaml, {a.duration:g} s, monolithic, one thread, numba warm; "
        "thread CPU and wall time of the integration, medians of the repeats (load average at each run's end "
        "in brackets: the machine is shared).  Accuracy: relative difference against RK4 0.25 ms in the same "
        f"run (reference: {_c:.1f} s CPU, load {ref_load:.2f}).", "",
        "| method | CPU s (median) | wall s | ratio to baseline CPU | loads | steps | nfev | njev | nlu | "
        "peak buff | (Y/Q)2m | ΔQ/Q | ΣY/lim |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, rr in rows.items():
        cpu = float(np.median([r[0] for r in rr]))
        wall = float(np.median([r[1] for r in rr]))
        sol, vals = rr[-1][3], rr[-1][4]
        st = sol.stats
        acc = [f"{(vals[k] - rv[k]) / abs(rv[k]) * 100:+.3f} %" if rv[k] else "n/a" for k in METRICS]
        lines.append(f"| {name} | {cpu:.2f} | {wall:.2f} | {base / cpu:.2f}× faster | "
                     f"{', '.join('%.1f' % r[2] for r in rr)} | {st['steps']} | {st['nfev']} | {st['njev']} | "
                     f"{st['nlu']} | {' | '.join(acc)} |")
    lines += ["", "Reference values (RK4 0.25 ms): " + ", ".join(f"{k} = {rv[k]:.6g}" for k in METRICS),
              "Values of each case (last repeat): " + "; ".join(
                  f"{name}: " + ", ".join(f"{rr[-1][4][k]:.6g}" for k in METRICS) for name, rr in rows.items()), ""]
    a.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
