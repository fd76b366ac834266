"""The LTD integration problem of a scenario (model, sparse Jacobian pattern, per-state tolerances)
and the choice of the run path's backend (monolithic or hidden-vehicle blocks)."""
from __future__ import annotations

from hpcrail.integrators import Problem
from hpcrail.integrators.linalg import JacobianPattern
from hpcrail.kinds.ltd.build import build_ltd
from hpcrail.models.ltd.jacobian import ltd_jac, ltd_jacobian_pattern, ltd_rtol_scale
from hpcrail.models.ltd.kernel import ltd_observe, ltd_rhs


def ltd_problem(sc):
    """``(model, Problem)`` of an LTD scenario, with its sparse Jacobian pattern and per-state relative
    tolerance factors for the implicit methods."""
    model = build_ltd(sc)
    n = model.y0.size
    rows, cols, border = ltd_jacobian_pattern(model.params, n)
    pattern = JacobianPattern.sparse(n, rows, cols, border=border, ordering="natural")
    prob = Problem(ltd_rhs, ltd_observe, model.params, model.y0, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0, jac=ltd_jac, jac_pattern=pattern, rtol_scale=ltd_rtol_scale(model.params, n))
    return model, prob


def choose_backend(sc, threads: int | None = None) -> str:
    """``off``, ``threads`` or ``mpi`` for the scenario's ``partition:`` block (see
    :func:`hpcrail.partition.layout.choose_backend`): ``auto`` stays monolithic for consists with
    laws the blocks do not evaluate."""
    from hpcrail.kinds.ltd.couplers import unpartitionable_laws
    from hpcrail.partition.layout import choose_backend as choose

    spec = sc.partition
    if spec.backend == "auto" and unpartitionable_laws(sc):
        return "off"
    return choose(spec, len(sc.vehicle_type_names()), threads)


__all__ = ["ltd_problem", "choose_backend"]
