"""The pneumatic brake on hidden-vehicle blocks (issue 24, "the same on blocks (threads) as the LTD states"):
serial against shared-state blocks on 2 threads, ratios measured in one run.

Cases: the 150-vehicle brake rack (``configs/brakes/rack/brake_rack_150.yaml``: emergency at 1 s, release at
40 s; BDF2 rtol 1e-4 as shipped, 60 s) and the same rack with RK4 (0.5 ms, the first ``--rk4-seconds``), then
the rack re-made with ``--sizes`` vehicles (BDF2, 20 s) to find where blocks pay.  Per case: the integration
only (compilation excluded by a warm-up run), ``--repeats`` interleaved runs serial / threads, medians of the
wall time and of the process CPU time (all threads: what the run costs the machine), the speed-up (serial wall /
threads wall), the load average (2 cores) around each case, and the accuracy reached: whether every state sample
and every observer entry (brake metrics, coupler envelopes) is bitwise the serial run's.

Usage:  python benchmarks/brakes_blocks.py [--repeats 5] [--sizes 600,2400] [--rk4-seconds 10]
Writes benchmarks/results/brakes_blocks.md (and prints it).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "2")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402
import numpy as np  # noqa: E402

from hpcrail.integrators import Problem, integrate  # noqa: E402
from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.kinds.ltd.problem import ltd_problem  # noqa: E402
from hpcrail.partition.layout import scenario_layout  # noqa: E402
from hpcrail.partition.ltd import partitioned_params, thread_kernels  # noqa: E402
from hpcrail.results.sampling import sample_times  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "brakes_blocks.md"
RACK = ROOT / "configs" / "brakes" / "rack" / "brake_rack_150.yaml"
THREADS = 2


def problems(overrides):
    """``(sc, serial Problem, threads Problem, layout)`` of the rack with ``overrides`` (the threads problem as
    :func:`hpcrail.kinds.ltd.partitioned._run_threads` builds it)."""
    sc, _ = load_scenario(RACK, list(overrides))
    model, mono = ltd_problem(sc)
    layout = scenario_layout(sc.partition, model.n_vehicles, THREADS)
    pp = partitioned_params(model.params, layout)
    k = thread_kernels(model.params)
    thr = Problem(k.rhs, k.observe, pp, model.y0, jac=k.jac, t0=0.0, atol_scale=model.atol_scale, acc0=model.acc0,
                  rtol_scale=mono.rtol_scale, jac_pattern=mono.jac_pattern)
    return sc, mono, thr, layout


def timed(sc, prob, nthreads):
    T = sc.simulation.duration_s
    before = numba.get_num_threads()
    numba.set_num_threads(nthreads)
    try:
        w0, c0 = time.perf_counter(), time.process_time()
        sol = integrate(prob, sc.integrator.method, sample_times(0.0, T, 0.25), T, **sc.integrator.kwargs())
        return time.perf_counter() - w0, time.process_time() - c0, sol
    finally:
        numba.set_num_threads(before)


def measure(label, overrides, repeats):
    sc, mono, thr, layout = problems(overrides)
    timed(sc, mono, 1)          # warm-up: compile (or load) both kernels
    timed(sc, thr, THREADS)
    load0 = os.getloadavg()[0]
    ws, cs, wt, ct = [], [], [], []
    for _ in range(repeats):
        w, c, a = timed(sc, mono, 1)
        ws.append(w)
        cs.append(c)
        w, c, b = timed(sc, thr, THREADS)
        wt.append(w)
        ct.append(c)
    load1 = os.getloadavg()[0]
    assert a.success and b.success, (a.message, b.message)
    same = bool(np.array_equal(a.y, b.y, equal_nan=True) and np.array_equal(a.acc, b.acc, equal_nan=True))
    med = statistics.median
    row = (f"| {label} | {sc.integrator.method} | {len(sc.vehicle_type_names())} | {layout.n_blocks} | {int(a.stats['steps'])} | "
           f"{med(ws):.3f} | {med(cs):.3f} | {med(wt):.3f} | {med(ct):.3f} | {med(ws) / med(wt):.2f} | "
           f"{'bitwise' if same else 'DIFFERS'} | {load0:.2f} / {load1:.2f} |")
    print(row, flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sizes", default="600,2400", help="rack lengths (vehicles) of the BDF2 20 s runs")
    ap.add_argument("--rk4-seconds", type=float, default=10.0)
    args = ap.parse_args()
    rows = [measure("rack 150, 60 s (as shipped)", [], args.repeats),
            measure(f"rack 150, {args.rk4_seconds:g} s", ["integrator.method=rk4", "integrator.step_s=0.0005",
                                                           f"simulation.duration_s={args.rk4_seconds}"], args.repeats)]
    for n in (int(s) for s in args.sizes.split(",") if s):
        rows.append(measure(f"rack {n}, 20 s", [f"consist.1.count={n - 1}", "simulation.duration_s=20"],
                            max(1, args.repeats // 2)))
    lines = [
        "# The pneumatic brake on hidden-vehicle blocks: serial vs 2 threads (shared state)", "",
        f"`python benchmarks/brakes_blocks.py --repeats {args.repeats} --sizes {args.sizes} --rk4-seconds "
        f"{args.rk4_seconds:g}` ({time.strftime('%Y-%m-%d %H:%M')}, numba {numba.__version__}, "
        f"{os.cpu_count()} CPUs, threading layer {numba.threading_layer()}, OMP_WAIT_POLICY "
        f"{os.environ.get('OMP_WAIT_POLICY', '-')}).", "",
        "Integration only (compilation excluded), medians of interleaved runs; wall time and process CPU time (all "
        "threads) [s]; speed-up = serial wall / threads wall; blocks: the default layout for 2 threads (2 equal "
        "blocks); result: every state sample and observer entry of the threads run against the serial run's; "
        "load average (1 min, 2 cores) before / after the case.  **The machine was shared while this ran: the "
        "threads figures suffer most from other load (a parallel region waits for its slowest thread).**", "",
        "| case | method | vehicles | blocks | steps | serial wall | serial CPU | threads wall | threads CPU | "
        "speed-up | result | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows, ""]
    text = "\n".join(lines)
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
