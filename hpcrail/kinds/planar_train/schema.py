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

from hpcrail.config.base import Strict
from hpcrail.config.errors import ConfigIssue
from hpcrail.config.integrator import Integrator
from hpcrail.models.couplers.schema import DraftGear, Knuckle, Newton, Shank

#: US railroad degree of curve (arc definition): R = 5729.578 ft / D = 1746.38 m / D
FEET = 0.3048
DEGREE_OF_CURVE_RADIUS_M = 18000.0 / math.pi * FEET  # 100 ft of arc subtend D degrees: R = 100 ft * 180/(pi D)


class Guidance(Strict):
    """Lateral guidance of the car body by its bogies: a spring-damper per bogie between the body's
    bogie-centre point and the track centre line (the wheelsets are assumed to follow the track)."""

    lateral_stiffness_N_per_m: float = Field(2.0e7, gt=0, description="per bogie (ASSUMED)")
    lateral_damping_Ns_per_m: float = Field(2.0e5, ge=0, description="per bogie (ASSUMED)")


class CarType(Strict):
    """A planar car body (longitudinal, lateral, yaw).  Massa et al. 2012 Table 2 give mass and inertias."""

    kind: Literal["wagon", "locomotive"] = "wagon"
    mass_kg: float = Field(..., gt=0)
    yaw_inertia_kgm2: float = Field(..., gt=0, description="I_zz about the centre of gravity")
    cog_height_m: float = Field(0.0, ge=0, description="height of the centre of gravity above the rail "
                                "plane; used for the quasi-static wheel-load transfer output")
    coupler_pivot_from_centre_m: float = Field(..., gt=0, description="distance along the car axis from "
                                               "the centre of gravity to the draft-gear point P (both ends)")
    bogie_half_spacing_m: float = Field(..., gt=0, description="half the distance between bogie centres")
    guidance: Guidance = Guidance()
    running_resistance_N: float = Field(0.0, ge=0, description="constant running resistance opposing the "
                                        "motion (smoothed below 0.01 m/s)")

    @model_validator(mode="after")
    def _geometry(self):
        if self.bogie_half_spacing_m >= self.coupler_pivot_from_centre_m:
            raise ValueError(f"bogie_half_spacing_m ({self.bogie_half_spacing_m}) must be smaller than "
                             f"coupler_pivot_from_centre_m ({self.coupler_pivot_from_centre_m})")
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
    length_m: float = Field(..., gt=0)
    radius_m: Optional[float] = Field(None, description="curves: signed radius, + left")
    degree_of_curve: Optional[float] = Field(None, description="curves: US degree of curve (arc definition, "
                                             "degrees per 100 ft of arc), + left")
    superelevation_mm: Optional[float] = Field(None, description="tangents and curves (default 0); spirals "
                                               "take it from their neighbours")

    @model_validator(mode="after")
    def _check(self):
        if self.kind == "curve":
            if (self.radius_m is None) == (self.degree_of_curve is None):
                raise ValueError("a curve needs exactly one of radius_m and degree_of_curve")
            if self.radius_m is not None and abs(self.radius_m) < 20.0:
                raise ValueError(f"radius_m = {self.radius_m} is below 20 m")
            if self.degree_of_curve is not None and not 0 < abs(self.degree_of_curve) <= 60:
                raise ValueError(f"degree_of_curve = {self.degree_of_curve} must be within 0 < |D| <= 60")
        else:
            if self.radius_m is not None or self.degree_of_curve is not None:
                raise ValueError(f"a {self.kind} has no radius_m or degree_of_curve")
            if self.kind == "spiral" and self.superelevation_mm is not None:
                raise ValueError("a spiral takes its superelevation from its neighbours; remove superelevation_mm")
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

    sections: list[TrackSection] = Field(..., min_length=1)
    start_m: float = Field(0.0, description="arc length at the beginning of the first section")
    rail_spacing_m: float = Field(1.5, gt=0, description="distance between the rail contact points; "
                                  "superelevation / rail spacing = sin(cant angle)")
    grid_m: float = Field(0.25, gt=0, le=5.0, description="spacing of the geometry look-up table")

    @model_validator(mode="after")
    def _spirals(self):
        for i, s in enumerate(self.sections):
            if s.kind == "spiral" and i > 0 and self.sections[i - 1].kind == "spiral":
                raise ValueError(f"sections {i} and {i + 1} are both spirals: a spiral must join sections of "
                                 "constant curvature")
            if abs(s.cant_m()) >= self.rail_spacing_m:
                raise ValueError(f"section {i + 1}: superelevation {s.superelevation_mm} mm is not below the "
                                 f"rail spacing {self.rail_spacing_m} m")
        return self

    @property
    def length_m(self) -> float:
        return sum(s.length_m for s in self.sections)


