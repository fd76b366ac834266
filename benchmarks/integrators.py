"""Integrator study of papers 000/004 on the benchmark-like trains 4 and 2 (issue 3).

For each method and tolerance (or step): wall time (median of ``--repeats`` runs, compilation
excluded), CPU time of the same runs (robust to other processes on a shared machine), accepted and
rejected steps, RHS and Jacobian evaluations, LU factorisations, Newton iterations, and the error of
the per-coupler max draft/buff in-train-force envelope against a converged reference (RK4 at 1 ms),
relative to the largest force — a table like Yu et al. 2022's Table 16.

Baselines measured in the same run on the same numba RHS (wrapped in a Python function):
* scipy ``BDF`` with the analytic banded (sparse) LTD Jacobian — Bosso et al. 2024's ode15s "JAC ON";
* scipy ``Radau`` with the same Jacobian;
* scipy ``BDF`` with a dense finite-difference Jacobian — the "JAC OFF" case (train 2 only unless
  ``--jac-off-train4``).
The scipy solvers are stepped one step at a time and the same ``observe`` kernel runs after every
accepted step, so their envelopes are taken exactly like hpcrail's.

Also measured: the RHS cost per vehicle per evaluation on states of the run, and the best
method's cost per vehicle per RHS evaluation including all linear algebra (the issue's "physical
budget" of ≈ 4 ns per vehicle per RHS evaluation).

Usage:  python benchmarks/integrators.py [--quick] [--repeats 3] [--trains train4,train2]
Writes benchmarks/results/integrators.md (and prints it).
"""
from __future__ import annotations

import argparse
import hashlib
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
from hpcrail.config.loading import config_hash  # noqa: E402
from hpcrail.integrators import integrate  # noqa: E402
from hpcrail.models.ltd.build import ACC_HEAD  # noqa: E402
from hpcrail.models.ltd.kernel import ltd_rhs  # noqa: E402
from hpcrail.kinds.ltd.problem import ltd_problem
from hpcrail.results.sampling import sample_times  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "integrators.md"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hpcrail" / "benchmarks"
REF_STEP = 0.0005   # RK4 reference step [s]: the draft-gear bars (issue 18) need 0.5 ms (issue 26)

# (method, settings) of the study; tolerances as in papers 000/004 (1e-4 ... 1e-7)
STUDY = [
    ("rk4", dict(step=0.002)),
    ("abm4", dict(step=0.001)),
    ("dopri5", dict(rtol=1e-6)),
    ("ndf", dict(rtol=1e-4)),
    ("bdf", dict(rtol=1e-5)),
    ("radau5", dict(rtol=1e-4)),
    ("radau5", dict(rtol=1e-5)),
    ("radau5", dict(rtol=1e-6)),
    ("trbdf2", dict(rtol=1e-3)),
    ("trbdf2", dict(rtol=1e-4)),
    ("trbdf2", dict(rtol=5e-5)),
    ("trbdf2", dict(rtol=3e-5)),
    ("trbdf2", dict(rtol=1e-5)),
    ("esdirk3", dict(rtol=1e-4)),
    ("esdirk3", dict(rtol=1e-5)),
    ("trapezoidal", dict(step=0.005)),
    ("implicit_euler", dict(step=0.002)),
    ("linear_implicit_euler", dict(step=0.001, options={"jacobian_every": 10})),
]
QUICK = [("rk4", dict(step=0.002)), ("radau5", dict(rtol=1e-5)), ("trbdf2", dict(rtol=1e-4)),
         ("trbdf2", dict(rtol=5e-5)), ("trbdf2", dict(rtol=3e-5)), ("trbdf2", dict(rtol=1e-5))]


def envelopes(M, acc):
    h = ACC_HEAD
    return np.maximum(acc[h:h + M], 0.0), np.maximum(-acc[h + M:h + 2 * M], 0.0)


def envelope_error(M, acc, ref):
    """max over couplers and draft/buff of |envelope − reference| / largest reference force."""
    d, b = envelopes(M, acc)
    rd, rb = ref
    return max(np.abs(d - rd).max(), np.abs(b - rb).max()) / max(rd.max(), rb.max())


