"""Running scenarios of any kind: :func:`run_scenario` (one run → its dataset) and :func:`run_batch`
(many scenarios; those whose kind has batch hooks share one compiled batch kernel).

Both read only the kinds' descriptors (:mod:`hpcrail.kinds`): a kind's ``run`` (or batch
``finish``) returns its declared outputs as plain arrays and the one builder
:func:`hpcrail.results.dataset.build_dataset` makes the dataset, so ``hpcrail run`` and ``hpcrail
sweep`` share one schema per kind.
"""
from __future__ import annotations

import functools
import os
import sys
import time
import types
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import xarray as xr

from hpcrail import kinds
from hpcrail.results.dataset import build_dataset


def run_scenario(sc, progress=None, config_yaml: str | None = None, t_out: np.ndarray | None = None,
                 attrs: bool = True) -> xr.Dataset | None:
    """Run a validated scenario of any registered kind and return its dataset (failures are in
    ``status``; ``None`` on MPI ranks other than 0 of a ``partition.backend: mpi`` run).

    ``progress(t, t_end, stats)`` is called while it runs; ``t_out`` float64[k]: sample times [s] of
    the series (default: the scenario's ``output`` sampling); ``attrs=False`` leaves out provenance.
    Raises :class:`~hpcrail.results.outputs.OutputError` if the run's outputs do not match its kind's
    declarations.
    """
    kind = kinds.of(sc)
    res = kind.run(sc, progress=progress, t_out=t_out)
    if res is None:
        return None
    return build_dataset(kind, sc, res, config_yaml=config_yaml, attrs=attrs)


def run_batch(scenarios: list, t_outs: list | None = None, *, mode: str = "prange", threads: int = 1,
              attrs: bool = False) -> list:
    """Run many validated scenarios; returns, per scenario, its run dataset or the exception that
    prevented building, running or finishing it (the caller records it; the others are unaffected).

    ``t_outs``: per scenario, sample times [s] (None = the scenario's own ``output`` sampling).
    Scenarios whose kind has batch hooks (and that are eligible) go through one
    :func:`~hpcrail.integrators.batch.integrate_batch` call (``mode``/``threads`` as there); the others
    run one by one through their kind's ``run``.  ``attrs=False`` skips per-run provenance (a sweep
    stores it once).
    """
    from hpcrail.integrators.batch import check_item, integrate_batch

    n = len(scenarios)
    t_outs = list(t_outs) if t_outs is not None else [None] * n
    out: list = [None] * n
    prepared = []  # (index, kind, state, item)
    for i, sc in enumerate(scenarios):
        try:
            kind = kinds.of(sc)
            if kind.batchable(sc):
                state, item = kind.batch.prepare(sc, t_outs[i])
                check_item(item)
                prepared.append((i, kind, state, item))
            else:
                out[i] = run_scenario(sc, t_out=t_outs[i], attrs=attrs)
        except Exception as exc:  # noqa: BLE001 - a scenario's failure is data, the batch goes on
            out[i] = exc
    if prepared:
        sols = integrate_batch([p[3] for p in prepared], mode=mode, threads=threads)
        for (i, kind, state, _item), sol in zip(prepared, sols):
            try:
                out[i] = build_dataset(kind, scenarios[i], kind.batch.finish(scenarios[i], state, sol), attrs=attrs)
            except Exception as exc:  # noqa: BLE001
                out[i] = exc
    return out


@functools.lru_cache(maxsize=1)
def _stderr():
    from rich.console import Console

    return Console(stderr=True)


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


def progress_printer(label: str):
    """A progress callback ``(t, t_end, stats)`` showing simulated time, steps, elapsed and remaining
    wall time (the remaining time once a rate is known: never "nan").

    On a terminal it draws a rich progress bar; otherwise it prints a line every ~10 %.
    Returns ``(callback, close)``.
    """
    start = time.perf_counter()
    if sys.stderr.isatty() and not os.environ.get("CI"):
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        prog = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                        TextColumn("t = {task.completed:,.1f} / {task.total:,.0f} s"),
                        TextColumn("{task.fields[steps]} steps"), TextColumn("elapsed"), TimeElapsedColumn(),
                        TextColumn("remaining"), TimeRemainingColumn(), console=_stderr(), transient=True)
        task = None

        def cb(t, t_end, stats):
            nonlocal task
            if task is None:
                prog.start()
                task = prog.add_task(label, total=t_end, steps=0)
            prog.update(task, completed=t, steps=f"{stats['steps']:,}")

        return cb, prog.stop
    last = [-1]
    first = []

    def cb_plain(t, t_end, stats):
        now = time.perf_counter()
        if not first:  # the first chunk includes compilation: measure the rate from here on
            first.append((now, t))
        pct = int(10 * t / t_end) if t_end > 0 else 10
        if pct > last[0]:
            last[0] = pct
            el = now - start
            t_ref, s_ref = first[0]
            rate = (t - s_ref) / (now - t_ref) if now > t_ref and t > s_ref else 0.0
            rem = f", remaining {_hms((t_end - t) / rate)}" if rate > 0 else ""
            _stderr().print(f"{label}: t = {t:,.1f} / {t_end:,.0f} s ({100 * t / t_end:3.0f} %), "
                              f"{stats['steps']:,} steps, elapsed {_hms(el)}{rem}", highlight=False,
                             soft_wrap=True)   # a log line: never folded at the console width

    return cb_plain, lambda: None


