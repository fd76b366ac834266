"""Quasi-static running safety of every vehicle of an LTD consist: the outputs the LTD kind declares for it and
their computation from a run's samples.

The model is :mod:`hpcrail.models.safety.quasi_static` (coupler angles from the route geometry, bogie lateral
forces, steady-state curving of each bogie, wheel loads; El-Sibaie 1993, Handbook of Railway Vehicle Dynamics
ch. 10, EN 14363 / UIC 530-2 quantities).  It is a post-processing of the in-train forces: a run is sampled at
every ``output.running_safety.interval_s`` in addition to its own output times (so that a sweep keeping no
series still gets every vehicle's maxima), the quantities are computed at those samples, and the series are
returned at the requested times only.  The maxima are therefore maxima over those samples, not over every
integrator step (the coupler-force envelopes are); ``peak_buff_force_at_vehicle`` and the endurable-force ratio
use the every-step envelopes.

Outputs (``output.running_safety.enabled``): per vehicle and sample the largest quasi-static Y/Q of its wheels,
truck-side ΣY/ΣQ, wheel unloading ΔQ/Q, |ΣY|/Prud'homme, the lateral force of its couplers and its coupler yaw
angles; per vehicle the maximum of each with its time and route position, the worst ratio to the limits,
jack-knife/stringline flags, the peak buff force at it and its ratio to the vehicle type's endurable
longitudinal compressive force (EN 15839); per run the worst of each over the consist with the vehicle.
"""
from __future__ import annotations

import math

import numpy as np

from hpcrail.results.outputs import Output

_E = lambda sc: sc.output.running_safety.enabled  # noqa: E731
_W = "output.running_safety.enabled"
_VS = ("time", "vehicle")
IN_KN = dict(display_units="kN", display_scale=1e-3)
IN_DEG = dict(display_units="degree", display_scale=180.0 / math.pi)
IN_KM = dict(display_units="km", display_scale=1e-3)
_HEAD = "NaN for the head's front and the tail's rear coupler"
_NOLCF = "NaN for vehicle types without endurable_compressive_force_kN"
_SRC = "EN 14363"


def _o(name, dims, units, long_name, description, role, **kw):
    return Output(name, dims, units, long_name, description, role, when=_E, when_text=_W, **kw)


#: (output suffix, label, limit, limit source)
CRITERIA = (
    ("y_over_q", "quasi-static Y/Q", 0.8, f"{_SRC} (Y/Q)lim"),
    ("truck_side_l_v", "quasi-static truck-side Y/Q", 0.6, "AAR M-1001 ch. XI truck-side L/V"),
    ("wheel_unloading", "quasi-static dQ/Q", 0.6, f"{_SRC} (dQ/Q)lim"),
    ("sum_y_ratio", "quasi-static sum Y / Prud'homme", 1.0, f"{_SRC} Prud'homme alpha (10 kN + P0/3)"),
)
_DESC = {
    "y_over_q": "Largest quasi-static Y/Q of the vehicle's wheels (lateral over vertical wheel force).",
    "truck_side_l_v": "Largest quasi-static sum Y / sum Q of one side of one of the vehicle's bogies.",
    "wheel_unloading": "Largest quasi-static wheel unloading (Q0 - Q)/Q0 of the vehicle's wheels.",
    "sum_y_ratio": "Largest quasi-static track shifting force |sum Y| of a wheelset over its Prud'homme limit.",
}

