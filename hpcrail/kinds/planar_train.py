"""Scenario kind ``model: planar_train``: planar cars with inertial or noninertial couplers (paper 002).

Registers the schema (:mod:`hpcrail.config.planar_train`) and the runner, and a linearisation for
``hpcrail modes``.
"""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.config import register_kind
from hpcrail.config.planar_train import PlanarTrainScenario, check_planar_train
from hpcrail.integrators import Problem, integrate
from hpcrail.simulate import integrator_kwargs, register_runner, sample_times


def planar_problem(sc: PlanarTrainScenario):
    """(model, Problem) for a planar-train scenario."""
    from hpcrail.models.couplers.planar_build import build_planar
    from hpcrail.models.couplers.planar_kernel import planar_observe, planar_rhs

    model = build_planar(sc)
    prob = Problem(planar_rhs, planar_observe, model.params, model.y0, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0)
    return model, prob


def run_planar_train(sc: PlanarTrainScenario, progress=None, config_yaml: str | None = None) -> xr.Dataset:
    """Simulate a planar-train scenario and return its result dataset (failures are in ``status``)."""
    from hpcrail.results.planar import planar_dataset

    model, prob = planar_problem(sc)
    t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
    # without a progress display one kernel call: chunking costs a parameter unboxing per chunk,
    # which dominates short runs of small models
    sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                    n_chunks=200 if progress is not None else 1, **integrator_kwargs(sc.integrator))
    return planar_dataset(sc, model, sol, config_yaml=config_yaml)


def planar_linearisation(sc: PlanarTrainScenario, at: float = 0.0):
    """Linearisation data for :mod:`hpcrail.analysis.modes` (state at time ``at``, integrated there
    from the initial state if ``at`` > 0)."""
    from hpcrail.analysis.modes import Linearisation

    model, prob = planar_problem(sc)
    y = model.y0.copy()
    if at > 0.0:
        sol = integrate(prob, sc.integrator.method, np.array([at]), at, n_chunks=1,
                        **integrator_kwargs(sc.integrator))
        if not sol.success:
            raise RuntimeError(f"integration to t = {at} s failed: {sol.message}")
        y = sol.y_final.copy()
    pos = model.position_indices()
    vel = model.velocity_indices()
    N = model.n_cars
    names = [model.state_names[i] for i in pos]
    # physical coordinates: car arc lengths instead of the head position and gaps
    T = np.eye(pos.size)
    for j in range(1, N):
        T[3 * j, :] = 0.0
        T[3 * j, 0] = 1.0
        for i in range(1, j + 1):
            T[3 * j, 3 * i] = -1.0
    phys_names = list(names)
    for j in range(N):
        phys_names[3 * j] = f"car {j + 1} longitudinal"
    scales = np.ones(pos.size)
    for j in range(N):
        scales[3 * j + 2] = sc.car_types[model.vehicle_types[j]].coupler_pivot_from_centre_m  # yaw → m at the car end
    if model.params.inertial:
        ls = sc.coupler.shank.length_m
        for k in range(N - 1):
            b = 3 * N + 4 * k
            scales[b + 1] = ls
            scales[b + 3] = ls
    return Linearisation(rhs=prob.rhs, params=model.params, t=float(at), y=y, pos=pos, vel=vel,
                         coord_names=phys_names, coord_transform=T, coord_scales=scales,
                         description=f"{sc.name} ({model.coupler_model} couplers)")


register_kind("planar_train", PlanarTrainScenario, check_planar_train)
register_runner("planar_train", run_planar_train)
try:  # the modes analysis registers linearisations by kind
    from hpcrail.analysis.modes import register_linearisation

    register_linearisation("planar_train", planar_linearisation)
except ImportError:  # pragma: no cover
    pass
