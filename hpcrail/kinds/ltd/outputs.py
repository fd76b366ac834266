"""Declared outputs of the LTD kind (and the train metrics other train kinds reuse).

Dimensions ``time`` [s], ``vehicle`` (1..N, head first), ``coupler`` (1..N−1, head to tail; coupler k
joins vehicles k and k+1), ``mode_change`` (the log of friction mode changes).  Forces and
deflections are + draft (tension) / − buff (compression).

The train metrics are those of the International Benchmarking of LTD Simulators (Bosso et al. 2024,
Tables 1-2), taken over every accepted integrator step (the observer of
:mod:`hpcrail.models.couplers.envelope`), never only over the sampled output; the mean speed comes
from the distance travelled, exact and independent of the sampling interval.

Outputs added by a coupler law exist when the consist uses that law (``extra_outputs`` of its entry in
:mod:`hpcrail.kinds.ltd.couplers`).  Pure data plus :func:`train_metrics` (numpy): importing this
module — what validating a scenario does — imports no numba.
"""
from __future__ import annotations

import numpy as np

from hpcrail.kinds.ltd.brake_outputs import BRAKE_OUTPUTS, BRAKE_SUMMARY
from hpcrail.kinds.ltd.couplers import LAWS, laws_used, uses_output
from hpcrail.kinds.ltd.safety import SAFETY_OUTPUTS, SAFETY_SUMMARY
from hpcrail.results.envelope_check import CHECK_DIM, CHECK_SUMMARY, check_outputs  # noqa: F401 (CHECK_DIM re-exported)
from hpcrail.results.outputs import Dim, Output, Shape

VEHICLE = Dim("vehicle", "vehicle number, 1 = head")
COUPLER = Dim("coupler", "coupler number, k joins vehicles k and k+1")
MODE_CHANGE = Dim("mode_change", "mode change of a friction connection, in time order", labels="none")

IN_KMH = dict(display_units="km h-1", display_scale=3.6)
IN_KN = dict(display_units="kN", display_scale=1e-3)
IN_MM = dict(display_units="mm", display_scale=1e3)
IN_MJ = dict(display_units="MJ", display_scale=1e-6)


def _law(name: str):
    """Condition: a law of the consist adds output ``name``."""
    return lambda sc: uses_output(sc, name)


# ------------------------------------------------------------------------------------------------
# shared by the train kinds (LTD, planar train; later the mixed train)
# ------------------------------------------------------------------------------------------------
#: benchmark metrics (Bosso et al. 2024, Tables 1-2) over every accepted step
TRAIN_METRICS = (
    Output("max_speed", (), "m s-1", "peak speed", "Maximum speed over all vehicles and every step.", "metric", **IN_KMH),
    Output("mean_speed", (), "m s-1", "mean speed", "Average speed over all vehicles and the whole run (distance "
           "travelled / time).", "metric", **IN_KMH),
    Output("max_draft_force", (), "N", "peak draft force", "Largest draft (tensile) in-train force over all "
           "couplers and every step.", "metric", **IN_KN),
    Output("max_draft_force_coupler", (), "1", "coupler of the peak draft force", "Coupler number (1 = behind "
           "the lead vehicle) of the largest draft force.", "metric", dtype="int64"),
    Output("max_buff_force", (), "N", "peak buff force", "Largest buff (compressive) in-train force magnitude "
           "over all couplers and every step.", "metric", **IN_KN),
    Output("max_buff_force_coupler", (), "1", "coupler of the peak buff force", "Coupler number of the largest "
           "buff force.", "metric", dtype="int64"),
    Output("mean_max_draft_force", (), "N", "mean of per-coupler peak draft", "Mean over coupler positions of "
           "the per-position maximum draft force.", "metric", **IN_KN),
    Output("mean_max_buff_force", (), "N", "mean of per-coupler peak buff", "Mean over coupler positions of the "
           "per-position maximum buff force magnitude.", "metric", **IN_KN),
    Output("max_draft_deflection", (), "m", "peak draft deflection", "Maximum draft deflection (extension incl. "
           "slack) at the reference coupler.", "metric", **IN_MM),
    Output("max_buff_deflection", (), "m", "peak buff deflection", "Maximum buff deflection magnitude (incl. "
           "slack) at the reference coupler.", "metric", **IN_MM),
)
#: scalars accompanying the metrics
TRAIN_SCALARS = (
    Output("reference_coupler", (), "1", "reference coupler", "Coupler of the deflection metrics "
           "(output.reference_coupler, else the coupler of the largest draft force).", "scalar", dtype="int64"),
    Output("time_of_max_draft_force", (), "s", "time of the peak draft force", "First time the largest draft "
           "force occurs.", "scalar"),
    Output("time_of_max_buff_force", (), "s", "time of the peak buff force", "First time the largest buff force "
           "occurs.", "scalar"),
)
#: per-coupler envelopes over every accepted step
COUPLER_ENVELOPES = (
    Output("coupler_max_draft_force", ("coupler",), "N", "peak draft force per coupler", "Per-coupler maximum "
           "draft force over every step.", "envelope", **IN_KN),
    Output("coupler_max_buff_force", ("coupler",), "N", "peak buff force per coupler", "Per-coupler maximum buff "
           "force magnitude over every step.", "envelope", **IN_KN),
    Output("coupler_max_draft_deflection", ("coupler",), "m", "peak extension per coupler", "Per-coupler maximum "
           "extension over every step.", "envelope", **IN_MM),
    Output("coupler_max_buff_deflection", ("coupler",), "m", "peak compression per coupler", "Per-coupler "
           "maximum compression magnitude over every step.", "envelope", **IN_MM),
)
_NI = "the consist has noninertial couplers"
#: Newton statistics of the noninertial coupler equilibrium (Massa et al. 2012 eq 42)
COUPLER_NEWTON = tuple(
    Output(n, (), "1", ln, d, "run", dtype="int64", when=_law(n), when_text=_NI) for n, ln, d in (
        ("coupler_newton_solves", "coupler equilibrium solves", "Noninertial coupler equilibrium solves (one per "
         "coupler in a curve and right-hand-side evaluation)."),
        ("coupler_newton_iterations", "coupler Newton iterations", "Newton-Raphson iterations over all solves."),
        ("coupler_newton_max_iterations", "most Newton iterations of a solve", "Largest number of iterations of "
         "one solve."),
        ("coupler_newton_failures", "failed coupler solves", "Solves that did not converge (the step was retried "
         "or the run failed)."),
    ))

