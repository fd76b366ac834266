"""Typed schema of a mixed-train scenario (YAML): an LTD consist (every field of the ``ltd`` kind but the route)
in which chosen positions run as detailed multibody railway vehicles on a track with curves, cant and
irregularities.

The **track** (the ``railway_vehicle`` kind's ``track`` block) is the route: the hidden vehicles see its
curvature (their curving resistance) and ``grade_permille`` (a constant grade); arc length 0 is the track's
start and ``front_start_m`` places the front of the train at t = 0.  Each entry of ``detailed`` names a
consist ``position`` (1 = head) and the railway vehicle (``vehicle``, ``contact``) that runs there; in the LTD
part that position becomes a 1-DOF vehicle of the railway vehicle's mass, with the running resistance, brake
equipment and kind of the vehicle type it replaces and a length over coupler faces of twice its coupler
pivots' distance from its centre plus ``pivot_inset_m`` at each end.  :meth:`MixedTrainScenario.ltd_scenario`
is that pure LTD scenario (the "detailed wagon replaced by a 1-DOF vehicle of the same mass" comparison);
:meth:`MixedTrainScenario.vehicle_scenario` is the detailed vehicle as a ``railway_vehicle`` scenario alone.
Source: Bosso et al. 2024 (paper 000) §2, Figure 1; Yu et al. 2022 (paper 004).
"""
from __future__ import annotations

import math
from typing import Literal, Optional

from pydantic import Field, ValidationError, model_validator

from hpcrail.config.base import MAX_VEHICLES, Strict
from hpcrail.config.envelope_check import EnvelopeCheck
from hpcrail.config.errors import ConfigIssue, issue_collector
from hpcrail.config.integrator import Integrator, method_names, method_spec, step_multiple_issues
from hpcrail.kinds.ltd.schema import (
    MIN_SECTION_KM, Connections, ConsistEntry, Output as LTDOutput, Route, RouteSection, Scenario, Simulation as LTDSimulation,
    check_scenario,
)
from hpcrail.kinds.railway_vehicle.schema import (
    EN14363, Contact, Output as RVOutput, RailwayVehicleScenario, Simulation as RVSimulation, Track, Vehicle,
)
from hpcrail.models.wheelrail.config import check_profile_pair

KMH = 1.0 / 3.6
#: spirals of the track become this many constant-curvature route sections (curving resistance only)
SPIRAL_STEPS = 8
#: most samples of the detailed vehicles' series (every output of a railway vehicle per sample)
MAX_DETAILED_SAMPLES = 2_000_000
#: shortest section of the hidden vehicles' route [m] (the LTD route's own bound)
MIN_ROUTE_SECTION_M = MIN_SECTION_KM * 1000.0


class DetailedVehicle(Strict):
    """A consist position that runs as a multibody railway vehicle."""

    position: int = Field(..., ge=1, le=MAX_VEHICLES, description="vehicle number in the consist (1 = head)")
    vehicle: Vehicle
    contact: Contact
    pivot_inset_m: float = Field(1.0, gt=0, le=5.0, description="distance from each coupler pivot "
                                 "(vehicle.coupler_points_m) to the coupler face: the 1-DOF length of this "
                                 "position is 2 (|x_pivot| + pivot_inset_m), and a neighbour's pivot lies this far "
                                 "inside its own coupler face (ASSUMED 1 m)")
    creep: bool = Field(True, description="false: frictionless wheel/rail contact (checks only)")

    def mass_kg(self) -> float:
        v = self.vehicle
        return float(sum(v.body_types[b.type].mass_kg for b in v.bodies if b.type in v.body_types))

    def pivot_x(self) -> float:
        return float(max(abs(self.vehicle.coupler_points_m[0][0]), abs(self.vehicle.coupler_points_m[1][0])))

    def length_m(self) -> float:
        return 2.0 * (self.pivot_x() + self.pivot_inset_m)


