"""Typed schema of an LTD scenario (YAML) and its cross-field checks.

Field names carry their units when they are not SI (``mass_t``, ``speed_kmh``, ``grade_permille``,
``force_kN``); the model builders convert everything to SI.  Unknown keys are errors.  Every field is
reachable by a dotted ``--set`` path, the same paths a sweep varies.

Sources: Bosso et al. 2024 eqs (1)-(7) for the LTD model.  Connection laws: :mod:`hpcrail.kinds.ltd.couplers`.
"""
from __future__ import annotations

import difflib
import math
import re
from typing import Annotated, Literal, Optional

import numpy as np
from pydantic import Field, field_validator, model_validator

from hpcrail.config.base import (
    MAX_DURATION_S, MAX_SAMPLES, MAX_SERIES_VALUES, MAX_TABLE_ROWS, MAX_VEHICLES, Strict, samples_issue,
)
from hpcrail.config.envelope_check import EnvelopeCheck
from hpcrail.config.errors import ConfigIssue, ConfigValueError, issue_collector
from hpcrail.config.integrator import Integrator, steps_issue
from hpcrail.kinds.ltd.brakes import PneumaticEquipment, PneumaticSystem
from hpcrail.kinds.ltd.couplers import ConnectionType, NoninertialConnection, strictly_increasing
from hpcrail.kinds.ltd.safety_schema import RunningGear, RunningSafety, VehicleGeometry


# ------------------------------------------------------------------------------------------------
# vehicles
# ------------------------------------------------------------------------------------------------
class Davis(Strict):
    """Modified Davis running resistance, Bosso et al. 2024 eq (6) (AREA 1970, SI form):
    F [N] = m[kg]/1000 · [Q_ad (a + b/P_ax + c V + d V²/(P_ax n_ax)) + curve/|R_c| + g i_s],
    V in km/h, P_ax in t/axle, R_c in m, i_s in ‰ (the grade term is applied by the route)."""

    adjustment: float = Field(1.0, ge=0, le=10, description="Davis adjustment factor Q_ad (1.0 if not stated)")
    a: float = Field(2.943, ge=0, le=100, description="constant term [N/kN of weight... as in eq 6]")
    b: float = Field(89.2, ge=0, le=5000, description="axle-load term, divided by P_ax [t]")
    c: float = Field(0.0306, ge=0, le=10, description="linear speed term, per km/h")
    d: float = Field(0.122, ge=0, le=100, description="quadratic (aerodynamic) term, per (km/h)², divided by "
                     "P_ax·n_ax")
    curve: float = Field(6116.0, ge=0, le=100_000, description="curving resistance numerator, divided by |R_c| [m]")


class ShoeFriction(Strict):
    """Speed-dependent brake-shoe friction μ(V) = mu0 · (1 + a·V) / (1 + b·V), V in km/h
    (a Karwatzki-type rational law; defaults: composition shoe, μ 0.38 → 0.30 at 100 km/h)."""

    mu0: float = Field(0.38, gt=0, le=1)
    a_per_kmh: float = Field(0.0, ge=0, le=1)
    b_per_kmh: float = Field(0.0027, ge=0, le=1)


class BrakeEquipment(Strict):
    """Air-brake equipment of one vehicle: the shoe force of the empirical model (MODELS.md §1) and/or the
    equipment of the pneumatic brake (:mod:`hpcrail.kinds.ltd.brakes`); the block friction μ(V) serves both.
    Without ``shoe_force_kN`` the empirical model uses the pneumatic equipment's block force at its
    full-service cylinder pressure (the two models matched)."""

    shoe_force_kN: Optional[float] = Field(None, ge=0, le=2000, description="total shoe normal force at "
                                           "full-service cylinder pressure (empirical model)")
    shoe_friction: ShoeFriction = ShoeFriction()
    pneumatic: Optional[PneumaticEquipment] = Field(None, description="valve, reservoirs, cylinder, rigging "
                                                    "(pneumatic model)")

    @model_validator(mode="after")
    def _one(self):
        if self.shoe_force_kN is None and self.pneumatic is None:
            raise ConfigValueError("give shoe_force_kN (empirical brake) or a pneumatic block (or both)",
                                   field="shoe_force_kN", allowed="a shoe force in kN, or brake.pneumatic")
        return self


