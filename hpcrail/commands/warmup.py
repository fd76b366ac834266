"""``hpcrail warmup``: compile (or load) every numba kernel that scenarios need, without simulating them.

On a cluster the first job after installing or updating hpcrail compiles its kernels (20 s to 2 minutes,
more for mixed trains and partitioned runs); jobs started together would all compile the same kernels.
``hpcrail warmup`` on the login node fills the shared cache once (numba's disk cache, keyed by the hpcrail
source and the numba version: every later job of the same installation loads from it).  Each scenario is run
for ``--duration`` simulated seconds (default 0.5 s): its model, integrator, backend and outputs take the
same code path as the full run, so the same kernels are compiled; nothing is written.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from hpcrail.cli import app, build_error_exit, config_error_exit, console, err_console
from hpcrail.config import ConfigError


def warm_scenarios(paths, overrides=(), duration_s: float = 0.5, say=None) -> list[tuple[str, float, str]]:
    """Run each scenario file of ``paths`` for ``duration_s`` [s] of simulated time (or its own duration if
    shorter) so that every kernel it needs is compiled into numba's disk cache.

    Returns ``[(path, seconds, status), ...]``: wall seconds spent per scenario (compilation or loading,
    plus the short run) and the run's status.  Raises :class:`hpcrail.config.ConfigError` for an invalid
    file or override (nothing is run after it) or a model that cannot be built from it (located like a
    validation error) and ValueError for ``duration_s <= 0``.
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
        with compile_notice(say or (lambda text: None), text=f"{name}: compiling numba kernels"):
            try:
                ds = run_scenario(sc)
            except ConfigError as exc:
                raise locate_issues(exc, doc) from None
        out.append((name, time.perf_counter() - t0, str(ds["status"].values) if ds is not None else "completed"))
    return out


def _default_scenarios() -> list[Path]:
    from hpcrail.config.examples import examples_root

    return [examples_root() / "configs" / "trains" / "train4.yaml"]


@app.command()
def warmup(scenarios: Optional[List[Path]] = typer.Argument(None, help="scenario YAML files (default: the "
                                                                         "shipped train 4)"),
           set_: List[str] = typer.Option([], "--set", help="override a field of every scenario: dotted.path=value"),
           duration: float = typer.Option(0.5, "--duration", min=1e-6, help="simulated seconds per scenario")):
    """Compile the numba kernels the given scenarios need into the shared cache (run once on a login node
    after installing hpcrail, before submitting many jobs); nothing is written."""
    from hpcrail._numba import cache_dir

    try:
        paths = list(scenarios) if scenarios else _default_scenarios()
    except FileNotFoundError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    say = lambda text: err_console.print(text, highlight=False, soft_wrap=True)   # noqa: E731
    say(f"numba cache: {cache_dir()}")
    try:
        rows = warm_scenarios(paths, set_, duration, say=say)
    except ConfigError as exc:
        config_error_exit(exc)
    except Exception as exc:  # noqa: BLE001 - a model that could not be built: one line, no traceback
        build_error_exit(exc, ", ".join(map(str, paths)))
    for name, secs, status in rows:
        console.print(f"{name}: kernels ready in {secs:.1f} s ({status} {duration:g} s run)", highlight=False,
                      soft_wrap=True)
