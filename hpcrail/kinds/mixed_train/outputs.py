"""Declared outputs of the ``mixed_train`` kind.

* The consist (every accepted step, the LTD observer over the whole train): the benchmark metrics and the
  per-coupler envelopes of the ``ltd`` kind (Bosso et al. 2024 Tables 1-2), dimension ``coupler``; at the
  samples, the in-train force and deflection of every coupler (the ``ltd`` kind's series, from the same states
  and draft-gear laws: the forces next to a detailed vehicle are the ones its car body feels).
* Each detailed vehicle (dimension ``detailed_vehicle``, labelled by its consist position): every output of
  the ``railway_vehicle`` kind (series on the fine grid ``output.interval_s``, EN 14363 running safety: Y/Q
  per wheel, ΔQ/Q, ΣY per wheelset against the Prud'homme limit, each maximum with its wheel, track
  position and time), plus its couplers — the force of each (+ draft, − buff), the coupler angle and the
  lateral force on the car body — and the in-train force at the vehicle when each running-safety maximum
  occurs.
* Study metrics (scalars, the worst detailed vehicle): what ``hpcrail report`` plots against the peak
  compressive force at the vehicle — the "admissible longitudinal compressive force" question of paper 000
  (its reference [11]).

In-train force "at the vehicle": the mean of its front and rear coupler forces (+ draft, − buff).
Sign conventions as in the two kinds: forces + draft; lateral + left; wheel forces on the rail.
"""
from __future__ import annotations

import dataclasses

from hpcrail.kinds.ltd.outputs import (COUPLER, COUPLER_ENVELOPES, LTD_OUTPUTS, VEHICLE, TRAIN_METRICS, TRAIN_SCALARS,
                                       VEHICLE_KIND_ATTRS)
from hpcrail.kinds.railway_vehicle.outputs import RAILWAY_VEHICLE_OUTPUTS
from hpcrail.kinds.railway_vehicle.outputs import shape as rv_shape
from hpcrail.results.outputs import Dim, Output, Shape, with_dim

DETAILED = Dim("detailed_vehicle", "detailed vehicle (consist position)", labels="names")

IN_KN = dict(display_units="kN", display_scale=1e-3)
IN_MRAD = dict(display_units="mrad", display_scale=1e3)
_DS = ("time", "detailed_vehicle")
_NOMAX = "NaN when the run is shorter than one sliding-mean window"

MIXED_SERIES = (
    Output("notch", ("time",), "1", "applied notch", "Applied notch of the locomotives (+ traction, - dynamic "
           "brake).", "series"),
    Output("head_speed", ("time",), "m s-1", "speed of the lead vehicle", "Speed of the lead vehicle.", "series",
           display_units="km h-1", display_scale=3.6),
    Output("front_coupler_force", _DS, "N", "front coupler force", "In-train force of the detailed vehicle's front "
           "coupler (+ draft, - buff).", "series", **IN_KN, missing="NaN for a detailed vehicle at the head"),
    Output("rear_coupler_force", _DS, "N", "rear coupler force", "In-train force of the detailed vehicle's rear "
           "coupler (+ draft, - buff).", "series", **IN_KN, missing="NaN for a detailed vehicle at the tail"),
    Output("front_coupler_angle", _DS, "rad", "front coupler angle", "Angle of the front coupler link to the "
           "track tangent at the car body (+ link pointing left).", "series", **IN_MRAD,
           missing="NaN for a detailed vehicle at the head"),
    Output("rear_coupler_angle", _DS, "rad", "rear coupler angle", "Angle of the rear coupler link to the "
           "backward track tangent at the car body (+ link pointing left).", "series", **IN_MRAD,
           missing="NaN for a detailed vehicle at the tail"),
    Output("coupler_lateral_force", _DS, "N", "coupler lateral force on the car body", "Sum of the lateral "
           "components of both coupler forces on the car body in its track frame (+ left).", "series", **IN_KN),
)
#: the consist's series (every coupler and vehicle, the LTD kind's declarations): a sweep keeps them for a chosen
#: range of couplers or vehicles (``outputs.series.select``)
CONSIST_SERIES = tuple(o for o in LTD_OUTPUTS if o.name in ("coupler_force", "coupler_deflection"))
MIXED_ELEMENTS = (
    Output("peak_buff_force_at_vehicle", ("detailed_vehicle",), "N", "peak buff force at the vehicle",
           "Largest compressive force magnitude of the detailed vehicle's two couplers over the samples.",
           "element", **IN_KN),
    Output("time_of_peak_buff_force_at_vehicle", ("detailed_vehicle",), "s", "time of that peak buff force",
           "Time of the largest compressive force at the detailed vehicle.", "element"),
    Output("peak_draft_force_at_vehicle", ("detailed_vehicle",), "N", "peak draft force at the vehicle",
           "Largest tensile force of the detailed vehicle's two couplers over the samples.", "element", **IN_KN),
    Output("in_train_force_at_max_y_over_q", ("detailed_vehicle",), "N", "in-train force at max (Y/Q)",
           "In-train force at the vehicle (mean of its couplers, + draft) at the time of its largest (Y/Q) 2 m "
           "mean.", "element", **IN_KN, missing=_NOMAX),
    Output("in_train_force_at_max_sum_y", ("detailed_vehicle",), "N", "in-train force at max sum Y",
           "In-train force at the vehicle at the time of its largest |sum Y| 2 m mean.", "element", **IN_KN,
           missing=_NOMAX),
    Output("in_train_force_at_max_wheel_unloading", ("detailed_vehicle",), "N", "in-train force at max dQ/Q",
           "In-train force at the vehicle at the time of its largest wheel unloading.", "element", **IN_KN,
           missing=_NOMAX),
)
STUDY_METRICS = (
    Output("worst_y_over_q", (), "1", "max (Y/Q) 2 m, worst detailed vehicle", "Largest (Y/Q) 2 m mean over "
           "the detailed vehicles' wheels (EN 14363; limit 0.8 for R >= 250 m).", "metric", missing=_NOMAX,
           limit=0.8, limit_source="EN 14363 (Y/Q)lim, output.en14363.y_q_limit"),
    Output("worst_wheel_unloading", (), "1", "max dQ/Q 2 m, worst detailed vehicle", "Largest wheel unloading "
           "over the detailed vehicles (EN 14363; limit 0.6).", "metric", missing=_NOMAX, limit=0.6,
           limit_source="EN 14363 (dQ/Q)lim, output.en14363.dq_q_limit"),
    Output("worst_sum_y_ratio", (), "1", "max sum Y / limit, worst detailed vehicle", "Largest ratio of the 2 m "
           "mean |sum Y| to the Prud'homme limit over the detailed vehicles' wheelsets.", "metric",
           missing=_NOMAX, limit=1.0, limit_source="EN 14363 Prud'homme alpha (10 kN + P0/3)"),
    Output("worst_sum_y", (), "N", "max |sum Y| 2 m, worst detailed vehicle", "Largest 2 m mean |sum Y| over the "
           "detailed vehicles' wheelsets.", "metric", **IN_KN, missing=_NOMAX),
    Output("peak_buff_force_at_detailed", (), "N", "peak buff force at a detailed vehicle", "Largest compressive "
           "force magnitude at any detailed vehicle's couplers over the samples.", "metric", **IN_KN),
)

