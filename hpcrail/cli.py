"""Command-line interface: ``hpcrail run | validate | info`` (+ commands registered by features).

Every command works for every model kind through its descriptor (:mod:`hpcrail.kinds`).

Configuration problems print one line per problem (file, field, value, allowed) and exit with code 2,
never a traceback.  Feature modules add their commands by importing :data:`app` and decorating
functions (see ``_COMMAND_MODULES``).
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hpcrail.config import ConfigError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="hpcrail: railway train dynamics at HPC scale (LTD kernels, sweeps on dask, zarr results).")
console = Console(stderr=False)
err_console = Console(stderr=True)
#: width of the tables when standard output is a file or a pipe (a Slurm job's log, ``| tee``): rich falls back
#: to 80 columns there, which folds every cell of the metric and running-safety tables over several lines; a
#: terminal keeps its own width and ``COLUMNS`` wins over both
LOG_WIDTH = 160
#: file formats of written figures (``--format``)
FIGURE_FORMATS = ("png", "pdf", "svg")


def _plain_flags_in_help() -> None:
    """Help without a type after plain flags (typer >= 0.20 prints ``<bool>`` after ``--plot``, which takes no
    value) and ``<TEXT>...`` for repeatable options instead of ``<list[str]>``.  Changes only what the help
    shows; typer versions without these methods are left alone."""
    try:
        from typer.core import TyperOption
    except ImportError:   # pragma: no cover - another typer layout
        return
    original = getattr(TyperOption, "display_type_rich", None)
    if original is None or getattr(original, "_hpcrail", False):
        return

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and not getattr(self, "count", False) and self.metavar is None:
            return ""
        text = original(self, ctx)
        if getattr(self, "multiple", False) and isinstance(text, str) and text.startswith("<list["):
            text = "<" + text[6:-2] + ">..."
        return text

    display_type_rich._hpcrail = True
    TyperOption.display_type_rich = display_type_rich


_plain_flags_in_help()

#: modules that register further commands on ``app`` (one line per feature)
_COMMAND_MODULES: list[str] = ["hpcrail.commands.sweep", "hpcrail.commands.plot", "hpcrail.commands.friction",
                                 "hpcrail.commands.lcf",
                                 "hpcrail.commands.modes", "hpcrail.commands.integrators", "hpcrail.commands.slurm",
                                 "hpcrail.commands.contact", "hpcrail.commands.examples",
                                 "hpcrail.commands.warmup", "hpcrail.commands.study"]

EXIT_CONFIG = 2
EXIT_FAILED_RUN = 3
#: the output could not be written (full disk, I/O error); nothing half-written is left
EXIT_OUTPUT = 4


def _version(value: bool) -> None:
    if value:
        from hpcrail._version import __version__
        from hpcrail.provenance import git_info

        commit, dirty = git_info()
        console.print(f"hpcrail {__version__}" + (f" (git {commit[:10]}{' dirty' if dirty else ''})"
                                                  if commit != "unknown" else ""), highlight=False)
        raise typer.Exit()


@app.callback()
def _main(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="print the hpcrail version and exit")):
    """hpcrail: railway train dynamics at HPC scale (LTD kernels, sweeps on dask, zarr results)."""
    if console._width is None and not os.environ.get("COLUMNS") and not console.is_terminal:
        console.width = LOG_WIDTH


def print_json(obj) -> None:
    """``obj`` as indented JSON on stdout (numpy scalars as numbers, NaN as null)."""
    import json
    import math

    import numpy as np

    def clean(o):
        if isinstance(o, dict):
            return {str(k): clean(v) for k, v in o.items()}
        if isinstance(o, (list, tuple)):
            return [clean(v) for v in o]
        if isinstance(o, np.generic):
            o = o.item()
        if isinstance(o, float) and not math.isfinite(o):
            return None
        if isinstance(o, Path):
            return str(o)
        return o

    typer.echo(json.dumps(clean(obj), indent=2, ensure_ascii=False))


def config_warnings(doc) -> None:
    """Print what validation found unusual but allowed (``doc.warnings``: a value far outside its field's usual
    range, e.g. metres typed into a millimetre field), one ``warning:`` line each on stderr."""
    for w in getattr(doc, "warnings", None) or ():
        err_console.print(f"[yellow]warning:[/] {escape(str(w))}", highlight=False, soft_wrap=True)


def config_error_exit(exc: ConfigError) -> None:
    """Print every configuration problem and exit with code 2."""
    err_console.print(f"[bold red]error:[/] {len(exc.issues)} problem{'s' if len(exc.issues) != 1 else ''} "
                      "in the configuration", highlight=False)
    for issue in exc.issues:
        err_console.print(f"  - {issue}", highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(EXIT_CONFIG)


def build_error_exit(exc: Exception, scenario) -> None:
    """An exception other than a configuration problem raised while a validated scenario's model was built
    or run (an input the validation let through, or a defect): one line naming the scenario and the
    exception, exit code 3 (:data:`EXIT_FAILED_RUN`), never a traceback — unless ``HPCRAIL_TRACEBACK=1``,
    which re-raises it (to report a defect)."""
    if os.environ.get("HPCRAIL_TRACEBACK", "").strip() not in ("", "0"):
        raise exc
    text = " ".join(str(exc).split())
    if len(text) > 300:
        text = text[:297] + "..."
    err_console.print(f"error: {scenario}: the model could not be built or run: {type(exc).__name__}: {text} "
                      "(a value the validation let through; set HPCRAIL_TRACEBACK=1 to see where it failed)",
                      highlight=False, markup=False, soft_wrap=True)
    raise typer.Exit(EXIT_FAILED_RUN)


def _verdict_cell(v: str) -> str:
    return {"PASS": "[green]PASS[/]", "EXCEEDED": "[bold red]EXCEEDED[/]"}.get(v, v)


def print_metrics(ds) -> None:
    """The kind's summary outputs of a run dataset (display units) as a table — with the limit, the ratio to it
    and the verdict of every assessment quantity — then the worst elements (vehicles) against their limits."""
    from hpcrail import kinds
    from hpcrail.results.outputs import summary_rows
    from hpcrail.results.units import pretty_units
    from hpcrail.results.verdicts import assessment

    kind = kinds.get(ds.attrs.get("model", kinds.DEFAULT_KIND))
    rows = summary_rows(kind.outputs, ds, kind.summary, raw=True)
    checks = [assessment(x, a) for *_r, x, a in rows]
    limits = any(c is not None for c in checks)
    table = Table(title=f"{ds.attrs.get('scenario_name', '')}: {kind.summary_title}")
    table.add_column("metric", overflow="fold")
    table.add_column("value", justify="right", no_wrap=True)
    table.add_column("unit", no_wrap=True)
    if limits:
        table.add_column("limit", justify="right", no_wrap=True)
        table.add_column("ratio", justify="right", no_wrap=True)
        table.add_column("verdict", no_wrap=True)
    table.add_column("meaning", no_wrap=True, overflow="ellipsis")   # one line per metric at any width
    sources: dict = {}
    for (name, val, unit, label, _x, a), c in zip(rows, checks):
        if not limits:
            table.add_row(name, val, pretty_units(unit), label)
            continue
        if c is None:
            table.add_row(name, val, pretty_units(unit), "", "", "", label)
            continue
        lim = c["limit"] * float(a.get("display_scale", 1.0))
        if c["limit_source"]:
            sources.setdefault(c["limit_source"], []).append(name)
        table.add_row(name, val, pretty_units(unit), f"{lim:.4g}",
                      f"{c['ratio']:.3f}" if c["ratio"] == c["ratio"] else "nan", _verdict_cell(c["verdict"]), label)
    console.print(table)
    if sources:
        console.print("limits: " + "; ".join(f"{src} ({', '.join(n for n in names)})" for src, names in sources.items()),
                      highlight=False, soft_wrap=True, markup=False)
    print_checked_peaks(ds)
    print_worst_elements(ds)


def print_checked_peaks(ds) -> None:
    """The checked envelope peaks of a train run (:mod:`hpcrail.results.envelope_check`): per peak the coupler,
    its time, the run's force, where the reference started (the window's stored sample, 0 for the whole run),
    the reference's force and their relative difference against the warning threshold."""
    if "checked_peak_error" not in ds:
        return
    lim = float(ds["envelope_check_error"].attrs.get("limit", 0.01))
    ref = str(ds["envelope_check_reference"].values) if "envelope_check_reference" in ds else ""
    cpu = float(ds.attrs.get("envelope_check_cpu_s", float("nan")))
    t = Table(title=f"checked peaks: the run's largest draft and buff forces re-integrated with {ref} "
                    f"(check CPU {cpu:.3g} s)")
    for head in ("peak", "coupler", "time [s]", "run [kN]", "reference from [s]", "reference [kN]", "difference",
                 "verdict"):
        t.add_column(head, justify="left" if head in ("peak", "verdict") else "right")
    n = ds.sizes["checked_peak"]
    for j in range(n):
        c = int(ds["checked_peak_coupler"].values[j])
        kind = "draft" if j < n // 2 else "buff"
        if c <= 0:
            t.add_row(kind, "-", "-", "-", "-", "-", "-", "n/a")
            continue
        err = float(ds["checked_peak_error"].values[j])
        ok = "n/a" if err != err else ("PASS" if err <= lim else "EXCEEDED")
        t.add_row(kind, str(c), f"{float(ds['checked_peak_time'].values[j]):.2f}",
                  f"{1e-3 * float(ds['checked_peak_force'].values[j]):.1f}",
                  f"{float(ds['checked_peak_window'].values[j]):.0f}",
                  f"{1e-3 * float(ds['checked_peak_reference'].values[j]):.1f}",
                  f"{100 * err:.3f} %" if err == err else "-", _verdict_cell(ok))
    console.print(t)


