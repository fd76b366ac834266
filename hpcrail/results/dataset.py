"""The result dataset schema shared by ``hpcrail run`` and ``hpcrail sweep``.

Dimensions ``time`` [s], ``vehicle`` (1..N, head first), ``coupler`` (1..N−1, head to tail; coupler k
joins vehicles k and k+1).  Forces are + draft / − buff.  Every variable and coordinate carries CF
``units`` and ``long_name``; the dataset carries provenance attributes (software, git commit, host,
canonical config YAML and its hash, integrator and statistics, wall time).

Scalar variables that every run has — the benchmark metrics, ``status``, ``message``,
``wall_time``, ``compile_time``, ``nsteps``, ``nfev`` … — are the variables a sweep stacks along its
``scenario`` dimension.
"""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.results.metrics import METRICS

SCHEMA_VERSION = "1"

#: time-series variables: name -> (dims, units, long_name)
SERIES = {
    "position": (("time", "vehicle"), "m", "position of the vehicle centre along the route"),
    "speed": (("time", "vehicle"), "m s-1", "vehicle speed"),
    "acceleration": (("time", "vehicle"), "m s-2", "vehicle acceleration"),
    "coupler_force": (("time", "coupler"), "N", "in-train force (+ draft, - buff)"),
    "coupler_deflection": (("time", "coupler"), "m", "connection extension incl. slack (+ draft, - buff)"),
    "tractive_force": (("time", "vehicle"), "N", "traction (+) / dynamic-brake force on the vehicle"),
    "brake_force": (("time", "vehicle"), "N", "air-brake force on the vehicle (opposes motion)"),
    "resistance_force": (("time", "vehicle"), "N", "running and curving resistance on the vehicle (eq 6)"),
    "grade_force": (("time", "vehicle"), "N", "grade force on the vehicle (- uphill)"),
    "brake_cylinder_pressure": (("time", "vehicle"), "Pa", "brake-cylinder pressure"),
    "notch": (("time",), "1", "applied notch (+ traction, - dynamic brake), after the rate limit"),
    "notch_command": (("time",), "1", "driver's notch command (+ traction, - dynamic brake)"),
    "brake_command": (("time",), "1", "driver's air-brake demand (fraction of full service)"),
    # dry-friction draft gears (paper 003), present when the consist has friction connections
    "friction_force": (("time", "coupler"), "N", "dry-friction part of the in-train force (+ draft)"),
    "relative_velocity": (("time", "coupler"), "m s-1",
                          "connection extension rate v_k - v_k+1 (+ draft: vehicles moving apart)"),
    "friction_mode": (("time", "coupler"), "1", "friction mode: 0 none/inside the slack, 1 stick, "
                      "+2/-2 slip in draft/buff direction, +3/-3 break-away (slip selected inside the "
                      "stick band); regularised treatment: 1 inside the stick band, else +2/-2"),
    # ---- planar cars (model planar_train) ----
    "lateral_displacement": (("time", "vehicle"), "m",
                             "lateral offset of the centre of gravity from the track centre line (+ left)"),
    "yaw_angle": (("time", "vehicle"), "rad", "car-body yaw relative to the track tangent (+ counter-clockwise)"),
    "lateral_acceleration": (("time", "vehicle"), "m s-2",
                             "lateral acceleration of the centre of gravity, centripetal part included (+ left)"),
    "load_transfer_ratio": (("time", "vehicle"), "1", "quasi-static wheel-load transfer dQ/Q from the unbalanced "
                            "lateral acceleration at the centre-of-gravity height (+ onto the right rail)"),
    # ---- couplers with kinematic degrees of freedom (paper 002) ----
    "slider_displacement": (("time", "coupler", "coupler_end"), "m",
                            "draft-gear/EOC slider displacement d_d relative to the car (+ outward = draft)"),
    "slider_displacement_rate": (("time", "coupler", "coupler_end"), "m s-1", "rate of the slider displacement"),
    "shank_angle": (("time", "coupler", "coupler_end"), "rad",
                    "coupler shank angle alpha relative to the car axis (+ counter-clockwise)"),
    "shank_angle_rate": (("time", "coupler", "coupler_end"), "rad s-1", "rate of the shank angle"),
    "draft_gear_force": (("time", "coupler", "coupler_end"), "N", "draft-gear force k_B d_d + c_B d_d' (+ draft)"),
    "knuckle_displacement": (("time", "coupler"), "m",
                             "knuckle spring displacement along the coupler line (+ draft)"),
    "knuckle_displacement_rate": (("time", "coupler"), "m s-1", "rate of the knuckle displacement"),
}

#: per-coupler results of friction draft gears (paper 003): name -> (units, long_name)
FRICTION_COUPLER = {
    "stick_phases": ("1", "number of stick phases (stays inside the stick band lasting at least "
                     "friction.stick_min_duration_s), over every step"),
    "stick_time": ("s", "total time spent in stick phases"),
    "final_deflection": ("m", "connection extension at the end of the run (stationary deflection)"),
    "final_coupler_force": ("N", "in-train force at the end of the run"),
}