#: largest force of a traction or dynamic-brake curve [kN] (the strongest single units give ~1 MN)
MAX_TRACTION_KN = 3000.0
_SPEED = Annotated[float, Field(ge=0, le=600)]
_FORCE = Annotated[float, Field(ge=0, le=MAX_TRACTION_KN)]


class TractionCurves(Strict):
    """Locomotive characteristic: tractive and dynamic-brake force [kN] vs speed [km/h] per notch.

    ``traction_kN[k]`` is the curve of notch k+1 (notch 0 is zero force); likewise
    ``dynamic_brake_kN``.  Between integer notches (while the notch ramps) forces interpolate
    linearly.  Above the last speed the last value is used.  Accepts the CSV record form
    ``{speed_kmh, traction_notch_1_kN.., dynbrake_notch_1_kN..}`` per row (each cell checked where it
    is, so an error names its row and column).
    """

    speed_kmh: list[_SPEED] = Field(..., max_length=MAX_TABLE_ROWS)
    traction_kN: list[list[_FORCE]] = Field(..., max_length=100)
    dynamic_brake_kN: list[list[_FORCE]] = Field([], max_length=100)

    @model_validator(mode="before")
    @classmethod
    def _from_records(cls, data):
        if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
            keys = list(data[0].keys())
            pat = re.compile(r"^(traction|dynbrake)_notch_([1-9][0-9]?)_kN$")
            allowed = "speed_kmh, traction_notch_<k>_kN, dynbrake_notch_<k>_kN (k = 1, 2, ...)"
            for k in keys:
                if k != "speed_kmh" and not pat.match(str(k)):
                    close = difflib.get_close_matches(str(k), ["speed_kmh", "traction_notch_1_kN",
                                                               "dynbrake_notch_1_kN"], n=1, cutoff=0.6)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    raise ConfigValueError(f"unknown column {k!r}{hint}", field=f"0.{k}", allowed=allowed)
            if "speed_kmh" not in keys:
                raise ConfigValueError("no speed_kmh column", allowed=allowed)
            cols = {"traction": [], "dynbrake": []}
            for k in keys:
                m = pat.match(str(k))
                if m:
                    cols[m.group(1)].append((int(m.group(2)), k))
            for side, c in cols.items():
                nums = sorted(n for n, _ in c)
                if nums != list(range(1, len(nums) + 1)):
                    raise ConfigValueError(f"{side} notch columns must be numbered 1..{len(nums)}",
                                           field=f"0.{sorted(c)[-1][1]}", allowed=f"{side}_notch_1_kN .. "
                                           f"{side}_notch_{len(nums)}_kN")
            limits = {"speed_kmh": (0.0, 600.0)}
            for i, r in enumerate(data):
                if list(r.keys()) != keys:
                    raise ConfigValueError("every row needs the same columns as the first", field=f"{i}",
                                           allowed=", ".join(map(str, keys)))
                for k, v in r.items():
                    lo, hi = limits.get(k, (0.0, MAX_TRACTION_KN))
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                            or not lo <= v <= hi:
                        raise ConfigValueError("not a number within the table's range", field=f"{i}.{k}",
                                               allowed=f"a finite number ≥ {lo:g} and ≤ {hi:g}")
            tr = [k for _, k in sorted(cols["traction"])]
            db = [k for _, k in sorted(cols["dynbrake"])]
            return {"speed_kmh": [r.get("speed_kmh") for r in data],
                    "traction_kN": [[r.get(k) for r in data] for k in tr],
                    "dynamic_brake_kN": [[r.get(k) for r in data] for k in db]}
        return data

    @field_validator("speed_kmh")
    @classmethod
    def _speed(cls, v):
        if len(v) < 2:
            raise ConfigValueError("needs at least two speeds", allowed="a list of at least two speeds from 0 km/h")
        if v[0] != 0:
            raise ConfigValueError("the speed table must start at 0 km/h", allowed="0 as the first speed")
        return strictly_increasing(v, "speed_kmh")

    @model_validator(mode="after")
    def _shapes(self):
        n = len(self.speed_kmh)
        for name in ("traction_kN", "dynamic_brake_kN"):
            for k, row in enumerate(getattr(self, name)):
                if len(row) != n:
                    raise ConfigValueError(f"{name}[{k}] (notch {k + 1}) has {len(row)} values, speed_kmh has {n}",
                                           allowed=f"{n} values per notch (one per speed)")
        if not self.traction_kN:
            raise ConfigValueError("traction_kN needs at least one notch", allowed="one curve per traction notch")
        for k, row in enumerate(self.dynamic_brake_kN):
            if row[0] != 0:
                raise ConfigValueError(f"dynamic_brake_kN[{k}] must be 0 at 0 km/h (a dynamic brake cannot hold a "
                                       "train at standstill)", allowed="0 kN at 0 km/h")
        return self


