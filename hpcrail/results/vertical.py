"""Result dataset of a vertical vehicle-dynamics run (conventions of :mod:`hpcrail.results.dataset`:
``time`` dimension, CF ``units``/``long_name`` on every variable, run scalars and metrics as scalar
variables that a sweep stacks along ``scenario``, provenance attributes).

Dimensions: ``time`` [s], ``body`` (rigid bodies), ``element`` (suspension elements and contacts),
``wheel`` (track input points), ``floor_point`` (car-body floor points for accelerations and ride
comfort).  Sign conventions: displacements + up, pitch + nose up, element forces + compression,
wheel loads + pressing on the rail.  Displacements are measured from the static equilibrium.
"""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.config.loading import canonical_yaml, config_hash
from hpcrail.integrators.contract import Solution
from hpcrail.models.vertical.assembly import KIND_NAMES, SERIES_DAMPER
from hpcrail.models.vertical.build import VerticalModel
from hpcrail.models.vertical.kernel import vertical_outputs
from hpcrail.provenance import provenance_attrs
from hpcrail.results.dataset import RUN_SCALARS, SCHEMA_VERSION, scalar
from hpcrail.results.ride_comfort import ride_metrics

#: time series: name -> (dims, units, long_name)
SERIES = {
    "bounce": (("time", "body"), "m", "vertical displacement of the body centre from static equilibrium (+ up)"),
    "pitch": (("time", "body"), "rad", "pitch angle from static equilibrium (+ nose up; NaN: no pitch freedom)"),
    "bounce_velocity": (("time", "body"), "m s-1", "vertical velocity of the body centre"),
    "bounce_acceleration": (("time", "body"), "m s-2", "vertical acceleration of the body centre (gravity excluded)"),
    "pitch_acceleration": (("time", "body"), "rad s-2", "pitch acceleration (NaN: no pitch freedom)"),
    "floor_displacement": (("time", "floor_point"), "m", "vertical displacement of the floor point from static "
                           "equilibrium"),
    "floor_acceleration": (("time", "floor_point"), "m s-2", "vertical acceleration of the floor point (gravity "
                           "excluded)"),
    "element_force": (("time", "element"), "N", "total element force incl. static preload (+ compression)"),
    "damper_stroke": (("time", "element"), "m", "stroke of a damper with series joints from static equilibrium "
                      "(massless-node state; NaN for other elements)"),
    "wheel_load": (("time", "wheel"), "N", "total vertical force on the rail under the wheel (wheel/rail force)"),
    "rail_irregularity": (("time", "wheel"), "m", "vertical rail irregularity under the wheel (with its delay)"),
}

#: per floor point ride comfort: name -> (units, long_name)
FLOOR_METRICS = {
    "sperling_wz": ("1", "Sperling ride index W_z of the vertical floor acceleration"),
    "wb_rms": ("m s-2", "EN 12299 Wb-weighted r.m.s. vertical floor acceleration over the run"),
    "wb_p95": ("m s-2", "95th percentile of the 5 s r.m.s. values of the Wb-weighted acceleration (EN 12299 a_ZP95)"),
    "n_mv_z": ("1", "vertical term 6 a_ZP95^Wb of the EN 12299 mean comfort index N_MV"),
    "rms_acceleration": ("m s-2", "unweighted r.m.s. vertical floor acceleration"),
    "max_abs_acceleration": ("m s-2", "maximum |vertical floor acceleration| over every step"),
}

#: scalar ride metrics stacked by sweeps: name -> (units, long_name, display unit, display factor)
VERTICAL_METRICS = {
    "wz_max": ("1", "Sperling ride index W_z, worst floor point", "", 1.0),
    "wb_rms_max": ("m s-2", "EN 12299 Wb-weighted r.m.s. vertical acceleration, worst floor point", "m/s²", 1.0),
    "n_mv_z_max": ("1", "EN 12299 vertical comfort term 6 a_ZP95^Wb, worst floor point", "", 1.0),
    "max_floor_acceleration": ("m s-2", "maximum |vertical floor acceleration| over floor points and every step",
                               "m/s²", 1.0),
    "max_wheel_load": ("N", "largest wheel/rail force over wheels and every step", "kN", 1e-3),
    "min_wheel_load": ("N", "smallest wheel/rail force over wheels and every step (< 0: contact would be lost)",
                       "kN", 1e-3),
    "max_wheel_unloading_ratio": ("1", "largest wheel unloading (Q0 - Q_min)/Q0 over wheels and every step", "", 1.0),
    "max_element_force_change": ("N", "largest |change of an element force| from its static value over elements "
                                 "and every step", "kN", 1e-3),
}


