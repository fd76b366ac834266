"""The outputs of the pneumatic brake (:mod:`hpcrail.kinds.ltd.brake_outputs`) from an integrator solution:
sampled pressures, the metrics from the every-step observer (:func:`hpcrail.models.brakes.kernel.brake_observe`)
and the air-mass balance."""
from __future__ import annotations

import math

import numpy as np

from hpcrail.models.brakes import layout as L


def air_mass(model, y: np.ndarray) -> tuple[float, float]:
    """``(air mass [kg] in the pipe, reservoirs, chambers and cylinders, air exchanged with the outside [kg])``
    of state ``y`` (float64[n]): Σ state·V/(R T) over the states holding air, and Σ of the exchange states."""
    p = model.params
    N, B, nl = p.n_veh, p.block, model.brakes.nl
    blk = np.asarray(y[:B * N], float).reshape(N, B)[:, 2:2 + nl]
    rtv = p.pn_rtv
    held = np.where(rtv > 0, blk / np.where(rtv > 0, rtv, 1.0), 0.0)
    lacc = L.local_indices(model.brakes.nc, model.brakes.nx)["acc"]
    return float(held.sum()), float(blk[:, lacc].sum())


def _t95(levels: np.ndarray, dl: float, peak: float, t_app: float) -> float:
    """Time the cylinder reached 95 % of ``peak`` [Pa] from its level-crossing times ``levels`` (level k at
    (k+1)·dl, NaN if not crossed): linear interpolation between the levels around 0.95·peak."""
    target = 0.95 * peak
    k = int(math.floor(target / dl)) - 1      # the last level at or below the target
    hi = k + 1
    if hi >= levels.size or not math.isfinite(levels[hi]):
        return levels[k] if 0 <= k < levels.size else math.nan
    if k < 0:
        lo_l, lo_t = 0.0, t_app
    else:
        lo_l, lo_t = (k + 1) * dl, levels[k]
    hi_l, hi_t = (hi + 1) * dl, levels[hi]
    return lo_t + (target - lo_l) / (hi_l - lo_l) * (hi_t - lo_t)


def signal_speed(x: np.ndarray, t: np.ndarray) -> float:
    """Inverse slope [m/s] of the least-squares line of arrival time ``t`` [s] against pipe distance ``x`` [m]
    (finite arrivals only, the nearest 10 % left out: the front forms there); NaN with fewer than 3."""
    ok = np.isfinite(t)
    x, t = x[ok], t[ok]
    if x.size >= 10:
        keep = x >= np.quantile(x, 0.1)
        x, t = x[keep], t[keep]
    if x.size < 3 or np.ptp(x) <= 0:
        return math.nan
    slope = np.polyfit(x, t, 1)[0]
    return float(1.0 / slope) if slope > 0 else math.nan