class Locomotive(Strict):
    """Traction equipment of a locomotive type."""

    curves: TractionCurves
    max_power_kW: Optional[float] = Field(None, gt=0, le=50_000, description="power limit at the top notch "
                                          "(scaled by notch/top notch); None = curves already include it")
    adhesion_coefficient: Optional[float] = Field(None, gt=0, le=1, description="force ≤ μ·m·g")
    notch_rate_per_s: float = Field(0.5, gt=0, le=1e4, description="notch rate limit [notches/s] (1e4: "
                                    "instantaneous at any step)")
    notch_time_constant_s: float = Field(0.2, gt=0, le=100, description="lag of the applied notch near its target")


class VehicleType(Strict):
    kind: Literal["wagon", "locomotive"] = "wagon"
    mass_t: float = Field(..., gt=0, le=1000, description="gross mass (the heaviest single rail vehicles are "
                          "~400 t)")
    length_m: float = Field(..., ge=1, le=100, description="length over coupler pulling faces")
    axles: int = Field(4, ge=1, le=32)
    rotating_mass_fraction: float = Field(0.0, ge=0, le=0.5,
                                          description="equivalent rotating inertia as a fraction of mass")
    davis: Davis = Davis()
    brake: Optional[BrakeEquipment] = None
    traction: Optional[Locomotive] = None
    description: str = ""
    # quasi-static running safety (kinds/ltd/safety.py): geometry, bogies, endurable compressive force
    geometry: VehicleGeometry = VehicleGeometry()
    running_gear: RunningGear = RunningGear()
    endurable_compressive_force_kN: Optional[float] = Field(None, gt=0, le=10_000, description="endurable "
                                                            "longitudinal compressive force (EN 15839; hpcrail lcf)")

    @model_validator(mode="after")
    def _loco(self):
        if self.kind == "locomotive" and self.traction is None:
            raise ValueError("a locomotive needs a 'traction' block (curves per notch)")
        if self.kind == "wagon" and self.traction is not None:
            raise ValueError("a wagon cannot have 'traction'; set kind: locomotive")
        return self


# ------------------------------------------------------------------------------------------------
# consist, route, driver, air brake, numerics
# ------------------------------------------------------------------------------------------------
class RemoteLocomotive(Strict):
    """A remote locomotive consist of distributed power: its locomotives follow the lead's traction and
    dynamic-brake commands, and its driver's brake valve the lead's air-brake commands, after the radio
    delay (each remote its own; default ``distributed_power.radio_delay_s``)."""

    radio_delay_s: Optional[float] = Field(None, ge=0, le=60, description="this remote's radio delay (default: "
                                           "distributed_power.radio_delay_s)")


class DistributedPower(Strict):
    """Distributed power: consist entries marked ``remote`` head remote locomotive consists."""

    radio_delay_s: float = Field(1.0, ge=0, le=60, description="radio delay of every remote without its own")


class ConsistEntry(Strict):
    """``count`` vehicles of ``type``; ``pairs`` joins them two by two with that connection type
    (wagon pairs on drawbars), ``internal`` joins all of them with one type."""

    type: str
    count: int = Field(1, ge=1, le=MAX_VEHICLES)
    pairs: Optional[str] = None
    internal: Optional[str] = None
    remote: Optional[RemoteLocomotive] = Field(None, description="distributed power: the entry's first vehicle "
                                               "(a locomotive) heads a remote consist")

    @model_validator(mode="after")
    def _one(self):
        if self.pairs and self.internal:
            raise ValueError("give at most one of 'pairs' and 'internal'")
        return self


class Connections(Strict):
    default: str = Field(..., description="connection type between entries of the consist")
    at: dict[int, str] = Field({}, description="explicit connection type by coupler number (1 = behind vehicle 1)")


#: shortest route section [km] (0.1 m: finer than any grade or curvature survey)
MIN_SECTION_KM = 1e-4


