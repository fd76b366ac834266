"""``hpcrail sweep | status | report``: run a study on dask into one resumable zarr store, inspect
it, plot it."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from hpcrail.cli import EXIT_CONFIG, app, config_error_exit, console, err_console
from hpcrail.config import ConfigError

EXIT_INCOMPLETE = 1
#: terminal width from which the report's summary table holds the "max at" column
SUMMARY_WIDTH = 130


@app.command()
def sweep(spec: Path = typer.Argument(..., help="sweep spec YAML"),
          output: Optional[Path] = typer.Option(None, "-o", "--output", help="study store (default: NAME.zarr)"),
          set_: List[str] = typer.Option([], "--set", help="override a field of the base scenario: dotted.path=value"),
          scheduler: Optional[str] = typer.Option(None, "--scheduler", help="join the dask scheduler at ADDRESS"),
          scheduler_file: Optional[Path] = typer.Option(None, "--scheduler-file",
                                                         help="join the dask scheduler described in FILE"),
          cluster: str = typer.Option("local", "--cluster", metavar="local|slurm|mpi",
                                      help="cluster to start when none is joined: local | "
                                      "slurm (dask workers as Slurm jobs, site settings ~/.config/hpcrail/slurm.yaml)"
                                      " | mpi (under mpiexec/srun -n N+2: rank 0 scheduler, rank 1 this driver, N "
                                      "worker ranks; dask-mpi)"),
          jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="slurm: worker jobs kept running"),
          cores: Optional[int] = typer.Option(None, "--cores", min=1, help="slurm: cores per worker job"),
          memory: Optional[str] = typer.Option(None, "--memory", help="slurm: memory per worker job, e.g. 16GB"),
          walltime: Optional[str] = typer.Option(None, "--walltime", help="slurm: walltime per job, HH:MM:SS"),
          slurm_partition: Optional[str] = typer.Option(None, "--slurm-partition", help="slurm: partition (queue) of "
                                                        "the worker jobs (run --partition means hidden-vehicle "
                                                        "blocks)"),
          account: Optional[str] = typer.Option(None, "--account", help="slurm: account charged"),
          adaptive: Optional[str] = typer.Option(None, "--adaptive", help="slurm: MIN:MAX worker jobs scaled "
                                                 "with the pending tasks (instead of --jobs)"),
          lifetime: Optional[str] = typer.Option(None, "--lifetime", help="slurm: worker lifetime (default: walltime "
                                                 "minus a margin): workers end cleanly and new jobs take over"),
          lifetime_stagger: Optional[str] = typer.Option(None, "--lifetime-stagger",
                                                         help="slurm: random spread of the lifetimes"),
          workers: Optional[int] = typer.Option(None, "--workers", min=1,
                                                help="worker processes of the local cluster (default: all cores)"),
          threads: int = typer.Option(1, "--threads", min=1, help="numba threads per task (prange over scenarios)"),
          batch_size: Optional[int] = typer.Option(None, "--batch-size", min=1,
                                                   help="scenarios per task (default: the spec's, else automatic)"),
          retry_failed: bool = typer.Option(False, "--retry-failed", help="re-run scenarios that failed"),
          new: bool = typer.Option(False, "--new", help="discard an existing store of another study and start again"),
          inline: bool = typer.Option(False, "--inline", help="run the batches in this process, without dask"),
          max_in_flight: Optional[int] = typer.Option(None, "--max-in-flight", min=1,
                                                      help="tasks submitted at once (default: 2 per worker thread)"),
          retries: int = typer.Option(2, "--retries", min=0, help="retries of a failed task"),
          dashboard_address: str = typer.Option("127.0.0.1:8787", "--dashboard-address",
                                                help="dashboard of the local or Slurm cluster: loopback only by "
                                                "default (reach it through an SSH tunnel); '127.0.0.1:0' = any free "
                                                "port, ':8787' = every interface (unauthenticated!)"),
          quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar")):
    """Run (or resume) a sweep: every scenario of SPEC on dask into one zarr store.

    Re-running the same command skips the scenarios already done; failed ones are re-run only with
    --retry-failed; a store made from another spec is refused unless --new.
    """
    from hpcrail import interrupt
    from hpcrail.sweep.cluster import SlurmOptions, parse_adaptive
    from hpcrail.sweep.runner import SweepInterrupted, SweepLockedError, SweepMismatchError, run_sweep

    slurm = None
    try:
        if cluster == "slurm":
            if jobs is not None and adaptive is not None:
                raise ValueError("give either --jobs N or --adaptive MIN:MAX, not both")
            slurm = SlurmOptions(jobs=jobs, adaptive=parse_adaptive(adaptive) if adaptive else None, cores=cores,
                                 memory=memory, walltime=walltime, partition=slurm_partition, account=account,
                                 lifetime=lifetime, lifetime_stagger=lifetime_stagger)
        elif any(v is not None for v in (jobs, cores, memory, walltime, slurm_partition, account, adaptive, lifetime,
                                         lifetime_stagger)):
            raise ValueError("--jobs/--cores/--memory/--walltime/--slurm-partition/--account/--adaptive/--lifetime "
                             "belong to --cluster slurm")
        with interrupt.handling_interrupts():
            res = run_sweep(spec, output, cli_set=set_, scheduler=scheduler,
                            scheduler_file=str(scheduler_file) if scheduler_file else None, cluster=cluster,
                            workers=workers, threads=threads, batch_size=batch_size, retry_failed=retry_failed,
                            new=new, inline=inline, max_in_flight=max_in_flight, retries=retries,
                            dashboard_address=dashboard_address, progress=not quiet, slurm=slurm,
                            say=lambda s: console.print(s, highlight=False, markup=False, soft_wrap=True))
    except ConfigError as exc:
        config_error_exit(exc)
    except (SweepMismatchError, SweepLockedError) as exc:
        err_console.print(f"error: {exc}", highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    except KeyboardInterrupt as exc:   # SIGINT / SIGTERM: the driver stopped its cluster and tidied the store
        import gc

        sig = getattr(exc, "signal", None) or "SIGINT"
        exc.__context__ = exc.__cause__ = None   # drop the frames holding the cluster: its queues are freed
        exc.__traceback__ = None                  # now, not reported as leaked semaphores at exit
        gc.collect()
        if isinstance(exc, SweepInterrupted) and exc.store is not None and exc.counts is not None:
            c = exc.counts
            err_console.print(f"interrupted ({sig}): {c['done']}/{c['total']} done, kept in {exc.store} — re-run the "
                              "same command to resume", highlight=False, markup=False, soft_wrap=True)
        else:
            err_console.print(f"interrupted ({sig}) before any scenario was done: nothing kept", highlight=False,
                              markup=False, soft_wrap=True)
        raise typer.Exit(interrupt.EXIT_INTERRUPTED)
    except OSError as exc:   # a folder that cannot be written, a full disk, an I/O error
        from hpcrail.cli import EXIT_OUTPUT

        why = f"{exc.strerror} (errno {exc.errno})" if exc.strerror else str(exc)
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        err_console.print(f"error: cannot write the sweep store{where}: {why}; the batches written before are kept: "
                          "fix the cause and re-run the same command to resume", highlight=False, markup=False,
                          soft_wrap=True)
        raise typer.Exit(EXIT_OUTPUT)
    except ValueError as exc:  # bad cluster options
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    c = res.counts
    rate = res.ran / res.seconds if res.seconds > 0 else 0.0
    console.print(f"{res.store}: {c['done']}/{c['total']} done ({c['completed']} completed, {c['failed']} failed), "
                  f"{c['pending']} pending; ran {res.ran} scenarios in {res.seconds:.1f} s ({rate:.2f}/s)"
                  + (f" after {res.startup_seconds:.1f} s of cluster start-up and kernel loading"
                     if res.startup_seconds else ""),
                  highlight=False, soft_wrap=True)
    if c["failed"]:
        console.print(f"failures: {', '.join(f'{k} {v}' for k, v in c['by_status'].items() if k not in ('completed', 'event_stop'))}"
                      f" — see `hpcrail status {res.store}`", highlight=False, soft_wrap=True)
    from hpcrail.sweep.runlog import cluster_summary

    events = cluster_summary(res.cluster) if res.cluster else ""
    if events:
        err_console.print(f"[bold yellow]cluster:[/] {escape(events)}" + (
            "; every result written is kept (a batch counts as done only once written)" if not res.failed_tasks
            else ""), highlight=False, soft_wrap=True)
    if res.failed_tasks:
        err_console.print(f"[bold red]{len(res.failed_tasks)} tasks failed after their retries[/]; re-run the same "
                          "command to resume", highlight=False, soft_wrap=True)
    if c["pending"]:
        raise typer.Exit(EXIT_INCOMPLETE)
    console.print(f"next: hpcrail report {res.store}", highlight=False, soft_wrap=True)


def _state_or_exit(store: Path) -> dict:
    from hpcrail.sweep.store import read_state

    if not store.exists():
        err_console.print(f"[bold red]error:[/] {store} does not exist", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    try:
        return read_state(store)
    except ValueError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)


def status_json(store: Path, st: dict, messages: int) -> dict:
    """What ``hpcrail status --json`` prints."""
    import collections

    import numpy as np

    from hpcrail.sweep.store import SUCCESS, as_strings, counts, open_group

    c = counts(st)
    a = st["attrs"]
    from hpcrail.sweep.runlog import read_run_file

    run = read_run_file(store)
    out = {"store": str(store), "sweep_name": a.get("sweep_name", ""), **c, "design": a.get("design"),
           "batch_size": a.get("batch_size"), "created": a.get("created", ""), "last_run": a.get("last_run"),
           "run": run, "messages": []}
    if c["failed"] and messages > 0:
        bad = st["done"] & ~np.isin(st["status"], SUCCESS)
        try:
            msgs = as_strings(open_group(store)["message"][:])[bad]
        except Exception:  # noqa: BLE001 - an unreadable chunk of messages: the counts stand
            msgs = np.array(["(messages unreadable: corrupted chunk)"] * int(bad.sum()), dtype=object)
        out["messages"] = [{"message": m, "count": n} for m, n in collections.Counter(msgs.tolist()).most_common(messages)]
    return out


@app.command()
def status(store: Path = typer.Argument(..., help="study store (zarr)"),
           messages: int = typer.Option(5, "--messages", help="most frequent failure messages to show"),
           json_: bool = typer.Option(False, "--json", help="print the counts and messages as JSON")):
    """Done / failed / pending counts of a sweep store (and why scenarios failed)."""
    from hpcrail.cli import print_json
    from hpcrail.sweep.store import SUCCESS, corrupt_summary, counts

    st = _state_or_exit(store)
    info = status_json(store, st, messages)
    if json_:
        print_json(info)
        return
    c = counts(st)
    a = st["attrs"]
    t = Table(title=f"{a.get('sweep_name', store)}: {c['total']} scenarios", show_header=False)
    t.add_row("done", f"{c['done']}")
    t.add_row("  completed", f"{c['completed']}")
    t.add_row("  failed", f"{c['failed']}")
    for k, v in sorted(c["by_status"].items()):
        if k not in SUCCESS:
            t.add_row(f"    {k}", f"{v}")
    t.add_row("pending", f"{c['pending']}")
    t.add_row("design", f"{a.get('design')} ({a.get('batch_size')} scenarios per batch)")
    t.add_row("created", f"{a.get('created', '')}")
    run = info.get("run")
    if run is not None:
        from hpcrail.sweep.runlog import cluster_summary

        state = run.get("state", "?")
        if state == "running" and run.get("alive") is False:
            state = "stopped without finishing (driver gone: killed?)"
        t.add_row("run", f"{state}, started {run.get('started', '?')} on {run.get('host', '?')} (pid "
                         f"{run.get('pid', '?')})" + (f", {run.get('workers')} workers" if run.get("state") ==
                                                      "running" and run.get("workers") else ""))
        t.add_row("cluster", cluster_summary(run) or "no worker lost, no task restarted or retried")
    else:
        t.add_row("last run", f"{a.get('last_run', '(running or interrupted)')}")
    console.print(t)
    console.print(f"done {c['done']} / failed {c['failed']} / pending {c['pending']}", highlight=False, soft_wrap=True)
    bad_chunks = corrupt_summary(st)
    if bad_chunks:
        err_console.print(f"warning: {store} has {bad_chunks}; they count as pending: re-run the sweep command to "
                          "recompute them (or pass --new to start again)", highlight=False, markup=False,
                          soft_wrap=True)
    for m in info["messages"]:
        console.print(f"  {m['count']} x {m['message']}", highlight=False, markup=False)


def _fmt(v: float) -> str:
    from hpcrail.results.units import clip_magnitude

    v = clip_magnitude(float(v))
    return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"


@app.command()
def report(store: Path = typer.Argument(..., help="study store (zarr), or a run store (then: its run figures)"),
           output: Optional[Path] = typer.Option(None, "-o", "--output", help="directory of the PNG figures "
                                                 "(default: STORE_report/)"),
           metric: List[str] = typer.Option([], "--metric", help="only these metrics (repeatable)"),
           rank_by: Optional[str] = typer.Option(None, "--rank-by", help="make-up studies: the metric to rank the "
                                                 "make-ups by (default: the spec's makeup.rank_by)"),
           json_: bool = typer.Option(False, "--json", help="print the summary, Sobol' indices and figure "
                                      "paths as JSON"),
           fig_format: str = typer.Option("png", "--format", metavar="png|pdf|svg", help="file format of the figures"),
           dpi: Optional[float] = typer.Option(None, "--dpi", min=1, max=2400, help="resolution of raster figures "
                                               "[dots per inch] (default 120)"),
           jobs: Optional[int] = typer.Option(None, "-j", "--jobs", min=1, help="processes drawing the metric "
                                              "figures (default: the cores this process may use, at most 8, for "
                                              "reports of 80 panels or more; 1: this process alone)")):
    """The study as figures and tables: the summary of every metric, each metric against the swept
    parameters (lines per level of a second parameter, or heatmaps, for grids), where the extremes occur,
    the envelopes along the train, Sobol' indices (design saltelli) and the failure map.  On a run store:
    its metrics and run figures (as hpcrail plot)."""
    import xarray as xr

    import hpcrail.analysis  # noqa: F401  (ds.hpcrail)
    from hpcrail.analysis.report import write_report
    from hpcrail.cli import check_figure_format, print_json

    from hpcrail.sweep.store import corrupt_summary

    check_figure_format(fig_format)
    if not store.exists():
        err_console.print(f"[bold red]error:[/] {store} does not exist", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    out = output or store.with_name(store.name.removesuffix(".zarr") + "_report")
    try:
        ds = xr.open_zarr(store, consolidated=True)
    except Exception as exc:  # noqa: BLE001
        err_console.print(f"[bold red]error:[/] {store} is not a readable zarr store ({type(exc).__name__})",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    if "scenario" not in ds.dims:      # a single run: its metrics and its kind's run figures
        from hpcrail.commands.plot import write_run_figures

        files = write_run_figures(ds, out, format=fig_format, dpi=dpi)
        summ = ds.hpcrail.summary()
        if json_:
            print_json({"store": str(store), "kind": "run", "metrics": summ.reset_index().to_dict("records"),
                        "figures": [str(p) for p in files]})
            return
        t = Table(title=f"{ds.attrs.get('scenario_name', store)}: {ds.attrs.get('status', '')}")
        for col in ("metric", "label", "value", "unit"):
            t.add_column(col, justify="right" if col == "value" else "left")
        for name, row in summ.iterrows():
            v = row["value"]
            t.add_row(escape(str(name)), escape(str(row["label"])), str(v) if isinstance(v, int) else _fmt(v),
                      escape(str(row["unit"])))
        console.print(t)
        console.print(f"wrote {len(files)} figures to {out}/: " + ", ".join(p.name for p in files), highlight=False,
                      soft_wrap=True)
        return
    st = _state_or_exit(store)
    if corrupt_summary(st):
        err_console.print(f"error: {store} has {corrupt_summary(st)}: re-run the sweep command to recompute them "
                          "(or pass --new to start again), then report", highlight=False, markup=False,
                          soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    allowed = ds.hpcrail.metrics
    bad = [m for m in metric if m not in allowed]
    if bad:
        err_console.print(f"[bold red]error:[/] unknown metric {', '.join(bad)}; allowed: {', '.join(allowed)}",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    summ = ds.hpcrail.summary()
    if metric:
        summ = summ.loc[[m for m in metric if m in summ.index]]
    from hpcrail.sweep.store import counts

    c = counts(st)
    if rank_by is not None and rank_by not in allowed:
        err_console.print(f"[bold red]error:[/] unknown metric {rank_by}; allowed: {', '.join(allowed)}",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    from hpcrail.cli import figure_notes

    with figure_notes(), err_console.status(f"drawing the report into {out}/", spinner="line") as shown:
        rep = write_report(ds, out, metric or None, rank_by, format=fig_format, dpi=dpi, jobs=jobs,
                           progress=lambda text: shown.update(f"drawing the report into {out}/: {text}"))
    if json_:
        sob = None
        if rep.sobol is not None:
            sob = rep.sobol.reset_index().to_dict("records")
        mk = None
        if rep.makeup_ranking is not None:
            mk = {"ranking": rep.makeup_ranking.to_dict("records"),
                  "sensitivity": None if rep.makeup_sensitivity is None else
                  rep.makeup_sensitivity.reset_index().to_dict("records"),
                  "R2": None if rep.makeup_sensitivity is None else rep.makeup_sensitivity.attrs.get("R2")}
        print_json({"store": str(store), "kind": "sweep", "counts": c, "design": ds.attrs.get("design"),
                    "summary": summ.reset_index().to_dict("records") if len(summ) else [],
                    "not_plotted": rep.skipped, "sobol": sob, "makeup": mk, "figures": [str(p) for p in rep.files]})
        return
    t = Table(title=f"{st['attrs'].get('sweep_name', store)}: {c['completed']} completed, {c['failed']} failed, "
                    f"{c['pending']} pending of {c['total']}")
    limits = "limit" in summ.columns
    wide = console.width >= SUMMARY_WIDTH    # narrower: "max at" below the table, one line per metric
    cols = ["metric", "unit", "count", "min", "median", "max"] + (["limit", "exceeded"] if limits else []) + \
        (["max at"] if wide else [])
    for col in cols:
        t.add_column(col, justify="right" if col in ("count", "min", "median", "max", "limit", "exceeded") else "left",
                     overflow="fold", no_wrap=col in ("unit", "count", "min", "median", "max", "limit", "exceeded"))
    for name, row in summ.iterrows():
        extra = []
        if limits:
            has = row.get("limit") == row.get("limit")      # not NaN
            n_ex = int(row["exceeded"]) if has else 0
            extra = [_fmt(row["limit"]) if has else "",
                     ("[bold red]" + f"{n_ex} EXCEEDED[/]" if n_ex else "[green]0 (PASS)[/]") if has else ""]
        t.add_row(escape(str(row["label"])), escape(str(row["unit"])), f"{row['count']}", _fmt(row["min"]),
                  _fmt(row["median"]), _fmt(row["max"]), *extra, *([escape(str(row["max at"]))] if wide else []))
    console.print(t)
    if not wide and len(summ):
        console.print("where each maximum is:", highlight=False)
        for name, row in summ.iterrows():
            console.print(f"  {name}: {row['max at']}", highlight=False, markup=False, soft_wrap=True)
    for name, why in rep.skipped.items():
        console.print(f"not plotted: {name}: {why}", highlight=False, markup=False, soft_wrap=True)
    if rep.sobol is not None:
        ts = Table(title=f"Sobol' indices (SALib): first order S1 and total ST, ± 95 % confidence half-width, "
                         f"{int(rep.sobol['samples'].min())} base samples")
        for col in ("metric", "parameter", "S1", "ST"):
            ts.add_column(col, justify="right" if col in ("S1", "ST") else "left")
        for (m, p), row in rep.sobol.iterrows():
            if row[["S1", "ST"]].isna().all():
                continue
            ts.add_row(escape(m), escape(str(ds[p].attrs.get("long_name", p)) if p in ds else p),
                       f"{row['S1']:.3f} ± {row['S1_conf']:.3f}", f"{row['ST']:.3f} ± {row['ST_conf']:.3f}")
        console.print(ts)
    if rep.makeup_ranking is not None and len(rep.makeup_ranking):
        _print_makeups(ds, rep, rank_by)
    console.print(f"wrote {len(rep.files)} figures to {out}/: " + ", ".join(p.name for p in rep.files),
                  highlight=False, soft_wrap=True)


def _print_makeups(ds, rep, rank_by=None) -> None:
    """The make-up ranking and the pattern sensitivity of a make-up study (design makeup)."""
    from hpcrail.analysis.makeup import rank_metric

    m = rank_metric(ds, rank_by)
    r = rep.makeup_ranking
    t = Table(title=f"the worst make-ups by {ds[m].attrs.get('long_name', m)} (code: "
                    f"{ds['makeup'].attrs.get('long_name', '')}; run lengths, head first; makeup_ranking.png shows "
                    "them whole)")
    shown = [c for c in r.columns if c not in ("scenario", "makeup") and c in ds and ds[c].attrs.get("role")]
    for col in ["scenario", *shown[:6], "makeup"]:
        t.add_column(col.replace("_", " "), overflow="fold", justify="left" if col == "makeup" else "right")
    for _i, row in r.iterrows():
        cells = [str(row["scenario"])]
        for c in shown[:6]:
            v = row[c]
            cells.append(f"{v:.4g}" if isinstance(v, float) else str(v))
        code = str(row["makeup"])
        cells.append(code if len(code) <= 70 else code[:67] + "...")
        t.add_row(*cells)
    console.print(t)
    s = rep.makeup_sensitivity
    if s is not None and len(s):
        ts = Table(title=f"which patterns drive {m}: first-order Sobol' S1 from the given sample (SALib) ± 95 %, "
                         f"standardised regression coefficient (R² = {s.attrs.get('R2', float('nan')):.2f}, "
                         f"{s.attrs.get('samples', 0)} make-ups)")
        for col in ("feature", "S1", "regression"):
            ts.add_column(col, justify="left" if col == "feature" else "right")
        for f, row in s.iterrows():
            ts.add_row(escape(str(ds[f].attrs.get("long_name", f))), f"{row['S1']:.3f} ± {row['S1_conf']:.3f}",
                       f"{row['src']:+.3f}")
        console.print(ts)
