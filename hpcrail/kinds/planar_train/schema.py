"""Typed schema of a ``model: planar_train`` scenario: planar car bodies joined by couplers with
kinematic degrees of freedom (Massa et al. 2012, §6-§8), inertial or noninertial.

Field names carry their units when they are not plain SI (``degree_of_curve``, ``superelevation_mm``)
and, for clarity, also when they are (``mass_kg``).  Unknown keys are errors; every field is reachable
by a dotted ``--set`` path (``--set coupler.model=inertial``).

Sign conventions (hpcrail): vehicles numbered from the head (1 = leading); coupler k joins vehicles k
and k+1; forces and deflections + draft / − buff; curves and superelevation + to the left (the track
turns counter-clockwise seen from above; a positive superelevation raises the right rail, i.e. the outer
rail of a left-hand curve).
"""
from __future__ import annotations

import math
from typing import Literal, Optional

from pydantic import Field, model_validator

from hpcrail.config.base import MAX_DURATION_S, MAX_TABLE_ROWS, Strict, samples_issue
from hpcrail.config.errors import ConfigIssue, ConfigValueError, issue_collector
from hpcrail.config.integrator import Integrator, steps_issue
from hpcrail.models.couplers.schema import DraftGear, Knuckle, Newton, Shank

#: US railroad degree of curve (arc definition): R = 5729.578 ft / D = 1746.38 m / D
FEET = 0.3048
DEGREE_OF_CURVE_RADIUS_M = 18000.0 / math.pi * FEET  # 100 ft of arc subtend D degrees: R = 100 ft * 180/(pi D)


class Guidance(Strict):
    """Lateral guidance of the car body by its bogies: a spring-damper per bogie between the body's
    bogie-centre point and the track centre line (the wheelsets are assumed to follow the track)."""

    lateral_stiffness_N_per_m: float = Field(2.0e7, gt=0, le=1e11, description="per bogie (ASSUMED)")
    lateral_damping_Ns_per_m: float = Field(2.0e5, ge=0, le=1e9, description="per bogie (ASSUMED)")


class CarType(Strict):
    """A planar car body (longitudinal, lateral, yaw).  Massa et al. 2012 Table 2 give mass and inertias."""

    kind: Literal["wagon", "locomotive"] = "wagon"
    mass_kg: float = Field(..., ge=100, le=1e6)
    yaw_inertia_kgm2: float = Field(..., gt=0, le=1e9, description="I_zz about the centre of gravity")
    cog_height_m: float = Field(0.0, ge=0, le=10, description="height of the centre of gravity above the rail "
                                "plane; used for the quasi-static wheel-load transfer output")
    coupler_pivot_from_centre_m: float = Field(..., ge=0.1, le=50, description="distance along the car axis from "
                                               "the centre of gravity to the draft-gear point P (both ends)")
    bogie_half_spacing_m: float = Field(..., ge=0.05, le=50, description="half the distance between bogie centres")
    guidance: Guidance = Guidance()
    running_resistance_N: float = Field(0.0, ge=0, le=1e6, description="constant running resistance opposing the "
                                        "motion (smoothed below 0.01 m/s)")

    @model_validator(mode="after")
    def _geometry(self):
        if self.bogie_half_spacing_m >= self.coupler_pivot_from_centre_m:
            raise ConfigValueError("the bogie centres must lie inside the coupler pivots", field="bogie_half_spacing_m",
                                   allowed=f"< {self.coupler_pivot_from_centre_m} (coupler_pivot_from_centre_m)")
        return self


class Coupler(Strict):
    """The coupler of every connection of the train: inertial (slider and shank are bodies) or
    noninertial (their inertia neglected, quasistatic equilibrium solved by Newton-Raphson)."""

    model: Literal["inertial", "noninertial"] = "noninertial"
    draft_gear: DraftGear = DraftGear()
    shank: Shank = Shank()
    knuckle: Knuckle = Knuckle()
    newton: Newton = Newton()


