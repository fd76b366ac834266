"""The pneumatic trip in one pass and in two passes (issue 24): CPU and accuracy, measured in one run.

``air_brake.pneumatic.passes: two`` (:mod:`hpcrail.kinds.ltd.two_pass`) integrates the brake system alone, then
the motion alone with the recorded cylinder pressures (exact for a time-based schedule: the system is block
triangular); ``one`` integrates all 3651 states together.  This script times, on ``train4_pneumatic.yaml``'s full
trip: train 4 (no air brake, the issue's yardstick), the one-pass run, the two passes (and the brake pass alone),
and gives each run's coupler-envelope error against the one-pass run at rtol 1e-7 (``brakes.reference``).
Thread CPU time of the integration (compilation excluded: one warm-up run of each first), medians of
``--repeats`` rounds over the four runs (interleaved); one core.

Usage:  python benchmarks/brakes_two_pass.py [--repeats 3] [--duration 3863]
Writes benchmarks/results/brakes_two_pass.md (and prints it).  Records the load average with every block.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from brakes import ROOT, TRAINS, case, envelope_error, reference, run  # noqa: E402

from hpcrail.kinds.ltd.two_pass import brake_pass, layout  # noqa: E402
from hpcrail.results.sampling import sample_times  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "brakes_two_pass.md"


def timed(fns, repeats):
    """Median thread CPU [s] and last output of each of ``fns`` (each returns ``(cpu, *out)``), the repeats
    interleaved (one round over all, ``repeats`` times) so that a drift of the machine's speed hits every run
    alike; one warm-up call of each first (compilation)."""
    for fn in fns:
        fn()
    cs, outs = [[] for _ in fns], [None] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            c, *outs[i] = fn()
            cs[i].append(c)
    return [(float(np.median(c)), o) for c, o in zip(cs, outs)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3863.0)
    a = ap.parse_args()
    load = lambda: " / ".join(f"{x:.2f}" for x in os.getloadavg()[:2])  # noqa: E731
    T = a.duration
    sc, model, prob = case(TRAINS / "train4_pneumatic.yaml", [f"simulation.duration_s={T:g}"])
    sc4, _m4, prob4 = case(TRAINS / "train4.yaml", [f"simulation.duration_s={T:g}"])
    M = model.params.n_veh - 1
    l0 = load()
    ref, how = reference(sc, prob, M)
    print(f"reference (one pass, rtol 1e-7): {how}", flush=True)
    t_out = sample_times(0.0, T, 10.0)
    kw = sc.integrator.kwargs()

    def brake_only():
        c0 = time.thread_time()
        out = brake_pass(prob, sc.integrator.method, t_out, T, kw)
        return time.thread_time() - c0, out

    (c_t4, (sol_t4,)), (c_one, (sol_one,)), (c_two, (sol_two,)), (c_b, ((_Yb, _yf, table, st_b, *_r),)) = timed(
        [lambda: run(sc4, prob4), lambda: run(sc, prob, passes=1), lambda: run(sc, prob, passes=2), brake_only],
        a.repeats)
    l1 = load()

    motion, rec = layout(model.params, prob.y0.size)
    brake = np.setdiff1d(np.arange(prob.y0.size), motion)
    press = brake[np.abs(sol_one.y[:, brake]).max(axis=0) > 1e4]      # the pressure states [Pa] (and q_bc)
    dbrake = np.abs(sol_two.y[:, press] - sol_one.y[:, press]).max(axis=1)
    dspeed = np.abs(sol_two.y[:, motion] - sol_one.y[:, motion])[:, 1:2 * model.params.n_veh:2].max()
    e_one = envelope_error(M, sol_one.acc, ref)
    e_two = envelope_error(M, sol_two.acc, ref)
    keys = ("steps", "rejected", "nlu", "njev", "nfev", "newton_iterations")
    st = lambda d: " / ".join(f"{d[k]:,}" for k in keys)  # noqa: E731
    st_m = {k: sol_two.stats[k] - st_b[k] for k in keys}
    lines = [
        "# Pneumatic trip in one pass and in two passes (issue 24)", "",
        f"`python benchmarks/brakes_two_pass.py --repeats {a.repeats} --duration {T:g}`; thread CPU of the "
        "integration (compilation excluded), medians of interleaved rounds; one core; load average (1 / 5 min) "
        f"{l0} → {l1}.  Envelope error: max over couplers of the draft/buff envelope error relative to the largest "
        f"force, against the one-pass run at rtol 1e-7 ({how}).  Settings of the files "
        f"({sc.integrator.method} rtol {sc.integrator.rtol:g}, atol {sc.integrator.atol:g} for the pneumatic trip, "
        f"{sc4.integrator.method} rtol {sc4.integrator.rtol:g} for train 4); the motion pass at those × "
        f"√({prob.y0.size}/{motion.size}) = {np.sqrt(prob.y0.size / motion.size):.2f} (hpcrail.kinds.ltd.two_pass).", "",
        "| run | states | CPU [s] | × train 4 | steps / rejected / LU / Jacobians / RHS / Newton iterations | envelope error |",
        "|---|---|---|---|---|---|",
        f"| train 4 (no air brake) | {prob4.y0.size} | {c_t4:.3f} | 1.00 | {st(sol_t4.stats)} | – |",
        f"| pneumatic, one pass | {prob.y0.size} | {c_one:.3f} | {c_one / c_t4:.2f} | {st(sol_one.stats)} "
        f"| {100 * e_one:.3f} % |",
        f"| pneumatic, **two passes** | | **{c_two:.3f}** | **{c_two / c_t4:.2f}** | {st(sol_two.stats)} "
        f"| **{100 * e_two:.3f} %** |",
        f"| of which the brake pass (alone) | {prob.y0.size} (motion frozen) | {c_b:.3f} | {c_b / c_t4:.2f} "
        f"| {st(st_b)} | – |",
        f"| of which the motion pass (difference) | {motion.size} | {c_two - c_b:.3f} | {(c_two - c_b) / c_t4:.2f} "
        f"| {st(st_m)} | |",
        "",
        f"- Brake pass: {len(np.unique(table[:, 0])):,} records of {rec.size} states.  Two passes against one pass at "
        f"the 10 s samples: pressure states (pipe cells, reservoirs, cylinders) within {np.median(dbrake) / 1e3:.3g} kPa "
        f"(median over the samples of the largest difference), {dbrake.max() / 1e3:.3g} kPa at worst (a front "
        f"passing a sample); speeds within {dspeed:.3g} m/s.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