class Simulation(LTDSimulation):
    in_train_forces: bool = Field(True, description="false: the detailed vehicles feel no coupler, running-"
                                  "resistance, grade or brake force and run as if alone (a check against the "
                                  "railway_vehicle kind)")


class Output(Strict):
    interval_s: float = Field(0.01, ge=1e-6, le=10.0, description="sampling interval of the detailed vehicles' "
                              "series (EN 14363 sliding means need a few samples per metre run)")
    reference_coupler: Optional[int] = Field(None, ge=1, le=MAX_VEHICLES, description="coupler for the deflection "
                                             "metrics (default: that of the largest draft force)")
    steady_window_m: float = Field(20.0, gt=0, le=10_000.0, description="steady-curving values of each detailed "
                                   "vehicle: mean over the last this many metres in the last circular curve")
    en14363: EN14363 = EN14363()
    envelope_check: EnvelopeCheck = Field(EnvelopeCheck(), description="after the run, re-integrate the windows of "
                                          "the consist's largest draft and buff peaks with a reference setting and "
                                          "report each peak's relative difference")


class MixedTrainScenario(Scenario):
    """A consist with detailed railway vehicles at chosen positions (see the module docstring)."""

    model: Literal["mixed_train"] = "mixed_train"
    route: Optional[Route] = Field(None, description="not given: a mixed train's route is its track")

    @staticmethod
    def integrator_methods(include_aliases: bool = True) -> list[str]:
        """The integration methods a mixed train runs with: hpcrail's own (numba kernels; the implicit ones with
        the mixed train's block-structured Jacobian, issue 27)."""
        return method_names(include_aliases, where=lambda m: not m.external)
    track: Track
    grade_permille: float = Field(0.0, ge=-40, le=40, description="constant grade of the track (+ uphill)")
    front_start_m: float = Field(..., ge=0, le=1e6, description="arc length of the front of the train at t = 0")
    detailed: list[DetailedVehicle] = Field(..., min_length=1, max_length=64)
    simulation: Simulation
    integrator: Integrator = Integrator(method="rk4", step_s=5e-4)
    output: Output = Output()

    # -- derived scenarios ---------------------------------------------------------------------------
    def detailed_type_name(self, d: int) -> str:
        return f"detailed_{d + 1}"

    def vehicle_type_names(self) -> list[str]:
        names = [e.type for e in self.consist for _ in range(e.count)]
        for d, dv in enumerate(self.detailed):
            if 1 <= dv.position <= len(names):
                names[dv.position - 1] = self.detailed_type_name(d)
        return names

    def derived_route(self) -> Route:
        """Route of the hidden vehicles: the track's curvature (spirals in :data:`SPIRAL_STEPS` steps) and the
        constant grade, with tangents before the track (for the rear of the train) and after it."""
        g = self.grade_permille
        n = sum(e.count for e in self.consist)
        lengths = 0.0
        for e in self.consist:
            vt = self.vehicle_types.get(e.type)
            lengths += e.count * (vt.length_m if vt else 30.0)
        lengths += sum(dv.length_m() for dv in self.detailed)
        before_km = math.ceil((lengths + 2000.0) * 1e-3)   # whole kilometres: a common grid with the track
        secs = [RouteSection(start_km=-before_km, end_km=0.0, grade_permille=g, radius_m=0.0)]
        pos = 0.0
        kprev = 0.0
        ts = self.track.sections
        for i, s in enumerate(ts):
            if s.kind == "spiral":
                knext = ts[i + 1].curvature() if i + 1 < len(ts) else 0.0
                h = s.length_m / SPIRAL_STEPS
                for q in range(SPIRAL_STEPS):
                    k = kprev + (knext - kprev) * (q + 0.5) / SPIRAL_STEPS
                    r = 0.0 if abs(k) < 1e-6 else 1.0 / k
                    secs.append(RouteSection(start_km=(pos + q * h) * 1e-3, end_km=(pos + (q + 1) * h) * 1e-3,
                                             grade_permille=g, radius_m=r))
            else:
                k = s.curvature()
                kprev = k
                secs.append(RouteSection(start_km=pos * 1e-3, end_km=(pos + s.length_m) * 1e-3, grade_permille=g,
                                         radius_m=0.0 if k == 0 else 1.0 / k))
            pos += s.length_m
        v0 = max(self.simulation.initial_speed_kmh * KMH, 1.0)
        end = math.ceil((max(pos, self.front_start_m) + 2.0 * v0 * self.simulation.duration_s + 2000.0 + n) * 1e-3) * 1e3
        secs.append(RouteSection(start_km=pos * 1e-3, end_km=end * 1e-3, grade_permille=g, radius_m=0.0))
        return Route(sections=secs, start_m=self.front_start_m)

    def ltd_scenario(self) -> Scenario:
        """The pure LTD scenario: each detailed vehicle replaced by a 1-DOF vehicle of its mass and length (the
        resistance, brake and kind of the type it replaces), every coupler's connection type kept."""
        conns = Scenario.connection_type_names(self)
        names = self.vehicle_type_names()
        vt = dict(self.vehicle_types)
        base = [e.type for e in self.consist for _ in range(e.count)]
        for d, dv in enumerate(self.detailed):
            orig = vt[base[dv.position - 1]]
            vt[self.detailed_type_name(d)] = orig.model_copy(update={
                "mass_t": dv.mass_kg() / 1000.0, "length_m": dv.length_m(), "axles": len(dv.vehicle.wheelset_names()),
                "rotating_mass_fraction": 0.0,
                "description": f"1-DOF stand-in of the detailed vehicle {dv.vehicle.name!r} at position {dv.position}"})
        consist: list[ConsistEntry] = []
        for nm in names:
            if consist and consist[-1].type == nm:
                consist[-1] = ConsistEntry(type=nm, count=consist[-1].count + 1)
            else:
                consist.append(ConsistEntry(type=nm, count=1))
        return Scenario(
            model="ltd", name=self.name, description=self.description, vehicle_types=vt,
            connection_types=self.connection_types, consist=consist,
            connections=Connections(default=self.connections.default, at={k + 1: c for k, c in enumerate(conns)}),
            route=self.derived_route(), driver=self.driver, air_brake=self.air_brake,
            simulation=LTDSimulation(duration_s=self.simulation.duration_s,
                                     initial_speed_kmh=self.simulation.initial_speed_kmh,
                                     initial_notch=self.simulation.initial_notch),
            integrator=self.integrator,
            output=LTDOutput(interval_s=self.simulation.duration_s, reference_coupler=self.output.reference_coupler,
                             energy=False),
            numerics=self.numerics, friction=self.friction, partition=self.partition)

    def vehicle_scenario(self, d: int, centre_m: float) -> RailwayVehicleScenario:
        """Detailed vehicle ``d`` alone (``railway_vehicle`` kind), its centre at ``centre_m`` at t = 0, free
        forward motion at the train's initial speed, the same track, integrator and EN 14363 settings."""
        dv = self.detailed[d]
        x_lead = max(b.x_m for b in dv.vehicle.bodies if dv.vehicle.body_kind(b) == "wheelset")
        return RailwayVehicleScenario(
            name=f"{self.name}_v{dv.position}", description=f"detailed vehicle at position {dv.position}",
            vehicle=dv.vehicle, contact=dv.contact, track=self.track,
            simulation=RVSimulation(duration_s=self.simulation.duration_s,
                                    speed_mps=self.simulation.initial_speed_kmh * KMH, start_m=centre_m + x_lead,
                                    longitudinal="free", wheelset_spin="free", creep=dv.creep),
            integrator=self.integrator,
            output=RVOutput(interval_s=self.output.interval_s, steady_window_m=self.output.steady_window_m,
                            en14363=self.output.en14363))

    @model_validator(mode="after")
    def _no_route(self):
        if self.route is not None:
            raise ValueError("a mixed train takes its route from 'track' and 'grade_permille'; remove 'route'")
        return self


