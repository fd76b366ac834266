"""Running scenarios of any kind: :func:`run_scenario` (one run → its dataset) and :func:`run_batch`
(many scenarios; those whose kind has batch hooks share one compiled batch kernel).

Both read only the kinds' descriptors (:mod:`hpcrail.kinds`): a kind's ``run`` (or batch
``finish``) returns its declared outputs as plain arrays and the one builder
:func:`hpcrail.results.dataset.build_dataset` makes the dataset, so ``hpcrail run`` and ``hpcrail
sweep`` share one schema per kind.
"""
from __future__ import annotations

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


__all__ = ["run_scenario", "run_batch"]
