"""Glue: a validated scenario → model arrays → integrator → result dataset.

Scenario kinds (``model:`` key) register a runner here; ``hpcrail run`` and ``hpcrail sweep`` call
:func:`run_scenario` so both produce the same schema.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import xarray as xr

from hpcrail.integrators import Problem, integrate

_RUNNERS: dict[str, Callable] = {}


def register_runner(kind: str, fn: Callable) -> None:
    """``fn(scenario, progress=None, config_yaml=None) -> xr.Dataset`` for scenario kind ``kind``."""
    _RUNNERS[kind] = fn


def sample_times(t0: float, t_end: float, interval: float) -> np.ndarray:
    """Sample times t0, t0+Δ, …, and t_end (always included) [s]."""
    n = int(np.floor((t_end - t0) / interval + 1e-9))
    t = t0 + interval * np.arange(n + 1)
    if t_end - t[-1] > 1e-9 * max(1.0, t_end):
        t = np.append(t, t_end)
    return t


def ltd_problem(sc):
    """(model, Problem) for an LTD scenario."""
    from hpcrail.models.ltd.build import build_ltd
    from hpcrail.models.ltd.kernel import ltd_observe, ltd_rhs

    model = build_ltd(sc)
    prob = Problem(ltd_rhs, ltd_observe, model.params, model.y0, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0)
    return model, prob


def integrator_kwargs(it) -> dict:
    """Keyword arguments of :func:`hpcrail.integrators.integrate` from an ``integrator:`` block."""
    return dict(step=it.step_s or 0.0, rtol=it.rtol, atol=it.atol, hmin=it.min_step_s,
                hmax=it.max_step_s or 0.0, max_steps=it.max_steps)


def run_ltd(sc, progress=None, config_yaml: str | None = None) -> xr.Dataset:
    """Simulate an LTD scenario and return its result dataset (``None`` on MPI ranks other than 0 with
    ``partition.backend: mpi``)."""
    from hpcrail.partition.run import choose_backend, run_ltd_partitioned
    from hpcrail.results.ltd import ltd_dataset

    backend = choose_backend(sc.partition, len(sc.vehicle_type_names()))
    if backend != "off":  # hidden-vehicle blocks on threads or MPI ranks (None on MPI ranks != 0)
        return run_ltd_partitioned(sc, backend, progress=progress, config_yaml=config_yaml)
    model, prob = ltd_problem(sc)
    t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
    sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                    **integrator_kwargs(sc.integrator))
    return ltd_dataset(sc, model, sol, config_yaml=config_yaml)


register_runner("ltd", run_ltd)


def run_scenario(sc, progress=None, config_yaml: str | None = None) -> xr.Dataset:
    """Run any registered scenario kind; returns its dataset (failures are in ``status``)."""
    kind = getattr(sc, "model", "ltd")
    if kind not in _RUNNERS:
        raise KeyError(f"no runner registered for scenario model {kind!r}")
    return _RUNNERS[kind](sc, progress=progress, config_yaml=config_yaml)
