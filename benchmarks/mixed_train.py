"""Mixed-train benchmark (issue 15) → benchmarks/results/mixed_train.md.

What does one detailed wagon cost inside train 4?  configs/mixed/train4_empty_wagon.yaml (243 vehicles, the
empty Manchester-type wagon at 124 with KEC contact, dynamic braking down 3 per mille through R = 400 m)
over the issue's 600 s braking scenario, numba warm, integration time only (``Solution.wall_time``), medians
of ``--repeats`` interleaved repeats:

1. the mixed train, monolithic, one thread, with RK4 0.5 ms (the fixed step the draft gears next to the light
   wagon need, see the config) and with the shipped DOPRI5 rtol 1e-5 (same forces to 0.2 %) — the issue's
   target: ≤ 30 s;
2. the mixed train with the hidden-vehicle blocks on 2 numba threads;
3. the pure LTD train (the wagon a 1-DOF vehicle of its mass) with the same integrator, and with its own
   shipped adaptive integrator (bdf2, rtol 5e-5);
4. the wagon alone (free forward motion) with RK4 0.5 ms and with ABM4 1 ms (paper 004's setting);
5. with ``--accuracy`` instead: the integrators' accuracy at the wagon's coupler over 60 s against RK4 0.25 ms
   (→ results/mixed_train_accuracy.md), the measurements behind the integrator choice of the config;

and the cost per right-hand-side evaluation of each part.  Paper 000 Table 4 (SIMPACK with the LTD user force,
1-DOF bodies only: 223 s for the 3863 s trip of train 4 on 4 threads) is quoted for context, not run here.

    python benchmarks/mixed_train.py                 # 600 s, 2 repeats
    python benchmarks/mixed_train.py --duration 120 --repeats 3
    python benchmarks/mixed_train.py --accuracy      # integrator accuracy table (about 2 min)

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

from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.kinds.ltd.problem import ltd_problem  # noqa: E402
from hpcrail.kinds.mixed_train import run as R  # noqa: E402
from hpcrail.kinds.mixed_train.build import build_mixed  # noqa: E402
from hpcrail.kinds.railway_vehicle.build import build_railway_vehicle  # noqa: E402
from hpcrail.kinds.railway_vehicle.run import solve as rv_solve  # noqa: E402
from hpcrail.integrators import integrate  # noqa: E402
from hpcrail.results.sampling import sample_times  # noqa: E402

CONFIG = ROOT / "configs" / "mixed" / "train4_empty_wagon.yaml"
OUT = ROOT / "benchmarks" / "results" / "mixed_train.md"
THREADS_S = 60.0


def load() -> str:
    return "%.2f" % os.getloadavg()[0]


def cases(duration: float):
    rk4 = ["integrator.method=rk4", "integrator.step_s=0.0005"]
    sc, _ = load_scenario(CONFIG, [f"simulation.duration_s={duration}", "output.interval_s=0.5", *rk4])
    model = build_mixed(sc)
    ltd_sc = sc.ltd_scenario()
    lt_out = sample_times(0.0, duration, 1.0)
    _lm, lprob = ltd_problem(ltd_sc)
    vsc = model.vehicle_scenarios[0]
    vm = build_railway_vehicle(vsc)
    vsc_abm = vsc.model_copy(update={"integrator": vsc.integrator.model_copy(update={"method": "abm4",
                                                                                       "step_s": 1e-3})})
    it = sc.integrator.kwargs()

    # the threads backend costs a parallel region per evaluation (measured ~60 µs each with OMP_WAIT_POLICY=PASSIVE,
    # hpcrail's default): it is timed over THREADS_S simulated seconds and scaled (said in the table)
    sc_t, _ = load_scenario(CONFIG, [f"simulation.duration_s={min(duration, THREADS_S)}", "output.interval_s=0.5",
                                     *rk4])
    model_t = build_mixed(sc_t)

    def mixed(backend):
        def f():
            if backend == "threads":
                sol, _ = R.solve(sc_t, model_t, backend=backend)
                sol.wall_time *= duration / sc_t.simulation.duration_s
                sol.stats["nfev"] = int(sol.stats["nfev"] * duration / sc_t.simulation.duration_s)
                return sol
            sol, _ = R.solve(sc, model, backend=backend)
            return sol
        return f

    sc_d, _ = load_scenario(CONFIG, [f"simulation.duration_s={duration}", "output.interval_s=0.5"])
    model_d = build_mixed(sc_d)

    def shipped():
        sol, _ = R.solve(sc_d, model_d, backend="off")
        return sol

    def ltd(method, kw):
        return lambda: integrate(lprob, method, lt_out, duration, **kw)

    return {
        "mixed train, monolithic, 1 thread (RK4 0.5 ms)": mixed("off"),
        "mixed train, monolithic, 1 thread (DOPRI5 rtol 1e-5, shipped)": shipped,
        f"mixed train, blocks on 2 threads (RK4 0.5 ms; {min(duration, THREADS_S):g} s timed, scaled)": mixed("threads"),
        "pure LTD train, 1-DOF wagon (RK4 0.5 ms)": ltd(sc.integrator.method, it),
        "pure LTD train, 1-DOF wagon (bdf2 rtol 5e-5, shipped)": ltd("bdf2", dict(it, rtol=5e-5, atol=1e-6,
                                                                                 step=0.002)),
        "wagon alone (RK4 0.5 ms)": lambda: rv_solve(vsc, vm),
        "wagon alone (ABM4 1 ms)": lambda: rv_solve(vsc_abm, vm),
    }, sc, model


ACCURACY_OUT = ROOT / "benchmarks" / "results" / "mixed_train_accuracy.md"
#: integrators compared over 60 s (the first is the reference)
ACCURACY_CASES = {
    "RK4 0.25 ms (reference)": ["integrator.method=rk4", "integrator.step_s=0.00025"],
    "RK4 0.5 ms": ["integrator.method=rk4", "integrator.step_s=0.0005"],
    "RK4 1 ms": ["integrator.method=rk4", "integrator.step_s=0.001"],
    "ABM4 0.5 ms": ["integrator.method=abm4", "integrator.step_s=0.0005"],
    "ABM4 1 ms": ["integrator.method=abm4", "integrator.step_s=0.001"],
    "DOPRI5 rtol 1e-4": ["integrator.method=dopri5", "integrator.rtol=1e-4", "integrator.atol=1e-6"],
    "DOPRI5 rtol 1e-5 (shipped)": ["integrator.method=dopri5", "integrator.rtol=1e-5", "integrator.atol=1e-7"],
}


def accuracy(duration: float = 60.0) -> None:
    """The wagon's front-coupler force (mean over the last third of the run, sample-to-sample jitter), its peak
    buff force and max (Y/Q)_2m for each integrator of :data:`ACCURACY_CASES`, and the pure LTD run (the wagon a
    1-DOF vehicle, bdf2 rtol 5e-5) at the same coupler → results/mixed_train_accuracy.md."""
    from hpcrail.kinds.ltd.run import run as ltd_run

    rows = []
    for name, over in ACCURACY_CASES.items():
        sc, _ = load_scenario(CONFIG, [f"simulation.duration_s={duration}", *over])
        r = R.run(sc)
        f, t = r.values["front_coupler_force"][:, 0], r.time
        m = t > 2 * duration / 3
        rows.append((name, r.run.status, float(np.mean(f[m])), float(np.std(np.diff(f[m]))),
                     float(r.values["peak_buff_force_at_vehicle"][0]), float(r.values["max_y_over_q"][0]),
                     r.run.wall_time))
        print(rows[-1], flush=True)
    sc, _ = load_scenario(CONFIG, [f"simulation.duration_s={duration}"])
    ltd = sc.ltd_scenario()
    ltd = ltd.model_copy(update={"integrator": ltd.integrator.model_copy(update=dict(
        method="bdf2", rtol=5e-5, atol=1e-6, step_s=0.002)),
        "output": ltd.output.model_copy(update={"interval_s": sc.output.interval_s})})
    p = sc.detailed[0].position
    r = ltd_run(ltd)
    f, t = r.values["coupler_force"][:, p - 2], r.time
    m = t > 2 * duration / 3
    rows.append(("pure LTD, 1-DOF wagon, bdf2 rtol 5e-5", r.run.status, float(np.mean(f[m])),
                 float(np.std(np.diff(f[m]))), float(r.values["coupler_max_buff_force"][p - 2]), float("nan"),
                 r.run.wall_time))
    ref = rows[0]
    lines = ["# Mixed train: integrator accuracy at the light wagon (issue 15)", "",
             f"`python benchmarks/mixed_train.py --accuracy` — {CONFIG.relative_to(ROOT)}, first {duration:g} s; "
             f"the wagon's front coupler (coupler {p - 1}).  Mean and jitter (std of sample-to-sample change) over the "
             f"last third of the run; deviations against {ref[0]}.  (The pure LTD row: the envelope over its steps.)",
             "", "| integrator | status | mean force [kN] | jitter [kN] | peak buff [kN] | vs reference | max (Y/Q)_2m "
             "| wall [s] |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, st, mean, jit, peak, yq, wall in rows:
        lines.append(f"| {name} | {st} | {mean / 1e3:.1f} | {jit / 1e3:.3f} | {peak / 1e3:.1f} | "
                     f"{100 * (peak / ref[4] - 1):+.2f} % | {yq:.5f} | {wall:.2f} |")
    ACCURACY_OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def part_costs(sc, model, n: int = 20000) -> dict:
    """µs per call of the LTD right-hand side, the wagon alone and the wagon's coupling (forces, coupler geometry,
    resistance, grade: :func:`~hpcrail.models.mixed.kernel.detailed_all` minus the wagon alone) at the initial
    state, each in a numba loop of ``n`` calls."""
    from numba import njit

    from hpcrail.models.ltd.kernel import ltd_rhs
    from hpcrail.models.mixed.kernel import detailed_all
    from hpcrail.models.vehicle.kernel import vehicle_rhs

    P = model.params
    y = model.y0.copy()
    o0, o1 = model.slices[0]

    def looped(f):
        @njit
        def loop(y, p, d, n):
            for _ in range(n):
                f(0.5, y, p, d)
        return loop

    out = {}
    for name, f, yy, p in (("LTD part", ltd_rhs, y[:model.n_ltd].copy(), P.ltd),
                           ("wagon alone", vehicle_rhs, y[o0:o1].copy(), P.vehs[0]),
                           ("wagon with its coupling", detailed_all, y, P)):
        loop = looped(f)
        d = np.zeros_like(yy)
        loop(yy, p, d, 10)
        t0 = time.perf_counter()
        loop(yy, p, d, n)
        out[name] = 1e6 * (time.perf_counter() - t0) / n
    out["coupling"] = out["wagon with its coupling"] - out["wagon alone"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=600.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--accuracy", action="store_true", help="only the integrator accuracy table")
    a = ap.parse_args()
    if a.accuracy:
        accuracy()
        return
    import numba

    numba.set_num_threads(min(a.threads, numba.config.NUMBA_NUM_THREADS))
    table, sc, model = cases(a.duration)
    # warm-up: compile / load from the cache on a short run
    warm, _sc, _m = cases(2.0)
    for f in warm.values():
        f()
    times = {k: [] for k in table}
    nfev = {}
    loads = {k: [] for k in table}
    for _r in range(a.repeats):
        for k, f in table.items():
            l0 = load()
            sol = f()
            assert sol.status.name == "COMPLETED", (k, sol.message)
            times[k].append(sol.wall_time)
            nfev[k] = sol.stats.get("nfev", 0)
            loads[k].append(l0)
            print(f"{k}: {sol.wall_time:.2f} s (load {l0})", flush=True)
    med = {k: float(np.median(v)) for k, v in times.items()}
    parts = part_costs(sc, model)
    mono = med["mixed train, monolithic, 1 thread (RK4 0.5 ms)"]
    best = min(mono, med["mixed train, monolithic, 1 thread (DOPRI5 rtol 1e-5, shipped)"])
    lines = [
        "# Mixed train: what one detailed wagon costs inside train 4 (issue 15)", "",
        f"`python benchmarks/mixed_train.py --duration {a.duration:g} --repeats {a.repeats}` — "
        f"{CONFIG.relative_to(ROOT)}: 243 vehicles, the empty Manchester-type wagon (KEC, S1002/UIC60) at "
        f"position 124, {a.duration:g} s of dynamic braking down 3 per mille through R = 400 m.  Integration "
        f"wall time only (numba warm), median of {a.repeats} interleaved repeats; {platform.processor() or 'CPU'}, "
        f"{os.cpu_count()} cores, numba {numba.__version__}.", "",
        "| case | wall time [s] | RHS evaluations | µs per evaluation | load averages | vs mixed monolithic |",
        "|---|---:|---:|---:|---|---:|",
    ]
    for k in table:
        n = nfev.get(k, 0)
        lines.append(f"| {k} | {med[k]:.2f} | {n:,} | {1e6 * med[k] / max(n, 1):.1f} | {', '.join(loads[k])} | "
                     f"{med[k] / mono:.2f} |")
    lines += [
        "", f"Target (issue 15): ≤ 30 s for the 600 s scenario on one core: "
        f"{'met' if a.duration == 600 and best <= 30 else ('not met' if a.duration == 600 else 'not measured here')} "
        f"({best:.1f} s for {a.duration:g} s simulated, the faster of the two).", "",
        "Cost per evaluation at the initial state, each part in a numba loop: "
        + ", ".join(f"{k} {v:.1f} µs" for k, v in parts.items())
        + " (the coupling: connection forces, coupler geometry with four track-frame look-ups, resistance and "
        "grade); with the integrator's vector work on 557 states they add up to the µs column (the wagon costs "
        "more in curves: its normal/creep fixed point iterates).  What limits it: the step.  DOPRI5 runs at the stability limit of the stiff "
        "draft-gear mode (mean step 1.5 ms, 13 % of the steps rejected, 6.8 evaluations per step).  RK4 needs 0.5 ms because the draft gears next to the light wagon have an "
        "eigenvalue near -2000/s (their transition band F_A/v_eps ~ 5e7 N s/m over 24.5 t); at 1 ms RK4 is stable "
        "but 13 % high in the wagon's coupler force and ABM4 is unstable (configs/mixed/train4_empty_wagon.yaml "
        "gives the measurements).  The wagon alone runs ABM4 at 1 ms (2 evaluations per step instead of 8 per "
        "ms).  The blocks on threads do not pay off at 243 vehicles: the wagon (8 µs per evaluation) runs "
        "serially after the blocks and every evaluation opens a parallel region (a one-off measurement, not repeated "
        "by this script because the policy is read at process start: with OMP_WAIT_POLICY=ACTIVE, 10 s simulated "
        "took 1.74 s on 2 threads against 1.30 s monolithic; PASSIVE, hpcrail's default for shared machines: 6.3 s).  A multirate or implicit-explicit scheme — the draft-gear transition bands implicit with the LTD's "
        "banded Jacobian, the wagon explicit at 1 ms — is the lever; not built.", "",
        "Context: paper 000 Table 4, SIMPACK with the LTD user force (1-DOF bodies only) ran the 3863 s trip of "
        "train 4 in 223 s on 4 threads (not run here; different machine and model).",
    ]
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
