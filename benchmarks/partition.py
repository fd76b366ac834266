"""Benchmark of the hidden-vehicle partition (issue 5): wall time against train length for the
monolithic model (serial), 2 blocks on 2 numba threads and 2 blocks on 2 MPI ranks; and the cost of the
refactored kernel with the partition off against the pre-partition monolithic kernel.

Trains: benchmark-like train 4 (243 vehicles) and long consists made from it with ``--set``
(2 head + 2 remote locomotives, wagon pairs: 1 000 / 3 000 / 10 000 / 100 000 vehicles), all moving at
40 km/h, RK4 at 2 ms for a number of steps that keeps each run near one second.  Every configuration
runs as ``hpcrail run`` in a fresh process (``mpiexec -n 2`` for MPI); the integration wall time
(compilation excluded, the dataset's ``wall_time``; the slowest rank for MPI) is the median of
``--repeats`` runs, interleaved so that load changes hit all variants alike.

Baseline for "partition off": the monolithic kernel as it was before the refactor (``git show
BASE:hpcrail/models/ltd/kernel.py``), timed in the same process as the current ``ltd_rhs`` on the
same states (ratio of medians of interleaved repetitions).

numba's OpenMP threads sleep when idle (``OMP_WAIT_POLICY=PASSIVE``, set by ``hpcrail._numba`` unless the
user chose a policy): with GNU OpenMP's spinning default the thread backend was 10-50x slower on this
shared machine.

Variants (threads and ranks side by side): serial (partition off); threads2 (a serial integrator driving the
parallel right-hand side, ``partition.state: shared``); spmd2 (distributed state: every thread integrates its own
block with the method's one kernel, ``partition.state: distributed``, :mod:`hpcrail.integrators.distributed`);
mpi2 (2 MPI ranks, shared state: every rank integrates the whole state, the derivatives are gathered per
evaluation); mpi2dist (2 MPI ranks, distributed state: every rank integrates its own block, reductions and the
neighbour exchange through MPI_Allgatherv, nothing gathers the state per step); methods RK4 and BDF2.

Usage:  python benchmarks/partition.py [--repeats 3] [--sizes 243,1000,10000,100000] [--methods rk4,bdf2]
        [--no-mpi] [--no-extras] [--scale 1] [--base fd44a84] [--out benchmarks/results/partition.md]
Writes benchmarks/results/partition.md.  Other users of the machine distort timings: the script
records the load average before and after.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "results" / "partition.md"
TRAIN4 = ROOT / "configs" / "trains" / "train4.yaml"


def consist_overrides(n: int) -> list[str]:
    """``--set`` overrides turning train 4 into an n-vehicle train (n = 243 or n even)."""
    if n == 243:
        return []
    wag = n - 4
    if wag % 4:
        raise ValueError(f"n = {n}: choose n with (n - 4) divisible by 4")
    return ["consist.2.count=2", f"consist.1.count={wag // 2}", f"consist.3.count={wag // 2}"]


#: run-length factor (``--scale``): 1 keeps the serial runs near 0.3-1 s; longer runs weigh the fixed costs
#: of a run (threads' or ranks' start, the final gather) as a user's run of minutes does
SCALE = [1.0]


def steps_for(n: int) -> int:
    return int(SCALE[0] * max(50, min(20_000, 2.5e6 / n)))


def duration_for(n: int, method: str) -> float:
    """Simulated time [s]: RK4 ``steps_for(n)`` steps of 2 ms; BDF2 (adaptive) a duration that keeps the
    serial run near one second (about 1e-5 s per vehicle and simulated second measured at 243 vehicles);
    both times ``--scale``."""
    if method == "rk4":
        return steps_for(n) * 0.002
    return SCALE[0] * float(max(2.0, min(20.0, 1e5 / n)))


def run_once(variant: str, n: int, tmp: Path, env: dict, method: str = "rk4") -> tuple[float, int]:
    """Integration wall time [s] (the dataset's ``wall_time``) and step count of one run in a new process."""
    step = 0.002
    dur = duration_for(n, method)
    sets = consist_overrides(n) + [f"simulation.duration_s={dur:.6f}", "simulation.initial_speed_kmh=40",
                                   f"integrator.method={method}", f"output.interval_s={dur:.6f}",
                                   "output.reference_coupler=1"]
    if method == "rk4":
        sets.append(f"integrator.step_s={step}")
    args = ["run", str(TRAIN4), "-q", "--overwrite", "-o", str(tmp / f"{variant}-{method}-{n}.zarr")]
    for s in sets:
        args += ["--set", s]
    py = [sys.executable, "-P", "-c", "from hpcrail.cli import main; main()"]   # -P: PYTHONPATH's tree, not the cwd's
    two = ["--set", "partition.blocks=2", "--set", "partition.threads=2"]
    if variant == "serial":
        cmd = py + args + ["--partition", "off"]
    elif variant == "threads2":  # a serial integrator driving the parallel right-hand side
        cmd = py + args + ["--partition", "threads", "--set", "partition.state=shared"] + two
    elif variant == "spmd2":  # distributed state: every thread integrates its own block
        cmd = py + args + ["--partition", "threads", "--set", "partition.state=distributed"] + two
    elif variant in ("mpi2", "mpi2dist"):
        state = "distributed" if variant == "mpi2dist" else "shared"
        cmd = ["mpiexec", "-n", "2"] + py + args + ["--partition", "mpi", "--set", "partition.blocks=2", "--set",
                                                    f"partition.state={state}"]
    else:
        raise ValueError(variant)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        raise RuntimeError(f"{variant} n={n} failed:\n{r.stdout}\n{r.stderr}")
    import xarray as xr

    ds = xr.open_zarr(tmp / f"{variant}-{method}-{n}.zarr")
    if str(ds.status.values) != "completed":
        raise RuntimeError(f"{variant} {method} n={n}: {ds.status.values}")
    return float(ds.wall_time), int(ds.nsteps)


def kernel_ab(base: str, repeats: int) -> list[tuple]:
    """ns per vehicle per RHS evaluation: pre-partition kernel (git ``base``) vs current, interleaved."""
    import numba

    from hpcrail.kinds import load_scenario
    from hpcrail.integrators import integrate
    from hpcrail.models.ltd.kernel import ltd_rhs as new_rhs
    from hpcrail.kinds.ltd.problem import ltd_problem

    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{base}:hpcrail/models/ltd/kernel.py"],
                         capture_output=True, text=True)
    if src.returncode != 0:
        return []
    d = Path(tempfile.mkdtemp())
    (d / "kernel_base.py").write_text(src.stdout)
    spec = importlib.util.spec_from_file_location("kernel_base", d / "kernel_base.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def looper(f):
        @numba.njit
        def loop(y, p, dydt, reps):
            for _ in range(reps):
                f(0.0, y, p, dydt)
        return loop

    rows = []
    for n, over in ((243, []), (10_000, consist_overrides(10_000))):
        sc, _ = load_scenario(TRAIN4, over + ["simulation.duration_s=20", "simulation.initial_speed_kmh=40"])
        model, prob = ltd_problem(sc)
        sol = integrate(prob, "rk4", np.array([20.0]), 20.0, step=0.002)
        y = sol.y_final.copy()
        p = model.params
        d1, d2 = np.empty_like(y), np.empty_like(y)
        lo, ln = looper(mod.ltd_rhs), looper(new_rhs)
        lo(y, p, d1, 1)
        ln(y, p, d2, 1)
        assert np.array_equal(d1, d2), "the refactored kernel must give bitwise the monolithic derivative"
        reps = max(1, 3_000_000 // n)
        to, tn = [], []
        for _ in range(max(9, 3 * repeats)):
            t = time.perf_counter(); lo(y, p, d1, reps); to.append(time.perf_counter() - t)
            t = time.perf_counter(); ln(y, p, d2, reps); tn.append(time.perf_counter() - t)
        to = np.array(to) / reps / n * 1e9
        tn = np.array(tn) / reps / n * 1e9
        rows.append((n, float(np.median(to)), float(np.median(tn)), float(np.median(tn / to))))
    return rows


def serial_fraction(n: int, repeats: int) -> float:
    """Share of a serial RK4 step spent outside the right-hand side and the observer: RK4 on the same
    state size with a right-hand side and an observer that do nothing, against RK4 on the LTD model
    (same process, interleaved).  That part (the integrator's vector operations over all states) stays
    serial with threads and is replicated on MPI ranks: the Amdahl bound of 2 workers is
    1 / (f + (1 - f) / 2)."""
    import numba

    from hpcrail._numba import JIT
    from hpcrail.kinds import load_scenario
    from hpcrail.integrators import Problem, integrate
    from hpcrail.kinds.ltd.problem import ltd_problem

    @numba.njit(**JIT)
    def zero_rhs(t, y, p, dydt):
        for i in range(y.size):
            dydt[i] = 0.0

    @numba.njit(**JIT)
    def no_observe(t, y, p, acc):
        pass

    sc, _ = load_scenario(TRAIN4, consist_overrides(n) + ["simulation.initial_speed_kmh=40"])
    model, prob = ltd_problem(sc)
    empty = Problem(zero_rhs, no_observe, model.params, model.y0, atol_scale=model.atol_scale, acc0=model.acc0)
    k = steps_for(n) // 2 + 1
    t_end = k * 0.002
    for pr in (prob, empty):
        integrate(pr, "rk4", np.array([0.004]), 0.004, step=0.002)
    fr = []
    for _ in range(max(3, repeats)):
        ta = integrate(empty, "rk4", np.array([t_end]), t_end, step=0.002).wall_time
        tb = integrate(prob, "rk4", np.array([t_end]), t_end, step=0.002).wall_time
        fr.append(min(1.0, ta / tb))
    return float(np.median(fr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="243,1000,3000,10000,100000")
    ap.add_argument("--methods", default="rk4,bdf2", help="integrators (rk4 at 2 ms, bdf2 at the config's tolerances)")
    ap.add_argument("--base", default="fd44a84", help="git revision of the pre-partition kernel")
    ap.add_argument("--no-mpi", action="store_true")
    ap.add_argument("--no-extras", action="store_true", help="skip the serial-share and kernel A/B measurements")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="run-length factor (simulated time and RK4 steps); 1: serial runs near 0.3-1 s")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    SCALE[0] = args.scale
    sizes = [int(s) for s in args.sizes.split(",")]
    methods = args.methods.split(",")
    variants = ["serial", "threads2", "spmd2"] + ([] if args.no_mpi or shutil.which("mpiexec") is None
                                                  else ["mpi2", "mpi2dist"])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))
    load0 = os.getloadavg()
    tmp = Path(tempfile.mkdtemp(prefix="hpcrail-partition-bench-"))
    res: dict = {}
    nsteps: dict = {}
    loads: dict = {}
    for n in sizes:
        for m in methods:
            for v in variants:  # warm-up: compile/load caches
                run_once(v, n, tmp, env, m)
            for _ in range(args.repeats):
                for v in variants:
                    t, k = run_once(v, n, tmp, env, m)
                    res.setdefault((m, v, n), []).append(t)
                    nsteps[(m, v, n)] = k
                    loads.setdefault((m, n), []).append(os.getloadavg()[0])
            print(m, n, {v: round(float(np.median(res[(m, v, n)])), 4) for v in variants},
                  f"load {min(loads[(m, n)]):.2f}-{max(loads[(m, n)]):.2f}", flush=True)
            for p in tmp.glob("*.zarr"):
                shutil.rmtree(p, ignore_errors=True)
    fractions = {} if args.no_extras else {n: serial_fraction(n, args.repeats) for n in sizes}
    ab = [] if args.no_extras else kernel_ab(args.base, args.repeats)
    load1 = os.getloadavg()
    lines = ["# Partitioned trains: hidden-vehicle blocks on threads and MPI ranks", "",
             f"`python benchmarks/partition.py --repeats {args.repeats} --sizes {args.sizes} --methods {args.methods}"
             f"{' --no-mpi' if args.no_mpi else ''}{' --no-extras' if args.no_extras else ''}"
             f"{f' --scale {args.scale:g}' if args.scale != 1 else ''}` on "
             f"{os.cpu_count()} cores; load average before {load0[0]:.2f} / after {load1[0]:.2f} "
             "(the machine is shared: other users' processes compete for the 2 cores).", "",
             "Integration wall time (compilation excluded), median of the repeats (interleaved: serial, threads2, "
             "spmd2 ... then again); train 4 and long consists built from it, moving at 40 km/h; 2 blocks for the "
             "parallel backends.  threads2: a serial integrator driving the parallel right-hand side "
             "(`partition.state: shared`); spmd2: distributed state, every thread integrates its own block "
             "(`partition.state: distributed`); mpi2: 2 MPI ranks with shared state (every rank integrates the "
             "whole state, the derivatives are gathered per evaluation); mpi2dist: 2 MPI ranks with distributed "
             "state (every rank integrates its own block: the same kernel as spmd2, the reductions through "
             "MPI_Allgatherv).  Speed-up = serial / variant (ratio of medians); load: the "
             "1-minute load average after each run of that row (min-max).", ""]
    for m in methods:
        what = "RK4 at 2 ms" if m == "rk4" else f"{m} (adaptive, the config's tolerances)"
        lines += [f"## {what}", "",
                  "| vehicles | simulated [s] | steps (serial / spmd2) | serial [s] | " + " | ".join(
                      f"{v} [s] | speed-up {v}" for v in variants[1:]) + " | load |",
                  "|---|---|---|---|" + "---|---|" * (len(variants) - 1) + "---|"]
        for n in sizes:
            ser = float(np.median(res[(m, "serial", n)]))
            row = (f"| {n:,} | {duration_for(n, m):g} | {nsteps[(m, 'serial', n)]:,} / {nsteps[(m, 'spmd2', n)]:,} "
                   f"| {ser:.3f} |")
            for v in variants[1:]:
                t = float(np.median(res[(m, v, n)]))
                row += f" {t:.3f} | {ser / t:.2f}x |"
            row += f" {min(loads[(m, n)]):.2f}-{max(loads[(m, n)]):.2f} |"
            lines.append(row)
        lines.append("")
    if fractions:
        lines += ["Serial share f of RK4 (shared-state runs): RK4 with a right-hand side and observer that do "
                  "nothing, over RK4 on the LTD model (same state size, same process): the integrator's vector "
                  "operations over all states, which stay serial with threads and are replicated on MPI ranks; "
                  "the Amdahl bound 1/(f + (1-f)/2) caps the speed-up of 2 workers (spmd2 removes it).", "",
                  "| vehicles | serial share f | Amdahl bound (2) |", "|---|---|---|"]
        for n in sizes:
            f = fractions[n]
            lines.append(f"| {n:,} | {f:.2f} | {1.0 / (f + (1.0 - f) / 2.0):.2f}x |")
        lines.append("")
    if ab:
        lines += ["Partition off against the pre-partition monolithic kernel (`git show "
                  f"{args.base}:hpcrail/models/ltd/kernel.py`), same process, same states, ns per vehicle per "
                  "RHS evaluation (median of interleaved repetitions):", "",
                  "| vehicles | before [ns] | partition off [ns] | ratio (median of pairs) |", "|---|---|---|---|"]
        for n, a, b, r in ab:
            lines.append(f"| {n:,} | {a:.2f} | {b:.2f} | {r:.3f} |")
        lines.append("")
    lines += ["Raw wall times [s]:", ""]
    for (m, v, n), ts in sorted(res.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])):
        lines.append(f"- {m}, {v}, {n:,} vehicles: " + ", ".join(f"{t:.4f}" for t in ts))
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
