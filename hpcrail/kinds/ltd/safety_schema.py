"""YAML blocks of the quasi-static running-safety assessment of an LTD consist (:mod:`hpcrail.kinds.ltd.safety`):
the vehicle geometry and running gear a vehicle type may state (every field has a default with its source), and
the assessment's settings and limits (``output.running_safety``).

Defaults and their sources (docs/references.md; ASSUMED = an engineering assumption, replace it with the
vehicle's data):

* ``geometry.bogie_centres_m``: 0.70 × the length over couplers (ASSUMED; the ``mixed_train`` kind's 1-DOF
  neighbours use the same ratio, a 16 m coal wagon with bogie centres 11.2 m apart);
* ``geometry.coupler_length_m`` 1.0 m from the coupler's pivot to its pulling face (ASSUMED, the mixed train's
  ``pivot_inset_m``);
* ``geometry.coupler_height_m`` 0.876 m (AAR nominal coupler centre height of 34.5 in for new cars; loaded cars
  ride lower, to 31.5 in; the difference between neighbours gives the vertical coupler angle);
* ``geometry.cg_height_m`` 1.8 m (ASSUMED, a loaded freight wagon; an empty one is nearer 1.2 m);
* ``geometry.max_coupler_yaw_deg`` 15 (ASSUMED free swing of a centre coupler);
* ``running_gear``: two-axle bogies (the vehicle type's ``axles`` / 2 per bogie), wheelbase 1.83 m (three-piece
  bogie, 72 in; Y25 1.8 m), S1002/UIC60 1:40 at standard gauge (the packaged table of
  :mod:`hpcrail.models.safety.profiles`: Δr(y), contact angles, flange contact at |y| = 6.26 mm), r0 0.457 m,
  Kalker's coefficients of that pair's centred contact at the static wheel load (19.2 and 15.5 MN at 100 kN,
  ∝ Q^(2/3)), friction 0.4 (ASSUMED dry rail), flange stiffness 100 MN/m, the body resisting the bogie's
  rotation with a friction moment 0.2 × 0.15 m × half the vehicle's weight (ASSUMED centre plate);
* limits: EN 14363 (Y/Q)_lim 0.8 and (ΔQ/Q)_lim 0.6, Prud'homme α 0.85 for wagons and 1.0 for locomotives
  (:mod:`hpcrail.results.running_safety`), truck-side Y/Q 0.6 (AAR M-1001 ch. XI; FRA 49 CFR 213.333) — [M]:
  widely quoted values, check the edition that applies before using them for acceptance.
"""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, model_validator

from hpcrail.config.base import Strict
from hpcrail.config.errors import ConfigValueError

#: bogie centre distance as a fraction of the length over couplers when not given (ASSUMED)
BOGIE_RATIO = 0.70


class LateralLaw(Strict):
    """A car body's lateral force at one bogie against its lateral displacement there (secondary suspension,
    bumpstops, bolster play): increasing displacements [mm] and forces [kN], both signs (an odd table)."""

    displacement_mm: list[float] = Field(..., min_length=2, max_length=1000)
    force_kN: list[float] = Field(..., min_length=2, max_length=1000)

    @model_validator(mode="after")
    def _check(self):
        d, f = self.displacement_mm, self.force_kN
        if len(d) != len(f):
            raise ConfigValueError(f"displacement_mm has {len(d)} values, force_kN {len(f)}", field="force_kN",
                                   allowed="one force per displacement")
        for name, v in (("displacement_mm", d), ("force_kN", f)):
            if any(b <= a for a, b in zip(v, v[1:])):
                raise ConfigValueError(f"{name} must increase strictly", field=name, allowed="increasing values")
        if d[0] >= 0 or d[-1] <= 0:
            raise ConfigValueError("the table must cover both directions", field="displacement_mm",
                                   allowed="from a negative to a positive displacement")
        return self


class VehicleGeometry(Strict):
    """Geometry of a vehicle for the quasi-static running-safety model (defaults: module docstring)."""

    bogie_centres_m: Optional[float] = Field(None, gt=0, le=60, description="distance of the bogie centres "
                                             "(default 0.70 x length_m, ASSUMED)")
    coupler_length_m: float = Field(1.0, gt=0, le=3, description="coupler pivot to pulling face")
    coupler_height_m: float = Field(0.876, ge=0.3, le=1.5, description="coupler centre above the rails")
    cg_height_m: float = Field(1.8, gt=0.2, le=4.0, description="centre of gravity above the rails")
    max_coupler_yaw_deg: float = Field(15.0, gt=0, le=45, description="free swing of the coupler (geometry "
                                       "criterion)")
    body_lateral: Optional[LateralLaw] = Field(None, description="car body's lateral law at each bogie "
                                               "(default: held on its bogie centres)")


