"""Scenario kind ``model: vertical``: schema registration, solver dispatch and runner.

Solvers (``integrator.method``):

* ``recurrence`` — paper 001 eq (12), implicit Euler with (I − Δt A) factorised once (first order);
* ``exact`` — exact discretisation of the linear model by the matrix exponential (``hold: foh`` or
  ``zoh``; linear models only);
* any registered integrator (``rk4``, ``dopri5``/``ode45`` …) on the state-space ODE form, in which
  the massless damper nodes are first-order states.  The index-1 DAE form with a singular diagonal
  mass matrix (:func:`hpcrail.models.vertical.build.dae_form` +
  :func:`hpcrail.models.vertical.kernel.vertical_dae_rhs`) is the hook for implicit DAE methods.

:func:`run_realisations` runs one compiled model over many irregularity seeds on threads (the
numba kernels release the GIL) and returns the ride metrics per realisation.
"""
from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import os

import numpy as np
import xarray as xr

from hpcrail.config import register_kind
from hpcrail.config.vertical import VerticalScenario, check_vertical
from hpcrail.integrators import Problem, integrate
from hpcrail.integrators.contract import Solution
from hpcrail.integrators.statespace import discretise, implicit_euler_matrix, run_lti, run_recurrence
from hpcrail.models.vertical.build import VerticalModel, build_profile, build_vertical, initial_accumulator, with_profile
from hpcrail.models.vertical.kernel import vertical_inputs, vertical_observe, vertical_rhs
from hpcrail.simulate import integrator_kwargs, register_runner, sample_times

register_kind("vertical", VerticalScenario, check_vertical)


@dataclasses.dataclass
class SolverSetup:
    """Matrices of the fixed-step state-space solvers (computed once per model and step)."""

    method: str
    h: float
    mats: tuple


def solver_setup(model: VerticalModel, it) -> SolverSetup | None:
    """Discretise (``exact``) or factorise (``recurrence``) once; ``None`` for registry integrators."""
    if it.method == "exact":
        return SolverSetup("exact", it.step_s, discretise(model.ss.A, model.ss.B_w, it.step_s, it.hold))
    if it.method == "recurrence":
        return SolverSetup("recurrence", it.step_s, (implicit_euler_matrix(model.ss.A, it.step_s),))
    return None


def solve(model: VerticalModel, it, duration_s: float, interval_s: float, progress=None, params=None,
          setup: SolverSetup | None = None, n_chunks: int = 50) -> Solution:
    """Integrate the model with the solver of the ``integrator`` block ``it``.

    Returns a :class:`~hpcrail.integrators.contract.Solution` of dynamic states sampled every
    ``interval_s``.  ``params`` overrides the model's parameters (another track realisation);
    ``setup`` reuses matrices from :func:`solver_setup`.  Raises ``ValueError`` if a fixed-step
    solver's step does not divide ``duration_s`` and ``interval_s``.
    """
    p = params if params is not None else model.params
    acc0 = initial_accumulator(p)
    if it.method in ("exact", "recurrence"):
        setup = setup or solver_setup(model, it)
        h = setup.h
        nsteps = int(round(duration_s / h))
        stride = int(round(interval_s / h))
        for name, val, k in (("duration_s", duration_s, nsteps), ("interval_s", interval_s, stride)):
            if k < 1 or abs(val - k * h) > 1e-9 * max(1.0, val):
                raise ValueError(f"{name} = {val} s is not a whole multiple of the step {h} s")
        if setup.method == "exact":
            Phi, G0, G1 = setup.mats
            return run_lti(Phi, G0, G1, vertical_inputs, vertical_observe, p, model.y0, h=h, nsteps=nsteps,
                           stride=stride, acc0=acc0, progress=progress, n_chunks=n_chunks,
                           method_name=f"exact ({it.hold})")
        return run_recurrence(setup.mats[0], vertical_rhs, vertical_observe, p, model.y0, h=h, nsteps=nsteps,
                              stride=stride, acc0=acc0, progress=progress, n_chunks=n_chunks)
    prob = Problem(vertical_rhs, vertical_observe, p, model.y0, acc0=acc0)
    t_out = sample_times(0.0, duration_s, interval_s)
    return integrate(prob, it.method, t_out, duration_s, progress=progress, n_chunks=n_chunks,
                     **integrator_kwargs(it))


def run_vertical(sc: VerticalScenario, progress=None, config_yaml: str | None = None) -> xr.Dataset:
    """Simulate a vertical scenario and return its result dataset (failures in ``status``)."""
    from hpcrail.results.vertical import vertical_dataset

    model = build_vertical(sc)
    sol = solve(model, sc.integrator, sc.simulation.duration_s, sc.output.interval_s, progress=progress)
    return vertical_dataset(sc, model, sol, config_yaml=config_yaml)