def print_worst_elements(ds, k: int = 5) -> None:
    """For every element dimension with assessed quantities (the vehicles of an LTD run, the detailed vehicles
    of a mixed train): the ``k`` worst elements, each quantity's value and ratio to its limit, and a verdict."""
    from hpcrail.results.units import to_display
    from hpcrail.results.verdicts import element_assessment

    dims = [d for d in ds.dims if d not in ("time",)]
    for dim in dims:
        names, rows = element_assessment(ds, dim, k)
        if not rows:
            continue
        n_bad = int(sum(1 for r in element_assessment(ds, dim, ds.sizes[dim])[1] if r["verdict"] == "EXCEEDED"))
        names = [n for n in names if not n.endswith("worst_ratio")]
        t = Table(title=f"worst {dim.replace('_', ' ')}s against their limits: {n_bad} of {ds.sizes[dim]} exceed a "
                        "limit (cells: value, ratio to its limit)")
        t.add_column(dim.replace("_", " "))
        t.add_column("type", overflow="fold")
        for n in names:
            head = ds[n].attrs.get("long_name", n).removeprefix("max ").removeprefix("quasi-static ")
            t.add_column(head.replace(" / endurable compressive force", " / LCF").replace("coupler yaw / free swing",
                                                                                          "yaw / swing"),
                         justify="right", overflow="fold")
        t.add_column("worst", justify="right")
        t.add_column("verdict")
        for r in rows:
            cells = []
            for n in names:
                v, q = r["values"][n]
                dv = float(to_display(v, ds[n].attrs)) if v == v else float("nan")
                cells.append(f"{dv:.3g}, {q:.2f}" if q == q else "-")
            t.add_row(str(r["element"]), r["type"], *cells, f"{r['worst_ratio']:.2f}", _verdict_cell(r["verdict"]))
        console.print(t)


