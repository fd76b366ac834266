"""``hpcrail plot RUN.zarr``: the run figures of a result store, as its model kind declares them."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from hpcrail.cli import EXIT_CONFIG, app, console, err_console


def parse_select(items: list[str]) -> dict:
    """``["coupler=12,61", "body=car_body"]`` -> ``{"coupler": [12, 61], "body": ["car_body"]}`` (integers
    where they parse).  Raises ``ValueError`` naming the bad item."""
    out: dict = {}
    for item in items:
        dim, sep, labels = item.partition("=")
        if not sep or not dim.strip() or not labels.strip():
            raise ValueError(f"--select {item!r}: expected DIMENSION=LABEL[,LABEL...], e.g. coupler=12,61")
        vals = []
        for lab in labels.split(","):
            lab = lab.strip()
            try:
                vals.append(int(lab))
            except ValueError:
                vals.append(lab)
        out.setdefault(dim.strip(), []).extend(vals)
    return out


def open_store(store: Path):
    """The dataset of a result store, or exit 2 with a clear message."""
    import xarray as xr

    if not store.exists():
        err_console.print(f"[bold red]error:[/] {store} does not exist", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    try:
        return xr.open_zarr(store, consolidated=True)
    except Exception as exc:  # noqa: BLE001 - any unreadable store gets one clear line
        err_console.print(f"[bold red]error:[/] {store} is not a readable zarr store ({type(exc).__name__})",
                          highlight=False)
        raise typer.Exit(EXIT_CONFIG)


def write_run_figures(ds, out: Path, figures: list[str] | None = None, **options) -> list[Path]:
    """Run figures of ``ds`` into ``out``; a bad figure name or option exits with code 2."""
    from hpcrail.analysis.figures import run_figures

    try:
        return run_figures(ds, out, figures or None, **options)
    except ValueError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)


@app.command()
def plot(store: Path = typer.Argument(..., help="result store (zarr) of hpcrail run"),
         output: Optional[Path] = typer.Option(None, "-o", "--output", help="directory of the PNG figures "
                                               "(default: STORE_figures/)"),
         figure: List[str] = typer.Option([], "--figure", "-f", help="only this figure (repeatable; --list shows "
                                          "them)"),
         select: List[str] = typer.Option([], "--select", help="elements to draw: DIMENSION=LABEL[,LABEL...], e.g. "
                                          "coupler=12,61 or floor_point=centre (repeatable)"),
         x: str = typer.Option("time", "--x", help="horizontal axis of time series: time | distance"),
         t_max: Optional[float] = typer.Option(None, "--t-max", help="end of the time axis [s]"),
         scenario: Optional[int] = typer.Option(None, "--scenario", help="sweep store: plot this scenario "
                                                "(what the sweep stored of it, e.g. its envelopes)"),
         list_: bool = typer.Option(False, "--list", help="list the figures of the store's model kind and exit")):
    """Figures of one run: the run figures its model kind declares (trains: in-train force envelope along
    the train, force against time at the peak couplers and next to each locomotive, time x coupler heatmap;
    vertical vehicles: body accelerations and ride comfort)."""
    from hpcrail.analysis.figures import available, kind_of

    ds = open_store(store)
    if "scenario" in ds.dims:
        if scenario is None:
            err_console.print(f"[bold red]error:[/] {store} is a sweep store: `hpcrail report {store}` draws the "
                              "study, --scenario K one of its scenarios", highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_CONFIG)
        n = ds.sizes["scenario"]
        if not 0 <= scenario < n:
            err_console.print(f"[bold red]error:[/] --scenario {scenario} out of range; allowed: 0..{n - 1}",
                              highlight=False)
            raise typer.Exit(EXIT_CONFIG)
        name = ds.attrs.get("sweep_name", store.stem)
        ds = ds.isel(scenario=scenario)
        ds.attrs["scenario_name"] = f"{name} scenario {scenario}"
    elif scenario is not None:
        err_console.print("[bold red]error:[/] --scenario applies to sweep stores", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    try:
        kind = kind_of(ds)
        have = {f.name for f in available(ds)}
    except ValueError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    if list_:
        for f in kind.run_figures:
            mark = "" if f.name in have else "  (needs data this store does not have)"
            console.print(f"{f.name:24s} {f.description}{mark}", highlight=False, markup=False, soft_wrap=True)
        return
    try:
        options = {"select": parse_select(select), "x": x, "t_max": t_max}
    except ValueError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    out = output or store.with_name(store.name.removesuffix(".zarr") + "_figures")
    files = write_run_figures(ds, out, figure, **options)
    console.print(f"wrote {len(files)} figure{'s' if len(files) != 1 else ''} to {out}/: "
                  + ", ".join(p.name for p in files), highlight=False, soft_wrap=True)
