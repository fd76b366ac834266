"""The LTD coupler-law table: one entry per connection law of an LTD consist.

A connection type's ``kind:`` selects its law.  Each :class:`CouplerLaw` entry gives

* ``schema`` — the pydantic class of the law's YAML block (below);
* ``table`` — its packing into the table-law arrays of the LTD kernel (the force of the ``table``
  branch: slack, mean curve F_M and half hysteresis F_A per side, end stop, transition speed v_ε,
  viscous damping; :mod:`hpcrail.models.couplers.hysteretic`); laws with their own branch pack
  their table part here (noninertial: zero; friction: its spring-damper part);
* ``branch`` — which kernel code evaluates it: ``table`` (:func:`~hpcrail.models.couplers.hysteretic.connection_force`),
  ``noninertial`` (:func:`~hpcrail.models.couplers.ltd_noninertial.ltd_noninertial_force`, solved
  before the vehicle loop of :func:`~hpcrail.models.ltd.kernel.ltd_eval`) or ``friction`` (the
  dry-friction layer :mod:`hpcrail.models.ltd.friction_kernel` on top of the table spring);
* ``pack`` — the packing of the law's own parameter row for its branch (None for table laws);
* ``jacobian`` — ``analytic`` (entries written by :func:`hpcrail.models.ltd.jacobian.ltd_jac`) or
  ``finite_difference`` (a declared fallback: the model offers no analytic Jacobian and the implicit
  integrators difference the right-hand side over the LTD sparsity pattern);
* ``partitionable`` — whether the hidden-vehicle blocks of :mod:`hpcrail.partition` evaluate it;
* ``mixed`` — whether the mixed train's kernel (:mod:`hpcrail.models.mixed`, an LTD consist coupled to
  detailed vehicles) evaluates it (a separate question from the blocks: the mixed kernel runs the table
  branch only);
* ``extra_outputs`` — the outputs of the LTD kind (``hpcrail.kinds.ltd.outputs``) a consist using the
  law adds (their condition is "a connection of the consist uses the law").

Adding a law: its schema class and entry here, its kernel branch in ``models/``, its Jacobian
entries in :mod:`hpcrail.models.ltd.jacobian` (or ``jacobian="finite_difference"``), and its extra
outputs in ``outputs.py`` (docs/architecture.md, "How to add a coupler law").  The conformance tests
run every law: analytic Jacobian against central differences, partitionable laws monolithic and on
threads.

No numba here: the schema of an LTD scenario is built from this table when a YAML is validated.
"""
from __future__ import annotations

import dataclasses
from typing import Annotated, Callable, Literal, Optional, Union

import numpy as np
from pydantic import Discriminator, Field, Tag, model_validator

from hpcrail.config.base import Strict, typical
from hpcrail.config.errors import ConfigValueError
from hpcrail.models.couplers.schema import DraftGear, Knuckle, Newton, Shank

#: ranges of the connection laws' values (a stiffness above 1e5 MN/m or a force above 100 MN means a unit error)
MAX_STIFFNESS_MN_PER_M = 1e5
MAX_DAMPING_KNS_PER_M = 1e5
MAX_FORCE_KN = 1e5
MAX_SLACK_MM = 500.0
_DEFLECTION = Annotated[float, Field(ge=0, le=2000)]
_GEAR_FORCE = Annotated[float, Field(ge=0, le=MAX_FORCE_KN)]


def strictly_increasing(v: list[float], what: str) -> list[float]:
    """``v`` unchanged if strictly increasing; raises :class:`ConfigValueError` naming the first
    offending entry."""
    if len(v) >= 2 and np.any(np.diff(np.asarray(v, float)) <= 0):
        i = int(np.argmax(np.diff(np.asarray(v, float)) <= 0))
        raise ConfigValueError(f"{what} must be strictly increasing (entry {i + 1} = {v[i + 1]} follows {v[i]})",
                               allowed=f"entry {i + 1} > {v[i]}", value=v[i + 1])
    return v