def check_figure_format(fmt: str) -> None:
    """Exit 2 naming the allowed formats unless ``fmt`` is one of :data:`FIGURE_FORMATS`."""
    if fmt.lower() not in FIGURE_FORMATS:
        err_console.print(f"[bold red]error:[/] --format {fmt!r} not supported; allowed: {', '.join(FIGURE_FORMATS)}",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)


class figure_notes:
    """Print each :class:`~hpcrail.results.plotting.FigureNote` warning raised while drawing as one ``note:``
    line on stderr (what a figure left out and how to get it)."""

    def __enter__(self):
        import warnings

        self._ctx = warnings.catch_warnings(record=True)
        self._caught = self._ctx.__enter__()
        warnings.simplefilter("always")
        return self

    def __exit__(self, *exc):
        import warnings

        from hpcrail.results.plotting import FigureNote

        self._ctx.__exit__(*exc)
        seen = set()
        for w in self._caught:
            text = str(w.message)
            if not issubclass(w.category, FigureNote):
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
            elif text not in seen:
                seen.add(text)
                err_console.print(f"note: {text}", highlight=False, markup=False, soft_wrap=True)
        return False


def status_line(ds) -> str:
    """``status: completed; 150000 steps, ...`` (the message only when it says more than the status)."""
    status, msg = str(ds["status"].values), str(ds["message"].values)
    why = f" — {msg}" if msg and msg != status else ""
    return (f"status: {status}{why}; {int(ds['nsteps']):,} steps, {int(ds['nfev']):,} RHS evaluations, "
            f"wall {float(ds['wall_time']):.2f} s (+ {float(ds['compile_time']):.2f} s compile/load)")


