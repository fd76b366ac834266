"""Wall time of each command a document runs, as its docs test runs it (tests/test_docs.py).

``python benchmarks/docs_commands.py [README.md] [--out benchmarks/results/docs_commands.md]`` copies the
reader's directory (configs and jobs, shortened as the docs test shortens them), then runs the document's bash
commands (``hpcrail ...`` through the CLI in this process, blocks marked ``needs slurm``/``needs mpi`` skipped as
the test only checks their syntax) and Python blocks (each in a fresh interpreter) in order, and prints and
writes the seconds of each.  Run it with the numba cache filled (a suite or ``hpcrail warmup`` before) to see the
commands' own cost rather than compilation; the load average is recorded before and after.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("doc", nargs="?", default="README.md", help="document, relative to the repository root")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "docs_commands.md"))
    a = ap.parse_args()
    import test_docs as td                      # the docs test's own harness (reader directory, command split)

    load0 = os.getloadavg()[0]
    where = td.reader_directory(Path(tempfile.mkdtemp(prefix="hpcrail-docs-")))
    os.chdir(where)
    os.environ["MPLBACKEND"] = "Agg"
    rows = []
    t_all = time.perf_counter()
    for b in td.blocks(ROOT / a.doc):
        if b.lang == "bash" and "needs" not in b.marker:
            for cmd in td.commands(b.code):
                if cmd[0] != "hpcrail":
                    continue                   # pip, pytest: the reader's set-up
                t = time.perf_counter()
                td.run_hpcrail(cmd[1:])
                rows.append((time.perf_counter() - t, " ".join(cmd)))
                print(f"{rows[-1][0]:7.1f} s  {rows[-1][1]}", flush=True)
        elif b.lang == "python":
            t = time.perf_counter()
            td.run_python(b, a.doc)
            rows.append((time.perf_counter() - t, f"python block, line {b.line} (fresh interpreter)"))
            print(f"{rows[-1][0]:7.1f} s  {rows[-1][1]}", flush=True)
    total = time.perf_counter() - t_all
    load1 = os.getloadavg()[0]
    lines = [f"# Commands of {a.doc} as its docs test runs them", "",
             f"`python benchmarks/docs_commands.py {a.doc}`; wall seconds per command, in order; total {total:.1f} s; "
             f"load average {load0:.2f} before, {load1:.2f} after.", "", "| s | command |", "|---|---|"]
    lines += [f"| {s:.1f} | `{c}` |" for s, c in rows]
    lines += ["", "Largest:", ""] + [f"- {s:.1f} s `{c}`" for s, c in sorted(rows, reverse=True)[:8]]
    Path(a.out).write_text("\n".join(lines) + "\n")
    print(f"total {total:.1f} s -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