register_runner("vertical", run_vertical)


def _realisation_results(sc: VerticalScenario, seeds: list, threads: int, keep_series: bool) -> list:
    """Metrics of every seed (one model and discretisation, ``threads`` threads); list of dicts."""
    from hpcrail.results.vertical import run_metrics, sampled_outputs

    model = build_vertical(sc)
    setup = solver_setup(model, sc.integrator)

    def one(seed):
        sc_k = sc.model_copy(update={"track": sc.track.model_copy(update={
            "irregularity": sc.track.irregularity.model_copy(update={"seed": seed})})})
        prof = build_profile(sc_k, model.asm.wheel_x)
        p = with_profile(model, prof)
        sol = solve(model, sc.integrator, sc.simulation.duration_s, sc.output.interval_s, params=p, setup=setup,
                    n_chunks=1)
        fa = sampled_outputs(model, sol.t, sol.y, p)["floor_acc"]
        _, metrics = run_metrics(sc_k, model, sol, fa, p)
        out = dict(metrics)
        out["status"] = sol.status.name.lower()
        out["wall_time"] = sol.wall_time
        if keep_series:
            out["floor_acceleration"] = fa
            out["time"] = sol.t
        return out

    if threads <= 1:
        return [one(s) for s in seeds]
    with cf.ThreadPoolExecutor(threads) as ex:
        return list(ex.map(one, seeds))


def _realisation_chunk(sc_json: str, seeds: list, keep_series: bool) -> list:
    """Worker-process entry of :func:`run_realisations` (the scenario travels as JSON)."""
    return _realisation_results(VerticalScenario.model_validate_json(sc_json), seeds, 1, keep_series)


def run_realisations(sc: VerticalScenario, seeds, threads: int | None = None, keep_series: bool = False,
                     processes: int = 0) -> xr.Dataset:
    """Run ``sc`` over one track realisation per seed (``track.irregularity.kind: psd``) with one
    compiled model and discretisation.

    ``threads``: threads in this process (default: all cores); the numba kernels release the GIL,
    the synthesis and the comfort FFTs (about a third of the time) do not.  ``processes`` > 0: that
    many worker processes instead, each running a contiguous chunk of the seeds (no GIL limit; each
    worker loads the compiled kernels from the numba cache once).

    Returns a dataset with dimension ``realisation`` (the seeds) holding the scalar ride metrics of
    :data:`hpcrail.results.vertical.VERTICAL_METRICS`, ``status`` and ``wall_time`` per realisation
    (and ``floor_acceleration`` (realisation, time, floor_point) if ``keep_series``).  Each
    realisation equals a single run of ``sc`` with ``track.irregularity.seed`` set to its seed.

    Raises ``ValueError`` if the scenario has no PSD irregularity.
    """
    from hpcrail.results.vertical import VERTICAL_METRICS

    if sc.track.irregularity.kind != "psd":
        raise ValueError("run_realisations needs track.irregularity.kind: psd")
    seeds = [int(s) for s in seeds]
    if processes and processes > 0:
        import multiprocessing as mp

        chunks = [[int(x) for x in c] for c in np.array_split(np.array(seeds, dtype=np.int64), processes) if c.size]
        with cf.ProcessPoolExecutor(len(chunks), mp_context=mp.get_context("spawn")) as ex:
            parts = ex.map(_realisation_chunk, [sc.model_dump_json()] * len(chunks), chunks,
                           [keep_series] * len(chunks))
            results = [r for part in parts for r in part]
    else:
        results = _realisation_results(sc, seeds, threads or os.cpu_count() or 1, keep_series)
    model = build_vertical(sc) if keep_series else None
    data = {}
    for name, (units, ln, _d, _f) in VERTICAL_METRICS.items():
        data[name] = ("realisation", np.array([r[name] for r in results]), {"units": units, "long_name": ln})
    data["status"] = ("realisation", np.array([r["status"] for r in results]), {"long_name": "integration status"})
    data["wall_time"] = ("realisation", np.array([r["wall_time"] for r in results]),
                         {"units": "s", "long_name": "wall-clock time of the integration"})
    coords = {"realisation": ("realisation", np.array(seeds), {"long_name": "track irregularity seed"})}
    if keep_series:
        coords["time"] = ("time", results[0]["time"], {"units": "s", "long_name": "simulated time"})
        coords["floor_point"] = ("floor_point", np.asarray(model.asm.floor_names, dtype=str),
                                 {"long_name": "car-body floor point"})
        data["floor_acceleration"] = (("realisation", "time", "floor_point"),
                                      np.stack([r["floor_acceleration"] for r in results]),
                                      {"units": "m s-2", "long_name": "vertical floor acceleration"})
    return xr.Dataset(data, coords=coords, attrs={"scenario_name": sc.name, "model": "vertical"})
