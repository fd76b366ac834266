"""The numeric planar-train model: runtime parameters (SI arrays, :class:`PlanarParams`), the Python-side
model (:class:`PlanarModel`) and the state layout.  The scenario → model translation is
:func:`hpcrail.kinds.planar_train.build.build_planar`.

State layout (float64[n]):

* per car j = 0..N−1 (head first), a block of 6 at 6j:
  ``[q, y, ψ_r, v, ẏ, ψ̇_r]`` — q = s_1 (arc length of the head car's centre of gravity) for j = 0 and
  the gap g_j = s_{j−1} − s_j − D_{j−1} for j ≥ 1 (D = centre distance with every coupler at rest on
  tangent track; relative coordinates keep millimetre coupler motions resolvable, PERFORMANCE_NOTES);
  y = lateral offset of the centre of gravity from the track centre line (+ left), ψ_r = yaw relative
  to the track tangent, v = ṡ.
* inertial coupler model only, per coupler k = 0..N−2 a block of 8 at 6N + 8k:
  ``[d_a, α_a, d_b, α_b, ḋ_a, α̇_a, ḋ_b, α̇_b]`` (end a on car k, end b on car k+1; see
  :mod:`hpcrail.models.couplers.kinematics`).

The noninertial model has no coupler states: its coupler coordinates are solved inside the
right-hand side and kept, per scenario, in ``params.ni_x`` as the warm start of the next solve.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np


G = 9.81  #: gravity [m/s²]

# per-car scratch columns (written by every evaluation)
(W_X, W_Y, W_C, W_S, W_VX, W_VY, W_W, W_TX, W_TY, W_K, W_KP, W_FX, W_FY, W_MZ, W_SPOS, W_TANPHI,
 W_FTR, W_FRES, W_V, W_YL, W_YD) = range(21)
N_W = 24

# per-coupler results of the last evaluation (read by observe)
CO_F, CO_E, CO_AA, CO_AB = range(4)
N_CO = 4

#: accumulator of observe: the coupler envelopes (models.couplers.envelope), then max |α| per coupler end
N_SHANK_BLOCKS = 2

# applied force modes
F_CONSTANT, F_HOLD_SPEED = 0, 1


class PlanarParams(NamedTuple):
    """Runtime parameters and per-scenario scratch of the planar-train kernels (SI units)."""

    n_car: int
    n_cpl: int
    inertial: int
    newton_maxit: int
    newton_tol: float
    trk_s0: float
    trk_h: float
    trk_inv_h: float
    trk_end: float
    gravity: float
    rail_spacing: float
    mass: np.ndarray            # [N] car body mass [kg]
    yaw_inertia: np.ndarray     # [N] [kg m²]
    bogie_b: np.ndarray         # [N] bogie half spacing [m]
    k_guid: np.ndarray          # [N] lateral guidance stiffness per bogie [N/m]
    c_guid: np.ndarray          # [N] lateral guidance damping per bogie [N s/m]
    resistance: np.ndarray      # [N] constant running resistance [N]
    end_len: np.ndarray         # [N] L = x_P + l_0: centre of gravity to the shank pin at d = 0 [m]
    cog_h: np.ndarray           # [N] centre-of-gravity height [m]
    center_dist: np.ndarray     # [N-1] centre distance with the coupler at rest [m]
    cp: np.ndarray              # coupler parameters (kinematics.CP_*)
    trk_nodes: np.ndarray       # [n, 7] track table
    trk_slopes: np.ndarray      # [n-1, 2]
    f_veh: np.ndarray           # [F] int64 vehicle index (0-based)
    f_mode: np.ndarray          # [F] int64 F_CONSTANT | F_HOLD_SPEED
    f_value: np.ndarray         # [F] force [N] or set speed [m/s]
    f_tau: np.ndarray           # [F] speed-controller time constant [s]
    f_max: np.ndarray           # [F] force limit [N]
    f_start: np.ndarray         # [F] start time [s]
    # ---- per-scenario scratch (mutated by the kernels) ----
    work: np.ndarray            # [N, N_W]
    ni_x: np.ndarray            # [M, 4] noninertial coordinates of the last solve (warm start)
    ni_xd: np.ndarray           # [M, 4] their rates
    ni_stats: np.ndarray        # [N_NS] Newton statistics (kinematics.NS_*)
    cq: np.ndarray              # [M, 4] inertial model: generalized active forces on d_a, α_a, d_b, α_b
    cpl_out: np.ndarray         # [M, N_CO] per-coupler results of the last evaluation
    last_eval: np.ndarray       # [2] time and checksum of the state of the last evaluation
    gw: np.ndarray              # [G_N] coupler geometry work array
    pz: np.ndarray              # [10] pose work array
    vz: np.ndarray              # [6] velocity work array
    xw: np.ndarray              # [4] Newton iterate
    sx: np.ndarray              # [4] Newton update
    srhs: np.ndarray            # [4]
    xd: np.ndarray              # [4]
    km: np.ndarray              # [49] Kane mass matrix (inertial)
    kb: np.ndarray              # [7] Kane right-hand side
    kv: np.ndarray              # [3, 7] partial velocities x, y and partial angular velocity
    dscratch: np.ndarray        # [n] derivative scratch for observe
    no_rec_car: np.ndarray      # [1, 1] placeholder record arrays
    no_rec_cpl: np.ndarray      # [1, 1]


@dataclasses.dataclass
class PlanarModel:
    """Python-side description of a built planar-train model."""

    params: PlanarParams
    y0: np.ndarray
    atol_scale: np.ndarray
    acc0: np.ndarray
    vehicle_types: list[str]
    coupler_model: str
    track_length: float
    notes: list[str]
    state_names: list[str]

    @property
    def n_cars(self) -> int:
        return self.params.n_car

    def position_indices(self) -> np.ndarray:
        """Indices of the position-level states (for linearisation into M, C, K form)."""
        N, M = self.params.n_car, self.params.n_cpl
        idx = [6 * j + i for j in range(N) for i in range(3)]
        if self.params.inertial:
            idx += [6 * N + 8 * k + i for k in range(M) for i in range(4)]
        return np.array(idx, np.int64)

    def velocity_indices(self) -> np.ndarray:
        N, M = self.params.n_car, self.params.n_cpl
        idx = [6 * j + 3 + i for j in range(N) for i in range(3)]
        if self.params.inertial:
            idx += [6 * N + 8 * k + 4 + i for k in range(M) for i in range(4)]
        return np.array(idx, np.int64)


def car_positions(p: PlanarParams, y: np.ndarray) -> np.ndarray:
    """Arc lengths s_j [m] (float64[..., N]) of the car centres from states ``y`` (float64[..., n])."""
    N = p.n_car
    gaps = y[..., 6:6 * N:6]
    s1 = y[..., :1]
    return np.concatenate([s1, s1 - np.cumsum(p.center_dist + gaps, axis=-1)], axis=-1)
