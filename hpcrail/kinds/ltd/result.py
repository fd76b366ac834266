"""The outputs of an LTD run (plain arrays of the declared outputs, :mod:`hpcrail.kinds.ltd.outputs`) from
an integrator solution: monolithic, partitioned, batched or with the dry-friction layer.
Source: Bosso et al. 2024 eqs (1)-(7), Tables 1-2; Oprea 2018 for the friction outputs."""
from __future__ import annotations

import numpy as np

from hpcrail.integrators.contract import Status
from hpcrail.kinds.ltd.outputs import coupler_envelope_values, train_metrics
from hpcrail.kinds.ltd.problem import ltd_kernels
from hpcrail.models.couplers.dry_friction import MODE_STICK
from hpcrail.models.couplers.envelope import (
    ACC_OFFROUTE, ACC_T_BUFF, ACC_T_DRAFT, ACC_VMAX, ACC_VMIN, coupler_envelopes,
)
from hpcrail.models.couplers.kinematics import NS_FAIL, NS_ITER, NS_K_FAIL, NS_MAXIT, NS_SOLVES, NS_T_FAIL
from hpcrail.models.couplers.ltd_noninertial import NC_X, NW_STATS
from hpcrail.models.ltd.build import G, LTDModel
from hpcrail.models.ltd.friction_kernel import JUMP_LOG_FULL, JUMP_SELECT_FAILED, friction_outputs
from hpcrail.models.ltd.friction_layer import (
    FACC_COUNT, FACC_ENTRY, FACC_INBAND, FACC_TIME, TREAT_EVENT_DRIVEN, FrictionModel,
)
from hpcrail.models.ltd.kernel import (
    N_REC, REC_BRAKE, REC_COUPLER_FORCE, REC_DEFLECTION, REC_GRADE, REC_POSITION, REC_RESISTANCE, REC_TRACTION,
)
from hpcrail.results.envelope_check import add_check
from hpcrail.results.outputs import RunInfo, RunResult


def vehicle_positions(model: LTDModel, y: np.ndarray) -> np.ndarray:
    """Centre positions s_j [m] (float64[..., N]) from states ``y`` (float64[..., n])."""
    p = model.params
    B, N = p.block, p.n_veh
    e = y[..., B:B * N:B]
    gaps = np.cumsum(p.center_dist + e, axis=-1)
    s1 = y[..., :1]
    return np.concatenate([s1, s1 - gaps], axis=-1)


def _cumulative_elevation_integral(model: LTDModel, s: np.ndarray) -> np.ndarray:
    """∫ H ds of the piecewise-linear elevation H on the route grid, evaluated at ``s`` (exact)."""
    p = model.params
    h = p.route_h
    ds = p.route_ds
    x0 = p.route_s0
    cum = np.concatenate([[0.0], np.cumsum(0.5 * (h[1:] + h[:-1]) * ds)])
    n = h.size
    u = (s - x0) / ds
    i = np.clip(np.floor(u).astype(np.int64), 0, n - 2)
    w = u - i
    slope = (h[i + 1] - h[i]) / ds
    dx = w * ds
    # integral from grid point i to s of the linear (extrapolated) segment
    return cum[i] + h[i] * dx + 0.5 * slope * dx * dx


def potential_energy(model: LTDModel, y: np.ndarray) -> float:
    """Σ m_j g H̄_j [J], H̄_j the route elevation averaged over vehicle j's length (consistent with the
    kernel's length-averaged grade force)."""
    p = model.params
    s = vehicle_positions(model, y)
    hl = p.half_len
    mean_h = (_cumulative_elevation_integral(model, s + hl) - _cumulative_elevation_integral(model, s - hl)) / (2 * hl)
    return float(np.sum(p.mass * G * mean_h))


def kinetic_energy(model: LTDModel, y: np.ndarray) -> float:
    """Σ ½ m_eff,j v_j² [J]."""
    p = model.params
    v = y[1:p.block * p.n_veh:p.block]
    return float(0.5 * np.sum(v * v / p.inv_mass_eff))


