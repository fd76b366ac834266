"""Build an LTD consist with dry-friction draft gears (paper 003) from a validated scenario.

Layering: the friction model *is* the LTD model of :mod:`hpcrail.models.ltd` plus the dry-friction
forces.  Every ``kind: friction`` connection type is handed to the LTD builder as its smooth part — a
linear spring-damper with the same slack — so traction, resistance, grade, air brake and every other
connection law of any LTD consist come from the LTD kernel unchanged; the friction kernels
(:mod:`hpcrail.models.friction.kernel`) add the friction force T_k of each friction connection on
top, either event-driven (paper 003 §3-4) or regularised.

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
from hpcrail.config.scenario import FrictionDraftGear, LinearConnection, Scenario
from hpcrail.models.couplers.friction import LAW_COULOMB, LAW_STRIBECK, MODE_OFF, REG_LINEAR, REG_TANH
from hpcrail.models.ltd.build import ACC_HEAD, LTDModel, LTDParams, build_ltd

TREAT_EVENT_DRIVEN = 0
TREAT_REGULARISED = 1

#: event functions per connection (see kernel.ed_guard)
N_GUARDS = 3

#: friction section of the accumulator, after the LTD layout (ACC_HEAD + 4M):
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


def has_friction(sc: Scenario) -> bool:
    """True when a connection of the consist is a ``kind: friction`` draft gear."""
    return any(isinstance(sc.connection_types[n], FrictionDraftGear) for n in sc.connection_type_names())


def smooth_part(sc: Scenario) -> Scenario:
    """The scenario with every friction connection type replaced by its spring-damper part (same slack);
    the LTD builder sees only laws it knows."""
    ct = {}
    for name, c in sc.connection_types.items():
        if isinstance(c, FrictionDraftGear):
            ct[name] = LinearConnection.model_construct(kind="linear", stiffness_MN_per_m=c.stiffness_MN_per_m,
                                                        damping_kNs_per_m=c.damping_kNs_per_m, slack_mm=c.slack_mm)
        else:
            ct[name] = c
    return sc.model_copy(update={"connection_types": ct})


def build_friction(sc: Scenario) -> FrictionModel:
    """Convert a validated scenario with friction draft gears to a :class:`FrictionModel`.

    Raises ``ValueError`` if the consist has no friction connection.
    """
    if not has_friction(sc):
        raise ValueError(f"scenario {sc.name!r} has no 'kind: friction' connection")
    ltd = build_ltd(smooth_part(sc))
    p = ltd.params
    N = p.n_veh
    M = N - 1
    names = sc.connection_type_names()
    fr_on = np.zeros(M, np.int64)
    gap = np.zeros((M, 2))
    inv_ramp = np.zeros(M)
    ts = np.zeros(M)
    tc = np.zeros(M)
    law = np.zeros(M, np.int64)
    inv_vs = np.zeros(M)
    delta = np.ones(M)
    for k, name in enumerate(names):
        c = sc.connection_types[name]
        if not isinstance(c, FrictionDraftGear):
            continue
        fr_on[k] = 1
        g = 0.5 * c.slack_mm * 1e-3
        gap[k] = (g, g)
        inv_ramp[k] = 1e3 if g > 0 else 0.0      # the LTD damper's engagement ramp (1 mm)
        ts[k] = c.static_friction_kN * 1e3
        tc[k] = c.kinetic_kN() * 1e3
        law[k] = LAW_STRIBECK if c.kinetic_law == "stribeck" else LAW_COULOMB
        inv_vs[k] = 1.0 / c.stribeck_speed_mps
        delta[k] = c.stribeck_exponent
    fn = sc.friction
    eta = fn.stick_band_mps
    # the band exit is a force discontinuity when T_kin(η) differs from T_sMax
    tk_eta = np.where(law == LAW_STRIBECK, tc + (ts - tc) * np.exp(-((eta * inv_vs) ** delta)), tc)
    leave = (np.abs(tk_eta - ts) > 1e-12 * np.maximum(ts, 1.0)).astype(np.int64) * fr_on
    m_eff = 1.0 / p.inv_mass_eff
    ascale = np.where(fr_on == 1, np.maximum(ts, 1.0) * (1.0 / m_eff[:-1] + 1.0 / m_eff[1:]), 1.0)
    n_ltd = ltd.y0.size
    n = n_ltd + 1
    L = int(fn.max_mode_changes)
    acc_off = ACC_HEAD + 4 * M
    params = FrictionParams(
        ltd=p, treatment=TREAT_EVENT_DRIVEN if fn.treatment == "event_driven" else TREAT_REGULARISED,
        i_work=n_ltd, acc_off=acc_off, eta=float(eta), project=int(fn.stick_velocity == "project"),
        reg_law=REG_TANH if fn.regularisation == "tanh" else REG_LINEAR,
        reg_inv_w=1.0 / fn.regularisation_width_mps, min_stick=float(fn.stick_min_duration_s),
        tol_force=1e-9, tol_acc=1e-9 * float(np.min(ascale)), max_select_iter=int(10 * M + 50),
        fr_on=fr_on, fr_gap=gap, fr_inv_ramp=inv_ramp, fr_ts=ts, fr_tc=tc, fr_law=law, fr_inv_vs=inv_vs,
        fr_delta=delta, fr_leave=leave, m_eff=m_eff,
        mode=np.full(M, MODE_OFF, np.int64), mode_new=np.zeros(M, np.int64), cand=np.zeros(M, np.int64),
        lim=np.zeros(M), T=np.zeros(M), a=np.zeros(N), a0=np.zeros(N), dydt=np.zeros(n),
        log_t=np.zeros(L), log_k=np.zeros(L, np.int64), log_m=np.zeros(L, np.int64), log_n=np.zeros(1, np.int64),
        fail=np.zeros(1, np.int64),
    )
    y0 = np.concatenate([ltd.y0, [0.0]])
    atol_scale = np.concatenate([ltd.atol_scale, [1e3]])
    acc0 = np.concatenate([ltd.acc0, np.zeros(1 + N_FACC_BLOCKS * M)])
    return FrictionModel(params=params, ltd=ltd, y0=y0, atol_scale=atol_scale, acc0=acc0,
                         friction_couplers=np.flatnonzero(fr_on) + 1, mode0=params.mode.copy())
