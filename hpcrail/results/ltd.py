"""Assemble the result dataset of an LTD run (schema of :mod:`hpcrail.results.dataset`)."""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.config.loading import canonical_yaml, config_hash
from hpcrail.config.scenario import Scenario
from hpcrail.integrators.contract import Solution, Status
from hpcrail.models.couplers.kinematics import NS_FAIL, NS_ITER, NS_K_FAIL, NS_MAXIT, NS_SOLVES, NS_T_FAIL
from hpcrail.models.couplers.ltd_noninertial import NC_X, NW_STATS
from hpcrail.models.ltd.build import (
    ACC_FMAX, ACC_FMIN, ACC_HEAD, ACC_OFFROUTE, ACC_T_BUFF, ACC_T_DRAFT, ACC_VMAX, ACC_VMIN, G, LTDModel,
)
from hpcrail.models.ltd.kernel import (
    N_REC, REC_BRAKE, REC_COUPLER_FORCE, REC_DEFLECTION, REC_GRADE, REC_POSITION, REC_RESISTANCE,
    REC_TRACTION, ltd_outputs,
)
from hpcrail.provenance import provenance_attrs
from hpcrail.results.dataset import ENERGY, ENVELOPES, NEWTON, RUN_SCALARS, SCHEMA_VERSION, SERIES, coords, metric_vars, scalar
from hpcrail.results.metrics import ltd_metrics


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
    p = model.params
    v = y[1:p.block * p.n_veh:p.block]
    return float(0.5 * np.sum(v * v / p.inv_mass_eff))