def ltd_result(sc, model: LTDModel, sol) -> RunResult:
    """Outputs of one LTD run: series from the sampled states ``sol.y`` (float64[k, n]) at ``sol.t``,
    envelopes and metrics from the every-step observer ``sol.acc``, energies from the final state."""
    p = model.params
    # noninertial connections (couplers.ltd_noninertial): the statistics describe the integration only;
    # the sampled outputs start their Newton iterations cold from the initial state
    ni_stats = p.ni_work[NW_STATS].copy()
    p.ni_conn[:, NC_X:NC_X + 4] = 0.0
    N, B, M = p.n_veh, p.block, p.n_veh - 1
    t = sol.t
    Y = np.ascontiguousarray(sol.y)
    k = t.size
    rec = np.full((k, N_REC, N), np.nan)
    accel = np.full((k, N), np.nan)
    ncmd = np.full(k, np.nan)
    bcmd = np.full(k, np.nan)
    ltd_kernels(p).outputs(t, Y, p, rec, accel, ncmd, bcmd)
    values = {
        "position": rec[:, REC_POSITION, :],
        "speed": Y[:, 1:B * N:B],
        "acceleration": accel,
        "coupler_force": rec[:, REC_COUPLER_FORCE, :M],
        "coupler_deflection": rec[:, REC_DEFLECTION, :M],
        "tractive_force": rec[:, REC_TRACTION, :],
        "brake_force": rec[:, REC_BRAKE, :],
        "resistance_force": rec[:, REC_RESISTANCE, :],
        "grade_force": rec[:, REC_GRADE, :],
        "notch": Y[:, p.i_notch],
        "notch_command": ncmd,
        "brake_command": bcmd,
    }
    brake_warnings = []
    if p.air_brake == 1:
        values["brake_cylinder_pressure"] = Y[:, 3:B * N:B] * sc.air_brake.full_service_pressure_kPa * 1e3
    elif p.air_brake == 2:
        from hpcrail.kinds.ltd.brake_result import brake_values

        bv, brake_warnings = brake_values(sc, model, sol, t, Y)
        values.update(bv)
    acc = sol.acc
    fmax, fmin, emax, emin = coupler_envelopes(acc, M)
    values.update(coupler_envelope_values(fmax, fmin, emax, emin))
    # mean speed from the distance travelled by every vehicle (exact, sampling independent)
    duration = sol.t_reached - 0.0
    s_end = vehicle_positions(model, sol.y_final)
    s_start = vehicle_positions(model, model.y0)
    mean_speed = float(np.mean(s_end - s_start) / duration) if duration > 0 else 0.0
    metrics = train_metrics(fmax, fmin, emax, emin, acc[ACC_VMAX], mean_speed, sc.output.reference_coupler)
    values.update(metrics)
    ref = int(metrics["reference_coupler"])
    values["time_of_max_draft_force"] = float(acc[ACC_T_DRAFT])
    values["time_of_max_buff_force"] = float(acc[ACC_T_BUFF])
    status, message = None, None
    if sol.status == Status.NON_FINITE and ni_stats[NS_FAIL] > 0:
        status = Status.MODEL_FAILURE.name.lower()
        message = (f"the noninertial coupler equilibrium (Newton-Raphson) of coupler {int(ni_stats[NS_K_FAIL])} did "
                   f"not converge at t = {ni_stats[NS_T_FAIL]:.6g} s")
    if p.n_noninertial > 0:
        values.update({"coupler_newton_solves": int(ni_stats[NS_SOLVES]),
                       "coupler_newton_iterations": int(ni_stats[NS_ITER]),
                       "coupler_newton_max_iterations": int(ni_stats[NS_MAXIT]),
                       "coupler_newton_failures": int(ni_stats[NS_FAIL])})
    if p.i_energy >= 0:
        ie = p.i_energy
        w = sol.y_final[ie:ie + 4] - model.y0[ie:ie + 4]
        dke = kinetic_energy(model, sol.y_final) - kinetic_energy(model, model.y0)
        dpe = potential_energy(model, sol.y_final) - potential_energy(model, model.y0)
        values.update({"traction_work": float(w[0]), "resistance_work": float(w[1]), "brake_work": float(w[2]),
                       "coupler_work": float(w[3]), "kinetic_energy_change": dke, "potential_energy_change": dpe,
                       "energy_balance_residual": float(w[0] - w[1] - w[2] - w[3] - dke - dpe)})
    warnings = list(model.notes) + brake_warnings
    if acc[ACC_OFFROUTE] > 0:
        warnings.append("the front of the train ran beyond the end of the route: the last section's grade "
                        "and curvature were extended")
    if acc[ACC_VMIN] < -0.01:
        warnings.append(f"a vehicle moved backwards (minimum speed {acc[ACC_VMIN]:.3g} m/s)")
    return RunResult(
        run=RunInfo.from_solution(sol, status, message), values=values, time=t, warnings=warnings,
        value_attrs={"max_draft_force": {"time_of_max": float(acc[ACC_T_DRAFT])},
                     "max_buff_force": {"time_of_max": float(acc[ACC_T_BUFF])},
                     "max_draft_deflection": {"reference_coupler": ref},
                     "max_buff_deflection": {"reference_coupler": ref}},
        attrs={"reference_coupler": ref})


