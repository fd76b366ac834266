"""Assemble the result dataset of a planar-train run (schema of :mod:`hpcrail.results.dataset`)."""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.config.loading import canonical_yaml, config_hash
from hpcrail.integrators.contract import Solution, Status
from hpcrail.models.couplers.kinematics import NS_FAIL, NS_ITER, NS_K_FAIL, NS_MAXIT, NS_SOLVES, NS_T_FAIL
from hpcrail.models.couplers.planar_build import (
    ACC_HEAD, ACC_OFFTRACK, ACC_T_BUFF, ACC_T_DRAFT, ACC_VMAX, PlanarModel, car_positions,
)
from hpcrail.models.couplers.planar_kernel import (
    N_RC, N_RK, RC_ACC, RC_ALAT, RC_LTR, RC_PSI, RC_RES, RC_S, RC_TRAC, RC_Y, RK_AA, RK_AB, RK_ADA, RK_ADB, RK_DA,
    RK_DB, RK_DDA, RK_DDB, RK_E, RK_F, RK_FBA, RK_FBB, RK_KN, RK_KND, planar_outputs,
)
from hpcrail.provenance import provenance_attrs
from hpcrail.results.dataset import (
    ENVELOPES, NEWTON, RUN_SCALARS, SCHEMA_VERSION, SERIES, coords, coupler_end_coord, metric_vars, scalar,
)
from hpcrail.results.metrics import ltd_metrics


def final_status(model: PlanarModel, sol: Solution) -> tuple[str, str]:
    """Status name and message; a non-finite end after failed Newton solves is a model failure."""
    st = model.params.ni_stats
    if sol.status == Status.NON_FINITE and st[NS_FAIL] > 0:
        return (Status.MODEL_FAILURE.name.lower(),
                f"the noninertial coupler equilibrium (Newton-Raphson) of coupler {int(st[NS_K_FAIL])} did not "
                f"converge at t = {st[NS_T_FAIL]:.6g} s (raise coupler.newton.max_iterations, loosen "
                "coupler.newton.tolerance_m or reduce the step)")
    return sol.status.name.lower(), sol.message


def planar_dataset(sc, model: PlanarModel, sol: Solution, config_yaml: str | None = None) -> xr.Dataset:
    """Build the result dataset of one planar-train run.

    ``sol.y`` float64[k, n] sampled states at ``sol.t``; envelopes from ``sol.acc`` (every step).
    Per-sample coupler quantities of the noninertial model are recomputed from the sampled car states
    (Newton-Raphson, warm-started from the end of the run).
    """
    p = model.params
    N, M = p.n_car, p.n_cpl
    t = sol.t
    Y = np.ascontiguousarray(sol.y)
    k = t.size
    stats_before = p.ni_stats.copy()
    p.ni_x[:] = 0.0  # cold start at the first sample, then each sample warm-starts the next
    rec_car = np.full((k, N_RC, N), np.nan)
    rec_cpl = np.full((k, N_RK, M), np.nan)
    planar_outputs(t, Y, p, rec_car, rec_cpl)
    p.ni_stats[:] = stats_before  # the statistics describe the integration only
    c = coords(N, t, model.vehicle_types, [model.coupler_model] * M)
    c.update(coupler_end_coord())

    def ends(ra, rb):
        return np.stack([rec_cpl[:, ra, :], rec_cpl[:, rb, :]], axis=-1)

    data = {
        "position": rec_car[:, RC_S, :],
        "speed": Y[:, 3:6 * N:6],
        "acceleration": rec_car[:, RC_ACC, :],
        "lateral_displacement": rec_car[:, RC_Y, :],
        "yaw_angle": rec_car[:, RC_PSI, :],
        "lateral_acceleration": rec_car[:, RC_ALAT, :],
        "load_transfer_ratio": rec_car[:, RC_LTR, :],
        "tractive_force": rec_car[:, RC_TRAC, :],
        "resistance_force": rec_car[:, RC_RES, :],
        "coupler_force": rec_cpl[:, RK_F, :],
        "coupler_deflection": rec_cpl[:, RK_E, :],
        "slider_displacement": ends(RK_DA, RK_DB),
        "slider_displacement_rate": ends(RK_DDA, RK_DDB),
        "shank_angle": ends(RK_AA, RK_AB),
        "shank_angle_rate": ends(RK_ADA, RK_ADB),
        "draft_gear_force": ends(RK_FBA, RK_FBB),
        "knuckle_displacement": rec_cpl[:, RK_KN, :],
        "knuckle_displacement_rate": rec_cpl[:, RK_KND, :],
    }
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
    dv["max_abs_shank_angle"] = (("coupler", "coupler_end"),
                                 np.stack([acc[h + 4 * M:h + 5 * M], acc[h + 5 * M:h + 6 * M]], axis=-1),
                                 {"units": "rad", "long_name": "largest |shank angle| over every step"})
    ds = xr.Dataset(dv, coords=c)
    duration = sol.t_reached
    if duration > 0 and np.all(np.isfinite(sol.y_final)):
        mean_speed = float(np.mean(car_positions(p, sol.y_final) - car_positions(p, model.y0)) / duration)
    else:
        mean_speed = float("nan")
    finite = np.all(np.isfinite(fmax)) and np.all(np.isfinite(fmin))
    if finite:
        metrics = ltd_metrics(fmax, fmin, emax, emin, acc[ACC_VMAX], mean_speed, None)
        for name, da in metric_vars(metrics).items():
            ds[name] = da
    status, message = final_status(model, sol)
    stats = sol.stats
    run = {"status": status, "message": message, "wall_time": sol.wall_time,
           "compile_time": sol.compile_time, "nsteps": stats["steps"], "nrejected": stats["rejected"],
           "nfev": stats["nfev"], "t_reached": sol.t_reached}
    for name, val in run.items():
        units, long_name = RUN_SCALARS[name]
        ds[name] = scalar(val, units, long_name)
    st = p.ni_stats
    for name, val in (("newton_solves", st[NS_SOLVES]), ("newton_iterations", st[NS_ITER]),
                      ("newton_max_iterations", st[NS_MAXIT]), ("newton_failures", st[NS_FAIL])):
        units, long_name = NEWTON[name]
        ds[name] = scalar(int(val), units, long_name)
    warnings = list(model.notes)
    if acc[ACC_OFFTRACK] > 0:
        warnings.append("a car ran beyond the ends of the defined track (a bogie centre) (continued as a straight line)")
    if finite:
        ds["max_draft_force"].attrs["time_of_max"] = float(acc[ACC_T_DRAFT])
        ds["max_buff_force"].attrs["time_of_max"] = float(acc[ACC_T_BUFF])
    ds.attrs.update(provenance_attrs())
    ds.attrs.update({
        "title": f"hpcrail planar train with {model.coupler_model} couplers: {sc.name}",
        "Conventions": "CF-1.10",
        "hpcrail_schema_version": SCHEMA_VERSION,
        "model": "planar_train",
        "coupler_model": model.coupler_model,
        "source": "hpcrail planar train, Massa et al. 2012 (paper 002) eqs 24-45",
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
        "warnings": "\n".join(warnings),
        "sign_convention": "forces and deflections + draft (tension), - buff (compression); lateral + left",
    })
    return ds