# ------------------------------------------------------------------------------------------------
# LTD
# ------------------------------------------------------------------------------------------------
_VS = ("time", "vehicle")
_CS = ("time", "coupler")
LTD_SERIES = (
    Output("position", _VS, "m", "position", "Position of the vehicle centre along the route.", "series",
           display_units="km", display_scale=1e-3),
    Output("speed", _VS, "m s-1", "speed", "Vehicle speed.", "series", **IN_KMH),
    Output("acceleration", _VS, "m s-2", "acceleration", "Vehicle acceleration.", "series"),
    Output("coupler_force", _CS, "N", "in-train force", "In-train force (+ draft, - buff).", "series", **IN_KN),
    Output("coupler_deflection", _CS, "m", "coupler deflection", "Connection extension incl. slack (+ draft, "
           "- buff).", "series", **IN_MM),
    Output("tractive_force", _VS, "N", "tractive force", "Traction (+) / dynamic-brake force on the vehicle.",
           "series", **IN_KN),
    Output("brake_force", _VS, "N", "air-brake force", "Air-brake force on the vehicle (opposes motion).", "series",
           **IN_KN),
    Output("resistance_force", _VS, "N", "running resistance", "Running and curving resistance on the vehicle "
           "(Bosso et al. 2024 eq 6).", "series", **IN_KN),
    Output("grade_force", _VS, "N", "grade force", "Grade force on the vehicle (- uphill).", "series", **IN_KN),
    Output("brake_cylinder_pressure", _VS, "Pa", "brake-cylinder pressure", "Brake-cylinder gauge pressure (the "
           "pneumatic brake: of the cylinder, or for a locomotive the larger of it and its independent brake).",
           "series", display_units="bar", display_scale=1e-5, when=lambda sc: sc.air_brake.enabled,
           when_text="air_brake.enabled"),
    Output("notch", ("time",), "1", "applied notch", "Applied notch (+ traction, - dynamic brake), after the rate "
           "limit.", "series"),
    Output("notch_command", ("time",), "1", "notch command", "Driver's notch command (+ traction, - dynamic "
           "brake).", "series"),
    Output("brake_command", ("time",), "1", "brake command", "Driver's air-brake demand (fraction of full "
           "service).", "series"),
)
_EN = dict(when=lambda sc: sc.output.energy, when_text="output.energy")
LTD_ENERGY = (
    Output("traction_work", (), "J", "traction work", "Work of traction and dynamic brake (dynamic brake "
           "negative).", "scalar", **IN_MJ, **_EN),
    Output("resistance_work", (), "J", "resistance work", "Energy dissipated by running and curving resistance.",
           "scalar", **IN_MJ, **_EN),
    Output("brake_work", (), "J", "air-brake work", "Energy dissipated by the air brake.", "scalar", **IN_MJ, **_EN),
    Output("coupler_work", (), "J", "coupler work", "Net work absorbed by the connections (stored + dissipated, "
           "dry friction included).", "scalar", **IN_MJ, **_EN),
    Output("kinetic_energy_change", (), "J", "kinetic energy change", "Change of kinetic energy.", "scalar", **IN_MJ,
           **_EN),
    Output("potential_energy_change", (), "J", "potential energy change", "Change of potential energy (from the "
           "route elevation).", "scalar", **IN_MJ, **_EN),
    Output("energy_balance_residual", (), "J", "energy balance residual", "Traction - resistance - brake - coupler "
           "work - change of kinetic energy - change of potential energy.", "scalar", **_EN),
)
_FR = "the consist has dry-friction draft gears"
_FR_ED = "the consist has dry-friction draft gears and friction.treatment is event_driven"


