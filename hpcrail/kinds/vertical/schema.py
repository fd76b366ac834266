"""Typed schema of a vertical vehicle-dynamics scenario (``model: vertical``) and its cross-field checks.

A vehicle is a list of rigid **bodies** (bounce, and pitch when a pitch inertia is given) joined by
**elements** — springs, viscous dampers, dampers with rubber joints in series (the massless-node
dampers of Yu et al. 2023), wheel/rail contacts — between **points**:

* ``"car_body"`` — the centre of a body;  ``"car_body@9.0"`` — the point of a body at x = 9.0 m
  (vehicle frame, forward +; needs a pitch degree of freedom unless x is the body's centre);
* ``"rail@wheel_1"`` — the rail under a wheel (the track input, with its time delay x_j/V).

Types are defined once (``body_types``, ``element_types``) and referenced by name, so one dotted
path changes every element of a type (``vehicle.element_types.secondary_damper.damping_Ns_per_m``).
The state-space matrices are assembled from this list (``hpcrail.models.vertical.assembly``), never
written by hand.

Sources: Yu, Song, Zhao, Zhou 2023 eqs (1)-(19) and §III.
"""
from __future__ import annotations

import math
from typing import Annotated, Literal, Optional, Union

from pydantic import Field, field_validator, model_validator

from hpcrail.config.base import Strict, samples_issue
from hpcrail.config.errors import ConfigIssue, ConfigValueError, issue_collector
from hpcrail.config.integrator import (
    MAX_STEPS, MIN_RTOL, MIN_STEP_S, STATE_SPACE_SOLVERS, canonical_method, method_names, method_spec,
)
from hpcrail.models.track.schema import MAX_PROFILE_POINTS, Track
from hpcrail.models.vertical.assembly import POINT as _POINT
from hpcrail.models.vertical.assembly import parse_point

_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"

#: names of the solvers that are not in the integrator registry (the catalogue's state-space solvers)
STATE_SPACE_METHODS = STATE_SPACE_SOLVERS


class BodyType(Strict):
    """A rigid body: bounce always, pitch when ``pitch_inertia_kgm2`` is given."""

    mass_kg: float = Field(..., ge=1, le=1e6)
    pitch_inertia_kgm2: Optional[float] = Field(None, gt=0, le=1e9, description="pitch moment of inertia about the "
                                                "centre")
    description: str = ""


class Body(Strict):
    name: str = Field(..., pattern=_NAME)
    type: str
    x_m: float = Field(0.0, ge=-100, le=100, description="longitudinal position of the centre (vehicle frame, "
                       "forward +)")


class Wheel(Strict):
    """A wheel (wheelset in the pitch-plane model): where the track input is taken."""

    name: str = Field(..., pattern=_NAME)
    x_m: float = Field(..., ge=-100, le=100, description="longitudinal position (vehicle frame, forward +)")


class Spring(Strict):
    """Linear spring: compression force F = k·(z_bottom − z_top) (free length at the unloaded state)."""

    kind: Literal["spring"] = "spring"
    stiffness_N_per_m: float = Field(..., gt=0, le=1e12)


class Damper(Strict):
    """Viscous damper without series stiffness: F = c·(ż_bottom − ż_top)."""

    kind: Literal["damper"] = "damper"
    damping_Ns_per_m: float = Field(..., gt=0, le=1e14)   # 1e13: a locked damper (tests)


class SeriesDamper(Strict):
    """Damper c with a rubber joint of stiffness k_j at each end (Yu et al. 2023 eq 16): the joints in
    series give k_e = 1/Σ(1/k_j) (= k_j/2 for two equal joints) and the damper stroke s is a
    first-order state (massless nodes): c ṡ = k_e (δ − s), F = −k_e (δ − s), δ = z_top − z_bottom.
    ``joints: 1`` models a single joint."""

    kind: Literal["series_damper"] = "series_damper"
    damping_Ns_per_m: float = Field(..., gt=0, le=1e14)   # 1e13: a locked damper (tests)
    joint_stiffness_N_per_m: float = Field(..., gt=0, le=1e12, description="stiffness of each rubber joint")
    joints: Literal[1, 2] = 2

    @property
    def series_stiffness(self) -> float:
        return self.joint_stiffness_N_per_m / self.joints