def _not_level_tangent(track: Track, s0: float, s1: float):
    """``(index, section)`` of the first track section overlapping [s0, s1] [m] that is not a tangent without
    cant, or None."""
    pos = 0.0
    for i, sec in enumerate(track.sections):
        a, b = pos, pos + sec.length_m
        pos = b
        if b <= s0 or a >= s1:
            continue
        if sec.kind != "tangent" or (sec.cant_mm or 0.0) != 0.0:
            return i, sec
    return None


def _level_start_m(track: Track) -> float:
    """Length [m] of the straight level track the track starts with (0 if it starts otherwise)."""
    pos = 0.0
    for sec in track.sections:
        if sec.kind != "tangent" or (sec.cant_mm or 0.0) != 0.0:
            break
        pos += sec.length_m
    return pos


class _DetailedView:
    """The mixed train's document seen by the railway-vehicle checks of detailed vehicle ``d``: their
    ``vehicle``/``contact`` locations are ``detailed.d.vehicle``/``detailed.d.contact`` here."""

    def __init__(self, doc, d: int):
        self.doc, self.d = doc, d

    def loc(self, loc) -> tuple:
        loc = tuple(loc)
        return ("detailed", self.d) + loc if loc and loc[0] in ("vehicle", "contact") else loc

    def file_for(self, loc) -> str:
        return self.doc.file_for(self.loc(loc))


