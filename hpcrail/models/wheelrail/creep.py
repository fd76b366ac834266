"""Tangential contact: creepages from the wheelset kinematics, Kalker's creepage coefficients and
Polach's creep-force method (1999, and the 2005 extension with reduction factors and falling friction).

**Contact frame** (one wheel; σ = +1 left, -1 right; γ the track-frame contact angle, positive towards the
track centre, from :mod:`.layout`): t1 = (1, 0, 0) (rolling direction, track X), t2 = (0, cos γ, σ sin γ)
(lateral, in the contact plane), n = (0, -σ sin γ, cos γ) (normal, rail → wheel); (t1, t2, n) is
right-handed.  Creepages of the wheel relative to the rail (at rest): with the slip velocity
v_s = v_c + ω × r_c of the wheel material at the contact point,

    ξ_x = v_s·t1 / V,   ξ_y = v_s·t2 / V,   φ = ω·n / V   [1/m]

(Kalker 1990; for a wheelset at yaw ψ rolling at Ω ≈ V/r0: ξ_x ≈ -Δr/r0 - L ψ̇/V, ξ_y ≈ ẏ/V - ψ,
φ ≈ ψ̇ cos γ / V - σ sin γ / r as in Garg & Dukkipati 1984).

**Forces** are those of the rail *on the wheel*, in the contact frame (F_x along t1, F_y along t2, spin
moment M_z about n), opposing the creepages.  Kalker's linear theory (c² = ab, G shear modulus):

    F_x = -G c² C11 ξ_x,  F_y = -G c² C22 ξ_y - G c³ C23 φ,  M_z = G c³ C23 ξ_y - G c⁴ C33 φ

**Polach** (Polach 1999, VSD 33 suppl. 728-739; Polach 2005, Wear 258 992-1000), with the spin-corrected
lateral creepage ξ_yC = ξ_y + φ a when |ξ_y + φ a| > |ξ_y| (else ξ_y), s_C = √(ξ_x² + ξ_yC²),
c_jj = √((C11 ξ_x/s)² + (C22 ξ_y/s)²), ε = ¼ G π a b c_jj s_C / (Q μ):

    F = (2 Q μ / π) [k_A ε / (1 + (k_A ε)²) + arctan(k_S ε)]        (1999: k_A = k_S = 1)
    μ = μ0 [(1 - A) e^(-B w) + A],  w = V s_C  (slip velocity)        (1999 / paper 004: A = 1, μ constant)
    F_x = -F ξ_x / s_C,   F_y = -F ξ_y / s_C - F_yS
    F_yS = -(9/16) a Q μ K_M [1 + 6.3 (1 - e^(-a/b))] φ / s_C  (Polach's spin term, sign flipped to act
           on the wheel), ε_M = (8/3) G b √(ab) C23 |ξ_yC| / (Q μ (1 + 6.3(1 - e^(-a/b)))),
           δ_M = (ε_M² - 1)/(ε_M² + 1), K_M = |ε_M|(δ_M³/3 - δ_M²/2 + 1/6) - ⅓√((1 - δ_M²)³)

Polach's method has no spin moment: hpcrail returns Kalker's linear M_z scaled by the saturation of the
creep force (|F| over its linear value), with C33 from Kalker's simplified theory using the spin
flexibility L3 = π a √(a/b)/(4 C23 G) that reproduces C23 (Kalker 1982): G c⁴ C33 = (32/(15π)) G C23
a^(1/2) b^(7/2).  This moment is an approximation (documented as such in docs/models.md).

**FASTSIM** (Kalker 1982, "A fast algorithm for the simplified theory of rolling contact", VSD 11 1-13): the
simplified theory with the flexibilities L1 = 8a/(3 G C11), L2 = 8a/(3 G C22), L3 = π a √(a/b)/(4 G C23) (these
reproduce Kalker's linear coefficients at small creepage) and the parabolic traction bound μ p(x, y),
p = 2N/(π a b) (1 - x²/a² - y²/b²); the ellipse is cut in ``strips`` strips along the rolling direction, each
integrated from its leading edge in as many elements (traction from the rigid slip, capped at the bound).  It
returns the spin moment as well.

**The creep-force law table** (:data:`CREEP_LAWS`, the pattern of the LTD coupler laws): each entry names a law,
its kernel code, source and what it returns; ``friction.law`` of a profile pair picks one, and every kernel calls
:func:`creep_force`, which dispatches on the code.

**Kalker coefficients**: Table E.3 of Kalker (1990) for ν = 0, 0.25, 0.5 (shipped CSV), interpolated in ν
as in CONTACT (quadratic in ν for 1/C), tabulated on a uniform grid of ln(a/b) by a monotone cubic (PCHIP)
through the table nodes for 0.1 ≤ a/b ≤ 10, and by Kalker's asymptotes for slender ellipses beyond it (valid for
a/b 1/50-50, :mod:`.kalker`).

**Yaw** (:func:`yaw_offsets`): the contact tables are built for a wheelset without yaw; a yawed wheelset's
contact point lies ahead of (or behind) the axle by dX = -sin ψ (dY - σ r tan γ_w) to first order in ψ (the
trace line of :func:`hpcrail.models.wheelrail.geometry.wheel_point`), which the creepages and the moments of the
contact forces take into account; z, φ and the contact angle keep their yaw-free values (second order in ψ).
"""
from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np
from numba import njit

