"""The LTD model on blocks of vehicles that step at their own rates (multirate methods,
:mod:`hpcrail.integrators.multirate`): one worker walks every block.

The state is cut into blocks of ``partition.multirate_block_vehicles`` consecutive vehicles (block b owns the
states of its vehicles and the extension of the connection behind its last vehicle, as the distributed-state
blocks of :mod:`hpcrail.partition.ltd`).  The right-hand side, the Jacobian and the observer read the kernel's
``act`` array (shared with :class:`~hpcrail.integrators.contract.BlockLayout`):

* ``act[2] = 1`` (a global step): the whole train, by the monolithic kernels — bitwise the right-hand side,
  Jacobian and envelopes of the single-rate model;
* ``act[2] = 0`` (a run of blocks ``[act[0], act[1])`` re-integrated with its own steps): those vehicles only,
  by :func:`~hpcrail.models.ltd.kernel.ltd_eval_range` (the same physics), reading the states around the run
  (the vehicle and connection ahead, the first speed behind, the head position, the applied notch) that the
  integrator has written from the global step's interpolant.

Positions (for the grade and curvature under each vehicle) are a prefix sum over every connection ahead: a run
takes the distance from the head vehicle to its first vehicle (``lead``) from the observer's last whole-train
pass, at the last accepted global step, and the head position at the stage time.  The error is the change of the
connection extensions ahead of the run over one global step (millimetres to centimetres), in the route averages
only.  Source: Bosso et al. 2024 eqs (1)-(7) (the model), §2 (blocks of hidden vehicles).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from hpcrail._numba import JIT_NRT_FREE
from hpcrail.models.couplers.envelope import ACC_OFFROUTE
from hpcrail.models.ltd.build import LTDParams
from hpcrail.models.ltd.jacobian import ltd_jac_range, ltd_jac_tables
from hpcrail.models.ltd.kernel import (
    driver_command, ltd_eval_range, ltd_eval_tables, ltd_observe_range_tables, observe_combine, schedule_index,
)


class MultirateParams(NamedTuple):
    """``model`` the LTD parameters; ``starts`` int64[P+1] the blocks' vehicle ranges ``[starts[b], starts[b+1])``;
    ``act`` int64[3] the blocks evaluated now (shared with the integrator's vector layout); ``lead`` float64[P] the
    distance [m] from the head vehicle's centre to the centre of each block's first vehicle at the last whole-train
    observation."""

    model: LTDParams
    starts: np.ndarray
    act: np.ndarray
    lead: np.ndarray


def block_starts(n_vehicles: int, block_vehicles: int) -> np.ndarray:
    """int64[P+1]: P = ⌈N / block_vehicles⌉ blocks of (nearly) equal size."""
    P = max(1, -(-n_vehicles // max(1, block_vehicles)))
    return np.asarray(np.linspace(0, n_vehicles, P + 1).round(), np.int64)


def state_bounds(p: LTDParams, starts: np.ndarray) -> np.ndarray:
    """int64[P+1] state bounds of the blocks (block b: its vehicles' states and the extension of the connection
    behind its last vehicle; the states from B·N on — applied notch, work integrals — are global)."""
    B, N = p.block, p.n_veh
    return np.asarray([0] + [B * int(j) + 1 for j in starts[1:-1]] + [B * N], np.int64)


@njit(**JIT_NRT_FREE)
def ltd_rhs_mr(t, y, mp, dydt):
    """Right-hand side (integrator contract) of the whole train or of the run of blocks ``act`` says."""
    p = mp.model
    act = mp.act
    if act[2] != 0:
        ltd_eval_tables(t, y, p, dydt, p.no_record, False)
        return
    notch, _cmd_notch, cmd_brake = driver_command(t, y, p, dydt)
    b0 = act[0]
    ltd_eval_range(t, y, p, dydt, p.no_record, False, mp.starts[b0], mp.starts[act[1]], y[0] - mp.lead[b0], notch,
                   cmd_brake)


@njit(**JIT_NRT_FREE)
def ltd_jac_mr(t, y, mp, vals):
    """Analytic Jacobian slots of the whole train (:func:`~hpcrail.models.ltd.jacobian.ltd_jac_tables`) or of the
    run of blocks ``act`` says (:func:`~hpcrail.models.ltd.jacobian.ltd_jac_range`)."""
    p = mp.model
    act = mp.act
    if act[2] != 0:
        ltd_jac_tables(t, y, p, vals)
        return
    ic = schedule_index(p, t, y)
    b0 = act[0]
    ltd_jac_range(t, y, p, vals, mp.starts[b0], mp.starts[act[1]], y[0] - mp.lead[b0], y[p.i_notch],
                  p.sched_brake[ic])


@njit(**JIT_NRT_FREE)
def ltd_observe_mr(t, y, mp, acc):
    """The envelopes of every coupler (whole train; also the blocks' ``lead`` distances) or of the couplers
    behind the vehicles of the run ``act`` says."""
    p = mp.model
    act = mp.act
    starts = mp.starts
    if act[2] == 0:
        b0 = act[0]
        vmax, vmin, fmax, fmin = ltd_observe_range_tables(t, y, p, acc, starts[b0], starts[act[1]], y[0] - mp.lead[b0])
        observe_combine(t, y, p, acc, vmax, vmin, fmax, fmin)
        return
    B = p.block
    M = p.n_veh - 1
    s = y[0]
    for b in range(starts.size - 1):
        mp.lead[b] = y[0] - s
        j0 = starts[b]
        j1 = starts[b + 1]
        vmax, vmin, fmax, fmin = ltd_observe_range_tables(t, y, p, acc, j0, j1, s)
        observe_combine(t, y, p, acc, vmax, vmin, fmax, fmin)
        for j in range(j0, min(j1, M)):
            s = s - (p.center_dist[j] + y[B * j + B])
    if y[0] + p.front_offset > p.route_end:
        acc[ACC_OFFROUTE] = 1.0


def multirate_problem(model, mono, block_vehicles: int):
    """The LTD :class:`~hpcrail.integrators.Problem` of a multirate method: ``mono`` (the monolithic problem:
    pattern, tolerances, accumulator) on blocks of ``block_vehicles`` vehicles walked by one worker.  Raises
    ``ValueError`` for a train with noninertial couplers (whose forces the blocks do not evaluate)."""
    import dataclasses

    from hpcrail.integrators.collectives import new_act
    from hpcrail.integrators.contract import BlockLayout
    from hpcrail.integrators.multirate import block_slot_ranges

    p = model.params
    if p.n_noninertial > 0:
        raise ValueError("a multirate method needs a consist of table-law connections (noninertial couplers are "
                         "evaluated for the whole train at once)")
    starts = block_starts(p.n_veh, block_vehicles)
    P = starts.size - 1
    bounds = state_bounds(p, starts)
    act = new_act(0, P)
    mp = MultirateParams(model=p, starts=starts, act=act, lead=np.zeros(P))
    slo, shi = block_slot_ranges(mono.jac_pattern.rows, bounds)
    lay = BlockLayout(bounds, np.array([0, P], np.int64), [mp], act=act,
                      multirate=(p.block, 1, [0], slo, shi))
    return dataclasses.replace(mono, rhs=ltd_rhs_mr, observe=ltd_observe_mr, jac=ltd_jac_mr, params=mp, blocks=lay,
                               precompile=())


__all__ = ["MultirateParams", "block_starts", "state_bounds", "ltd_rhs_mr", "ltd_jac_mr", "ltd_observe_mr",
           "multirate_problem"]