def brake_values(sc, model, sol, t: np.ndarray, Y: np.ndarray) -> tuple[dict, list]:
    """Values of the pneumatic brake's outputs (and warnings) of one run: ``t`` float64[k] sample times,
    ``Y`` float64[k, n] sampled states, ``sol`` the integrator solution (observer ``acc``, final state)."""
    from hpcrail.kinds.ltd.brake_outputs import BRAKE_OUTPUTS
    from hpcrail.models.brakes.kernel import brake_series

    p = model.params
    N = p.n_veh
    k = t.size
    bp, ar, bc, x0, fn = (np.full((k, N), np.nan) for _ in range(5))
    brake_series(Y, p, bp, ar, bc, x0, fn)
    v = {"brake_pipe_pressure": bp, "auxiliary_reservoir_pressure": ar, "brake_cylinder_pressure": bc}
    decl = {o.name: o for o in BRAKE_OUTPUTS}
    kind = p.pn_v[:, L.V_KIND]
    if decl["control_reservoir_pressure"].applies(sc):
        v["control_reservoir_pressure"] = np.where(kind[None, :] == L.K_UIC, x0, np.nan)
    if decl["emergency_reservoir_pressure"].applies(sc):
        v["emergency_reservoir_pressure"] = np.where(kind[None, :] == L.K_AAR, x0, np.nan)
    if decl["eot_brake_pipe_pressure"].applies(sc):
        delay = sc.air_brake.pneumatic.eot.radio_delay_s
        v["eot_brake_pipe_pressure"] = np.interp(t - delay, t, bp[:, -1], left=np.nan) if k else bp[:, -1]
    # ---- metrics from the observer
    s = p.pn_s
    acc = sol.acc
    o = int(s[L.S_ACC_OFF])
    ob = o + L.N_A
    K = int(s[L.S_NLVL])
    dl = s[L.S_DLVL]

    def block(b):
        return acc[ob + b * N:ob + (b + 1) * N]

    t_app, t_rel = float(acc[o + L.A_TAPP]), float(acc[o + L.A_TREL])
    levels = acc[ob + L.N_B * N:ob + L.N_B * N + N * K].reshape(N, K)
    peak = block(L.B_BCMAX).copy()
    applied = peak > max(2 * dl, s[L.S_REL_END])
    t95 = np.array([_t95(levels[j], dl, peak[j], t_app) if applied[j] else math.nan for j in range(N)])
    app = t95 - t_app
    rel = block(L.B_TRELEND) - t_rel if math.isfinite(t_rel) else np.full(N, np.nan)
    front = block(L.B_TFRONT) - t_app
    v["brake_front_arrival_time"] = front
    v["brake_application_time"] = app
    v["brake_release_time"] = rel
    v["max_brake_cylinder_pressure"] = peak
    # signal speed of the lead's front: from the lead's valve to where it meets the front of the first remote
    # (the latest arrival before that remote) or to the tail
    x = model.brakes.pipe_x
    dbv = np.flatnonzero(p.pn_v[:, L.V_DBV] != 0)
    lead = int(dbv[0]) if dbv.size else 0
    end = int(dbv[1]) if dbv.size > 1 else N
    seg = front[lead:end]
    if dbv.size > 1 and np.isfinite(seg).any():
        end = lead + int(np.nanargmax(seg)) + 1
    v["brake_signal_speed"] = signal_speed(x[lead:end] - x[lead], front[lead:end]) if math.isfinite(t_app) \
        else math.nan
    v["application_time_lead"], v["application_time_tail"] = float(app[0]), float(app[-1])
    v["release_time_lead"], v["release_time_tail"] = float(rel[0]), float(rel[-1])
    buff = acc[o + L.A_BUFF]
    v["max_buff_force_braking"] = float(-buff) if math.isfinite(buff) and buff < 0 else \
        (0.0 if math.isfinite(t_app) and t_app <= sol.t_reached else math.nan)
    v["max_buff_force_braking_coupler"] = float(acc[o + L.A_BUFF_K]) if math.isfinite(buff) and buff < 0 else math.nan
    v["stopping_distance"] = float(acc[o + L.A_SSTOP] - acc[o + L.A_SAPP])
    v["stopping_time"] = float(acc[o + L.A_TSTOP] - t_app)
    v["brake_application_command_time"] = t_app
    v["brake_release_command_time"] = t_rel if math.isfinite(t_rel) else math.nan
    m0, e0 = air_mass(model, model.y0)
    m1, e1 = air_mass(model, sol.y_final)
    v["air_mass_initial"] = m0
    v["air_exchanged"] = e1 - e0
    v["air_mass_balance_residual"] = (m1 + (e1 - e0) - m0) / m0
    warnings = []
    if abs(v["air_mass_balance_residual"]) > 1e-3:   # the reduced Jacobian closes it to ~1e-5 (Newton tolerance)
        warnings.append(f"the air mass balance closes only to {v['air_mass_balance_residual']:.2g} (relative): "
                        "tighten integrator.rtol or use air_brake.pneumatic.jacobian: full")
    return v, warnings


__all__ = ["brake_values", "air_mass", "signal_speed"]
