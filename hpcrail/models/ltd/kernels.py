"""The set of compiled LTD functions a train runs with (right-hand side, Jacobian, observer, outputs).

Shared by every kind that integrates LTD states (the ``ltd`` kind, the consist part of a ``mixed_train``):
the choice depends on the model's parameters only, so it lives with the kernels.
"""
from __future__ import annotations

from typing import NamedTuple

from hpcrail.models.ltd.jacobian import ltd_jac, ltd_jac_pneumatic, ltd_jac_tables
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


def ltd_kernels(p) -> LTDKernels:
    """Kernels for the train of parameters ``p`` (:class:`hpcrail.models.ltd.build` parameters): trains
    without noninertial couplers get the table-law variants, which never compile the noninertial coupler's
    Newton solver (bitwise the same results; the first run of train 4 compiles ~40 % less, issue 17 item 5).
    Trains with the pneumatic brake (``p.air_brake == 2``, table-law connections only) get its variants."""
    if p.air_brake == 2:
        return LTDKernels(ltd_rhs_pneumatic, ltd_jac_pneumatic, ltd_observe_pneumatic, ltd_outputs_pneumatic)
    if p.n_noninertial == 0:
        return LTDKernels(ltd_rhs_tables, ltd_jac_tables, ltd_observe_tables, ltd_outputs_tables)
    return LTDKernels(ltd_rhs, ltd_jac, ltd_observe, ltd_outputs)
