"""One sweep task: validate and run a batch of scenarios, write their chunks, mark them done.

Runs on a dask worker (or inline in the driver).  Every scenario's outcome is data: bad overrides
give ``status = "invalid"``, an exception while building or post-processing gives ``"error"``, an
integration failure its integrator status (``non_finite``, ``max_steps``, ``step_underflow``,
``newton_failure`` …); the message says why.  Only a failure to write the store raises (dask then
retries the task).
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from hpcrail import kinds
from hpcrail.config import ConfigError, Document
from hpcrail.kinds import validate_document
from hpcrail.sweep.spec import overlay_document
from hpcrail.sweep.store import (
    STATUS_ERROR, STATUS_INVALID, Layout, fit_text, read_region, write_region,
)


@dataclasses.dataclass
class BatchTask:
    """Everything a worker needs for batch ``[start, stop)``; ``todo`` are the absolute indices to
    (re)compute, the others keep their stored values."""

    store: str
    start: int
    stop: int
    todo: list
    overrides: list          #: per todo scenario: dotted path -> value
    errors: list             #: per todo scenario: validation error found by the driver (or None)
    base_doc: Document
    spec_file: str
    layout: Layout
    mode: str = "prange"
    threads: int = 1
    budget: tuple = (0.0, 0)   #: (wall time [s], step attempts) per scenario, 0 = none


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, ConfigError):
        return "; ".join(str(i) for i in exc.issues)
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _sample_times(layout: Layout, duration: float) -> np.ndarray:
    if layout.times is None:
        return np.array([duration])
    t = layout.times[layout.times <= duration + 1e-9]
    return t if t.size else np.array([duration])


def _row_from_dataset(ds, layout: Layout) -> dict:
    """Values of the store variables for one scenario from its run dataset (outputs its kind does not
    declare for it keep their fill values).  Raises ``ValueError`` when a series is not sampled at the
    store's times."""
    row = {}
    status = str(ds["status"].values)
    msg = str(ds["message"].values)
    warn = ds.attrs.get("warnings", "")
    if warn:
        msg = f"{msg} (warning: {'; '.join(warn.splitlines())})"
    row["status"] = status
    row["message"] = msg
    if "time" in ds.dims and layout.times is not None:
        t = np.asarray(ds["time"].values)
        if not np.allclose(t, layout.times[:t.size], rtol=0, atol=1e-9):
            raise ValueError("the run's series are not sampled at the store's times")
    for name, (dims, dtype, _a) in layout.variables.items():
        if name in ("status", "message", "done") or name not in ds:
            continue
        if len(dims) == 1:
            v = ds[name].values
            row[name] = str(v) if np.dtype(dtype).kind in "OU" else v.item()
            continue
        da = ds[name]
        for d, a, b in layout.kept.values():     # outputs.series.select: labels a..b (1-based positions)
            if d in da.dims:
                da = da.isel({d: slice(a - 1, b)})
        arr = np.asarray(da.values)
        full = layout.empty(name, 1)[0]
        full[tuple(slice(0, s) for s in arr.shape)] = arr
        row[name] = full
    return row


def compute_rows(task: BatchTask) -> tuple[list[dict], dict]:
    """Run the batch's todo scenarios; returns one row per todo scenario and timings [s]."""
    from hpcrail.simulate import run_batch

    t0 = time.perf_counter()
    rows: list = [None] * len(task.todo)
    scs, where, t_outs = [], [], []
    for k, (over, err) in enumerate(zip(task.overrides, task.errors)):
        if err is not None:
            rows[k] = {"status": STATUS_INVALID, "message": err}
            continue
        try:
            sc = validate_document(overlay_document(task.base_doc, over, task.spec_file))
        except ConfigError as exc:
            rows[k] = {"status": STATUS_INVALID, "message": _error_text(exc)}
            continue
        except (KeyError, IndexError, ValueError) as exc:
            rows[k] = {"status": STATUS_INVALID, "message": _error_text(exc)}
            continue
        dur = float(getattr(getattr(sc, "simulation", None), "duration_s", 0.0) or 0.0)
        scs.append(sc)
        where.append(k)
        t_outs.append(_sample_times(task.layout, dur))
    t1 = time.perf_counter()
    from hpcrail.integrators.driver import budget

    # post-processing of diverged runs (NaN states) is expected to warn; every run within the budget
    with np.errstate(all="ignore"), budget(*task.budget):
        results = run_batch(scs, t_outs, mode=task.mode, threads=task.threads, attrs=False) if scs else []
    t2 = time.perf_counter()
    for k, res in zip(where, results):
        if isinstance(res, BaseException):
            rows[k] = {"status": STATUS_ERROR, "message": _error_text(res)}
        else:
            try:
                rows[k] = _row_from_dataset(res, task.layout)
            except Exception as exc:  # noqa: BLE001 - recorded, the batch goes on
                rows[k] = {"status": STATUS_ERROR, "message": _error_text(exc)}
    t3 = time.perf_counter()
    return rows, {"prepare": t1 - t0, "integrate": t2 - t1, "extract": t3 - t2}


