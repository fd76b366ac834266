"""Benchmark of the LTD foundation (issue 2): train 4 (243 vehicles, 3863 s) on one core.

Measures, in one run:
* the RHS cost per vehicle per evaluation on states taken from a real train-4 trajectory;
* RK4 and DOPRI5 wall time (compilation excluded and reported separately), steps, RHS evaluations and
  the error of the per-coupler max draft/buff force envelope against a converged reference (RK4 at
  0.5 ms), relative to the largest force;
* the baseline in the same run: scipy ``solve_ivp(method="BDF")`` with the banded (block-tridiagonal)
  Jacobian sparsity pattern on the same numba RHS (the "JAC ON" analogue of Bosso et al. 2024);
* cached start-up: a fresh interpreter importing hpcrail and loading the compiled kernels.

Usage:  python benchmarks/ltd_foundation.py [--quick] [--repeats 3]
Writes benchmarks/results/ltd_foundation.md.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.integrators import integrate  # noqa: E402
from hpcrail.models.ltd.build import ACC_HEAD  # noqa: E402
from hpcrail.models.ltd.kernel import ltd_observe, ltd_rhs  # noqa: E402
from hpcrail.kinds.ltd.problem import ltd_problem
from hpcrail.results.sampling import sample_times  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "ltd_foundation.md"


def envelopes(model, acc):
    M = model.params.n_veh - 1
    h = ACC_HEAD
    return np.maximum(acc[h:h + M], 0.0), np.maximum(-acc[h + M:h + 2 * M], 0.0)


def envelope_error(model, acc, ref):
    d, b = envelopes(model, acc)
    rd, rb = ref
    scale = max(rd.max(), rb.max())
    return max(np.abs(d - rd).max(), np.abs(b - rb).max()) / scale


def run(sc, method, **kw):
    model, prob = ltd_problem(sc)
    t_end = sc.simulation.duration_s
    args = sc.integrator.kwargs()
    args.update(kw)
    sol = integrate(prob, method, sample_times(0.0, t_end, 10.0), t_end, **args)
    return model, sol


@numba.njit
def _rhs_loop(states, p, dydt, reps):
    for r in range(reps):
        for k in range(states.shape[0]):
            ltd_rhs(0.0, states[k], p, dydt)


def rhs_cost(sc, states, reps=200):
    model, _ = ltd_problem(sc)
    p = model.params
    dydt = np.empty(states.shape[1])
    _rhs_loop(states[:2], p, dydt, 1)
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        _rhs_loop(states, p, dydt, reps)
        best = min(best, time.perf_counter() - t0)
    return best / (reps * states.shape[0]) / p.n_veh * 1e9


def scipy_bdf(sc, rtol, atol):
    """scipy BDF with the block-tridiagonal sparsity pattern, on the same numba RHS."""
    from scipy.integrate import solve_ivp
    from scipy.sparse import lil_matrix

    model, prob = ltd_problem(sc)
    p = model.params
    n = prob.y0.size
    B, N = p.block, p.n_veh
    pat = lil_matrix((n, n), dtype=np.int8)
    for j in range(N):
        for jj in range(max(0, j - 1), min(N, j + 2)):
            for a in range(B):
                for b in range(B):
                    pat[B * j + a, B * jj + b] = 1
    pat[:, B * N:] = 1
    pat[B * N:, :] = 1
    dydt = np.empty(n)
    acc = model.acc0.copy()
    nfev = [0]

    def f(t, y):
        nfev[0] += 1
        ltd_rhs(t, np.ascontiguousarray(y), p, dydt)
        return dydt.copy()

    # observe at every accepted step is not available in solve_ivp: use a dense sampling for metrics
    t_end = sc.simulation.duration_s
    f(0.0, prob.y0)
    t0 = time.perf_counter()
    sol = solve_ivp(f, (0.0, t_end), prob.y0, method="BDF", rtol=rtol, atol=atol * prob.atol_scale,
                    jac_sparsity=pat.tocsc(), dense_output=False, t_eval=None)
    wall = time.perf_counter() - t0
    for k in range(sol.t.size):
        ltd_observe(sol.t[k], np.ascontiguousarray(sol.y[:, k]), p, acc)
    return model, acc, wall, sol.t.size - 1, nfev[0], sol.status


def startup_time():
    code = ("import time; t=time.perf_counter(); import hpcrail; from hpcrail.kinds import load_scenario;"
            "from hpcrail.simulate import run_scenario;"
            "sc,_=load_scenario('configs/trains/demo.yaml', ['simulation.duration_s=1']);"
            "ds=run_scenario(sc); print(time.perf_counter()-t)")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True)  # warm the cache
    ts = []
    for _ in range(3):
        r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True)
        ts.append(float(r.stdout.strip().splitlines()[-1]))
    return float(np.median(ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="600 s of train 4 instead of the full trip")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--skip-scipy", action="store_true")
    a = ap.parse_args()
    sets = ["simulation.duration_s=600"] if a.quick else []
    sc, _ = load_scenario(ROOT / "configs/trains/train4.yaml", sets)
    T = sc.simulation.duration_s
    lines = [f"# LTD foundation benchmark: train 4 ({'600 s' if a.quick else f'{T:g} s'} simulated, one core)", "",
             f"Machine: {os.cpu_count()} cores, numba {numba.__version__}, NUMBA_NUM_THREADS=1.  "
             f"Command: `python benchmarks/ltd_foundation.py{' --quick' if a.quick else ''}`.", ""]
    print("reference: RK4 at 0.5 ms ...", flush=True)
    model, ref_sol = run(sc, "rk4", step=5e-4)
    ref = envelopes(model, ref_sol.acc)
    states = np.ascontiguousarray(ref_sol.y[:: max(1, ref_sol.y.shape[0] // 64)])
    states = states[np.isfinite(states).all(axis=1)]
    ns = rhs_cost(sc, states)
    print(f"RHS cost {ns:.2f} ns per vehicle per evaluation", flush=True)
    rows = []
    cases = [("rk4", dict(step=0.002)), ("rk4", dict(step=0.0025)), ("rk4", dict(step=0.003125)),
             ("dopri5", dict(rtol=1e-6, atol=1e-6)), ("dopri5", dict(rtol=1e-8, atol=1e-8))]
    for method, kw in cases:
        walls = []
        for _ in range(a.repeats):
            m, sol = run(sc, method, **kw)
            walls.append(sol.wall_time)
        err = envelope_error(m, sol.acc, ref)
        label = f"step {kw['step'] * 1e3:g} ms" if "step" in kw else f"rtol {kw['rtol']:g}"
        rows.append((f"hpcrail {method}", label, float(np.median(walls)), sol.compile_time, sol.stats["steps"],
                     sol.stats["nfev"], err, str(sol.status.name.lower())))
        print(rows[-1], flush=True)
    if not a.skip_scipy:
        m, acc, wall, steps, nfev, status = scipy_bdf(sc, 1e-6, 1e-6)
        rows.append(("scipy BDF (banded pattern)", "rtol 1e-6", wall, 0.0, steps, nfev,
                     envelope_error(m, acc, ref), "ok" if status == 0 else f"status {status}"))
        print(rows[-1], flush=True)
    st = startup_time()
    base = next((r[2] for r in rows if r[0].startswith("scipy")), None)
    lines += ["| method | setting | wall [s] | compile/load [s] | steps | RHS evals | envelope error | "
              "speed-up vs scipy BDF | status |", "|---|---|---|---|---|---|---|---|---|"]
    for name, label, wall, comp, steps, nfev, err, status in rows:
        sp = f"{base / wall:.1f}x" if base else "-"
        lines.append(f"| {name} | {label} | {wall:.2f} | {comp:.2f} | {steps:,} | {nfev:,} | {100 * err:.3f} % | "
                     f"{sp} | {status} |")
    lines += ["", f"- RHS cost on states from the train-4 trajectory: **{ns:.2f} ns per vehicle per evaluation** "
              "(median-free best of 5, 243 vehicles, energy integrals on).",
              f"- Cached start-up (fresh interpreter: import hpcrail, load config, load compiled kernels, 1 s "
              f"demo run): **{st:.2f} s** (median of 3).",
              "- Envelope error: max over couplers of |Δ max draft| and |Δ max buff| force against RK4 at 0.5 ms, "
              "relative to the largest force.  wall = median of "
              f"{a.repeats} runs; scipy BDF is timed once (observe applied to its accepted steps afterwards)."]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