class Contact(Strict):
    """Wheel/rail normal contact between a wheel body (top) and the rail (bottom).

    ``law: linear`` — equivalent linear contact stiffness K_H (Yu et al. 2023 §III.B), bilateral (a
    negative wheel load is reported as a warning, not prevented); ``law: hertz`` — P = n_w·(δ/G)^{3/2}
    for compression δ > 0, zero otherwise (loss of contact), G [m/N^(2/3)] per wheel, n_w = ``wheels``
    wheels in parallel (2 for a wheelset in the pitch-plane model).
    """

    kind: Literal["contact"] = "contact"
    law: Literal["linear", "hertz"] = "linear"
    stiffness_N_per_m: Optional[float] = Field(None, gt=0, le=1e12, description="K_H (law: linear)")
    hertz_constant_m_per_N2_3: Optional[float] = Field(None, ge=1e-12, le=1e-4, description="G of δ = G·P^(2/3) "
                                                       "(law: hertz)")
    wheels: int = Field(1, ge=1, le=4, description="wheels in parallel (law: hertz)")

    @model_validator(mode="after")
    def _law(self):
        if self.law == "linear" and self.stiffness_N_per_m is None:
            raise ConfigValueError("law: linear needs stiffness_N_per_m", field="stiffness_N_per_m",
                                   allowed="a stiffness > 0 N/m")
        if self.law == "hertz" and self.hertz_constant_m_per_N2_3 is None:
            raise ConfigValueError("law: hertz needs hertz_constant_m_per_N2_3", field="hertz_constant_m_per_N2_3",
                                   allowed="a Hertz constant G [m/N^(2/3)]")
        return self


ElementType = Annotated[Union[Spring, Damper, SeriesDamper, Contact], Field(discriminator="kind")]


class Element(Strict):
    """One element of ``type`` between the points ``top`` and ``bottom`` (see the module docstring)."""

    name: Optional[str] = Field(None, pattern=_NAME, description="default: the type name (+ _2, _3 … if repeated)")
    type: str
    top: str
    bottom: str

    @field_validator("top", "bottom")
    @classmethod
    def _point(cls, v):
        if not _POINT.match(v):
            raise ConfigValueError("not a point", allowed="'body', 'body@x_m' or 'rail@wheel'")
        return v.replace(" ", "")


class FloorPoint(Strict):
    """A point of a body where accelerations are reported and ride comfort is evaluated."""

    name: str = Field(..., pattern=_NAME)
    point: str

    @field_validator("point")
    @classmethod
    def _point(cls, v):
        return Element._point(v)


class Vehicle(Strict):
    body_types: dict[str, BodyType] = Field(..., min_length=1)
    bodies: list[Body] = Field(..., min_length=1, max_length=1000)
    wheels: list[Wheel] = Field([], max_length=1000, description="track input points (one per wheelset in the "
                                "pitch-plane model)")
    element_types: dict[str, ElementType] = Field(..., min_length=1)
    elements: list[Element] = Field(..., min_length=1, max_length=10_000)
    floor_points: list[FloorPoint] = Field([], max_length=1000, description="default: the centre of the first body")
    description: str = ""

    def element_names(self) -> list[str]:
        """Element names with defaults applied (type name, then type_2, type_3 …)."""
        seen: dict[str, int] = {}
        out = []
        for e in self.elements:
            if e.name:
                out.append(e.name)
                continue
            seen[e.type] = seen.get(e.type, 0) + 1
            out.append(e.type if seen[e.type] == 1 else f"{e.type}_{seen[e.type]}")
        return out

    def floor_point_list(self) -> list[FloorPoint]:
        return list(self.floor_points) or [FloorPoint(name=self.bodies[0].name, point=self.bodies[0].name)]


class Simulation(Strict):
    duration_s: float = Field(..., gt=0, le=1e5)
    speed_kmh: float = Field(0.0, ge=0, le=600, description="vehicle speed V (track inputs and their delays x_j/V)")
    gravity_mps2: float = Field(9.81, ge=0, le=100, description="g; 0 = no static preload")
    initial_state: Literal["static", "unloaded"] = Field(
        "static", description="static: at rest in static equilibrium; unloaded: at rest with every spring at "
        "its free length (a drop under gravity)")


class Integrator(Strict):
    """Solver: ``recurrence`` (Yu et al. 2023 eq 12, implicit Euler, first order), ``exact`` (matrix
    exponential of the linear system, exact for inputs held constant (``hold: zoh``) or linear
    (``hold: foh``) over each step), or any method of the integrator registry (rk4, dopri5 …) on the
    state-space ODE form (massless nodes as first-order states)."""

    method: str = "exact"
    step_s: Optional[float] = Field(0.001, ge=MIN_STEP_S, le=1e5, description="fixed step (recurrence, exact, rk4) "
                                    "or initial step")
    hold: Literal["foh", "zoh"] = Field("foh", description="input hold of the exact discretisation")
    rtol: float = Field(1e-6, ge=MIN_RTOL, lt=1)
    atol: float = Field(1e-9, ge=1e-30, le=1e6)
    max_steps: int = Field(200_000_000, ge=1, le=MAX_STEPS)
    max_step_s: Optional[float] = Field(None, ge=MIN_STEP_S, le=1e5)
    min_step_s: float = Field(0.0, ge=0, le=1e5)

    @field_validator("method")
    @classmethod
    def _known(cls, v):
        key = v.lower()
        if key in STATE_SPACE_METHODS:
            return STATE_SPACE_METHODS[key]
        try:
            return canonical_method(v)
        except KeyError:
            raise ConfigValueError(f"unknown solver {v!r}",
                                   allowed=", ".join(sorted(set(STATE_SPACE_METHODS)) + method_names())) from None

    @property
    def fixed_step(self) -> bool:
        return self.method in ("recurrence", "exact") or not method_spec(self.method).adaptive

    def kwargs(self) -> dict:
        """Keyword arguments of :func:`hpcrail.integrators.integrate` for a registry method."""
        return dict(step=self.step_s or 0.0, rtol=self.rtol, atol=self.atol, hmin=self.min_step_s,
                    hmax=self.max_step_s or 0.0, max_steps=self.max_steps, options={}, jacobian="auto")