SAFETY_SERIES = tuple(
    _o(f"qs_{k}", _VS, "1", lab, _DESC[k], "series", limit=lim, limit_source=src) for k, lab, lim, src in CRITERIA
) + (
    _o("coupler_lateral_force", _VS, "N", "coupler lateral force on the vehicle", "Sum of the lateral components "
       "of both coupler forces on the vehicle (+ left), from the coupler yaw angles of the route geometry.",
       "series", **IN_KN),
    _o("coupler_yaw_front", _VS, "rad", "front coupler yaw angle", "Angle of the front coupler to the vehicle's "
       "axis (+ its far end to the left).", "series", missing=_HEAD, **IN_DEG),
    _o("coupler_yaw_rear", _VS, "rad", "rear coupler yaw angle", "Angle of the rear coupler to the vehicle's axis "
       "(+ its far end to the left).", "series", missing=_HEAD, **IN_DEG),
)
_ELEMS = []
for _k, _lab, _lim, _src in CRITERIA:
    _ELEMS += [
        _o(f"max_qs_{_k}", ("vehicle",), "1", f"max {_lab}", _DESC[_k].replace("Largest", "Maximum over the run of "
           "the largest", 1), "element", limit=_lim, limit_source=_src),
        _o(f"max_qs_{_k}_time", ("vehicle",), "s", f"time of max {_lab}"[:60], "Time of that maximum.", "element"),
        _o(f"max_qs_{_k}_position", ("vehicle",), "m", f"position of max {_lab}"[:60], "Route position of the "
           "vehicle centre at that maximum.", "element", **IN_KM),
    ]
SAFETY_ELEMENTS = tuple(_ELEMS) + (
    _o("qs_worst_ratio", ("vehicle",), "1", "worst quasi-static ratio to its limit", "Largest ratio of the four "
       "quasi-static quantities to their limits over the run.", "element", limit=1.0,
       limit_source="quasi-static criteria"),
    _o("max_coupler_yaw", ("vehicle",), "rad", "max coupler yaw angle", "Largest |coupler yaw angle| at either "
       "end of the vehicle.", "element", **IN_DEG),
    _o("max_coupler_yaw_ratio", ("vehicle",), "1", "max coupler yaw / free swing", "Largest |coupler yaw "
       "angle| over the coupler's free swing (geometry.max_coupler_yaw_deg).", "element", limit=1.0,
       limit_source="coupler free swing"),
    _o("peak_buff_force_at_vehicle", ("vehicle",), "N", "peak buff force at the vehicle", "Largest compressive "
       "force of the vehicle's couplers over every integrator step.", "element", **IN_KN),
    _o("lcf_ratio", ("vehicle",), "1", "peak buff / endurable compressive force", "Peak buff force at the vehicle "
       "over its type's endurable longitudinal compressive force (EN 15839).", "element", limit=1.0,
       limit_source="EN 15839 endurable LCF", missing=_NOLCF),
    _o("jackknife", ("vehicle",), "1", "jack-knife flag", "One if a quasi-static limit was reached in buff with the "
       "couplers pushing the vehicle out of the curve, else zero.", "element", dtype="int8"),
    _o("stringline", ("vehicle",), "1", "stringline flag", "One if a quasi-static limit was reached in draft with "
       "the couplers pulling the vehicle into the curve, else zero.", "element", dtype="int8"),
)
SAFETY_METRICS = tuple(
    _o(f"worst_qs_{k}", (), "1", f"worst {lab}"[:60], _DESC[k].replace("of the vehicle's", "of any vehicle's")
       .replace("of one of the vehicle's", "of any").replace("Largest", "Largest over the consist and the run of "
       "the", 1), "metric", limit=lim, limit_source=src) for k, lab, lim, src in CRITERIA
) + (
    _o("worst_qs_ratio", (), "1", "worst quasi-static ratio to its limit", "Largest ratio of a quasi-static "
       "quantity to its limit over every vehicle and the run.", "metric", limit=1.0,
       limit_source="quasi-static criteria"),
    _o("worst_qs_ratio_vehicle", (), "1", "vehicle of the worst quasi-static ratio", "Vehicle number (1 = head) "
       "of that worst ratio.", "metric", dtype="int64"),
    _o("worst_lcf_ratio", (), "1", "worst peak buff / endurable force", "Largest ratio of the peak buff force at "
       "a vehicle to its endurable longitudinal compressive force (EN 15839).", "metric", limit=1.0,
       limit_source="EN 15839 endurable LCF", missing="NaN when no vehicle type gives "
       "endurable_compressive_force_kN"),
    _o("vehicles_exceeding", (), "1", "vehicles beyond a quasi-static limit", "Number of vehicles whose worst "
       "quasi-static ratio reached 1.", "metric", dtype="int64"),
    _o("jackknife_vehicles", (), "1", "vehicles flagged jack-knife", "Number of vehicles with the jack-knife "
       "flag.", "metric", dtype="int64"),
    _o("stringline_vehicles", (), "1", "vehicles flagged stringline", "Number of vehicles with the stringline "
       "flag.", "metric", dtype="int64"),
)
SAFETY_SCALARS = (
    _o("worst_qs_ratio_time", (), "s", "time of the worst quasi-static ratio", "Time of the worst ratio.", "scalar"),
    _o("worst_qs_ratio_position", (), "m", "position of the worst quasi-static ratio", "Route position of that "
       "vehicle's centre then.", "scalar", **IN_KM),
    _o("running_safety_samples", (), "1", "running-safety samples", "Number of samples the quasi-static "
       "assessment evaluated (every output.running_safety.interval_s).", "run", dtype="int64"),
)
SAFETY_OUTPUTS = SAFETY_SERIES + SAFETY_ELEMENTS + SAFETY_METRICS + SAFETY_SCALARS
SAFETY_SERIES_NAMES = tuple(o.name for o in SAFETY_SERIES)
#: what ``hpcrail run`` prints after the train metrics
SAFETY_SUMMARY = ("worst_qs_ratio", "worst_qs_ratio_vehicle", "worst_qs_y_over_q", "worst_qs_truck_side_l_v",
                  "worst_qs_wheel_unloading", "worst_qs_sum_y_ratio", "worst_lcf_ratio", "vehicles_exceeding",
                  "jackknife_vehicles", "stringline_vehicles")