#: run-level scalars of friction draft gears
FRICTION_SCALARS = {
    "friction_work": ("J", "energy absorbed by the dry-friction elements (incl. the stick velocity projection)"),
    "n_events": ("1", "stick/slip events (event-driven treatment; 0 when regularised)"),
    "n_mode_changes": ("1", "connection mode changes (event-driven treatment)"),
}

#: the log of connection mode changes (event-driven treatment), dimension ``mode_change``
MODE_CHANGES = {
    "mode_change_time": ("s", "time of the mode change"),
    "mode_change_coupler": ("1", "coupler number of the mode change"),
    "mode_change_mode": ("1", "new mode: 0 none/inside the slack, 1 stick, +2/-2 slip draft/buff, "
                         "+3/-3 break-away draft/buff"),
}

#: coupler ends (dimension ``coupler_end``): on the leading vehicle k (its rear end) and on the trailing
#: vehicle k+1 (its front end)
COUPLER_ENDS = ("leading", "trailing")

#: per-coupler envelopes over every accepted step
ENVELOPES = {
    "coupler_max_draft_force": ("N", "per-coupler maximum draft force over every step"),
    "coupler_max_buff_force": ("N", "per-coupler maximum buff force magnitude over every step"),
    "coupler_max_draft_deflection": ("m", "per-coupler maximum extension over every step"),
    "coupler_max_buff_deflection": ("m", "per-coupler maximum compression magnitude over every step"),
}

#: noninertial coupler solver statistics (paper 002 eq 42)
NEWTON = {
    "newton_solves": ("1", "noninertial coupler equilibrium solves (one per coupler and RHS evaluation)"),
    "newton_iterations": ("1", "Newton-Raphson iterations over all solves"),
    "newton_max_iterations": ("1", "largest number of iterations of one solve"),
    "newton_failures": ("1", "solves that did not converge (the step was retried or the run failed)"),
}

#: run-level scalars (status and statistics)
RUN_SCALARS = {
    "status": ("", "integration status (completed, max_steps, step_underflow, non_finite, ...)"),
    "message": ("", "reason of the status"),
    "wall_time": ("s", "wall-clock time of the integration (compilation excluded)"),
    "compile_time": ("s", "time spent compiling or loading compiled kernels"),
    "nsteps": ("1", "accepted integrator steps"),
    "nrejected": ("1", "rejected integrator steps"),
    "nfev": ("1", "right-hand-side evaluations"),
    "t_reached": ("s", "last time reached by the integrator"),
}

#: energy balance scalars
ENERGY = {
    "traction_work": ("J", "work of traction and dynamic brake (dynamic brake negative)"),
    "resistance_work": ("J", "energy dissipated by running and curving resistance"),
    "brake_work": ("J", "energy dissipated by the air brake"),
    "coupler_work": ("J", "net work absorbed by the connections (stored + dissipated)"),
    "kinetic_energy_change": ("J", "change of kinetic energy"),
    "potential_energy_change": ("J", "change of potential energy (from the route elevation)"),
    "energy_balance_residual": ("J", "traction - resistance - brake - coupler work - dKE - dPE"),
}


def coords(n_vehicles: int, times: np.ndarray, vehicle_types: list[str], connection_types: list[str]) -> dict:
    """Coordinates of the shared schema (with units and long names)."""
    return {
        "time": ("time", np.asarray(times, float), {"units": "s", "long_name": "simulated time",
                                                      "standard_name": "time"}),
        "vehicle": ("vehicle", np.arange(1, n_vehicles + 1), {"units": "1",
                                                              "long_name": "vehicle number, 1 = head"}),
        "coupler": ("coupler", np.arange(1, n_vehicles), {"units": "1",
                                                          "long_name": "coupler number, k joins vehicles k and k+1"}),
        "vehicle_type": ("vehicle", np.asarray(vehicle_types, dtype=str), {"long_name": "vehicle type name"}),
        "connection_type": ("coupler", np.asarray(connection_types, dtype=str),
                            {"long_name": "connection type name"}),
    }


def coupler_end_coord() -> dict:
    """The ``coupler_end`` coordinate (with its long name) of per-coupler-end variables."""
    return {"coupler_end": ("coupler_end", np.asarray(COUPLER_ENDS, dtype=str),
                            {"long_name": "coupler end: 'leading' on vehicle k (its rear end), 'trailing' on "
                                          "vehicle k+1 (its front end)"})}


def scalar(value, units: str, long_name: str, **attrs) -> xr.DataArray:
    a = {"long_name": long_name, **attrs}
    if units:
        a["units"] = units
    return xr.DataArray(value, attrs=a)


def metric_vars(metrics: dict) -> dict:
    """DataArrays of the benchmark metrics (SI) with units and long names."""
    out = {}
    for name, (units, long_name, _d, _f) in METRICS.items():
        attrs = {}
        if name.endswith("deflection"):
            attrs["reference_coupler"] = int(metrics["reference_coupler"])
        out[name] = scalar(metrics[name], units, long_name, **attrs)
    return out
