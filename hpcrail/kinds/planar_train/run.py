"""Running a ``planar_train`` scenario: problem set-up, run, outputs as plain arrays, and the
linearisation for ``hpcrail modes``.  Source: Massa et al. 2012 eqs 24-45.
"""
from __future__ import annotations

import numpy as np

from hpcrail.integrators import Problem, integrate
from hpcrail.integrators.contract import Status
from hpcrail.kinds.descriptor import Linearisation
from hpcrail.kinds.ltd.outputs import coupler_envelope_values, train_metrics
from hpcrail.kinds.planar_train.build import build_planar
from hpcrail.kinds.planar_train.schema import PlanarTrainScenario
from hpcrail.models.couplers.envelope import (
    ACC_HEAD, ACC_OFFROUTE, ACC_T_BUFF, ACC_T_DRAFT, ACC_VMAX, N_ENV, coupler_envelopes,
)
from hpcrail.models.couplers.kinematics import NS_FAIL, NS_ITER, NS_K_FAIL, NS_MAXIT, NS_SOLVES, NS_T_FAIL
from hpcrail.models.planar_train.build import PlanarModel, car_positions
from hpcrail.models.planar_train.kernel import (
    N_RC, N_RK, RC_ACC, RC_ALAT, RC_LTR, RC_PSI, RC_RES, RC_S, RC_TRAC, RC_Y, RK_AA, RK_AB, RK_ADA, RK_ADB, RK_DA,
    RK_DB, RK_DDA, RK_DDB, RK_E, RK_F, RK_FBA, RK_FBB, RK_KN, RK_KND, planar_observe, planar_outputs, planar_rhs,
)
from hpcrail.results.outputs import RunInfo, RunResult
from hpcrail.results.sampling import sample_times


def planar_problem(sc: PlanarTrainScenario):
    """``(model, Problem)`` of a planar-train scenario."""
    import numba

    model = build_planar(sc)
    # the per-sample outputs kernel compiles while a first run's compile helper compiles the integrator
    out_types = tuple(numba.typeof(a) for a in (np.zeros(1), np.zeros((1, 1)), model.params, np.zeros((1, 1, 1)),
                                               np.zeros((1, 1, 1))))
    prob = Problem(planar_rhs, planar_observe, model.params, model.y0, t0=0.0, atol_scale=model.atol_scale,
                   acc0=model.acc0, precompile=((planar_outputs, out_types),))
    return model, prob


def run(sc: PlanarTrainScenario, *, progress=None, t_out=None) -> RunResult:
    """Simulate a planar-train scenario (failures are in the result's status); ``t_out``: sample times
    [s] of the series (default: every ``output.interval_s`` and the end)."""
    model, prob = planar_problem(sc)
    if t_out is None:
        t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
    # without a progress display one kernel call: chunking costs a parameter unboxing per chunk,
    # which dominates short runs of small models
    sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                    n_chunks=200 if progress is not None else 1, **sc.integrator.kwargs())
    return planar_result(sc, model, sol)


def final_status(model: PlanarModel, sol) -> tuple[str, str]:
    """Status name and message; a non-finite end after failed Newton solves is a model failure."""
    st = model.params.ni_stats
    if sol.status == Status.NON_FINITE and st[NS_FAIL] > 0:
        return (Status.MODEL_FAILURE.name.lower(),
                f"the noninertial coupler equilibrium (Newton-Raphson) of coupler {int(st[NS_K_FAIL])} did not "
                f"converge at t = {st[NS_T_FAIL]:.6g} s (raise coupler.newton.max_iterations, loosen "
                "coupler.newton.tolerance_m or reduce the step)")
    return sol.status.name.lower(), sol.message