# ------------------------------------------------------------------------------------------------
# the laws' YAML blocks
# ------------------------------------------------------------------------------------------------
class GearCurves(Strict):
    """Loading and unloading curves of a draft gear beyond the slack (Bosso et al. 2024 eq 7).

    ``deflection_mm`` starts at 0 (the end of the slack) and increases strictly; ``loading_kN``
    starts at 0 and never decreases; ``unloading_kN`` (or ``unloading_ratio`` × loading) lies
    between 0 and the loading curve.  Beyond the last point the gear is solid: both curves continue
    with the end-stop stiffness.
    """

    deflection_mm: list[_DEFLECTION] = Field(..., max_length=1000, json_schema_extra=typical(5, 500))
    loading_kN: list[_GEAR_FORCE] = Field(..., max_length=1000, json_schema_extra=typical(5, 20_000))
    unloading_kN: Optional[list[_GEAR_FORCE]] = Field(None, max_length=1000, json_schema_extra=typical(1, 20_000))
    unloading_ratio: Optional[float] = Field(None, ge=0, le=1, json_schema_extra={"units": "1"})

    @model_validator(mode="after")
    def _check(self):
        x, fl = self.deflection_mm, self.loading_kN
        if len(x) < 2:
            raise ConfigValueError("deflection_mm needs at least two points", field="deflection_mm",
                                   allowed="at least two deflections from 0")
        if x[0] != 0:
            raise ConfigValueError("deflection_mm must start at 0 (the end of the slack)", field="deflection_mm.0",
                                   allowed="0")
        try:
            strictly_increasing(x, "deflection_mm")
        except ConfigValueError as exc:
            exc.field = "deflection_mm"
            raise
        if len(fl) != len(x):
            raise ConfigValueError(f"loading_kN has {len(fl)} values, deflection_mm has {len(x)}", field="loading_kN",
                                   allowed=f"{len(x)} values (one per deflection)")
        if fl[0] != 0:
            raise ConfigValueError("loading_kN must start at 0 (no force at the end of the slack)",
                                   field="loading_kN.0", allowed="0")
        if np.any(np.diff(fl) < 0):
            i = int(np.argmax(np.diff(fl) < 0)) + 1
            raise ConfigValueError("loading_kN must not decrease with deflection (non-monotonic coupler table)",
                                   field=f"loading_kN.{i}", allowed=f"≥ {fl[i - 1]} (the value before)")
        if (self.unloading_kN is None) == (self.unloading_ratio is None):
            raise ConfigValueError("give exactly one of unloading_kN or unloading_ratio",
                                   allowed="unloading_kN (a curve) or unloading_ratio (0..1)")
        if self.unloading_kN is not None:
            fu = self.unloading_kN
            if len(fu) != len(x):
                raise ConfigValueError(f"unloading_kN has {len(fu)} values, deflection_mm has {len(x)}",
                                       field="unloading_kN", allowed=f"{len(x)} values (one per deflection)")
            if fu[0] != 0:
                raise ConfigValueError("unloading_kN must start at 0", field="unloading_kN.0", allowed="0")
            if np.any(np.diff(fu) < 0):
                i = int(np.argmax(np.diff(fu) < 0)) + 1
                raise ConfigValueError("unloading_kN must not decrease with deflection (non-monotonic coupler "
                                       "table)", field=f"unloading_kN.{i}", allowed=f"≥ {fu[i - 1]} (the value before)")
            bad = [i for i, (u, l_) in enumerate(zip(fu, fl)) if u > l_ + 1e-9]
            if bad:
                raise ConfigValueError("unloading_kN must not exceed loading_kN", field=f"unloading_kN.{bad[0]}",
                                       allowed=f"≤ {fl[bad[0]]} (loading_kN there)")
        return self

    def unloading(self) -> list[float]:
        if self.unloading_kN is not None:
            return list(self.unloading_kN)
        return [self.unloading_ratio * f for f in self.loading_kN]


class HystereticCoupler(Strict):
    """Coupler / draft-gear connection with slack and hysteresis (Bosso et al. 2024 eq 7)."""

    kind: Literal["hysteretic"] = "hysteretic"
    slack_mm: float = Field(0.0, ge=0, le=MAX_SLACK_MM, description="total free clearance, split equally "
                            "draft/buff", json_schema_extra=typical(1, 100, zero_ok=True))
    stiffness_scale: float = Field(1.0, ge=1e-3, le=1000, json_schema_extra=typical(0.05, 20, units="1"),
                                   description="multiplies the forces of the loading and "
                                   "unloading curves of both sides (a softer or stiffer draft gear of the same "
                                   "shape; the end stop is not scaled)")
    draft: GearCurves
    buff: Optional[GearCurves] = None
    end_stop_stiffness_MN_per_m: float = Field(400.0, gt=0, le=MAX_STIFFNESS_MN_PER_M,
                                               json_schema_extra=typical(5, 20_000),
                                               description="solid-gear stiffness beyond the table")
    transition_speed_mps: float = Field(0.01, ge=1e-6, le=10, description="v_ε of eq (7)")
    damping_kNs_per_m: float = Field(0.0, ge=0, le=MAX_DAMPING_KNS_PER_M, description="extra viscous damping "
                                     "while engaged (numerical)")

    def buff_curves(self) -> GearCurves:
        return self.buff if self.buff is not None else self.draft