from hpcrail._numba import JIT_NRT_FREE
from hpcrail.models.wheelrail import layout as L
from hpcrail.models.wheelrail.hertz import hertz_kalker
from hpcrail.models.wheelrail.kalker import (  # noqa: F401 - part of this module's API
    KalkerParams, kalker_coefficients, kalker_nu, kalker_params, kalker_table,
)


# ------------------------------------------------------------------------------------------ creepages

@njit(**JIT_NRT_FREE)
def wheelset_angular_velocity(phi, psi, phidot, psidot_abs, omega_axle):
    """Absolute angular velocity of a wheelset in track-frame components [rad/s].

    ``phi``, ``psi``: roll and yaw relative to the track frame [rad]; ``phidot``: roll rate; ``psidot_abs``:
    absolute yaw rate (ψ̇ plus the track frame's V/R in a curve); ``omega_axle``: rotation about the axle
    (positive when rolling forward, ≈ V/r0).  Axle axis R_z(ψ)R_x(φ)·e_y = (-sin ψ cos φ, cos ψ cos φ, sin φ),
    roll axis R_z(ψ)·e_x."""
    ax = -math.sin(psi) * math.cos(phi)
    ay = math.cos(psi) * math.cos(phi)
    az = math.sin(phi)
    return (phidot * math.cos(psi) + omega_axle * ax, phidot * math.sin(psi) + omega_axle * ay,
            psidot_abs + omega_axle * az)


@njit(**JIT_NRT_FREE)
def creepages(V, vx, vy, vz, wx, wy, wz, dYc, dZc, gamma, sigma, dXc=0.0):
    """Creepages (ξ_x, ξ_y, φ [1/m]) of one wheel (contact frame of the module docstring).

    ``V`` [m/s] > 0: reference (forward) speed; ``vx, vy, vz``: absolute velocity of the wheelset centre in
    track-frame components [m/s]; ``wx, wy, wz``: absolute angular velocity of the wheelset in track-frame
    components [rad/s] (:func:`wheelset_angular_velocity`); ``dYc, dZc, dXc`` [m]: contact point relative to the
    wheelset centre (track frame; dXc the longitudinal offset of a yawed wheelset, :func:`yaw_offsets`);
    ``gamma`` [rad]: track-frame contact angle; ``sigma``: +1 left wheel, -1 right wheel.
    """
    # v_s = v_c + w x r_c, r_c = (dXc, dYc, dZc)
    sx = vx + wy * dZc - wz * dYc
    sy = vy - wx * dZc + wz * dXc
    sz = vz + wx * dYc - wy * dXc
    cg = math.cos(gamma)
    sg = math.sin(gamma)
    xi_x = sx / V
    xi_y = (sy * cg + sz * sigma * sg) / V
    spin = (-wy * sigma * sg + wz * cg) / V
    return xi_x, xi_y, spin


# ------------------------------------------------------------------------------------------ Polach

class CreepParams(NamedTuple):
    """Parameters of the creep-force law: ``law`` (its code in :data:`CREEP_LAWS`), μ0 (friction at zero slip
    velocity; FASTSIM's Coulomb μ), A = μ∞/μ0, B [s/m], k_A, k_S (Polach 2005), the shear modulus G [Pa] and
    FASTSIM's number of ``strips`` (and of elements per strip).  Polach 1999 and paper 004: A = 1 (constant
    μ = μ0), k_A = k_S = 1."""

    law: int
    mu0: float
    A: float
    B: float
    kA: float
    kS: float
    G: float
    strips: int