def planar_result(sc, model: PlanarModel, sol) -> RunResult:
    """Outputs of one planar-train run: series from the sampled states ``sol.y`` (float64[k, n]) at
    ``sol.t``, envelopes and metrics from the every-step observer ``sol.acc``.  Per-sample coupler
    quantities of the noninertial model are recomputed from the sampled car states (Newton-Raphson,
    cold start at the first sample, then each sample warm-starts the next)."""
    p = model.params
    N, M = p.n_car, p.n_cpl
    t = sol.t
    Y = np.ascontiguousarray(sol.y)
    k = t.size
    stats_before = p.ni_stats.copy()
    p.ni_x[:] = 0.0
    rec_car = np.full((k, N_RC, N), np.nan)
    rec_cpl = np.full((k, N_RK, M), np.nan)
    planar_outputs(t, Y, p, rec_car, rec_cpl)
    p.ni_stats[:] = stats_before  # the statistics describe the integration only

    def ends(ra, rb):
        return np.stack([rec_cpl[:, ra, :], rec_cpl[:, rb, :]], axis=-1)

    values = {
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
    acc = sol.acc
    fmax, fmin, emax, emin = coupler_envelopes(acc, M)
    values.update(coupler_envelope_values(fmax, fmin, emax, emin))
    h = ACC_HEAD + N_ENV * M
    values["max_abs_shank_angle"] = np.stack([acc[h:h + M], acc[h + M:h + 2 * M]], axis=-1)
    duration = sol.t_reached
    if duration > 0 and np.all(np.isfinite(sol.y_final)):
        mean_speed = float(np.mean(car_positions(p, sol.y_final) - car_positions(p, model.y0)) / duration)
    else:
        mean_speed = float("nan")
    value_attrs = {}
    if np.all(np.isfinite(fmax)) and np.all(np.isfinite(fmin)):
        metrics = train_metrics(fmax, fmin, emax, emin, acc[ACC_VMAX], mean_speed, None)
        value_attrs = {"max_draft_force": {"time_of_max": float(acc[ACC_T_DRAFT])},
                       "max_buff_force": {"time_of_max": float(acc[ACC_T_BUFF])}}
    else:   # the integration failed before its first step
        metrics = {"max_speed": np.nan, "mean_speed": np.nan, "max_draft_force": np.nan, "max_draft_force_coupler": 0,
                   "max_buff_force": np.nan, "max_buff_force_coupler": 0, "mean_max_draft_force": np.nan,
                   "mean_max_buff_force": np.nan, "max_draft_deflection": np.nan, "max_buff_deflection": np.nan,
                   "reference_coupler": 0}
    values.update(metrics)
    values["time_of_max_draft_force"] = float(acc[ACC_T_DRAFT])
    values["time_of_max_buff_force"] = float(acc[ACC_T_BUFF])
    status, message = final_status(model, sol)
    st = p.ni_stats
    values.update({"coupler_newton_solves": int(st[NS_SOLVES]), "coupler_newton_iterations": int(st[NS_ITER]),
                   "coupler_newton_max_iterations": int(st[NS_MAXIT]), "coupler_newton_failures": int(st[NS_FAIL])})
    warnings = list(model.notes)
    if acc[ACC_OFFROUTE] > 0:
        warnings.append("a car ran beyond the ends of the defined track (a bogie centre) (continued as a straight line)")
    return RunResult(run=RunInfo.from_solution(sol, status, message), values=values, time=t, warnings=warnings,
                     value_attrs=value_attrs, attrs={"coupler_model": model.coupler_model})


def planar_linearisation(sc: PlanarTrainScenario, at: float = 0.0):
    """Linearisation data for :mod:`hpcrail.analysis.modes` (state at time ``at`` [s], integrated there
    from the initial state if ``at`` > 0).  Raises ``RuntimeError`` if that integration fails."""
    model, prob = planar_problem(sc)
    y = model.y0.copy()
    if at > 0.0:
        sol = integrate(prob, sc.integrator.method, np.array([at]), at, n_chunks=1, **sc.integrator.kwargs())
        if not sol.success:
            raise RuntimeError(f"integration to t = {at} s failed: {sol.message}")
        y = sol.y_final.copy()
    pos = model.position_indices()
    vel = model.velocity_indices()
    N = model.n_cars
    names = [model.state_names[i] for i in pos]
    # physical coordinates: car arc lengths instead of the head position and gaps
    T = np.eye(pos.size)
    for j in range(1, N):
        T[3 * j, :] = 0.0
        T[3 * j, 0] = 1.0
        for i in range(1, j + 1):
            T[3 * j, 3 * i] = -1.0
    phys_names = list(names)
    for j in range(N):
        phys_names[3 * j] = f"car {j + 1} longitudinal"
    scales = np.ones(pos.size)
    for j in range(N):
        scales[3 * j + 2] = sc.car_types[model.vehicle_types[j]].coupler_pivot_from_centre_m  # yaw → m at the car end
    if model.params.inertial:
        ls = sc.coupler.shank.length_m
        for k in range(N - 1):
            b = 3 * N + 4 * k
            scales[b + 1] = ls
            scales[b + 3] = ls
    return Linearisation(rhs=prob.rhs, params=model.params, t=float(at), y=y, pos=pos, vel=vel,
                         coord_names=phys_names, coord_transform=T, coord_scales=scales,
                         description=f"{sc.name} ({model.coupler_model} couplers)")


__all__ = ["planar_problem", "run", "planar_result", "final_status", "planar_linearisation"]