# ------------------------------------------------------------------------------------------------
# scenario -> model
# ------------------------------------------------------------------------------------------------
def safety_issues(sc, add) -> None:
    """Cross-field rules of the running-safety inputs (``add(loc, msg, value, allowed)`` for each problem)."""
    if not sc.output.running_safety.enabled:
        return
    used = {e.type for e in sc.consist}
    for name, vt in sc.vehicle_types.items():
        if name not in used:
            continue
        loc = ("vehicle_types", name)
        if vt.axles < 2 or vt.axles % 2:
            add(loc + ("axles",), "running safety needs an even number of axles (two bogies, or two single axles)",
                vt.axles, "2, 4, 6, ... (or output.running_safety.enabled: false)")
        g = vt.geometry
        b = g.bogie_centres_m if g.bogie_centres_m is not None else 0.7 * vt.length_m
        c = 0.5 * vt.length_m - g.coupler_length_m
        if b >= vt.length_m:
            add(loc + ("geometry", "bogie_centres_m"), "the bogie centres must lie within the vehicle's length", b,
                f"< {vt.length_m:g} m (length_m)")
        if c <= 0:
            add(loc + ("geometry", "coupler_length_m"), "the coupler pivot must lie inside the vehicle",
                g.coupler_length_m, f"< {0.5 * vt.length_m:g} m (half of length_m)")
        if vt.running_gear.wheelbase_m >= b and vt.axles >= 4:
            add(loc + ("running_gear", "wheelbase_m"), "the bogie wheelbase must be shorter than the bogie centre "
                "distance", vt.running_gear.wheelbase_m, f"< {b:g} m")
    for i, s in enumerate(sc.route.sections):
        if s.cant_mm > 0 and s.radius_m == 0:
            add(("route", "sections", i, "cant_mm"), "cant on a tangent section", s.cant_mm,
                "0 on tangents (radius_m 0), or a curve radius")
        if s.cant_mm >= 1e3 * sc.route.rail_spacing_m:
            add(("route", "sections", i, "cant_mm"), "cant not below the rail spacing", s.cant_mm,
                f"< {1e3 * sc.route.rail_spacing_m:g} mm")


def kalker_s1002(Q: float) -> tuple[float, float]:
    """Kalker's f11, f22 [N] of the S1002/UIC60 1:40 centred contact at wheel load ``Q`` [N]: 19.19 and 15.48 MN at
    100 kN (Hertz ellipse and Kalker's C11, C22 computed with hpcrail's contact tables of
    ``configs/wheelrail/s1002_uic60.yaml``), scaled by (Q/100 kN)^(2/3) (Hertz: a·b ∝ Q^(2/3))."""
    s = (max(Q, 1.0) / 100e3) ** (2.0 / 3.0)
    return 19.19e6 * s, 15.48e6 * s


