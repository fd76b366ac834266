"""Cost of the pieces of one implicit step on train 4 (issue 17): RHS, analytic Jacobian, bordered-band
LU and solve — the generic band kernels against the ml = mu = 2 ones, in the same run.

States: 60 samples of train 4's first 600 s (RK4 at 10 ms).  Each kernel runs in a numba loop over
the states, ``--reps`` times; the best of 5 (thread CPU time) per call is reported with the ratio.

Usage:  python benchmarks/linalg_kernels.py [--reps 200]
Writes benchmarks/results/linalg_kernels.md (and prints it).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.integrators import integrate, registry  # noqa: E402
from hpcrail.integrators.driver import problem_spec  # noqa: E402
from hpcrail.integrators.linalg import (  # noqa: E402
    SP_ML, SP_MU, SP_NB, SP_NC, _band_lu_22, _band_lu_gen, _band_solve_22, _band_solve_gen, form_matrix,
    lin_size_py, scatter_values,
)
from hpcrail.models.ltd.jacobian import ltd_jac  # noqa: E402
from hpcrail.models.ltd.kernel import ltd_rhs  # noqa: E402
from hpcrail.kinds.ltd.problem import ltd_problem  # noqa: E402
from hpcrail.results.sampling import sample_times  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "linalg_kernels.md"


@njit
def _rhs(Y, p, reps):
    f = np.empty(Y.shape[1])
    for _ in range(reps):
        for k in range(Y.shape[0]):
            ltd_rhs(0.0, Y[k], p, f)
    return f[0]


@njit
def _jac(Y, p, spec, reps, nnz, L):
    vals = np.empty(nnz)
    J = np.empty(L)
    for _ in range(reps):
        for k in range(Y.shape[0]):
            ltd_jac(100.0, Y[k], p, vals)
            scatter_values(vals, spec, J)
    return J[0]


@njit
def _lu(J, spec, reps, m, n, nc, special):
    LU = np.empty(J.size)
    piv = np.empty(n, np.int64)
    mass = np.ones(n)
    for r in range(reps):
        for k in range(m):
            form_matrix(J, LU, 100.0 + k, mass, spec)
            if special:
                _band_lu_22(LU, nc, piv)
            else:
                _band_lu_gen(LU, nc, 2, 2, piv)
    return LU[0]


@njit
def _solve(J, spec, Y, reps, n, nc, special):
    LU = np.empty(J.size)
    piv = np.empty(n, np.int64)
    form_matrix(J, LU, 100.0, np.ones(n), spec)
    _band_lu_gen(LU, nc, 2, 2, piv)
    x = np.empty(nc)
    s = 0.0
    for _ in range(reps):
        for k in range(Y.shape[0]):
            for i in range(nc):
                x[i] = Y[k, i]
            if special:
                _band_solve_22(LU, nc, piv, x)
            else:
                _band_solve_gen(LU, nc, 2, 2, piv, x)
            s += x[0]
    return s


def best(fn, *args):
    fn(*args)
    out = np.inf
    for _ in range(5):
        c = time.thread_time()
        fn(*args)
        out = min(out, time.thread_time() - c)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    args = ap.parse_args()
    sc, _ = load_scenario(ROOT / "configs" / "trains" / "train4.yaml")
    _model, prob = ltd_problem(sc)
    spec, _ = problem_spec(prob, registry.get("bdf2"))
    n = prob.y0.size
    nc = int(spec[SP_NC])
    assert (spec[SP_ML], spec[SP_MU]) == (2, 2)
    L = lin_size_py(nc, 2, 2, int(spec[SP_NB]))
    sol = integrate(prob, "rk4", sample_times(0.0, 600.0, 10.0), 600.0, step=0.01)
    Y = np.ascontiguousarray(sol.y[1:])
    p = prob.params
    nnz = prob.jac_pattern.nnz
    vals = np.empty(nnz)
    J = np.empty(L)
    ltd_jac(100.0, Y[-1], p, vals)
    scatter_values(vals, spec, J)
    reps = args.reps
    calls = reps * Y.shape[0]
    us = lambda t: 1e6 * t / calls  # noqa: E731
    t_rhs = us(best(_rhs, Y, p, reps))
    t_jac = us(best(_jac, Y, p, spec, reps, nnz, L))
    lu_gen = us(best(_lu, J, spec, reps, Y.shape[0], n, nc, False))
    lu_22 = us(best(_lu, J, spec, reps, Y.shape[0], n, nc, True))
    sv_gen = us(best(_solve, J, spec, Y, reps, n, nc, False))
    sv_22 = us(best(_solve, J, spec, Y, reps, n, nc, True))
    lines = ["# Pieces of an implicit step on train 4 (issue 17)", "",
             f"`python benchmarks/linalg_kernels.py --reps {reps}` — {time.strftime('%Y-%m-%d')}, load average "
             f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {n} states, band ml = mu = 2 + 1 border state; best "
             "of 5 (thread CPU time) per call.", "",
             "| kernel | µs per call | ratio |", "|---|---|---|",
             f"| RHS `ltd_rhs` | {t_rhs:.2f} ({1e3 * t_rhs / p.n_veh:.1f} ns per vehicle) | |",
             f"| analytic Jacobian + scatter | {t_jac:.2f} | |",
             f"| iteration matrix + band LU, generic | {lu_gen:.2f} | |",
             f"| iteration matrix + band LU, ml = mu = 2 unrolled | {lu_22:.2f} | {lu_gen / lu_22:.2f}× |",
             f"| band solve, generic | {sv_gen:.2f} | |",
             f"| band solve, ml = mu = 2 in registers | {sv_22:.2f} | {sv_gen / sv_22:.2f}× |", ""]
    text = "\n".join(lines) + "\n"
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
