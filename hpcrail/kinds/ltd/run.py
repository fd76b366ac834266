"""Running an LTD scenario: the run paths (monolithic, dry-friction layer, hidden-vehicle partition, a
pneumatic-brake train in two passes: :mod:`hpcrail.kinds.ltd.two_pass`) and the batch hooks.  The problem
set-up is :mod:`hpcrail.kinds.ltd.problem`; the outputs as plain arrays
(:class:`~hpcrail.results.outputs.RunResult`, for the one dataset builder) are :mod:`hpcrail.kinds.ltd.result`.

Which path a scenario takes: a consist with dry-friction draft gears runs the friction layer
(:mod:`hpcrail.kinds.ltd.friction_layer`); a pneumatic brake with ``air_brake.pneumatic.passes: two`` runs in
two passes, monolithic (:mod:`hpcrail.kinds.ltd.two_pass`); otherwise ``partition.backend`` (``auto``: by train length
and thread count) chooses the monolithic model or hidden-vehicle blocks on threads or MPI ranks
(:mod:`hpcrail.kinds.ltd.partitioned`).  Smooth monolithic scenarios also run in sweeps through the
batch kernel (:func:`prepare`/:func:`finish`), with bit-for-bit the results of :func:`run`.
Source: Bosso et al. 2024 eqs (1)-(7).
"""
from __future__ import annotations

import numpy as np

from hpcrail.integrators import integrate
from hpcrail.integrators.batch import BatchItem
from hpcrail.kinds.ltd.outputs import SERIES_NAMES
from hpcrail.kinds.ltd.problem import choose_backend, ltd_problem
from hpcrail.kinds.ltd.result import add_envelope_check, friction_result, ltd_result
from hpcrail.kinds.ltd.safety import add_running_safety, sample_grid
from hpcrail.kinds.ltd.two_pass import integrate_two_pass, uses_two_passes
from hpcrail.results.outputs import RunResult
from hpcrail.results.sampling import sample_times


def _t_out(sc, t_out):
    return sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s) if t_out is None else \
        np.ascontiguousarray(t_out, dtype=float)


def run(sc, *, progress=None, t_out=None) -> RunResult | None:
    """Simulate an LTD scenario; returns its outputs (``None`` on MPI ranks other than 0 with
    ``partition.backend: mpi``).  ``t_out``: sample times [s] of the series (default: every
    ``output.interval_s`` and the end)."""
    from hpcrail.kinds.ltd.friction_layer import build_friction, friction_solve, has_friction

    t_req = _t_out(sc, t_out)
    t_out = sample_grid(sc, t_req)      # plus the running-safety samples (kinds/ltd/safety.py)
    if has_friction(sc):  # dry-friction draft gears (Oprea 2018): event-driven or regularised
        model = build_friction(sc)
        sol = friction_solve(model, sc, t_out, sc.simulation.duration_s, progress=progress)
        return _finish(sc, friction_result(sc, model, sol), t_req)
    two = uses_two_passes(sc)      # the pneumatic brake, then the motion (kinds/ltd/two_pass.py): one block
    backend = "off" if two else choose_backend(sc)
    if backend != "off":  # hidden-vehicle blocks on threads or MPI ranks (None on MPI ranks != 0)
        from hpcrail.kinds.ltd.partitioned import run_partitioned

        return _finish(sc, run_partitioned(sc, backend, t_out, progress=progress), t_req)
    model, prob = ltd_problem(sc)
    solve = integrate_two_pass if two else integrate
    sol = solve(prob, sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                **sc.integrator.kwargs())
    res = ltd_result(sc, model, sol)
    res.attrs["partition_state"] = "serial"
    if two:
        res.attrs["brake_passes"] = 2
    add_envelope_check(sc, res, sol, prob)
    return _finish(sc, res, t_req)


def _finish(sc, res, t_req):
    """The running-safety outputs of a result sampled at :func:`sample_grid`, and its series at ``t_req``."""
    if res is not None:
        add_running_safety(sc, res, t_req, SERIES_NAMES)
    return res


def prepare(sc, t_out=None):
    """Batch hook: ``((model, requested times, problem), BatchItem)`` of a smooth monolithic LTD scenario."""
    model, prob = ltd_problem(sc)
    t_req = _t_out(sc, t_out)
    return (model, t_req, prob), BatchItem(prob, sc.integrator.method, sample_grid(sc, t_req), sc.simulation.duration_s,
                                     **sc.integrator.kwargs())


def finish(sc, state, sol) -> RunResult:
    """Batch hook: the outputs of a scenario integrated by the batch kernel."""
    model, t_req, prob = state
    res = ltd_result(sc, model, sol)
    res.attrs["partition_state"] = "serial"
    add_envelope_check(sc, res, sol, prob)
    return _finish(sc, res, t_req)


def eligible(sc) -> bool:
    """Smooth, monolithic LTD scenarios share the batch kernel; dry-friction consists (event-driven),
    partitioned trains (hidden-vehicle blocks) and methods outside the batch kernel (multirate, CVODE: the
    catalogue's ``batch``) run one by one through :func:`run`."""
    from hpcrail.kinds.ltd.friction_layer import has_friction

    from hpcrail.config.integrator import method_spec

    return (not has_friction(sc) and not uses_two_passes(sc) and choose_backend(sc) == "off"
            and method_spec(sc.integrator.method).batch)


__all__ = ["run", "prepare", "finish", "eligible"]