def detailed_vehicle_issues(sc: MixedTrainScenario, doc) -> list[ConfigIssue]:
    """The railway-vehicle kind's own checks (:func:`~hpcrail.kinds.railway_vehicle.schema.check_railway_vehicle`:
    references between bodies, element types and elements, static equilibrium, profile pair, track) applied
    to every detailed vehicle as it runs alone (:meth:`MixedTrainScenario.vehicle_scenario`), located at
    ``detailed.N.vehicle``/``detailed.N.contact`` and ``track``; its simulation, integrator and output
    blocks are derived from the train's, which the train's own checks cover."""
    from hpcrail.kinds.railway_vehicle.schema import check_railway_vehicle

    out: list[ConfigIssue] = []
    moving = sc.model_copy(update={"simulation": sc.simulation.model_copy(update={
        "initial_speed_kmh": max(sc.simulation.initial_speed_kmh, 5.0)})})   # (a train at rest: checked below)
    for d, dv in enumerate(sc.detailed):
        view = _DetailedView(doc, d)
        if not dv.vehicle.wheelset_names():
            out.append(ConfigIssue(doc.file_for(("detailed", d, "vehicle", "bodies")), f"detailed.{d}.vehicle.bodies",
                                   "a detailed vehicle needs at least one body of a wheelset type",
                                   [b.name for b in dv.vehicle.bodies], "bodies whose type has kind: wheelset"))
            continue
        try:
            alone = moving.vehicle_scenario(d, 0.0)
        except ValidationError as exc:   # a derived value outside the vehicle kind's ranges
            out += [ConfigIssue(doc.file_for(("detailed", d)), f"detailed.{d}", "the detailed vehicle alone (the "
                                "railway_vehicle kind) refuses a value derived from the train: "
                                + "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()),
                                dv.position, "values inside the railway_vehicle kind's ranges (docs/configuration.md)")]
            continue
        for i in check_railway_vehicle(alone, view):
            head = i.path.split(".", 1)[0]
            if head in ("vehicle", "contact"):
                i.path = f"detailed.{d}.{i.path}"
            elif head != "track" or d > 0:   # derived blocks; the track once
                continue
            out.append(i)
    return out