def run_json(ds, out: Path, figures: list) -> dict:
    """What ``hpcrail run --json`` prints: status, statistics and every metric (SI and display units)."""
    from hpcrail.results.units import clip_magnitude, to_display

    from hpcrail.results.verdicts import assessment, element_assessment

    metrics = {}
    for name, v in ds.data_vars.items():
        if v.attrs.get("role") != "metric":
            continue
        a = v.attrs
        val = v.values.item()
        entry = {"value": val, "units": a.get("units", ""), "long_name": a.get("long_name", name)}
        if a.get("display_units") and a.get("display_units") != a.get("units") and v.dtype.kind == "f":
            entry.update(display_value=clip_magnitude(float(to_display(val, a))), display_units=a["display_units"])
        c = assessment(val, a)
        if c is not None:
            entry.update(c)
        metrics[name] = entry
    worst = {}
    for dim in ds.dims:
        if dim == "time":
            continue
        _names, rows = element_assessment(ds, dim, 10)
        if rows:
            worst[dim] = rows
    return {"store": str(out), "scenario": ds.attrs.get("scenario_name", ""), "model": ds.attrs.get("model", ""),
            "status": str(ds["status"].values), "message": str(ds["message"].values),
            "nsteps": int(ds["nsteps"]), "nfev": int(ds["nfev"]), "wall_time_s": float(ds["wall_time"]),
            "compile_time_s": float(ds["compile_time"]), "metrics": metrics, "worst_elements": worst,
            "warnings": [w for w in ds.attrs.get("warnings", "").splitlines() if w],
            "figures": [str(p) for p in figures]}


def simulate_to_store(sc, out: Path, *, overwrite: bool = False, quiet: bool = False, say=None, attrs: dict | None = None,
                      doc=None, source=None):
    """Run the validated scenario ``sc`` (progress on stderr unless ``quiet``, the compile notice through ``say``),
    add ``attrs`` to its dataset and write it to the run store ``out``; returns the dataset (None on MPI ranks
    other than 0).  Exits 2 (the store exists, or is not a run store; a configuration problem found while building
    the model, located in ``doc`` when given), 3 (another exception while building or running: one line naming
    ``source``), 4 (the store cannot be written) or 130/143 on SIGINT/SIGTERM, saying what was kept — ``hpcrail
    run`` and ``hpcrail rerun``."""
    from hpcrail import interrupt
    from hpcrail._numba import compile_notice
    from hpcrail.config import canonical_yaml
    from hpcrail.results.store import OutputPathError, StoreExistsError, StoreWriteError, write_dataset
    from hpcrail.simulate import progress_printer, run_scenario

    cb, close = (None, lambda: None) if quiet else progress_printer(sc.name)
    say = say or (lambda text: None)

    def progress(t, t_end, stats):   # also a safe point for Ctrl-C / SIGTERM
        interrupt.check()
        if cb is not None:
            cb(t, t_end, stats)

    with interrupt.handling_interrupts():
        try:
            try:
                with compile_notice(say):
                    ds = run_scenario(sc, progress=progress, config_yaml=canonical_yaml(sc))
            finally:
                close()
            interrupt.check()
            if ds is None:
                return None
            ds.attrs.update(attrs or {})
            write_dataset(ds, out, overwrite=overwrite)
        except (StoreExistsError, OutputPathError, StoreWriteError) as exc:
            err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(EXIT_CONFIG if not isinstance(exc, StoreWriteError) else EXIT_OUTPUT)
        except BaseException as exc:
            if isinstance(exc, interrupt.Interrupted) or (interrupt.requested() and not isinstance(exc, typer.Exit)):
                kept = "the existing store is unchanged" if out.exists() else "nothing was written"
                err_console.print(f"interrupted ({interrupt.requested() or 'SIGINT'}): {kept}; run the same command "
                                  "again to start over", highlight=False, markup=False, soft_wrap=True)
                interrupt.leave_command(interrupt.EXIT_INTERRUPTED)   # the CLI process: no finalisers
                raise typer.Exit(interrupt.EXIT_INTERRUPTED)
            if isinstance(exc, ConfigError):   # found while building the model: located like a validation error
                from hpcrail.kinds import locate_issues

                config_error_exit(locate_issues(exc, doc) if doc is not None else exc)
            if isinstance(exc, Exception) and not isinstance(exc, typer.Exit):
                build_error_exit(exc, source if source is not None else sc.name)
            raise
    return ds