def sampled_outputs(model: VerticalModel, t: np.ndarray, Y: np.ndarray, params=None) -> dict:
    """Accelerations, forces and rail inputs at the samples: dict of float64 arrays ``body_acc``
    [k, m], ``element_force`` [k, E], ``wheel_load`` [k, W], ``rail`` [k, W], ``floor_acc`` [k, F]."""
    asm = model.asm
    p = params if params is not None else model.params
    k = t.size
    E, W, F = len(asm.elements), asm.wheel_x.size, len(asm.floor_names)
    out = {"body_acc": np.full((k, asm.m), np.nan), "element_force": np.full((k, E), np.nan),
           "wheel_load": np.full((k, W), np.nan), "rail": np.full((k, W), np.nan),
           "floor_acc": np.full((k, F), np.nan)}
    vertical_outputs(np.ascontiguousarray(t, dtype=float), np.ascontiguousarray(Y), p, out["body_acc"],
                     out["element_force"], out["wheel_load"], out["rail"], out["floor_acc"])
    return out


def static_wheel_loads(model: VerticalModel, params=None) -> np.ndarray:
    """Static wheel/rail force Q0 under each wheel [N] (float64[W])."""
    p = params if params is not None else model.params
    Q0 = np.zeros(model.asm.wheel_x.size)
    for e, el in enumerate(model.asm.elements):
        if el.wheel >= 0 and el.rail_sign < 0:
            Q0[el.wheel] += p.el_F0[e]
    return Q0


def run_metrics(sc, model: VerticalModel, sol: Solution, floor_acc: np.ndarray | None = None, params=None
                ) -> tuple[dict, dict]:
    """Ride comfort per floor point and the scalar metrics of :data:`VERTICAL_METRICS` of one run.

    Returns ``(floor_values, metrics)``: per floor point float64[F] arrays keyed as
    :data:`FLOOR_METRICS`, and the scalar metrics.  ``floor_acc`` float64[k, F] (computed from
    ``sol`` if not given).
    """
    asm = model.asm
    p = params if params is not None else model.params
    t = sol.t
    k = t.size
    E, W, F = len(asm.elements), asm.wheel_x.size, len(asm.floor_names)
    if floor_acc is None:
        floor_acc = sampled_outputs(model, t, sol.y, p)["floor_acc"]
    acc = sol.acc
    dt = float(t[1] - t[0]) if k > 1 else float("nan")
    ok = sol.status.success and k > 8 and np.all(np.isfinite(floor_acc))
    if ok:
        rm = ride_metrics(floor_acc.T, dt, sc.output.comfort_window_s)
    else:
        rm = {key: np.full(F, np.nan) for key in ("wz", "wb_rms", "wb_p95", "n_mv_z", "rms", "peak")}
    floor_vals = {"sperling_wz": rm["wz"], "wb_rms": rm["wb_rms"], "wb_p95": rm["wb_p95"], "n_mv_z": rm["n_mv_z"],
                  "rms_acceleration": rm["rms"], "max_abs_acceleration": np.array(acc[:F], float)}

    def nanmax(a):
        a = np.asarray(a, float)
        return float(np.nanmax(a)) if a.size and np.any(np.isfinite(a)) else float("nan")

    Q0 = static_wheel_loads(model, p)
    F0 = p.el_F0
    wmin = acc[p.o_wmin:p.o_wmin + W]
    with np.errstate(invalid="ignore", divide="ignore"):
        unload = np.where(Q0 > 0, (Q0 - wmin) / Q0, np.nan)
    dF = np.maximum(np.abs(acc[p.o_elmax:p.o_elmax + E] - F0), np.abs(acc[p.o_elmin:p.o_elmin + E] - F0))
    metrics = {"wz_max": nanmax(rm["wz"]), "wb_rms_max": nanmax(rm["wb_rms"]), "n_mv_z_max": nanmax(rm["n_mv_z"]),
               "max_floor_acceleration": nanmax(acc[:F]), "max_wheel_load": nanmax(acc[p.o_wmax:p.o_wmax + W]),
               "min_wheel_load": -nanmax(-wmin) if W else float("nan"),
               "max_wheel_unloading_ratio": nanmax(unload), "max_element_force_change": nanmax(dF)}
    return floor_vals, metrics