class TrackSection(Strict):
    """A tangent, a circular curve or a spiral (clothoid: curvature and superelevation vary linearly
    from the end values of the previous section to the start values of the next)."""

    kind: Literal["tangent", "curve", "spiral"]
    length_m: float = Field(..., ge=0.01, le=1e6, description="section length (≥ 1 cm)")
    radius_m: Optional[float] = Field(None, ge=-1e6, le=1e6, description="curves: signed radius, + left")
    degree_of_curve: Optional[float] = Field(None, ge=-60, le=60, description="curves: US degree of curve (arc "
                                             "definition, degrees per 100 ft of arc), + left")
    superelevation_mm: Optional[float] = Field(None, ge=-300, le=300, description="tangents and curves (default 0); "
                                               "spirals take it from their neighbours")

    @model_validator(mode="after")
    def _check(self):
        if self.kind == "curve":
            if (self.radius_m is None) == (self.degree_of_curve is None):
                raise ConfigValueError("a curve needs exactly one of radius_m and degree_of_curve",
                                       allowed="radius_m or degree_of_curve")
            if self.radius_m is not None and abs(self.radius_m) < 20.0:
                raise ConfigValueError("radius below 20 m", field="radius_m", allowed="20 ≤ |radius_m| ≤ 1e6 m")
            if self.degree_of_curve is not None and not 0 < abs(self.degree_of_curve) <= 60:
                raise ConfigValueError("degree of curve out of range", field="degree_of_curve",
                                       allowed="0 < |degree_of_curve| ≤ 60")
        else:
            if self.radius_m is not None or self.degree_of_curve is not None:
                raise ConfigValueError(f"a {self.kind} has no radius_m or degree_of_curve",
                                       field="radius_m" if self.radius_m is not None else "degree_of_curve",
                                       allowed=f"no curvature on a {self.kind} (kind: curve for a curve)")
            if self.kind == "spiral" and self.superelevation_mm is not None:
                raise ConfigValueError("a spiral takes its superelevation from its neighbours",
                                       field="superelevation_mm", allowed="no superelevation_mm on a spiral")
        return self

    def curvature(self) -> float:
        """Signed curvature [1/m] of a tangent or curve."""
        if self.kind == "tangent":
            return 0.0
        if self.radius_m is not None:
            return 1.0 / self.radius_m
        return self.degree_of_curve / DEGREE_OF_CURVE_RADIUS_M

    def cant_m(self) -> float:
        return (self.superelevation_mm or 0.0) * 1e-3


class Track(Strict):
    """Horizontal alignment and superelevation from arc length ``start_m``.  Beyond its ends the track continues
    as straight lines (a warning is recorded when a car gets there)."""

    sections: list[TrackSection] = Field(..., min_length=1, max_length=MAX_TABLE_ROWS)
    start_m: float = Field(0.0, ge=-1e7, le=1e7, description="arc length at the beginning of the first section")
    rail_spacing_m: float = Field(1.5, ge=0.5, le=3, description="distance between the rail contact points; "
                                  "superelevation / rail spacing = sin(cant angle)")
    grid_m: float = Field(0.25, ge=0.01, le=5.0, description="spacing of the geometry look-up table")

    @model_validator(mode="after")
    def _spirals(self):
        for i, s in enumerate(self.sections):
            if s.kind == "spiral" and i > 0 and self.sections[i - 1].kind == "spiral":
                raise ConfigValueError(f"sections {i - 1} and {i} are both spirals: a spiral must join sections of "
                                       "constant curvature", field=f"sections.{i}.kind", allowed="tangent, curve")
            if abs(s.cant_m()) >= self.rail_spacing_m:
                raise ConfigValueError("superelevation not below the rail spacing",
                                       field=f"sections.{i}.superelevation_mm",
                                       allowed=f"|superelevation_mm| < {self.rail_spacing_m * 1e3:g} (rail spacing)")
        if self.length_m / self.grid_m > 5e7:
            raise ConfigValueError(f"the geometry table would hold {self.length_m / self.grid_m:.3g} points",
                                   field="grid_m", allowed=f"≥ {self.length_m / 5e7:.3g} m for this track length")
        return self

    @property
    def length_m(self) -> float:
        return sum(s.length_m for s in self.sections)


class ConsistEntry(Strict):
    type: str
    count: int = Field(1, ge=1, le=10_000)