#: the railway-vehicle outputs once per detailed vehicle; its scalar metrics become per-vehicle elements (the
#: study metrics above are the scalars a sweep report plots)
PER_VEHICLE = tuple(dataclasses.replace(o, role="element") if o.role == "metric" else o
                    for o in with_dim(RAILWAY_VEHICLE_OUTPUTS, "detailed_vehicle"))
MIXED_TRAIN_OUTPUTS = (MIXED_SERIES + CONSIST_SERIES + MIXED_ELEMENTS + STUDY_METRICS + TRAIN_METRICS + TRAIN_SCALARS
                       + COUPLER_ENVELOPES + PER_VEHICLE)
#: the per-detailed-vehicle series (sliced with the run's time grid)
SERIES_NAMES = tuple(o.name for o in MIXED_TRAIN_OUTPUTS if o.role == "series")
CONSIST_NAMES = tuple(o.name for o in CONSIST_SERIES)
#: what ``hpcrail run`` prints: the running-safety table under in-train forces, then the train metrics
SUMMARY = ("max_y_over_q", "max_y_over_q_wheel", "in_train_force_at_max_y_over_q", "y_over_q_ratio",
           "max_wheel_unloading", "max_wheel_unloading_wheel", "in_train_force_at_max_wheel_unloading",
           "max_sum_y", "max_sum_y_wheelset", "sum_y_ratio", "in_train_force_at_max_sum_y",
           "peak_buff_force_at_vehicle", "time_of_peak_buff_force_at_vehicle", "max_lateral_displacement",
           "max_draft_force", "max_draft_force_coupler", "max_buff_force", "max_buff_force_coupler", "max_speed",
           "mean_speed")


def shape(sc) -> Shape:
    """Sizes and labels: ``vehicle`` (with the vehicle types, ``detailed_<k>`` for the 1-DOF stand-ins, and kinds),
    ``coupler`` (with the connection types), ``detailed_vehicle`` (labels ``v<position>``, coordinates
    ``detailed_position`` and ``detailed_vehicle_name``) and the detailed vehicles' ``body``, ``wheelset``,
    ``wheel`` (the ``railway_vehicle`` kind's shape of the first one: every detailed vehicle has the same)."""
    rv = rv_shape(sc.detailed[0])
    conns = sc.connection_type_names()
    types = sc.vehicle_type_names()
    base = [e.type for e in sc.consist for _ in range(e.count)]     # a stand-in keeps the kind it replaces
    return Shape(
        sizes={"vehicle": len(types), "coupler": len(conns), "detailed_vehicle": len(sc.detailed), **rv.sizes},
        coords={
            "vehicle_type": ("vehicle", tuple(types), {"long_name": "vehicle type name (detailed_<k>: the 1-DOF "
                                                                   "stand-in of detailed vehicle k)"}),
            "vehicle_kind": ("vehicle", tuple(sc.vehicle_types[t].kind for t in base), dict(VEHICLE_KIND_ATTRS)),
            "connection_type": ("coupler", tuple(conns), {"long_name": "connection type name"}),
            "detailed_vehicle": ("detailed_vehicle", tuple(f"v{d.position}" for d in sc.detailed),
                                 {"long_name": DETAILED.long_name}),
            "detailed_position": ("detailed_vehicle", tuple(int(d.position) for d in sc.detailed),
                                  {"long_name": "consist position of the detailed vehicle (1 = head)"}),
            "detailed_vehicle_name": ("detailed_vehicle", tuple(d.vehicle.name for d in sc.detailed),
                                      {"long_name": "railway vehicle name"}),
            **rv.coords,
        })

__all__ = ["VEHICLE", "DETAILED", "MIXED_TRAIN_OUTPUTS", "SERIES_NAMES", "CONSIST_NAMES", "SUMMARY", "shape", "COUPLER"]