def check_mixed_train(sc: MixedTrainScenario, doc) -> list[ConfigIssue]:
    """Cross-field rules: the positions, the detailed vehicles, the derived LTD scenario's own rules, the
    time grid; every problem."""
    issues, add = issue_collector(doc)
    base = [e.type for e in sc.consist for _ in range(e.count)]
    n = len(base)
    if sc.air_brake.enabled and sc.air_brake.model == "pneumatic":
        add(("air_brake", "model"), "mixed trains run the empirical air brake only", "pneumatic", "empirical")
    for i, e in enumerate(sc.consist):
        if e.remote is not None:
            add(("consist", i, "remote"), "mixed trains do not model distributed power (one notch for every "
                "locomotive)", "remote", "no remote entries")
    seen = set()
    ref = None
    for d, dv in enumerate(sc.detailed):
        loc = ("detailed", d)
        if not 1 <= dv.position <= n:
            add(loc + ("position",), "position outside the consist", dv.position, f"1..{n}")
            continue
        if dv.position in seen:
            add(loc + ("position",), "two detailed vehicles at one position", dv.position)
        seen.add(dv.position)
        t = sc.vehicle_types.get(base[dv.position - 1])
        if t is not None and t.kind != "wagon":
            add(loc + ("position",), f"position {dv.position} is a locomotive ({base[dv.position - 1]!r}); detailed "
                "vehicles replace wagons", dv.position, "the number of a wagon")
        issues += check_profile_pair(dv.contact.profiles, doc, loc + ("contact", "profiles"))
        v = dv.vehicle
        names = ([b.name for b in v.bodies], v.wheelset_names())
        if ref is None:
            ref = names
        elif names != ref:
            add(loc + ("vehicle", "bodies"), "every detailed vehicle needs the same bodies and wheelsets (one "
                "output layout)", names[0], ", ".join(ref[0]))
        if dv.pivot_x() <= 0:
            add(loc + ("vehicle", "coupler_points_m"), "the detailed vehicle needs coupler pivots ahead of and "
                "behind its centre", [list(p) for p in v.coupler_points_m], "[[+x, 0, z], [-x, 0, z]], x > 0")
        elif v.coupler_points_m[0][0] <= 0 or v.coupler_points_m[1][0] >= 0:
            add(loc + ("vehicle", "coupler_points_m"), "the first coupler point is the front one (x > 0), the "
                "second the rear one (x < 0)", [list(p) for p in v.coupler_points_m])
    if issues:
        return issues
    issues += detailed_vehicle_issues(sc, doc)
    short = [(i, t.length_m) for i, t in enumerate(sc.track.sections)
             if t.length_m < MIN_ROUTE_SECTION_M * (SPIRAL_STEPS if t.kind == "spiral" else 1)]
    for i, length in short:   # each becomes a section of the hidden vehicles' route (spirals: SPIRAL_STEPS of them)
        add(("track", "sections", i, "length_m"), "too short to be a section of the hidden vehicles' route", length,
            f"≥ {MIN_ROUTE_SECTION_M * (SPIRAL_STEPS if sc.track.sections[i].kind == 'spiral' else 1):g} m")
    if issues:
        return issues
    if sc.simulation.initial_speed_kmh < 5.0:
        add(("simulation", "initial_speed_kmh"), "detailed vehicles need the train moving (creepages are "
            "normalised by the speed)", sc.simulation.initial_speed_kmh, "≥ 5 km/h")
    if sc.partition.backend == "mpi":
        add(("partition", "backend"), "a mixed train's blocks run on threads (MPI ranks are not built for it)",
            sc.partition.backend, "auto, off, threads")
    if sc.partition.state == "distributed":
        add(("partition", "state"), "a mixed train's blocks share the whole state: the detailed wagons and their "
            "coupling are not split into blocks (distributed state is built for LTD trains only)",
            sc.partition.state, "auto or shared")
    if sc.partition.boundary_vehicles is not None:
        miss = sorted(seen - set(sc.partition.boundary_vehicles))
        if miss:
            add(("partition", "boundary_vehicles"), "the detailed vehicles are boundary vehicles", miss,
                "a list containing every detailed position")
    from hpcrail.kinds.ltd.couplers import mixed_laws, non_mixed_laws

    ltd = sc.ltd_scenario()
    bad = non_mixed_laws(ltd)
    if bad:
        add(("connection_types",), f"a mixed train evaluates table-law connections only; this consist uses "
            f"{', '.join(bad)}", bad, f"connection laws {', '.join(mixed_laws())}")
    for i in check_scenario(ltd, doc):
        if i.path.startswith("route"):
            continue
        issues.append(i)
    it = sc.integrator
    spec = method_spec(it.method)
    if spec.external:
        add(("integrator", "method"), "a mixed train integrates with hpcrail's own methods (its Jacobian has "
            "local blocks, the detailed vehicles, that an external solver's linear algebra does not take)",
            it.method, ", ".join(MixedTrainScenario.integrator_methods(False)))
    for loc, msg, val in step_multiple_issues(it.method, it.step_s, {("simulation", "duration_s"):
                                                                     sc.simulation.duration_s,
                                                                     ("output", "interval_s"): sc.output.interval_s}):
        add(loc, msg, val)
    ens = sc.output.en14363
    if ens.step_m > ens.window_m:
        add(("output", "en14363", "step_m"), "the sliding-mean step must not exceed its window", ens.step_m)
    k = sc.simulation.duration_s / sc.output.interval_s
    if k > MAX_DETAILED_SAMPLES:
        add(("output", "interval_s"), f"{k:.3g} samples of the detailed vehicles' series (duration / interval)",
            sc.output.interval_s, f"≥ {sc.simulation.duration_s / MAX_DETAILED_SAMPLES:.3g} s for this duration "
            f"(at most {MAX_DETAILED_SAMPLES:,} samples)")
    # every detailed vehicle starts on the track
    lens = [ltd.vehicle_types[t].length_m for t in ltd.vehicle_type_names()]
    s = sc.front_start_m - 0.5 * lens[0]
    centres = [s]
    for a, b in zip(lens[:-1], lens[1:]):
        s -= 0.5 * (a + b)
        centres.append(s)
    track_end = sc.track.length()
    for d, dv in enumerate(sc.detailed):
        c = centres[dv.position - 1]
        if c - dv.pivot_x() < 0:
            add(("front_start_m",), f"detailed vehicle {dv.position} would start {-(c - dv.pivot_x()):.1f} m before "
                "the start of the track", sc.front_start_m,
                f"≥ {sc.front_start_m - (c - dv.pivot_x()) + 1:.0f} m")
        elif c + dv.pivot_x() > track_end:
            add(("front_start_m",), f"detailed vehicle {dv.position} would start {c + dv.pivot_x() - track_end:.1f} m "
                f"beyond the end of the track ({track_end:g} m long): it would never run on it", sc.front_start_m,
                f"≤ {sc.front_start_m - (c + dv.pivot_x() - track_end) - 1:.0f} m (the detailed vehicles on the "
                "track)")
        else:
            bad = _not_level_tangent(sc.track, c - dv.pivot_x(), c + dv.pivot_x())
            if bad is not None:
                i, sec = bad
                level = _level_start_m(sc.track)
                add(("front_start_m",), f"detailed vehicle {dv.position} would start on section {i + 1} of the track, "
                    f"a {sec.kind}{f' with {sec.cant_mm:g} mm cant' if sec.cant_mm else ''}: a detailed vehicle starts "
                    "in its static equilibrium on straight level track (started in a canted curve, a run diverged "
                    "within 0.06 s)", sc.front_start_m,
                    f"≤ {sc.front_start_m - (c + dv.pivot_x() - level) - 1:.0f} m (on the level tangent the track "
                    "starts with)" if level > 2 * dv.pivot_x() else "a track that starts with a tangent without cant "
                    "as long as the detailed vehicle")
    if not math.isfinite(sc.front_start_m):
        add(("front_start_m",), "must be finite", sc.front_start_m)
    return issues


__all__ = ["MixedTrainScenario", "DetailedVehicle", "Simulation", "Output", "check_mixed_train"]
