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

**Kalker coefficients**: Table E.3 of Kalker (1990) for ν = 0, 0.25, 0.5 (shipped CSV), interpolated in ν
as in CONTACT (quadratic in ν for 1/C), tabulated on a uniform grid of ln(a/b) ∈ [ln 0.1, ln 10] by a
monotone cubic (PCHIP) through the table nodes; a/b outside [0.1, 10] is clamped to the table ends.
"""
from __future__ import annotations

import math
from typing import NamedTuple

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
def creepages(V, vx, vy, vz, wx, wy, wz, dYc, dZc, gamma, sigma):
    """Creepages (ξ_x, ξ_y, φ [1/m]) of one wheel (contact frame of the module docstring).

    ``V`` [m/s] > 0: reference (forward) speed; ``vx, vy, vz``: absolute velocity of the wheelset centre in
    track-frame components [m/s]; ``wx, wy, wz``: absolute angular velocity of the wheelset in track-frame
    components [rad/s] (:func:`wheelset_angular_velocity`); ``dYc, dZc`` [m]: contact point relative to the
    wheelset centre (track frame, planar contact: no longitudinal offset); ``gamma`` [rad]: track-frame
    contact angle; ``sigma``: +1 left wheel, -1 right wheel.
    """
    # v_s = v_c + w x r_c, r_c = (0, dYc, dZc)
    sx = vx + wy * dZc - wz * dYc
    sy = vy - wx * dZc
    sz = vz + wx * dYc
    cg = math.cos(gamma)
    sg = math.sin(gamma)
    xi_x = sx / V
    xi_y = (sy * cg + sz * sigma * sg) / V
    spin = (-wy * sigma * sg + wz * cg) / V
    return xi_x, xi_y, spin


# ------------------------------------------------------------------------------------------ Polach

class PolachParams(NamedTuple):
    """Polach parameters: μ0 (friction at zero slip velocity), A = μ∞/μ0, B [s/m], k_A, k_S, and the shear
    modulus G [Pa].  Polach 1999 and paper 004: A = 1 (constant μ = μ0), k_A = k_S = 1."""

    mu0: float
    A: float
    B: float
    kA: float
    kS: float
    G: float


def polach_params(mu: float = 0.2364, E: float = 2.1e11, nu: float = 0.28, A: float = 1.0, B: float = 0.0,
                  kA: float = 1.0, kS: float = 1.0) -> PolachParams:
    """Parameters (paper 004 defaults: μ = 0.2364 constant, E = 2.1e11 Pa, ν = 0.28 → G = E/(2(1+ν)))."""
    if not (mu > 0 and 0 < A <= 1 and B >= 0 and 0 < kS <= kA <= 1):
        raise ValueError(f"Polach parameters: need mu > 0, 0 < A <= 1, B >= 0, 0 < kS <= kA <= 1; got "
                         f"mu={mu}, A={A}, B={B}, kA={kA}, kS={kS}")
    return PolachParams(mu0=float(mu), A=float(A), B=float(B), kA=float(kA), kS=float(kS),
                        G=float(E / (2.0 * (1.0 + nu))))


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
def contact_creep_forces(HK, Pp, out, Nrec, V, vx, vy, vz, wx, wy, wz, F):
    """Creep forces of the four contact records of an on-line kernel output (:mod:`.layout`).

    ``HK``: fused Hertz/Kalker table (:func:`hertz.contact_coef_params`); ``Pp``: :class:`PolachParams`;
    ``out``: float64[layout.N_OUT] from ``kec_wheelset`` or ``lut_wheelset``; ``Nrec`` float64[4]: normal
    force [N] on each record (left primary, left secondary, right primary, right secondary — e.g. the
    wheel's constraint force times the record's C_W share, or the LUT flange penalty); ``V`` [m/s]
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
                               out[base + L.C_GAMMA], sigma)
        fx, fy, mz = polach(Pp, N, a, b, c11, c22, c23, xx, xy, sp, V)
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
