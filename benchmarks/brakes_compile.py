"""Cold compilation of the pneumatic brake's kernels (issue 24: the test suite's budget is spent compiling).

Each measurement runs in a fresh process with ``NUMBA_CACHE_DIR`` set to a new empty directory (nothing loaded
from a disk cache) and ``HPCRAIL_COMPILE_JOBS=1`` (no helper process: the CPU time is this process's):

1. the LTD model functions of a train with the pneumatic brake, one by one (right-hand side, Jacobian,
   observer; each includes the brake kernels it calls that were not compiled before): CPU seconds each;
2. ``--tests``: the whole ``tests/test_brakes.py`` from an empty cache (``pytest -q -p no:cacheprovider``):
   CPU seconds of pytest and its children (the integrators and everything else the tests compile).

Usage:  python benchmarks/brakes_compile.py [--tests]
Writes benchmarks/results/brakes_compile.md (and prints it).  Records the load average with every figure:
on a loaded machine the CPU seconds are inflated less than the wall time, but still inflated.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "brakes_compile.md"
KERNELS = ("ltd_rhs_pneumatic", "ltd_jac_pneumatic", "ltd_observe_pneumatic")


def _child() -> None:
    """Compile the kernels named on the command line for a 4-vehicle pipe; print 'name cpu' lines."""
    sys.path.insert(0, str(ROOT / "tests"))
    import numba
    from numba import types

    from helpers.ltd import make_scenario
    from test_brakes import pipe_tree

    from hpcrail.kinds.ltd.problem import ltd_problem
    from hpcrail.models.ltd import jacobian as LJ
    from hpcrail.models.ltd import kernel as LK

    model, _ = ltd_problem(make_scenario(pipe_tree(4, 2)))
    f1 = types.float64[::1]
    sig = (types.float64, f1, numba.typeof(model.params), f1)
    funcs = {"ltd_rhs_pneumatic": LK.ltd_rhs_pneumatic, "ltd_jac_pneumatic": LJ.ltd_jac_pneumatic,
             "ltd_observe_pneumatic": LK.ltd_observe_pneumatic}
    for name in sys.argv[2:]:
        c0 = time.process_time()
        funcs[name].compile(sig)
        print(name, time.process_time() - c0, flush=True)


def _env(cache: str) -> dict:
    return dict(os.environ, NUMBA_CACHE_DIR=cache, HPCRAIL_COMPILE_JOBS="1", PYTHONPATH=str(ROOT))


def kernels() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="hpcrail-cold-") as cache:
        l0 = os.getloadavg()[0]
        out = subprocess.run([sys.executable, __file__, "--child", *KERNELS], env=_env(cache), cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
        l1 = os.getloadavg()[0]
    rows = [line.split() for line in out.splitlines() if line.split() and line.split()[0] in KERNELS]
    total = sum(float(c) for _, c in rows)
    return ([f"## Brake model functions, compiled in this order from an empty cache (load {l0:.1f} / {l1:.1f})", "",
             "| function (with what it calls) | CPU [s] |", "|---|---|"]
            + [f"| `{n}` | {float(c):.1f} |" for n, c in rows] + [f"| total | {total:.1f} |", ""])


def tests() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="hpcrail-cold-") as cache:
        l0 = os.getloadavg()[0]
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pytest", "tests/test_brakes.py", "-q", "-p", "no:cacheprovider"],
                              env=_env(cache), cwd=ROOT, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        l1 = os.getloadavg()[0]
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    tail = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else "(no output)"
    return [f"## tests/test_brakes.py from an empty cache (load {l0:.1f} / {l1:.1f})", "",
            f"**CPU {cpu:.0f} s**, wall {wall:.0f} s; pytest: {tail}", ""]


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child()
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tests", action="store_true", help="also run tests/test_brakes.py from an empty cache")
    args = ap.parse_args()
    lines = ["# Pneumatic brake: cold compilation (issue 24)", "",
             f"`python benchmarks/brakes_compile.py{' --tests' if args.tests else ''}`; fresh NUMBA_CACHE_DIR per "
             "measurement, HPCRAIL_COMPILE_JOBS=1; process CPU time; load average (2 cores) with every block.", ""]
    lines += kernels()
    print("\n".join(lines), flush=True)
    if args.tests:
        lines += tests()
        print("\n".join(lines[-3:]), flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
