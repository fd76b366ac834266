"""Declared outputs of the ``railway_vehicle`` kind (multibody vehicle on track, paper 004).

Dimensions: ``time`` [s]; ``body`` (car body, bogie frames, wheelsets, by name); ``wheelset``; ``wheel``
(wheelset × side, named like "ws1 left").  Sign conventions (:mod:`hpcrail.models.wheelrail`): track frame X
forward, Y left, Z up; lateral displacement + left, yaw + to the left (nose left), roll + left side up.
Wheel forces are those of the wheel **on the rail**: Q (vertical, + pressing down), Y (lateral, + towards the
field side of that rail, i.e. outwards — a flanging wheel has Y > 0), ΣY per wheelset (track shifting force,
+ left).  Running safety (EN 14363:2016 §7, :mod:`hpcrail.results.running_safety`): Y/Q per wheel, wheel
unloading ΔQ/Q = (Q0 - Q)/Q0, ΣY against the Prud'homme limit α (10 kN + P0/3), all as 2 m sliding means
over the track; each maximum with the wheel, the track position and the time where it occurs.

Names are ``with_dim``-friendly: the mixed-train kind re-declares them per detailed vehicle
(``hpcrail.results.outputs.with_dim(RAILWAY_VEHICLE_OUTPUTS, "detailed_vehicle")``).
"""
from __future__ import annotations

from hpcrail.results.outputs import Dim, Output, Shape

BODY = Dim("body", "vehicle body", labels="names")
WHEELSET = Dim("wheelset", "wheelset", labels="names")
WHEEL = Dim("wheel", "wheel (wheelset and side)", labels="names")

IN_KN = dict(display_units="kN", display_scale=1e-3)
IN_MM = dict(display_units="mm", display_scale=1e3)
IN_MRAD = dict(display_units="mrad", display_scale=1e3)
IN_DEG = dict(display_units="degree", display_scale=57.29577951308232)
_STEADY = ("NaN when the vehicle does not run output.steady_window_m with every wheelset inside the last "
           "circular curve")
_NOMAX = "NaN (and an empty name) when the run is shorter than one sliding-mean window"

