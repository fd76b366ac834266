"""``hpcrail friction-report``: figures like Oprea 2018 Figs 3-5 and a short report of a friction run (the
LTD kind's ``friction`` run figure)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hpcrail.cli import EXIT_CONFIG, app, console, err_console


@app.command("friction-report")
def friction_report(store: Path = typer.Argument(..., help="result store (zarr) of a run with friction draft gears"),
                    output: Optional[Path] = typer.Option(None, "-o", "--output", help="output directory "
                                                          "(default: STORE name + '_report')"),
                    coupler: int = typer.Option(4, "--coupler",
                                                help="connection of the force figure (Oprea 2018 Fig 5: 4)"),
                    t_max: Optional[float] = typer.Option(None, "--t-max", help="end of the time axis [s]")):
    """Write relative velocities, relative displacements and one connection force as PNG (Oprea 2018
    Figs 3-5), and report.md: stick/slip events and the check of the final stationary phase (the ``friction``
    run figure of the store's kind, found through the kind registry)."""
    import xarray as xr

    from hpcrail import kinds

    if not store.exists():
        err_console.print(f"[bold red]error:[/] {store}: no such result store", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    ds = xr.open_zarr(store)
    kind = kinds.get(ds.attrs.get("model", "ltd"))
    fig = next((f for f in kind.run_figures if f.name == "friction"), None)
    if fig is None or (fig.applies is not None and not fig.applies(ds)):
        err_console.print(f"[bold red]error:[/] {store}: not a run with friction draft gears "
                          "(no 'relative_velocity' variable)", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    M = ds.sizes["coupler"]
    if not 1 <= coupler <= M:
        err_console.print(f"[bold red]error:[/] --coupler {coupler} out of range; allowed: 1..{M}", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    out = output or store.with_name(store.name.removesuffix(".zarr") + "_report")
    paths = fig.make(ds, out, coupler=coupler, t_max=t_max, report=True, store_name=store.name)
    for p in paths:
        console.print(f"wrote {p}", highlight=False)
