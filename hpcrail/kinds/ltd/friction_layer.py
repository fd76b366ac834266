"""Scenario → LTD model with the dry-friction layer (Oprea 2018), and its integration.

Layering: the friction model *is* the LTD model plus the dry-friction forces.  Every connection type
of the coupler-law table's ``friction`` branch is handed to the LTD builder as its smooth part — a
linear spring-damper with the same slack — so traction, resistance, grade, air brake and every other
law come from the LTD kernel unchanged; the friction layer (:mod:`hpcrail.models.ltd.friction_kernel`)
adds the friction force of each friction connection on top, event-driven (Oprea 2018 §3-4: the
model-agnostic driver :mod:`hpcrail.integrators.hybrid`) or regularised (any integrator).
"""
from __future__ import annotations

import numpy as np

from hpcrail.integrators import Problem, Solution, integrate
from hpcrail.integrators.hybrid import integrate_hybrid
from hpcrail.kinds.ltd.build import build_ltd
from hpcrail.kinds.ltd.couplers import LAWS, LinearConnection, law_of, laws_used
from hpcrail.kinds.ltd.schema import Scenario
from hpcrail.models.couplers.dry_friction import LAW_COULOMB, LAW_STRIBECK, MODE_OFF, REG_LINEAR, REG_TANH
from hpcrail.models.couplers.envelope import ACC_HEAD, N_ENV
from hpcrail.models.ltd.friction_kernel import ed_guard, ed_jump, ed_observe, ed_rhs, reg_observe, reg_rhs
from hpcrail.models.ltd.friction_layer import (
    N_FACC_BLOCKS, N_GUARDS, TREAT_EVENT_DRIVEN, TREAT_REGULARISED, FrictionModel, FrictionParams,
)


def has_friction(sc: Scenario) -> bool:
    """True when a connection of the consist uses a law of the ``friction`` branch (dry-friction draft gear)."""
    return any(LAWS[k].branch == "friction" for k in laws_used(sc))


def smooth_part(sc: Scenario) -> Scenario:
    """The scenario with every friction connection type replaced by its spring-damper part (same slack);
    the LTD builder sees only laws it knows."""
    ct = {}
    for name, c in sc.connection_types.items():
        if law_of(c).branch == "friction":
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
    law_ = np.zeros(M, np.int64)
    inv_vs = np.zeros(M)
    delta = np.ones(M)
    for k, name in enumerate(names):
        c = sc.connection_types[name]
        law = law_of(c)
        if law.branch != "friction":
            continue
        v = law.pack(c)
        fr_on[k] = 1
        gap[k] = v["gap"]
        inv_ramp[k] = v["inv_ramp"]        # the LTD damper's engagement ramp (1 mm)
        ts[k] = v["ts"]
        tc[k] = v["tc"]
        law_[k] = LAW_STRIBECK if v["stribeck"] else LAW_COULOMB
        inv_vs[k] = v["inv_vs"]
        delta[k] = v["delta"]
    fn = sc.friction
    eta = fn.stick_band_mps
    # the band exit is a force discontinuity when T_kin(η) differs from T_sMax
    tk_eta = np.where(law_ == LAW_STRIBECK, tc + (ts - tc) * np.exp(-((eta * inv_vs) ** delta)), tc)
    leave = (np.abs(tk_eta - ts) > 1e-12 * np.maximum(ts, 1.0)).astype(np.int64) * fr_on
    m_eff = 1.0 / p.inv_mass_eff
    ascale = np.where(fr_on == 1, np.maximum(ts, 1.0) * (1.0 / m_eff[:-1] + 1.0 / m_eff[1:]), 1.0)
    n_ltd = ltd.y0.size
    n = n_ltd + 1
    L = int(fn.max_mode_changes)
    acc_off = ACC_HEAD + N_ENV * M
    params = FrictionParams(
        ltd=p, treatment=TREAT_EVENT_DRIVEN if fn.treatment == "event_driven" else TREAT_REGULARISED,
        i_work=n_ltd, acc_off=acc_off, eta=float(eta), project=int(fn.stick_velocity == "project"),
        reg_law=REG_TANH if fn.regularisation == "tanh" else REG_LINEAR,
        reg_inv_w=1.0 / fn.regularisation_width_mps, min_stick=float(fn.stick_min_duration_s),
        tol_force=1e-9, tol_acc=1e-9 * float(np.min(ascale)), max_select_iter=int(10 * M + 50),
        fr_on=fr_on, fr_gap=gap, fr_inv_ramp=inv_ramp, fr_ts=ts, fr_tc=tc, fr_law=law_, fr_inv_vs=inv_vs,
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


def friction_solve(model: FrictionModel, sc, t_out: np.ndarray, t_final: float, progress=None) -> Solution:
    """Integrate a built friction model with the scenario's treatment and integrator settings.

    The event-driven treatment integrates between events with ``integrator.method`` and locates events
    to ``friction.event_tolerance_s``; the regularised treatment is an ordinary integration.  Failures
    are reported in the solution's ``status``.
    """
    kw = sc.integrator.kwargs()
    p = model.params
    if model.event_driven:
        fn = sc.friction
        return integrate_hybrid(ed_rhs, ed_observe, ed_guard, ed_jump, p, model.y0, N_GUARDS * p.mode.size,
                                sc.integrator.method, t_out, t_final, atol_scale=model.atol_scale,
                                acc0=model.acc0, event_tolerance=fn.event_tolerance_s, max_events=fn.max_events,
                                progress=progress, **kw)
    prob = Problem(reg_rhs, reg_observe, p, model.y0, t0=0.0, atol_scale=model.atol_scale, acc0=model.acc0)
    return integrate(prob, sc.integrator.method, t_out, t_final, progress=progress, **kw)
