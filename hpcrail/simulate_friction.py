"""Glue for LTD consists with dry-friction draft gears (paper 003): scenario → friction model →
event-driven driver (:mod:`hpcrail.integrators.hybrid`) or ordinary integrator (regularised) →
dataset.  :func:`hpcrail.simulate.run_ltd` hands scenarios with ``kind: friction`` connections here.
"""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.integrators import Problem, Solution, integrate
from hpcrail.integrators.hybrid import integrate_hybrid
from hpcrail.models.friction.build import N_GUARDS, FrictionModel, build_friction
from hpcrail.models.friction.kernel import ed_guard, ed_jump, ed_observe, ed_rhs, reg_observe, reg_rhs


def friction_solve(model: FrictionModel, sc, t_out: np.ndarray, t_final: float, progress=None) -> Solution:
    """Integrate a built friction model with the scenario's treatment and integrator settings.

    The event-driven treatment integrates between events with ``integrator.method`` and locates events
    to ``friction.event_tolerance_s``; the regularised treatment is an ordinary integration.  Failures
    are reported in the solution's ``status``.
    """
    from hpcrail.simulate import integrator_kwargs

    kw = integrator_kwargs(sc.integrator)
    p = model.params
    if model.event_driven:
        fn = sc.friction
        return integrate_hybrid(ed_rhs, ed_observe, ed_guard, ed_jump, p, model.y0, N_GUARDS * p.mode.size,
                                sc.integrator.method, t_out, t_final, atol_scale=model.atol_scale,
                                acc0=model.acc0, event_tolerance=fn.event_tolerance_s, max_events=fn.max_events,
                                progress=progress, **kw)
    prob = Problem(reg_rhs, reg_observe, p, model.y0, t0=0.0, atol_scale=model.atol_scale, acc0=model.acc0)
    return integrate(prob, sc.integrator.method, t_out, t_final, progress=progress, **kw)


def run_friction(sc, progress=None, config_yaml: str | None = None) -> xr.Dataset:
    """Simulate an LTD scenario with friction draft gears and return its result dataset."""
    from hpcrail.results.friction import friction_dataset
    from hpcrail.simulate import sample_times

    model = build_friction(sc)
    t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
    sol = friction_solve(model, sc, t_out, sc.simulation.duration_s, progress=progress)
    return friction_dataset(sc, model, sol, config_yaml=config_yaml)