#: the Polach-only name of the parameters (before the creep-law table)
PolachParams = CreepParams

LAW_POLACH = 0
LAW_FASTSIM = 1


@dataclasses.dataclass(frozen=True)
class CreepLaw:
    """One creep-force law: its ``name`` (``friction.law``), kernel ``code`` (the branch of :func:`creep_force`),
    ``description``, ``source`` and the friction parameters it uses."""

    name: str
    code: int
    description: str
    source: str
    parameters: tuple


#: name -> creep-force law; a new law adds an entry, a code and its branch in :func:`creep_force`
CREEP_LAWS: dict[str, CreepLaw] = {law.name: law for law in (
    CreepLaw("polach", LAW_POLACH, "Polach's fast method: saturating creep force from the Kalker coefficients, "
             "spin correction, reduction factors and falling friction; spin moment: Kalker's linear one scaled by "
             "the saturation", "Polach 1999, VSD 33 suppl. 728-739; Polach 2005, Wear 258 992-1000",
             ("mu", "A", "B_s_per_m", "kA", "kS")),
    CreepLaw("fastsim", LAW_FASTSIM, "Kalker's FASTSIM: the simplified theory integrated over the contact ellipse "
             "(strips x elements), parabolic traction bound, Coulomb friction; forces and spin moment",
             "Kalker 1982, VSD 11 1-13", ("mu", "fastsim_strips")),
)}


def creep_params(law: str = "polach", mu: float = 0.2364, E: float = 2.1e11, nu: float = 0.28, A: float = 1.0,
                 B: float = 0.0, kA: float = 1.0, kS: float = 1.0, strips: int = 24) -> CreepParams:
    """Parameters of the creep-force law ``law`` (a name of :data:`CREEP_LAWS`; paper 004 defaults: Polach with
    μ = 0.2364 constant, E = 2.1e11 Pa, ν = 0.28 → G = E/(2(1+ν))).  Raises ValueError naming the allowed
    values."""
    if law not in CREEP_LAWS:
        raise ValueError(f"unknown creep-force law {law!r}; allowed: {', '.join(CREEP_LAWS)}")
    if not (mu > 0 and 0 < A <= 1 and B >= 0 and 0 < kS <= kA <= 1 and 2 <= strips <= 1000):
        raise ValueError(f"creep-law parameters: need mu > 0, 0 < A <= 1, B >= 0, 0 < kS <= kA <= 1, 2 <= strips "
                         f"<= 1000; got mu={mu}, A={A}, B={B}, kA={kA}, kS={kS}, strips={strips}")
    return CreepParams(law=CREEP_LAWS[law].code, mu0=float(mu), A=float(A), B=float(B), kA=float(kA), kS=float(kS),
                       G=float(E / (2.0 * (1.0 + nu))), strips=int(strips))


def polach_params(mu: float = 0.2364, E: float = 2.1e11, nu: float = 0.28, A: float = 1.0, B: float = 0.0,
                  kA: float = 1.0, kS: float = 1.0) -> CreepParams:
    """Polach parameters (:func:`creep_params` with ``law="polach"``)."""
    return creep_params("polach", mu, E, nu, A, B, kA, kS)