class RouteSection(Strict):
    start_km: float = Field(..., ge=-100_000, le=100_000, description="chainage of the section start")
    end_km: float = Field(..., ge=-100_000, le=100_000, description="chainage of the section end")
    grade_permille: float = Field(0.0, ge=-60, le=60, description="grade, positive uphill in the direction of "
                                  "travel (adhesion railways stay within ±60 ‰)")
    radius_m: float = Field(0.0, ge=-1e6, le=1e6, description="curve radius, 0 = tangent track")
    cant_mm: float = Field(0.0, ge=0, le=250, description="cant (superelevation of the outer rail) of a curve "
                           "(running safety: cant deficiency)")
    speed_limit_kmh: Optional[float] = Field(None, gt=0, le=600, description="line speed limit (used by driver "
                                             "models and overspeed checks, not by the dynamics)")

    @model_validator(mode="after")
    def _len(self):
        if self.end_km - self.start_km < MIN_SECTION_KM:
            raise ConfigValueError(f"end_km ({self.end_km}) must exceed start_km ({self.start_km}) by at least "
                                   f"{MIN_SECTION_KM * 1e3:g} m", field="end_km",
                                   allowed=f"≥ start_km + {MIN_SECTION_KM:g} km")
        if self.radius_m != 0 and abs(self.radius_m) < 50:
            raise ConfigValueError(f"radius_m = {self.radius_m} is below 50 m", field="radius_m",
                                   allowed="0 (tangent track) or 50 ≤ |radius_m| ≤ 1e6 m")
        return self


class Route(Strict):
    """Grade and curvature along the track; sections must be contiguous.  Each vehicle sees the grade
    and curvature averaged over its own length at its own position."""

    sections: list[RouteSection] = Field(..., min_length=1, max_length=MAX_TABLE_ROWS)
    start_m: float = Field(0.0, ge=-1e8, le=1e8, description="initial position of the front of the train along "
                           "the route")
    rail_spacing_m: float = Field(1.5, ge=0.5, le=2.5, description="distance of the rails' contact points (1.5 m "
                                  "at standard gauge; running safety)")

    @model_validator(mode="after")
    def _contiguous(self):
        for i in range(1, len(self.sections)):
            a, b = self.sections[i - 1], self.sections[i]
            if abs(a.end_km - b.start_km) > 1e-9:
                raise ConfigValueError(f"sections {i} and {i + 1} are not contiguous "
                                       f"(end_km {a.end_km} ≠ start_km {b.start_km})", field=f"sections.{i}.start_km",
                                       allowed=f"{a.end_km} (the end_km of the section before)")
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

    time_s: Optional[float] = Field(None, ge=0, le=MAX_DURATION_S)
    distance_m: Optional[float] = Field(None, ge=0, le=1e8)
    notch: Optional[float] = Field(None, ge=-100, le=100)
    traction_notch: Optional[float] = Field(None, ge=0, le=100)
    dynbrake_notch: Optional[float] = Field(None, ge=0, le=100)
    brake: Optional[float | Literal["emergency"]] = None
    independent_brake: Optional[float] = Field(None, ge=0, le=1, description="locomotives' independent brake, "
                                               "fraction of its maximum (pneumatic brake)")

    @model_validator(mode="after")
    def _check(self):
        if (self.time_s is None) == (self.distance_m is None):
            raise ConfigValueError("give exactly one of time_s and distance_m", allowed="time_s or distance_m")
        if self.notch is not None and (self.traction_notch is not None or self.dynbrake_notch is not None):
            raise ConfigValueError("give either notch or traction_notch/dynbrake_notch", field="notch",
                                   allowed="notch alone, or traction_notch/dynbrake_notch without notch")
        if (self.traction_notch or 0) > 0 and (self.dynbrake_notch or 0) > 0:
            raise ConfigValueError("traction_notch and dynbrake_notch cannot both be engaged", field="dynbrake_notch",
                                   allowed="0 while traction_notch > 0")
        if isinstance(self.brake, float) and not 0 <= self.brake <= 1:
            raise ConfigValueError("brake must be a fraction of full service or 'emergency'", field="brake",
                                   allowed="0 ≤ brake ≤ 1 or 'emergency'")
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
    commands: list[Command] = Field(..., min_length=1, max_length=MAX_TABLE_ROWS)

    @model_validator(mode="after")
    def _check(self):
        key = "time_s" if self.basis == "time" else "distance_m"
        ats = []
        for i, c in enumerate(self.commands):
            if getattr(c, key) is None:
                raise ConfigValueError(f"command {i} has no {key} (driver.basis is {self.basis!r})",
                                       field=f"commands.{i}", allowed=f"a command with {key}")
            ats.append(getattr(c, key))
        d = np.diff(ats)
        if np.any(d < 0):
            i = int(np.argmax(d < 0)) + 1
            raise ConfigValueError(f"commands must be sorted by {key}", field=f"commands.{i}.{key}",
                                   allowed=f"≥ {ats[i - 1]} (the command before)")
        return self