class RigidBar(Strict):
    """Slackless drawbar joining a wagon pair: linear spring-damper, no hysteresis."""

    kind: Literal["rigid_bar"] = "rigid_bar"
    stiffness_MN_per_m: float = Field(80.0, gt=0, le=MAX_STIFFNESS_MN_PER_M, json_schema_extra=typical(1, 20_000))
    damping_kNs_per_m: float = Field(100.0, ge=0, le=MAX_DAMPING_KNS_PER_M)


class LinearConnection(Strict):
    """Linear spring-damper with optional slack (analytic tests, simple studies)."""

    kind: Literal["linear"] = "linear"
    stiffness_MN_per_m: float = Field(..., gt=0, le=MAX_STIFFNESS_MN_PER_M)
    damping_kNs_per_m: float = Field(0.0, ge=0, le=MAX_DAMPING_KNS_PER_M)
    slack_mm: float = Field(0.0, ge=0, le=MAX_SLACK_MM, json_schema_extra=typical(1, 100, zero_ok=True))


class FrictionDraftGear(Strict):
    """Dry-friction draft gear / buffer (Oprea 2018): a spring, an optional viscous damper
    and a dry-friction element in parallel, engaged beyond an optional slack.

    Friction (Oprea 2018 eqs 5-7): sticking while the extension rate is inside the Karnopp band
    (``friction.stick_band_mps``), with any static force up to ``static_friction_kN`` (T_sMax);
    sliding with the kinetic law — Coulomb T_kin = ``kinetic_friction_kN`` (default: equal to the
    static limit, as in Oprea 2018) or Stribeck T_kin = T_c + (T_sMax − T_c)·exp(−(|ė|/v_s)^δ).
    Inside the slack the gear carries no force; beyond it the friction limit ramps in over 1 mm (the
    ramp of the LTD damper).  How the non-smooth friction is integrated (event-driven or
    regularised) is chosen by the scenario's ``friction:`` block.
    """

    kind: Literal["friction"] = "friction"
    stiffness_MN_per_m: float = Field(..., ge=0, le=MAX_STIFFNESS_MN_PER_M, description="spring stiffness k "
                                      "(Oprea 2018 Table 1: 0.1 MN/m)")
    damping_kNs_per_m: float = Field(0.0, ge=0, le=MAX_DAMPING_KNS_PER_M, description="viscous damping c in "
                                     "parallel (Oprea 2018: 0)")
    slack_mm: float = Field(0.0, ge=0, le=MAX_SLACK_MM, description="total free clearance, split equally draft/buff",
                            json_schema_extra=typical(1, 100, zero_ok=True))
    static_friction_kN: float = Field(..., gt=0, le=MAX_FORCE_KN, description="static friction limit T_sMax")
    kinetic_law: Literal["coulomb", "stribeck"] = Field("coulomb", description="sliding friction law")
    kinetic_friction_kN: Optional[float] = Field(None, ge=0, le=MAX_FORCE_KN, description="Coulomb level T_c of "
                                                 "the sliding friction (default: static_friction_kN)")
    stribeck_speed_mps: float = Field(0.01, ge=1e-6, le=10, description="Stribeck speed v_s")
    stribeck_exponent: float = Field(2.0, ge=0.1, le=10, description="Stribeck exponent δ")

    @model_validator(mode="after")
    def _kinetic(self):
        if self.kinetic_friction_kN is not None and self.kinetic_friction_kN > self.static_friction_kN:
            raise ConfigValueError("kinetic_friction_kN must not exceed static_friction_kN",
                                   field="kinetic_friction_kN", allowed=f"≤ {self.static_friction_kN} "
                                   "(static_friction_kN)")
        return self

    def kinetic_kN(self) -> float:
        return self.static_friction_kN if self.kinetic_friction_kN is None else self.kinetic_friction_kN


