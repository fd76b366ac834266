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
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

from hpcrail.sweep.spec import Expansion, expand
from hpcrail.sweep.store import (
    SUCCESS, Layout, coordinate_names, corrupt_summary, counts, create_store, finalize, make_layout, open_group,
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
            reasons = _mismatch_reasons(exp, state["attrs"], state["scenario_id"])
            raise SweepMismatchError(
                f"{store} holds a different study than {exp.spec_file}: " + "; ".join(reasons)
                + ". Pass --new to discard the store and start again, or write to another store with -o.")
        shutil.rmtree(store)
    layout = make_layout(exp, exp.batch_size(batch_size))
    create_store(exp, store, layout)
    return layout, read_state(store)


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
    """Progress of the scenarios of this run: done, failed, rate, elapsed and remaining time (rich bar on
    a terminal, a line every ~10 % or 30 s otherwise); the remaining time once a rate is known."""

    def __init__(self, total: int, label: str, enabled: bool = True, stream=None):
        self.total = total
        self.n = 0
        self.failed = 0
        self.t0 = time.perf_counter()
        self.enabled = enabled and total > 0
        self.stream = stream or sys.stderr
        self.bar = None
        self._last_print = (-1, self.t0)
        if self.enabled and self.stream.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("· [red]{task.fields[failed]} failed[/] · {task.fields[rate]} · "
                                           "elapsed"), TimeElapsedColumn(),
                                TextColumn("remaining {task.fields[eta]}"),
                                console=Console(stderr=True))
            self.bar.start()
            self.task = self.bar.add_task(label, total=total, failed=0, rate="-", eta="-")
        self.label = label

    def _fmt(self):
        el = time.perf_counter() - self.t0
        rate = self.n / el if el > 0 else 0.0
        eta = (self.total - self.n) / rate if rate > 0 else float("nan")
        eta_s = "-" if not np.isfinite(eta) else str(_dt.timedelta(seconds=int(eta)))
        return rate, eta_s, el

    def update(self, n_done: int, n_failed: int) -> None:
        self.n += n_done
        self.failed += n_failed
        if not self.enabled:
            return
        rate, eta_s, el = self._fmt()
        if self.bar is not None:
            self.bar.update(self.task, completed=self.n, failed=self.failed, rate=f"{rate:.2f} scen/s", eta=eta_s)
            return
        pct = int(10 * self.n / self.total)
        now = time.perf_counter()
        if pct > self._last_print[0] or now - self._last_print[1] > 30 or self.n == self.total:
            self._last_print = (pct, now)
            rem = "" if eta_s == "-" else f", remaining {eta_s}"
            print(f"{self.label}: {self.n}/{self.total} done ({100 * self.n / self.total:.0f} %), {self.failed} failed, "
                  f"{rate:.2f} scenarios/s, elapsed {_dt.timedelta(seconds=int(el))}{rem}", file=self.stream,
                  flush=True)

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
    jobs with the :class:`~hpcrail.sweep.cluster.SlurmOptions` ``slurm``.

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
            shutil.rmtree(store, ignore_errors=True)
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

    def on_result(res: dict):
        sts = [s for _i, s in res["statuses"]]
        result.ran += len(sts)
        prog.update(len(sts), sum(1 for s in sts if s not in SUCCESS))

    w0 = time.perf_counter()
    close = None
    try:
        if inline:
            prog = _Progress(n_todo, exp.name, enabled=progress)
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
            prog = _Progress(n_todo, exp.name, enabled=progress)   # the rate and ETA start with the cluster
            _fan_out(client, tasks, on_result, result, max_in_flight, retries, say)
    finally:
        if prog is not None:
            prog.close()
        result.seconds = time.perf_counter() - w0
        if close is not None:
            close()
    st = read_state(store)
    result.counts = counts(st)
    finalize(store, {"last_run": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                     "last_run_counts": json.dumps({k: v for k, v in result.counts.items() if k != "by_status"})})
    return result


def submit_limit(n_tasks: int, max_in_flight: int | None = None) -> int:
    """Tasks submitted at once: ``max_in_flight`` if given, else every task up to :data:`MAX_SUBMITTED`."""
    return int(max_in_flight) if max_in_flight else max(1, min(n_tasks, MAX_SUBMITTED))


def _fan_out(client, tasks, on_result, result: SweepResult, max_in_flight, retries, say) -> None:
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
            result.failed_tasks.append(keys.get(fut.key, str(fut.key)))
            say(f"task {keys.get(fut.key, fut.key)} failed after {retries} retries: {type(exc).__name__}: {exc}")
        finished.append(fut)
        submit_next()
    for fut in finished:
        fut.release()


__all__ = ["run_sweep", "SweepResult", "SweepMismatchError", "SweepLockedError", "SweepInterrupted", "sweep_lock", "open_or_create", "todo_mask", "make_tasks",
           "warm_cache", "warm_points"]
