"""The pneumatic brake's cost (issue 24), ratios measured in one run.

1. ``train4_pneumatic.yaml`` (train 4 with the pneumatic brake, the full 3863 s trip with a full-service
   application and release) against the shipped ``train4.yaml`` trip: thread CPU time of the integration
   (compilation excluded), median of ``--repeats`` interleaved runs; the pneumatic trip's envelope error
   (max over couplers of the per-coupler max draft/buff force error relative to the largest force) against
   the same scenario in one pass at rtol 1e-7 (cached; an RK4 reference is out of reach: the driver's brake
   valve's relay holds explicit steps below 0.2 ms).  The trip runs as shipped (two passes,
   ``air_brake.pneumatic.passes``; ``brakes_two_pass.py`` sets it beside one pass).  Target: ≤ 0.5 % in ≤ 3×
   the CPU time of train 4.
2. The 150-vehicle rack (``configs/brakes/rack/brake_rack_150.yaml``, 60 s): CPU time.  Target ≤ 0.2 s.
3. Cost against the number of vehicles: the rack re-made with N vehicles, 20 s emergency; CPU per vehicle
   and simulated second, and the brake part alone (one right-hand side and one Jacobian evaluation of the
   brake rows, ns per vehicle).  Target: linear.

Usage:  python benchmarks/brakes.py [--repeats 3] [--quick]   (quick: the first 1400 s of the trips)
Writes benchmarks/results/brakes.md (and prints it).  Records the load average with every figure.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402

from hpcrail.config.loading import config_hash  # noqa: E402
from hpcrail.integrators import integrate  # noqa: E402
from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.kinds.ltd.problem import ltd_problem  # noqa: E402
from hpcrail.models.couplers.envelope import ACC_HEAD  # noqa: E402
from hpcrail.results.sampling import sample_times  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "brakes.md"
CACHE = ROOT / "benchmarks" / "results" / ".cache"
TRAINS = ROOT / "configs" / "trains"
RACK = ROOT / "configs" / "brakes" / "rack" / "brake_rack_150.yaml"
REF_RTOL = 1e-7


def envelopes(M, acc):
    return np.maximum(acc[ACC_HEAD:ACC_HEAD + M], 0.0), np.maximum(-acc[ACC_HEAD + M:ACC_HEAD + 2 * M], 0.0)


def envelope_error(M, acc, ref):
    """max over couplers and draft/buff of |envelope − reference| / largest reference force."""
    d, b = envelopes(M, acc)
    rd, rb = ref
    return max(np.abs(d - rd).max(), np.abs(b - rb).max()) / max(rd.max(), rb.max())


def case(path, overrides=()):
    sc, _ = load_scenario(path, list(overrides))
    model, prob = ltd_problem(sc)
    return sc, model, prob


def run(sc, prob, passes=None, **extra):
    """Thread CPU [s] and solution of the scenario's integration as ``hpcrail run`` does it (one pass, or two
    passes for ``air_brake.pneumatic.passes: two``; ``passes`` overrides), samples every 10 s."""
    from hpcrail.kinds.ltd.two_pass import integrate_two_pass, uses_two_passes

    kw = dict(sc.integrator.kwargs(), **extra)
    T = sc.simulation.duration_s
    two = uses_two_passes(sc) if passes is None else passes == 2
    c0 = time.thread_time()
    if two:
        sol = integrate_two_pass(prob, sc.integrator.method, sample_times(0.0, T, 10.0), T, **kw)
    else:
        sol = integrate(prob, sc.integrator.method, sample_times(0.0, T, 10.0), T, **kw)
    return time.thread_time() - c0, sol


def reference(sc, prob, M):
    """Coupler envelopes of the scenario integrated in one pass at rtol ``REF_RTOL`` (cached by configuration, the
    pass setting aside)."""
    d = sc.model_dump(mode="json")
    d["air_brake"]["pneumatic"].pop("passes", None)
    key = hashlib.sha256(f"{config_hash(d)}-{REF_RTOL}-{numba.__version__}".encode()).hexdigest()[:16]
    path = CACHE / f"brakes_ref_{sc.name}_{key}.npy"
    if path.exists():
        return envelopes(M, np.load(path)), "cached"
    c, sol = run(sc, prob, passes=1, rtol=REF_RTOL)
    assert sol.success, sol.message
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, sol.acc)
    return envelopes(M, sol.acc), f"{c:.0f} s"


def rack(n: int, duration: float):
    """The AAR rack with n vehicles."""
    return case(RACK, [f"consist.1.count={n - 1}", f"simulation.duration_s={duration:g}"])


def per_vehicle_costs(model, prob, reps=200):
    """ns per vehicle of one brake right-hand side and one brake Jacobian (the LTD part excluded)."""
    from hpcrail.models.brakes.kernel import brake_eval_range, brake_jac_range

    p = model.params
    y = model.y0.copy()
    y[2] -= 2e4     # the head's pipe off equilibrium: every valve evaluated as in a transient
    d = np.zeros_like(y)
    vals = np.zeros(prob.jac_pattern.rows.size)
    brake_eval_range(1.5, y, p, d, 0, p.n_veh)
    brake_jac_range(1.5, y, p, vals, 0, p.n_veh)
    c0 = time.thread_time()
    for _ in range(reps):
        brake_eval_range(1.5, y, p, d, 0, p.n_veh)
    r = (time.thread_time() - c0) / reps
    c0 = time.thread_time()
    for _ in range(max(1, reps // 4)):
        brake_jac_range(1.5, y, p, vals, 0, p.n_veh)
    j = (time.thread_time() - c0) / max(1, reps // 4)
    return r / p.n_veh * 1e9, j / p.n_veh * 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the first 1400 s of the trips (the application included)")
    ap.add_argument("--sizes", default="50,100,200,400,800")
    args = ap.parse_args()
    lines = ["# Pneumatic brake: cost (issue 24)", "",
             f"`python benchmarks/brakes.py --repeats {args.repeats}{' --quick' if args.quick else ''}`; "
             "thread CPU time of the integration (compilation excluded), medians; load average (2 cores) with "
             "every block.", ""]
    over = ["simulation.duration_s=1400"] if args.quick else []
    # ---- 1. the trips
    sc4, m4, p4 = case(TRAINS / "train4.yaml", over)
    scp, mp, pp = case(TRAINS / "train4_pneumatic.yaml", over)
    M = mp.params.n_veh - 1
    for sc, prob in ((sc4, p4), (scp, pp)):
        integrate(prob, sc.integrator.method, np.array([0.0]), 1.0, **sc.integrator.kwargs())
    ref, note = reference(scp, pp, M)
    l0 = os.getloadavg()[0]
    cpu4, cpup, s4, sp = [], [], None, None
    for _ in range(args.repeats):
        c, s4 = run(sc4, p4)
        cpu4.append(c)
        c, sp = run(scp, pp)
        cpup.append(c)
    l1 = os.getloadavg()[0]
    err = envelope_error(M, sp.acc, ref)
    c4, cp = float(np.median(cpu4)), float(np.median(cpup))
    T = scp.simulation.duration_s
    lines += [f"## Train 4 trip ({T:g} s), pneumatic against the shipped LTD-only trip", "",
              f"Load average {l0:.2f} before / {l1:.2f} after.  Envelope error of the pneumatic trip against the "
              f"same scenario at rtol {REF_RTOL:g} ({note}).", "",
              "| scenario | states | method | CPU [s] | steps | RHS | Jacobians | LU | µs/step | envelope error [%] |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    from hpcrail.kinds.ltd.two_pass import uses_two_passes

    pname = "train4_pneumatic.yaml" + (" (two passes)" if uses_two_passes(scp) else "")
    for name, sc, prob, c, s, e in (("train4.yaml", sc4, p4, c4, s4, None), (pname, scp, pp, cp, sp, err)):
        st = s.stats
        lines.append(f"| {name} | {prob.y0.size} | {sc.integrator.method} rtol {sc.integrator.rtol:g} | {c:.3f} | "
                     f"{st['steps']:,} | {st['nfev']:,} | {st['njev']:,} | {st['nlu']:,} | "
                     f"{1e6 * c / max(1, st['steps']):.1f} | {'' if e is None else f'{100 * e:.3f}'} |")
    lines += ["", f"**Ratio pneumatic / LTD-only: {cp / c4:.2f}×** (target ≤ 3×); envelope error {100 * err:.3f} % "
              "(target ≤ 0.5 %).", ""]
    print("\n".join(lines[-12:]), flush=True)
    # ---- 2. the rack, in fresh processes (this one has run the trips: the same code times 10 % slower here)
    from rack_processes import fresh_process_medians

    l0 = os.getloadavg()[0]
    cr, st = fresh_process_medians(max(3, args.repeats), 5)
    l1 = os.getloadavg()[0]
    lines += ["## 150-vehicle rack, 60 s (emergency at 1 s, release at 40 s)", "",
              f"Load average {l0:.2f} / {l1:.2f}.  {st['states']} states; {st['steps']:,} steps, {st['nfev']:,} RHS, "
              f"{st['njev']:,} Jacobians, {st['nlu']:,} LU.  {len(cr)} fresh processes, each the median of 5 runs "
              "(`benchmarks/rack_processes.py`).", "",
              f"**CPU {np.median(cr):.3f} s** (median over the processes; {min(cr):.3f}-{max(cr):.3f} s; target "
              "≤ 0.2 s).", ""]
    print("\n".join(lines[-5:]), flush=True)
    # ---- 3. cost against the number of vehicles
    l0 = os.getloadavg()[0]
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        sc, model, prob = rack(n, 20.0)
        integrate(prob, sc.integrator.method, np.array([0.0]), 1.0, **sc.integrator.kwargs())
        cs = []
        for _ in range(max(2, args.repeats)):
            c, s = run(sc, prob)
            cs.append(c)
        rhs_ns, jac_ns = per_vehicle_costs(model, prob)
        rows.append((n, prob.y0.size, float(np.median(cs)), s.stats["steps"], rhs_ns, jac_ns))
    l1 = os.getloadavg()[0]
    lines += ["## Cost against the number of vehicles (the AAR rack, 20 s emergency)", "",
              f"Load average {l0:.2f} / {l1:.2f}.  Brake part alone: one evaluation of the brake rows' right-hand side "
              "and Jacobian (ns per vehicle).", "",
              "| vehicles | states | CPU [s] | steps | µs per vehicle and step | brake RHS [ns/vehicle] | "
              "brake Jacobian [ns/vehicle] |", "|---|---|---|---|---|---|---|"]
    for n, ns, c, steps, r, j in rows:
        lines.append(f"| {n} | {ns:,} | {c:.3f} | {steps:,} | {1e6 * c / n / max(1, steps):.2f} | {r:.0f} | {j:.0f} |")
    lines.append("")
    print("\n".join(lines[-len(rows) - 6:]), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