def _stated(tree, path: tuple) -> bool:
    """Whether the scenario document sets the field at ``path`` itself (not its default)."""
    node = tree
    for k in path:
        if not isinstance(node, dict) or k not in node:
            return False
        node = node[k]
    return True


@app.command()
def run(scenario: Path = typer.Argument(..., exists=False, help="scenario YAML"),
        output: Optional[Path] = typer.Option(None, "-o", "--output", help="zarr store (default: NAME.zarr)"),
        set_: List[str] = typer.Option([], "--set", help="override a field: dotted.path=value (repeatable)"),
        overwrite: bool = typer.Option(False, "--overwrite", help="replace an existing store"),
        quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress output"),
        plot: bool = typer.Option(False, "--plot", help="also write the run figures (hpcrail plot) to NAME_figures/"),
        fig_format: str = typer.Option("png", "--format", metavar="png|pdf|svg",
                                       help="--plot: file format of the figures"),
        dpi: Optional[float] = typer.Option(None, "--dpi", min=1, max=2400, help="--plot: resolution of raster "
                                            "figures [dots per inch] (default 120)"),
        json_: bool = typer.Option(False, "--json", help="print status, statistics and metrics as JSON (no "
                                   "progress or tables)"),
        partition: Optional[str] = typer.Option(
            None, "--partition", help="hidden-vehicle blocks: off | threads | mpi (under mpiexec/srun; rank 0 "
            "writes) | auto; same as --set partition.backend=..."),
        check: Optional[bool] = typer.Option(None, "--check/--no-check", help="train kinds: re-integrate the "
                                             "largest in-train force peaks with a reference setting and report "
                                             "their errors (default: on, unless the file sets "
                                             "output.envelope_check.enabled)")):
    """Run one scenario and write its result dataset to a zarr store."""
    from hpcrail.kinds import load_scenario
    from hpcrail.results.store import OutputPathError, StoreExistsError, check_output

    if partition is not None:
        set_ = [*set_, f"partition.backend={partition}"]
    check_figure_format(fig_format)
    try:
        sc, doc = load_scenario(scenario, set_)
        if hasattr(getattr(sc, "output", None), "envelope_check"):
            stated = _stated(doc.tree, ("output", "envelope_check", "enabled")) or any(
                a.split("=", 1)[0].strip() == "output.envelope_check.enabled" for a in set_)
            want = check if check is not None else (None if stated else True)
            if want is not None and want != sc.output.envelope_check.enabled:
                sc, doc = load_scenario(scenario, [*set_, f"output.envelope_check.enabled={str(want).lower()}"])
    except ConfigError as exc:
        config_error_exit(exc)
    root = _mpi_rank(sc) == 0
    if root and not json_:
        config_warnings(doc)
    quiet = quiet or json_ or not root
    out = output or Path(f"{sc.name}.zarr")
    if root:   # before simulating: never compute a result that cannot be written
        try:
            check_output(out, overwrite)
        except (StoreExistsError, OutputPathError) as exc:
            err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
            raise typer.Exit(EXIT_CONFIG)
    say = (lambda text: None) if json_ or not root else (
        lambda text: err_console.print(text, highlight=False, soft_wrap=True))
    ds = simulate_to_store(sc, out, overwrite=overwrite, quiet=quiet, say=say, doc=doc, source=scenario)
    if ds is None:  # an MPI rank other than 0: rank 0 writes the dataset
        return
    status = str(ds["status"].values)
    figures: list = []
    if plot:
        from hpcrail.analysis.figures import run_figures

        try:
            with figure_notes():
                figures = run_figures(ds, out.with_name(out.name.removesuffix(".zarr") + "_figures"),
                                      format=fig_format, dpi=dpi)
        except ValueError as exc:
            err_console.print(f"[yellow]warning:[/] no figures: {exc}", highlight=False, soft_wrap=True)
    if json_:
        print_json(run_json(ds, out, figures))
    else:
        if not quiet:
            print_metrics(ds)
        console.print(status_line(ds), highlight=False, soft_wrap=True)
        if ds.attrs.get("warnings"):
            for w in ds.attrs["warnings"].splitlines():
                err_console.print(f"[yellow]warning:[/] {w}", highlight=False)
        console.print(f"wrote {out}", highlight=False)
        if figures:
            console.print(f"wrote {len(figures)} figures to {figures[0].parent}/: "
                          + ", ".join(p.name for p in figures), highlight=False, soft_wrap=True)
    if status not in ("completed", "event_stop"):
        raise typer.Exit(EXIT_FAILED_RUN)


