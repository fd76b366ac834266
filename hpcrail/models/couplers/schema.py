"""YAML blocks of the coupler with kinematic degrees of freedom (Massa et al. 2012, Table 1): draft
gear / EOC slider, shank, knuckle and the Newton-Raphson settings of the noninertial model.  Shared
by the ``planar_train`` kind and the LTD coupler law ``noninertial``; the physics is
:mod:`hpcrail.models.couplers.kinematics`.  (No numba: validating a scenario imports this module.)"""
from __future__ import annotations

from typing import Optional

from pydantic import Field

from hpcrail.config.base import Strict

#: ranges: stiffnesses and damping of coupler components (a unit error gives values far beyond them)
_K = 1e11
_C = 1e9


class DraftGear(Strict):
    """Draft gear / end-of-car cushioning device: a slider on a prismatic joint along the car axis with
    a spring-damper to the car body (Massa et al. 2012 eq 31, Table 1)."""

    stiffness_N_per_m: float = Field(3.0e7, gt=0, le=_K, description="k_B")
    damping_Ns_per_m: float = Field(2.5e5, ge=0, le=_C, description="c_B")
    free_length_m: float = Field(0.289, ge=0, le=5, description="l_0: from point P to the slider (shank pin)")
    slider_mass_kg: float = Field(50.0, ge=0.1, le=10_000, description="inertial model only")


class Shank(Strict):
    """Coupler shank pinned to the slider, rotating by the shank angle alpha (Massa et al. 2012 eqs 27-30, 35)."""

    length_m: float = Field(0.6, ge=0.01, le=5, description="from the pin to the knuckle point Q (ASSUMED: Massa "
                            "et al. 2012 do not give it)")
    torsional_stiffness_Nm_per_rad: float = Field(3.0e7, gt=0, le=_K, description="k_r")
    torsional_damping_Nms_per_rad: float = Field(1.0e5, ge=0, le=_C, description="c_r")
    rest_angle_rad: float = Field(0.0, ge=-1.5, le=1.5, description="alpha_0")
    mass_kg: float = Field(140.0, ge=0.1, le=10_000, description="inertial model only")
    yaw_inertia_kgm2: float = Field(8.0, ge=0, le=100_000, description="about the shank's centre of gravity; "
                                    "inertial model only")
    cg_from_pin_m: Optional[float] = Field(None, ge=0, le=5, description="default: half the shank length")


class Knuckle(Strict):
    """Knuckle spring-damper between the two shank ends Q (Massa et al. 2012 eq 37).  A zero free length makes
    it an isotropic (vector) spring-damper."""

    stiffness_N_per_m: float = Field(5.0e8, gt=0, le=_K, description="k_rr")
    damping_Ns_per_m: float = Field(5.0e5, ge=0, le=_C, description="c_rr")
    free_length_m: float = Field(0.204, ge=0, le=5, description="l_r0")


class Newton(Strict):
    """Newton-Raphson on the quasistatic coupler equilibrium Q_ni = 0 (Massa et al. 2012 eq 42)."""

    tolerance_m: float = Field(1e-11, gt=0, le=1e-3, description="converged when every update |Δd| and "
                               "|Δalpha|·shank length is below this")
    max_iterations: int = Field(30, ge=1, le=1000)
