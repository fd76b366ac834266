"""Typed schema of a railway-vehicle scenario (``model: railway_vehicle``) and its cross-field checks.

A **vehicle** is a list of rigid bodies — ``rigid`` ones (car body, bogie frames: lateral, vertical, roll,
pitch, yaw) and ``wheelset`` ones (lateral and yaw independent, vertical and roll from the wheel/rail
contact constraint, spin) — joined by suspension **elements** of named types (``element_types``): springs
with parallel dampers, dampers with a series stiffness (massless node), bumpstops given by a force table,
translational along or rotational about an axis of the first body's track frame (paper 004 eqs 27-31,
Appendix A).  An element sits at one point ``at_m`` of the vehicle frame (x forward from the car-body
centre, y left, z above the rails) where its two end points coincide in the reference configuration.

The **contact** block selects the method per scenario — ``kec`` (knife-edge equivalent contact, paper 004
eqs 22-26) or ``lut`` (lookup table with a Hertzian flange penalty, eqs 14-21) — and includes a profile-pair
YAML (:class:`hpcrail.models.wheelrail.config.ProfilePairConfig`: profiles, placement, material, Polach
friction, flange penalty K_hertz/D_damp, table grids).

The **track** is a list of tangents, clothoid spirals and circular curves with cant (the outer rail raised
by ``cant_mm``) and optional PSD irregularities in the four channels of paper 004 (alignment, gauge,
vertical profile, cross level), seeded and sweepable.

Sources: Yu et al. 2022 (paper 004) eqs 1-33, Tables 1-4; Iwnicki 1998 (Manchester benchmark vehicle 1).
"""
from __future__ import annotations

import math
from typing import Annotated, Literal, Optional, Union

from pydantic import Field, model_validator

from hpcrail.config.base import MAX_DURATION_S, Strict, samples_issue, typical
from hpcrail.config.errors import ConfigIssue, ConfigValueError, issue_collector
from hpcrail.config.integrator import Integrator, step_multiple_issues
from hpcrail.models.track.schema import NoIrregularity, PSDIrregularity
from hpcrail.models.wheelrail.config import ProfilePairConfig, check_profile_pair

_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


class BodyType(Strict):
    """Mass and principal moments of inertia (about axes parallel to the track frame: roll x, pitch y,
    yaw z; for a wheelset I_yy is the spin inertia about its axle).  Paper 004 Table 2."""

    kind: Literal["rigid", "wheelset"]
    mass_kg: float = Field(..., gt=0, le=2e5, json_schema_extra=typical(50, 150_000),
                           description="mass (a car body of a loaded freight wagon: < 150 t)")
    inertia_kgm2: tuple[float, float, float] = Field(..., description="(I_xx roll, I_yy pitch/spin, I_zz yaw)")
    description: str = ""

    @model_validator(mode="after")
    def _positive(self):
        if min(self.inertia_kgm2) <= 0 or max(self.inertia_kgm2) > 1e8:
            raise ConfigValueError("every moment of inertia must be > 0 and ≤ 1e8 kg m²", field="inertia_kgm2",
                                   allowed="0 < I ≤ 1e8 kg m² (a 32 t car body: 2e6 kg m² in yaw)")
        return self


class Body(Strict):
    name: str = Field(..., pattern=_NAME)
    type: str
    x_m: float = Field(0.0, ge=-40.0, le=40.0, description="longitudinal position of the centre, forward + from "
                       "the car-body centre")
    z_m: Optional[float] = Field(None, ge=0.05, le=5.0, description="height of the centre of gravity above the "
                                 "rails (rigid bodies; "
                                 "a wheelset's comes from its contact)")