def _mpi_rank(sc) -> int:
    """This process's MPI rank for ``partition.backend: mpi`` (0 otherwise); exits with code 2 when
    mpi4py is missing."""
    from hpcrail.partition.backend import on_mpi

    if not on_mpi(getattr(sc, "partition", None)):
        return 0
    try:
        from hpcrail.partition.mpi import world
    except RuntimeError as exc:
        err_console.print(f"[bold red]error:[/] partition.backend: mpi: {exc}", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    return world().rank


@app.command()
def validate(scenario: Path = typer.Argument(..., help="scenario YAML"),
             set_: List[str] = typer.Option([], "--set", help="override a field: dotted.path=value"),
             show: bool = typer.Option(False, "--show", help="print the canonical (fully resolved) config on "
                                       "stdout (the 'valid' line goes to stderr: --show > resolved.yaml)")):
    """Check a scenario file; print its canonical form and hash."""
    from hpcrail.config import canonical_yaml, config_hash
    from hpcrail.kinds import load_scenario

    try:
        sc, doc = load_scenario(scenario, set_)
    except ConfigError as exc:
        config_error_exit(exc)
    config_warnings(doc)
    if show:   # the YAML alone on stdout (``validate --show > resolved.yaml`` loads again)
        typer.echo(canonical_yaml(sc), nl=False)
    n = len(sc.vehicle_type_names()) if hasattr(sc, "vehicle_type_names") else None
    extra = f", {n} vehicles" if n else ""
    (err_console if show else console).print(f"{scenario}: valid ({getattr(sc, 'model', 'ltd')} scenario "
                                             f"{sc.name!r}{extra}, hash {config_hash(sc)})", highlight=False,
                                             markup=False, soft_wrap=True)


@app.command()
def info():
    """Versions, cores, numba threading layer, cache directory and registered integrators."""
    import platform

    from hpcrail import _numba  # noqa: F401  (numba cache directory and threading set-up)
    import numba

    from hpcrail import kinds
    from hpcrail._version import __version__
    from hpcrail.integrators import registry
    from hpcrail.provenance import git_info

    commit, dirty = git_info()
    try:
        layer = numba.threading_layer()
    except ValueError:
        @numba.njit(parallel=True)
        def _touch(n):
            s = 0.0
            for i in numba.prange(n):
                s += i
            return s

        _touch(10)
        layer = numba.threading_layer()
    t = Table(title="hpcrail", show_header=False)
    rows = [("hpcrail", f"{__version__} (git {commit[:10]}{' dirty' if dirty else ''})"),
            ("python", platform.python_version()), ("platform", platform.platform()),
            ("cores", str(os.cpu_count())), ("numba", numba.__version__),
            ("numba threads", str(numba.config.NUMBA_NUM_THREADS)), ("numba threading layer", layer),
            ("numba cache", str(numba.config.CACHE_DIR)),
            ("scenario models", ", ".join(kinds.names())),
            ("integrators", ", ".join(registry.method_names(include_aliases=False)))]
    for mod in ("numpy", "scipy", "xarray", "zarr", "dask", "distributed", "pydantic"):
        try:
            rows.append((mod, importlib.import_module(mod).__version__))
        except ImportError:
            rows.append((mod, "not installed"))
    for k, v in rows:
        t.add_row(k, v)
    console.print(t)


def _load_command_modules() -> None:
    for mod in _COMMAND_MODULES:
        importlib.import_module(mod)


def main() -> None:
    """The command line (the console script enters through :func:`hpcrail.__main__.main`, which installs the
    signal handlers before this module's imports; installing them again here is a no-op)."""
    from hpcrail.interrupt import install_entry_handlers

    install_entry_handlers()
    _load_command_modules()
    app()


if __name__ == "__main__":
    main()
