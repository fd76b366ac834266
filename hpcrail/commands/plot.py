"""``hpcrail plot RUN.zarr``: the run figures of a result store, as its model kind declares them."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from hpcrail.cli import EXIT_CONFIG, app, check_figure_format, console, err_console, figure_notes


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
    """Run figures of ``ds`` into ``out``; a bad figure name or option exits with code 2; what a figure left
    out (a sweep kept fewer series) is printed as ``note:`` lines."""
    from hpcrail.analysis.figures import run_figures

    try:
        with figure_notes():
            return run_figures(ds, out, figures or None, **options)
    except ValueError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)


def variant_name(select: dict, x: str, t_max: float | None, scenario: int | None) -> str:
    """The sub-folder of the default figure folder for figures drawn with options (``coupler-1-5_x-distance``,
    ``scenario-11``): they never overwrite the figures of ``hpcrail run --plot``; "" without options."""
    parts = [f"scenario-{scenario}"] if scenario is not None else []
    for dim, labels in select.items():
        parts.append("-".join([dim] + [str(v) for v in labels]))
    if x != "time":
        parts.append(f"x-{x}")
    if t_max is not None:
        parts.append(f"to-{t_max:g}s")
    return "_".join(parts).replace("/", "-").replace(" ", "-")


def member_dataset(ds, k: int, store: Path):
    """Scenario ``k`` of a sweep store as a run dataset: its kept variables, the scenario's name, and its
    configuration (the base scenario with the swept parameters' values, for the route and the limits).  A
    configuration that cannot be rebuilt (a store without ``base_config_yaml``, a parameter path that no longer
    fits) is reported on stderr and left out; nothing is raised."""
    import json

    import yaml

    from hpcrail.config.loading import set_path

    name = ds.attrs.get("sweep_name", store.stem)
    sub = ds.isel(scenario=k)
    sub.attrs["scenario_name"] = f"{name} scenario {k}"
    try:
        cfg = yaml.safe_load(ds.attrs.get("base_config_yaml", "")) or {}
        for p in json.loads(ds.attrs.get("parameters", "[]")):
            v = sub[p["name"]].values.item() if p["name"] in sub.variables else None
            if isinstance(v, str) and v.lower().endswith((".yaml", ".yml")):
                continue   # a component file: its content is not in the store (the base's stays)
            if v is not None:
                set_path(cfg, p["path"].split("."), v)
        sub.attrs["config_yaml"] = yaml.safe_dump(cfg, sort_keys=True)
    except (ValueError, KeyError, IndexError, TypeError, yaml.YAMLError) as exc:
        # the figures still draw, without what needs the configuration: say so rather than drop it silently
        err_console.print(f"note: {store}: the configuration of scenario {k} could not be rebuilt from the store "
                          f"({type(exc).__name__}: {exc}); its figures go without the route and the limits",
                          markup=False, highlight=False, soft_wrap=True)
    return sub


@app.command()
def plot(store: Path = typer.Argument(..., help="result store (zarr) of hpcrail run"),
         output: Optional[Path] = typer.Option(None, "-o", "--output", help="directory of the figures (default: "
                                               "STORE_figures/, a sub-folder named after --select/--x/--t-max/"
                                               "--scenario when given)"),
         figure: List[str] = typer.Option([], "--figure", "-f", help="only this figure (repeatable; --list shows "
                                          "them)"),
         select: List[str] = typer.Option([], "--select", help="elements to draw: DIMENSION=LABEL[,LABEL...], e.g. "
                                          "coupler=12,61 or floor_point=centre (repeatable)"),
         x: str = typer.Option("time", "--x", metavar="time|distance", help="horizontal axis of time series"),
         t_max: Optional[float] = typer.Option(None, "--t-max", help="end of the time axis [s]"),
         scenario: Optional[int] = typer.Option(None, "--scenario", help="sweep store: plot this scenario "
                                                "(what the sweep kept of it, e.g. its envelopes and series)"),
         fig_format: str = typer.Option("png", "--format", metavar="png|pdf|svg", help="file format"),
         dpi: Optional[float] = typer.Option(None, "--dpi", min=1, max=2400, help="resolution of raster figures "
                                             "[dots per inch] (default 120)"),
         list_: bool = typer.Option(False, "--list", help="list the figures of the store's model kind and exit")):
    """Figures of one run: the run figures its model kind declares (trains: in-train force envelope along
    the train, force against time at the peak couplers and next to each locomotive, time x coupler heatmap;
    vertical vehicles: body accelerations and ride comfort)."""
    from hpcrail.analysis.figures import available, kind_of

    check_figure_format(fig_format)
    if x not in ("time", "distance"):
        err_console.print(f"[bold red]error:[/] --x {x!r}: allowed: time, distance", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
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
        ds = member_dataset(ds, scenario, store)
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
    out = output
    if out is None:
        out = store.with_name(store.name.removesuffix(".zarr") + "_figures")
        variant = variant_name(options["select"], x, t_max, scenario)
        if variant:
            out = out / variant
    files = write_run_figures(ds, out, figure, format=fig_format, dpi=dpi, **options)
    console.print(f"wrote {len(files)} figure{'s' if len(files) != 1 else ''} to {out}/: "
                  + ", ".join(p.name for p in files), highlight=False, soft_wrap=True)