def _event_driven_log(name: str):
    return lambda sc: uses_output(sc, name) and sc.friction.treatment == "event_driven"


#: dry-friction draft gears (Oprea 2018)
LTD_FRICTION = (
    Output("friction_force", _CS, "N", "dry-friction force", "Dry-friction part of the in-train force (+ draft).",
           "series", **IN_KN, when=_law("friction_force"), when_text=_FR),
    Output("relative_velocity", _CS, "m s-1", "extension rate", "Connection extension rate v_k - v_k+1 (+ draft: "
           "vehicles moving apart).", "series", when=_law("relative_velocity"), when_text=_FR),
    Output("friction_mode", _CS, "1", "friction mode", "Friction mode: 0 none/inside the slack, 1 stick, +2/-2 "
           "slip in draft/buff direction, +3/-3 break-away (regularised treatment: 1 inside the stick band, else "
           "+2/-2).", "series", dtype="int8", when=_law("friction_mode"), when_text=_FR),
    Output("stick_phases", ("coupler",), "1", "stick phases", "Number of stick phases (stays inside the stick band "
           "lasting at least friction.stick_min_duration_s), over every step.", "element",
           when=_law("stick_phases"), when_text=_FR, missing="NaN for connections without dry friction"),
    Output("stick_time", ("coupler",), "s", "time sticking", "Total time spent in stick phases.", "element",
           when=_law("stick_time"), when_text=_FR, missing="NaN for connections without dry friction"),
    Output("final_deflection", ("coupler",), "m", "final deflection", "Connection extension at the end of the run "
           "(stationary deflection).", "element", **IN_MM, when=_law("final_deflection"), when_text=_FR),
    Output("final_coupler_force", ("coupler",), "N", "final in-train force", "In-train force at the end of the "
           "run.", "element", **IN_KN, when=_law("final_coupler_force"), when_text=_FR),
    Output("friction_work", (), "J", "friction work", "Energy absorbed by the dry-friction elements (incl. the "
           "stick velocity projection).", "scalar", **IN_MJ, when=_law("friction_work"), when_text=_FR),
    Output("n_events", (), "1", "stick/slip events", "Stick/slip events (event-driven treatment; 0 when "
           "regularised).", "run", dtype="int64", when=_law("n_events"), when_text=_FR),
    Output("n_mode_changes", (), "1", "connection mode changes", "Connection mode changes (event-driven "
           "treatment; 0 when regularised).", "run", dtype="int64", when=_law("n_mode_changes"), when_text=_FR),
    Output("mode_change_time", ("mode_change",), "s", "time of the mode change", "Time of the mode change.", "log",
           when=_event_driven_log("mode_change_time"), when_text=_FR_ED),
    Output("mode_change_coupler", ("mode_change",), "1", "coupler of the mode change", "Coupler number of the mode "
           "change.", "log", dtype="int64", when=_event_driven_log("mode_change_coupler"), when_text=_FR_ED),
    Output("mode_change_mode", ("mode_change",), "1", "new friction mode", "New mode: 0 none/inside the slack, 1 "
           "stick, +2/-2 slip draft/buff, +3/-3 break-away draft/buff.", "log", dtype="int64",
           when=_event_driven_log("mode_change_mode"), when_text=_FR_ED),
)



def envelope_checked(sc) -> bool:
    """The run checks its peaks (:mod:`hpcrail.results.envelope_check`): ``output.envelope_check.enabled`` and no
    dry-friction draft gear in the consist (the friction layer integrates its own event-driven problem)."""
    return bool(sc.output.envelope_check.enabled) and not any(LAWS[k].branch == "friction" for k in laws_used(sc))


#: checked envelopes (issue 26)
LTD_CHECK = check_outputs(envelope_checked, "output.envelope_check.enabled and no dry-friction draft gear")