class AirBrake(Strict):
    """Air brake.  ``model: empirical`` (the Wu et al. 2021 family cited by Bosso et al. 2024): the brake-pipe
    signal propagates from the lead vehicle at the propagation speed (modelled as a chain of first-order
    lags, one per vehicle, whose delays add up to distance/speed), cylinders fill with a first-order
    lag, shoes produce μ(V)·N.  ``model: pneumatic``: the brake pipe as 1-D compressible flow, the valves,
    reservoirs and cylinders of every vehicle, driver's brake valves, EOT and ECP
    (:mod:`hpcrail.kinds.ltd.brakes`; the fields below ``model`` are the empirical model's)."""

    enabled: bool = False
    model: Literal["empirical", "pneumatic"] = "empirical"
    pneumatic: PneumaticSystem = PneumaticSystem()
    service_propagation_mps: float = Field(200.0, gt=0, le=1000)
    emergency_propagation_mps: float = Field(280.0, gt=0, le=1000)
    release_propagation_mps: float = Field(150.0, gt=0, le=1000)
    full_service_pressure_kPa: float = Field(420.0, gt=0, le=2000)
    emergency_pressure_ratio: float = Field(1.2, ge=1, le=5, description="emergency cylinder pressure / full service")
    apply_time_constant_s: float = Field(4.0, gt=0, le=1000)
    emergency_time_constant_s: float = Field(2.0, gt=0, le=1000)
    release_time_constant_s: float = Field(10.0, gt=0, le=1000)


class Output(Strict):
    interval_s: float = Field(1.0, ge=1e-6, le=MAX_DURATION_S, description="sampling interval of the time series")
    reference_coupler: Optional[int] = Field(None, ge=1, le=MAX_VEHICLES, description="coupler for the deflection "
                                             "metrics "
                                             "(default: the coupler of the largest draft force)")
    energy: bool = Field(True, description="integrate traction, resistance, brake and coupler work")
    running_safety: RunningSafety = RunningSafety()
    envelope_check: EnvelopeCheck = Field(EnvelopeCheck(), description="after the run, re-integrate the windows of "
                                          "the largest draft and buff peaks with a reference setting and report "
                                          "each peak's relative difference")


class Simulation(Strict):
    duration_s: float = Field(..., gt=0, le=MAX_DURATION_S)
    initial_speed_kmh: float = Field(0.0, ge=0, le=600)
    initial_notch: float = Field(0.0, ge=-100, le=100, description="applied notch at t = 0 (+ traction, − dynamic "
                                 "brake): "
                                 "a train already under power, or a traction force applied as a step "
                                 "(Oprea 2018's start-up case)")


