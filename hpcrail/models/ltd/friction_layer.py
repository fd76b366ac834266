"""The dry-friction layer of an LTD consist (Oprea 2018): runtime parameters, model, state and
accumulator layouts.  The scenario → model translation is :func:`hpcrail.kinds.ltd.friction_layer.build_friction`.

Layering: the friction model *is* the LTD model of :mod:`hpcrail.models.ltd` plus the dry-friction
forces.  Every ``kind: friction`` connection type is handed to the LTD builder as its smooth part — a
linear spring-damper with the same slack — so traction, resistance, grade, air brake and every other
connection law of any LTD consist come from the LTD kernel unchanged; the friction kernels
(:mod:`hpcrail.models.ltd.friction_kernel`) add the friction force T_k of each friction connection on
top, either event-driven (Oprea 2018 §3-4) or regularised.

State: the LTD state (layout of :mod:`hpcrail.models.ltd.build`) followed by one state, the work
absorbed by the friction elements W_f = ∫ Σ T_k ė_k dt [J] (+ the kinetic energy removed by the
velocity projection at slip→stick, so that the energy balance closes).
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.models.ltd.build import LTDModel, LTDParams

TREAT_EVENT_DRIVEN = 0
TREAT_REGULARISED = 1

#: event functions per connection (see friction_kernel.ed_guard)
N_GUARDS = 3

#: friction section of the accumulator, after the coupler envelopes (models.couplers.envelope, ACC_HEAD + N_ENV·M):
#: [0] time of the previous observation, then per connection (M each): inside-band flag, entry time
#: of the current stay in the band, number of stick phases, total stick time [s], |ė| at the previous
#: observation [m/s] (band crossings are timed by linear interpolation between observations)
FACC_TPREV, FACC_INBAND, FACC_ENTRY, FACC_COUNT, FACC_TIME, FACC_PREV = range(6)
N_FACC_BLOCKS = 5


@njit(inline="always", **JIT)
def facc_index(off, M, block, k):
    """Index in the accumulator of per-connection entry ``k`` of friction block ``block`` (FACC_*)."""
    return off + 1 + (block - 1) * M + k


class FrictionParams(NamedTuple):
    """Runtime parameters of the friction kernels (SI).  ``ltd`` holds the LTD model with the friction
    connections reduced to their spring-damper part; arrays of length M = N−1 are per connection."""

    ltd: LTDParams
    treatment: int            # TREAT_*
    i_work: int               # index of the friction-work state
    acc_off: int              # start of the friction section of the accumulator
    eta: float                # Karnopp stick band [m/s]
    project: int              # 1: remove the relative velocity of a new rigid cluster at slip→stick
    reg_law: int              # REG_LINEAR / REG_TANH
    reg_inv_w: float          # 1 / regularisation width [s/m]
    min_stick: float          # minimum stay in the band counted as a stick phase [s]
    tol_force: float          # relative tolerance of |T_s| ≤ T_sMax in the mode selection
    tol_acc: float            # relative-acceleration tolerance of the sliding-direction check [m/s²]
    max_select_iter: int
    fr_on: np.ndarray         # [M] int64 1 = friction connection
    fr_gap: np.ndarray        # [M, 2] free slack on the draft / buff side [m]
    fr_inv_ramp: np.ndarray   # [M] 1 / engagement ramp [1/m]; 0 = no slack (always engaged)
    fr_ts: np.ndarray         # [M] static limit T_sMax [N]
    fr_tc: np.ndarray         # [M] Coulomb level of the sliding friction [N]
    fr_law: np.ndarray        # [M] int64 LAW_*
    fr_inv_vs: np.ndarray     # [M] 1 / Stribeck speed [s/m]
    fr_delta: np.ndarray      # [M] Stribeck exponent
    fr_leave: np.ndarray      # [M] int64 1 = leaving the band is a force discontinuity (T_kin(η) ≠ T_sMax)
    m_eff: np.ndarray         # [N] effective (inertial) masses [kg]
    mode: np.ndarray          # [M] int64 current mode (MODE_*), changed by the event handler
    mode_new: np.ndarray      # [M] int64 scratch
    cand: np.ndarray          # [M] int64 scratch
    lim: np.ndarray           # [M] scratch
    T: np.ndarray             # [M] friction forces of the last evaluation [N]
    a: np.ndarray             # [N] scratch accelerations
    a0: np.ndarray            # [N] scratch accelerations
    dydt: np.ndarray          # [n] scratch
    log_t: np.ndarray         # [L] time of each mode change [s]
    log_k: np.ndarray         # [L] int64 connection (0-based)
    log_m: np.ndarray         # [L] int64 new mode
    log_n: np.ndarray         # [1] int64 number of logged changes (> L: overflow)
    fail: np.ndarray          # [1] int64 reason of a failed mode selection (kernel.JUMP_*), 0 = none


@dataclasses.dataclass
class FrictionModel:
    """Python-side description of a built friction model."""

    params: FrictionParams
    ltd: LTDModel
    y0: np.ndarray
    atol_scale: np.ndarray
    acc0: np.ndarray
    friction_couplers: np.ndarray   # 1-based numbers of the friction connections
    mode0: np.ndarray               # initial modes (before the first mode selection)

    @property
    def n_vehicles(self) -> int:
        return self.ltd.n_vehicles

    @property
    def event_driven(self) -> bool:
        return self.params.treatment == TREAT_EVENT_DRIVEN
