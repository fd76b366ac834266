"""``hpcrail modes SCENARIO.yaml [--at TIME]``: natural frequencies, damping ratios and mode shapes of
the linearised model; ``hpcrail spectrum STORE VARIABLE``: peak frequencies of a result variable."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.table import Table

from hpcrail.cli import EXIT_CONFIG, app, build_error_exit, config_error_exit, console, err_console
from hpcrail.config import ConfigError


@app.command()
def modes(scenario: Path = typer.Argument(..., help="scenario YAML"),
          at: float = typer.Option(0.0, "--at", help="linearise about the state at this time [s] (integrated "
                                   "from the initial state)"),
          set_: List[str] = typer.Option([], "--set", help="override a field: dotted.path=value"),
          max_frequency: Optional[float] = typer.Option(None, "--max-frequency", help="list modes up to this [Hz]"),
          damped: bool = typer.Option(False, "--damped", help="also list the eigenvalues of the damped system")):
    """Natural frequencies [Hz], damping ratios and mode shapes of the linearised model."""
    from hpcrail.analysis.modes import linearisation_for
    from hpcrail.analysis.modes import modes as compute_modes
    from hpcrail.kinds import load_scenario, locate_issues

    try:
        sc, doc = load_scenario(scenario, set_)
    except ConfigError as exc:
        config_error_exit(exc)
    try:
        lin = linearisation_for(sc, at)
        undamped, eig = compute_modes(lin)
    except ConfigError as exc:   # found while building the model
        config_error_exit(locate_issues(exc, doc))
    except (KeyError, RuntimeError, FloatingPointError) as exc:
        err_console.print(f"[bold red]error:[/] {exc.args[0] if exc.args else exc}", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    except Exception as exc:  # noqa: BLE001 - a model that could not be built: one line, no traceback
        build_error_exit(exc, scenario)
    table = Table(title=f"modes of {lin.description} linearised at t = {at:g} s")
    table.add_column("#", justify="right")
    table.add_column("f_n [Hz]", justify="right")
    table.add_column("damping ratio", justify="right")
    table.add_column("mode shape (largest coordinates, relative amplitude and phase)", overflow="fold")
    for i, md in enumerate(undamped, 1):
        if max_frequency is not None and md.frequency_hz > max_frequency:
            break
        z = "" if md.rigid else f"{md.damping_ratio:.4f}"
        table.add_row(str(i), f"{md.frequency_hz:.4f}", z, md.description)
    console.print(table)
    flex = [md for md in undamped if not md.rigid]
    if flex:
        console.print(f"first mode: {flex[0].frequency_hz:.4f} Hz ({flex[0].description})", highlight=False)
    if damped:
        t2 = Table(title="eigenvalues of the damped system (Im >= 0)")
        for c in ("eigenvalue [1/s]", "f_n [Hz]", "f_d [Hz]", "damping ratio", "shape"):
            t2.add_column(c)
        for d in eig:
            if max_frequency is not None and d.natural_frequency_hz > max_frequency:
                break
            t2.add_row(f"{d.eigenvalue.real:.5g}{d.eigenvalue.imag:+.5g}j", f"{d.natural_frequency_hz:.4f}",
                       f"{d.damped_frequency_hz:.4f}", f"{d.damping_ratio:.4f}", d.description)
        console.print(t2)


@app.command()
def spectrum(store: Path = typer.Argument(..., help="result store (zarr) written by hpcrail run"),
             variable: str = typer.Argument(..., help="variable name, e.g. coupler_force"),
             sel: List[str] = typer.Option([], "--sel", help="select along a dimension: dim=value (repeatable)"),
             t_start: Optional[float] = typer.Option(None, "--from", help="start of the window [s]"),
             peaks: int = typer.Option(5, "--peaks", help="number of peaks to list"),
             min_frequency: float = typer.Option(0.1, "--min-frequency", help="ignore peaks below [Hz]")):
    """Peak frequencies of the amplitude spectrum (FFT) of one result variable."""
    from hpcrail.analysis.spectrum import amplitude_spectrum, peak_frequencies
    from hpcrail.results.store import open_result

    if not store.exists():
        err_console.print(f"[bold red]error:[/] {store} does not exist", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    ds = open_result(store)
    if variable not in ds:
        err_console.print(f"[bold red]error:[/] {store}: no variable {variable!r}; time series: "
                          f"{', '.join(v for v in ds.data_vars if 'time' in ds[v].dims)}", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    da = ds[variable]
    for s in sel:
        dim, _, val = s.partition("=")
        if dim not in da.dims:
            err_console.print(f"[bold red]error:[/] --sel {s}: {variable} has dims {da.dims}", highlight=False)
            raise typer.Exit(EXIT_CONFIG)
        v = val.strip()
        da = da.sel({dim: int(v) if v.lstrip("-").isdigit() else v})
    try:
        spec = amplitude_spectrum(da.load(), t_start=t_start)
        found = peak_frequencies(spec, n=peaks, min_frequency=min_frequency)
    except ValueError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    table = Table(title=f"{variable} {' '.join(sel)}: spectral peaks")
    table.add_column("frequency [Hz]", justify="right")
    table.add_column(f"amplitude [{da.attrs.get('units', '')}]", justify="right")
    for f, a in found:
        table.add_row(f"{f:.4f}", f"{a:.6g}")
    console.print(table)
