"""``hpcrail report`` in one process against its default helper processes (stop 43), on the README's make-up study.

``python benchmarks/report_processes.py [--store STUDY.zarr] [--repeats 3]``: without ``--store`` the full
``jobs/makeup_screening.yaml`` study (1 024 make-ups, ~2 min on 2 cores) is swept into a temporary directory
first.  Then ``hpcrail report STORE -j 1`` and ``hpcrail report STORE`` (default: helpers from 80 panels on) run
interleaved, each a fresh process; reported: wall time and CPU time (user + system of the report process and the
helpers it reaped) per run and their medians, the ratio of the medians, the load average around each run, and
whether every figure file is byte for byte the same in both modes.  Writes benchmarks/results/report_processes.md.
Run it while nothing else runs: the default mode uses every core.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "report_processes.md"


def timed(cmd: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the process and its reaped descendants) of ``cmd``."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    w = time.perf_counter() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return w, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", type=Path, default=None, help="a study store (default: sweep the make-up study)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hpcrail-report-bench-"))
    store = a.store
    if store is None:
        store = tmp / "makeup_screening.zarr"
        subprocess.run([sys.executable, "-m", "hpcrail", "sweep", str(ROOT / "jobs" / "makeup_screening.yaml"),
                        "-o", str(store), "-q"], check=True)
    modes = {"-j 1 (one process)": ["-j", "1"], "default (helpers)": []}
    rows: dict[str, list] = {m: [] for m in modes}
    for k in range(a.repeats):
        for mode, extra in modes.items():
            out = tmp / f"{'one' if extra else 'default'}_{k}"
            load0 = os.getloadavg()[0]
            w, c = timed([sys.executable, "-m", "hpcrail", "report", str(store), "-o", str(out)] + extra)
            rows[mode].append((w, c, load0, os.getloadavg()[0], out))
            print(f"{mode}: {w:.1f} s wall, {c:.1f} s CPU", flush=True)
    one, dflt = (rows[m] for m in modes)
    names = sorted(p.name for p in one[0][4].iterdir())
    same = names == sorted(p.name for p in dflt[0][4].iterdir()) and all(
        (one[0][4] / n).read_bytes() == (dflt[0][4] / n).read_bytes() for n in names)
    med = {m: (statistics.median(r[0] for r in rr), statistics.median(r[1] for r in rr)) for m, rr in rows.items()}
    lines = ["# hpcrail report: one process against helper processes", "",
             f"`python benchmarks/report_processes.py{' --store ' + str(a.store) if a.store else ''} --repeats "
             f"{a.repeats}` — {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores; store {store.name} "
             f"({len(names)} figures).", "",
             "| mode | run | wall [s] | CPU [s] | load before → after |", "|---|---|---|---|---|"]
    for m, rr in rows.items():
        for k, (w, c, l0, l1, _o) in enumerate(rr):
            lines.append(f"| {m} | {k + 1} | {w:.1f} | {c:.1f} | {l0:.2f} → {l1:.2f} |")
    (w1, c1), (w2, c2) = med.values()
    lines += ["", f"Medians: one process {w1:.1f} s wall / {c1:.1f} s CPU; helpers {w2:.1f} s wall / {c2:.1f} s CPU: "
              f"**wall {w2 / w1:.2f}×, CPU {c2 / c1:.2f}×** of one process.  Figure files byte for byte the same: "
              f"{'yes' if same else 'NO'}.", ""]
    Path(a.out).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