@njit(**JIT_NRT_FREE)
def polach(Pp, Q, a, b, C11, C22, C23, xi_x, xi_y, spin, V):
    """Polach creep forces on the wheel (F_x, F_y [N]) and spin moment M_z [N m] in the contact frame.

    ``Q`` [N] normal load (<= 0: no force); ``a, b`` [m] contact semi-axes (a in the rolling direction);
    ``C11, C22, C23`` Kalker coefficients at a/b; creepages ξ_x, ξ_y [-] and spin φ [1/m]; ``V`` [m/s] for the
    slip velocity of the falling friction law.
    """
    if Q <= 0.0 or a <= 0.0 or b <= 0.0:
        return 0.0, 0.0, 0.0
    G = Pp.G
    syc = xi_y
    if abs(xi_y + spin * a) > abs(xi_y):
        syc = xi_y + spin * a
    s = math.sqrt(xi_x * xi_x + xi_y * xi_y)
    sc = math.sqrt(xi_x * xi_x + syc * syc)
    if sc == 0.0:
        return 0.0, 0.0, 0.0
    mu = Pp.mu0
    if Pp.A != 1.0:
        mu = Pp.mu0 * ((1.0 - Pp.A) * math.exp(-Pp.B * V * sc) + Pp.A)
    if s > 0.0:
        cjj = math.sqrt(C11 * C11 * xi_x * xi_x + C22 * C22 * xi_y * xi_y) / s
    else:
        cjj = C22
    eps = 0.25 * G * math.pi * a * b * cjj * sc / (Q * mu)
    ka = Pp.kA * eps
    F = 2.0 * Q * mu / math.pi * (ka / (1.0 + ka * ka) + math.atan(Pp.kS * eps))
    isc = 1.0 / sc
    Fx = -F * xi_x * isc
    Fy = -F * xi_y * isc
    # spin contribution to the lateral force (Polach 1999)
    fe = 1.0 + 6.3 * (1.0 - math.exp(-a / b))
    sab = math.sqrt(a * b)
    epsM = 8.0 / 3.0 * G * b * sab * C23 * abs(syc) / (Q * mu * fe)
    e2 = epsM * epsM
    dM = (e2 - 1.0) / (e2 + 1.0)
    om = 1.0 - dM * dM
    KM = abs(epsM) * (dM ** 3 / 3.0 - 0.5 * dM * dM + 1.0 / 6.0) - math.sqrt(om * om * om) / 3.0
    FyS = -9.0 / 16.0 * a * Q * mu * KM * fe * spin * isc
    Fy -= FyS
    # spin moment: Kalker linear theory scaled by the saturation of the creep force
    c2 = a * b
    c3 = c2 * sab
    flx = G * c2 * C11 * xi_x
    fly = G * c2 * C22 * xi_y + G * c3 * C23 * spin
    flin2 = flx * flx + fly * fly
    sat = math.sqrt((Fx * Fx + Fy * Fy) / flin2) if flin2 > 0.0 else 1.0
    if sat > 1.0:
        sat = 1.0
    c33g = 32.0 / (15.0 * math.pi) * G * C23 * sab * b * b * b
    Mz = sat * (G * c3 * C23 * xi_y - c33g * spin)
    return Fx, Fy, Mz



@njit(**JIT_NRT_FREE)
def fastsim(Pp, Q, a, b, C11, C22, C23, xi_x, xi_y, spin):
    """FASTSIM creep forces on the wheel (F_x, F_y [N]) and spin moment M_z [N m] in the contact frame
    (Kalker 1982; the module docstring).  ``Q`` [N] normal load (<= 0: no force); ``a, b`` [m] semi-axes (a in the
    rolling direction); ``C11, C22, C23`` Kalker's coefficients at a/b (they set the flexibilities); creepages
    ξ_x, ξ_y and spin φ [1/m]; friction μ = ``Pp.mu0`` (Coulomb).  ``Pp.strips`` strips × as many elements."""
    if Q <= 0.0 or a <= 0.0 or b <= 0.0:
        return 0.0, 0.0, 0.0
    G = Pp.G
    mu = Pp.mu0
    L1 = 8.0 * a / (3.0 * G * C11)
    L2 = 8.0 * a / (3.0 * G * C22)
    L3 = math.pi * a * math.sqrt(a / b) / (4.0 * G * C23)
    p0 = 2.0 * Q / (math.pi * a * b)
    ny = Pp.strips
    nx = Pp.strips
    dy = 2.0 * b / ny
    Fx = 0.0
    Fy = 0.0
    Mz = 0.0
    for j in range(ny):
        y = -b + (j + 0.5) * dy
        ay = a * math.sqrt(1.0 - (y / b) ** 2)
        dx = 2.0 * ay / nx
        px = 0.0
        py = 0.0
        for i in range(nx):
            x = ay - (i + 0.5) * dx    # element centre, leading edge first
            h = 0.5 * dx if i == 0 else dx   # from the leading edge to the first centre, then centre to centre
            px -= (xi_x / L1 - spin * y / L3) * h
            py -= (xi_y / L2 + spin * (x + 0.5 * h) / L3) * h
            bound = mu * p0 * (1.0 - (x / a) ** 2 - (y / b) ** 2)
            if bound < 0.0:
                bound = 0.0
            pt = math.sqrt(px * px + py * py)
            if pt > bound:
                if pt > 0.0:
                    px *= bound / pt
                    py *= bound / pt
            dA = dx * dy
            Fx += px * dA
            Fy += py * dA
            Mz += (x * py - y * px) * dA
    return Fx, Fy, Mz