class ElementType(Strict):
    """A suspension element law.  ``law``: ``spring_damper`` f = K d + D ḋ; ``series_damper`` f = K d +
    K_s (d - u) with the damper stroke u of a massless node (c u̇ = K_s (d - u)); ``bumpstop``
    f = F(d) + K d + D ḋ with F a monotone cubic (PCHIP) through ``table`` (deflection [m], force [N], odd
    tables give both directions).  ``axis``: ``x``, ``y``, ``z`` (translation, N and m) or ``rx``, ``ry``,
    ``rz`` (rotation, N m and rad) of the first body's track frame.  ``preload``: ``static`` = solved for
    the static equilibrium under gravity (vertical springs), or a constant force [N]."""

    law: Literal["spring_damper", "series_damper", "bumpstop"]
    axis: Literal["x", "y", "z", "rx", "ry", "rz"]
    stiffness: float = Field(0.0, ge=0, le=1e10, description="K [N/m] or [N m/rad]")
    damping: float = Field(0.0, ge=0, le=1e9, description="D [N s/m] or [N m s/rad]")
    series_stiffness: float = Field(0.0, ge=0, le=1e11, description="K_s of a series damper [N/m]")
    table: Optional[list[tuple[Annotated[float, Field(ge=-1.0, le=1.0)], Annotated[float, Field(ge=-1e8, le=1e8)]]]] = (
        Field(None, max_length=1000, description="bumpstop: (deflection m, force N) rows"))
    preload: Union[Literal["static"], Annotated[float, Field(ge=-1e7, le=1e7)]] = 0.0
    description: str = ""

    @model_validator(mode="after")
    def _law(self):
        if self.law == "series_damper" and (self.damping <= 0 or self.series_stiffness <= 0):
            raise ValueError("a series_damper needs damping > 0 and series_stiffness > 0")
        if self.law == "bumpstop":
            if not self.table or len(self.table) < 2:
                raise ValueError("a bumpstop needs a table of at least two (deflection, force) rows")
            d = [r[0] for r in self.table]
            if any(b <= a for a, b in zip(d, d[1:])):
                raise ValueError("bumpstop table deflections must increase")
        elif self.table is not None:
            raise ValueError(f"law {self.law} takes no table")
        if self.preload == "static" and self.axis != "z":
            raise ValueError("preload: static is for vertical (axis z) springs")
        return self


class Element(Strict):
    name: Optional[str] = Field(None, pattern=_NAME, description="default: the type name + _2, _3 …")
    type: str
    bodies: tuple[str, str] = Field(..., description="(first body, second body); the axis is the first body's")
    at_m: tuple[Annotated[float, Field(ge=-40.0, le=40.0)], Annotated[float, Field(ge=-3.0, le=3.0)],
                Annotated[float, Field(ge=-1.0, le=6.0)]] = Field((0.0, 0.0, 0.0), description="(x, y, z) in the "
                                                                  "vehicle frame")


class Vehicle(Strict):
    """Bodies, element types and elements (see the module docstring)."""

    name: str = Field("vehicle", pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    body_types: dict[str, BodyType] = Field(..., min_length=1, max_length=100)
    bodies: list[Body] = Field(..., min_length=1, max_length=200)
    element_types: dict[str, ElementType] = Field({}, max_length=1000)
    elements: list[Element] = Field([], max_length=5000)
    coupler_points_m: tuple[tuple[Annotated[float, Field(ge=-60.0, le=60.0)], Annotated[float, Field(ge=-3.0, le=3.0)],
                              Annotated[float, Field(ge=-1.0, le=6.0)]],
                            tuple[Annotated[float, Field(ge=-60.0, le=60.0)], Annotated[float, Field(ge=-3.0, le=3.0)],
                                  Annotated[float, Field(ge=-1.0, le=6.0)]]] = Field(
        ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), description="front and rear coupler points (vehicle frame) where "
        "a mixed train applies its coupler forces")
    sources: str = ""

    def element_names(self) -> list[str]:
        seen: dict[str, int] = {}
        out = []
        for e in self.elements:
            if e.name:
                out.append(e.name)
                continue
            seen[e.type] = seen.get(e.type, 0) + 1
            out.append(e.type if seen[e.type] == 1 else f"{e.type}_{seen[e.type]}")
        return out

    def body_kind(self, b: Body) -> str:
        return self.body_types[b.type].kind if b.type in self.body_types else "rigid"

    def wheelset_names(self) -> list[str]:
        return [b.name for b in self.bodies if self.body_kind(b) == "wheelset"]