def model_inputs(sc):
    """``(Alignment, Consist, Criteria)`` of an LTD scenario for :func:`~hpcrail.models.safety.quasi_static.
    quasi_static` (vehicle data from each type's ``geometry`` and ``running_gear``; the route's curves and cant)."""
    from hpcrail.models.safety import quasi_static as qs

    rs = sc.output.running_safety
    secs = sc.route.sections
    align = qs.Alignment.from_sections([s.start_km * 1e3 for s in secs], [s.end_km * 1e3 for s in secs],
                                      [s.radius_m for s in secs], [s.cant_mm * 1e-3 for s in secs],
                                      sc.route.rail_spacing_m)
    names = sc.vehicle_type_names()
    types = sorted(set(names))
    gears, laws = [], []
    gi, li = {}, {}
    for t in types:
        vt = sc.vehicle_types[t]
        rg = vt.running_gear
        Q0 = vt.mass_t * 1e3 * qs.G / (2.0 * vt.axles)
        f11, f22 = (rg.creep_coefficients_MN[0] * 1e6, rg.creep_coefficients_MN[1] * 1e6) \
            if rg.creep_coefficients_MN else kalker_s1002(Q0)
        gi[t] = len(gears)
        if rg.wheel_rail == "s1002_uic60":
            from hpcrail.models.safety.profiles import builtin

            dr_y, drv, tg, sigma = builtin()
        else:
            dr = rg.rolling_radius_difference
            dr_y = None if dr is None else tuple(np.asarray(dr.y_mm) * 1e-3)
            drv = None if dr is None else tuple(np.asarray(dr.dr_mm) * 1e-3)
            tg, sigma = None, rg.flange_clearance_mm * 1e-3
        b = vt.geometry.bogie_centres_m if vt.geometry.bogie_centres_m is not None else 0.7 * vt.length_m
        gears.append(qs.RunningGear(
            axles=max(1, vt.axles // 2), wheelbase=rg.wheelbase_m, rail_spacing=sc.route.rail_spacing_m,
            wheel_radius=rg.wheel_radius_m, conicity=rg.conicity, flange_clearance=sigma,
            mu=rg.friction_coefficient, wheel_load=Q0, f11=f11, f22=f22,
            flange_stiffness=rg.flange_stiffness_MN_per_m * 1e6, dr_y=dr_y, dr=drv, tan_gamma=tg,
            yaw_stiffness=rg.yaw_stiffness_kNm_per_rad * 1e3,
            yaw_friction=rg.centre_plate_friction * rg.centre_plate_radius_m * 0.5 * vt.mass_t * 1e3 * qs.G,
            half_spacing=0.5 * b))
        law = vt.geometry.body_lateral
        if law is not None:
            li[t] = len(laws)
            laws.append((np.asarray(law.displacement_mm) * 1e-3, np.asarray(law.force_kN) * 1e3))
    vts = [sc.vehicle_types[t] for t in names]
    length = np.array([v.length_m for v in vts])
    veh = qs.Consist(
        mass=np.array([v.mass_t * 1e3 for v in vts]), length=length,
        bogie_centres=np.array([v.geometry.bogie_centres_m if v.geometry.bogie_centres_m is not None
                                else 0.7 * v.length_m for v in vts]),
        coupler_length=np.array([v.geometry.coupler_length_m for v in vts]),
        coupler_height=np.array([v.geometry.coupler_height_m for v in vts]),
        cg_height=np.array([v.geometry.cg_height_m for v in vts]),
        gear=np.array([gi[t] for t in names], np.int64), gears=gears,
        alpha=np.array([rs.prudhomme_alpha_locomotive if v.kind == "locomotive" else rs.prudhomme_alpha_wagon
                        for v in vts]),
        max_coupler_yaw=np.radians([v.geometry.max_coupler_yaw_deg for v in vts]),
        endurable_lcf=np.array([v.endurable_compressive_force_kN * 1e3 if v.endurable_compressive_force_kN
                                else np.nan for v in vts]),
        body=np.array([li.get(t, -1) for t in names], np.int64), body_laws=laws)
    crit = qs.Criteria(y_over_q=rs.y_q_limit, truck_side=rs.truck_side_limit, wheel_unloading=rs.wheel_unloading_limit)
    return align, veh, crit


# ------------------------------------------------------------------------------------------------
# run glue
# ------------------------------------------------------------------------------------------------
def sample_grid(sc, t_out: np.ndarray) -> np.ndarray:
    """The run's sample times: the requested ``t_out`` [s] and every ``output.running_safety.interval_s`` (the
    union, sorted; only ``t_out`` when the assessment is off)."""
    rs = sc.output.running_safety
    if not rs.enabled:
        return t_out
    from hpcrail.results.sampling import sample_times

    grid = sample_times(0.0, sc.simulation.duration_s, rs.interval_s)
    t = np.union1d(np.round(np.asarray(t_out, float), 12), np.round(grid, 12))
    return np.ascontiguousarray(t)


def _argmax_rows(x: np.ndarray):
    """Index of the largest finite value per column (−1 where a column has none) and the values."""
    xf = np.where(np.isfinite(x), x, -np.inf)
    i = np.argmax(xf, axis=0)
    v = xf[i, np.arange(x.shape[1])]
    return np.where(np.isfinite(v), i, -1), np.where(np.isfinite(v), v, np.nan)


def add_running_safety(sc, res, t_out: np.ndarray, series_names) -> None:
    """Compute the running-safety outputs of an LTD run result ``res`` (sampled at :func:`sample_grid`), add
    them to ``res.values`` and keep only the samples at ``t_out`` of every series (``series_names``: the
    series of the result, the new ones included).  A run whose samples are not all finite (a failure) gets the
    quantities of its finite samples."""
    from hpcrail.models.safety.quasi_static import quasi_static
    from hpcrail.results.sampling import select_samples

    rs = sc.output.running_safety
    v = res.values
    if rs.enabled:
        align, veh, crit = model_inputs(sc)
        t = np.asarray(res.time, float)
        qs = quasi_static(align, veh, crit, np.asarray(v["position"]), np.asarray(v["speed"]),
                          np.asarray(v["acceleration"]), np.asarray(v["coupler_force"]))
        N = veh.n
        pos = np.asarray(v["position"])
        ratios = {}
        for k, _lab, _lim, _src in CRITERIA:
            key = {"truck_side_l_v": "truck_side"}.get(k, k)
            x = qs[key]
            v[f"qs_{k}"] = x
            i, m = _argmax_rows(x)
            v[f"max_qs_{k}"] = m
            ok = i >= 0
            v[f"max_qs_{k}_time"] = np.where(ok, t[np.maximum(i, 0)], np.nan)
            v[f"max_qs_{k}_position"] = np.where(ok, pos[np.maximum(i, 0), np.arange(N)], np.nan)
            lim = {"y_over_q": crit.y_over_q, "truck_side_l_v": crit.truck_side,
                   "wheel_unloading": crit.wheel_unloading, "sum_y_ratio": 1.0}[k]
            ratios[k] = m / lim
            v[f"worst_qs_{k}"] = float(np.nanmax(m)) if np.isfinite(m).any() else float("nan")
        v["coupler_lateral_force"] = qs["coupler_lateral_force"]
        v["coupler_yaw_front"] = qs["yaw_front"]
        v["coupler_yaw_rear"] = qs["yaw_rear"]
        worst = np.nanmax(np.vstack(list(ratios.values())), axis=0) if N else np.zeros(0)
        v["qs_worst_ratio"] = worst
        yaw = np.fmax(np.nanmax(np.abs(qs["yaw_front"]), axis=0, initial=0.0),
                      np.nanmax(np.abs(qs["yaw_rear"]), axis=0, initial=0.0))
        v["max_coupler_yaw"] = yaw
        v["max_coupler_yaw_ratio"] = yaw / veh.max_coupler_yaw
        buff = np.maximum(np.asarray(v["coupler_max_buff_force"], float), 0.0)   # every-step envelope (magnitude)
        pb = np.zeros(N)
        pb[:-1] = np.maximum(pb[:-1], buff)
        pb[1:] = np.maximum(pb[1:], buff)
        v["peak_buff_force_at_vehicle"] = pb
        v["lcf_ratio"] = pb / veh.endurable_lcf
        v["jackknife"] = (qs["jackknife"].max(axis=0) if t.size else np.zeros(N)).astype(np.int8)
        v["stringline"] = (qs["stringline"].max(axis=0) if t.size else np.zeros(N)).astype(np.int8)
        wr = np.maximum.reduce([qs["y_over_q"] / crit.y_over_q, qs["truck_side"] / crit.truck_side,
                                qs["wheel_unloading"] / crit.wheel_unloading, qs["sum_y_ratio"]])
        if np.isfinite(wr).any():
            k, j = np.unravel_index(int(np.nanargmax(np.where(np.isfinite(wr), wr, -np.inf))), wr.shape)
            v["worst_qs_ratio"] = float(wr[k, j])
            v["worst_qs_ratio_vehicle"] = int(j) + 1
            v["worst_qs_ratio_time"] = float(t[k])
            v["worst_qs_ratio_position"] = float(pos[k, j])
        else:
            v["worst_qs_ratio"] = float("nan")
            v["worst_qs_ratio_vehicle"] = 0
            v["worst_qs_ratio_time"] = v["worst_qs_ratio_position"] = float("nan")
        lr = v["lcf_ratio"]
        v["worst_lcf_ratio"] = float(np.nanmax(lr)) if np.isfinite(lr).any() else float("nan")
        v["vehicles_exceeding"] = int(np.sum(worst >= 1.0))
        v["jackknife_vehicles"] = int(v["jackknife"].sum())
        v["stringline_vehicles"] = int(v["stringline"].sum())
        v["running_safety_samples"] = int(t.size)
        res.value_attrs.setdefault("worst_qs_y_over_q", {})["limit"] = crit.y_over_q
        res.value_attrs.setdefault("max_qs_y_over_q", {})["limit"] = crit.y_over_q
        res.value_attrs.setdefault("qs_y_over_q", {})["limit"] = crit.y_over_q
        for name in ("worst_qs_truck_side_l_v", "max_qs_truck_side_l_v", "qs_truck_side_l_v"):
            res.value_attrs.setdefault(name, {})["limit"] = crit.truck_side
        for name in ("worst_qs_wheel_unloading", "max_qs_wheel_unloading", "qs_wheel_unloading"):
            res.value_attrs.setdefault(name, {})["limit"] = crit.wheel_unloading
        if qs["not_converged"]:
            res.warnings.append(f"running safety: {qs['not_converged']} steady-curving equilibria of the bogie "
                                "tables did not converge (their wheel forces are approximate)")
        if not qs["body_converged"]:
            res.warnings.append("running safety: the car bodies' lateral displacement did not converge (lateral "
                                "buckling of the consist under buff?)")
        res.attrs["running_safety_interval_s"] = float(rs.interval_s)
        res.attrs["running_safety_model"] = ("quasi-static (hpcrail.models.safety.quasi_static): coupler angles "
                                             "from the route geometry, steady-state bogie curving, EN 14363 / "
                                             "AAR criteria; maxima over the running-safety samples")
    from hpcrail.results.verdicts import cut_short_warnings

    res.warnings += cut_short_warnings(
        v, ("time_of_max_draft_force", "time_of_max_buff_force", "worst_qs_ratio_time"), float(res.run.t_reached),
        {"time_of_max_draft_force": "the peak draft force", "time_of_max_buff_force": "the peak buff force",
         "worst_qs_ratio_time": "the worst quasi-static running-safety ratio"})
    if res.time is not None and np.asarray(res.time).size != np.asarray(t_out).size:
        select_samples(res, t_out, [n for n in series_names if n in v], "the LTD run")


__all__ = ["SAFETY_OUTPUTS", "SAFETY_SERIES_NAMES", "SAFETY_SUMMARY", "CRITERIA", "safety_issues", "model_inputs",
           "sample_grid", "add_running_safety", "kalker_s1002"]
