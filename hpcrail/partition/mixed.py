"""Mixed train with the hidden-vehicle blocks of its LTD part on numba threads (paper 000 Figure 1): the
detailed vehicles are boundary vehicles; the blocks between them run in one parallel region
(:func:`~hpcrail.partition.ltd.ltd_rhs_threads`), then the detailed vehicles are evaluated
(:func:`~hpcrail.models.mixed.kernel.detailed_all`).  The same physics as the monolithic
:func:`~hpcrail.models.mixed.kernel.mixed_rhs`; the blocks' positions come from a scan over block lengths
(equal to rounding)."""
from __future__ import annotations

from typing import NamedTuple

from numba import njit

from hpcrail._numba import JIT
from hpcrail.models.mixed.kernel import MixedParams, detailed_all, detailed_observe
from hpcrail.partition.ltd import PartitionedParams, ltd_observe_threads, ltd_rhs_threads


class MixedThreadParams(NamedTuple):
    """A mixed train (``mixed``) and the partition of its consist (``part``, whose model is ``mixed.ltd``)."""

    mixed: MixedParams
    part: PartitionedParams


@njit(**JIT)
def mixed_rhs_threads(t, y, P, dydt):
    """Right-hand side of a mixed train, LTD blocks on threads (integrator contract)."""
    ltd_rhs_threads(t, y, P.part, dydt)
    detailed_all(t, y, P.mixed, dydt)


@njit(**JIT)
def mixed_observe_threads(t, y, P, acc):
    """Observer of a mixed train, LTD blocks on threads."""
    ltd_observe_threads(t, y, P.part, acc)
    detailed_observe(t, y, P.mixed, acc)


__all__ = ["MixedThreadParams", "mixed_rhs_threads", "mixed_observe_threads"]
