"""The LTD integration problem of a scenario (model, sparse Jacobian pattern, per-state tolerances)
and the choice of the run path's backend (monolithic or hidden-vehicle blocks)."""
from __future__ import annotations

import numba
from numba import types

from hpcrail.partition.backend import Backend, Capabilities, choose
from hpcrail.integrators import Problem
from hpcrail.integrators.linalg import JacobianPattern
from hpcrail.kinds.ltd.build import build_ltd
from hpcrail.models.ltd.jacobian import ltd_jacobian_pattern, ltd_rtol_scale
from hpcrail.models.ltd.kernels import LTDKernels, ltd_kernels  # noqa: F401  (re-exported: the kind's kernels)


def outputs_argtypes(p) -> tuple:
    """numba argument types of ``LTDKernels.outputs`` as :mod:`hpcrail.kinds.ltd.result` calls it."""
    f1, f2, f3 = types.float64[::1], types.float64[:, ::1], types.float64[:, :, ::1]
    return (f1, f2, numba.typeof(p), f3, f2, f1, f1)


def ltd_problem(sc):
    """``(model, Problem)`` of an LTD scenario, with its sparse Jacobian pattern and per-state relative
    tolerance factors for the implicit methods.  The pneumatic brake's pattern is ordered by the
    integrators (``auto``: reverse Cuthill-McKee when narrower): without the brake force's dependence on the
    cylinder (block-triangular system, :mod:`hpcrail.models.brakes.layout`) the motion and the brake states
    are separate chains, each a narrow band, where the vehicle-major order would give a band of the block size."""
    model = build_ltd(sc)
    n = model.y0.size
    rows, cols, border = ltd_jacobian_pattern(model.params, n)
    pattern = JacobianPattern.sparse(n, rows, cols, border=border,
                                     ordering="auto" if model.params.air_brake == 2 else "natural")
    k = ltd_kernels(model.params)
    prob = Problem(k.rhs, k.observe, model.params, model.y0, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0, jac=k.jac, jac_pattern=pattern, rtol_scale=ltd_rtol_scale(model.params, n),
                   precompile=((k.outputs, outputs_argtypes(model.params)),))
    from hpcrail.config.integrator import method_spec

    if method_spec(sc.integrator.method).multirate:   # blocks stepping at their own rates, one core
        from hpcrail.partition.ltd_multirate import multirate_problem

        prob = multirate_problem(model, prob, sc.partition.multirate_block_vehicles)
    return model, prob


#: what the LTD kind's run path offers (hidden-vehicle blocks on threads and MPI ranks, distributed state on both)
CAPABILITIES = Capabilities(threads=True, mpi=True, distributed=True)


def backend(sc, threads: int | None = None) -> Backend:
    """How an LTD scenario runs (:func:`hpcrail.partition.backend.choose`): ``auto`` stays monolithic for
    consists with laws the blocks do not evaluate; the pneumatic brake and remote locomotive groups
    (distributed power) run on blocks with shared state only (``state: auto`` picks shared; the distributed
    state's exchange rows do not carry the brake pipe's coupling states, docs/models.md; remote groups were never
    checked with distributed state); a multirate method walks its blocks on one core."""
    from hpcrail.config.integrator import method_spec
    from hpcrail.kinds.ltd.brakes import is_pneumatic
    from hpcrail.kinds.ltd.couplers import unpartitionable_laws

    if method_spec(sc.integrator.method).multirate:
        return Backend("off", "serial", "a multirate integrator walks its blocks on one core")
    why = list(unpartitionable_laws(sc)) if sc.partition.backend == "auto" else []
    shared_only = ["the pneumatic brake"] if is_pneumatic(sc) else []
    if any(e.remote is not None for e in sc.consist):
        shared_only.append("remote locomotives")
    return choose(CAPABILITIES, sc.partition, len(sc.vehicle_type_names()), sc.integrator.method, threads=threads,
                  unpartitionable=why, shared_only=shared_only)


def choose_backend(sc, threads: int | None = None) -> str:
    """``off``, ``threads`` or ``mpi``: :func:`backend`'s name."""
    return backend(sc, threads).name


__all__ = ["ltd_problem", "ltd_kernels", "LTDKernels", "backend", "choose_backend", "CAPABILITIES"]
