"""The 150-vehicle brake rack's CPU time in several fresh processes (issue 24's ≤ 0.2 s target).

One process of ``benchmarks/brakes.py`` times the rack a few times and reports their median, but the same code
measures differently from one process to the next (memory placement of the work arrays and kernels).  This script
starts ``--processes`` fresh interpreters one after the other; each loads the rack from the numba cache, runs it
once to warm, then times ``--repeats`` runs (thread CPU time of ``integrate``, compilation excluded) and reports
its median.  The report gives every process's median, their median, min and max, and the load.

Usage:  python benchmarks/rack_processes.py [--processes 8] [--repeats 5]
Writes benchmarks/results/rack_processes.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "rack_processes.md"

CHILD = r"""
import json, sys, time
sys.path.insert(0, {here!r})
import numpy as np
import brakes as B
from hpcrail.integrators import integrate
sc, model, prob = B.case(B.RACK)
integrate(prob, sc.integrator.method, np.array([0.0]), 1.0, **sc.integrator.kwargs())
cs = []
for _ in range({repeats}):
    c, sol = B.run(sc, prob)
    cs.append(c)
st = sol.stats
print(json.dumps(dict(cpu=cs, steps=int(st["steps"]), nfev=int(st["nfev"]), nlu=int(st["nlu"]),
                      njev=int(st["njev"]), states=int(prob.y0.size))))
"""


def fresh_process_medians(processes: int, repeats: int, verbose: bool = False) -> tuple[list[float], dict]:
    """Per fresh process, the median CPU time [s] of ``repeats`` rack runs; and the last process's run
    statistics (steps, RHS, Jacobians, LU, states)."""
    code = CHILD.format(here=str(HERE), repeats=repeats)
    meds, info = [], {}
    for i in range(processes):
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        info = json.loads(r.stdout.strip().splitlines()[-1])
        meds.append(float(np.median(info["cpu"])))
        if verbose:
            print(f"process {i + 1}: median {meds[-1]:.4f} s ({', '.join(f'{c:.4f}' for c in info['cpu'])})",
                  flush=True)
    return meds, info


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    meds, info = fresh_process_medians(a.processes, a.repeats, verbose=True)
    load1 = os.getloadavg()[0]
    m = np.array(meds)
    lines = ["# The 150-vehicle rack in fresh processes", "",
             f"`python benchmarks/rack_processes.py --processes {a.processes} --repeats {a.repeats}`; "
             f"configs/brakes/rack/brake_rack_150.yaml, 60 s ({info['states']:,} states; {info['steps']:,} steps, "
             f"{info['nfev']:,} RHS, {info['njev']:,} Jacobians, {info['nlu']:,} LU); per process the median of "
             f"{a.repeats} runs (thread CPU time, compilation excluded); load average {load0:.2f} before / "
             f"{load1:.2f} after (2 cores).", "",
             "| process | median CPU [s] |", "|---|---|"]
    lines += [f"| {i + 1} | {v:.4f} |" for i, v in enumerate(meds)]
    lines += ["", f"**Median over processes {np.median(m):.4f} s** (min {m.min():.4f}, max {m.max():.4f}; "
              f"{(m <= 0.2).sum()} of {m.size} processes ≤ 0.2 s, the issue 24 target).", ""]
    Path(a.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