class NoninertialConnection(Strict):
    """Coupler with kinematic degrees of freedom whose inertia is neglected (Massa et al. 2012): draft gear/EOC slider and shank at each vehicle end, knuckle between the shanks, solved by
    Newton-Raphson for its quasistatic equilibrium.  In the LTD consist the vehicles follow the track
    centre line (bogie centres on it) and the curvature between the two vehicle centres comes from the
    route (see :mod:`hpcrail.models.couplers.ltd_noninertial`).  The coupler's knuckle sits at the vehicle
    ends: x_P = length/2 − l_0 − l_s − l_r0/2."""

    kind: Literal["noninertial"] = "noninertial"
    draft_gear: DraftGear = DraftGear()
    shank: Shank = Shank()
    knuckle: Knuckle = Knuckle()
    newton: Newton = Newton()
    bogie_spacing_ratio: float = Field(0.7, gt=0, lt=1, description="bogie-centre distance / vehicle length "
                                       "(both vehicles; ASSUMED typical value)")


# ------------------------------------------------------------------------------------------------
# packing into the table-law arrays (SI): deflection grid [m], loading/unloading force [N] per side
# ------------------------------------------------------------------------------------------------
def _table_hysteretic(c: HystereticCoupler) -> dict:
    sides = []
    for g in (c.draft, c.buff_curves()):
        x = np.asarray(g.deflection_mm, float) * 1e-3
        fl = np.asarray(g.loading_kN, float) * (1e3 * c.stiffness_scale)
        fu = np.asarray(g.unloading(), float) * (1e3 * c.stiffness_scale)
        sides.append((x, fl, fu))
    gap = 0.5 * c.slack_mm * 1e-3
    return dict(sides=sides, gap=(gap, gap), kend=c.end_stop_stiffness_MN_per_m * 1e6, veps=c.transition_speed_mps,
                c=c.damping_kNs_per_m * 1e3, xc=1e-3 if gap > 0 else 0.0)


def _table_linear(k_N_per_m: float, c_Ns_per_m: float, slack_mm: float) -> dict:
    x = np.array([0.0, 1e-3])
    f = k_N_per_m * x
    gap = 0.5 * slack_mm * 1e-3
    return dict(sides=[(x, f, f), (x, f, f)], gap=(gap, gap), kend=k_N_per_m, veps=1.0, c=c_Ns_per_m,
                xc=1e-3 if gap > 0 else 0.0)


def _table_spring_damper(c) -> dict:
    """Rigid bars, linear connections and the spring-damper part of a friction draft gear."""
    return _table_linear(c.stiffness_MN_per_m * 1e6, c.damping_kNs_per_m * 1e3, getattr(c, "slack_mm", 0.0))


def _table_zero(_c) -> dict:
    """All-zero table rows: the force comes from the law's own branch."""
    x = np.array([0.0, 1e-3])
    z = np.zeros(2)
    return dict(sides=[(x, z, z), (x, z, z)], gap=(0.0, 0.0), kend=0.0, veps=1.0, c=0.0, xc=0.0)


def _pack_noninertial(c: NoninertialConnection) -> np.ndarray:
    """Coupler parameter row of the noninertial branch (``kinematics.CP_*`` + Newton settings)."""
    from hpcrail.models.couplers.kinematics import coupler_parameter_array
    from hpcrail.models.couplers.ltd_noninertial import CP_MAXIT, CP_TOL

    dg, sh, kn = c.draft_gear, c.shank, c.knuckle
    lg = sh.cg_from_pin_m if sh.cg_from_pin_m is not None else 0.5 * sh.length_m
    row = coupler_parameter_array(
        kB=dg.stiffness_N_per_m, cB=dg.damping_Ns_per_m, l0=dg.free_length_m,
        kr=sh.torsional_stiffness_Nm_per_rad, cr=sh.torsional_damping_Nms_per_rad, alpha0=sh.rest_angle_rad,
        ls=sh.length_m, lg=lg, m_slider=dg.slider_mass_kg, m_shank=sh.mass_kg, I_shank=sh.yaw_inertia_kgm2,
        krr=kn.stiffness_N_per_m, crr=kn.damping_Ns_per_m, lr0=kn.free_length_m)
    row[CP_TOL] = c.newton.tolerance_m
    row[CP_MAXIT] = c.newton.max_iterations
    return row


def _pack_friction(c: FrictionDraftGear) -> dict:
    """Per-connection values of the dry-friction layer (SI): slack per side, static and kinetic
    limits, kinetic law, Stribeck speed and exponent."""
    g = 0.5 * c.slack_mm * 1e-3
    return dict(gap=(g, g), inv_ramp=1e3 if g > 0 else 0.0, ts=c.static_friction_kN * 1e3, tc=c.kinetic_kN() * 1e3,
                stribeck=c.kinetic_law == "stribeck", inv_vs=1.0 / c.stribeck_speed_mps, delta=c.stribeck_exponent)


