"""Running a ``railway_vehicle`` scenario: integration, per-sample outputs, steady-curving values and the
EN 14363 running-safety quantities, returned as plain arrays of the declared outputs.

The running-safety metrics and the steady-curving values are computed from the run's own samples
(``output.interval_s``); a sweep's coarser series grid is a selection of those samples
(:func:`~hpcrail.results.sampling.sample_indices`), never a resampled run.
"""
from __future__ import annotations

import numpy as np

from hpcrail.integrators import Problem, integrate
from hpcrail.kinds.railway_vehicle.build import build_railway_vehicle
from hpcrail.kinds.railway_vehicle.outputs import SERIES_NAMES
from hpcrail.kinds.railway_vehicle.schema import RailwayVehicleScenario
from hpcrail.models.vehicle import build as B
from hpcrail.models.vehicle.kernel import diag_size, vehicle_observe, vehicle_outputs, vehicle_rhs
from hpcrail.results.outputs import RunInfo, RunResult
from hpcrail.results.running_safety import running_safety
from hpcrail.results.sampling import sample_times, select_samples


def problem(model) -> Problem:
    """The integrator problem of a built vehicle (observer: per-body envelopes of |y| and |ψ|); the per-sample
    outputs kernel is compiled while a first run's compile helper compiles the integrator."""
    import numba

    P = model.params
    out_types = tuple(numba.typeof(a) for a in (np.zeros(1), np.zeros((1, 1)), P, np.zeros((1, 1)),
                                               np.zeros((1, 1))))
    return Problem(vehicle_rhs, vehicle_observe, P, model.y0, acc0=np.zeros(2 * P.n_body),
                   precompile=((vehicle_outputs, out_types),))


def solve(sc: RailwayVehicleScenario, model, progress=None, n_chunks: int = 50):
    """Integrate a built model with the scenario's integrator block; samples every ``output.interval_s``."""
    t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
    return integrate(problem(model), sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                     n_chunks=n_chunks, **sc.integrator.kwargs())


def run(sc: RailwayVehicleScenario, *, progress=None, t_out=None) -> RunResult:
    """Simulate a railway-vehicle scenario (failures in the result's status).  ``t_out`` [s] selects a subset
    of the run's samples for the series (a sweep's grid; ValueError if a time is not one of them)."""
    model = build_railway_vehicle(sc)
    sol = solve(sc, model, progress=progress)
    res = railway_vehicle_result(sc, model, sol)
    if t_out is not None:
        select_samples(res, t_out, SERIES_NAMES, f"railway-vehicle scenario {sc.name!r}")
    return res


def last_curve(sc) -> tuple[float, float] | None:
    """(start, end) arc lengths [m] of the last circular-curve section, or None."""
    pos = 0.0
    out = None
    for s in sc.track.sections:
        if s.kind == "curve":
            out = (pos, pos + s.length_m)
        pos += s.length_m
    return out


def steady_mask(sc, model, s_ref: np.ndarray) -> np.ndarray:
    """Samples of the steady-curving window: every wheelset inside the last circular curve and the leading
    wheelset within the last ``output.steady_window_m`` of the track run so (False everywhere if the
    vehicle runs less than that inside the curve)."""
    P = model.params
    cur = last_curve(sc)
    mask = np.zeros(s_ref.size, dtype=bool)
    if cur is None:
        return mask
    xw = P.b_x[P.w_body]
    inside = (s_ref + xw.min() >= cur[0]) & (s_ref + xw.max() <= cur[1]) & np.isfinite(s_ref)
    if not inside.any():
        return mask
    lead = s_ref + xw.max()
    span = lead[inside].max() - lead[inside].min()
    win = sc.output.steady_window_m
    if span < win - 1e-9:
        return mask
    return inside & (lead >= lead[inside].max() - win)