class RollingRadiusDifference(Strict):
    """Δr(y): left minus right rolling radius [mm] at the wheelset's lateral shift y [mm] (+ left)."""

    y_mm: list[float] = Field(..., min_length=2, max_length=2000)
    dr_mm: list[float] = Field(..., min_length=2, max_length=2000)

    @model_validator(mode="after")
    def _check(self):
        if len(self.y_mm) != len(self.dr_mm):
            raise ConfigValueError("y_mm and dr_mm need the same length", field="dr_mm", allowed=f"{len(self.y_mm)} "
                                   "values")
        if any(b <= a for a, b in zip(self.y_mm, self.y_mm[1:])):
            raise ConfigValueError("y_mm must increase strictly", field="y_mm", allowed="increasing shifts")
        return self


class RunningGear(Strict):
    """Bogies and wheel/rail contact of a vehicle for the steady-state curving of the quasi-static model
    (defaults: module docstring).  ``wheel_rail: s1002_uic60``: the packaged S1002/UIC60 1:40 geometry (Δr(y),
    contact angles, flange contact at 6.26 mm; :mod:`hpcrail.models.safety.profiles`); ``conical``: Δr = 2λy
    (or the ``rolling_radius_difference`` table), no contact-angle forces, flange contact at
    ``flange_clearance_mm``."""

    wheelbase_m: float = Field(1.83, ge=0, le=6, description="bogie wheelbase, first to last axle")
    wheel_radius_m: float = Field(0.457, ge=0.2, le=0.7, description="nominal rolling radius r0")
    wheel_rail: Literal["s1002_uic60", "conical"] = Field("s1002_uic60", description="wheel/rail geometry")
    conicity: float = Field(0.2, gt=0, le=1, description="conical: λ of Δr = 2λy (unless rolling_radius_difference)")
    rolling_radius_difference: Optional[RollingRadiusDifference] = None
    flange_clearance_mm: float = Field(6.3, gt=0, le=30, description="conical: lateral shift at flange contact")
    centre_plate_friction: float = Field(0.2, ge=0, le=1, description="friction coefficient of the bogie's "
                                         "rotation under the body (centre plate / side bearers, ASSUMED)")
    centre_plate_radius_m: float = Field(0.15, ge=0, le=1, description="mean radius of that friction (ASSUMED)")
    yaw_stiffness_kNm_per_rad: float = Field(0.0, ge=0, le=1e6, description="yaw stiffness between bogie and "
                                             "body (secondary suspension)")
    friction_coefficient: float = Field(0.4, gt=0, le=1, description="wheel/rail friction")
    creep_coefficients_MN: Optional[tuple[float, float]] = Field(None, description="Kalker's f11, f22 at the static "
                                                                 "wheel load (default: S1002/UIC60 centred contact)")
    flange_stiffness_MN_per_m: float = Field(100.0, gt=0, le=10_000)

    @model_validator(mode="after")
    def _f(self):
        if self.creep_coefficients_MN is not None and min(self.creep_coefficients_MN) <= 0:
            raise ConfigValueError("creep coefficients must be positive", field="creep_coefficients_MN",
                                   allowed="[f11, f22] > 0 MN")
        return self


class RunningSafety(Strict):
    """Quasi-static running safety of every vehicle (:mod:`hpcrail.kinds.ltd.safety`): evaluated at every
    ``interval_s`` of the run (and at the output samples), whatever the series a sweep keeps."""

    enabled: bool = Field(True, description="compute the quasi-static running-safety outputs")
    interval_s: float = Field(1.0, gt=0, le=60, description="sampling of the assessment [s] (its maxima are "
                              "taken over these samples)")
    y_q_limit: float = Field(0.8, gt=0, le=5, description="(Y/Q)_lim per wheel (EN 14363)")
    truck_side_limit: float = Field(0.6, gt=0, le=5, description="truck-side ΣY/ΣQ limit (AAR M-1001 ch. XI)")
    wheel_unloading_limit: float = Field(0.6, gt=0, le=1, description="(ΔQ/Q)_lim (EN 14363, UIC 530-2)")
    prudhomme_alpha_wagon: float = Field(0.85, gt=0, le=1, description="α of Prud'homme's limit for wagons")
    prudhomme_alpha_locomotive: float = Field(1.0, gt=0, le=1, description="α for locomotives")


__all__ = ["VehicleGeometry", "RunningGear", "RunningSafety", "LateralLaw", "RollingRadiusDifference",
           "BOGIE_RATIO"]
