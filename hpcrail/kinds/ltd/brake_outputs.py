"""Declared outputs of the pneumatic brake (added to the LTD kind's outputs when ``air_brake.model`` is
``pneumatic``).  Pressures are gauge pressures in Pa (display bar); times of the metrics are measured from
the first brake command (application) or the first release command after it, taken over every accepted
integrator step (interpolated between steps), never only over the sampled output.  Pure data (no numba)."""
from __future__ import annotations

from hpcrail.kinds.ltd.brakes import is_pneumatic, uses_valve_output
from hpcrail.results.outputs import Output

IN_BAR = dict(display_units="bar", display_scale=1e-5)
IN_KN = dict(display_units="kN", display_scale=1e-3)
_PN = dict(when=is_pneumatic, when_text="air_brake.model is pneumatic")
_VS = ("time", "vehicle")
_NO_APP = "NaN when the run has no brake application"


def _valve(name: str):
    return lambda sc: uses_valve_output(sc, name) and sc.air_brake.pneumatic.control == "conventional"


def _eot(sc) -> bool:
    return is_pneumatic(sc) and sc.air_brake.pneumatic.eot.kind != "none"


BRAKE_SERIES = (
    Output("brake_pipe_pressure", _VS, "Pa", "brake-pipe pressure", "Brake-pipe gauge pressure at the vehicle's valve "
           "(its pipe cell).", "series", **IN_BAR, **_PN),
    Output("auxiliary_reservoir_pressure", _VS, "Pa", "auxiliary-reservoir pressure", "Auxiliary-reservoir gauge "
           "pressure.", "series", **IN_BAR, **_PN),
    Output("control_reservoir_pressure", _VS, "Pa", "control-reservoir pressure", "Control-reservoir gauge pressure "
           "of a UIC distributor.", "series", **IN_BAR, when=_valve("control_reservoir_pressure"),
           when_text="a vehicle has a UIC distributor (conventional control)",
           missing="NaN for vehicles without a UIC distributor"),
    Output("emergency_reservoir_pressure", _VS, "Pa", "emergency-reservoir pressure", "Emergency-reservoir gauge "
           "pressure of an AAR control valve.", "series", **IN_BAR, when=_valve("emergency_reservoir_pressure"),
           when_text="a vehicle has an AAR control valve (conventional control)",
           missing="NaN for vehicles without an AAR control valve"),
    Output("eot_brake_pipe_pressure", ("time",), "Pa", "EOT brake-pipe pressure", "Rear brake-pipe gauge pressure as "
           "the EOT device reports it to the cab (after its radio delay).", "series", **IN_BAR, when=_eot,
           when_text="air_brake.pneumatic.eot.kind is one_way or two_way",
           missing="NaN before the first report arrives"),
)
_EL = dict(role="element", **_PN)
BRAKE_ELEMENTS = (
    Output("brake_front_arrival_time", ("vehicle",), "s", "brake-signal arrival", "Time from the application command "
           "until the brake pipe at the vehicle fell by the front threshold (air_brake.pneumatic.metrics).",
           missing="NaN where the front did not arrive", **_EL),
    Output("brake_application_time", ("vehicle",), "s", "application time (95 %)", "Time from the application "
           "command until the cylinder reached 95 % of its largest pressure of the application.",
           missing="NaN for vehicles whose cylinder did not apply", **_EL),
    Output("brake_release_time", ("vehicle",), "s", "release time", "Time from the release command until the "
           "cylinder fell to the release end pressure (EN 15355: 0.4 bar).",
           missing="NaN for vehicles without a release", **_EL),
    Output("max_brake_cylinder_pressure", ("vehicle",), "Pa", "peak cylinder pressure", "Largest cylinder gauge "
           "pressure of the application (until the release command).", **IN_BAR, **_EL),
)
BRAKE_METRICS = (
    Output("brake_signal_speed", (), "m s-1", "brake-signal speed", "Propagation speed of the brake signal: inverse "
           "slope of a least-squares line of front arrival time against pipe distance from the lead locomotive "
           "(up to where it meets the front of the first remote driver's brake valve, the first 10 % of the "
           "distance left out).", "metric",
           missing="NaN without an application or with fewer than 3 arrivals", **_PN),
    Output("application_time_lead", (), "s", "application time at the lead", "Time from the application command "
           "until the lead vehicle's cylinder reached 95 % of its largest pressure.", "metric", missing=_NO_APP, **_PN),
    Output("application_time_tail", (), "s", "application time at the tail", "Time from the application command "
           "until the last vehicle's cylinder reached 95 % of its largest pressure.", "metric", missing=_NO_APP,
           **_PN),
    Output("release_time_lead", (), "s", "release time at the lead", "Time from the release command until the lead "
           "vehicle's cylinder fell to the release end pressure.", "metric", missing="NaN without a release",
           **_PN),
    Output("release_time_tail", (), "s", "release time at the tail", "Time from the release command until the last "
           "vehicle's cylinder fell to the release end pressure.", "metric", missing="NaN without a release", **_PN),
    Output("max_buff_force_braking", (), "N", "peak buff force while braking", "Largest buff force over every "
           "coupler and step from the application command until the release command.", "metric",
           missing=_NO_APP, **IN_KN, **_PN),
    Output("max_buff_force_braking_coupler", (), "1", "coupler of the peak braking buff", "Coupler of the largest "
           "buff force while braking.", "metric", missing=_NO_APP, **_PN),
    Output("stopping_distance", (), "m", "stopping distance", "Distance run by the head from the application command "
           "until every vehicle stood still.", "metric", missing="NaN when the train did not stop (or stood still "
           "at the command)", **_PN),
    Output("stopping_time", (), "s", "stopping time", "Time from the application command until every vehicle stood "
           "still.", "metric", missing="NaN when the train did not stop (or stood still at the command)", **_PN),
)
BRAKE_SCALARS = (
    Output("brake_application_command_time", (), "s", "time of the application command", "Time of the first brake "
           "application command (the origin of the brake metrics).", "scalar", missing=_NO_APP, **_PN),
    Output("brake_release_command_time", (), "s", "time of the release command", "Time of the first release command "
           "after the application.", "scalar", missing="NaN without a release", **_PN),
    Output("air_mass_initial", (), "kg", "initial air mass", "Air in the brake pipe, reservoirs, chambers and "
           "cylinders at the start.", "scalar", **_PN),
    Output("air_exchanged", (), "kg", "air vented minus air supplied", "Air vented to the atmosphere minus air drawn "
           "from the main reservoirs over the run.", "scalar", **_PN),
    Output("air_mass_balance_residual", (), "1", "air mass balance residual", "(final air mass + air exchanged - "
           "initial air mass) / initial air mass.", "scalar", **_PN),
)
BRAKE_OUTPUTS = BRAKE_SERIES + BRAKE_ELEMENTS + BRAKE_METRICS + BRAKE_SCALARS
#: printed by ``hpcrail run`` after the LTD metrics (those present)
BRAKE_SUMMARY = tuple(o.name for o in BRAKE_METRICS) + ("air_mass_balance_residual",)

__all__ = ["BRAKE_OUTPUTS", "BRAKE_SERIES", "BRAKE_ELEMENTS", "BRAKE_METRICS", "BRAKE_SCALARS", "BRAKE_SUMMARY"]