# ------------------------------------------------------------------------------------------------
# the table
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class CouplerLaw:
    """One connection law of the LTD kind (see the module docstring)."""

    kind: str
    schema: type
    description: str
    table: Callable
    branch: Literal["table", "noninertial", "friction"]
    pack: Callable | None
    jacobian: Literal["analytic", "finite_difference"]
    partitionable: bool
    extra_outputs: tuple = ()
    source: str = ""
    mixed: bool = False


_FRICTION_OUTPUTS = ("friction_force", "relative_velocity", "friction_mode", "stick_phases", "stick_time",
                     "final_deflection", "final_coupler_force", "friction_work", "n_events", "n_mode_changes",
                     "mode_change_time", "mode_change_coupler", "mode_change_mode")
_NEWTON_OUTPUTS = ("coupler_newton_solves", "coupler_newton_iterations", "coupler_newton_max_iterations",
                   "coupler_newton_failures")

#: ``kind`` -> law, in the order of the ``kind:`` values' documentation
LAWS: dict[str, CouplerLaw] = {law.kind: law for law in (
    CouplerLaw("hysteretic", HystereticCoupler, "draft gear with slack, loading/unloading curves and end stop",
               _table_hysteretic, "table", None, "analytic", True, source="Bosso et al. 2024 eq (7)", mixed=True),
    CouplerLaw("rigid_bar", RigidBar, "slackless drawbar: linear spring-damper", _table_spring_damper, "table",
               None, "analytic", True, mixed=True),
    CouplerLaw("linear", LinearConnection, "linear spring-damper with optional slack", _table_spring_damper, "table",
               None, "analytic", True, mixed=True),
    CouplerLaw("friction", FrictionDraftGear, "dry-friction draft gear (stick/slip), event-driven or regularised",
               _table_spring_damper, "friction", _pack_friction, "finite_difference", False, _FRICTION_OUTPUTS,
               source="Oprea 2018"),
    CouplerLaw("noninertial", NoninertialConnection, "coupler with kinematic degrees of freedom (quasistatic, "
               "Newton-Raphson)", _table_zero, "noninertial", _pack_noninertial, "analytic", False, _NEWTON_OUTPUTS,
               source="Massa et al. 2012"),
)}


def _connection_kind(v):
    if isinstance(v, dict):
        return v.get("kind", "hysteretic")
    return getattr(v, "kind", None)


#: discriminated on ``kind`` (default ``hysteretic``): an error inside one connection type is reported once,
#: against that kind, not once per union member
ConnectionType = Annotated[Union[tuple(Annotated[law.schema, Tag(law.kind)] for law in LAWS.values())],
                           Discriminator(_connection_kind)]


def law_of(connection) -> CouplerLaw:
    """The law of a validated connection type."""
    return LAWS[connection.kind]


_LAST_USED: list = [None, frozenset()]


def laws_used(sc) -> frozenset:
    """``kind`` of every connection law the consist of ``sc`` uses (the last scenario's answer is kept:
    the output conditions of a scenario ask one after the other)."""
    if _LAST_USED[0] is sc:
        return _LAST_USED[1]
    ct = sc.connection_types
    used = frozenset(ct[n].kind for n in set(sc.connection_type_names()) if n in ct)
    _LAST_USED[0], _LAST_USED[1] = sc, used
    return used


def unpartitionable_laws(sc) -> list[str]:
    """Laws of the consist that the hidden-vehicle blocks do not evaluate (sorted)."""
    return sorted(k for k in laws_used(sc) if not LAWS[k].partitionable)


def partitionable_laws() -> tuple:
    return tuple(k for k, law in LAWS.items() if law.partitionable)


def non_mixed_laws(sc) -> list[str]:
    """Laws of the consist that the mixed train's kernel does not evaluate (sorted)."""
    return sorted(k for k in laws_used(sc) if not LAWS[k].mixed)


def mixed_laws() -> tuple:
    return tuple(k for k, law in LAWS.items() if law.mixed)


def uses_output(sc, name: str) -> bool:
    """True if a law of the consist adds output ``name``."""
    return any(name in LAWS[k].extra_outputs for k in laws_used(sc))


__all__ = ["CouplerLaw", "LAWS", "ConnectionType", "HystereticCoupler", "RigidBar", "LinearConnection",
           "FrictionDraftGear", "NoninertialConnection", "GearCurves", "law_of", "laws_used", "unpartitionable_laws",
           "partitionable_laws", "non_mixed_laws", "mixed_laws", "uses_output", "strictly_increasing"]