class ConsistEntry(Strict):
    type: str
    count: int = Field(1, ge=1)


class AppliedForce(Strict):
    """A force on one vehicle along its axis (+ forward): constant (``force_N``) or a speed controller
    ``F = m (v_set − v) / time_constant_s`` limited to ±``max_force_N`` (``hold_speed_mps``)."""

    vehicle: int = Field(..., ge=1, description="1 = head")
    force_N: float = 0.0
    hold_speed_mps: Optional[float] = None
    time_constant_s: float = Field(1.0, gt=0)
    max_force_N: Optional[float] = Field(None, gt=0)
    start_s: float = Field(0.0, ge=0, description="the force acts from this time on")

    @model_validator(mode="after")
    def _one(self):
        if self.hold_speed_mps is not None and self.force_N != 0.0:
            raise ValueError("give either force_N or hold_speed_mps")
        return self


class Initial(Strict):
    head_position_m: float = Field(..., description="arc length of the head car's centre of gravity")
    speed_mps: float = 0.0


class Simulation(Strict):
    duration_s: float = Field(..., gt=0)


class Output(Strict):
    interval_s: float = Field(0.01, gt=0)


class PlanarTrainScenario(Strict):
    """Planar multi-car train with inertial or noninertial couplers (Massa et al. 2012)."""

    model: Literal["planar_train"] = "planar_train"
    name: str = Field(..., pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    car_types: dict[str, CarType] = Field(..., min_length=1)
    consist: list[ConsistEntry] = Field(..., min_length=1)
    coupler: Coupler = Coupler()
    track: Track
    forces: list[AppliedForce] = []
    initial: Initial
    simulation: Simulation
    integrator: Integrator = Integrator(method="dopri5", rtol=1e-7, atol=1e-9)
    output: Output = Output()

    def vehicle_type_names(self) -> list[str]:
        return [e.type for e in self.consist for _ in range(e.count)]


def check_planar_train(sc: PlanarTrainScenario, doc) -> list[ConfigIssue]:
    """Cross-field rules: known car types, at least two cars, forces on existing vehicles."""
    issues: list[ConfigIssue] = []

    def add(loc, msg, value, allowed=None):
        issues.append(ConfigIssue(doc.file_for(loc), ".".join(map(str, loc)), msg, value, allowed))

    for i, e in enumerate(sc.consist):
        if e.type not in sc.car_types:
            add(("consist", i, "type"), "unknown car type", e.type, ", ".join(sorted(sc.car_types)))
    n = sum(e.count for e in sc.consist)
    if n < 2:
        add(("consist",), "a planar train needs at least two cars (one coupler)", n, ">= 2 cars")
    for i, f in enumerate(sc.forces):
        if not 1 <= f.vehicle <= n:
            add(("forces", i, "vehicle"), "vehicle number out of range", f.vehicle, f"1..{n}")
    it = sc.integrator
    if it.step_s is not None and it.step_s > sc.simulation.duration_s:
        add(("integrator", "step_s"), "step longer than the simulation", it.step_s)
    sh, dg = sc.coupler.shank, sc.coupler.draft_gear
    if sh.cg_from_pin_m is not None and sh.cg_from_pin_m > sh.length_m:
        add(("coupler", "shank", "cg_from_pin_m"), "the shank's centre of gravity must lie on the shank",
            sh.cg_from_pin_m, f"0..{sh.length_m}")
    _ = dg
    return issues
