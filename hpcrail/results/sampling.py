"""Output sampling shared by the kinds: the sample times of a run and the selection of a sweep's
coarser series grid from a run's own samples."""
from __future__ import annotations

import numpy as np


def sample_times(t0: float, t_end: float, interval: float) -> np.ndarray:
    """Sample times t0, t0+Δ, …, and t_end (always included) [s] (float64[k]); none beyond t_end (a
    last multiple t0 + nΔ that rounding puts above t_end, e.g. 0.002 × 475 > 0.95, is t_end)."""
    n = int(np.floor((t_end - t0) / interval + 1e-9))
    t = t0 + interval * np.arange(n + 1)
    t[-1] = min(t[-1], t_end)
    if t_end - t[-1] > 1e-9 * max(1.0, t_end):
        t = np.append(t, t_end)
    return t


def sample_indices(t_run: np.ndarray, t_out: np.ndarray, what: str = "the run") -> np.ndarray:
    """Indices of the times ``t_out`` among the samples ``t_run`` of a run (both [s], sorted).

    Raises ``ValueError`` naming ``what`` when a requested time is not one of the run's samples (a
    kind whose outputs depend on its own sampling cannot resample: the requested interval must be a
    whole multiple of its ``output.interval_s``)."""
    t_run = np.asarray(t_run, float)
    t_out = np.asarray(t_out, float)
    idx = np.clip(np.searchsorted(t_run, t_out - 1e-9), 0, max(t_run.size - 1, 0))
    tol = 1e-9 * max(1.0, float(np.max(np.abs(t_out))) if t_out.size else 1.0)
    bad = np.flatnonzero(np.abs(t_run[idx] - t_out) > tol) if t_run.size else np.arange(t_out.size)
    if bad.size:
        raise ValueError(f"sample time {t_out[bad[0]]:g} s is not a sample of {what}: the series interval must be a "
                         "whole multiple of its output.interval_s")
    return idx


def select_samples(res, t_out, series, what: str):
    """Keep only the samples at ``t_out`` [s] (float64[k']) of a run result ``res``
    (:class:`~hpcrail.results.outputs.RunResult`, modified and returned): its ``time`` and the first axis of
    each output named in ``series``.  How a kind whose outputs come from its own sampling serves a sweep's
    coarser series grid; raises ``ValueError`` naming ``what`` as :func:`sample_indices` does."""
    idx = sample_indices(res.time, t_out, what)
    res.time = res.time[idx]
    for name in series:
        res.values[name] = res.values[name][idx]
    return res


__all__ = ["sample_times", "sample_indices", "select_samples"]