class Output(Strict):
    interval_s: float = Field(0.005, ge=1e-6, le=1e5, description="sampling interval of the time series (≤ 5 ms "
                              "keeps the comfort weightings' band up to 100 Hz)")
    comfort_window_s: float = Field(5.0, ge=1e-3, le=1e5, description="r.m.s. window of the EN 12299 P95 value")


class VerticalScenario(Strict):
    """A vertical (pitch-plane) vehicle-dynamics scenario."""

    model: Literal["vertical"] = "vertical"
    name: str = Field(..., pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    vehicle: Vehicle
    track: Track = Track()
    simulation: Simulation
    integrator: Integrator = Integrator()
    output: Output = Output()


def check_vertical(sc: VerticalScenario, doc) -> list[ConfigIssue]:
    """Cross-field rules: references, geometry, solver/model compatibility, time grid; every problem."""
    issues, add = issue_collector(doc)

    v = sc.vehicle
    bt, et = v.body_types, v.element_types
    bodies = {}
    for i, b in enumerate(v.bodies):
        if b.type not in bt:
            add(("vehicle", "bodies", i, "type"), "unknown body type", b.type, ", ".join(sorted(bt)))
        if b.name in bodies or b.name == "rail":
            add(("vehicle", "bodies", i, "name"), "duplicate or reserved body name", b.name,
                "a name not used by another body, and not 'rail'")
        bodies[b.name] = b
    wheels = {}
    for i, w in enumerate(v.wheels):
        if w.name in wheels:
            add(("vehicle", "wheels", i, "name"), "duplicate wheel name", w.name, "a name not used by another wheel")
        wheels[w.name] = w

    def check_point(loc, text, allow_rail=True):
        name, arg = parse_point(text)
        if name == "rail":
            if not allow_rail:
                add(loc, "a floor point must be on a body", text, ", ".join(bodies))
                return "rail"
            if arg is None or arg not in wheels:
                add(loc, "unknown wheel", text, ", ".join(f"rail@{w}" for w in wheels) or "(no wheels defined)")
            return "rail"
        if name not in bodies:
            add(loc, "unknown body", text, ", ".join(list(bodies) + [f"rail@{w}" for w in wheels]))
            return None
        if arg is not None:
            try:
                x = float(arg)
            except ValueError:
                add(loc, "the position after '@' must be a number [m]", text, "body@x_m with a number x_m")
                return name
            b = bodies[name]
            typ = bt.get(b.type)
            if typ is not None and typ.pitch_inertia_kgm2 is None and not math.isclose(x, b.x_m, abs_tol=1e-9):
                add(loc, f"body {name!r} has no pitch degree of freedom (no pitch_inertia_kgm2): attach at its "
                    f"centre", text, f"{name} or {name}@{b.x_m:g}")
        return name

    names = v.element_names()
    seen = set()
    for i, (e, name) in enumerate(zip(v.elements, names)):
        base = ("vehicle", "elements", i)
        if name in seen:
            add(base + ("name",), "duplicate element name", name, "a name not used by another element")
        seen.add(name)
        if e.type not in et:
            add(base + ("type",), "unknown element type", e.type, ", ".join(sorted(et)))
        top = check_point(base + ("top",), e.top)
        bot = check_point(base + ("bottom",), e.bottom)
        if top == "rail" and bot == "rail":
            add(base, "an element needs at least one body end", f"{e.top} – {e.bottom}", "a body at top or bottom")
        if top is not None and top == bot and top != "rail":
            add(base, "an element must join two different bodies (or a body and the rail)", f"{e.top} – {e.bottom}",
                "two different bodies, or a body and rail@<wheel>")
        typ = et.get(e.type)
        if isinstance(typ, Contact):
            if parse_point(e.bottom)[0] != "rail" or top == "rail":
                add(base, "a contact element joins a wheel body (top) and the rail (bottom)",
                    f"{e.top} – {e.bottom}", "top: <wheelset>, bottom: rail@<wheel>")
    for i, fp in enumerate(v.floor_point_list() if v.floor_points else []):
        check_point(("vehicle", "floor_points", i, "point"), fp.point, allow_rail=False)
    fpn = [f.name for f in v.floor_points]
    if len(set(fpn)) != len(fpn):
        add(("vehicle", "floor_points"), "duplicate floor point names", fpn, "distinct names")
    # every body must be held by stiffness (springs, series dampers, contacts) connected to the rail
    if not issues:
        adj: dict[str, set] = {b: set() for b in bodies}
        adj["rail"] = set()
        for e in v.elements:
            if isinstance(et[e.type], Damper):
                continue
            a, b = parse_point(e.top)[0], parse_point(e.bottom)[0]
            adj[a].add(b)
            adj[b].add(a)
        reach, stack = {"rail"}, ["rail"]
        while stack:
            for nb in adj[stack.pop()]:
                if nb not in reach:
                    reach.add(nb)
                    stack.append(nb)
        loose = [b for b in bodies if b not in reach]
        if loose:
            add(("vehicle", "elements"), "bodies not held by any stiffness path to the rail (no static equilibrium)",
                loose, "connect them with springs, series dampers or contacts")
    # solver / model compatibility and the time grid
    it = sc.integrator
    nonlinear = any(isinstance(t, Contact) and t.law == "hertz" for t in et.values())
    if it.method == "exact" and nonlinear:
        add(("integrator", "method"), "the exact discretisation needs a linear model (a Hertz contact is used)",
            it.method, "recurrence, rk4, dopri5, ... or contact law: linear")
    if it.fixed_step:
        if it.step_s is None:
            add(("integrator", "step_s"), f"method {it.method!r} has a fixed step: set integrator.step_s",
                allowed="a step > 0 s", has_value=False)
        else:
            h = it.step_s
            for loc, val in ((("simulation", "duration_s"), sc.simulation.duration_s),
                             (("output", "interval_s"), sc.output.interval_s)):
                r = val / h
                if abs(r - round(r)) > 1e-6 * max(1.0, r) or round(r) < 1:
                    add(loc, f"must be a whole multiple of integrator.step_s = {h:g} s for fixed-step solvers", val,
                        f"k × {h:g} s with an integer k ≥ 1")
    irr = sc.track.irregularity
    if irr.kind == "psd" and sc.simulation.speed_kmh <= 0:
        add(("simulation", "speed_kmh"), "a track irregularity needs a speed > 0", sc.simulation.speed_kmh, "> 0")
    if irr.kind == "psd" and irr.length_m is not None:
        need = sc.simulation.speed_kmh / 3.6 * sc.simulation.duration_s + 1.0
        if irr.length_m < need:
            add(("track", "irregularity", "length_m"), f"the run needs {need:.1f} m of track (speed × duration + 1 m)",
                irr.length_m, f"≥ {need:.1f}")
    if irr.kind == "harmonic" and irr.frequency_rad_per_s is not None and sc.simulation.speed_kmh <= 0 \
            and len(v.wheels) > 1:
        add(("simulation", "speed_kmh"), "per-wheel delays of a harmonic input need a speed > 0",
            sc.simulation.speed_kmh, "> 0")
    if irr.kind != "none" and not v.wheels:
        add(("track", "irregularity"), "a track input needs wheels (vehicle.wheels)", irr.kind,
            "kind: none, or wheels in vehicle.wheels")
    if sc.output.interval_s > sc.simulation.duration_s:
        add(("output", "interval_s"), "sampling interval longer than the simulation", sc.output.interval_s,
            f"≤ {sc.simulation.duration_s:g} s (simulation.duration_s)")
    why = samples_issue(sc.simulation.duration_s, sc.output.interval_s, max(1, len(v.bodies) + len(v.elements)))
    if why:
        add(("output", "interval_s"), f"the run would store {why}", sc.output.interval_s,
            "a longer interval or a shorter run")
    if it.step_s and sc.simulation.duration_s / it.step_s > it.max_steps:
        add(("integrator", "step_s"), f"the run needs {sc.simulation.duration_s / it.step_s:.3g} steps, more than "
            f"integrator.max_steps = {it.max_steps}", it.step_s,
            f"≥ {sc.simulation.duration_s / it.max_steps:.3g} s, or a larger integrator.max_steps")
    if irr.kind == "psd":
        length = irr.length_m if irr.length_m is not None else sc.simulation.speed_kmh / 3.6 * sc.simulation.duration_s
        points = length / irr.spacing()
        if points > MAX_PROFILE_POINTS:
            add(("track", "irregularity", "spacing_m"), f"the synthesised profile would hold {points:.3g} points",
                irr.spacing_m, f"≥ {length / MAX_PROFILE_POINTS:.3g} m for {length:.3g} m of track "
                "(or a shorter run)")
    return issues
