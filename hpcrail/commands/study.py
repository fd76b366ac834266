"""``hpcrail scenario | rerun | export``: drill into a study (the full scenario of one member, a re-run of it
with every output) and export any result store to CSV, netCDF or MATLAB."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from hpcrail.cli import EXIT_CONFIG, app, console, err_console


def _member_or_exit(store: Path, which: str):
    from hpcrail.sweep.members import MemberError, member

    if not store.exists():
        err_console.print(f"error: {store} does not exist", highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    try:
        return member(store, which)
    except MemberError as exc:
        err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)


@app.command()
def scenario(store: Path = typer.Argument(..., help="study store (zarr) of hpcrail sweep"),
             which: str = typer.Argument(..., metavar="ID", help="scenario id (or a unique prefix) or index")):
    """Print the full resolved scenario (YAML) of one member of a study, exactly as the sweep ran it.

    The output is a scenario file: `hpcrail scenario STUDY.zarr ID > one.yaml && hpcrail run one.yaml`."""
    from hpcrail.sweep.members import member_yaml

    m = _member_or_exit(store, which)
    typer.echo(member_yaml(m), nl=False)


@app.command()
def rerun(store: Path = typer.Argument(..., help="study store (zarr) of hpcrail sweep"),
          which: str = typer.Argument(..., metavar="ID", help="scenario id (or a unique prefix) or index"),
          output: Optional[Path] = typer.Option(None, "-o", "--output", help="run store (default: "
                                                "STUDY_<index>.zarr)"),
          overwrite: bool = typer.Option(False, "--overwrite", help="replace an existing run store"),
          quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress output")):
    """Run one member of a study again with every output of its kind (all series at the scenario's own
    sampling), into a run store: what `hpcrail plot` and `hpcrail report` draw in full."""
    from hpcrail.cli import EXIT_FAILED_RUN, print_metrics, simulate_to_store, status_line
    from hpcrail.results.store import OutputPathError, StoreExistsError, check_output

    m = _member_or_exit(store, which)
    out = output or store.with_name(f"{store.name.removesuffix('.zarr')}_{m.index}.zarr")
    try:
        check_output(out, overwrite)
    except (StoreExistsError, OutputPathError) as exc:
        err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    sc = m.scenario
    vals = ", ".join(f"{k}={v}" for k, v in m.values.items())
    err_console.print(f"re-running scenario {m.index} ({m.id}; {vals}) of {store} with every output -> {out}",
                      highlight=False, markup=False, soft_wrap=True)
    say = (lambda text: None) if quiet else (lambda text: err_console.print(text, highlight=False, soft_wrap=True))
    ds = simulate_to_store(sc, out, overwrite=overwrite, quiet=quiet, say=say, source=f"{store} scenario {m.index}",
                           attrs={"study_store": str(store.resolve()), "study_scenario": int(m.index),
                                  "study_scenario_id": m.id})
    if not quiet:
        print_metrics(ds)
    console.print(status_line(ds), highlight=False, soft_wrap=True)
    if ds.attrs.get("config_hash") and ds.attrs["config_hash"] != m.id:   # never expected: say it loudly
        err_console.print(f"warning: the re-run hashes to {ds.attrs['config_hash']}, the study's scenario to {m.id}",
                          highlight=False, markup=False)
    console.print(f"wrote {out} (`hpcrail plot {out}` draws it)", highlight=False, soft_wrap=True)
    if str(ds["status"].values) not in ("completed", "event_stop"):
        raise typer.Exit(EXIT_FAILED_RUN)


@app.command()
def export(store: Path = typer.Argument(..., help="run or study store (zarr)"),
           to: str = typer.Option(..., "--to", help="csv | netcdf | mat"),
           output: Optional[Path] = typer.Option(None, "-o", "--output", help="CSV directory, or .nc/.mat file "
                                                 "(default: STORE_csv/, STORE.nc, STORE.mat)"),
           select_: List[str] = typer.Option([], "--select", help="NAME=LABEL[,LABEL...] or NAME=FIRST:LAST "
                                             "(inclusive) of a dimension or a swept parameter, e.g. coupler=1:20, "
                                             "slack_mm=0,10 (repeatable)"),
           var: List[str] = typer.Option([], "--var", help="only these variables (repeatable)")):
    """Export a run or study store to CSV (pandas; one table per set of dimensions, units in the headers:
    `max_draft_force [N]`), netCDF-4 (xarray; CF attributes) or MATLAB (scipy.io.savemat; structs units,
    long_name, dims, attributes)."""
    import xarray as xr

    from hpcrail.analysis.export import FORMATS, default_output, export as write, parse_selection

    if to not in FORMATS:
        err_console.print(f"error: --to {to!r}: allowed: {', '.join(FORMATS)}", highlight=False, markup=False)
        raise typer.Exit(EXIT_CONFIG)
    if not store.exists():
        err_console.print(f"error: {store} does not exist", highlight=False, markup=False)
        raise typer.Exit(EXIT_CONFIG)
    try:
        ds = xr.open_zarr(store, consolidated=True)
    except Exception as exc:  # noqa: BLE001
        err_console.print(f"error: {store} is not a readable zarr store ({type(exc).__name__})", highlight=False,
                          markup=False)
        raise typer.Exit(EXIT_CONFIG)
    out = output or default_output(store, to)
    try:
        files = write(ds, to, out, parse_selection(select_), var or None)
    except ValueError as exc:
        err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    except OSError as exc:
        from hpcrail.cli import EXIT_OUTPUT

        err_console.print(f"error: cannot write {out}: {exc.strerror or exc}", highlight=False, markup=False)
        raise typer.Exit(EXIT_OUTPUT)
    console.print(f"wrote {len(files)} file{'s' if len(files) != 1 else ''}: " + ", ".join(str(p) for p in files),
                  highlight=False, soft_wrap=True)