RV_SERIES = (
    Output("distance", ("time",), "m", "track position", "Arc length of the leading wheelset along the track.",
           "series"),
    Output("speed", ("time",), "m s-1", "forward speed", "Forward speed of the vehicle along the track.", "series"),
    Output("lateral_displacement", ("time", "body"), "m", "lateral displacement", "Lateral displacement of the body "
           "centre from the ideal track centre line in its own track frame (+ left).", "series", **IN_MM),
    Output("yaw", ("time", "body"), "rad", "yaw angle", "Yaw angle of the body relative to its track frame "
           "(+ nose left).", "series", **IN_MRAD),
    Output("vertical_displacement", ("time", "body"), "m", "vertical displacement", "Vertical displacement of the "
           "body centre from its reference position (static equilibrium on level track; + up).", "series", **IN_MM),
    Output("roll", ("time", "body"), "rad", "roll angle", "Roll angle relative to the track frame (+ left side "
           "up).", "series", **IN_MRAD),
    Output("wheel_load", ("time", "wheel"), "N", "wheel load Q", "Vertical force of the wheel on the rail "
           "(track frame, + down).", "series", **IN_KN),
    Output("lateral_force", ("time", "wheel"), "N", "lateral force Y", "Lateral force of the wheel on the rail "
           "(track frame, + towards the field side of that rail).", "series", **IN_KN),
    Output("normal_force", ("time", "wheel"), "N", "normal contact force", "Sum of the normal forces of the "
           "wheel's contact points (tread and flange).", "series", **IN_KN),
    Output("flange_normal_force", ("time", "wheel"), "N", "flange normal force", "Normal force carried by the "
           "flange contact (KEC: flange-start share of the regularised transition; LUT: Hertzian penalty).",
           "series", **IN_KN),
    Output("longitudinal_creepage", ("time", "wheel"), "1", "longitudinal creepage", "Longitudinal creepage of the "
           "wheel's main contact point (the one carrying the larger normal force).", "series"),
    Output("lateral_creepage", ("time", "wheel"), "1", "lateral creepage", "Lateral creepage of the wheel's main "
           "contact point.", "series"),
    Output("spin_creepage", ("time", "wheel"), "m-1", "spin creepage", "Spin creepage of the wheel's main contact "
           "point.", "series"),
    Output("contact_position_wheel", ("time", "wheel"), "m", "contact position on the wheel", "Lateral wheel "
           "surface parameter s^w of the main contact point (from the wheel profile origin, + left).", "series",
           **IN_MM),
    Output("contact_position_rail", ("time", "wheel"), "m", "contact position on the rail", "Lateral rail "
           "surface parameter s^r of the main contact point (rail profile frame, + left).", "series", **IN_MM),
    Output("contact_angle", ("time", "wheel"), "rad", "contact angle", "Contact angle of the main contact point "
           "(+ towards the track centre).", "series", **IN_DEG),
    Output("rolling_radius", ("time", "wheel"), "m", "rolling radius", "Rolling radius at the main contact point.",
           "series", **IN_MM),
    Output("flange_contact", ("time", "wheel"), "1", "flange contact", "1 while the flange is in contact (KEC: "
           "the flange-start contact carries load or the main contact angle exceeds 45 degrees; LUT: positive "
           "flange indentation (two-point contact) or the constrained contact angle exceeds 45 degrees), else 0.",
           "series", dtype="int8"),
    Output("flange_indentation", ("time", "wheel"), "m", "flange indentation", "LUT: wheel/rail indentation at "
           "the flange (+ penetration, - clearance; paper 004 eq 21); KEC: 0 (contact is a constraint).", "series",
           **IN_MM),
    Output("y_over_q", ("time", "wheel"), "1", "Y/Q", "Derailment quotient Y/Q of the wheel (instantaneous).",
           "series", missing="NaN where the wheel load Q <= 0 (a lifted wheel)"),
    Output("wheel_unloading", ("time", "wheel"), "1", "wheel unloading dQ/Q", "Wheel unloading (Q0 - Q)/Q0 "
           "(instantaneous).", "series"),
    Output("wear_number", ("time", "wheel"), "N", "wear number Tγ", "Energy dissipated in the wheel's contacts "
           "per distance rolled, Tγ = -(F_x ξ_x + F_y ξ_y) summed over its contact points (creep forces of the "
           "rail on the wheel and their creepages; the spin term is not included, as in the usual Tγ wear "
           "index).", "series"),
    Output("sum_y", ("time", "wheelset"), "N", "track shifting force sum Y", "Sum of the lateral forces of the "
           "wheelset on the track (+ left, instantaneous).", "series", **IN_KN),
    Output("fixed_point_iterations", ("time", "wheelset"), "1", "normal/creep iterations", "Iterations of the "
           "normal/creep-force fixed point in the evaluation at the sample.", "series"),
)
RV_ELEMENTS = (
    Output("static_wheel_load", ("wheel",), "N", "static wheel load Q0", "Vertical wheel force at rest on level "
           "straight track.", "element", **IN_KN),
    Output("steady_lateral_displacement", ("body",), "m", "steady-curving lateral displacement", "Mean lateral "
           "displacement over the steady-curving window (paper 004 Tables 5-6).", "element", **IN_MM,
           missing=_STEADY),
    Output("steady_yaw", ("body",), "rad", "steady-curving yaw angle", "Mean yaw angle over the steady-curving "
           "window (paper 004 Tables 5-6).", "element", **IN_MRAD, missing=_STEADY),
    Output("max_y_over_q_2m", ("wheel",), "1", "max (Y/Q) 2 m mean", "Largest 2 m sliding mean of Y/Q of the "
           "wheel (EN 14363).", "element", missing=_NOMAX),
    Output("max_wheel_unloading_2m", ("wheel",), "1", "max dQ/Q 2 m mean", "Largest wheel unloading of the 2 m "
           "sliding mean of Q.", "element", missing=_NOMAX),
    Output("max_sum_y_2m", ("wheelset",), "N", "max |sum Y| 2 m mean", "Largest |2 m sliding mean of the track "
           "shifting force| of the wheelset (EN 14363).", "element", **IN_KN, missing=_NOMAX),
    Output("mean_wear_number", ("wheel",), "N", "mean wear number Tγ", "Mean of the wheel's wear number Tγ over "
           "the samples: the energy its contacts dissipate per metre run, to rank wear across a sweep.", "element",
           missing=_NOMAX),
    Output("sum_y_limit", ("wheelset",), "N", "Prud'homme limit", "Limit alpha (10 kN + P0/3) of the track "
           "shifting force, P0 the static wheelset load (EN 14363).", "element", **IN_KN),
)
RV_ENVELOPES = (
    Output("max_abs_lateral_displacement", ("body",), "m", "peak |lateral displacement|", "Largest |lateral "
           "displacement| of the body over every integrator step.", "envelope", **IN_MM),
    Output("max_abs_yaw", ("body",), "rad", "peak |yaw angle|", "Largest |yaw angle| of the body over every "
           "integrator step.", "envelope", **IN_MRAD),
)
RV_METRICS = (
    Output("max_y_over_q", (), "1", "max (Y/Q) 2 m", "Largest 2 m sliding mean of Y/Q over the wheels "
           "(EN 14363 derailment quotient).", "metric", missing=_NOMAX, limit=0.8,
           limit_source="EN 14363 (Y/Q)lim, output.en14363.y_q_limit"),
    Output("y_over_q_ratio", (), "1", "(Y/Q) / limit", "Largest (Y/Q) 2 m mean over its limit "
           "(output.en14363.y_q_limit).", "metric", missing=_NOMAX, limit=1.0, limit_source="EN 14363 (Y/Q)lim"),
    Output("max_sum_y", (), "N", "max |sum Y| 2 m", "Largest |2 m sliding mean of the track shifting force| over "
           "the wheelsets (EN 14363).", "metric", **IN_KN, missing=_NOMAX),
    Output("sum_y_ratio", (), "1", "|sum Y| / Prud'homme limit", "Largest ratio of the 2 m sliding mean of |sum Y| "
           "to the wheelset's Prud'homme limit.", "metric", missing=_NOMAX, limit=1.0,
           limit_source="EN 14363 Prud'homme alpha (10 kN + P0/3)"),
    Output("max_wheel_unloading", (), "1", "max dQ/Q 2 m", "Largest wheel unloading (Q0 - Q)/Q0 of the 2 m "
           "sliding mean of Q over the wheels.", "metric", missing=_NOMAX, limit=0.6,
           limit_source="EN 14363 (dQ/Q)lim, output.en14363.dq_q_limit"),
    Output("max_mean_wear_number", (), "N", "max mean wear number Tγ", "Largest mean wear number Tγ of the wheels "
           "(the most wearing wheel, for ranking a sweep).", "metric", missing=_NOMAX),
    Output("max_wheel_load", (), "N", "peak wheel load Q", "Largest vertical wheel force over the wheels and the "
           "samples.", "metric", **IN_KN),
    Output("min_wheel_load", (), "N", "lowest wheel load Q", "Smallest vertical wheel force over the wheels and "
           "the samples (< 0: the constraint holds a lifting wheel).", "metric", **IN_KN),
    Output("max_lateral_displacement", (), "m", "peak |wheelset lateral displacement|", "Largest |lateral "
           "displacement| of any wheelset over every integrator step.", "metric", **IN_MM),
    Output("flange_contact_distance", (), "m", "distance in flange contact", "Track length run while any wheel "
           "is in flange contact (from the samples).", "metric"),
)
RV_LOCATIONS = (
    Output("max_y_over_q_wheel", (), "", "wheel of max (Y/Q)", "The wheel where the largest (Y/Q) 2 m mean "
           "occurs.", "scalar", dtype="str"),
    Output("max_y_over_q_position", (), "m", "position of max (Y/Q)", "Track position (centre of the 2 m window "
           "under that wheel) of the largest (Y/Q) mean.", "scalar", missing=_NOMAX),
    Output("max_y_over_q_time", (), "s", "time of max (Y/Q)", "Time at the centre of that window.", "scalar",
           missing=_NOMAX),
    Output("max_sum_y_wheelset", (), "", "wheelset of max sum Y", "The wheelset where the largest |sum Y| 2 m mean "
           "occurs.", "scalar", dtype="str"),
    Output("max_sum_y_position", (), "m", "position of max sum Y", "Track position of the largest |sum Y| 2 m "
           "mean.", "scalar", missing=_NOMAX),
    Output("max_sum_y_time", (), "s", "time of max sum Y", "Time of the largest |sum Y| 2 m mean.", "scalar",
           missing=_NOMAX),
    Output("max_wheel_unloading_wheel", (), "", "wheel of max dQ/Q", "The wheel where the largest unloading "
           "occurs.", "scalar", dtype="str"),
    Output("max_wheel_unloading_position", (), "m", "position of max dQ/Q", "Track position of the largest "
           "unloading.", "scalar", missing=_NOMAX),
    Output("max_wheel_unloading_time", (), "s", "time of max dQ/Q", "Time of the largest unloading.", "scalar",
           missing=_NOMAX),
)
RAILWAY_VEHICLE_OUTPUTS = RV_SERIES + RV_ELEMENTS + RV_ENVELOPES + RV_METRICS + RV_LOCATIONS
SERIES_NAMES = tuple(o.name for o in RV_SERIES)
#: what ``hpcrail run`` prints: the steady-curving table, then the running-safety metrics
SUMMARY = ("steady_lateral_displacement", "steady_yaw", "max_y_over_q", "max_y_over_q_wheel", "y_over_q_ratio",
           "max_sum_y", "max_sum_y_wheelset", "sum_y_ratio", "max_wheel_unloading", "max_wheel_unloading_wheel",
           "max_lateral_displacement", "flange_contact_distance")


