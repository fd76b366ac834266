"""The one place that chooses how a scenario runs: serial (alone or in a sweep's batch kernel), hidden-vehicle
blocks on threads or on MPI ranks, with the whole state on every worker (*shared*) or each worker integrating
its own blocks (*distributed*, :mod:`hpcrail.integrators.distributed`).

A kind declares what its run path can do (:class:`Capabilities`); the scenario's ``partition:`` block, its
train length, the threads available and the integration method's catalogue entry (``blocks``:
:mod:`hpcrail.config.integrator`) decide the rest (:func:`choose`).  The LTD kind (its runs, its batch
eligibility), the mixed-train kind and the CLI (which process writes the result under MPI) all ask here.
"""
from __future__ import annotations

import dataclasses

from hpcrail.partition.layout import thread_count

#: ``partition.state`` values
STATES = ("auto", "shared", "distributed")


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What a kind's run path offers: hidden-vehicle blocks on ``threads`` and on ``mpi`` ranks, and
    ``distributed`` state on them (for the methods that run on blocks)."""

    threads: bool = False
    mpi: bool = False
    distributed: bool = False


@dataclasses.dataclass(frozen=True)
class Backend:
    """The choice: ``name`` ``off`` (one process, one worker: the batch kernel may take it), ``threads`` or
    ``mpi``; ``state`` ``serial`` (off), ``shared`` or ``distributed``; ``why`` says what decided it."""

    name: str
    state: str
    why: str

    @property
    def batchable(self) -> bool:
        return self.name == "off"


def choose(caps: Capabilities, partition, n_vehicles: int, method: str, *, threads: int | None = None,
           unpartitionable: tuple | list = (), shared_only: tuple | list = ()) -> Backend:
    """The backend of a scenario.

    ``partition``: the scenario's ``partition:`` block (``backend`` off/auto/threads/mpi, ``state``
    auto/shared/distributed, ``threads``, ``auto_min_vehicles``); ``n_vehicles`` the train length; ``method`` the
    integrator (catalogue name or alias); ``threads`` overrides ``partition.threads``; ``unpartitionable`` the
    physics the blocks cannot evaluate (e.g. noninertial couplers), which keeps ``auto`` serial; ``shared_only``
    the physics the blocks evaluate with shared state only (e.g. the pneumatic brake), which makes ``state: auto``
    shared.

    ``auto`` runs serial below ``auto_min_vehicles`` vehicles or with one thread (docs/performance.md), on threads
    otherwise; MPI only when asked for.  ``state: auto`` is distributed where the kind offers it and the method
    runs on blocks, else shared.  Raises ``ValueError`` for a backend or a state the kind does not offer (the
    scenario checks report these as config errors first).
    """
    from hpcrail.config.integrator import method_spec

    asked = getattr(partition, "backend", "off") or "off"
    if asked == "auto":
        nthr = thread_count(getattr(partition, "threads", None) if threads is None else threads)
        if unpartitionable:
            return Backend("off", "serial", f"auto: the blocks do not evaluate {', '.join(unpartitionable)}")
        if not caps.threads or nthr <= 1 or n_vehicles < partition.auto_min_vehicles:
            return Backend("off", "serial", f"auto: {n_vehicles} vehicles, {nthr} threads (blocks from "
                           f"{partition.auto_min_vehicles} vehicles on 2+ threads)")
        name = "threads"
    else:
        name = asked
    if name == "off":
        return Backend("off", "serial", "partition.backend: off")
    if not getattr(caps, name):
        raise ValueError(f"partition.backend = {name!r} is not offered by this kind")
    state = getattr(partition, "state", "auto") or "auto"
    blocks = method_spec(method).blocks
    if state == "shared":
        return Backend(name, "shared", "partition.state: shared")
    if state == "distributed":
        if shared_only:
            raise ValueError(f"partition.state = 'distributed' is not offered with {', '.join(shared_only)} "
                             "(use 'shared')")
        if not (caps.distributed and blocks):
            raise ValueError(f"partition.state = 'distributed' needs a kind and a method that run on blocks "
                             f"({method!r})")
        return Backend(name, "distributed", "partition.state: distributed")
    if shared_only:
        return Backend(name, "shared", f"partition.state: auto, the blocks evaluate {', '.join(shared_only)} "
                       "with shared state only")
    if caps.distributed and blocks:
        return Backend(name, "distributed", f"partition.state: auto, {method} runs on blocks")
    return Backend(name, "shared", f"partition.state: auto, {method} does not run on blocks"
                   if caps.distributed else "partition.state: auto, the kind has no distributed state")


def on_mpi(partition) -> bool:
    """True if a scenario runs on MPI ranks: :func:`choose` takes MPI only when ``partition.backend`` asks for it
    (what the CLI needs to know before building anything: which rank writes the result)."""
    return (getattr(partition, "backend", None) or "off") == "mpi"


__all__ = ["Backend", "Capabilities", "choose", "on_mpi", "STATES"]
