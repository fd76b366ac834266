"""The sweep driver: expand the spec, create or resume the store, fan batches out, report progress.

``run_sweep`` is the entry point of ``hpcrail sweep`` (and of the Slurm launcher, which only
chooses another cluster in :func:`hpcrail.sweep.cluster.make_client`).  The driver holds no
results: tasks write their own chunks, so killing the driver at any moment loses at most the
batches in flight, and re-running the same command resumes — scenarios are skipped by id.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import errno
import json
import os
import re
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np

from hpcrail.sweep.spec import Expansion, expand
from hpcrail.sweep.store import (
    SUCCESS, Layout, coordinate_names, corrupt_summary, counts, counts_of, create_store, finalize, make_layout, open_group,
    read_state, repair_coordinates,
)
from hpcrail.sweep.worker import BatchTask, run_task, warm_task


class SweepMismatchError(Exception):
    """The store was made from another sweep (its scenario ids or outputs differ) or is not a sweep store."""


@dataclasses.dataclass
class SweepResult:
    store: Path
    counts: dict                 #: done / completed / failed / pending / by_status after the run
    ran: int                     #: scenarios computed in this run
    skipped: int                 #: scenarios already done (resume)
    seconds: float               #: wall time of the fan-out (compute + write), after start-up
    failed_tasks: list           #: task keys that failed after their retries (scenarios left pending)
    dashboard: str | None = None
    expand_seconds: float = 0.0
    warm_seconds: float = 0.0    #: kernel compile/load on a worker before the fan-out
    startup_seconds: float = 0.0  #: cluster start (or connection) and warm-up
    cluster: dict = dataclasses.field(default_factory=dict)  #: the run's cluster events (RunLog.as_dict)
    tasks: int = 0               #: batch tasks whose results arrived
    task_seconds: dict = dataclasses.field(default_factory=dict)  #: summed over tasks: prepare, integrate, extract, write, total


def _mismatch_reasons(exp: Expansion, attrs: dict, ids: np.ndarray) -> list[str]:
    reasons = []
    n_old = int(attrs.get("n_scenarios", ids.size))
    if n_old != exp.size:
        reasons.append(f"{n_old} scenarios in the store, {exp.size} in the spec")
    try:
        old_params = [(p["path"], p["name"]) for p in json.loads(attrs.get("parameters", "[]"))]
    except (TypeError, ValueError):
        old_params = []
    new_params = [(p.path, p.name) for p in exp.parameters]
    if old_params != new_params:
        reasons.append(f"parameters {[p for p, _ in old_params]} in the store, {[p for p, _ in new_params]} "
                       "in the spec")
    if attrs.get("outputs") != json.dumps(exp.spec.outputs.model_dump()):
        reasons.append(f"outputs {attrs.get('outputs')} in the store, {json.dumps(exp.spec.outputs.model_dump())} "
                       "in the spec")
    if ids.size == exp.size:
        new_ids = np.array([p.id for p in exp.points])
        diff = np.flatnonzero(ids != new_ids)
        if diff.size:
            i = int(diff[0])
            reasons.append(f"{diff.size} scenario ids differ (first: scenario {i}, {ids[i]} in the store, "
                           f"{new_ids[i]} from the spec: the base scenario, its component files, the "
                           "parameter values or an --set changed)")
    if not reasons:
        reasons.append("the sweep fingerprint differs")
    return reasons


def open_or_create(exp: Expansion, store: str | Path, *, new: bool = False,
                   batch_size: int | None = None, say: Callable = print) -> tuple[Layout, dict]:
    """Create the store of ``exp`` or check that an existing one holds the same study.

    Returns ``(layout, state)`` (see :func:`hpcrail.sweep.store.read_state`).  Raises
    :class:`SweepMismatchError` when ``store`` exists but is not this sweep's store (unless
    ``new``, which deletes an existing *sweep* store and starts again) or is not a sweep store.
    """
    store = Path(store)
    if store.exists():
        try:
            state = read_state(store)
        except ValueError as exc:
            raise SweepMismatchError(f"{exc}; refusing to touch it (choose another -o, or remove it yourself)") from None
        bad = corrupt_summary(state)
        same = state["attrs"].get("sweep_fingerprint") == exp.fingerprint()
        if bad and not new:
            if not same:
                raise SweepMismatchError(f"{store} holds another study and has {bad}: pass --new to discard it and "
                                         "start again, or write to another store with -o")
            say(f"note: {store} has {bad}; they are recomputed now (the spec gives the coordinates back)")
            coords = [n for n in state["corrupt"] if n in coordinate_names(state["attrs"])]
            if coords:
                repair_coordinates(exp, store, make_layout(exp, int(state["attrs"].get("batch_size", 0))
                                                           or exp.batch_size(batch_size)), coords)
                state = read_state(store)
        if same and not new:
            bs = int(state["attrs"].get("batch_size", 0)) or exp.batch_size(batch_size)
            if batch_size and batch_size != bs:
                say(f"note: {store} is chunked in batches of {bs}; keeping that (ignoring batch size {batch_size})")
            layout = make_layout(exp, bs)
            _check_shapes(store, layout)
            return layout, state
        if not new:
            grown = _grow(exp, store, state, batch_size, say)
            if grown is not None:
                return grown
            reasons = _mismatch_reasons(exp, state["attrs"], state["scenario_id"])
            raise SweepMismatchError(
                f"{store} holds a different study than {exp.spec_file}: " + "; ".join(reasons)
                + ". Pass --new to discard the store and start again, or write to another store with -o.")
        shutil.rmtree(store)
    layout = make_layout(exp, exp.batch_size(batch_size))
    create_store(exp, store, layout)
    return layout, read_state(store)


def growth_pairs(exp: Expansion, state: dict) -> tuple[np.ndarray, int]:
    """``(pairs, lost)``: (old index, new index) of every finished scenario of the store ``state`` whose id is in
    the expansion ``exp`` (each new scenario once), and the count of finished scenarios of the store that are not
    in ``exp``.  Scenarios that did not validate (``x`` ids) are not reused."""
    ids = state["scenario_id"]
    done = state["done"]
    first: dict = {}
    for i in np.flatnonzero(done):
        sid = str(ids[i])
        if not sid.startswith("x"):
            first.setdefault(sid, int(i))
    new_ids = [p.id for p in exp.points]
    pairs = [(first[sid], j) for j, sid in enumerate(new_ids) if sid in first]
    lost = len(set(first) - set(new_ids))
    return np.array(pairs, dtype=np.int64).reshape(-1, 2), lost


def _grow(exp: Expansion, store: Path, state: dict, batch_size: int | None, say: Callable):
    """Grow the study in ``store`` into the study of ``exp`` — levels, samples or parameters added — keeping
    every finished scenario (same id: the same canonical scenario) and leaving only the new ones to run.
    Returns ``(layout, state)`` of the grown store, or None when ``exp`` is not a growth of the store's study
    (other outputs, a finished scenario the spec no longer has, nothing in common).

    The grown store is built beside the old one (``.NAME.<id>.creating``: the finished scenarios copied,
    chunk-aligned like any store) and swapped in by two renames; a sweep killed in between finds the old store
    again (``.NAME.<id>.replaced``, see :func:`recover_swap`)."""
    import uuid

    from hpcrail.sweep.store import copy_scenarios

    attrs = state["attrs"]
    if attrs.get("outputs") != json.dumps(exp.spec.outputs.model_dump()) or corrupt_summary(state):
        return None
    pairs, lost = growth_pairs(exp, state)
    if lost or not len(pairs):
        return None
    bs = batch_size or int(attrs.get("batch_size", 0)) or exp.batch_size()
    layout = make_layout(exp, bs)
    n_old = int(attrs.get("n_scenarios", state["done"].size))
    if exp.size == n_old == len(pairs):
        say(f"updating the study {store} to the spec (its parameters or their coordinate names changed, every "
            "scenario is the same): keeping all its scenarios")
    else:
        say(f"growing the study {store}: {n_old} -> {exp.size} scenarios; keeping its {len(pairs)} finished "
            f"scenarios (same ids), {exp.size - len(pairs)} to run")
    tag = uuid.uuid4().hex[:8]
    tmp = store.with_name(f".{store.name}.{tag}.creating")
    create_store(exp, tmp, layout)
    copy_scenarios(store, tmp, layout, pairs)
    history = json.loads(attrs.get("growth_history", "[]") or "[]")
    history.append({"date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                    "from_fingerprint": attrs.get("sweep_fingerprint"), "from_scenarios": n_old,
                    "to_scenarios": exp.size, "kept": int(len(pairs)), "created": attrs.get("created", "")})
    finalize(tmp, {"growth_history": json.dumps(history)})
    old = store.with_name(f".{store.name}.{tag}.replaced")
    os.rename(store, old)
    os.rename(tmp, store)
    shutil.rmtree(old, ignore_errors=True)
    return layout, read_state(store)


def recover_swap(store: Path) -> None:
    """After a sweep killed while swapping a grown store in: put the old store back if the new one is not in
    place, else remove the old one (call with the store's lock held)."""
    for old in sorted(store.parent.glob(f".{store.name}.*.replaced")):
        if not store.exists():
            os.rename(old, store)
        else:
            shutil.rmtree(old, ignore_errors=True)


def _check_shapes(store: Path, layout: Layout) -> None:
    g = open_group(store)
    for name in layout.variables:
        try:
            ok = name in g and tuple(g[name].shape) == layout.shape(name)
        except Exception:  # noqa: BLE001 - unreadable metadata of the variable
            ok = False
        if not ok:
            raise SweepMismatchError(f"{store}: variable {name!r} is missing, unreadable or has another shape than "
                                     "this sweep needs; pass --new to start again")
        arr = g[name]
        unit = getattr(arr, "shards", None) or arr.chunks   # the unit a writer rewrites whole
        if int(unit[0]) != layout.batch_size:
            raise SweepMismatchError(f"{store}: variable {name!r} is chunked by {unit[0]} scenarios, not by the "
                                     f"batch of {layout.batch_size}: tasks would share chunks (rewritten or "
                                     "rechunked by another tool?); pass --new to start again")


def todo_mask(state: dict, retry_failed: bool = False) -> np.ndarray:
    """Scenarios to run: not done, plus (with ``retry_failed``) done ones that did not succeed."""
    done = state["done"]
    mask = ~done
    if retry_failed:
        mask |= done & ~np.isin(state["status"], SUCCESS)
    return mask


#: tasks submitted at once by default: every batch of a study up to this many (the dashboard's Progress
#: panel then shows the study's batches done out of all), bounded so that the scheduler's memory stays small
MAX_SUBMITTED = 4096


def task_prefix(name: str) -> str:
    """The dask key prefix of a study's tasks, ``hpcrail_<study name>``: what the dashboard's Progress
    panel and task stream show (dask groups keys by their first ``-``-separated word)."""
    return "hpcrail_" + re.sub(r"\W", "_", name)


def make_tasks(exp: Expansion, layout: Layout, store: Path, mask: np.ndarray, *, mode: str = "prange",
               threads: int = 1) -> list[tuple[str, BatchTask]]:
    """``(key, task)`` per batch holding scenarios to run; keys are deterministic and carry the study's
    name (``hpcrail_<study>-<fingerprint>-<first scenario>``)."""
    fp = exp.fingerprint()
    prefix = task_prefix(exp.name)
    b = exp.spec.budget
    limits = (float(b.wall_time_s or 0.0), int(b.max_steps or 0))
    tasks = []
    for start, stop in layout.batches():
        idx = [int(i) for i in np.flatnonzero(mask[start:stop]) + start]
        if not idx:
            continue
        pts = [exp.points[i] for i in idx]
        tasks.append((f"{prefix}-{fp}-{start:08d}",
                      BatchTask(store=str(store.resolve()), start=start, stop=stop, todo=idx,
                                overrides=[p.overrides for p in pts], errors=[p.error for p in pts],
                                base_doc=exp.base_doc, spec_file=str(exp.spec_file), layout=layout,
                                mode=mode, threads=threads, budget=limits)))
    return tasks


def warm_points(exp: Expansion) -> list:
    """``(overrides, duration)`` of one valid scenario per integrator method: what a warm-up runs."""
    seen, out = set(), []
    for p in exp.points:
        if p.error is None and p.methods not in seen:
            seen.add(p.methods)
            out.append((p.overrides, p.duration))
    return out


def warm_cache(exp: Expansion, say: Callable = print) -> float:
    """Compile or load, in this process, every kernel the sweep needs (see
    :func:`hpcrail.sweep.worker.warm_task`); returns seconds spent."""
    t0 = time.perf_counter()
    for msg in warm_task(exp.base_doc, str(exp.spec_file), warm_points(exp)):
        say(msg)
    return time.perf_counter() - t0


class _Progress:
    """Progress of a sweep: the study's done and failed scenarios — counted from the store exactly as
    ``hpcrail status`` counts them (:func:`hpcrail.sweep.store.counts`), re-read at most every ~2 s — this
    run's rate, elapsed and remaining time, and the cluster's events of the run (workers lost or joined,
    tasks restarted or retried: :class:`~hpcrail.sweep.runlog.RunLog`).  A rich bar on a terminal, a line
    every ~10 % or 30 s otherwise; the remaining time once a rate is known.

    ``todo``: scenarios this run computes; ``store``: the study store (None: count from the updates alone,
    starting at ``start``, the store's counts when the run began)."""

    def __init__(self, todo: int, label: str, enabled: bool = True, stream=None, store: Path | None = None,
                 start: dict | None = None, runlog=None):
        start = start or {"total": todo, "done": 0, "failed": 0}
        self.todo = todo
        self.total = int(start["total"])
        self.done = int(start["done"])
        self.failed = int(start["failed"])
        self.ran = 0                       #: scenarios computed by this run (rate, remaining time)
        self.store = store
        self.runlog = runlog
        self.t0 = time.perf_counter()
        self.enabled = enabled and todo > 0
        self.stream = stream or sys.stderr
        self.bar = None
        self._last_print = (-1, self.t0)
        self._shown = None
        self._next_read = 0.0
        self._lock = threading.Lock()
        if self.enabled and self.stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("· [red]{task.fields[failed]} failed[/]{task.fields[cluster]} · "
                                           "{task.fields[rate]} · elapsed"), TimeElapsedColumn(),
                                TextColumn("remaining {task.fields[eta]}"),
                                console=Console(stderr=True))
            self.bar.start()
            self.task = self.bar.add_task(label, total=self.total, completed=self.done, failed=self.failed,
                                          rate="-", eta="-", cluster="")
        self.label = label

    def _fmt(self):
        el = time.perf_counter() - self.t0
        rate = self.ran / el if el > 0 else 0.0
        eta = (self.todo - self.ran) / rate if rate > 0 else float("nan")
        eta_s = "-" if not np.isfinite(eta) or self.ran >= self.todo else str(_dt.timedelta(seconds=int(eta)))
        return rate, eta_s, el

    def _read_store(self, force: bool = False) -> None:
        now = time.perf_counter()
        if self.store is None or (not force and now < self._next_read):
            return
        try:
            c = counts_of(self.store)
        except Exception:  # noqa: BLE001 - being written: the next read counts it
            return
        took = time.perf_counter() - now
        self._next_read = time.perf_counter() + max(2.0, 20 * took)
        self.total, self.done, self.failed = c["total"], c["done"], c["failed"]

    def _cluster(self) -> str:
        from hpcrail.sweep.runlog import cluster_summary

        text = cluster_summary(self.runlog.as_dict()) if self.runlog is not None else ""
        return f" · {text}" if text else ""

    def update(self, n_done: int, n_failed: int, force: bool = False) -> None:
        """``n_done`` more scenarios computed by this run, ``n_failed`` of them failed."""
        with self._lock:
            self.ran += n_done
            if self.store is None:
                self.done += n_done
                self.failed += n_failed
            else:
                self._read_store(force or self.ran >= self.todo)
            self._show(force)

    def refresh(self) -> None:
        """Redraw (a cluster event)."""
        with self._lock:
            self._show(True)

    def _show(self, force: bool = False) -> None:
        if not self.enabled:
            return
        rate, eta_s, el = self._fmt()
        cluster = self._cluster()
        if self.bar is not None:
            self.bar.update(self.task, total=self.total, completed=self.done, failed=self.failed,
                            rate=f"{rate:.2f} scen/s", eta=eta_s, cluster=cluster)
            return
        pct = int(10 * self.done / max(1, self.total))
        now = time.perf_counter()
        shown = (self.done, self.failed, cluster)
        if shown == self._shown and not now - self._last_print[1] > 30:
            return
        if force or pct > self._last_print[0] or now - self._last_print[1] > 30 or self.ran >= self.todo:
            self._last_print = (pct, now)
            self._shown = shown
            rem = "" if eta_s == "-" else f", remaining {eta_s}"
            print(f"{self.label}: {self.done}/{self.total} done ({100 * self.done / max(1, self.total):.0f} %), "
                  f"{self.failed} failed{cluster.replace(' · ', ', ')}, {rate:.2f} scenarios/s, elapsed "
                  f"{_dt.timedelta(seconds=int(el))}{rem}", file=self.stream, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.stop()


def run_sweep(spec: str | Path, store: str | Path | None = None, *, cli_set=(), client=None,
              scheduler: str | None = None, scheduler_file: str | None = None, cluster: str = "local",
              workers: int | None = None, threads: int = 1, mode: str = "prange", batch_size: int | None = None,
              retry_failed: bool = False, new: bool = False, inline: bool = False,
              max_in_flight: int | None = None, retries: int = 2, dashboard_address: str | None = None,
              progress: bool = True, say: Callable = print, expansion: Expansion | None = None,
              slurm=None) -> SweepResult:
    """Run (or resume) the sweep ``spec`` into the zarr store ``store`` (default ``NAME.zarr``).

    Execution: ``inline`` runs the batches in this process (no dask); otherwise ``client`` (a
    ``distributed.Client``), else a cluster from :func:`hpcrail.sweep.cluster.make_client`
    (``scheduler``/``scheduler_file`` to join one; an embedded LocalCluster of ``workers``
    processes by default).  At most ``max_in_flight`` tasks (default: every batch, up to
    :data:`MAX_SUBMITTED`) are submitted at once, with deterministic keys and ``retries``.  ``cluster="slurm"`` starts worker
    jobs with the :class:`~hpcrail.sweep.cluster.SlurmOptions` ``slurm``; ``cluster="mpi"`` (under ``mpiexec``/``srun``,
    dask-mpi) makes rank 0 the scheduler, rank 1 the driver and the other ranks workers — on those ranks this call
    does not return: the process exits when the sweep ends.

    Raises :class:`~hpcrail.config.ConfigError` for a bad spec, :class:`SweepMismatchError`
    when the store holds another study (unless ``new``), ``ValueError`` for bad cluster options.
    Failed scenarios are data (status and message in the store), never exceptions; tasks that fail
    after their retries are listed in the result and their scenarios stay pending.
    """
    if not inline and client is None:
        from hpcrail.sweep.cluster import CLUSTERS

        if scheduler and scheduler_file:
            raise ValueError("give either --scheduler or --scheduler-file, not both")
        if scheduler_file and not Path(scheduler_file).is_file():
            raise ValueError(f"scheduler file {scheduler_file} not found")
        if not (scheduler or scheduler_file) and cluster not in CLUSTERS:
            raise ValueError(f"unknown cluster {cluster!r}; allowed: {', '.join(CLUSTERS)}")
    mpi_close = None
    if not inline and client is None and cluster == "mpi" and not (scheduler or scheduler_file):
        # before anything else: every MPI rank but the driver's (1) becomes the scheduler or a worker here and
        # exits when the sweep ends; only the driver expands the spec and holds the store's lock
        from hpcrail.sweep.cluster import start_mpi_cluster

        client, mpi_close = start_mpi_cluster(threads, dashboard_address)
        say(f"mpi: dask scheduler on rank 0, this driver on rank 1, "
            f"{len(client.scheduler_info().get('workers', {}))} worker ranks")
    try:
        return _run_sweep(spec, store, cli_set=cli_set, client=client, scheduler=scheduler,
                          scheduler_file=scheduler_file, cluster=cluster, workers=workers, threads=threads, mode=mode,
                          batch_size=batch_size, retry_failed=retry_failed, new=new, inline=inline,
                          max_in_flight=max_in_flight, retries=retries, dashboard_address=dashboard_address,
                          progress=progress, say=say, expansion=expansion, slurm=slurm)
    finally:
        if mpi_close is not None:
            mpi_close()


def _run_sweep(spec, store, *, cli_set, client, scheduler, scheduler_file, cluster, workers, threads, mode, batch_size,
               retry_failed, new, inline, max_in_flight, retries, dashboard_address, progress, say, expansion,
               slurm) -> SweepResult:
    t0 = time.perf_counter()
    exp = expansion or expand(spec, cli_set)
    t_exp = time.perf_counter() - t0
    for w in getattr(exp, "warnings", ()):
        say(f"warning: {w}")
    store = Path(store or f"{exp.name}.zarr")
    from hpcrail.results.store import check_writable

    check_writable(store.parent)
    with sweep_lock(store, say):
        for stale in store.parent.glob(f".{store.name}.*.creating"):   # left by a killed sweep (we hold the lock)
            shutil.rmtree(stale, ignore_errors=True)
        recover_swap(store)
        created = not store.exists()
        try:
            return _run(exp, store, t_exp, client=client, scheduler=scheduler, scheduler_file=scheduler_file,
                        cluster=cluster, workers=workers, threads=threads, mode=mode, batch_size=batch_size,
                        retry_failed=retry_failed, new=new, inline=inline, max_in_flight=max_in_flight,
                        retries=retries, dashboard_address=dashboard_address, progress=progress, say=say,
                        slurm=slurm)
        except BaseException as exc:
            _after_failure(store, created, exc)
            raise


class SweepLockedError(Exception):
    """Another ``hpcrail sweep`` holds the store's lock."""


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by SIGINT/SIGTERM: ``store`` (None if nothing was kept), ``counts`` of it."""

    def __init__(self, signame: str, store: Path | None, counts: dict | None):
        super().__init__(signame)
        self.signal, self.store, self.counts = signame, store, counts


@contextlib.contextmanager
def sweep_lock(store: Path, say: Callable = print):
    """Hold the lock ``.NAME.lock`` next to ``store`` (``filelock``, an OS file lock: released when the
    process dies, even by SIGKILL) for the whole run.  Raises :class:`SweepLockedError` when another
    sweep holds it: two sweeps never write one store, and ``--new`` never deletes a store in use."""
    from filelock import FileLock, Timeout

    path = store.with_name(f".{store.name}.lock")
    lock = FileLock(str(path), timeout=0, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise SweepLockedError(f"{store} is in use by another hpcrail sweep (it holds {path}); wait for it to finish "
                               "or stop it, then re-run this command") from None
    except OSError as exc:
        if exc.errno not in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
        say(f"note: this filesystem offers no file locks ({exc.strerror}): make sure no other sweep uses {store}")
        yield
        return
    try:
        yield
    finally:
        lock.release()


def _after_failure(store: Path, created: bool, exc: BaseException) -> None:
    """After a sweep stopped by an exception or an interrupt: remove a store this run created if no
    scenario got done (a sweep that fails before any scenario leaves nothing behind), else tidy it
    (stale ``.partial`` files, consolidated metadata); an interrupt becomes :class:`SweepInterrupted`."""
    from hpcrail import interrupt

    kept = store.exists()
    st = None
    if kept:
        try:
            st = read_state(store)
        except ValueError:
            st = None
        if created and (st is None or not st["done"].any()):
            from hpcrail.sweep.runlog import run_file

            shutil.rmtree(store, ignore_errors=True)
            run_file(store).unlink(missing_ok=True)
            kept, st = False, None
        else:
            with contextlib.suppress(Exception):
                finalize(store)
    signame = interrupt.requested() or (exc.args[0] if isinstance(exc, KeyboardInterrupt) and exc.args else None)
    if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, SweepInterrupted):
        raise SweepInterrupted(str(signame or "SIGINT"), store if kept else None,
                               counts(st) if st is not None else None) from None


def _run(exp: Expansion, store: Path, t_exp: float, *, client, scheduler, scheduler_file, cluster, workers, threads,
         mode, batch_size, retry_failed, new, inline, max_in_flight, retries, dashboard_address, progress, say,
         slurm) -> SweepResult:
    """The body of :func:`run_sweep` once the store's lock is held."""
    layout, state = open_or_create(exp, store, new=new, batch_size=batch_size, say=say)
    mask = todo_mask(state, retry_failed)
    skipped = int(state["done"].sum() - (mask & state["done"]).sum())
    n_todo = int(mask.sum())
    n_invalid = sum(1 for p in exp.points if p.error is not None)
    say(f"sweep {exp.name}: {exp.size} scenarios ({exp.spec.design}, {len(exp.parameters)} parameters"
        f"{f', {n_invalid} invalid' if n_invalid else ''}), batches of {layout.batch_size} -> {store}")
    if skipped:
        say(f"resuming: {skipped} scenarios already done, {n_todo} to run")
    tasks = make_tasks(exp, layout, store, mask, mode=mode, threads=threads)
    result = SweepResult(store=store, counts={}, ran=0, skipped=skipped, seconds=0.0, failed_tasks=[],
                         expand_seconds=t_exp)
    if not tasks:
        say("nothing to do: every scenario is done" + ("" if retry_failed else
                                                       " (use --retry-failed to re-run failed ones)"))
        finalize(store)
        result.counts = counts(read_state(store))
        return result
    prog = None
    from hpcrail.sweep.runlog import RunLog

    runlog = RunLog(store, say=say, prefix=task_prefix(exp.name))
    runlog.write()
    start_counts = counts(state)

    def on_result(res: dict):
        sts = [s for _i, s in res["statuses"]]
        result.ran += len(sts)
        result.tasks += 1
        for k, v in res.get("seconds", {}).items():
            result.task_seconds[k] = result.task_seconds.get(k, 0.0) + float(v)
        prog.update(len(sts), sum(1 for s in sts if s not in SUCCESS))

    w0 = time.perf_counter()
    close = None
    state_at_end = "interrupted"
    try:
        if inline:
            prog = _Progress(n_todo, exp.name, enabled=progress, store=store, start=start_counts)
            from hpcrail._numba import compile_notice

            with compile_notice(say):
                for _key, task in tasks:
                    on_result(run_task(task))
        else:
            if client is None:
                from hpcrail.sweep.cluster import make_client

                client, close = make_client(scheduler=scheduler, scheduler_file=scheduler_file, cluster=cluster,
                                            workers=workers, threads=threads, dashboard_address=dashboard_address,
                                            slurm=slurm, say=say)
            result.dashboard = getattr(client, "dashboard_link", None)
            if result.dashboard:
                say(f"dask dashboard: {result.dashboard}")
            _register_imports(client)
            # compile (or load) the kernels on one worker before fanning out: a cold numba cache is then
            # filled once, and the other workers only load from it
            t1 = time.perf_counter()
            from hpcrail._numba import cache_dir

            say(f"loading the numba kernels on a worker (compiling them on a first run: 20 s to 2 minutes, cached in "
                f"{cache_dir()})")
            try:
                for msg in client.submit(warm_task, exp.base_doc, str(exp.spec_file), warm_points(exp),
                                         key=f"{task_prefix(exp.name)}_warmup-{exp.fingerprint()}",
                                         pure=False).result():
                    say(msg)
            except Exception as exc:  # noqa: BLE001 - tasks then compile for themselves
                say(f"note: warm-up on a worker failed ({type(exc).__name__}: {exc}); continuing")
            result.warm_seconds = time.perf_counter() - t1
            result.startup_seconds = time.perf_counter() - w0
            w0 = time.perf_counter()
            # the rate and ETA start with the cluster
            prog = _Progress(n_todo, exp.name, enabled=progress, store=store, start=start_counts, runlog=runlog)
            runlog.on_change = prog.refresh
            runlog.listen(client)
            try:
                _fan_out(client, tasks, on_result, result, max_in_flight, retries, say, runlog)
            finally:
                runlog.stop(client)
        state_at_end = "finished"
    except BaseException:
        state_at_end = "interrupted"
        raise
    finally:
        if prog is not None:
            prog.update(0, 0, force=True)
            prog.close()
        result.seconds = time.perf_counter() - w0
        result.cluster = runlog.as_dict()
        runlog.finish(state_at_end)
        if close is not None:
            close()
    st = read_state(store)
    result.counts = counts(st)
    finalize(store, {"last_run": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                     "last_run_counts": json.dumps({k: v for k, v in result.counts.items() if k != "by_status"}),
                     "last_run_cluster": runlog.summary() or "no worker lost, no task restarted or retried"})
    return result


def _register_imports(client) -> None:
    """Import the modules of the sweep tasks on every worker (present and future) before any task runs
    (:class:`hpcrail.sweep.plugin.ImportPlugin`)."""
    try:
        from hpcrail.sweep.plugin import ImportPlugin

        client.register_plugin(ImportPlugin(), name=ImportPlugin.name)
    except Exception:  # noqa: BLE001 - an old or foreign scheduler: tasks import on first use
        pass


def submit_limit(n_tasks: int, max_in_flight: int | None = None) -> int:
    """Tasks submitted at once: ``max_in_flight`` if given, else every task up to :data:`MAX_SUBMITTED`."""
    return int(max_in_flight) if max_in_flight else max(1, min(n_tasks, MAX_SUBMITTED))


def _fan_out(client, tasks, on_result, result: SweepResult, max_in_flight, retries, say, runlog=None) -> None:
    from distributed import as_completed

    # every batch at once (up to MAX_SUBMITTED): the scheduler queues them, and the dashboard's Progress
    # panel shows the study's batches done out of all; finished futures are kept (their results are a few
    # hundred bytes) so that they stay counted there until the end
    limit = submit_limit(len(tasks), max_in_flight)
    it = iter(tasks)
    ac = as_completed(loop=client.loop)   # the given client, default or not
    keys = {}
    finished = []

    def submit_next() -> bool:
        nxt = next(it, None)
        if nxt is None:
            return False
        key, task = nxt
        fut = client.submit(run_task, task, key=key, retries=retries, pure=False)
        keys[fut.key] = key
        ac.add(fut)
        return True

    for _ in range(limit):
        if not submit_next():
            break
    for fut in ac:
        try:
            on_result(fut.result())
        except Exception as exc:  # noqa: BLE001 - the batch stays pending; the sweep goes on
            key = keys.get(fut.key, str(fut.key))
            result.failed_tasks.append(key)
            text = (f"task {key} failed after {retries} retries: {type(exc).__name__}: {exc} (its scenarios stay "
                    "pending: re-run the same command to resume)")
            if runlog is not None:
                runlog.task_failed(key, text)
            else:
                say(text)
        finished.append(fut)
        submit_next()
    for fut in finished:
        fut.release()


__all__ = ["run_sweep", "SweepResult", "SweepMismatchError", "SweepLockedError", "SweepInterrupted", "sweep_lock", "open_or_create", "todo_mask", "make_tasks",
           "warm_cache", "warm_points"]