# ------------------------------------------------------------------------------------------------
# dry-friction layer (Oprea 2018)
# ------------------------------------------------------------------------------------------------
def modes_at(model: FrictionModel, t: np.ndarray) -> np.ndarray:
    """Mode of every connection at the times ``t`` (int64[k, M]) replayed from the mode-change log
    (a sample at an event time gets the mode chosen at that event)."""
    p = model.params
    L = min(int(p.log_n[0]), p.log_t.size)
    lt, lk, lm = p.log_t[:L], p.log_k[:L], p.log_m[:L]
    modes = np.empty((t.size, p.mode.size), np.int64)
    cur = model.mode0.copy()
    i = 0
    for s, ts in enumerate(t):
        while i < L and lt[i] <= ts:
            cur[lk[i]] = lm[i]
            i += 1
        modes[s] = cur
    return modes


def stick_statistics(model: FrictionModel, acc: np.ndarray, t_end: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-coupler number of stick phases and stick time [s] from the observer, closing the phases
    still open at ``t_end`` (NaN for connections without dry friction)."""
    p = model.params
    M = p.mode.size
    o = p.acc_off

    def block(b):
        return acc[o + 1 + (b - 1) * M:o + 1 + b * M]

    count = block(FACC_COUNT).copy()
    time = block(FACC_TIME).copy()
    open_ = block(FACC_INBAND) != 0
    dur = t_end - block(FACC_ENTRY)
    close = open_ & (dur >= p.min_stick)
    count[close] += 1
    time[close] += dur[close]
    on = p.fr_on == 1
    count[~on] = np.nan
    time[~on] = np.nan
    return count, time


def friction_result(sc, model: FrictionModel, sol) -> RunResult:
    """Outputs of a run with dry-friction draft gears: the LTD outputs with the friction force included
    in ``coupler_force``, ``acceleration``, the envelopes, the metrics and the energy balance
    (``coupler_work`` includes the friction work), plus the friction outputs."""
    p = model.params
    q = p.ltd
    N, B, M = q.n_veh, q.block, q.n_veh - 1
    res = ltd_result(sc, model.ltd, sol)
    v = res.values
    if p.fail[0] == JUMP_LOG_FULL:
        res.run.message = (f"{sol.message}: the log of connection mode changes is full (raise "
                           f"friction.max_mode_changes = {p.log_t.size})")
    elif p.fail[0] == JUMP_SELECT_FAILED:
        res.run.message = f"{sol.message}: the stick/slip mode selection did not converge"
    t = sol.t
    Y = np.ascontiguousarray(sol.y)
    ed = p.treatment == TREAT_EVENT_DRIVEN
    modes = modes_at(model, t) if ed else np.zeros((t.size, M), np.int64)
    T = np.full((t.size, M), np.nan)
    accel = np.full((t.size, N), np.nan)
    friction_outputs(t, Y, p, modes, T, accel)
    dv = Y[:, 1:B * N:B][:, :-1] - Y[:, 1:B * N:B][:, 1:]
    if not ed:
        inband = np.abs(dv) <= p.eta
        modes = np.where(inband, MODE_STICK, 2 * np.sign(dv)).astype(np.int64)
    modes = np.where(p.fr_on[None, :] == 1, modes, 0)
    modes = np.where(np.isfinite(Y[:, :1]), modes, 0)
    v["coupler_force"] = v["coupler_force"] + T
    v["acceleration"] = accel
    v["friction_force"] = T
    v["relative_velocity"] = dv
    v["friction_mode"] = modes.astype(np.int8)
    count, stime = stick_statistics(model, sol.acc, sol.t_reached)
    v["stick_phases"] = count
    v["stick_time"] = stime
    v["final_deflection"] = np.asarray(sol.y_final[B:B * N:B], float)
    # final in-train force: the last sample if it is the end of the run, else evaluated at the final state
    # (with the modes in force at the end)
    if t.size and abs(t[-1] - sol.t_reached) < 1e-9:
        v["final_coupler_force"] = v["coupler_force"][-1]
    else:
        tf = np.array([sol.t_reached])
        yf = np.ascontiguousarray(sol.y_final[None, :])
        rec = np.full((1, N_REC, N), np.nan)
        Tf = np.full((1, M), np.nan)
        ltd_kernels(q).outputs(tf, yf, q, rec, np.full((1, N), np.nan), np.full(1, np.nan), np.full(1, np.nan))
        mf = modes_at(model, tf) if ed else np.zeros((1, M), np.int64)
        friction_outputs(tf, yf, p, mf, Tf, np.full((1, N), np.nan))
        v["final_coupler_force"] = rec[0, REC_COUPLER_FORCE, :M] + Tf[0]
    w_f = float(sol.y_final[p.i_work] - model.y0[p.i_work])
    L = min(int(p.log_n[0]), p.log_t.size)
    v["friction_work"] = w_f
    v["n_events"] = int(sol.stats.get("events", 0))
    v["n_mode_changes"] = L if ed else 0
    if q.i_energy >= 0:
        cw = v["coupler_work"] + w_f
        v["coupler_work"] = cw
        v["energy_balance_residual"] = (v["traction_work"] - v["resistance_work"] - v["brake_work"] - cw
                                        - v["kinetic_energy_change"] - v["potential_energy_change"])
    if ed:
        v["mode_change_time"] = p.log_t[:L].copy()
        v["mode_change_coupler"] = p.log_k[:L] + 1
        v["mode_change_mode"] = p.log_m[:L].copy()
    fn = sc.friction
    res.attrs["friction_treatment"] = fn.treatment
    res.attrs["friction_stick_band_mps"] = float(fn.stick_band_mps)
    if not ed:
        res.attrs["friction_regularisation"] = f"{fn.regularisation}, width {fn.regularisation_width_mps:g} m/s"
        if any(p.fr_tc[p.fr_on == 1] < p.fr_ts[p.fr_on == 1]) and np.any(p.fr_law[p.fr_on == 1] == 0):
            res.warnings.append("regularised friction with a Coulomb kinetic level below the static limit: the "
                                "regularised law holds at most the kinetic level (use kinetic_law: stribeck or the "
                                "event-driven treatment)")
    else:
        res.attrs["friction_event_trials"] = int(sol.stats.get("event_trials", 0))
    res.attrs["friction_source"] = f"dry-friction draft gears: Oprea 2018, {fn.treatment.replace('_', '-')} treatment"
    return res


def add_envelope_check(sc, res: RunResult | None, sol, prob=None) -> None:
    """Add the checked envelopes (:mod:`hpcrail.results.envelope_check`) of a finished LTD run to ``res`` (in
    place): the windows of its largest peaks re-integrated from ``sol``'s samples with the monolithic problem
    ``prob`` (built from ``sc`` when None).  Nothing when the scenario does not check (``output.envelope_check``)
    or ``res`` is None (an MPI rank other than 0); NaN peaks when the run failed."""
    from hpcrail.kinds.ltd.outputs import envelope_checked
    from hpcrail.kinds.ltd.problem import ltd_problem

    if res is None or not envelope_checked(sc):
        return
    if prob is None:
        _model, prob = ltd_problem(sc)
    add_check(res, prob, sol, sc.integrator.method, sc.integrator.kwargs(), sc.output.envelope_check,
              prob.params.n_veh - 1)


__all__ = ["add_envelope_check", "ltd_result", "friction_result", "vehicle_positions", "potential_energy",
           "kinetic_energy", "modes_at", "stick_statistics"]