class FrictionNumerics(Strict):
    """Integration of the dry friction of ``kind: friction`` connections (Oprea 2018).

    ``event_driven``: stick/slip modes chosen by Gauss's principle / the generalised inverse with
    the iteration of Oprea 2018 §4.1, the smooth ODE between events integrated by
    ``integrator.method``, events (stick→slip when |T_s| reaches T_sMax, slip→stick when |ė| enters
    the Karnopp band η) located to ``event_tolerance_s``.  ``regularised``: the friction force is the
    smooth law T_kin(|ė|)·s(ė/w), s = tanh or linear-in-band, integrated like any LTD model.
    """

    treatment: Literal["event_driven", "regularised"] = "event_driven"
    stick_band_mps: float = Field(1e-4, gt=0, le=1, description="Karnopp band η: sticking while |ė| < η "
                                  "(also the band in which the stick phases of either treatment are counted)")
    stick_velocity: Literal["project", "keep"] = Field(
        "project", description="at slip→stick: 'project' removes the remaining relative velocity of the new "
        "rigid cluster (momentum-conserving, Gauss's principle at velocity level); 'keep' leaves the offset "
        "|ė| < η as in Oprea 2018 §3.1 (deflections then drift at that rate while sticking)")
    event_tolerance_s: float = Field(1e-10, ge=1e-15, le=1, description="event location tolerance")
    max_events: int = Field(1_000_000, ge=1, le=1_000_000_000, description="limit on the number of stick/slip "
                            "events")
    max_mode_changes: int = Field(2_000_000, ge=1, le=20_000_000, description="capacity of the log of connection "
                                  "mode changes (allocated: 24 bytes each)")
    regularisation: Literal["tanh", "linear"] = Field("tanh", description="regularised law s(ė/w)")
    regularisation_width_mps: float = Field(1e-3, gt=0, le=1, description="regularisation width w")
    stick_min_duration_s: float = Field(0.01, ge=0, le=1000, description="a stay inside the band counts as a stick "
                                        "phase "
                                        "when it lasts at least this long (both treatments)")


class Numerics(Strict):
    standstill_time_constant_s: float = Field(
        0.005, gt=0, le=10, description="Standstill (static-friction) treatment of running resistance and "
        "brakes: below breakaway the friction cancels the applied force and damps the speed with this "
        "time constant; it never pushes a vehicle backwards")