@njit(**JIT_NRT_FREE)
def creep_force(Pp, Q, a, b, C11, C22, C23, xi_x, xi_y, spin, V):
    """Creep forces (F_x, F_y [N]) and spin moment M_z [N m] on the wheel by the law ``Pp.law`` of the creep-law
    table (:data:`CREEP_LAWS`): :func:`polach` or :func:`fastsim`.  Arguments as :func:`polach`."""
    if Pp.law == LAW_FASTSIM:
        return fastsim(Pp, Q, a, b, C11, C22, C23, xi_x, xi_y, spin)
    return polach(Pp, Q, a, b, C11, C22, C23, xi_x, xi_y, spin, V)


@njit(**JIT_NRT_FREE)
def yaw_offsets(out, psi, phi):
    """Longitudinal position dX [m] of each contact record of a kernel output (:mod:`.layout`) for a wheelset
    yawed by ``psi`` [rad] (nose left positive, relative to the track frame) at roll ``phi``: the trace line of
    :func:`hpcrail.models.wheelrail.geometry.wheel_point` to first order in ψ, dX = -sin ψ (dY - σ r tan γ_w)
    with γ_w = γ - σφ (the wheel centre plane's rotation and the lead of a contact on a sloped profile: at the
    flange 1.3 m × ψ).  Writes ``out[rec + C_DX]``; records with zero weight and radius get 0."""
    sp = math.sin(psi)
    for k in range(4):
        base = L.CONTACT0 + k * L.N_REC
        sigma = 1.0 if k < 2 else -1.0
        r = out[base + L.C_R]
        if r == 0.0:
            out[base + L.C_DX] = 0.0
            continue
        gw = out[base + L.C_GAMMA] - sigma * phi
        out[base + L.C_DX] = -sp * (out[base + L.C_DY] - sigma * r * math.tan(gw))


@njit(**JIT_NRT_FREE)
def contact_creep_forces(HK, Pp, out, Nrec, V, vx, vy, vz, wx, wy, wz, F):
    """Creep forces of the four contact records of an on-line kernel output (:mod:`.layout`).

    ``HK``: fused Hertz/Kalker table (:func:`hertz.contact_coef_params`);
    ``out``: float64[layout.N_OUT] from ``kec_wheelset`` or ``lut_wheelset``; ``Nrec`` float64[4]: normal
    force [N] on each record (left primary, left secondary, right primary, right secondary — e.g. the
    wheel's constraint force times the record's C_W share, or the LUT flange penalty); ``Pp``: the creep-law
    parameters (:func:`creep_params`; any law of :data:`CREEP_LAWS`); ``V`` [m/s]
    reference speed; (vx, vy, vz) absolute velocity of the wheelset centre and (wx, wy, wz) its absolute
    angular velocity (:func:`wheelset_angular_velocity`), track-frame components.  Writes
    F float64[4, 8] = (F_x, F_y, M_z, a, b, ξ_x, ξ_y, φ) per record (zeros where N <= 0).  No allocation.
    """
    for k in range(4):
        base = L.CONTACT0 + k * L.N_REC
        N = Nrec[k]
        if N <= 0.0:
            for j in range(8):
                F[k, j] = 0.0
            continue
        sigma = 1.0 if k < 2 else -1.0
        a, b, c11, c22, c23 = hertz_kalker(HK, out[base + L.C_A], out[base + L.C_B], N)
        xx, xy, sp = creepages(V, vx, vy, vz, wx, wy, wz, out[base + L.C_DY], out[base + L.C_DZ],
                               out[base + L.C_GAMMA], sigma, out[base + L.C_DX])
        fx, fy, mz = creep_force(Pp, N, a, b, c11, c22, c23, xx, xy, sp, V)
        F[k, 0] = fx
        F[k, 1] = fy
        F[k, 2] = mz
        F[k, 3] = a
        F[k, 4] = b
        F[k, 5] = xx
        F[k, 6] = xy
        F[k, 7] = sp


@njit(**JIT_NRT_FREE)
def flange_penalty(out, base, K_hertz, D_damp, delta_dot):
    """LUT flange normal force f = K_hertz δ^1.5 + D_damp δ̇ δ (paper 004 eq 20) of the flange record at
    ``base`` (δ = out[base + C_DELTA]; δ̇ [m/s] = ∂δ/∂(y, z, φ)·(ẏ, ż, φ̇) from the record's partials);
    zero without penetration, never negative (no adhesion)."""
    d = out[base + L.C_DELTA]
    if d <= 0.0:
        return 0.0
    f = K_hertz * d * math.sqrt(d) + D_damp * delta_dot * d
    return f if f > 0.0 else 0.0