def assemble(task: BatchTask, rows: list[dict]) -> dict:
    """Arrays of every variable for the whole batch (stored values kept for scenarios not in todo)."""
    lay = task.layout
    n = task.stop - task.start
    if len(task.todo) == n:
        arrays = {name: lay.empty(name, n) for name in lay.variables if name != "done"}
    else:
        arrays = read_region(task.store, lay, task.start, task.stop)
        arrays.pop("done", None)
    for idx, row in zip(task.todo, rows):
        i = idx - task.start
        for name in arrays:
            if name in row:
                value = row[name]
                if arrays[name].dtype.kind == "U":   # fixed-width text: cut long messages visibly
                    w = arrays[name].dtype.itemsize // 4
                    if np.ndim(value):                 # text per element (e.g. per detailed vehicle)
                        value = np.array([fit_text(x, w) for x in np.asarray(value, dtype=object).ravel()],
                                         dtype=arrays[name].dtype).reshape(np.shape(value))
                    else:
                        value = fit_text(value, w)
                arrays[name][i] = value
            else:
                arrays[name][i] = lay.empty(name, 1)[0]
    return arrays


def run_task(task: BatchTask) -> dict:
    """Compute, write and mark done batch ``[start, stop)``; returns a summary for the driver:
    ``{"start", "stop", "statuses": [(index, status)], "seconds": {...}}``.

    Nothing in a task schedules dask work: any dask collection computed inside (by a library) runs on the
    synchronous scheduler of this thread, never as tasks of the sweep's cluster.  An attempt that raises
    (the store cannot be written) is told to the driver (:func:`hpcrail.sweep.runlog.log_task_event`)
    before dask retries it."""
    import dask

    try:
        with dask.config.set(scheduler="synchronous"):
            t0 = time.perf_counter()
            rows, secs = compute_rows(task)
            t1 = time.perf_counter()
            arrays = assemble(task, rows)
            write_region(task.store, task.layout, task.start, task.stop, arrays)
            secs["write"] = time.perf_counter() - t1
            secs["total"] = time.perf_counter() - t0
    except Exception as exc:
        from hpcrail.sweep.runlog import log_task_event

        log_task_event({"action": "attempt-failed", "start": task.start, "stop": task.stop,
                        "error": _error_text(exc)[:300]})
        raise
    return {"start": task.start, "stop": task.stop,
            "statuses": [(i, r["status"]) for i, r in zip(task.todo, rows)], "seconds": secs}


def warm_task(base_doc: Document, spec_file: str, points: list) -> list[str]:
    """Compile or load every kernel a sweep needs in this process: one short step of one scenario
    per integrator method (``points``: ``(overrides, duration)``) through its kind's batch hooks and the
    dataset builder.  Run once before fanning out, so that concurrent first compilations never race
    to fill numba's disk cache.  Kinds without batch hooks compile in their first task.  Returns notes
    about scenarios that could not be warmed (they will record their own error)."""
    from hpcrail.integrators.batch import integrate_batch
    from hpcrail.results.dataset import build_dataset

    notes = []
    for over, duration in points:
        try:
            sc = validate_document(overlay_document(base_doc, over, spec_file))
            kind = kinds.of(sc)
            if not kind.batchable(sc):
                continue
            state, item = kind.batch.prepare(sc, np.array([duration]))
            item.t_final = float(item.problem.t0) + min(duration, item.step if item.step > 0 else 1e-3)
            item.t_out = np.array([item.t_final])
            with np.errstate(all="ignore"):
                build_dataset(kind, sc, kind.batch.finish(sc, state, integrate_batch([item])[0]), attrs=False)
        except Exception as exc:  # noqa: BLE001
            notes.append(f"note: could not pre-compile for {over}: {type(exc).__name__}: {exc}")
    return notes


__all__ = ["BatchTask", "run_task", "compute_rows", "assemble", "warm_task"]