class PartitionSpec(Strict):
    """Hidden-vehicle partition of the consist (Bosso et al. 2024 §2, MODELS.md §2).

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
    blocks: Optional[int] = Field(None, ge=1, le=MAX_VEHICLES, description="number of hidden-vehicle blocks "
                                  "(default: one per thread or MPI rank)")
    boundary_vehicles: Optional[list[int]] = Field(None, min_length=2, max_length=MAX_VEHICLES,
                                                   description="explicit boundary vehicles (1 = head), strictly "
                                                   "increasing")
    threads: Optional[int] = Field(None, ge=1, le=4096, description="numba threads for backend threads (default: "
                                   "all)")
    state: Literal["auto", "distributed", "shared"] = Field(
        "auto", description="threads and mpi backends: distributed: every worker integrates its own blocks' "
        "states (every method that runs on blocks, `hpcrail integrators`; RK4 gives the monolithic result "
        "bitwise, adaptive methods a second solution within their tolerance: see docs/hpc.md for the measured "
        "difference); shared: one integrator drives the parallel right-hand side (every method); auto: "
        "distributed where the method runs on blocks")
    auto_min_vehicles: int = Field(20_000, ge=2, le=1_000_000_000, description="break-even train length of backend "
                                   "auto "
                                   "(measured: benchmarks/partition.py, docs/performance.md)")
    multirate_block_vehicles: int = Field(32, ge=2, le=MAX_VEHICLES, description="vehicles per block of a multirate "
                                          "method (mrbdf2): the blocks that step at their own rates")

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
    consist: list[ConsistEntry] = Field(..., min_length=1, max_length=MAX_TABLE_ROWS)
    connections: Connections
    route: Route
    driver: Driver
    air_brake: AirBrake = AirBrake()
    distributed_power: DistributedPower = DistributedPower()
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
    issues, add = issue_collector(doc)

    vt, ct = sc.vehicle_types, sc.connection_types
    for i, e in enumerate(sc.consist):
        if e.type not in vt:
            add(("consist", i, "type"), "unknown vehicle type", e.type, ", ".join(sorted(vt)))
        for key in ("pairs", "internal"):
            v = getattr(e, key)
            if v is not None and v not in ct:
                add(("consist", i, key), "unknown connection type", v, ", ".join(sorted(ct)))
        if e.pairs and e.count % 2:
            add(("consist", i, "count"), "an entry joined in pairs needs an even count", e.count, "an even count")
    if sc.connections.default not in ct:
        add(("connections", "default"), "unknown connection type", sc.connections.default, ", ".join(sorted(ct)))
    n_veh = sum(e.count for e in sc.consist)
    if n_veh < 2:
        add(("consist",), "a consist needs at least two vehicles", n_veh, "≥ 2 vehicles")
    if n_veh > MAX_VEHICLES:
        add(("consist",), "too many vehicles", n_veh, f"≤ {MAX_VEHICLES} vehicles in all")
        return issues
    for num, t in sc.connections.at.items():
        if t not in ct:
            add(("connections", "at", num), "unknown connection type", t, ", ".join(sorted(ct)))
        if not 1 <= num <= n_veh - 1:
            add(("connections", "at", num), "coupler number out of range", num, f"1..{n_veh - 1}")
    if not any(vt[e.type].kind == "locomotive" for e in sc.consist if e.type in vt):
        add(("consist",), "the consist has no locomotive", [e.type for e in sc.consist],
            "at least one entry of a vehicle type with kind: locomotive")
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
                add(("driver", "commands", i, "brake"), "a brake command needs air_brake.enabled: true", c.brake,
                    "0 (no air brake), or air_brake.enabled: true")
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
                    allowed="a brake block {shoe_force_kN: ...}", has_value=False)
    n0 = sc.simulation.initial_notch
    if n0 != 0:
        for t in sorted({e.type for e in sc.consist if e.type in vt and vt[e.type].kind == "locomotive"}):
            tr = vt[t].traction
            top = len(tr.curves.traction_kN) if n0 >= 0 else len(tr.curves.dynamic_brake_kN)
            if abs(n0) > top:
                add(("simulation", "initial_notch"), f"notch beyond the notches of locomotive type {t!r}", n0,
                    f"-{len(tr.curves.dynamic_brake_kN)}..{len(tr.curves.traction_kN)}")
    from hpcrail.kinds.ltd.brakes import empirical_issues, pneumatic_issues

    pneumatic_issues(sc, add)
    empirical_issues(sc, add)
    from hpcrail.partition.layout import partition_issues

    for loc, msg, value, allowed in partition_issues(sc.partition, n_veh):
        add(("partition",) + loc, msg, value, allowed)
    if sc.partition.backend in ("threads", "mpi"):
        from hpcrail.kinds.ltd.couplers import partitionable_laws, unpartitionable_laws

        bad = unpartitionable_laws(sc)
        if bad:
            add(("partition", "backend"), f"hidden-vehicle blocks evaluate table-law connections only; this consist "
                f"uses {', '.join(bad)} connections (use backend off)", sc.partition.backend,
                f"off or auto with connection kinds {', '.join(partitionable_laws())}")
    if sc.partition.state == "distributed":
        from hpcrail.config.integrator import block_methods, method_spec

        if not method_spec(sc.integrator.method).blocks:
            add(("partition", "state"), f"integrator {sc.integrator.method!r} does not run on blocks (distributed "
                "state)", sc.partition.state, f"shared or auto, or integrator.method one of {', '.join(block_methods())}")
    from hpcrail.config.integrator import method_spec as _mspec

    if _mspec(sc.integrator.method).multirate:
        from hpcrail.kinds.ltd.couplers import partitionable_laws, unpartitionable_laws

        if sc.partition.backend in ("threads", "mpi"):
            add(("partition", "backend"), f"the multirate integrator {sc.integrator.method!r} walks its blocks on one "
                "core (partition.multirate_block_vehicles)", sc.partition.backend, "off or auto")
        bad = unpartitionable_laws(sc)
        if bad:
            add(("integrator", "method"), f"the multirate integrator evaluates blocks of table-law connections only; "
                f"this consist uses {', '.join(bad)} connections", sc.integrator.method,
                "a single-rate method (bdf2, trbdf2, ...)")
    it = sc.integrator
    if it.step_s is not None and it.step_s > sc.simulation.duration_s:
        add(("integrator", "step_s"), "step longer than the simulation", it.step_s,
            f"≤ {sc.simulation.duration_s:g} s (simulation.duration_s)")
    why = steps_issue(it.method, it.step_s, sc.simulation.duration_s, it.max_steps)
    if why:
        add(("integrator", "step_s"), why, it.step_s,
            f"≥ {sc.simulation.duration_s / it.max_steps:.3g} s, or a larger integrator.max_steps")
    why = samples_issue(sc.simulation.duration_s, sc.output.interval_s, n_veh)
    if why:
        add(("output", "interval_s"), f"the run would store {why}", sc.output.interval_s,
            f"≥ {sc.simulation.duration_s / min(MAX_SAMPLES, MAX_SERIES_VALUES / n_veh):.3g} s for this duration "
            "and train")
    from hpcrail.kinds.ltd.safety import safety_issues

    safety_issues(sc, add)
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