class Contact(Strict):
    """Wheel/rail contact: the method and the profile pair (a YAML include)."""

    method: Literal["kec", "lut"] = Field("kec", description="kec: knife-edge equivalent contact constraints "
                                          "(paper 004 eqs 22-26); lut: lookup-table tread constraints with a "
                                          "Hertzian flange penalty (eqs 14-21)")
    profiles: ProfilePairConfig
    fixed_point_tol: float = Field(1e-10, gt=0, lt=1e-3, description="relative tolerance of the normal/creep "
                                   "force fixed point (within every right-hand-side evaluation)")
    fixed_point_max_iterations: int = Field(60, ge=1, le=1000)


class TrackSection(Strict):
    """A tangent, a circular curve or a clothoid spiral (curvature and cant vary linearly between the
    neighbouring sections' values)."""

    kind: Literal["tangent", "curve", "spiral"]
    length_m: float = Field(..., ge=0.1, le=1e6)
    radius_m: Optional[float] = Field(None, ge=-1e6, le=1e6, description="curves: signed radius, + left")
    cant_mm: Optional[float] = Field(None, ge=0, le=250, json_schema_extra=typical(5, 250, zero_ok=True),
                                     description="tangents and curves: superelevation of the outer rail "
                                     "(default 0; lines have at most 150-200 mm); spirals take it from "
                                     "their neighbours")

    @model_validator(mode="after")
    def _check(self):
        if self.kind == "curve":
            if self.radius_m is None or abs(self.radius_m) < 50.0:
                raise ValueError("a curve needs radius_m with |radius_m| >= 50")
        elif self.radius_m is not None:
            raise ValueError(f"a {self.kind} has no radius_m")
        if self.kind == "spiral" and self.cant_mm is not None:
            raise ValueError("a spiral takes its cant from its neighbours; remove cant_mm")
        return self

    def curvature(self) -> float:
        return 0.0 if self.kind != "curve" else 1.0 / self.radius_m

    def cant_m(self) -> float:
        """Superelevation in the geometry's convention (+ raises the right rail, the outer rail of a left
        curve)."""
        c = (self.cant_mm or 0.0) * 1e-3
        return c if self.curvature() >= 0 else -c


VehicleIrregularity = Annotated[Union[NoIrregularity, PSDIrregularity], Field(discriminator="kind")]


class Track(Strict):
    """Alignment with cant and rail irregularities.  ``psd`` irregularities: list the channels in
    ``components`` (``alignment``, ``gauge``, ``vertical``, ``cross_level``); ``length_m`` defaults to
    the run length plus the vehicle length; ``fade_in_m`` starts at the leading wheelset's start."""

    sections: list[TrackSection] = Field(..., min_length=1, max_length=10_000)
    rail_spacing_m: float = Field(1.5, ge=0.6, le=2.0, description="distance of the rails' contact points: "
                                  "superelevation / spacing = sin(cant angle) (standard gauge: 1.5 m)")
    grid_m: float = Field(0.25, gt=0, le=5.0, description="spacing of the alignment table")
    irregularity: VehicleIrregularity = NoIrregularity()

    @model_validator(mode="after")
    def _spirals(self):
        for i, s in enumerate(self.sections):
            if s.kind == "spiral" and i > 0 and self.sections[i - 1].kind == "spiral":
                raise ValueError(f"sections {i} and {i + 1} are both spirals: a spiral joins sections of constant "
                                 "curvature")
            if abs(s.cant_m()) > 0.15 * self.rail_spacing_m:
                raise ConfigValueError(f"section {i + 1}: cant {s.cant_mm:g} mm on a rail spacing of "
                                       f"{self.rail_spacing_m:g} m tilts the track by more than 8.6°",
                                       field=("sections", i, "cant_mm"),
                                       allowed=f"cant_mm ≤ {150 * self.rail_spacing_m:.0f} (0.15 × rail spacing)")
        return self

    def length(self) -> float:
        return float(sum(s.length_m for s in self.sections))


class Initial(Strict):
    """Initial state: every wheelset shifted and yawed (the rest of the vehicle in its reference position);
    the wheelsets roll without slip at the initial speed."""

    wheelset_lateral_mm: float = Field(0.0, ge=-15.0, le=15.0)
    wheelset_yaw_mrad: float = Field(0.0, ge=-50.0, le=50.0)