def railway_vehicle_result(sc, model, sol, D=None) -> RunResult:
    """Outputs of one run from the sampled states ``sol.y`` and the every-step envelopes ``sol.acc``.
    ``D`` float64[k, diag_size]: the per-sample outputs when the caller evaluated them (a mixed train's
    detailed vehicle, whose forces come from the consist); default: evaluated here, the vehicle alone."""
    P = model.params
    lay = model.layout
    t = sol.t
    Y = np.ascontiguousarray(sol.y)
    k = t.size
    nb, nw = P.n_body, P.n_ws
    nwh = 2 * nw
    if D is None:
        D = np.full((k, diag_size(P)), np.nan)
        dY = np.full_like(Y, np.nan)
        vehicle_outputs(t, Y, P, D, dY)
    body = D[:, :nb * B.D_BODY].reshape(k, nb, B.D_BODY)
    wheel = D[:, nb * B.D_BODY:nb * B.D_BODY + nwh * B.D_WHEEL].reshape(k, nwh, B.D_WHEEL)
    wsd = D[:, nb * B.D_BODY + nwh * B.D_WHEEL:].reshape(k, nw, B.D_WS)
    s_ref = Y[:, B.S_POS]
    x_lead = float(P.b_x[P.w_body].max())
    values = {
        "distance": s_ref + x_lead,
        "speed": Y[:, B.S_VEL].copy(),
        "lateral_displacement": body[:, :, 0].copy(),
        "vertical_displacement": body[:, :, 1].copy(),
        "roll": body[:, :, 2].copy(),
        "yaw": body[:, :, 4].copy(),
        "wheel_load": wheel[:, :, B.DW_Q].copy(),
        "lateral_force": wheel[:, :, B.DW_Y].copy(),
        "normal_force": wheel[:, :, B.DW_N].copy(),
        "flange_normal_force": wheel[:, :, B.DW_NFLANGE].copy(),
        "longitudinal_creepage": wheel[:, :, B.DW_XI_X].copy(),
        "lateral_creepage": wheel[:, :, B.DW_XI_Y].copy(),
        "spin_creepage": wheel[:, :, B.DW_SPIN].copy(),
        "contact_position_wheel": wheel[:, :, B.DW_SW].copy(),
        "contact_position_rail": wheel[:, :, B.DW_SR].copy(),
        "contact_angle": wheel[:, :, B.DW_GAMMA].copy(),
        "rolling_radius": wheel[:, :, B.DW_R].copy(),
        "flange_contact": np.where(np.isfinite(wheel[:, :, B.DW_FLANGE]), wheel[:, :, B.DW_FLANGE], 0).astype(np.int8),
        "flange_indentation": wheel[:, :, B.DW_DELTA].copy(),
        "wear_number": wheel[:, :, B.DW_TGAMMA].copy(),
        "sum_y": wsd[:, :, B.DWS_SUMY].copy(),
        "fixed_point_iterations": wsd[:, :, B.DWS_ITER].copy(),
    }
    Q0 = model.static_wheel_load
    values["static_wheel_load"] = Q0.copy()
    # running safety from the finite samples (a failed run's tail is NaN)
    ok = np.all(np.isfinite(D), axis=1)
    n_ok = int(np.argmin(ok)) if not ok.all() else k
    pos_w = s_ref[:, None] + P.b_x[P.w_body][None, :]
    ens = sc.output.en14363
    rs = running_safety(t[:n_ok], pos_w[:n_ok], values["wheel_load"][:n_ok], values["lateral_force"][:n_ok],
                        values["sum_y"][:n_ok], Q0, np.repeat(np.arange(nw), 2), window_m=ens.window_m,
                        step_m=ens.step_m, lowpass_hz=ens.lowpass_hz, alpha=ens.prudhomme_alpha)
    yq = np.full((k, nwh), np.nan)
    unl = np.full((k, nwh), np.nan)
    yq[:n_ok] = rs["y_over_q"]
    unl[:n_ok] = rs["wheel_unloading"]
    values["y_over_q"] = yq
    values["wheel_unloading"] = unl
    values["max_y_over_q_2m"] = rs["max_y_over_q_2m"]
    values["max_wheel_unloading_2m"] = rs["max_wheel_unloading_2m"]
    values["max_sum_y_2m"] = rs["max_sum_y_2m"]
    values["sum_y_limit"] = np.asarray(rs["sum_y_limit"], float)
    wheels = lay.wheel_names
    wsn = lay.wheelset_names
    ex = rs["extreme_y_over_q"]
    values["max_y_over_q"] = ex.value
    values["y_over_q_ratio"] = ex.value / ens.y_q_limit
    values["max_y_over_q_wheel"] = wheels[ex.index] if ex.index >= 0 else ""
    values["max_y_over_q_position"] = ex.position
    values["max_y_over_q_time"] = ex.time
    exs = rs["extreme_sum_y"]
    exr = rs["extreme_sum_y_ratio"]
    values["max_sum_y"] = exs.value
    values["sum_y_ratio"] = exr.value
    values["max_sum_y_wheelset"] = wsn[exs.index] if exs.index >= 0 else ""
    values["max_sum_y_position"] = exs.position
    values["max_sum_y_time"] = exs.time
    exu = rs["extreme_unloading"]
    values["max_wheel_unloading"] = exu.value
    values["max_wheel_unloading_wheel"] = wheels[exu.index] if exu.index >= 0 else ""
    values["max_wheel_unloading_position"] = exu.position
    values["max_wheel_unloading_time"] = exu.time
    tg = values["wear_number"][:n_ok]
    values["mean_wear_number"] = tg.mean(axis=0) if tg.shape[0] else np.full(nwh, np.nan)
    values["max_mean_wear_number"] = float(np.max(values["mean_wear_number"])) if tg.shape[0] else float("nan")
    Qs = values["wheel_load"][:n_ok]
    values["max_wheel_load"] = float(np.max(Qs)) if Qs.size else float("nan")
    values["min_wheel_load"] = float(np.min(Qs)) if Qs.size else float("nan")
    # envelopes over every step
    acc = sol.acc
    values["max_abs_lateral_displacement"] = np.array(acc[:nb], float)
    values["max_abs_yaw"] = np.array(acc[nb:2 * nb], float)
    values["max_lateral_displacement"] = float(np.max(acc[:nb][P.w_body]))
    fl = values["flange_contact"][:n_ok].any(axis=1)
    dist = values["distance"][:n_ok]
    values["flange_contact_distance"] = float(np.sum(np.diff(dist)[fl[1:]])) if dist.size > 1 else 0.0
    # steady curving (paper 004 Tables 5-6)
    m = steady_mask(sc, model, np.where(np.arange(k) < n_ok, s_ref, np.nan))
    if m.any():
        values["steady_lateral_displacement"] = values["lateral_displacement"][m].mean(axis=0)
        values["steady_yaw"] = values["yaw"][m].mean(axis=0)
    else:
        values["steady_lateral_displacement"] = np.full(nb, np.nan)
        values["steady_yaw"] = np.full(nb, np.nan)
    warnings = list(model.notes)
    flags = wsd[:n_ok, :, B.DWS_CLAMP]
    if np.any(flags > 0):
        warnings.append("the lateral shift or the gauge variation left the LUT's range (paper 004 Table 10 grid): "
                        "values were clamped to the table")
    its = wsd[:n_ok, :, B.DWS_ITER]
    if its.size and np.max(its) >= sc.contact.fixed_point_max_iterations:
        warnings.append("the normal/creep-force fixed point hit contact.fixed_point_max_iterations at a sample")
    if np.isfinite(values["min_wheel_load"]) and values["min_wheel_load"] < 0:
        warnings.append(f"a wheel load fell below zero ({values['min_wheel_load'] / 1e3:.3g} kN): the contact "
                        "constraint held a lifting wheel")
    end = sc.track.length()
    if dist.size and dist[-1] > end + 1e-6:
        warnings.append(f"the leading wheelset ran beyond the end of the track ({end:g} m; the track continues "
                        "straight and level)")
    kec_it = wsd[:n_ok, :, B.DWS_KEC]
    if sc.contact.method == "kec" and kec_it.size and np.min(kec_it) < 0:
        warnings.append("a KEC constraint solve did not converge to 1e-13 m at a sample")
    from hpcrail.results.verdicts import cut_short_warnings

    warnings += cut_short_warnings(values, ("max_y_over_q_time", "max_sum_y_time", "max_wheel_unloading_time"),
                                   float(sol.t_reached), {"max_y_over_q_time": "the largest (Y/Q) 2 m mean",
                                                          "max_sum_y_time": "the largest |sum Y| 2 m mean",
                                                          "max_wheel_unloading_time": "the largest wheel unloading"})
    irr = sc.track.irregularity
    attrs = {"speed_mps": float(sc.simulation.speed_mps), "contact_method": sc.contact.method,
             "profile_pair": sc.contact.profiles.name, "contact_tables": getattr(model, "contact_key", ""),
             "K_hertz_N_per_m1p5": float(sc.contact.profiles.flange_penalty.K_hertz_N_per_m1p5),
             "track_irregularity": irr.kind if irr.kind != "psd" else
             f"psd {irr.spectrum} seed {irr.seed} ({', '.join(irr.components)})",
             "state_names": ",".join(lay.state_names()),
             "metrics_title": "steady curving and EN 14363 running safety"}
    return RunResult(run=RunInfo.from_solution(sol), values=values, time=t, attrs=attrs, warnings=warnings,
                     value_attrs={"max_y_over_q": {"limit": float(ens.y_q_limit)},
                                  "max_wheel_unloading": {"limit": float(ens.dq_q_limit)}})


__all__ = ["run", "solve", "problem", "railway_vehicle_result", "steady_mask", "last_curve"]
