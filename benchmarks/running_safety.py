"""Cost of the quasi-static running safety of every vehicle (issue 28) → benchmarks/results/running_safety.md.

``hpcrail run configs/trains/train4.yaml`` computes the quasi-static Y/Q, truck-side Y/Q, ΔQ/Q and ΣY of all 243
vehicles at every ``output.running_safety.interval_s`` (default 0.5 s) of the 3863 s trip.  This measures, numba
warm, medians of ``--repeats`` interleaved repeats, wall and process CPU time:

1. the whole run (``hpcrail.simulate.run_scenario``: integration, outputs, dataset) with the assessment on (the
   default) and off (``output.running_safety.enabled=false``) — the overhead of the default in %;
2. the assessment alone (:func:`hpcrail.kinds.ltd.safety.add_running_safety` on a run sampled on its grid), the
   part of it spent building the bogies' curving tables (cached per process: the first scenario of a process
   pays them), and its cost per vehicle and sample;
3. the sampling interval's effect: the worst quasi-static ratio and the largest sampled buff force against the
   every-step envelope, for intervals 2, 1, 0.5 and 0.25 s (why 0.5 s is the default).

    python benchmarks/running_safety.py                # train 4, 3 repeats
    python benchmarks/running_safety.py --repeats 5

The machine is shared: the load average is printed next to every number.
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


def timed(fn):
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenario", default=str(ROOT / "configs/trains/train4.yaml"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/running_safety.md"))
    args = ap.parse_args()

    from hpcrail.kinds import load_scenario
    from hpcrail.kinds.ltd import safety
    from hpcrail.kinds.ltd.outputs import SERIES_NAMES
    from hpcrail.kinds.ltd.result import ltd_result
    from hpcrail.kinds.ltd.problem import ltd_problem
    from hpcrail.integrators import integrate
    from hpcrail.models.safety import quasi_static as qs
    from hpcrail.results.sampling import sample_times
    from hpcrail.simulate import run_scenario

    on, _ = load_scenario(args.scenario)
    off, _ = load_scenario(args.scenario, ["output.running_safety.enabled=false"])
    run_scenario(on)          # warm: compile, curving tables
    run_scenario(off)
    rows = {"on": [], "off": []}
    loads = []
    for _ in range(args.repeats):
        for key, sc in (("off", off), ("on", on)):
            _ds, w, c = timed(lambda: run_scenario(sc))
            rows[key].append((w, c))
            loads.append(os.getloadavg()[0])
    med = {k: np.median(np.array(v), axis=0) for k, v in rows.items()}
    over_w = 100.0 * (med["on"][0] / med["off"][0] - 1.0)
    over_c = 100.0 * (med["on"][1] / med["off"][1] - 1.0)

    # the assessment alone, on a result sampled on its grid
    model, prob = ltd_problem(on)
    t_req = sample_times(0.0, on.simulation.duration_s, on.output.interval_s)
    t_all = safety.sample_grid(on, t_req)
    sol = integrate(prob, on.integrator.method, t_all, on.simulation.duration_s, **on.integrator.kwargs())
    alone = []
    for _ in range(args.repeats):
        res = ltd_result(on, model, sol)
        _r, w, c = timed(lambda: safety.add_running_safety(on, res, t_req, SERIES_NAMES))
        alone.append((w, c))
    a_w, a_c = np.median(np.array(alone), axis=0)
    qs.cached_table.cache_clear()
    res = ltd_result(on, model, sol)
    _r, cold_w, _c = timed(lambda: safety.add_running_safety(on, res, t_req, SERIES_NAMES))
    n_s, n_v = t_all.size, len(on.vehicle_type_names())

    # sampling interval against the every-step envelope
    acc_rows = []
    for dt in (2.0, 1.0, 0.5, 0.25):
        sc, _ = load_scenario(args.scenario, [f"output.running_safety.interval_s={dt}"])
        ds = run_scenario(sc)
        env = float(ds["max_buff_force"])
        sampled = float(np.nanmax(-ds["coupler_force"].values)) if "coupler_force" in ds else float("nan")
        acc_rows.append((dt, float(ds["worst_qs_ratio"]), int(ds["worst_qs_ratio_vehicle"]),
                         float(ds["worst_qs_y_over_q"]), float(ds["worst_qs_wheel_unloading"]),
                         int(ds["running_safety_samples"]), env, sampled))
    load = float(np.mean(loads))
    lines = [
        "# Quasi-static running safety of every vehicle: cost (issue 28)", "",
        f"`python benchmarks/running_safety.py --repeats {args.repeats}` on {platform.node()}, "
        f"{time.strftime('%Y-%m-%d %H:%M')}; load average during the runs {load:.1f} "
        f"({os.cpu_count()} CPUs); scenario `{Path(args.scenario).name}` ({n_v} vehicles, "
        f"{on.simulation.duration_s:g} s, {on.integrator.method}).", "",
        "## Whole run (`run_scenario`: integration, outputs, dataset), numba warm, medians", "",
        "| running safety | wall [s] | CPU [s] |", "|---|---:|---:|",
        f"| off (`output.running_safety.enabled=false`) | {med['off'][0]:.3f} | {med['off'][1]:.3f} |",
        f"| on (default, every {on.output.running_safety.interval_s:g} s) | {med['on'][0]:.3f} | {med['on'][1]:.3f} |",
        "", f"**Overhead of the default: {over_w:+.1f} % wall, {over_c:+.1f} % CPU.**", "",
        "## The assessment alone", "",
        f"`add_running_safety` on {n_s} samples × {n_v} vehicles: {a_w:.3f} s wall, {a_c:.3f} s CPU (median, curving "
        f"tables cached) = {1e9 * a_w / (n_s * n_v):.0f} ns per vehicle and sample; with the tables built "
        f"(first scenario of a process): {cold_w:.3f} s.", "",
        "## Sampling interval against the every-step envelope", "",
        "| interval [s] | samples | worst ratio | vehicle | worst Y/Q | worst dQ/Q | peak buff, every step [kN] | "
        "peak buff, sampled series [kN] |", "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for dt, wr, veh, yq, dq, ns, env, smp in acc_rows:
        lines.append(f"| {dt:g} | {ns} | {wr:.4f} | {veh} | {yq:.4f} | {dq:.4f} | {env / 1e3:.1f} | {smp / 1e3:.1f} |")
    lines += ["", "(The sampled series column is the stored `coupler_force` at `output.interval_s`; the running-safety "
              "maxima use the finer running-safety grid.)", ""]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