LTD_OUTPUTS = (LTD_SERIES + COUPLER_ENVELOPES + TRAIN_METRICS + TRAIN_SCALARS + LTD_ENERGY + COUPLER_NEWTON
               + LTD_FRICTION + SAFETY_OUTPUTS + BRAKE_OUTPUTS + LTD_CHECK)
#: every series of the LTD kind (a run's samples are subset to the requested times by these names)
SERIES_NAMES = tuple(o.name for o in LTD_OUTPUTS if o.role == "series")
#: what ``hpcrail run`` prints: the benchmark metrics, the quasi-static running safety of the consist, the
#: pneumatic brake's metrics, the checked envelope peaks
SUMMARY = (tuple(o.name for o in TRAIN_METRICS) + ("reference_coupler",) + SAFETY_SUMMARY + BRAKE_SUMMARY
           + CHECK_SUMMARY)


#: attributes of the ``vehicle_kind`` coordinate (locomotive positions for figures and analysis)
VEHICLE_KIND_ATTRS = {"long_name": "vehicle kind", "description": "Locomotive or wagon (the kind of the vehicle type)."}


def shape(sc) -> Shape:
    """Sizes of ``vehicle`` and ``coupler`` and the static coordinates ``vehicle_type``,
    ``vehicle_kind`` (locomotive / wagon) and ``connection_type`` of an LTD scenario (from the schema:
    no model is built)."""
    v = sc.vehicle_type_names()
    c = sc.connection_type_names()
    sizes = {"vehicle": len(v), "coupler": len(c)}
    if envelope_checked(sc):
        sizes["checked_peak"] = 2 * sc.output.envelope_check.peaks
    return Shape(sizes=sizes,
                 coords={"vehicle_type": ("vehicle", tuple(v), {"long_name": "vehicle type name"}),
                         "vehicle_kind": ("vehicle", tuple(sc.vehicle_types[n].kind for n in v),
                                          dict(VEHICLE_KIND_ATTRS)),
                         "connection_type": ("coupler", tuple(c), {"long_name": "connection type name"})})


def train_metrics(max_force: np.ndarray, min_force: np.ndarray, max_ext: np.ndarray, min_ext: np.ndarray,
                  max_speed: float, mean_speed: float, reference_coupler: int | None) -> dict:
    """Benchmark metrics (Bosso et al. 2024, Tables 1-2) from per-coupler envelopes.

    Parameters
    ----------
    max_force, min_force : float64[N-1] per-coupler extreme in-train force over all steps [N]
        (+ draft, − buff).
    max_ext, min_ext : float64[N-1] per-coupler extreme extension [m] (+ draft).
    max_speed, mean_speed : [m/s].
    reference_coupler : 1-based coupler for the deflection metrics; ``None`` = the coupler of the
        largest draft force.

    Returns a dict of the names of :data:`TRAIN_METRICS` plus ``reference_coupler``.
    """
    draft = np.maximum(max_force, 0.0)
    buff = np.maximum(-min_force, 0.0)
    kd = int(np.argmax(draft))
    kb = int(np.argmax(buff))
    ref = reference_coupler if reference_coupler is not None else kd + 1
    return {
        "max_speed": float(max_speed),
        "mean_speed": float(mean_speed),
        "max_draft_force": float(draft[kd]),
        "max_draft_force_coupler": kd + 1,
        "max_buff_force": float(buff[kb]),
        "max_buff_force_coupler": kb + 1,
        "mean_max_draft_force": float(draft.mean()),
        "mean_max_buff_force": float(buff.mean()),
        "max_draft_deflection": float(max(max_ext[ref - 1], 0.0)),
        "max_buff_deflection": float(max(-min_ext[ref - 1], 0.0)),
        "reference_coupler": int(ref),
    }


def coupler_envelope_values(fmax, fmin, emax, emin) -> dict:
    """Values of :data:`COUPLER_ENVELOPES` from the per-coupler extremes (float64[M] each)."""
    return {"coupler_max_draft_force": np.maximum(fmax, 0.0), "coupler_max_buff_force": np.maximum(-fmin, 0.0),
            "coupler_max_draft_deflection": np.maximum(emax, 0.0),
            "coupler_max_buff_deflection": np.maximum(-emin, 0.0)}


__all__ = ["shape", "VEHICLE_KIND_ATTRS", "VEHICLE", "COUPLER", "MODE_CHANGE", "TRAIN_METRICS", "TRAIN_SCALARS", "COUPLER_ENVELOPES",
           "COUPLER_NEWTON", "LTD_SERIES", "LTD_ENERGY", "LTD_FRICTION", "LTD_OUTPUTS", "SUMMARY", "train_metrics",
           "coupler_envelope_values"]