def names(sc) -> tuple[list, list, list]:
    """(body names, wheelset names, wheel names) of a scenario (from the schema: no build)."""
    v = sc.vehicle
    bodies = [b.name for b in v.bodies]
    ws = v.wheelset_names()
    wheels = [f"{w} {side}" for w in ws for side in ("left", "right")]
    return bodies, ws, wheels


def shape(sc) -> Shape:
    """Sizes and labels of ``body``, ``wheelset`` and ``wheel`` and the bodies' static coordinates."""
    v = sc.vehicle
    bodies, ws, wheels = names(sc)
    return Shape(
        sizes={"body": len(bodies), "wheelset": len(ws), "wheel": len(wheels)},
        coords={
            "body": ("body", tuple(bodies), {"long_name": BODY.long_name}),
            "body_kind": ("body", tuple(v.body_kind(b) for b in v.bodies), {"long_name": "body kind (rigid or "
                                                                                 "wheelset)"}),
            "body_x": ("body", tuple(float(b.x_m) for b in v.bodies),
                       {"units": "m", "long_name": "longitudinal position of the body centre (vehicle frame, "
                                                   "forward +)"}),
            "wheelset": ("wheelset", tuple(ws), {"long_name": WHEELSET.long_name}),
            "wheel": ("wheel", tuple(wheels), {"long_name": WHEEL.long_name}),
        })


__all__ = ["BODY", "WHEELSET", "WHEEL", "RAILWAY_VEHICLE_OUTPUTS", "RV_SERIES", "RV_METRICS", "SERIES_NAMES",
           "SUMMARY", "shape", "names"]