def reference(sc, prob, M):
    key = hashlib.sha256(f"{config_hash(sc)}-{REF_STEP}-{numba.__version__}".encode()).hexdigest()[:16]
    path = CACHE / f"integrators_ref_{sc.name}_{key}.npy"
    if path.exists():
        return envelopes(M, np.load(path)), "cached"
    T = sc.simulation.duration_s
    sol = integrate(prob, "rk4", sample_times(0.0, T, 10.0), T, step=REF_STEP)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, sol.acc)
    return envelopes(M, sol.acc), f"{sol.wall_time:.0f} s"


def timed(fn, repeats):
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        c0 = time.thread_time()
        out = fn()
        cpus.append(time.thread_time() - c0)
        walls.append(out[0])
    return float(np.median(walls)), float(np.median(cpus)), out[1]


def run_hpcrail(prob, T, method, kw, repeats):
    integrate(prob, method, np.array([0.0]), min(T, 1.0), **kw)   # compile / load outside the timing

    def once():
        sol = integrate(prob, method, sample_times(0.0, T, 10.0), T, **kw)
        return sol.wall_time, sol
    wall, cpu, sol = timed(once, repeats)
    return wall, cpu, sol


def run_scipy(prob, model, T, method, jac_mode):
    """Step a scipy solver to T, calling the model's observe kernel after every accepted step."""
    import scipy.integrate as si
    import scipy.sparse as sp

    p = prob.params
    n = prob.y0.size
    f = prob.rhs

    def fun(t, y):
        out = np.empty(n)
        f(t, np.ascontiguousarray(y), p, out)
        return out

    pat = prob.jac_pattern
    ok = pat.rows >= 0
    vals = np.zeros(pat.nnz)

    def jac(t, y):
        prob.jac(t, np.ascontiguousarray(y), p, vals)
        return sp.csc_matrix((vals[ok], (pat.rows[ok], pat.cols[ok])), shape=(n, n))

    kw = dict(rtol=1e-6, atol=1e-6 * prob.atol_scale)
    if jac_mode == "analytic":
        kw["jac"] = jac
    cls = {"BDF": si.BDF, "Radau": si.Radau}[method]
    acc = prob.acc0.copy()
    prob.observe(0.0, prob.y0, p, acc)
    c0 = time.thread_time()
    w0 = time.perf_counter()
    solver = cls(fun, 0.0, prob.y0.copy(), T, **kw)
    steps = 0
    status = "completed"
    while solver.status == "running":
        msg = solver.step()
        if solver.status == "failed":
            status = f"failed ({msg})"
            break
        steps += 1
        prob.observe(solver.t, np.ascontiguousarray(solver.y), p, acc)
    wall = time.perf_counter() - w0
    cpu = time.thread_time() - c0
    stats = dict(steps=steps, rejected=None, nfev=solver.nfev, njev=solver.njev, nlu=solver.nlu,
                 newton_iterations=None)
    return wall, cpu, stats, acc, status


@numba.njit
def _rhs_loop(states, p, dydt, reps):
    for r in range(reps):
        for k in range(states.shape[0]):
            ltd_rhs(0.0, states[k], p, dydt)


def rhs_cost_ns(prob, states, reps=100):
    p = prob.params
    dydt = np.empty(states.shape[1])
    _rhs_loop(states[:2], p, dydt, 1)
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        _rhs_loop(states, p, dydt, reps)
        best = min(best, time.perf_counter() - t0)
    return best / (reps * states.shape[0]) / p.n_veh * 1e9


def fmt_row(name, setting, wall, cpu, st, err, status):
    def g(k):
        v = st.get(k)
        return "–" if v is None else f"{v:,}"
    return (f"| {name} | {setting} | {wall:.2f} | {cpu:.2f} | {g('steps')} | {g('rejected')} | {g('nfev')} | "
            f"{g('njev')} | {g('nlu')} | {g('newton_iterations')} | {100 * err:.3f} | {status} |")