def ltd_dataset(sc: Scenario, model: LTDModel, sol: Solution, config_yaml: str | None = None,
                attrs: bool = True) -> xr.Dataset:
    """Build the result dataset of one LTD run.

    ``sol.y`` float64[k, n] sampled states at ``sol.t``; metrics from ``sol.acc`` (every step).
    ``attrs=False`` leaves out the provenance and configuration attributes (a sweep stores them
    once per study, not per scenario; they cost a git call and a YAML dump) and keeps only
    ``status``, ``status_message`` and ``warnings``.
    """
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
    ltd_outputs(t, Y, p, rec, accel, ncmd, bcmd)
    c = coords(N, t, model.vehicle_types, model.connection_types)
    data = {
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
    if p.air_brake:
        data["brake_cylinder_pressure"] = Y[:, 3:B * N:B] * sc.air_brake.full_service_pressure_kPa * 1e3
    dv = {}
    for name, arr in data.items():
        dims, units, long_name = SERIES[name]
        dv[name] = (dims, arr, {"units": units, "long_name": long_name})
    acc = sol.acc
    h = ACC_HEAD
    fmax, fmin = acc[h:h + M], acc[h + M:h + 2 * M]
    emax, emin = acc[h + 2 * M:h + 3 * M], acc[h + 3 * M:h + 4 * M]
    env = {
        "coupler_max_draft_force": np.maximum(fmax, 0.0),
        "coupler_max_buff_force": np.maximum(-fmin, 0.0),
        "coupler_max_draft_deflection": np.maximum(emax, 0.0),
        "coupler_max_buff_deflection": np.maximum(-emin, 0.0),
    }
    for name, arr in env.items():
        units, long_name = ENVELOPES[name]
        dv[name] = (("coupler",), arr, {"units": units, "long_name": long_name})
    # mean speed from the distance travelled by every vehicle (exact, sampling independent)
    duration = sol.t_reached - 0.0
    s_end = vehicle_positions(model, sol.y_final)
    s_start = vehicle_positions(model, model.y0)
    mean_speed = float(np.mean(s_end - s_start) / duration) if duration > 0 else 0.0
    metrics = ltd_metrics(fmax, fmin, emax, emin, acc[ACC_VMAX], mean_speed, sc.output.reference_coupler)
    ds = xr.Dataset(dv, coords=c)
    for name, da in metric_vars(metrics).items():
        ds[name] = da
    stats = sol.stats
    status, message = sol.status.name.lower(), sol.message
    if sol.status == Status.NON_FINITE and ni_stats[NS_FAIL] > 0:
        status = Status.MODEL_FAILURE.name.lower()
        message = (f"the noninertial coupler equilibrium (Newton-Raphson) of coupler {int(ni_stats[NS_K_FAIL])} did "
                   f"not converge at t = {ni_stats[NS_T_FAIL]:.6g} s")
    run = {"status": status, "message": message, "wall_time": sol.wall_time,
           "compile_time": sol.compile_time, "nsteps": stats["steps"], "nrejected": stats["rejected"],
           "nfev": stats["nfev"], "t_reached": sol.t_reached}
    for name, val in run.items():
        units, long_name = RUN_SCALARS[name]
        ds[name] = scalar(val, units, long_name)
    if p.n_noninertial > 0:
        for name, val in (("newton_solves", ni_stats[NS_SOLVES]), ("newton_iterations", ni_stats[NS_ITER]),
                          ("newton_max_iterations", ni_stats[NS_MAXIT]), ("newton_failures", ni_stats[NS_FAIL])):
            units, long_name = NEWTON[name]
            ds[name] = scalar(int(val), units, long_name)
    if p.i_energy >= 0:
        ie = p.i_energy
        w = sol.y_final[ie:ie + 4] - model.y0[ie:ie + 4]
        dke = kinetic_energy(model, sol.y_final) - kinetic_energy(model, model.y0)
        dpe = potential_energy(model, sol.y_final) - potential_energy(model, model.y0)
        vals = {"traction_work": w[0], "resistance_work": w[1], "brake_work": w[2], "coupler_work": w[3],
                "kinetic_energy_change": dke, "potential_energy_change": dpe,
                "energy_balance_residual": w[0] - w[1] - w[2] - w[3] - dke - dpe}
        for name, val in vals.items():
            units, long_name = ENERGY[name]
            ds[name] = scalar(float(val), units, long_name)
    warnings = list(model.notes)
    if acc[ACC_OFFROUTE] > 0:
        warnings.append("the front of the train ran beyond the end of the route: the last section's grade "
                        "and curvature were extended")
    if acc[ACC_VMIN] < -0.01:
        warnings.append(f"a vehicle moved backwards (minimum speed {acc[ACC_VMIN]:.3g} m/s)")
    ds["max_draft_force"].attrs["time_of_max"] = float(acc[ACC_T_DRAFT])
    ds["max_buff_force"].attrs["time_of_max"] = float(acc[ACC_T_BUFF])
    _ = (ACC_FMAX, ACC_FMIN, ACC_VMIN)
    if not attrs:
        ds.attrs.update({"status": sol.status.name.lower(), "status_message": sol.message,
                         "warnings": "\n".join(warnings)})
        return ds
    ds.attrs.update(provenance_attrs())
    ds.attrs.update({
        "title": f"hpcrail longitudinal train dynamics: {sc.name}",
        "Conventions": "CF-1.10",
        "hpcrail_schema_version": SCHEMA_VERSION,
        "model": "ltd",
        "source": "hpcrail LTD model, Bosso et al. 2024 (paper 000) eqs (1)-(7)",
        "scenario_name": sc.name,
        "scenario_description": sc.description,
        "config_yaml": config_yaml if config_yaml is not None else canonical_yaml(sc),
        "config_hash": config_hash(sc),
        "integrator": sol.method,
        "integrator_settings": repr(sc.integrator.model_dump()),
        "integrator_stats": repr(sol.stats),
        "status": status,
        "status_message": message,
        "wall_time_s": float(sol.wall_time),
        "compile_time_s": float(sol.compile_time),
        "reference_coupler": int(metrics["reference_coupler"]),
        "warnings": "\n".join(warnings),
        "sign_convention": "forces and deflections + draft (tension), - buff (compression)",
    })
    return ds
