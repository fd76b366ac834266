"""Typed schema of an LTD scenario (YAML) and its cross-field checks.

Field names carry their units when they are not SI (``mass_t``, ``speed_kmh``, ``grade_permille``,
``force_kN``); the model builders convert everything to SI.  Unknown keys are errors.  Every field is
reachable by a dotted ``--set`` path, the same paths a sweep varies.

Sources: paper 000 (Bosso et al. 2024) eqs (1)-(7) for the LTD model; MODELS.md §1 for units.
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

import numpy as np
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from hpcrail.config.coupler_parts import DraftGear, Knuckle, Newton, Shank
from hpcrail.config.errors import ConfigIssue


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


def _strictly_increasing(v: list[float], what: str) -> list[float]:
    if len(v) >= 2 and np.any(np.diff(np.asarray(v, float)) <= 0):
        i = int(np.argmax(np.diff(np.asarray(v, float)) <= 0))
        raise ValueError(f"{what} must be strictly increasing (entry {i + 1} = {v[i + 1]} follows {v[i]})")
    return v


# ------------------------------------------------------------------------------------------------
# vehicles
# ------------------------------------------------------------------------------------------------
class Davis(Strict):
    """Modified Davis running resistance, paper 000 eq (6) (AREA 1970, SI form):
    F [N] = m[kg]/1000 · [Q_ad (a + b/P_ax + c V + d V²/(P_ax n_ax)) + curve/|R_c| + g i_s],
    V in km/h, P_ax in t/axle, R_c in m, i_s in ‰ (the grade term is applied by the route)."""

    adjustment: float = Field(1.0, ge=0, description="Davis adjustment factor Q_ad (1.0 if not stated)")
    a: float = Field(2.943, ge=0, description="constant term [N/kN of weight... as in eq 6]")
    b: float = Field(89.2, ge=0, description="axle-load term, divided by P_ax [t]")
    c: float = Field(0.0306, ge=0, description="linear speed term, per km/h")
    d: float = Field(0.122, ge=0, description="quadratic (aerodynamic) term, per (km/h)², divided by P_ax·n_ax")
    curve: float = Field(6116.0, ge=0, description="curving resistance numerator, divided by |R_c| [m]")


class ShoeFriction(Strict):
    """Speed-dependent brake-shoe friction μ(V) = mu0 · (1 + a·V) / (1 + b·V), V in km/h
    (a Karwatzki-type rational law; defaults: composition shoe, μ 0.38 → 0.30 at 100 km/h)."""

    mu0: float = Field(0.38, gt=0, le=1)
    a_per_kmh: float = Field(0.0, ge=0)
    b_per_kmh: float = Field(0.0027, ge=0)


class BrakeEquipment(Strict):
    """Air-brake equipment of one vehicle (empirical model, MODELS.md §1)."""

    shoe_force_kN: float = Field(..., ge=0, description="total shoe normal force at full-service cylinder pressure")
    shoe_friction: ShoeFriction = ShoeFriction()


class TractionCurves(Strict):
    """Locomotive characteristic: tractive and dynamic-brake force [kN] vs speed [km/h] per notch.

    ``traction_kN[k]`` is the curve of notch k+1 (notch 0 is zero force); likewise
    ``dynamic_brake_kN``.  Between integer notches (while the notch ramps) forces interpolate
    linearly.  Above the last speed the last value is used.  Accepts the CSV record form
    ``{speed_kmh, traction_notch_1_kN.., dynbrake_notch_1_kN..}`` per row.
    """

    speed_kmh: list[float]
    traction_kN: list[list[float]]
    dynamic_brake_kN: list[list[float]] = []

    @model_validator(mode="before")
    @classmethod
    def _from_records(cls, data):
        if isinstance(data, list) and data and isinstance(data[0], dict):
            keys = data[0].keys()
            tr = sorted((k for k in keys if k.startswith("traction_notch_")), key=lambda k: int(k.split("_")[2]))
            db = sorted((k for k in keys if k.startswith("dynbrake_notch_")), key=lambda k: int(k.split("_")[2]))
            return {"speed_kmh": [r.get("speed_kmh") for r in data],
                    "traction_kN": [[r.get(k) for r in data] for k in tr],
                    "dynamic_brake_kN": [[r.get(k) for r in data] for k in db]}
        return data

    @field_validator("speed_kmh")
    @classmethod
    def _speed(cls, v):
        if len(v) < 2:
            raise ValueError("needs at least two speeds")
        if v[0] != 0:
            raise ValueError("the speed table must start at 0 km/h")
        return _strictly_increasing(v, "speed_kmh")

    @model_validator(mode="after")
    def _shapes(self):
        n = len(self.speed_kmh)
        for name in ("traction_kN", "dynamic_brake_kN"):
            for k, row in enumerate(getattr(self, name)):
                if len(row) != n:
                    raise ValueError(f"{name}[{k}] (notch {k + 1}) has {len(row)} values, speed_kmh has {n}")
                if min(row) < 0:
                    raise ValueError(f"{name}[{k}] (notch {k + 1}) has a negative force: give magnitudes")
        if not self.traction_kN:
            raise ValueError("traction_kN needs at least one notch")
        for k, row in enumerate(self.dynamic_brake_kN):
            if row[0] != 0:
                raise ValueError(f"dynamic_brake_kN[{k}] must be 0 at 0 km/h (a dynamic brake cannot hold a "
                                 "train at standstill)")
        return self


class Locomotive(Strict):
    """Traction equipment of a locomotive type."""

    curves: TractionCurves
    max_power_kW: Optional[float] = Field(None, gt=0, description="power limit at the top notch "
                                          "(scaled by notch/top notch); None = curves already include it")
    adhesion_coefficient: Optional[float] = Field(None, gt=0, le=1, description="force ≤ μ·m·g")
    notch_rate_per_s: float = Field(0.5, gt=0, description="notch rate limit [notches/s]")
    notch_time_constant_s: float = Field(0.2, gt=0, description="lag of the applied notch near its target")


class VehicleType(Strict):
    kind: Literal["wagon", "locomotive"] = "wagon"
    mass_t: float = Field(..., gt=0, description="gross mass")
    length_m: float = Field(..., gt=0, description="length over coupler pulling faces")
    axles: int = Field(4, ge=1)
    rotating_mass_fraction: float = Field(0.0, ge=0, le=0.5,
                                          description="equivalent rotating inertia as a fraction of mass")
    davis: Davis = Davis()
    brake: Optional[BrakeEquipment] = None
    traction: Optional[Locomotive] = None
    description: str = ""

    @model_validator(mode="after")
    def _loco(self):
        if self.kind == "locomotive" and self.traction is None:
            raise ValueError("a locomotive needs a 'traction' block (curves per notch)")
        if self.kind == "wagon" and self.traction is not None:
            raise ValueError("a wagon cannot have 'traction'; set kind: locomotive")
        return self


# ------------------------------------------------------------------------------------------------
# connections (couplers, draft gears, rigid bars)
# ------------------------------------------------------------------------------------------------
class GearCurves(Strict):
    """Loading and unloading curves of a draft gear beyond the slack (paper 000 eq 7).

    ``deflection_mm`` starts at 0 (the end of the slack) and increases strictly; ``loading_kN``
    starts at 0 and never decreases; ``unloading_kN`` (or ``unloading_ratio`` × loading) lies
    between 0 and the loading curve.  Beyond the last point the gear is solid: both curves continue
    with the end-stop stiffness.
    """

    deflection_mm: list[float]
    loading_kN: list[float]
    unloading_kN: Optional[list[float]] = None
    unloading_ratio: Optional[float] = Field(None, ge=0, le=1)

    @model_validator(mode="after")
    def _check(self):
        x, fl = self.deflection_mm, self.loading_kN
        if len(x) < 2:
            raise ValueError("deflection_mm needs at least two points")
        if x[0] != 0:
            raise ValueError(f"deflection_mm must start at 0 (the end of the slack), got {x[0]}")
        _strictly_increasing(x, "deflection_mm")
        if len(fl) != len(x):
            raise ValueError(f"loading_kN has {len(fl)} values, deflection_mm has {len(x)}")
        if fl[0] != 0:
            raise ValueError(f"loading_kN must start at 0 (no force at the end of the slack), got {fl[0]}")
        if np.any(np.diff(fl) < 0):
            raise ValueError("loading_kN must not decrease with deflection (non-monotonic coupler table)")
        if (self.unloading_kN is None) == (self.unloading_ratio is None):
            raise ValueError("give exactly one of unloading_kN or unloading_ratio")
        if self.unloading_kN is not None:
            fu = self.unloading_kN
            if len(fu) != len(x):
                raise ValueError(f"unloading_kN has {len(fu)} values, deflection_mm has {len(x)}")
            if fu[0] != 0 or min(fu) < 0:
                raise ValueError("unloading_kN must start at 0 and be non-negative")
            if np.any(np.diff(fu) < 0):
                raise ValueError("unloading_kN must not decrease with deflection (non-monotonic coupler table)")
            if any(u > l_ + 1e-9 for u, l_ in zip(fu, fl)):
                raise ValueError("unloading_kN must not exceed loading_kN")
        return self

    def unloading(self) -> list[float]:
        if self.unloading_kN is not None:
            return list(self.unloading_kN)
        return [self.unloading_ratio * f for f in self.loading_kN]


class HystereticCoupler(Strict):
    """Coupler / draft-gear connection with slack and hysteresis, paper 000 eq (7)."""

    kind: Literal["hysteretic"] = "hysteretic"
    slack_mm: float = Field(0.0, ge=0, description="total free clearance, split equally draft/buff")
    stiffness_scale: float = Field(1.0, gt=0, description="multiplies the forces of the loading and unloading "
                                   "curves of both sides (a softer or stiffer draft gear of the same shape; the "
                                   "end stop is not scaled)")
    draft: GearCurves
    buff: Optional[GearCurves] = None
    end_stop_stiffness_MN_per_m: float = Field(400.0, gt=0, description="solid-gear stiffness beyond the table")
    transition_speed_mps: float = Field(0.01, gt=0, description="v_ε of eq (7)")
    damping_kNs_per_m: float = Field(0.0, ge=0, description="extra viscous damping while engaged (numerical)")

    def buff_curves(self) -> GearCurves:
        return self.buff if self.buff is not None else self.draft


class RigidBar(Strict):
    """Slackless drawbar joining a wagon pair: linear spring-damper, no hysteresis."""

    kind: Literal["rigid_bar"] = "rigid_bar"
    stiffness_MN_per_m: float = Field(80.0, gt=0)
    damping_kNs_per_m: float = Field(100.0, ge=0)


class LinearConnection(Strict):
    """Linear spring-damper with optional slack (analytic tests, simple studies)."""

    kind: Literal["linear"] = "linear"
    stiffness_MN_per_m: float = Field(..., gt=0)
    damping_kNs_per_m: float = Field(0.0, ge=0)
    slack_mm: float = Field(0.0, ge=0)


class FrictionDraftGear(Strict):
    """Dry-friction draft gear / buffer (paper 003, Oprea 2018): a spring, an optional viscous damper
    and a dry-friction element in parallel, engaged beyond an optional slack.

    Friction (paper 003 eqs 5-7): sticking while the extension rate is inside the Karnopp band
    (``friction.stick_band_mps``), with any static force up to ``static_friction_kN`` (T_sMax);
    sliding with the kinetic law — Coulomb T_kin = ``kinetic_friction_kN`` (default: equal to the
    static limit, as in paper 003) or Stribeck T_kin = T_c + (T_sMax − T_c)·exp(−(|ė|/v_s)^δ).
    Inside the slack the gear carries no force; beyond it the friction limit ramps in over 1 mm (the
    ramp of the LTD damper).  How the non-smooth friction is integrated (event-driven or
    regularised) is chosen by the scenario's ``friction:`` block.
    """

    kind: Literal["friction"] = "friction"
    stiffness_MN_per_m: float = Field(..., ge=0, description="spring stiffness k (paper 003 Table 1: 0.1 MN/m)")
    damping_kNs_per_m: float = Field(0.0, ge=0, description="viscous damping c in parallel (paper 003: 0)")
    slack_mm: float = Field(0.0, ge=0, description="total free clearance, split equally draft/buff")
    static_friction_kN: float = Field(..., gt=0, description="static friction limit T_sMax")
    kinetic_law: Literal["coulomb", "stribeck"] = Field("coulomb", description="sliding friction law")
    kinetic_friction_kN: Optional[float] = Field(None, ge=0, description="Coulomb level T_c of the sliding "
                                                 "friction (default: static_friction_kN)")
    stribeck_speed_mps: float = Field(0.01, gt=0, description="Stribeck speed v_s")
    stribeck_exponent: float = Field(2.0, gt=0, description="Stribeck exponent δ")

    @model_validator(mode="after")
    def _kinetic(self):
        if self.kinetic_friction_kN is not None and self.kinetic_friction_kN > self.static_friction_kN:
            raise ValueError(f"kinetic_friction_kN ({self.kinetic_friction_kN}) must not exceed static_friction_kN "
                             f"({self.static_friction_kN})")
        return self

    def kinetic_kN(self) -> float:
        return self.static_friction_kN if self.kinetic_friction_kN is None else self.kinetic_friction_kN


class NoninertialConnection(Strict):
    """Coupler with kinematic degrees of freedom whose inertia is neglected (paper 002, Massa et al.
    2012): draft gear/EOC slider and shank at each vehicle end, knuckle between the shanks, solved by
    Newton-Raphson for its quasistatic equilibrium.  In the LTD consist the vehicles follow the track
    centre line (bogie centres on it) and the curvature between the two vehicle centres comes from the
    route (see hpcrail.models.couplers.ltd_noninertial).  The coupler's knuckle sits at the vehicle
    ends: x_P = length/2 − l_0 − l_s − l_r0/2."""

    kind: Literal["noninertial"] = "noninertial"
    draft_gear: DraftGear = DraftGear()
    shank: Shank = Shank()
    knuckle: Knuckle = Knuckle()
    newton: Newton = Newton()
    bogie_spacing_ratio: float = Field(0.7, gt=0, lt=1, description="bogie-centre distance / vehicle length "
                                       "(both vehicles; ASSUMED typical value)")


def _connection_kind(v):
    if isinstance(v, dict):
        return v.get("kind", "hysteretic")
    return getattr(v, "kind", None)


#: discriminated on ``kind`` (default ``hysteretic``): an error inside one connection type is reported once,
#: against that kind, not once per union member
ConnectionType = Annotated[
    Union[Annotated[HystereticCoupler, Tag("hysteretic")], Annotated[RigidBar, Tag("rigid_bar")],
          Annotated[LinearConnection, Tag("linear")], Annotated[FrictionDraftGear, Tag("friction")],
          Annotated[NoninertialConnection, Tag("noninertial")]],
    Discriminator(_connection_kind)]


# ------------------------------------------------------------------------------------------------
# consist, route, driver, air brake, numerics
# ------------------------------------------------------------------------------------------------
class ConsistEntry(Strict):
    """``count`` vehicles of ``type``; ``pairs`` joins them two by two with that connection type
    (wagon pairs on drawbars), ``internal`` joins all of them with one type."""

    type: str
    count: int = Field(1, ge=1)
    pairs: Optional[str] = None
    internal: Optional[str] = None

    @model_validator(mode="after")
    def _one(self):
        if self.pairs and self.internal:
            raise ValueError("give at most one of 'pairs' and 'internal'")
        return self


class Connections(Strict):
    default: str = Field(..., description="connection type between entries of the consist")
    at: dict[int, str] = Field({}, description="explicit connection type by coupler number (1 = behind vehicle 1)")


class RouteSection(Strict):
    start_km: float
    end_km: float
    grade_permille: float = Field(0.0, description="grade, positive uphill in the direction of travel")
    radius_m: float = Field(0.0, description="curve radius, 0 = tangent track")
    speed_limit_kmh: Optional[float] = Field(None, gt=0, description="line speed limit (used by driver "
                                             "models and overspeed checks, not by the dynamics)")

    @model_validator(mode="after")
    def _len(self):
        if self.end_km <= self.start_km:
            raise ValueError(f"end_km ({self.end_km}) must be greater than start_km ({self.start_km})")
        if self.radius_m != 0 and abs(self.radius_m) < 50:
            raise ValueError(f"radius_m = {self.radius_m} is below 50 m; use 0 for tangent track")
        if abs(self.grade_permille) > 60:
            raise ValueError(f"grade_permille = {self.grade_permille} exceeds ±60 ‰")
        return self


class Route(Strict):
    """Grade and curvature along the track; sections must be contiguous.  Each vehicle sees the grade
    and curvature averaged over its own length at its own position."""

    sections: list[RouteSection] = Field(..., min_length=1)
    start_m: float = Field(0.0, description="initial position of the front of the train along the route")

    @model_validator(mode="after")
    def _contiguous(self):
        for i in range(1, len(self.sections)):
            a, b = self.sections[i - 1], self.sections[i]
            if abs(a.end_km - b.start_km) > 1e-9:
                raise ValueError(f"sections {i} and {i + 1} are not contiguous "
                                 f"(end_km {a.end_km} ≠ start_km {b.start_km})")
        return self

    @property
    def start_km(self) -> float:
        return self.sections[0].start_km

    @property
    def end_km(self) -> float:
        return self.sections[-1].end_km


class Command(Strict):
    """A driver command taking effect at ``time_s`` (or ``distance_m`` travelled by the front of the
    train).  Fields not given keep their previous value.  ``notch``: + traction, − dynamic brake;
    or ``traction_notch``/``dynbrake_notch`` (both ≥ 0, not both > 0).  ``brake``: air-brake demand
    as a fraction of full service (0 = release) or ``emergency``."""

    time_s: Optional[float] = Field(None, ge=0)
    distance_m: Optional[float] = Field(None, ge=0)
    notch: Optional[float] = None
    traction_notch: Optional[float] = Field(None, ge=0)
    dynbrake_notch: Optional[float] = Field(None, ge=0)
    brake: Optional[float | Literal["emergency"]] = None

    @model_validator(mode="after")
    def _check(self):
        if (self.time_s is None) == (self.distance_m is None):
            raise ValueError("give exactly one of time_s and distance_m")
        if self.notch is not None and (self.traction_notch is not None or self.dynbrake_notch is not None):
            raise ValueError("give either notch or traction_notch/dynbrake_notch")
        if (self.traction_notch or 0) > 0 and (self.dynbrake_notch or 0) > 0:
            raise ValueError("traction_notch and dynbrake_notch cannot both be engaged")
        if isinstance(self.brake, float) and not 0 <= self.brake <= 1:
            raise ValueError(f"brake must be within [0, 1] (fraction of full service) or 'emergency', got {self.brake}")
        return self

    def signed_notch(self) -> Optional[float]:
        if self.notch is not None:
            return float(self.notch)
        if self.traction_notch is None and self.dynbrake_notch is None:
            return None
        return float(self.traction_notch or 0) - float(self.dynbrake_notch or 0)

    @property
    def at(self) -> float:
        return self.time_s if self.time_s is not None else self.distance_m


class Driver(Strict):
    """Driver schedule: piecewise-constant notch and brake commands against time or distance."""

    basis: Literal["time", "distance"] = "time"
    commands: list[Command] = Field(..., min_length=1)

    @model_validator(mode="after")
    def _check(self):
        key = "time_s" if self.basis == "time" else "distance_m"
        ats = []
        for i, c in enumerate(self.commands):
            if getattr(c, key) is None:
                raise ValueError(f"command {i + 1} has no {key} (driver.basis is {self.basis!r})")
            ats.append(getattr(c, key))
        if np.any(np.diff(ats) < 0):
            raise ValueError(f"commands must be sorted by {key}")
        return self


class AirBrake(Strict):
    """Empirical air brake (Wu et al. 2021 family, cited by paper 000): the brake-pipe signal
    propagates from the lead vehicle at the propagation speed (modelled as a chain of first-order
    lags, one per vehicle, whose delays add up to distance/speed), cylinders fill with a first-order
    lag, shoes produce μ(V)·N."""

    enabled: bool = False
    service_propagation_mps: float = Field(200.0, gt=0)
    emergency_propagation_mps: float = Field(280.0, gt=0)
    release_propagation_mps: float = Field(150.0, gt=0)
    full_service_pressure_kPa: float = Field(420.0, gt=0)
    emergency_pressure_ratio: float = Field(1.2, ge=1, description="emergency cylinder pressure / full service")
    apply_time_constant_s: float = Field(4.0, gt=0)
    emergency_time_constant_s: float = Field(2.0, gt=0)
    release_time_constant_s: float = Field(10.0, gt=0)


class Integrator(Strict):
    """Integrator settings; ``method`` is any registered name or alias (``hpcrail integrators`` lists them:
    rk4, abm4, dopri5/ode45, bdf, ndf/ode15s, radau5/radau, trbdf2/ode23tb, implicit_euler,
    trapezoidal, linear_implicit_euler), so a sweep can vary it like any other field."""

    method: str = "rk4"
    step_s: Optional[float] = Field(None, gt=0, description="fixed step (fixed-step methods) or initial step")
    rtol: float = Field(1e-6, gt=0, lt=1)
    atol: float = Field(1e-6, gt=0)
    max_steps: int = Field(200_000_000, ge=1)
    max_step_s: Optional[float] = Field(None, gt=0)
    min_step_s: float = Field(0.0, ge=0)
    jacobian: Literal["auto", "analytic", "finite_difference", "dense"] = Field(
        "auto", description="implicit methods: the model's analytic Jacobian (auto, analytic), finite differences "
        "on its sparsity pattern, or finite differences with a dense LU (the 'JAC OFF' case of paper 000)")
    options: dict[str, float] = Field({}, description="method options by name, e.g. {max_order: 2} for bdf/ndf, "
                                      "{corrector_iterations: 2} for abm4 (`hpcrail integrators` lists them)")

    @field_validator("method")
    @classmethod
    def _known(cls, v):
        from hpcrail.integrators import registry

        try:
            return registry.canonical_name(v)
        except KeyError:
            raise ValueError(f"unknown integrator {v!r}; allowed: {', '.join(registry.method_names())}")

    @model_validator(mode="after")
    def _step(self):
        from hpcrail.integrators import registry

        info = registry.get(self.method)
        if not info.adaptive and self.step_s is None:
            raise ValueError(f"method {self.method!r} has a fixed step: set integrator.step_s")
        settable = {k for k, o in info.options.items() if not o.internal}
        for name, value in self.options.items():
            if name not in settable:
                allowed = ", ".join(sorted(settable)) or "none"
                raise ValueError(f"integrator.options.{name}: method {self.method!r} has no option {name!r}; "
                                 f"allowed: {allowed}")
            opt = info.options[name]
            if not opt.low <= value <= opt.high:
                raise ValueError(f"integrator.options.{name} = {value} is outside [{opt.low:g}, {opt.high:g}] "
                                 f"({opt.description})")
        if self.jacobian != "auto" and not info.implicit:
            raise ValueError(f"integrator.jacobian = {self.jacobian!r} needs an implicit method; {self.method!r} is "
                             "explicit (use jacobian: auto)")
        return self


class Output(Strict):
    interval_s: float = Field(1.0, gt=0, description="sampling interval of the time series")
    reference_coupler: Optional[int] = Field(None, ge=1, description="coupler for the deflection metrics "
                                             "(default: the coupler of the largest draft force)")
    energy: bool = Field(True, description="integrate traction, resistance, brake and coupler work")


class Simulation(Strict):
    duration_s: float = Field(..., gt=0)
    initial_speed_kmh: float = Field(0.0, ge=0)
    initial_notch: float = Field(0.0, description="applied notch at t = 0 (+ traction, − dynamic brake): "
                                 "a train already under power, or a traction force applied as a step "
                                 "(paper 003's start-up case)")


class FrictionNumerics(Strict):
    """Integration of the dry friction of ``kind: friction`` connections (paper 003).

    ``event_driven``: stick/slip modes chosen by Gauss's principle / the generalised inverse with
    the iteration of paper 003 §4.1, the smooth ODE between events integrated by
    ``integrator.method``, events (stick→slip when |T_s| reaches T_sMax, slip→stick when |ė| enters
    the Karnopp band η) located to ``event_tolerance_s``.  ``regularised``: the friction force is the
    smooth law T_kin(|ė|)·s(ė/w), s = tanh or linear-in-band, integrated like any LTD model.
    """

    treatment: Literal["event_driven", "regularised"] = "event_driven"
    stick_band_mps: float = Field(1e-4, gt=0, description="Karnopp band η: sticking while |ė| < η "
                                  "(also the band in which the stick phases of either treatment are counted)")
    stick_velocity: Literal["project", "keep"] = Field(
        "project", description="at slip→stick: 'project' removes the remaining relative velocity of the new "
        "rigid cluster (momentum-conserving, Gauss's principle at velocity level); 'keep' leaves the offset "
        "|ė| < η as in paper 003 §3.1 (deflections then drift at that rate while sticking)")
    event_tolerance_s: float = Field(1e-10, gt=0, description="event location tolerance")
    max_events: int = Field(1_000_000, ge=1, description="limit on the number of stick/slip events")
    max_mode_changes: int = Field(2_000_000, ge=1, description="capacity of the log of connection mode changes")
    regularisation: Literal["tanh", "linear"] = Field("tanh", description="regularised law s(ė/w)")
    regularisation_width_mps: float = Field(1e-3, gt=0, description="regularisation width w")
    stick_min_duration_s: float = Field(0.01, ge=0, description="a stay inside the band counts as a stick phase "
                                        "when it lasts at least this long (both treatments)")


class Numerics(Strict):
    standstill_time_constant_s: float = Field(
        0.005, gt=0, description="Standstill (static-friction) treatment of running resistance and "
        "brakes: below breakaway the friction cancels the applied force and damps the speed with this "
        "time constant; it never pushes a vehicle backwards")


class PartitionSpec(Strict):
    """Hidden-vehicle partition of the consist (paper 000 §2, MODELS.md §2).

    The consist is cut into *boundary vehicles* and *blocks of hidden vehicles* between them; the
    blocks are evaluated in parallel at every right-hand-side evaluation (threads of one process or
    MPI ranks) and return the in-train forces at their ends.  Give ``blocks`` (the boundary vehicles
    are then the head, the tail and one vehicle between consecutive blocks of equal size), or the
    ``boundary_vehicles`` explicitly (vehicle numbers, 1 = head; every maximal run of other vehicles is
    a block; ``blocks`` may be given too as a check).  The results do not depend on the partition
    (equal to rounding), only the speed does.
    """

    backend: Literal["auto", "off", "threads", "mpi"] = Field(
        "auto", description="off: monolithic; threads: blocks on numba threads; mpi: blocks on MPI ranks "
        "(under mpiexec/srun); auto: threads at and above auto_min_vehicles vehicles when more than one "
        "thread is available, else off")
    blocks: Optional[int] = Field(None, ge=1, description="number of hidden-vehicle blocks (default: one per "
                                  "thread or MPI rank)")
    boundary_vehicles: Optional[list[int]] = Field(None, min_length=2, description="explicit boundary vehicles "
                                                   "(1 = head), strictly increasing")
    threads: Optional[int] = Field(None, ge=1, description="numba threads for backend threads (default: all)")
    auto_min_vehicles: int = Field(20_000, ge=2, description="break-even train length of backend auto "
                                   "(measured: benchmarks/partition.py, docs/performance.md)")

    @field_validator("backend", mode="before")
    @classmethod
    def _yaml_off(cls, v):
        return "off" if v is False else v  # YAML 1.1 reads a bare `off` as false


class Scenario(Strict):
    """A complete LTD scenario: train, track, driving, numerics, output."""

    model: Literal["ltd"] = "ltd"
    name: str = Field(..., pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    vehicle_types: dict[str, VehicleType] = Field(..., min_length=1)
    connection_types: dict[str, ConnectionType] = Field(..., min_length=1)
    consist: list[ConsistEntry] = Field(..., min_length=1)
    connections: Connections
    route: Route
    driver: Driver
    air_brake: AirBrake = AirBrake()
    simulation: Simulation
    integrator: Integrator = Integrator(step_s=0.003)
    output: Output = Output()
    numerics: Numerics = Numerics()
    friction: FrictionNumerics = FrictionNumerics()
    partition: PartitionSpec = PartitionSpec()

    def vehicle_type_names(self) -> list[str]:
        """Type name of each vehicle, head first (length N)."""
        return [e.type for e in self.consist for _ in range(e.count)]

    def connection_type_names(self) -> list[str]:
        """Type name of each connection, head to tail (length N-1)."""
        names: list[str] = []
        for ei, e in enumerate(self.consist):
            if ei > 0:
                names.append(self.connections.default)
            for k in range(e.count - 1):
                if e.internal:
                    names.append(e.internal)
                elif e.pairs:
                    names.append(e.pairs if k % 2 == 0 else self.connections.default)
                else:
                    names.append(self.connections.default)
        for num, t in self.connections.at.items():
            if 1 <= num <= len(names):
                names[num - 1] = t
        return names


def check_scenario(sc: Scenario, doc) -> list[ConfigIssue]:
    """Cross-field rules that a per-field schema cannot express; returns every problem found."""
    issues: list[ConfigIssue] = []

    def add(loc, msg, value=None, allowed=None, *, has_value=True):
        i = ConfigIssue(doc.file_for(loc), ".".join(map(str, loc)), msg, allowed=allowed)
        if has_value:
            i.value = value
        issues.append(i)

    vt, ct = sc.vehicle_types, sc.connection_types
    for i, e in enumerate(sc.consist):
        if e.type not in vt:
            add(("consist", i, "type"), "unknown vehicle type", e.type, ", ".join(sorted(vt)))
        for key in ("pairs", "internal"):
            v = getattr(e, key)
            if v is not None and v not in ct:
                add(("consist", i, key), "unknown connection type", v, ", ".join(sorted(ct)))
        if e.pairs and e.count % 2:
            add(("consist", i, "count"), "an entry joined in pairs needs an even count", e.count)
    if sc.connections.default not in ct:
        add(("connections", "default"), "unknown connection type", sc.connections.default, ", ".join(sorted(ct)))
    n_veh = sum(e.count for e in sc.consist)
    if n_veh < 2:
        add(("consist",), "a consist needs at least two vehicles", n_veh)
    for num, t in sc.connections.at.items():
        if t not in ct:
            add(("connections", "at", num), "unknown connection type", t, ", ".join(sorted(ct)))
        if not 1 <= num <= n_veh - 1:
            add(("connections", "at", num), "coupler number out of range", num, f"1..{n_veh - 1}")
    if not any(vt[e.type].kind == "locomotive" for e in sc.consist if e.type in vt):
        add(("consist",), "the consist has no locomotive", [e.type for e in sc.consist])
    if sc.output.reference_coupler is not None and not sc.output.reference_coupler <= n_veh - 1:
        add(("output", "reference_coupler"), "coupler number out of range", sc.output.reference_coupler,
            f"1..{n_veh - 1}")
    # the schedule must stay on the route / within the simulated time
    route_len_m = (sc.route.end_km - sc.route.start_km) * 1000.0
    for i, c in enumerate(sc.driver.commands):
        if sc.driver.basis == "distance" and c.distance_m is not None and c.distance_m > route_len_m:
            add(("driver", "commands", i, "distance_m"), "command beyond the end of the route", c.distance_m,
                f"0..{route_len_m:g} m (route length)")
        if isinstance(c.brake, (int, float)) and c.brake > 0 or c.brake == "emergency":
            if not sc.air_brake.enabled:
                add(("driver", "commands", i, "brake"), "a brake command needs air_brake.enabled: true", c.brake)
        n = c.signed_notch()
        if n is not None:
            for t in {e.type for e in sc.consist if e.type in vt and vt[e.type].kind == "locomotive"}:
                tr = vt[t].traction
                top = len(tr.curves.traction_kN) if n >= 0 else len(tr.curves.dynamic_brake_kN)
                if abs(n) > top:
                    add(("driver", "commands", i, "notch"), f"notch beyond the notches of locomotive type {t!r}",
                        n, f"-{len(tr.curves.dynamic_brake_kN)}..{len(tr.curves.traction_kN)}")
    start_m = sc.route.start_m
    if not sc.route.start_km * 1000.0 <= start_m <= sc.route.end_km * 1000.0:
        add(("route", "start_m"), "the train must start on the route", start_m,
            f"{sc.route.start_km * 1000:g}..{sc.route.end_km * 1000:g} m")
    if sc.air_brake.enabled:
        for t in {e.type for e in sc.consist}:
            if t in vt and vt[t].brake is None:
                add(("vehicle_types", t, "brake"), "air_brake.enabled needs brake equipment on every vehicle type",
                    has_value=False)
    n0 = sc.simulation.initial_notch
    if n0 != 0:
        for t in sorted({e.type for e in sc.consist if e.type in vt and vt[e.type].kind == "locomotive"}):
            tr = vt[t].traction
            top = len(tr.curves.traction_kN) if n0 >= 0 else len(tr.curves.dynamic_brake_kN)
            if abs(n0) > top:
                add(("simulation", "initial_notch"), f"notch beyond the notches of locomotive type {t!r}", n0,
                    f"-{len(tr.curves.dynamic_brake_kN)}..{len(tr.curves.traction_kN)}")
    from hpcrail.partition.layout import partition_issues

    for loc, msg, value, allowed in partition_issues(sc.partition, n_veh):
        add(("partition",) + loc, msg, value, allowed)
    if sc.partition.backend in ("threads", "mpi"):
        from hpcrail.partition.run import PARTITIONABLE_KINDS, unpartitionable_kinds

        bad = unpartitionable_kinds(sc)
        if bad:
            add(("partition", "backend"), f"hidden-vehicle blocks evaluate table-law connections only; this consist "
                f"uses {', '.join(bad)} connections (use backend off)", sc.partition.backend,
                f"off or auto with connection kinds {', '.join(PARTITIONABLE_KINDS)}")
    it = sc.integrator
    if it.step_s is not None and it.step_s > sc.simulation.duration_s:
        add(("integrator", "step_s"), "step longer than the simulation", it.step_s)
    # noninertial couplers: the bogie centres must lie inside the draft-gear points
    for name, c in ct.items():
        if isinstance(c, NoninertialConnection):
            reach = c.draft_gear.free_length_m + c.shank.length_m + 0.5 * c.knuckle.free_length_m
            for t in {e.type for e in sc.consist if e.type in vt}:
                half = 0.5 * vt[t].length_m
                if half - reach <= c.bogie_spacing_ratio * half:
                    add(("connection_types", name, "bogie_spacing_ratio"),
                        f"vehicle type {t!r} ({vt[t].length_m} m) is too short for this coupler: its draft-gear "
                        f"point would lie inside the bogie centres", c.bogie_spacing_ratio,
                        f"< {(half - reach) / half:.3f}")
    return issues
