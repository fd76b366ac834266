"""Declared outputs of the ``vertical`` kind (pitch-plane vehicle with massless damper nodes).

Dimensions ``time`` [s], ``body`` (rigid bodies), ``element`` (suspension elements and contacts),
``wheel`` (track input points), ``floor_point`` (car-body floor points for accelerations and ride
comfort).  Sign conventions: displacements + up, pitch + nose up, element forces + compression, wheel
loads + pressing on the rail; displacements measured from the static equilibrium.  Ride comfort:
EN 12299 (Wb weighting, a_ZP95, N_MV vertical term) and Sperling's W_z
(:mod:`hpcrail.results.ride_comfort`).  Sources: Yu et al. 2023 eqs (1)-(19).
"""
from __future__ import annotations

from hpcrail.results.outputs import Dim, Output, Shape

BODY = Dim("body", "rigid body", labels="names")
ELEMENT = Dim("element", "suspension element or wheel/rail contact", labels="names")
WHEEL = Dim("wheel", "wheel (track input point)", labels="names")
FLOOR_POINT = Dim("floor_point", "car-body floor point", labels="names")

IN_KN = dict(display_units="kN", display_scale=1e-3)
IN_MM = dict(display_units="mm", display_scale=1e3)
_NO_PITCH = "NaN for bodies without a pitch degree of freedom"
_SHORT = "NaN when the run is shorter than one comfort window (output.comfort_window_s)"
_NO_WHEEL = "NaN for a vehicle without wheels"

VERTICAL_SERIES = (
    Output("bounce", ("time", "body"), "m", "bounce", "Vertical displacement of the body centre from static "
           "equilibrium (+ up).", "series", **IN_MM),
    Output("pitch", ("time", "body"), "rad", "pitch", "Pitch angle from static equilibrium (+ nose up).", "series",
           missing=_NO_PITCH),
    Output("bounce_velocity", ("time", "body"), "m s-1", "bounce velocity", "Vertical velocity of the body centre.",
           "series"),
    Output("bounce_acceleration", ("time", "body"), "m s-2", "bounce acceleration", "Vertical acceleration of the "
           "body centre (gravity excluded).", "series"),
    Output("pitch_acceleration", ("time", "body"), "rad s-2", "pitch acceleration", "Pitch acceleration.", "series",
           missing=_NO_PITCH),
    Output("floor_displacement", ("time", "floor_point"), "m", "floor displacement", "Vertical displacement of the "
           "floor point from static equilibrium.", "series", **IN_MM),
    Output("floor_acceleration", ("time", "floor_point"), "m s-2", "floor acceleration", "Vertical acceleration of "
           "the floor point (gravity excluded).", "series"),
    Output("element_force", ("time", "element"), "N", "element force", "Total element force incl. static preload "
           "(+ compression).", "series", **IN_KN),
    Output("damper_stroke", ("time", "element"), "m", "damper stroke", "Stroke of a damper with series joints from "
           "static equilibrium (massless-node state).", "series", **IN_MM,
           missing="NaN for elements that are not dampers with series joints"),
    Output("wheel_load", ("time", "wheel"), "N", "wheel load", "Total vertical force on the rail under the wheel "
           "(wheel/rail force).", "series", **IN_KN),
    Output("rail_irregularity", ("time", "wheel"), "m", "rail irregularity", "Vertical rail irregularity under the "
           "wheel (with its delay).", "series", **IN_MM),
)
VERTICAL_STATIC = (
    Output("static_bounce", ("body",), "m", "static deflection", "Static deflection of the body centre under gravity "
           "from the unloaded state (+ up).", "element", **IN_MM),
    Output("element_static_force", ("element",), "N", "static element force", "Static element force under gravity "
           "(+ compression).", "element", **IN_KN),
    Output("wheel_static_load", ("wheel",), "N", "static wheel load", "Static wheel/rail force Q0.", "element", **IN_KN),
)
VERTICAL_ENVELOPES = (
    Output("element_max_force", ("element",), "N", "peak element force", "Maximum element force over every step "
           "(+ compression).", "envelope", **IN_KN),
    Output("element_min_force", ("element",), "N", "lowest element force", "Minimum element force over every step "
           "(+ compression).", "envelope", **IN_KN),
    Output("wheel_max_load", ("wheel",), "N", "peak wheel load", "Maximum wheel/rail force over every step.",
           "envelope", **IN_KN),
    Output("wheel_min_load", ("wheel",), "N", "lowest wheel load", "Minimum wheel/rail force over every step.",
           "envelope", **IN_KN),
)
#: ride comfort per floor point
FLOOR_METRICS = (
    Output("sperling_wz", ("floor_point",), "1", "Sperling W_z", "Sperling ride index W_z of the vertical floor "
           "acceleration.", "element"),
    Output("wb_rms", ("floor_point",), "m s-2", "Wb r.m.s. acceleration", "EN 12299 Wb-weighted r.m.s. vertical "
           "floor acceleration over the run.", "element"),
    Output("wb_p95", ("floor_point",), "m s-2", "Wb a_ZP95", "95th percentile of the 5 s r.m.s. values of the "
           "Wb-weighted acceleration (EN 12299 a_ZP95).", "element", missing=_SHORT),
    Output("n_mv_z", ("floor_point",), "1", "N_MV vertical term", "Vertical term 6 a_ZP95^Wb of the EN 12299 mean "
           "comfort index N_MV.", "element", missing=_SHORT),
    Output("rms_acceleration", ("floor_point",), "m s-2", "r.m.s. acceleration", "Unweighted r.m.s. vertical floor "
           "acceleration.", "element"),
    Output("max_abs_acceleration", ("floor_point",), "m s-2", "peak |acceleration|", "Maximum |vertical floor "
           "acceleration| over every step.", "element"),
)
#: scalar ride and wheel/rail force metrics
VERTICAL_METRICS = (
    Output("wz_max", (), "1", "worst Sperling W_z", "Sperling ride index W_z, worst floor point.", "metric"),
    Output("wb_rms_max", (), "m s-2", "worst Wb r.m.s. acceleration", "EN 12299 Wb-weighted r.m.s. vertical "
           "acceleration, worst floor point.", "metric"),
    Output("n_mv_z_max", (), "1", "worst N_MV vertical term", "EN 12299 vertical comfort term 6 a_ZP95^Wb, worst "
           "floor point.", "metric", missing=_SHORT),
    Output("max_floor_acceleration", (), "m s-2", "peak floor acceleration", "Maximum |vertical floor acceleration| "
           "over floor points and every step.", "metric"),
    Output("max_wheel_load", (), "N", "peak wheel load", "Largest wheel/rail force over wheels and every step.",
           "metric", **IN_KN, missing=_NO_WHEEL),
    Output("min_wheel_load", (), "N", "lowest wheel load", "Smallest wheel/rail force over wheels and every step "
           "(< 0: contact would be lost).", "metric", **IN_KN, missing=_NO_WHEEL),
    Output("max_wheel_unloading_ratio", (), "1", "peak wheel unloading", "Largest wheel unloading (Q0 - Q_min)/Q0 "
           "over wheels and every step.", "metric", missing=_NO_WHEEL),
    Output("max_element_force_change", (), "N", "peak element force change", "Largest |change of an element force| "
           "from its static value over elements and every step.", "metric", **IN_KN),
)
VERTICAL_OUTPUTS = VERTICAL_SERIES + VERTICAL_STATIC + VERTICAL_ENVELOPES + FLOOR_METRICS + VERTICAL_METRICS
SUMMARY = tuple(o.name for o in VERTICAL_METRICS)


