"""Glue: a validated scenario → model arrays → integrator → result dataset.

Scenario kinds (``model:`` key) register a runner here; ``hpcrail run`` calls :func:`run_scenario`.
Kinds whose problem fits the integrator contract also register a *batched* runner (a ``prepare``
that builds the :class:`~hpcrail.integrators.batch.BatchItem` and a ``finish`` that builds the run
dataset); ``hpcrail sweep`` calls :func:`run_batch`, which runs many scenarios through one compiled
batch kernel and returns the same datasets, so run and sweep share one schema.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import xarray as xr

from hpcrail.integrators import Problem, integrate
from hpcrail.integrators.batch import BatchItem, check_item, integrate_batch

_RUNNERS: dict[str, Callable] = {}
_BATCHED: dict[str, tuple[Callable, Callable, Callable | None]] = {}


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
    """(model, Problem) for an LTD scenario (with its Jacobian pattern for the implicit methods)."""
    from hpcrail.integrators.linalg import JacobianPattern
    from hpcrail.models.ltd.build import build_ltd
    from hpcrail.models.ltd.jacobian import ltd_jac, ltd_jacobian_pattern, ltd_rtol_scale
    from hpcrail.models.ltd.kernel import ltd_observe, ltd_rhs

    model = build_ltd(sc)
    n = model.y0.size
    rows, cols, border = ltd_jacobian_pattern(model.params, n)
    pattern = JacobianPattern.sparse(n, rows, cols, border=border, ordering="natural")
    prob = Problem(ltd_rhs, ltd_observe, model.params, model.y0, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0, jac=ltd_jac, jac_pattern=pattern, rtol_scale=ltd_rtol_scale(model.params, n))
    return model, prob


def integrator_kwargs(it) -> dict:
    """Keyword arguments of :func:`hpcrail.integrators.integrate` from an ``integrator:`` block."""
    return dict(step=it.step_s or 0.0, rtol=it.rtol, atol=it.atol, hmin=it.min_step_s,
                hmax=it.max_step_s or 0.0, max_steps=it.max_steps, options=dict(getattr(it, "options", None) or {}),
                jacobian=getattr(it, "jacobian", "auto"))


def run_ltd(sc, progress=None, config_yaml: str | None = None) -> xr.Dataset:
    """Simulate an LTD scenario and return its result dataset (``None`` on MPI ranks other than 0 with
    ``partition.backend: mpi``)."""
    from hpcrail.models.friction.build import has_friction
    from hpcrail.partition.run import choose_backend, run_ltd_partitioned
    from hpcrail.results.ltd import ltd_dataset

    if has_friction(sc):  # dry-friction draft gears (paper 003): event-driven or regularised
        from hpcrail.simulate_friction import run_friction

        return run_friction(sc, progress=progress, config_yaml=config_yaml)
    backend = choose_backend(sc.partition, len(sc.vehicle_type_names()))
    if backend != "off":  # hidden-vehicle blocks on threads or MPI ranks (None on MPI ranks != 0)
        return run_ltd_partitioned(sc, backend, progress=progress, config_yaml=config_yaml)
    model, prob = ltd_problem(sc)
    t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
    sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                    **integrator_kwargs(sc.integrator))
    return ltd_dataset(sc, model, sol, config_yaml=config_yaml)


def ltd_prepare(sc, t_out: np.ndarray | None = None):
    """``(model, BatchItem)`` of an LTD scenario; ``t_out`` [s] defaults to the scenario's sampling."""
    model, prob = ltd_problem(sc)
    if t_out is None:
        t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
    return model, BatchItem(prob, sc.integrator.method, t_out, sc.simulation.duration_s,
                            **integrator_kwargs(sc.integrator))


def ltd_finish(sc, model, sol, attrs: bool = True) -> xr.Dataset:
    from hpcrail.results.ltd import ltd_dataset

    return ltd_dataset(sc, model, sol, attrs=attrs)


register_runner("ltd", run_ltd)


def register_batched(kind: str, prepare: Callable, finish: Callable, eligible: Callable | None = None) -> None:
    """Batched runner of scenario kind ``kind``: ``prepare(sc, t_out=None) -> (state, BatchItem)``
    and ``finish(sc, state, solution, attrs=True) -> xr.Dataset`` (the run dataset).  ``eligible(sc)``
    (optional) says whether a scenario of this kind fits the batch kernel; the others run one by
    one through :func:`run_scenario` (e.g. event-driven dry-friction draft gears)."""
    _BATCHED[kind] = (prepare, finish, eligible)


def _ltd_batchable(sc) -> bool:
    """Smooth, monolithic LTD scenarios share the batch kernel; dry-friction consists (event-driven)
    and partitioned trains (hidden-vehicle blocks) run one by one through :func:`run_ltd`."""
    from hpcrail.models.friction.build import has_friction
    from hpcrail.partition.run import choose_backend

    return not has_friction(sc) and choose_backend(sc.partition, len(sc.vehicle_type_names())) == "off"


register_batched("ltd", ltd_prepare, ltd_finish, _ltd_batchable)


def run_batch(scenarios: list, t_outs: list | None = None, *, mode: str = "prange", threads: int = 1,
              attrs: bool = False) -> list:
    """Run many validated scenarios; returns, per scenario, its run dataset or the exception that
    prevented building or finishing it (the caller records it; the others are unaffected).

    ``t_outs``: per scenario, sample times [s] (None = the scenario's own ``output`` sampling).
    Kinds with a batched runner go through one :func:`~hpcrail.integrators.batch.integrate_batch`
    call (``mode``/``threads`` as there); other kinds run one by one with :func:`run_scenario`.
    ``attrs=False`` skips per-run provenance attributes (a sweep stores them once).
    """
    n = len(scenarios)
    t_outs = list(t_outs) if t_outs is not None else [None] * n
    out: list = [None] * n
    prepared = []  # (index, finish, state, item)
    for i, sc in enumerate(scenarios):
        kind = getattr(sc, "model", "ltd")
        try:
            batched = _BATCHED.get(kind)
            if batched is not None and (batched[2] is None or batched[2](sc)):
                prepare, finish, _eligible = batched
                state, item = prepare(sc, t_outs[i])
                check_item(item)
                prepared.append((i, finish, state, item))
            else:
                out[i] = run_scenario(sc)
        except Exception as exc:  # noqa: BLE001 - a scenario's failure is data, the batch goes on
            out[i] = exc
    if prepared:
        sols = integrate_batch([p[3] for p in prepared], mode=mode, threads=threads)
        for (i, finish, state, _item), sol in zip(prepared, sols):
            try:
                out[i] = finish(scenarios[i], state, sol, attrs=attrs)
            except Exception as exc:  # noqa: BLE001
                out[i] = exc
    return out


def run_scenario(sc, progress=None, config_yaml: str | None = None) -> xr.Dataset:
    """Run any registered scenario kind; returns its dataset (failures are in ``status``)."""
    kind = getattr(sc, "model", "ltd")
    if kind not in _RUNNERS:
        raise KeyError(f"no runner registered for scenario model {kind!r}")
    return _RUNNERS[kind](sc, progress=progress, config_yaml=config_yaml)
