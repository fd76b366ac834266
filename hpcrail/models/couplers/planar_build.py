"""Build the numeric planar-train model (SI arrays, initial state) from a validated
:class:`~hpcrail.config.planar_train.PlanarTrainScenario`.

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

from hpcrail.config.planar_train import PlanarTrainScenario
from hpcrail.models.couplers.kinematics import G_N, N_NS, coupler_parameter_array
from hpcrail.models.track.geometry import build_track_table, sections_from_spec

G = 9.81  #: gravity [m/s²]

# per-car scratch columns (written by every evaluation)
(W_X, W_Y, W_C, W_S, W_VX, W_VY, W_W, W_TX, W_TY, W_K, W_KP, W_FX, W_FY, W_MZ, W_SPOS, W_TANPHI,
 W_FTR, W_FRES, W_V, W_YL, W_YD) = range(21)
N_W = 24

# per-coupler results of the last evaluation (read by observe)
CO_F, CO_E, CO_AA, CO_AB = range(4)
N_CO = 4

# accumulator of observe
ACC_VMAX, ACC_OFFTRACK, ACC_T_DRAFT, ACC_T_BUFF, ACC_FMAX, ACC_FMIN = range(6)
ACC_HEAD = 8
N_ACC_PER_COUPLER = 6   # fmax, fmin, emax, emin, max|α_a|, max|α_b|

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


def shank_cg(sc: PlanarTrainScenario) -> float:
    sh = sc.coupler.shank
    return sh.cg_from_pin_m if sh.cg_from_pin_m is not None else 0.5 * sh.length_m


def build_planar(sc: PlanarTrainScenario) -> PlanarModel:
    """Convert a validated scenario to a :class:`PlanarModel` (SI arrays, initial state at rest
    relative spacing, tolerances scales, observe accumulator)."""
    names = sc.vehicle_type_names()
    N = len(names)
    M = N - 1
    cts = [sc.car_types[n] for n in names]
    cpl = sc.coupler
    dg, sh, kn = cpl.draft_gear, cpl.shank, cpl.knuckle
    inertial = 1 if cpl.model == "inertial" else 0
    xP = np.array([c.coupler_pivot_from_centre_m for c in cts])
    end_len = xP + dg.free_length_m
    center = end_len[:-1] + end_len[1:] + 2.0 * sh.length_m + kn.free_length_m
    cp = coupler_parameter_array(kB=dg.stiffness_N_per_m, cB=dg.damping_Ns_per_m, l0=dg.free_length_m,
                                 kr=sh.torsional_stiffness_Nm_per_rad, cr=sh.torsional_damping_Nms_per_rad,
                                 alpha0=sh.rest_angle_rad, ls=sh.length_m, lg=shank_cg(sc),
                                 m_slider=dg.slider_mass_kg, m_shank=sh.mass_kg, I_shank=sh.yaw_inertia_kgm2,
                                 krr=kn.stiffness_N_per_m, crr=kn.damping_Ns_per_m, lr0=kn.free_length_m)
    secs = sections_from_spec(sc.track.sections)
    tab = build_track_table(secs, sc.track.grid_m)
    notes = []
    if not tab.exact_grid:
        notes.append(f"track table on a {tab.h:.4g} m grid that does not hit every section end: curvature is "
                     "smoothed over one cell at those ends")
    F = len(sc.forces)
    f_veh = np.array([f.vehicle - 1 for f in sc.forces], np.int64).reshape(F)
    f_mode = np.array([F_HOLD_SPEED if f.hold_speed_mps is not None else F_CONSTANT for f in sc.forces],
                      np.int64).reshape(F)
    f_value = np.array([f.hold_speed_mps if f.hold_speed_mps is not None else f.force_N for f in sc.forces],
                       float).reshape(F)
    f_tau = np.array([f.time_constant_s for f in sc.forces], float).reshape(F)
    f_max = np.array([f.max_force_N if f.max_force_N is not None else np.inf for f in sc.forces], float).reshape(F)
    f_start = np.array([f.start_s for f in sc.forces], float).reshape(F)
    n = 6 * N + (8 * M if inertial else 0)
    params = PlanarParams(
        n_car=N, n_cpl=M, inertial=inertial, newton_maxit=int(cpl.newton.max_iterations),
        newton_tol=float(cpl.newton.tolerance_m), trk_s0=float(sc.track.start_m), trk_h=tab.h, trk_inv_h=1.0 / tab.h,
        trk_end=float(sc.track.start_m) + tab.length, gravity=G, rail_spacing=float(sc.track.rail_spacing_m),
        mass=np.array([c.mass_kg for c in cts]), yaw_inertia=np.array([c.yaw_inertia_kgm2 for c in cts]),
        bogie_b=np.array([c.bogie_half_spacing_m for c in cts]),
        k_guid=np.array([c.guidance.lateral_stiffness_N_per_m for c in cts]),
        c_guid=np.array([c.guidance.lateral_damping_Ns_per_m for c in cts]),
        resistance=np.array([c.running_resistance_N for c in cts]), end_len=end_len,
        cog_h=np.array([c.cog_height_m for c in cts]), center_dist=center, cp=cp,
        trk_nodes=tab.nodes, trk_slopes=tab.slopes,
        f_veh=f_veh, f_mode=f_mode, f_value=f_value, f_tau=f_tau, f_max=f_max, f_start=f_start,
        work=np.zeros((N, N_W)), ni_x=np.zeros((M, 4)), ni_xd=np.zeros((M, 4)), ni_stats=np.zeros(N_NS),
        cq=np.zeros((M, 4)), cpl_out=np.zeros((M, N_CO)), last_eval=np.full(2, np.nan), gw=np.zeros(G_N),
        pz=np.zeros(10), vz=np.zeros(6), xw=np.zeros(4), sx=np.zeros(4), srhs=np.zeros(4), xd=np.zeros(4),
        km=np.zeros(49), kb=np.zeros(7), kv=np.zeros((3, 7)), dscratch=np.zeros(n),
        no_rec_car=np.zeros((1, 1)), no_rec_cpl=np.zeros((1, 1)),
    )
    y0 = np.zeros(n)
    y0[0] = sc.initial.head_position_m
    y0[3:6 * N:6] = sc.initial.speed_mps
    scale = np.ones(n)
    state_names = []
    for j in range(N):
        b = 6 * j
        scale[b + 2] = 0.1          # yaw [rad] ~ lateral [m] over a ~10 m lever
        scale[b + 3:b + 5] = 10.0    # speeds [m/s]
        scale[b + 5] = 1.0
        q = "s" if j == 0 else "gap"
        state_names += [f"car {j + 1} {q}", f"car {j + 1} lateral", f"car {j + 1} yaw",
                        f"car {j + 1} speed", f"car {j + 1} lateral speed", f"car {j + 1} yaw rate"]
    if inertial:
        for k in range(M):
            b = 6 * N + 8 * k
            scale[b + 4:b + 8] = 100.0
            for nm in ("leading slider", "leading shank angle", "trailing slider", "trailing shank angle"):
                state_names.append(f"coupler {k + 1} {nm}")
            for nm in ("leading slider rate", "leading shank rate", "trailing slider rate", "trailing shank rate"):
                state_names.append(f"coupler {k + 1} {nm}")
    acc0 = np.zeros(ACC_HEAD + N_ACC_PER_COUPLER * M)
    acc0[[ACC_VMAX, ACC_FMAX]] = -np.inf
    acc0[ACC_FMIN] = np.inf
    h = ACC_HEAD
    acc0[h:h + M] = -np.inf
    acc0[h + M:h + 2 * M] = np.inf
    acc0[h + 2 * M:h + 3 * M] = -np.inf
    acc0[h + 3 * M:h + 4 * M] = np.inf
    acc0[h + 4 * M:h + 6 * M] = 0.0
    return PlanarModel(params=params, y0=y0, atol_scale=scale, acc0=acc0, vehicle_types=names,
                       coupler_model=cpl.model, track_length=tab.length, notes=notes, state_names=state_names)


def car_positions(p: PlanarParams, y: np.ndarray) -> np.ndarray:
    """Arc lengths s_j [m] (float64[..., N]) of the car centres from states ``y`` (float64[..., n])."""
    N = p.n_car
    gaps = y[..., 6:6 * N:6]
    s1 = y[..., :1]
    return np.concatenate([s1, s1 - np.cumsum(p.center_dist + gaps, axis=-1)], axis=-1)
