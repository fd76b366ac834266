"""Variance-based sensitivity of a study's metrics: Sobol' indices with SALib (Saltelli 2002; Saltelli
et al. 2010; Herman & Usher 2017) from a sweep of design ``saltelli``.

The store records what the analysis needs: the design, the base samples N (``samples``), whether the
second-order points were drawn (``second_order``) and the parameters in order; its scenarios are SALib's
Saltelli points in SALib's order, so a metric along ``scenario`` is SALib's ``Y``.  A scenario that did
not complete leaves its whole block of D + 2 (2D + 2) scenarios out; the indices then use the remaining
base samples (the count is reported).
"""
from __future__ import annotations

import contextlib
import json

import numpy as np
import pandas as pd
import xarray as xr

from hpcrail.results.outputs import SUCCESS

#: confidence level of the bootstrap intervals
CONF_LEVEL = 0.95
#: bootstrap resamples of the confidence intervals
NUM_RESAMPLES = 1000


def supports_sobol(ds: xr.Dataset) -> bool:
    """True for a sweep store of design ``saltelli``."""
    return str(ds.attrs.get("design", "")) == "saltelli"


def _strings(values) -> np.ndarray:
    return np.array([str(x) for x in np.asarray(values).astype(object).ravel()], dtype=object)


@contextlib.contextmanager
def salib_rng(seed: int):
    """Run a SALib analyser reproducibly and without side effects: SALib (1.5-1.6) draws its bootstraps from
    numpy's *global* random state and seeds it only ``if seed:`` — seed 0 (the sweeps' default) left it unseeded,
    so the same store gave other indices and confidence intervals on every call (measured: a make-up study's
    first-order index 0.677 then 0.729, ± 0.039).  Inside this block the global state is seeded with ``seed``
    (any seed, 0 included); the caller's global state is restored afterwards.  Pass the same ``seed`` to the
    analyser: with a non-zero seed SALib's own seeding gives what it gave before."""
    state = np.random.get_state()
    np.random.seed(int(seed) % 2**32)
    try:
        yield
    finally:
        np.random.set_state(state)


def sobol_indices(ds: xr.Dataset, metrics: list[str], parameters: list[str], *, conf_level: float = CONF_LEVEL,
                  num_resamples: int = NUM_RESAMPLES, seed: int | None = None) -> pd.DataFrame:
    """First-order (S1) and total (ST) Sobol' indices of ``metrics`` with respect to ``parameters`` (the
    swept parameters in spec order) and their bootstrap confidence half-widths ``S1_conf``/``ST_conf``
    at ``conf_level``, from SALib's ``sobol.analyze``.

    Returns a DataFrame indexed by (metric, parameter) with columns ``S1, S1_conf, ST, ST_conf`` and
    ``samples`` (the base samples used).  Metrics whose completed values do not vary get NaN indices.
    ``seed`` (default the store's): the bootstrap's seed — the same store and seed give the same table
    (:func:`salib_rng`).  Raises ``ValueError`` for a store of another design, a store whose size does not match
    its design, or when no complete Saltelli block remains.
    """
    from SALib.analyze import sobol as sobol_analyze

    from hpcrail.results.saltelli import saltelli_block, saltelli_problem

    if not supports_sobol(ds):
        raise ValueError(f"Sobol' indices need a sweep of design 'saltelli' (this store's design is "
                         f"{ds.attrs.get('design', 'none')!r}): set design: saltelli and samples: N in the spec")
    d = len(parameters)
    second = bool(int(ds.attrs.get("second_order", 0)))
    block = saltelli_block(d, second)
    n_base = int(ds.attrs.get("samples", 0))
    size = ds.sizes["scenario"]
    if size != n_base * block:
        raise ValueError(f"a saltelli store of {n_base} base samples and {d} parameters has {n_base * block} "
                         f"scenarios, this one {size}")
    status = _strings(ds["status"].values)
    done = np.asarray(ds["done"].values).astype(bool) if "done" in ds else np.ones(size, bool)
    ok = (done & np.isin(status, SUCCESS)).reshape(n_base, block)
    rows = []
    problem = saltelli_problem(d)
    for m in metrics:
        y = np.asarray(ds[m].values, dtype=float).reshape(n_base, block)
        keep = ok.all(axis=1) & np.isfinite(y).all(axis=1)
        n = int(keep.sum())
        if n == 0:
            raise ValueError(f"no complete Saltelli block for {m!r}: every base sample has a scenario that did not "
                             "complete")
        yk = y[keep].ravel()
        if np.ptp(yk) <= 1e-12 * max(1.0, float(np.max(np.abs(yk)))):
            res = {k: np.full(d, np.nan) for k in ("S1", "S1_conf", "ST", "ST_conf")}
        else:
            sd = int(ds.attrs.get("seed", 0)) if seed is None else int(seed)
            with salib_rng(sd):
                res = sobol_analyze.analyze(problem, yk, calc_second_order=second, num_resamples=num_resamples,
                                            conf_level=conf_level, print_to_console=False, seed=sd)
        for j, p in enumerate(parameters):
            rows.append({"metric": m, "parameter": p, "S1": float(res["S1"][j]), "S1_conf": float(res["S1_conf"][j]),
                         "ST": float(res["ST"][j]), "ST_conf": float(res["ST_conf"][j]), "samples": n})
    return pd.DataFrame(rows).set_index(["metric", "parameter"])


def problem_description(ds: xr.Dataset) -> str:
    """One line: the parameters and their distributions (from the store's ``parameters`` attribute)."""
    try:
        params = json.loads(ds.attrs.get("parameters", "[]"))
    except ValueError:
        params = []
    return ", ".join(f"{p.get('label') or p['name']} ({p.get('source', '')})" for p in params)


__all__ = ["sobol_indices", "supports_sobol", "problem_description", "CONF_LEVEL", "NUM_RESAMPLES"]
