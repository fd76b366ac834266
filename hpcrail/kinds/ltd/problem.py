"""The LTD integration problem of a scenario (model, sparse Jacobian pattern, per-state tolerances)
and the choice of the run path's backend (monolithic or hidden-vehicle blocks)."""
from __future__ import annotations

from typing import NamedTuple

import numba
from numba import types

from hpcrail.integrators import Problem
from hpcrail.integrators.linalg import JacobianPattern
from hpcrail.kinds.ltd.build import build_ltd
from hpcrail.models.ltd.jacobian import (
    ltd_jac,
    ltd_jac_pneumatic,
    ltd_jac_tables,
    ltd_jacobian_pattern,
    ltd_rtol_scale,
)
from hpcrail.models.ltd.kernel import (
    ltd_observe,
    ltd_observe_pneumatic,
    ltd_observe_tables,
    ltd_outputs,
    ltd_outputs_pneumatic,
    ltd_outputs_tables,
    ltd_rhs,
    ltd_rhs_pneumatic,
    ltd_rhs_tables,
)


class LTDKernels(NamedTuple):
    """The compiled functions one LTD train runs with (numba dispatchers, integrator contract)."""
    rhs: object
    jac: object
    observe: object
    outputs: object


def outputs_argtypes(p) -> tuple:
    """numba argument types of ``LTDKernels.outputs`` as :mod:`hpcrail.kinds.ltd.result` calls it."""
    f1, f2, f3 = types.float64[::1], types.float64[:, ::1], types.float64[:, :, ::1]
    return (f1, f2, numba.typeof(p), f3, f2, f1, f1)


def ltd_kernels(p) -> LTDKernels:
    """Kernels for the train of parameters ``p``: trains without noninertial couplers get the table-law
    variants, which never compile the noninertial coupler's Newton solver (bitwise the same results;
    the first run of train 4 compiles ~40 % less, issue 17 item 5).  Trains with the pneumatic brake
    (``p.air_brake == 2``, table-law connections only) get its variants."""
    if p.air_brake == 2:
        return LTDKernels(ltd_rhs_pneumatic, ltd_jac_pneumatic, ltd_observe_pneumatic, ltd_outputs_pneumatic)
    if p.n_noninertial == 0:
        return LTDKernels(ltd_rhs_tables, ltd_jac_tables, ltd_observe_tables, ltd_outputs_tables)
    return LTDKernels(ltd_rhs, ltd_jac, ltd_observe, ltd_outputs)


def ltd_problem(sc):
    """``(model, Problem)`` of an LTD scenario, with its sparse Jacobian pattern and per-state relative
    tolerance factors for the implicit methods.  The pneumatic brake's pattern is ordered by the
    integrators (``auto``: reverse Cuthill-McKee when narrower): without the brake force's dependence on the
    cylinder (block-triangular system, :mod:`hpcrail.models.brakes.layout`) the motion and the brake states
    are two chains, each a narrow band, where the vehicle-major order would give a band of the block size."""
    model = build_ltd(sc)
    n = model.y0.size
    rows, cols, border = ltd_jacobian_pattern(model.params, n)
    pattern = JacobianPattern.sparse(n, rows, cols, border=border,
                                     ordering="auto" if model.params.air_brake == 2 else "natural")
    k = ltd_kernels(model.params)
    prob = Problem(k.rhs, k.observe, model.params, model.y0, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0, jac=k.jac, jac_pattern=pattern, rtol_scale=ltd_rtol_scale(model.params, n),
                   precompile=((k.outputs, outputs_argtypes(model.params)),))
    return model, prob


def choose_backend(sc, threads: int | None = None) -> str:
    """``off``, ``threads`` or ``mpi`` for the scenario's ``partition:`` block (see
    :func:`hpcrail.partition.layout.choose_backend`): ``auto`` stays monolithic for consists with
    laws the blocks do not evaluate."""
    from hpcrail.kinds.ltd.couplers import unpartitionable_laws
    from hpcrail.partition.layout import choose_backend as choose

    from hpcrail.kinds.ltd.brakes import is_pneumatic

    spec = sc.partition
    if spec.backend == "auto" and (unpartitionable_laws(sc) or is_pneumatic(sc) or any(e.remote for e in sc.consist)):
        return "off"
    return choose(spec, len(sc.vehicle_type_names()), threads)


__all__ = ["ltd_problem", "ltd_kernels", "LTDKernels", "choose_backend"]