class Simulation(Strict):
    duration_s: float = Field(..., gt=0, le=MAX_DURATION_S)
    speed_mps: float = Field(..., gt=0, le=200.0, description="forward speed V (constant with longitudinal: "
                             "prescribed; 200 m/s = 720 km/h, above a mixed train's 600 km/h)")
    start_m: float = Field(0.0, ge=-1e6, le=1e6, description="arc length of the leading wheelset at t = 0 (on "
                           "the track: 0 to its length, checked with the track)")
    longitudinal: Literal["prescribed", "free"] = Field(
        "prescribed", description="prescribed: constant forward speed (holonomic constraint); free: the forward "
        "motion is a degree of freedom driven by axle torques and contact forces")
    wheelset_spin: Literal["free", "rolling"] = Field(
        "free", description="free: spin about the axle is a degree of freedom (I_yy); rolling: ω = V/r0 imposed")
    axle_torque_Nm: float = Field(0.0, ge=-1e6, le=1e6, description="driving (+) or braking (-) torque on every "
                                  "axle (free longitudinal motion)")
    gravity_mps2: float = Field(9.81, ge=0, le=30.0, description="gravitational acceleration (0: no gravity, for "
                                "checks)")
    creep: bool = Field(True, description="false: frictionless contact (no creep forces: energy tests)")
    initial: Initial = Initial()


class EN14363(Strict):
    """Running-safety post-processing (EN 14363:2016 §7; see :mod:`hpcrail.results.running_safety`)."""

    window_m: float = Field(2.0, ge=0.1, le=1000.0, description="sliding-mean window over the track (2 m)")
    step_m: float = Field(0.5, ge=0.01, le=1000.0, description="step of the sliding mean")
    lowpass_hz: float = Field(20.0, ge=0, le=1e4, description="low-pass filter of the forces before the sliding "
                              "mean (0: none)")
    prudhomme_alpha: float = Field(0.85, gt=0, le=1.0, description="α of (ΣY)_lim = α (10 + P0/3) kN (0.85: "
                                   "freight wagons, 1.0: passenger vehicles)")
    y_q_limit: float = Field(0.8, gt=0, le=5.0, description="(Y/Q)_lim for curve radii >= 250 m")
    dq_q_limit: float = Field(0.6, gt=0, le=1.0, description="(ΔQ/Q)_lim wheel unloading")


class Output(Strict):
    interval_s: float = Field(0.005, ge=1e-6, le=10.0, description="sampling interval of the series")
    steady_window_m: float = Field(20.0, gt=0, le=1e5, description="steady-curving values: mean over the last "
                                   "this many metres run with the whole vehicle inside the last circular curve")
    en14363: EN14363 = EN14363()