def _element_kind(t) -> str:
    return f"contact_{t.law}" if t.kind == "contact" else t.kind


def shape(sc) -> Shape:
    """Sizes and labels of ``body``, ``element``, ``wheel`` and ``floor_point`` and the static
    coordinates (body and wheel positions, element laws and types) of a vertical scenario (from the
    schema: no assembly)."""
    v = sc.vehicle
    bodies = [b.name for b in v.bodies]
    elements = v.element_names()
    wheels = [w.name for w in v.wheels]
    floor = [f.name for f in v.floor_point_list()]
    et = v.element_types
    return Shape(
        sizes={"body": len(bodies), "element": len(elements), "wheel": len(wheels), "floor_point": len(floor)},
        coords={
            "body": ("body", tuple(bodies), {"long_name": BODY.long_name}),
            "body_x": ("body", tuple(float(b.x_m) for b in v.bodies),
                       {"units": "m", "long_name": "longitudinal position of the body centre (vehicle frame, "
                                                   "forward +)"}),
            "element": ("element", tuple(elements), {"long_name": ELEMENT.long_name}),
            "element_kind": ("element", tuple(_element_kind(et[e.type]) for e in v.elements),
                             {"long_name": "element law"}),
            "element_type": ("element", tuple(e.type for e in v.elements), {"long_name": "element type name"}),
            "wheel": ("wheel", tuple(wheels), {"long_name": WHEEL.long_name}),
            "wheel_x": ("wheel", tuple(float(w.x_m) for w in v.wheels),
                        {"units": "m", "long_name": "longitudinal wheel position (vehicle frame, forward +); input "
                                                    "delay (x_lead - x)/V"}),
            "floor_point": ("floor_point", tuple(floor), {"long_name": FLOOR_POINT.long_name}),
        })


__all__ = ["BODY", "ELEMENT", "WHEEL", "FLOOR_POINT", "VERTICAL_OUTPUTS", "VERTICAL_METRICS", "FLOOR_METRICS",
           "SUMMARY", "shape"]
