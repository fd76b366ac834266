"""``hpcrail warmup``: compile (or load) every numba kernel that scenarios need, without simulating them.

The first run after installing or updating hpcrail compiles its kernels (tens of seconds per scenario family
on two idle cores, minutes on a loaded machine: ``benchmarks/cold_start.py --families``); on a cluster, jobs
started together would all compile the same kernels.  ``hpcrail warmup`` fills the shared cache once (numba's
disk cache, keyed by the hpcrail source and the numba version: every later run of the same installation loads
from it); ``hpcrail warmup --all`` does it for every shipped scenario (``configs/``), ``--jobs 2`` in two
processes.  Each scenario is run for ``--duration`` simulated seconds (default 0.5 s): its model, integrator,
backend and outputs take the same code path as the full run, so the same kernels are compiled; nothing is
written.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from hpcrail.cli import EXIT_CONFIG, EXIT_FAILED_RUN, app, build_error_exit, config_error_exit, console, err_console
from hpcrail.config import ConfigError


def warm_scenarios(paths, overrides=(), duration_s: float = 0.5, say=None, keep_going: bool = False,
                   done=None) -> list[tuple[str, float, str]]:
    """Run each scenario file of ``paths`` for ``duration_s`` [s] of simulated time (or its own duration if
    shorter) so that every kernel it needs is compiled into numba's disk cache.

    Returns ``[(path, seconds, status), ...]``: wall seconds spent per scenario (compilation or loading,
    plus the short run) and the run's status (``keep_going``: a scenario that raises gets the status
    ``"failed: <error>"`` and the next one runs; ``done(row)`` is called as each finishes).  Raises
    :class:`hpcrail.config.ConfigError` for an invalid file or override (nothing is run after it) or a model
    that cannot be built from it (located like a validation error) and ValueError for ``duration_s <= 0``.
    """
    from hpcrail._numba import compile_notice
    from hpcrail.kinds import load_scenario, locate_issues
    from hpcrail.simulate import run_scenario

    if not duration_s > 0:
        raise ValueError(f"duration_s = {duration_s}: give a positive number of simulated seconds")
    loaded = []
    for p in paths:   # validate every file first: a typo in the last one should not cost the others' compile
        sc, _doc = load_scenario(p, list(overrides))
        d = min(duration_s, sc.simulation.duration_s)
        sc, doc = load_scenario(p, [*overrides, f"simulation.duration_s={d!r}"])
        loaded.append((str(p), sc, doc))
    out = []
    for name, sc, doc in loaded:
        t0 = time.perf_counter()
        try:
            with compile_notice(say or (lambda text: None), text=f"{name}: compiling numba kernels"):
                try:
                    ds = run_scenario(sc)
                except ConfigError as exc:
                    raise locate_issues(exc, doc) from None
        except Exception as exc:   # noqa: BLE001 - keep_going: the next scenario still warms up
            if not keep_going:
                raise
            out.append((name, time.perf_counter() - t0, f"failed: {type(exc).__name__}: {exc}"))
        else:
            out.append((name, time.perf_counter() - t0, str(ds["status"].values) if ds is not None else "completed"))
        if done is not None:
            done(out[-1])
    return out


def _default_scenarios() -> list[Path]:
    from hpcrail.config.examples import examples_root

    return [examples_root() / "configs" / "trains" / "train4.yaml"]


def warm_in_processes(paths, overrides=(), duration_s: float = 0.5, jobs: int = 2, say=None,
                      tick_s: float = 10.0) -> list:
    """:func:`warm_scenarios` of ``paths`` spread over ``jobs`` processes (``hpcrail warmup`` children: the
    kernels of different scenario families compile at the same time; the families are dealt out in turn so
    that each process compiles a different one).  ``say`` hears each scenario as it finishes and, every
    ``tick_s`` seconds, how long the warm-up has run.  Returns ``[(path, seconds, status), ...]`` in the order of
    ``paths``; a child that fails reports its last error line as the status."""
    import queue
    import subprocess
    import sys
    import threading

    say = say or (lambda text: None)
    groups: dict = {}
    for p in paths:
        groups.setdefault(Path(p).parent.name, []).append(str(p))
    queues: list = [[] for _ in range(max(1, jobs))]
    for i, fam in enumerate(sorted(groups, key=lambda g: -len(groups[g]))):
        queues[i % len(queues)] += groups[fam]
    lines: queue.Queue = queue.Queue()
    procs = []
    for q in (q for q in queues if q):
        cmd = [sys.executable, "-m", "hpcrail", "warmup", *q, "--duration", repr(duration_s), "--report-only"]
        for o in overrides:
            cmd += ["--set", o]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        errs: list = []
        threading.Thread(target=lambda pr=proc: [lines.put(x) for x in pr.stdout], daemon=True).start()
        threading.Thread(target=lambda pr=proc, e=errs: e.extend(pr.stderr), daemon=True).start()
        procs.append((q, proc, errs))
        say(f"warm-up process {len(procs)}: {len(q)} scenarios ({', '.join(sorted({Path(x).parent.name for x in q}))})")
    rows: dict = {}
    t0 = time.perf_counter()
    while len(rows) < len(paths) and (any(pr.poll() is None for _q, pr, _e in procs) or not lines.empty()):
        try:
            line = lines.get(timeout=tick_s)
        except queue.Empty:
            say(f"… compiling: {time.perf_counter() - t0:.0f} s so far, {len(rows)} of {len(paths)} scenarios ready")
            continue
        name, _, rest = line.rstrip("\n").partition("\t")
        if rest:
            secs, _, status = rest.partition("\t")
            rows[name] = (name, float(secs), status)
            say(f"{name}: ready after {float(secs):.0f} s ({len(rows)} of {len(paths)})")
    for q, proc, errs in procs:
        proc.wait()
        for name in q:
            if name not in rows:
                why = ("".join(errs).strip().splitlines() or [f"exit {proc.returncode}"])[-1]
                rows[name] = (name, time.perf_counter() - t0, f"failed: {why}")
    return [rows[str(p)] for p in paths]


@app.command()
def warmup(scenarios: Optional[List[Path]] = typer.Argument(None, help="scenario YAML files (default: the "
                                                                         "shipped train 4)"),
           all_: bool = typer.Option(False, "--all", help="every shipped scenario (configs/: trains, couplers, "
                                     "friction, vertical, wheel/rail, mixed trains)"),
           jobs: int = typer.Option(1, "--jobs", "-j", min=1, max=64, help="processes compiling at the same time "
                                    "(scenario families dealt out in turn)"),
           set_: List[str] = typer.Option([], "--set", help="override a field of every scenario: dotted.path=value"),
           duration: float = typer.Option(0.5, "--duration", min=1e-6, help="simulated seconds per scenario"),
           report_only: bool = typer.Option(False, "--report-only", hidden=True,
                                            help="print PATH<TAB>SECONDS<TAB>STATUS lines only (child processes)")):
    """Compile the numba kernels the given scenarios need into the shared cache (once after installing or
    updating hpcrail, e.g. on a cluster's login node before submitting jobs); nothing is written."""
    from hpcrail._numba import cache_dir
    from hpcrail.config.examples import shipped_scenarios

    try:
        if all_:
            if scenarios:
                raise ValueError("give scenario files or --all, not both")
            paths = shipped_scenarios()
        else:
            paths = list(scenarios) if scenarios else _default_scenarios()
    except (FileNotFoundError, ValueError) as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    say = (lambda text: None) if report_only else \
        (lambda text: err_console.print(text, highlight=False, markup=False, soft_wrap=True))   # noqa: E731
    say(f"numba cache: {cache_dir()}")
    t0 = time.perf_counter()
    try:
        if jobs > 1 and len(paths) > 1:
            for p in paths:    # every file valid before any compiles
                from hpcrail.kinds import load_scenario

                load_scenario(p, list(set_))
            rows = warm_in_processes(paths, set_, duration, jobs, say=say)
        else:
            rows = warm_scenarios(paths, set_, duration, say=say, keep_going=True,
                                  done=(lambda r: typer.echo(f"{r[0]}\t{r[1]:.3f}\t{r[2]}")) if report_only else None)
    except ConfigError as exc:
        config_error_exit(exc)
    except Exception as exc:  # noqa: BLE001 - a model that could not be built: one line, no traceback
        build_error_exit(exc, ", ".join(map(str, paths)))
    failed = 0
    if report_only:     # the rows went out as each scenario finished
        return
    for name, secs, status in rows:
        ok = status in ("completed", "event_stop")
        failed += not ok
        console.print(f"{name}: kernels ready in {secs:.1f} s ({status} {duration:g} s run)" if ok else
                      f"{name}: {status}", highlight=False, markup=False, soft_wrap=True)
    if not report_only and len(rows) > 1:
        console.print(f"{len(rows) - failed} of {len(rows)} scenarios ready in {time.perf_counter() - t0:.0f} s",
                      highlight=False)
    if failed:
        raise typer.Exit(EXIT_FAILED_RUN)