# ------------------------------------------------------------------------------------------------
# the Python API's load / simulate (hpcrail.load, hpcrail.simulate; see hpcrail.api)
# ------------------------------------------------------------------------------------------------
def _override_items(overrides, kw: dict) -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    if overrides is None:
        pass
    elif isinstance(overrides, Mapping):
        items += [(str(k), v) for k, v in overrides.items()]
    elif isinstance(overrides, str):
        raise TypeError("overrides: a mapping {'dotted.path': value} or a list of 'dotted.path=value' strings, "
                        f"not the string {overrides!r}")
    else:
        from hpcrail.config.loading import parse_override

        for text in overrides:
            parts, value = parse_override(str(text))
            items.append((".".join(parts), value))
    items += [(k.replace("__", "."), v) for k, v in kw.items()]
    return items


def load(path: str | Path, overrides: Mapping[str, Any] | Iterable[str] | None = None, /, **kw):
    """Load, override and validate a scenario file of any model kind; returns the validated scenario.

    ``overrides``: ``{"simulation.duration_s": 600}`` or ``["simulation.duration_s=600"]`` (the dotted
    paths of ``hpcrail run --set``); keyword arguments do the same with ``__`` for the dots
    (``simulation__duration_s=600``).  The scenario validates assignments
    (``sc.simulation.duration_s = -1`` raises :class:`~hpcrail.config.errors.ConfigAssignmentError`, a
    ``ValueError`` naming the field, the value and what is allowed); :func:`simulate` validates the
    whole scenario again, cross-field rules included.

    Raises :class:`~hpcrail.config.ConfigError` listing every problem (file, field, value, allowed); warns
    with :class:`~hpcrail.config.errors.ConfigWarning` for a value far outside its field's usual range.
    """
    from hpcrail.config import ConfigError, ConfigIssue
    from hpcrail.config.loading import component_override, load_document, set_path
    from hpcrail.kinds import validate_document

    doc = load_document(path)
    issues = []
    try:
        items = _override_items(overrides, kw)
    except ValueError as exc:
        raise ConfigError([ConfigIssue("overrides", "(override)", str(exc))]) from None
    for dotted, value in items:
        parts = dotted.split(".")
        loc = tuple(int(p) if p.isdigit() else p for p in parts)
        try:
            resolved = component_override(doc, loc, value, "overrides")
            set_path(doc.tree, parts, resolved)
            if resolved is value:
                doc.origins[loc] = "overrides"
        except (KeyError, IndexError, ValueError) as exc:
            issues.append(ConfigIssue("overrides", dotted, str(exc.args[0] if exc.args else exc)))
        except ConfigError as exc:
            issues.extend(exc.issues)
    try:
        sc = validate_document(doc)
    except ConfigError as exc:
        raise ConfigError(issues + exc.issues) from None
    if issues:
        raise ConfigError(issues)
    if doc.warnings:
        import warnings

        from hpcrail.config.errors import ConfigWarning

        for w in doc.warnings:
            warnings.warn(str(w), ConfigWarning, stacklevel=2)
    return sc


def revalidate(scenario):
    """The scenario validated again from its canonical form, cross-field rules included (after
    assignments).  Raises :class:`~hpcrail.config.ConfigError`."""
    from hpcrail.config import Document
    from hpcrail.config.loading import canonical_dict
    from hpcrail.kinds import validate_document

    return validate_document(Document(tree=canonical_dict(scenario), root_file="<scenario>"))


def simulate(scenario, /, *, progress: bool = False, **overrides) -> xr.Dataset:
    """Run a scenario (validated scenario, or a scenario file path with ``overrides`` as in :func:`load`)
    and return its xarray Dataset — the dataset ``hpcrail run`` writes (failures are in ``status`` and
    ``message``, never exceptions).  ``progress``: print progress lines on stderr.

    Raises :class:`~hpcrail.config.ConfigError` for a scenario that does not validate.
    """
    from hpcrail.config.loading import canonical_yaml

    if isinstance(scenario, (str, Path)):
        sc = load(scenario, **overrides)
    else:
        if overrides:
            raise TypeError("overrides apply to a scenario file; set fields of a loaded scenario by assignment")
        sc = revalidate(scenario)
    cb, close = progress_printer(sc.name) if progress else (None, lambda: None)
    try:
        return run_scenario(sc, progress=cb, config_yaml=canonical_yaml(sc))
    finally:
        close()


class _CallableModule(types.ModuleType):
    """``hpcrail.simulate`` is this module and, called, the API function :func:`simulate`
    (``hpcrail.simulate(scenario)``: the package attribute is the module once it is imported)."""

    def __call__(self, scenario, /, **kw):
        return simulate(scenario, **kw)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["run_scenario", "run_batch", "load", "simulate", "revalidate", "progress_printer"]