class RailwayVehicleScenario(Strict):
    """A multibody railway vehicle on track (paper 004)."""

    model: Literal["railway_vehicle"] = "railway_vehicle"
    name: str = Field(..., pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    vehicle: Vehicle
    contact: Contact
    track: Track
    simulation: Simulation
    integrator: Integrator = Integrator(method="abm4", step_s=1e-3)
    output: Output = Output()


def check_railway_vehicle(sc: RailwayVehicleScenario, doc) -> list[ConfigIssue]:
    """Cross-field rules (references, names, geometry, solver and time grid); every problem."""
    issues, add = issue_collector(doc)

    v = sc.vehicle
    names = set()
    for i, b in enumerate(v.bodies):
        if b.type not in v.body_types:
            add(("vehicle", "bodies", i, "type"), "unknown body type", b.type, ", ".join(sorted(v.body_types)))
            continue
        if b.name in names:
            add(("vehicle", "bodies", i, "name"), "duplicate body name", b.name)
        names.add(b.name)
        if v.body_types[b.type].kind == "rigid" and b.z_m is None:
            add(("vehicle", "bodies", i, "z_m"), "a rigid body needs the height of its centre of gravity", None,
                "a height above the rails [m]")
    if not v.wheelset_names():
        add(("vehicle", "bodies"), "a vehicle needs at least one body of a wheelset type", [b.name for b in v.bodies])
    rigid = [b.name for b in v.bodies if b.type in v.body_types and v.body_types[b.type].kind == "rigid"]
    enames = v.element_names()
    seen = set()
    for i, (e, n) in enumerate(zip(v.elements, enames)):
        loc = ("vehicle", "elements", i)
        if n in seen:
            add(loc + ("name",), "duplicate element name", n)
        seen.add(n)
        if e.type not in v.element_types:
            add(loc + ("type",), "unknown element type", e.type, ", ".join(sorted(v.element_types)))
        for k, bn in enumerate(e.bodies):
            if bn not in names:
                add(loc + ("bodies", k), "unknown body", bn, ", ".join(sorted(names)))
        if e.bodies[0] == e.bodies[1]:
            add(loc + ("bodies",), "an element joins two different bodies", list(e.bodies))
    static = {k for k, t in v.element_types.items() if t.preload == "static"}
    for bn in rigid:
        if not any(e.type in static and bn in e.bodies for e in v.elements):
            add(("vehicle", "elements"), f"rigid body {bn!r} rests on no vertical spring with preload: static (no "
                "static equilibrium)", bn)
    issues += check_profile_pair(sc.contact.profiles, doc, ("contact", "profiles"))
    sim = sc.simulation
    if sim.longitudinal == "free" and sim.wheelset_spin == "rolling":
        add(("simulation", "wheelset_spin"), "a free forward motion needs the wheelset spin as a degree of freedom",
            sim.wheelset_spin, "free")
    if sim.longitudinal == "prescribed" and sim.axle_torque_Nm != 0.0:
        add(("simulation", "axle_torque_Nm"), "axle torques need longitudinal: free", sim.axle_torque_Nm, "0")
    it = sc.integrator
    for loc, msg, val in step_multiple_issues(it.method, it.step_s, {("simulation", "duration_s"): sim.duration_s,
                                                                     ("output", "interval_s"): sc.output.interval_s}):
        add(loc, msg, val)
    if sc.output.interval_s > sim.duration_s:
        add(("output", "interval_s"), "sampling interval longer than the simulation", sc.output.interval_s)
    ens = sc.output.en14363
    if ens.step_m > ens.window_m:
        add(("output", "en14363", "step_m"), "the sliding-mean step must not exceed its window", ens.step_m)
    irr = sc.track.irregularity
    if irr.kind == "psd":
        bad = [c for c in irr.components if c not in ("alignment", "gauge", "vertical", "cross_level")]
        if bad:
            add(("track", "irregularity", "components"), "unknown channel", bad)
    if not math.isfinite(sim.start_m):
        add(("simulation", "start_m"), "must be finite", sim.start_m)
    length = sc.track.length()
    if sim.start_m > length:
        add(("simulation", "start_m"), f"the leading wheelset would start beyond the end of the track ({length:g} m)",
            sim.start_m, f"0 ≤ start_m ≤ {length:g}")
    # wheelsets: distinct positions, under the car (between the coupler points when they are given)
    ws = [(i, b) for i, b in enumerate(v.bodies) if v.body_kind(b) == "wheelset"]
    xs = sorted((b.x_m, i) for i, b in ws)
    for (x0, i0), (x1, i1) in zip(xs, xs[1:]):
        if x1 - x0 < 0.5:
            add(("vehicle", "bodies", i1, "x_m"), f"wheelsets {v.bodies[i0].name!r} and {v.bodies[i1].name!r} are "
                f"{x1 - x0:.3g} m apart", x1, "wheelsets at least 0.5 m apart")
    cx = [p[0] for p in v.coupler_points_m]
    if max(cx) > min(cx):
        for i, b in ws:
            if not min(cx) < b.x_m < max(cx):
                add(("vehicle", "bodies", i, "x_m"), "a wheelset outside the car (beyond its coupler points)",
                    b.x_m, f"{min(cx):g} < x_m < {max(cx):g}")
    if irr.kind == "psd" and len(set(irr.components)) != len(irr.components):
        add(("track", "irregularity", "components"), "a channel is listed twice", list(irr.components),
            "each of alignment, gauge, vertical, cross_level at most once")
    why = samples_issue(sim.duration_s, sc.output.interval_s, 40 * max(1, len(v.wheelset_names())))
    if why:
        add(("output", "interval_s"), why, sc.output.interval_s)
    return issues


__all__ = ["RailwayVehicleScenario", "check_railway_vehicle", "Vehicle", "BodyType", "Body", "ElementType",
           "Element", "Contact", "Track", "TrackSection", "Simulation", "Output", "EN14363", "Initial"]
