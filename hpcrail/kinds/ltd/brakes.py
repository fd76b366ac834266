"""The pneumatic brake of an LTD scenario: the brake-valve table (one entry per valve type, the pattern of
:mod:`hpcrail.kinds.ltd.couplers`), the vehicles' brake equipment and the train's brake system (YAML).

A vehicle type's ``brake.pneumatic`` block gives its equipment: the valve (``valve.kind`` selects its
entry in :data:`VALVES`), the auxiliary reservoir, the cylinder(s) with their volume growth and stroke,
the rigging, an empty/load changeover and, for locomotives, the driver's brake valve and the independent
brake.  The scenario's ``air_brake: {model: pneumatic, pneumatic: {...}}`` block gives the brake pipe,
train control (conventional or ECP), the EOT device, a train separation and the metrics' thresholds.

Each :class:`BrakeValve` entry gives

* ``schema`` — the pydantic class of the valve's YAML block;
* ``branch`` — the kernel branch evaluating it (``layout.K_*`` of :mod:`hpcrail.models.brakes.layout`);
* ``pack`` — its parameter row (``VP_*`` columns, SI) from the block and the system (conductances);
* ``states`` — its states beyond the auxiliary reservoir and the cylinder, and ``volumes`` their air
  volumes [m³] (0: a control state);
* ``jacobian`` — ``analytic`` (entries written by :func:`hpcrail.models.brakes.kernel.brake_jac_range`);
* ``cylinder_pressures`` — the full-service and emergency cylinder gauge pressures of a vehicle (bar),
  used by the ECP overlay and to match the empirical brake;
* ``extra_outputs`` — the LTD outputs a consist using the valve adds.

Adding a valve: its schema and entry here, its branch in ``models/brakes/kernel.py`` (right-hand side and
Jacobian in one function) and its structural pattern in ``models/brakes/layout.local_pattern``; the tests
compare the analytic Jacobian with finite differences for every entry of :data:`VALVES`.

No numba here: the schema of an LTD scenario is built from this table when a YAML is validated.
Sources: UIC 540, EN 15355 (distributors), AAR S-400 family (control valves), as summarised in
docs/models.md; values without a public source are marked ASSUMED in ``configs/brakes/``.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Annotated, Callable, Literal, Optional, Union

from pydantic import Discriminator, Field, Tag, model_validator

from hpcrail.config.base import Strict
from hpcrail.config.errors import ConfigValueError
from hpcrail.models.brakes import layout as L
from hpcrail.models.brakes.layout import K_AAR, K_CUT, K_UIC

BAR = 1e5                #: Pa per bar
P_ATM = 101_325.0        #: standard atmosphere [Pa] (absolute pressure of the vented parts)
R_AIR = 287.05           #: specific gas constant of dry air [J/(kg·K)]
KAPPA = 1.4              #: ratio of specific heats of air (orifice law only; the pipe is isothermal)
MU_AIR = 1.81e-5         #: dynamic viscosity of air at 20 °C [Pa·s]

_MM = Annotated[float, Field(gt=0, le=200, description="equivalent orifice diameter [mm]")]
_BAR = Annotated[float, Field(ge=0, le=20)]


def sonic_conductance(diameter_mm: float, cd: float, temperature_K: float) -> float:
    """Mass-flow conductance C [kg/(s·Pa)] of an orifice of ``diameter_mm`` and discharge coefficient
    ``cd``: choked flow ṁ = C·p_up = C_d A p_up √(κ/(R T)) (2/(κ+1))^((κ+1)/(2(κ−1))) (ISO 6358 / de Saint-
    Venant; κ = 1.4)."""
    a = math.pi * (diameter_mm * 1e-3) ** 2 / 4
    crit = (2 / (KAPPA + 1)) ** ((KAPPA + 1) / (2 * (KAPPA - 1)))
    return cd * a * math.sqrt(KAPPA / (R_AIR * temperature_K)) * crit


# ------------------------------------------------------------------------------------------------
# valve blocks
# ------------------------------------------------------------------------------------------------
class UICChokes(Strict):
    """Chokes of a UIC distributor [mm equivalent diameter]; ``apply_*``/``release_*`` per brake setting (the
    defaults: configs/brakes/valves/uic_distributor.yaml, ASSUMED, sized to the UIC 540 bands)."""

    auxiliary_charge: _MM = 2.0
    control_charge: _MM = 0.6
    apply_G: _MM = 2.0
    apply_P: _MM = 5.0
    release_G: _MM = 1.75
    release_P: _MM = 3.05
    quick_service_in: _MM = 3.0
    quick_service_out: _MM = 0.8


class UICDistributor(Strict):
    """UIC distributor (UIC 540 / EN 15355 behaviour): the cylinder pressure follows the brake-pipe
    reduction below the control reservoir (graduated application and graduated release), up to the
    maximum; a quick-service chamber draws pipe air at the start of an application (local acceleration of
    the front); the control reservoir follows slow pipe changes in the release position through its
    charging choke (insensitivity to leakage); G/P settings change the application and release chokes."""

    kind: Literal["uic_distributor"] = "uic_distributor"
    setting: Literal["G", "P"] = Field("G", description="brake setting: G (goods, slow) or P (passenger, fast)")
    control_reservoir_l: float = Field(9.0, gt=0, le=200)
    quick_service_chamber_l: float = Field(1.0, gt=0, le=50)
    max_cylinder_pressure_bar: float = Field(3.8, gt=0, le=10, description="cylinder gauge pressure at full "
                                             "service and emergency")
    full_service_reduction_bar: float = Field(1.5, gt=0, le=6, description="pipe reduction giving the maximum "
                                              "cylinder pressure (5 → 3.5 bar)")
    sensitivity_bar: float = Field(0.1, gt=0, le=1, description="reduction below the control reservoir at "
                                   "which the distributor leaves the release position")
    quick_service_cutoff_bar: float = Field(0.6, ge=0, le=5, description="cylinder gauge pressure above which "
                                            "the quick service closes")
    band_bar: float = Field(0.05, gt=0, le=1, description="proportional band of the relay portion")
    chokes_mm: UICChokes = UICChokes()


class AARChokes(Strict):
    """Chokes of an AAR control valve [mm equivalent diameter]."""

    auxiliary_charge: _MM = 1.2
    emergency_charge: _MM = 1.2
    apply: _MM = 3.0
    exhaust: _MM = 2.0
    quick_action: _MM = 1.2
    vent: _MM = 22.0
    quick_action_vent: _MM = 0.6
    emergency_apply: _MM = 4.0
    quick_service: _MM = 2.0


class AARControlValve(Strict):
    """AAR control valve (ABD/ABDW/ABDX family): the service portion compares the brake pipe with the
    auxiliary reservoir (application: reservoir → cylinder until the reservoir falls to the pipe pressure,
    lap; direct release: any pipe rise above the reservoir vents the cylinder completely and recharges the
    reservoir); quick service draws pipe air into the cylinder; the emergency portion senses the pipe's
    rate of fall against its quick-action chamber, vents the pipe locally (accelerated emergency) and
    connects the emergency reservoir to the cylinder (both ways: reservoirs and cylinder equalise)."""

    kind: Literal["aar_control_valve"] = "aar_control_valve"
    emergency_reservoir_l: float = Field(57.4, gt=0, le=500, description="3500 in³")
    quick_action_chamber_l: float = Field(1.0, gt=0, le=50)
    application_sensitivity_bar: float = Field(0.1, gt=0, le=1)
    release_sensitivity_bar: float = Field(0.1, gt=0, le=1)
    emergency_sensitivity_bar: float = Field(0.3, gt=0, le=5, description="quick-action chamber above the pipe "
                                             "that fires the emergency portion")
    emergency_reset_bar: float = Field(1.4, ge=0, le=10, description="pipe gauge pressure above which the "
                                       "emergency portion resets")
    vent_close_bar: float = Field(0.3, ge=0, le=10, description="quick-action chamber gauge pressure below which "
                                  "the vent valve closes")
    quick_service_limit_bar: float = Field(0.7, ge=0, le=5, description="cylinder gauge pressure up to which quick "
                                           "service feeds pipe air into the cylinder")
    service_piston_time_s: float = Field(0.1, gt=0, le=10, description="time constant of the service piston")
    emergency_piston_time_s: float = Field(0.02, gt=0, le=10, description="time constant of the emergency piston "
                                           "(the latch that opens the vent valve)")
    lap_band_bar: float = Field(0.05, gt=0, le=1)
    band_bar: float = Field(0.05, gt=0, le=1)
    chokes_mm: AARChokes = AARChokes()


class CutOut(Strict):
    """Brake cut out (the vehicle's isolating cock closed): the brake pipe passes through the vehicle, its
    valve, reservoir and cylinder take no part (a vehicle with a defective brake, or a pipe-only vehicle)."""

    kind: Literal["cut_out"] = "cut_out"


# ------------------------------------------------------------------------------------------------
# vehicle equipment
# ------------------------------------------------------------------------------------------------
class Cylinder(Strict):
    """Brake cylinder(s) of a vehicle: the piston moves against its return spring (volume grows with the
    stroke) until the blocks touch, then the rigging deflects elastically."""

    diameter_mm: float = Field(..., gt=0, le=1000)
    count: int = Field(1, ge=1, le=32, description="identical cylinders (one equivalent cylinder)")
    dead_volume_l: float = Field(1.5, gt=0, le=100, description="volume at rest (piston home), per cylinder")
    stroke_mm: float = Field(100.0, ge=0, le=500, description="piston travel until the blocks touch")
    return_spring_preload_kN: float = Field(1.5, ge=0, le=100)
    return_spring_rate_kN_per_mm: float = Field(0.01, ge=0, le=100)
    rigging_stiffness_kN_per_mm: float = Field(10.0, gt=0, le=1e4, description="stiffness of the rigging seen "
                                               "at the piston after block contact")


class Rigging(Strict):
    ratio: float = Field(..., gt=0, le=100, description="total block force / piston force (all blocks)")
    efficiency: float = Field(0.83, gt=0, le=1)


class EmptyLoad(Strict):
    """Empty/load changeover: below ``changeover_mass_t`` the block force is ``empty_force_ratio`` of the loaded
    one (UIC changeover valve / AAR empty-load device, as a factor on the force)."""

    changeover_mass_t: float = Field(..., gt=0, le=1000)
    empty_force_ratio: float = Field(..., gt=0, le=1)


class DriverBrakeValve(Strict):
    """Driver's brake valve of a locomotive: equalising reservoir (moved to the commanded pressure at the
    service / release / emergency rates) and relay valve charging the pipe from the main reservoir through
    the feed valve or venting it; emergency position vents the pipe directly."""

    feed_pressure_bar: float = Field(5.0, gt=0, le=12, description="charged brake-pipe gauge pressure")
    main_reservoir_bar: float = Field(9.0, gt=0, le=15)
    full_service_reduction_bar: float = Field(1.5, gt=0, le=6)
    service_rate_bar_per_s: float = Field(0.4, gt=0, le=10, description="equalising-reservoir reduction rate")
    release_rate_bar_per_s: float = Field(2.0, gt=0, le=20)
    emergency_rate_bar_per_s: float = Field(20.0, gt=0, le=200)
    equalising_time_constant_s: float = Field(0.3, gt=0, le=10)
    relay_band_bar: float = Field(0.02, gt=0, le=1)
    supply_mm: float = Field(10.0, gt=0, le=100, description="relay supply (feed valve capacity)")
    exhaust_mm: float = Field(8.0, gt=0, le=100)
    emergency_vent_mm: float = Field(25.0, gt=0, le=100)

    @model_validator(mode="after")
    def _mr(self):
        if self.main_reservoir_bar <= self.feed_pressure_bar:
            raise ConfigValueError("the main reservoir must be above the feed pressure", field="main_reservoir_bar",
                                   allowed=f"> {self.feed_pressure_bar} bar (feed_pressure_bar)")
        if self.full_service_reduction_bar >= self.feed_pressure_bar:
            raise ConfigValueError("the full-service reduction must be below the feed pressure",
                                   field="full_service_reduction_bar", allowed=f"< {self.feed_pressure_bar} bar")
        return self


class IndependentBrake(Strict):
    """Locomotive independent (direct) brake: its cylinder pressure follows the command (fraction of the
    maximum) with a first-order lag; the rigging sees the larger of it and the automatic brake."""

    max_pressure_bar: float = Field(3.8, gt=0, le=10)
    time_constant_s: float = Field(2.0, gt=0, le=100)


def _valve_kind(v):
    if isinstance(v, dict):
        return v.get("kind", "uic_distributor")
    return getattr(v, "kind", None)


class PneumaticEquipment(Strict):
    """Pneumatic brake equipment of a vehicle type (the kernel's data; see the module docstring)."""

    valve: Annotated[Union[Annotated[UICDistributor, Tag("uic_distributor")],
                           Annotated[AARControlValve, Tag("aar_control_valve")],
                           Annotated[CutOut, Tag("cut_out")]], Discriminator(_valve_kind)]
    auxiliary_reservoir_l: float = Field(..., gt=0, le=2000)
    branch_volume_l: float = Field(1.5, ge=0, le=100, description="volume connected to the brake pipe at the valve "
                                   "without a choke (branch pipe, dirt collector, the valve's pipe chamber): it adds "
                                   "to the valve's pipe cell and slows the pressure waves")
    cylinder: Cylinder
    rigging: Rigging
    empty_load: Optional[EmptyLoad] = None
    driver_brake_valve: Optional[DriverBrakeValve] = None
    independent_brake: Optional[IndependentBrake] = None


# ------------------------------------------------------------------------------------------------
# train brake system (air_brake.pneumatic)
# ------------------------------------------------------------------------------------------------
class BrakePipe(Strict):
    inner_diameter_mm: float = Field(32.0, gt=5, le=100)
    cells_per_vehicle: int = Field(2, ge=1, le=16, description="finite volumes per vehicle")
    roughness_mm: float = Field(0.05, ge=0, le=5, description="wall roughness (fully rough floor of the Darcy "
                                "factor)")
    darcy_friction_factor: Optional[float] = Field(None, gt=0, le=1, description="constant Darcy factor "
                                                   "instead of max(64/Re, Blasius, fully rough)")
    coupling_loss_coefficient: float = Field(1.5, ge=0, le=100, description="loss coefficient K of a hose "
                                             "coupling (hoses, angle cocks, coupling heads)")
    leakage_bar_per_min: float = Field(0.0, ge=0, le=10, description="pressure fall of an isolated pipe at the "
                                       "charged pressure (uniform leakage)")


class ECPSettings(Strict):
    delay_s: float = Field(0.1, ge=0, le=60, description="delay of the electric command at every vehicle")
    pipe_emergency_below_bar: float = Field(2.0, ge=0, le=10, description="pipe gauge pressure below which the "
                                            "car applies emergency (backup)")


class EOTDevice(Strict):
    kind: Literal["none", "one_way", "two_way"] = Field("none", description="one_way: rear pipe pressure telemetry "
                                                         "(an output); two_way: also vents the pipe at the rear on an "
                                                         "emergency command")
    radio_delay_s: float = Field(1.0, ge=0, le=60)
    vent_diameter_mm: float = Field(20.0, gt=0, le=100)


class Separation(Strict):
    """Train separation / burst hose: the pipe parts at coupler ``coupler`` at ``time_s``; both ends vent to
    the atmosphere through the open hose while the opening ramps up over ``opening_time_s``."""

    coupler: int = Field(..., ge=1, description="coupler k between vehicles k and k+1")
    time_s: float = Field(..., ge=0)
    opening_time_s: float = Field(0.05, gt=0, le=10)
    hose_diameter_mm: float = Field(25.0, gt=0, le=100)


class BrakeMetricSettings(Strict):
    front_threshold_bar: float = Field(0.3, gt=0, le=5, description="pipe fall below its value at the command "
                                       "that marks the front's arrival at a vehicle")
    release_end_bar: float = Field(0.4, ge=0, le=5, description="cylinder gauge pressure ending a release (EN 15355)")
    standstill_speed_mps: float = Field(0.01, gt=0, le=1)


class PneumaticSystem(Strict):
    """Brake pipe, train control and devices of the pneumatic brake (``air_brake.pneumatic``)."""

    pipe: BrakePipe = BrakePipe()
    control: Literal["conventional", "ecp"] = Field("conventional", description="ecp: the electric command reaches "
                                                    "every vehicle; the pipe only supplies air")
    ecp: ECPSettings = ECPSettings()
    eot: EOTDevice = EOTDevice()
    separation: Optional[Separation] = None
    jacobian: Literal["reduced", "full"] = Field("reduced", description="the brake entries the implicit "
                                                 "integrators use: reduced (the pipe and every state's diagonal; one "
                                                 "narrow band, the air balance to the Newton tolerance) or full (every "
                                                 "entry; the air balance to rounding)")
    passes: Literal["one", "two"] = Field("one", description="one: brake system and motion integrated together; "
                                          "two: the brake system first, then the motion with the recorded cylinder "
                                          "pressures (exact for a time-based schedule, where the brake does not "
                                          "depend on the motion; hpcrail.kinds.ltd.two_pass)")
    temperature_C: float = Field(20.0, ge=-50, le=60)
    discharge_coefficient: float = Field(0.8, gt=0, le=1, description="of every choke and orifice")
    metrics: BrakeMetricSettings = BrakeMetricSettings()


# ------------------------------------------------------------------------------------------------
# the valve table
# ------------------------------------------------------------------------------------------------
def cylinder_geometry(eq: PneumaticEquipment) -> dict:
    """SI geometry of the equivalent cylinder: area [m²], dead volume and volume at contact [m³], the gauge
    pressures where the piston starts moving and where the blocks touch [Pa], and dV/dp after contact."""
    c = eq.cylinder
    area = c.count * math.pi * (c.diameter_mm * 1e-3) ** 2 / 4
    v0 = c.count * c.dead_volume_l * 1e-3
    stroke = c.stroke_mm * 1e-3
    ps = c.count * c.return_spring_preload_kN * 1e3 / area
    pc = ps + c.count * c.return_spring_rate_kN_per_mm * 1e6 * stroke / area
    if stroke > 0 and pc <= ps:
        pc = ps + 1.0   # a spring without rate: the take-up happens over 1 Pa
    vc = v0 + area * stroke
    a3 = area * area / (c.count * c.rigging_stiffness_kN_per_mm * 1e6)
    return dict(area=area, v0=v0, vc=vc, ps=ps, pc=pc, a3=a3)


def cylinder_volume(eq: PneumaticEquipment, p_gauge: float) -> float:
    """Cylinder volume [m³] at gauge pressure ``p_gauge`` [Pa] (the kernel's piecewise-linear V(p))."""
    g = cylinder_geometry(eq)
    if p_gauge <= g["ps"]:
        return g["v0"]
    if p_gauge <= g["pc"]:
        return g["v0"] + (g["vc"] - g["v0"]) * (p_gauge - g["ps"]) / (g["pc"] - g["ps"])
    return g["vc"] + g["a3"] * (p_gauge - g["pc"])


def equalisation_pressure(eq: PneumaticEquipment, p_res_gauge: float, volume_l: float) -> float:
    """Gauge pressure [Pa] at which a reservoir of ``volume_l`` charged to ``p_res_gauge`` and the empty
    cylinder (atmospheric, piston home) equalise (isothermal: p_r V_r + p_atm V_0 = p (V_r + V(p)))."""
    from scipy.optimize import brentq

    vr = volume_l * 1e-3
    g = cylinder_geometry(eq)
    m = (p_res_gauge + P_ATM) * vr + P_ATM * g["v0"]
    return brentq(lambda pg: (pg + P_ATM) * (vr + cylinder_volume(eq, pg)) - m, 0.0, p_res_gauge)


def _uic_pressures(eq: PneumaticEquipment, feed_bar: float) -> tuple[float, float]:
    v = eq.valve
    return v.max_cylinder_pressure_bar, v.max_cylinder_pressure_bar


def _aar_pressures(eq: PneumaticEquipment, feed_bar: float) -> tuple[float, float]:
    """Full service: the auxiliary reservoir and the cylinder equalise (AAR practice: ~64 psi from 90 psi);
    emergency: the auxiliary and emergency reservoirs together."""
    fs = equalisation_pressure(eq, feed_bar * BAR, eq.auxiliary_reservoir_l) / BAR
    em = equalisation_pressure(eq, feed_bar * BAR, eq.auxiliary_reservoir_l + eq.valve.emergency_reservoir_l) / BAR
    return fs, em


def _pack_uic(v: UICDistributor, cond: Callable) -> dict:
    ch = v.chokes_mm
    return {L.VP_CAR: cond(ch.auxiliary_charge), L.VP_CAPP: cond(ch.apply_G if v.setting == "G" else ch.apply_P),
            L.VP_CREL: cond(ch.release_G if v.setting == "G" else ch.release_P), L.VP_BAND: v.band_bar * BAR,
            L.VP_U_CCR: cond(ch.control_charge), L.VP_U_CQI: cond(ch.quick_service_in),
            L.VP_U_CQO: cond(ch.quick_service_out),
            L.VP_U_RATIO: v.max_cylinder_pressure_bar / v.full_service_reduction_bar,
            L.VP_U_PMAX: v.max_cylinder_pressure_bar * BAR, L.VP_U_DAPP: v.sensitivity_bar * BAR,
            L.VP_U_QSCUT: v.quick_service_cutoff_bar * BAR}


def _pack_aar(v: AARControlValve, cond: Callable) -> dict:
    ch = v.chokes_mm
    return {L.VP_CAR: cond(ch.auxiliary_charge), L.VP_CAPP: cond(ch.apply), L.VP_CREL: cond(ch.exhaust),
            L.VP_BAND: v.band_bar * BAR, L.VP_A_CER: cond(ch.emergency_charge), L.VP_A_CQA: cond(ch.quick_action),
            L.VP_A_CVENT: cond(ch.vent), L.VP_A_CQAV: cond(ch.quick_action_vent),
            L.VP_A_CERB: cond(ch.emergency_apply), L.VP_A_CQS: cond(ch.quick_service),
            L.VP_A_DAPP: v.application_sensitivity_bar * BAR, L.VP_A_DREL: v.release_sensitivity_bar * BAR,
            L.VP_A_DEM: v.emergency_sensitivity_bar * BAR, L.VP_A_RESET: v.emergency_reset_bar * BAR,
            L.VP_A_VCLOSE: v.vent_close_bar * BAR, L.VP_A_QSLIM: v.quick_service_limit_bar * BAR,
            L.VP_A_RATE: 1.0 / v.service_piston_time_s, L.VP_A_RATE_E: 1.0 / v.emergency_piston_time_s,
            L.VP_A_WLAP: v.lap_band_bar * BAR}


@dataclasses.dataclass(frozen=True)
class BrakeValve:
    """One valve type of the pneumatic brake (see the module docstring)."""

    kind: str
    schema: type
    description: str
    branch: int
    pack: Callable
    states: tuple
    volumes: Callable
    cylinder_pressures: Callable
    jacobian: Literal["analytic"] = "analytic"
    extra_outputs: tuple = ()
    source: str = ""


#: ``kind`` -> valve type
VALVES: dict[str, BrakeValve] = {v.kind: v for v in (
    BrakeValve("uic_distributor", UICDistributor, "UIC distributor: control reservoir, quick service, G/P, graduated "
               "release", K_UIC, _pack_uic, ("control_reservoir", "quick_service_chamber"),
               lambda v: (v.control_reservoir_l * 1e-3, v.quick_service_chamber_l * 1e-3), _uic_pressures,
               extra_outputs=("control_reservoir_pressure",), source="UIC 540, EN 15355"),
    BrakeValve("aar_control_valve", AARControlValve, "AAR control valve: service and emergency portions, accelerated "
               "emergency venting, direct release", K_AAR, _pack_aar,
               ("emergency_reservoir", "quick_action_chamber", "service_piston", "emergency_latch"),
               lambda v: (v.emergency_reservoir_l * 1e-3, v.quick_action_chamber_l * 1e-3, 0.0, 0.0), _aar_pressures,
               extra_outputs=("emergency_reservoir_pressure",), source="AAR S-400 family (ABD/ABDW/ABDX)"),
    BrakeValve("cut_out", CutOut, "brake cut out: the pipe passes through, no valve", K_CUT, lambda v, cond: {},
               (), lambda v: (), lambda eq, feed: (0.0, 0.0)),
)}


def valve_of(eq: PneumaticEquipment) -> BrakeValve:
    return VALVES[eq.valve.kind]


def pneumatic_equipment(vehicle_type) -> Optional[PneumaticEquipment]:
    """The pneumatic equipment of an LTD vehicle type, or None."""
    b = vehicle_type.brake
    return None if b is None else b.pneumatic


def uses_valve_output(sc, name: str) -> bool:
    """True if the pneumatic brake of ``sc`` has a valve type adding output ``name``."""
    if not is_pneumatic(sc):
        return False
    for t in {e.type for e in sc.consist}:
        vt = sc.vehicle_types.get(t)
        eq = pneumatic_equipment(vt) if vt is not None else None
        if eq is not None and name in valve_of(eq).extra_outputs:
            return True
    return False


def is_pneumatic(sc) -> bool:
    ab = getattr(sc, "air_brake", None)
    return bool(ab is not None and ab.enabled and ab.model == "pneumatic")


def full_service_block_force_kN(eq: PneumaticEquipment, feed_bar: float, mass_t: float) -> float:
    """Block normal force [kN] at the valve's full-service cylinder pressure (the empirical brake's
    ``shoe_force_kN`` matched to this equipment)."""
    fs, _em = valve_of(eq).cylinder_pressures(eq, feed_bar)
    g = cylinder_geometry(eq)
    factor = eq.rigging.ratio * eq.rigging.efficiency
    if eq.empty_load is not None and mass_t < eq.empty_load.changeover_mass_t:
        factor *= eq.empty_load.empty_force_ratio
    return max(fs * BAR - g["pc"], 0.0) * g["area"] * factor * 1e-3


__all__ = ["VALVES", "BrakeValve", "UICDistributor", "AARControlValve", "CutOut", "PneumaticEquipment", "PneumaticSystem",
           "Cylinder", "Rigging", "EmptyLoad", "DriverBrakeValve", "IndependentBrake", "BrakePipe", "EOTDevice",
           "ECPSettings", "Separation", "valve_of", "is_pneumatic", "pneumatic_equipment", "uses_valve_output",
           "sonic_conductance", "cylinder_geometry", "equalisation_pressure", "full_service_block_force_kN",
           "BAR", "P_ATM", "R_AIR", "MU_AIR"]


def lead_locomotive(sc) -> int:
    """0-based index of the lead locomotive (the first locomotive of the consist)."""
    kinds = [sc.vehicle_types[n].kind for n in sc.vehicle_type_names()]
    return kinds.index("locomotive")


def remote_heads(sc) -> list[tuple[int, float]]:
    """``(vehicle index, radio delay)`` of the first vehicle of every consist entry marked ``remote``."""
    out, j = [], 0
    for e in sc.consist:
        if e.remote is not None:
            d = e.remote.radio_delay_s
            out.append((j, sc.distributed_power.radio_delay_s if d is None else d))
        j += e.count
    return out


def pneumatic_issues(sc, add) -> None:
    """Cross-field rules of the pneumatic brake and of distributed power (``add(loc, msg, value, allowed)``
    of :func:`hpcrail.config.errors.issue_collector`)."""
    vt = sc.vehicle_types
    names = sc.vehicle_type_names()
    n_veh = len(names)
    heads = remote_heads(sc)
    j = 0
    for i, e in enumerate(sc.consist):
        if e.remote is not None and e.type in vt:
            t = vt[e.type]
            if t.kind != "locomotive":
                add(("consist", i, "remote"), "a remote consist must start with a locomotive", e.type,
                    "remote on an entry of a locomotive type")
            elif is_pneumatic(sc) and (t.brake is None or t.brake.pneumatic is None
                                       or t.brake.pneumatic.driver_brake_valve is None):
                add(("vehicle_types", e.type, "brake", "pneumatic", "driver_brake_valve"),
                    "a remote locomotive needs a driver's brake valve (pneumatic brake)", allowed="a driver_brake_valve "
                    "block", has_value=False)
            if j == 0:
                add(("consist", i, "remote"), "the lead locomotive cannot be a remote", True,
                    "remote on a later entry")
        j += e.count
    if heads and sc.driver.basis != "time":
        add(("driver", "basis"), "remote locomotives follow the commands after a radio delay: the schedule must be "
            "time-based", sc.driver.basis, "time")
    if heads and sc.partition.state == "distributed" and sc.partition.backend != "off":
        add(("partition", "state"), "hidden-vehicle blocks evaluate remote locomotive groups (distributed power) with "
            "shared state only", sc.partition.state, "shared (or auto, which picks shared with remote locomotives)")
    if heads:
        from hpcrail.config.integrator import method_spec

        if method_spec(sc.integrator.method).multirate:
            add(("integrator", "method"), "the multirate integrator's blocks do not evaluate remote locomotive groups "
                "(distributed power)", sc.integrator.method, "a single-rate method (bdf2, trbdf2, ...)")
    if is_pneumatic(sc) and sc.air_brake.pneumatic.passes == "two":
        from hpcrail.config.integrator import method_spec

        if sc.driver.basis != "time":
            add(("air_brake", "pneumatic", "passes"), "two passes need a time-based schedule (with a distance-based "
                "one the brake commands follow the train's position)", "two", "one, or driver.basis: time")
        if method_spec(sc.integrator.method).multirate:
            add(("air_brake", "pneumatic", "passes"), "the multirate integrator runs one pass", "two",
                "one, or a single-rate method (bdf2, trbdf2, ...)")
        if sc.partition.backend not in ("off", "auto"):
            add(("air_brake", "pneumatic", "passes"), "hidden-vehicle blocks run one pass", "two",
                "one, or partition.backend: off (or auto)")
    if not is_pneumatic(sc):
        for i, c in enumerate(sc.driver.commands):
            if c.independent_brake:
                add(("driver", "commands", i, "independent_brake"), "an independent-brake command needs the pneumatic "
                    "brake", c.independent_brake, "0, or air_brake.model: pneumatic")
        return
    ps = sc.air_brake.pneumatic
    missing = sorted({n for n in names if n in vt and pneumatic_equipment(vt[n]) is None})
    for n in missing:
        add(("vehicle_types", n, "brake", "pneumatic"), "air_brake.model: pneumatic needs pneumatic brake equipment "
            "on every vehicle type", allowed="a brake.pneumatic block (valve, reservoir, cylinder, rigging)",
            has_value=False)
    if missing:
        return
    try:
        lead = lead_locomotive(sc)
    except ValueError:
        return   # no locomotive: reported by the LTD checks
    lead_eq = pneumatic_equipment(vt[names[lead]])
    if lead_eq.driver_brake_valve is None:
        add(("vehicle_types", names[lead], "brake", "pneumatic", "driver_brake_valve"), "the lead locomotive needs a "
            "driver's brake valve", allowed="a driver_brake_valve block", has_value=False)
        return
    feed = lead_eq.driver_brake_valve.feed_pressure_bar
    for jr, _d in heads:
        dbv = pneumatic_equipment(vt[names[jr]]).driver_brake_valve
        if dbv is not None and dbv.feed_pressure_bar != feed:
            add(("vehicle_types", names[jr], "brake", "pneumatic", "driver_brake_valve", "feed_pressure_bar"),
                "every active driver's brake valve must charge the pipe to the lead's feed pressure",
                dbv.feed_pressure_bar, f"{feed} bar (the lead locomotive's)")
    from hpcrail.kinds.ltd.couplers import LAWS, laws_used

    bad = sorted(k for k in laws_used(sc) if LAWS[k].branch != "table")
    if bad:
        add(("air_brake", "model"), f"the pneumatic brake runs with table-law connections only; this consist uses "
            f"{', '.join(bad)} connections", "pneumatic", "empirical, or hysteretic/rigid_bar/linear connections")
    if sc.partition.state == "distributed" and sc.partition.backend != "off":
        add(("partition", "state"), "hidden-vehicle blocks evaluate the pneumatic brake with shared state only (the "
            "distributed state's exchange rows do not carry the brake pipe's coupling states yet)",
            sc.partition.state, "shared (or auto, which picks shared with the pneumatic brake)")
    from hpcrail.config.integrator import method_spec

    if method_spec(sc.integrator.method).multirate:
        add(("integrator", "method"), "the multirate integrator's blocks do not evaluate the pneumatic brake",
            sc.integrator.method, "a single-rate method (bdf2, trbdf2, ...)")
    if ps.separation is not None and not ps.separation.coupler <= n_veh - 1:
        add(("air_brake", "pneumatic", "separation", "coupler"), "coupler number out of range", ps.separation.coupler,
            f"1..{n_veh - 1}")
    if ps.separation is not None and ps.separation.time_s > sc.simulation.duration_s:
        add(("air_brake", "pneumatic", "separation", "time_s"), "the separation is after the end of the run",
            ps.separation.time_s, f"≤ {sc.simulation.duration_s:g} s (simulation.duration_s)")
    if (ps.control == "ecp" or ps.eot.kind == "two_way") and sc.driver.basis != "time":
        add(("air_brake", "pneumatic", "control" if ps.control == "ecp" else "eot"), "ECP and EOT commands reach the "
            "vehicles after a delay: the schedule must be time-based", sc.driver.basis, "driver.basis: time")


def empirical_issues(sc, add) -> None:
    """The empirical brake needs a shoe force per vehicle type, given or derived from pneumatic equipment."""
    if not sc.air_brake.enabled or sc.air_brake.model != "empirical":
        return
    for t in sorted({e.type for e in sc.consist if e.type in sc.vehicle_types}):
        b = sc.vehicle_types[t].brake
        if b is not None and b.shoe_force_kN is None and b.pneumatic is None:
            add(("vehicle_types", t, "brake", "shoe_force_kN"), "the empirical brake needs a shoe force",
                allowed="shoe_force_kN, or a pneumatic block to derive it from", has_value=False)


def feed_pressure_bar(sc) -> float:
    """The charged pipe gauge pressure [bar]: the lead locomotive's feed pressure (5 bar without one)."""
    try:
        eq = pneumatic_equipment(sc.vehicle_types[sc.vehicle_type_names()[lead_locomotive(sc)]])
    except (ValueError, KeyError):
        return 5.0
    return eq.driver_brake_valve.feed_pressure_bar if eq is not None and eq.driver_brake_valve is not None else 5.0
