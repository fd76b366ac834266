"""Declared outputs of the ``planar_train`` kind: car-body and coupler series, the coupler envelopes and
train metrics shared with the LTD kind (:mod:`hpcrail.kinds.ltd.outputs`), the largest shank angles
and the Newton statistics of the noninertial couplers.

Dimensions ``time`` [s], ``vehicle`` (1..N, head first), ``coupler`` (1..N−1), ``coupler_end``
(``leading``: on vehicle k, its rear end; ``trailing``: on vehicle k+1, its front end).  Forces and
deflections + draft, lateral quantities + left.  Source: Massa et al. 2012 §6-§9.
"""
from __future__ import annotations

import dataclasses

from hpcrail.kinds.ltd.outputs import (
    COUPLER, COUPLER_ENVELOPES, COUPLER_NEWTON, IN_KMH, IN_KN, IN_MM, TRAIN_METRICS, TRAIN_SCALARS, VEHICLE,
    VEHICLE_KIND_ATTRS,
)
from hpcrail.results.outputs import Dim, Output, Shape

COUPLER_END = Dim("coupler_end", "coupler end: 'leading' on vehicle k (its rear end), 'trailing' on vehicle k+1 "
                  "(its front end)", labels="names")
COUPLER_ENDS = ("leading", "trailing")

_VS = ("time", "vehicle")
_CS = ("time", "coupler")
_ES = ("time", "coupler", "coupler_end")
PLANAR_SERIES = (
    Output("position", _VS, "m", "position", "Arc length of the car's centre of gravity along the track.",
           "series"),
    Output("speed", _VS, "m s-1", "speed", "Speed along the track.", "series", **IN_KMH),
    Output("acceleration", _VS, "m s-2", "acceleration", "Acceleration along the track.", "series"),
    Output("lateral_displacement", _VS, "m", "lateral offset", "Lateral offset of the centre of gravity from the "
           "track centre line (+ left).", "series", **IN_MM),
    Output("yaw_angle", _VS, "rad", "relative yaw", "Car-body yaw relative to the track tangent (+ "
           "counter-clockwise).", "series"),
    Output("lateral_acceleration", _VS, "m s-2", "lateral acceleration", "Lateral acceleration of the centre of "
           "gravity, centripetal part included (+ left).", "series"),
    Output("load_transfer_ratio", _VS, "1", "wheel-load transfer dQ/Q", "Quasi-static wheel-load transfer dQ/Q "
           "from the unbalanced lateral acceleration at the centre-of-gravity height (+ onto the right rail).",
           "series"),
    Output("tractive_force", _VS, "N", "applied force", "Applied force along the car axis (traction or speed "
           "controller).", "series", **IN_KN),
    Output("resistance_force", _VS, "N", "running resistance", "Running resistance on the car (opposes motion).",
           "series", **IN_KN),
    Output("coupler_force", _CS, "N", "in-train force", "In-train force (+ draft, - buff): the mean draft-gear "
           "force of the coupler's two ends.", "series", **IN_KN),
    Output("coupler_deflection", _CS, "m", "coupler deflection", "Coupler deflection: the slider displacements of "
           "both ends plus the knuckle stretch (+ draft).", "series", **IN_MM),
    Output("slider_displacement", _ES, "m", "slider displacement", "Draft-gear/EOC slider displacement d_d "
           "relative to the car (+ outward = draft).", "series", **IN_MM),
    Output("slider_displacement_rate", _ES, "m s-1", "slider displacement rate", "Rate of the slider "
           "displacement.", "series"),
    Output("shank_angle", _ES, "rad", "shank angle", "Coupler shank angle alpha relative to the car axis (+ "
           "counter-clockwise).", "series"),
    Output("shank_angle_rate", _ES, "rad s-1", "shank angle rate", "Rate of the shank angle.", "series"),
    Output("draft_gear_force", _ES, "N", "draft-gear force", "Draft-gear force k_B d_d + c_B d_d' (+ draft).",
           "series", **IN_KN),
    Output("knuckle_displacement", _CS, "m", "knuckle displacement", "Knuckle spring displacement along the coupler "
           "line (+ draft).", "series", **IN_MM),
    Output("knuckle_displacement_rate", _CS, "m s-1", "knuckle displacement rate", "Rate of the knuckle "
           "displacement.", "series"),
)
SHANK_ENVELOPE = (
    Output("max_abs_shank_angle", ("coupler", "coupler_end"), "rad", "peak shank angle", "Largest |shank angle| over "
           "every step.", "envelope"),
)
#: the coupler Newton statistics, for every planar train (zero for inertial couplers)
PLANAR_NEWTON = tuple(dataclasses.replace(o, when=None, when_text="", description=o.description.replace(
    "in a curve ", "")) for o in COUPLER_NEWTON)

PLANAR_OUTPUTS = PLANAR_SERIES + COUPLER_ENVELOPES + SHANK_ENVELOPE + TRAIN_METRICS + TRAIN_SCALARS + PLANAR_NEWTON
SUMMARY = tuple(o.name for o in TRAIN_METRICS)


def shape(sc) -> Shape:
    """Sizes of ``vehicle``, ``coupler`` and ``coupler_end`` and the static coordinates of a planar
    train (from the schema)."""
    v = sc.vehicle_type_names()
    m = len(v) - 1
    return Shape(sizes={"vehicle": len(v), "coupler": m, "coupler_end": 2},
                 coords={"vehicle_type": ("vehicle", tuple(v), {"long_name": "vehicle type name"}),
                         "vehicle_kind": ("vehicle", tuple(sc.car_types[n].kind for n in v), dict(VEHICLE_KIND_ATTRS)),
                         "connection_type": ("coupler", (sc.coupler.model,) * m, {"long_name": "connection type name"}),
                         "coupler_end": ("coupler_end", COUPLER_ENDS, {"long_name": COUPLER_END.long_name})})


__all__ = ["COUPLER_END", "PLANAR_OUTPUTS", "SUMMARY", "shape", "VEHICLE", "COUPLER"]