def study(train: str, runs, repeats, jac_off: bool, lines: list[str]):
    sc, _ = load_scenario(ROOT / "configs" / "trains" / f"{train}.yaml")
    model, prob = ltd_problem(sc)
    N = model.params.n_veh
    M = N - 1
    T = sc.simulation.duration_s
    ref, ref_note = reference(sc, prob, M)
    print(f"{train}: reference RK4 {REF_STEP * 1e3:g} ms ({ref_note})", flush=True)
    lines += [f"### {train}: {N} vehicles, {T:g} s, {prob.y0.size} states", "",
              f"Reference: RK4 at {REF_STEP * 1e3:g} ms (largest draft {ref[0].max() / 1e3:,.0f} kN, buff "
              f"{ref[1].max() / 1e3:,.0f} kN).  Wall: median of {repeats} runs, compilation excluded; CPU: thread "
              "CPU time of the same runs.", "",
              "| method | tolerance / step | wall [s] | CPU [s] | steps | rejected | RHS evals | Jacobians | LU | "
              "Newton its | envelope error [%] | status |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    best = None
    rows = []
    for method, kw in runs:
        reps = repeats if method not in ("rk4", "abm4", "implicit_euler", "linear_implicit_euler") else 1
        wall, cpu, sol = run_hpcrail(prob, T, method, kw, reps)
        err = envelope_error(M, sol.acc, ref)
        setting = ", ".join(f"{k}={v}" for k, v in kw.items())
        row = fmt_row(f"hpcrail {method}", setting, wall, cpu, sol.stats, err, sol.status.name.lower())
        print(row, flush=True)
        rows.append(row)
        if sol.success and err <= 0.005 and (best is None or cpu < best[1]):
            best = (wall, cpu, method, setting, sol, err)
    for method in ("BDF", "Radau"):
        wall, cpu, st, acc, status = run_scipy(prob, model, T, method, "analytic")
        row = fmt_row(f"scipy {method}", "rtol=1e-6, analytic banded Jacobian", wall, cpu, st,
                      envelope_error(M, acc, ref), status)
        print(row, flush=True)
        rows.append(row)
        if method == "BDF":
            scipy_bdf = (wall, cpu)
    if jac_off:
        wall, cpu, st, acc, status = run_scipy(prob, model, T, "BDF", "dense")
        row = fmt_row("scipy BDF (JAC OFF)", "rtol=1e-6, dense finite-difference Jacobian", wall, cpu, st,
                      envelope_error(M, acc, ref), status)
        print(row, flush=True)
        rows.append(row)
    lines += rows + [""]
    # physical budget
    sol = integrate(prob, "rk4", sample_times(0.0, T, T / 200), T, step=0.01, max_steps=int(T / 0.01) + 10)
    states = np.ascontiguousarray(sol.y[np.isfinite(sol.y[:, 0])])
    ns = rhs_cost_ns(prob, states)
    lines.append(f"RHS cost on states of the run: **{ns:.1f} ns per vehicle per evaluation** (best of 5).")
    if best is not None:
        wall, cpu, method, setting, s, err = best
        per = cpu / (s.stats["nfev"] * N) * 1e9
        lines.append(f"Best method at ≤ 0.5 % envelope error: **{method} ({setting})**: {wall:.2f} s wall, "
                     f"{cpu:.2f} s CPU, error {100 * err:.2f} %; {cpu / scipy_bdf[1]:.3f} × the CPU time of scipy "
                     f"BDF with the analytic Jacobian ({scipy_bdf[1] / cpu:.0f}× faster); all-inclusive cost "
                     f"{per:.1f} ns per vehicle per RHS evaluation ({per / ns:.1f}× the bare RHS).")
    lines.append("")
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="a few methods, no JAC OFF run")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trains", default="train4,train2")
    ap.add_argument("--jac-off-train4", action="store_true", help="also run the dense-Jacobian scipy BDF on train 4")
    args = ap.parse_args()
    runs = QUICK if args.quick else STUDY
    lines = ["# Integrators (issue 3)", "",
             f"`python benchmarks/integrators.py{' --quick' if args.quick else ''}` — {time.strftime('%Y-%m-%d')}, "
             f"{os.cpu_count()} cores (shared), numba {numba.__version__}, one thread.", ""]
    for train in args.trains.split(","):
        jac_off = not args.quick and (train != "train4" or args.jac_off_train4)
        study(train, runs, args.repeats, jac_off, lines)
    text = "\n".join(lines) + "\n"
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
