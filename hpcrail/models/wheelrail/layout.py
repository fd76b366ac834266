"""Layout of the output vector written by the on-line contact kernels (``lut_wheelset``, ``kec_wheelset``).

One float64 vector of length :data:`N_OUT` per wheelset and evaluation (the caller allocates it once):

=====================  ============================================================================
index                  content
=====================  ============================================================================
``Z``                  height of the wheelset centre above the rail profile origins [m]
``PHI``                roll angle φ [rad], positive = left side up
``DZ_DP + k``          ∂z/∂p_k, p = (y, y_l, y_r, z_l, z_r): wheelset lateral shift and the lateral and
                       vertical irregularities of the left and right rail [m/m]
``DPHI_DP + k``        ∂φ/∂p_k [rad/m]
``CZ``, ``CPHI``       convective accelerations ṗᵀ(∂²z/∂p²)ṗ and ṗᵀ(∂²φ/∂p²)ṗ for the rates ṗ passed
                       in, so that z̈ = ∂z/∂p·p̈ + CZ (acceleration-level constraints) [m/s², rad/s²]
``ZDOT``, ``PHIDOT``   ż = ∂z/∂p·ṗ, φ̇ [m/s, rad/s]
``SK_L``, ``SK_R``     KEC contact positions s^lk, s^rk (paper 004 eq 22) [m]; NaN for the LUT
``ITER``               Newton iterations of the KEC solve (0 for the LUT); negative = not converged
``CONTACT[w][c]``      start of the contact record c (0: primary, 1: secondary) of wheel w (0: left,
                       1: right); fields below at ``CONTACT[w][c] + field``
=====================  ============================================================================

Contact record fields (offsets):

=============  ==============================================================================================
``C_W``        share of the wheel's normal force carried by this contact point (KEC: 1 - w and w of the
               regularised tread/flange transition; LUT: 1 for the tread, 0 for the flange, which carries
               the Hertzian penalty force instead)
``C_SW``       wheel surface parameter s^w [m] (paper 004 eq 10: lateral from the wheel profile origin, +Y)
``C_SR``       rail surface parameter s^r [m] (rail profile frame, +Y)
``C_R``        rolling radius [m]
``C_GAMMA``    contact angle in the track frame [rad]: angle of the contact normal (rail → wheel) from the
               track Z axis, positive when it leans towards the track centre (both wheels)
``C_A``        Hertz curvature sum in the rolling direction ½·cos γ_w / r [1/m]
``C_B``        Hertz curvature sum in the lateral direction ½(κ_wheel + κ_rail) [1/m]
``C_DY``       lateral position of the contact point relative to the wheelset centre, track frame [m]
``C_DZ``       vertical position of the contact point relative to the wheelset centre, track frame [m]
``C_DELTA``    LUT flange record: indentation along the contact normal [m] (positive = penetration, at the
               actual z, φ to first order); tread records and KEC: 0
``C_DDY``      ∂δ/∂y [m/m] (flange record, at fixed z, φ)
``C_DDZ``      ∂δ/∂z [m/m]
``C_DDPHI``    ∂δ/∂φ [m/rad]
``C_DX``       longitudinal position of the contact point relative to the wheelset centre, track frame [m]
               (forward positive): 0 from the kernels, set for a yawed wheelset by ``creep.yaw_offsets``
=============  ==============================================================================================
"""
from __future__ import annotations

Z = 0
PHI = 1
DZ_DP = 2
DPHI_DP = 7
CZ = 12
CPHI = 13
ZDOT = 14
PHIDOT = 15
SK_L = 16
SK_R = 17
ITER = 18

C_W = 0
C_SW = 1
C_SR = 2
C_R = 3
C_GAMMA = 4
C_A = 5
C_B = 6
C_DY = 7
C_DZ = 8
C_DELTA = 9
C_DDY = 10
C_DDZ = 11
C_DDPHI = 12
C_DX = 13
N_REC = 14

CONTACT0 = 20
#: start index of each contact record: CONTACT[wheel][record]
CONTACT = ((CONTACT0, CONTACT0 + N_REC), (CONTACT0 + 2 * N_REC, CONTACT0 + 3 * N_REC))
L_PRIMARY = CONTACT0
L_SECONDARY = CONTACT0 + N_REC
R_PRIMARY = CONTACT0 + 2 * N_REC
R_SECONDARY = CONTACT0 + 3 * N_REC
N_OUT = CONTACT0 + 4 * N_REC

#: names of the input vector p of the derivatives
P_NAMES = ("y", "y_l", "y_r", "z_l", "z_r")