def vertical_dataset(sc, model: VerticalModel, sol: Solution, config_yaml: str | None = None) -> xr.Dataset:
    """Build the dataset of one vertical run from the sampled dynamic states ``sol.y`` (float64[k, N])
    and the every-step envelopes ``sol.acc``."""
    asm, p = model.asm, model.params
    t = sol.t
    Y = np.ascontiguousarray(sol.y)
    k = t.size
    sv, ss, sq = asm.slices()
    E, W, F = len(asm.elements), asm.wheel_x.size, len(asm.floor_names)
    B = len(asm.body_names)
    so = sampled_outputs(model, t, Y)
    body_acc, el_force, wheel, rail, fp_acc = (so[key] for key in ("body_acc", "element_force", "wheel_load", "rail",
                                                                    "floor_acc"))
    q = Y[:, sq]
    v = Y[:, sv]

    def per_body(arr, pitch: bool):
        out = np.full((k, B), np.nan)
        idx = asm.body_pitch if pitch else asm.body_bounce
        for b, i in enumerate(idx):
            if i >= 0:
                out[:, b] = arr[:, i]
        return out

    fp_disp = np.zeros((k, F))
    for f, terms in enumerate(asm.floor_terms):
        for i, c in terms:
            fp_disp[:, f] += c * q[:, i]
    stroke = np.full((k, E), np.nan)
    for e, el in enumerate(asm.elements):
        if el.kind == SERIES_DAMPER:
            stroke[:, e] = Y[:, ss.start + el.node]
    data = {"bounce": per_body(q, False), "pitch": per_body(q, True), "bounce_velocity": per_body(v, False),
            "bounce_acceleration": per_body(body_acc, False), "pitch_acceleration": per_body(body_acc, True),
            "floor_displacement": fp_disp, "floor_acceleration": fp_acc, "element_force": el_force,
            "damper_stroke": stroke, "wheel_load": wheel, "rail_irregularity": rail}
    dv = {name: (SERIES[name][0], arr, {"units": SERIES[name][1], "long_name": SERIES[name][2]})
          for name, arr in data.items()}
    coords = {
        "time": ("time", np.asarray(t, float), {"units": "s", "long_name": "simulated time", "standard_name": "time"}),
        "body": ("body", np.asarray(asm.body_names, dtype=str), {"long_name": "rigid body"}),
        "body_x": ("body", asm.body_x, {"units": "m", "long_name": "longitudinal position of the body centre "
                                                                 "(vehicle frame, forward +)"}),
        "element": ("element", np.asarray([e.name for e in asm.elements], dtype=str),
                    {"long_name": "suspension element or wheel/rail contact"}),
        "element_kind": ("element", np.asarray([KIND_NAMES[e.kind] for e in asm.elements], dtype=str),
                         {"long_name": "element law"}),
        "element_type": ("element", np.asarray([e.type for e in asm.elements], dtype=str),
                         {"long_name": "element type name"}),
        "wheel": ("wheel", np.asarray(asm.wheel_names, dtype=str), {"long_name": "wheel (track input point)"}),
        "wheel_x": ("wheel", asm.wheel_x, {"units": "m", "long_name": "longitudinal wheel position (vehicle frame, "
                                                                      "forward +); input delay (x_lead - x)/V"}),
        "floor_point": ("floor_point", np.asarray(asm.floor_names, dtype=str),
                        {"long_name": "car-body floor point"}),
    }
    ds = xr.Dataset(dv, coords=coords)
    # static state
    F0 = p.el_F0
    Q0 = static_wheel_loads(model)
    static_b = np.full(B, np.nan)
    for b, i in enumerate(asm.body_bounce):
        static_b[b] = model.x_static[sq][i]
    ds["static_bounce"] = (("body",), static_b, {"units": "m", "long_name": "static deflection of the body centre "
                                                 "under gravity from the unloaded state (+ up)"})
    ds["element_static_force"] = (("element",), F0.copy(), {"units": "N", "long_name": "static element force "
                                                            "under gravity (+ compression)"})
    ds["wheel_static_load"] = (("wheel",), Q0, {"units": "N", "long_name": "static wheel/rail force Q0"})
    # envelopes over every step
    acc = sol.acc
    env = {"element_max_force": (("element",), acc[p.o_elmax:p.o_elmax + E], "N",
                                 "maximum element force over every step (+ compression)"),
           "element_min_force": (("element",), acc[p.o_elmin:p.o_elmin + E], "N",
                                 "minimum element force over every step (+ compression)"),
           "wheel_max_load": (("wheel",), acc[p.o_wmax:p.o_wmax + W], "N", "maximum wheel/rail force over every step"),
           "wheel_min_load": (("wheel",), acc[p.o_wmin:p.o_wmin + W], "N", "minimum wheel/rail force over every step")}
    for name, (dims, arr, units, ln) in env.items():
        ds[name] = (dims, np.array(arr, float), {"units": units, "long_name": ln})
    # ride comfort per floor point (from the sampled floor accelerations) and scalar metrics
    dt = float(t[1] - t[0]) if k > 1 else float("nan")
    floor_vals, metrics = run_metrics(sc, model, sol, fp_acc)
    for name, arr in floor_vals.items():
        units, ln = FLOOR_METRICS[name]
        ds[name] = (("floor_point",), np.asarray(arr, float), {"units": units, "long_name": ln})
    for name, val in metrics.items():
        units, ln, _d, _f = VERTICAL_METRICS[name]
        ds[name] = scalar(val, units, ln)
    stats = sol.stats
    run = {"status": sol.status.name.lower(), "message": sol.message, "wall_time": sol.wall_time,
           "compile_time": sol.compile_time, "nsteps": stats["steps"], "nrejected": stats["rejected"],
           "nfev": stats["nfev"], "t_reached": sol.t_reached}
    for name, val in run.items():
        units, ln = RUN_SCALARS[name]
        ds[name] = scalar(val, units, ln)
    warnings = list(model.notes)
    if W and np.isfinite(metrics["min_wheel_load"]) and metrics["min_wheel_load"] < 0:
        warnings.append(f"a wheel load fell below zero ({metrics['min_wheel_load'] / 1e3:.3g} kN): the wheel would "
                        "lose contact (the linear contact is bilateral; use law: hertz)")
    if dt > 0.005 + 1e-12:
        warnings.append(f"output.interval_s = {dt:g} s: the comfort weightings are truncated at the Nyquist "
                        f"frequency {0.5 / dt:.0f} Hz (EN 12299 band limit 100 Hz needs ≤ 5 ms)")
    if sc.simulation.duration_s < sc.output.comfort_window_s:
        warnings.append("the run is shorter than one comfort window: wb_p95 and n_mv_z are NaN")
    irr = sc.track.irregularity
    ds.attrs.update(provenance_attrs())
    ds.attrs.update({
        "title": f"hpcrail vertical vehicle dynamics: {sc.name}",
        "Conventions": "CF-1.10",
        "hpcrail_schema_version": SCHEMA_VERSION,
        "model": "vertical",
        "source": "hpcrail vertical vehicle model with massless damper nodes, Yu, Song, Zhao, Zhou (paper 001) "
                  "eqs (1)-(19); ride comfort EN 12299 (Wb) and Sperling W_z",
        "metrics_title": "ride comfort and wheel/rail force metrics",
        "scenario_name": sc.name,
        "scenario_description": sc.description,
        "config_yaml": config_yaml if config_yaml is not None else canonical_yaml(sc),
        "config_hash": config_hash(sc),
        "integrator": sol.method,
        "integrator_settings": repr(sc.integrator.model_dump()),
        "integrator_stats": repr(sol.stats),
        "status": sol.status.name.lower(),
        "status_message": sol.message,
        "wall_time_s": float(sol.wall_time),
        "compile_time_s": float(sol.compile_time),
        "speed_mps": float(p.speed),
        "track_irregularity": irr.kind if irr.kind != "psd" else f"psd {irr.spectrum} seed {irr.seed} ({irr.method})",
        "state_names": ",".join(asm.state_names()),
        "warnings": "\n".join(warnings),
        "sign_convention": "z + up, pitch + nose up, element forces + compression, wheel loads + on the rail; "
                           "displacements from the static equilibrium",
    })
    return ds