class AppliedForce(Strict):
    """A force on one vehicle along its axis (+ forward): constant (``force_N``) or a speed controller
    ``F = m (v_set − v) / time_constant_s`` limited to ±``max_force_N`` (``hold_speed_mps``)."""

    vehicle: int = Field(..., ge=1, le=10_000, description="1 = head")
    force_N: float = Field(0.0, ge=-1e7, le=1e7)
    hold_speed_mps: Optional[float] = Field(None, ge=-150, le=150)
    time_constant_s: float = Field(1.0, ge=1e-4, le=1e4)
    max_force_N: Optional[float] = Field(None, gt=0, le=1e7)
    start_s: float = Field(0.0, ge=0, le=MAX_DURATION_S, description="the force acts from this time on")

    @model_validator(mode="after")
    def _one(self):
        if self.hold_speed_mps is not None and self.force_N != 0.0:
            raise ConfigValueError("give either force_N or hold_speed_mps", field="force_N",
                                   allowed="0 (or no force_N) with hold_speed_mps")
        return self


class Initial(Strict):
    head_position_m: float = Field(..., ge=-1e7, le=1e7, description="arc length of the head car's centre of gravity")
    speed_mps: float = Field(0.0, ge=-150, le=150)


class Simulation(Strict):
    duration_s: float = Field(..., gt=0, le=1e5)


class Output(Strict):
    interval_s: float = Field(0.01, ge=1e-6, le=1e5)


class PlanarTrainScenario(Strict):
    """Planar multi-car train with inertial or noninertial couplers (Massa et al. 2012)."""

    model: Literal["planar_train"] = "planar_train"
    name: str = Field(..., pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    car_types: dict[str, CarType] = Field(..., min_length=1)
    consist: list[ConsistEntry] = Field(..., min_length=1, max_length=10_000)
    coupler: Coupler = Coupler()
    track: Track
    forces: list[AppliedForce] = Field([], max_length=10_000)
    initial: Initial
    simulation: Simulation
    integrator: Integrator = Integrator(method="dopri5", rtol=1e-7, atol=1e-9)
    output: Output = Output()

    def vehicle_type_names(self) -> list[str]:
        return [e.type for e in self.consist for _ in range(e.count)]


def check_planar_train(sc: PlanarTrainScenario, doc) -> list[ConfigIssue]:
    """Cross-field rules: known car types, at least two cars, forces on existing vehicles."""
    issues, add = issue_collector(doc)

    for i, e in enumerate(sc.consist):
        if e.type not in sc.car_types:
            add(("consist", i, "type"), "unknown car type", e.type, ", ".join(sorted(sc.car_types)))
    n = sum(e.count for e in sc.consist)
    if n < 2:
        add(("consist",), "a planar train needs at least two cars (one coupler)", n, ">= 2 cars")
    if n > 10_000:
        add(("consist",), "too many cars", n, "≤ 10000 cars")
        return issues
    for i, f in enumerate(sc.forces):
        if not 1 <= f.vehicle <= n:
            add(("forces", i, "vehicle"), "vehicle number out of range", f.vehicle, f"1..{n}")
    it = sc.integrator
    if it.step_s is not None and it.step_s > sc.simulation.duration_s:
        add(("integrator", "step_s"), "step longer than the simulation", it.step_s,
            f"≤ {sc.simulation.duration_s:g} s (simulation.duration_s)")
    why = steps_issue(it.method, it.step_s, sc.simulation.duration_s, it.max_steps)
    if why:
        add(("integrator", "step_s"), why, it.step_s,
            f"≥ {sc.simulation.duration_s / it.max_steps:.3g} s, or a larger integrator.max_steps")
    why = samples_issue(sc.simulation.duration_s, sc.output.interval_s, 3 * n)
    if why:
        add(("output", "interval_s"), f"the run would store {why}", sc.output.interval_s,
            "a longer interval or a shorter run")
    sh, dg = sc.coupler.shank, sc.coupler.draft_gear
    if sh.cg_from_pin_m is not None and sh.cg_from_pin_m > sh.length_m:
        add(("coupler", "shank", "cg_from_pin_m"), "the shank's centre of gravity must lie on the shank",
            sh.cg_from_pin_m, f"0..{sh.length_m}")
    _ = dg
    return issues
