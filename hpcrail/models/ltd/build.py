"""The numeric LTD model: runtime parameters (SI arrays, :class:`LTDParams`), the Python-side model
(:class:`LTDModel`) and the state and accumulator layouts.  The scenario → model translation is
:func:`hpcrail.kinds.ltd.build.build_ltd`.

State layout (n = B·N + G [+ 4], G notch groups), vehicle-major so that a train's Jacobian is block-tridiagonal
and a block of vehicles owns a contiguous slice:

* ``y[B*j + 0]``: for j = 0 the position s_1 of the lead vehicle's centre along the route [m];
  for j ≥ 1 the extension e_j = s_j − s_{j+1} − d_j of connection j (between vehicles j and j+1,
  1-based) relative to its free length [m] (+ draft).  Relative coordinates keep millimetre
  deflections resolvable next to positions of tens of km (PERFORMANCE_NOTES).
* ``y[B*j + 1]``: speed v_{j+1} [m/s].
* with the empirical air brake (``air_brake == 1``, B = 4): ``y[B*j + 2]`` brake-pipe signal (brake demand
  reaching the vehicle, fraction of full service) and ``y[B*j + 3]`` brake-cylinder pressure (fraction of
  full service); with the pneumatic brake (``air_brake == 2``) the brake block of
  :mod:`hpcrail.models.brakes.layout` (pipe cells and faces, reservoirs, cylinder, valve states).
* ``y[B*N + g]``, g < ``n_groups``: applied notch (+ traction, − dynamic brake) of locomotive group g; one
  group (synchronous distributed power) unless the consist has remote locomotives, each following the
  driver's command after its radio delay; it follows the command with the slowest locomotive's rate limit.
* if ``output.energy``: four work integrals [J] — traction/dynamic brake, running resistance,
  air brake, coupler work Σ∫F_k ė_k.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from hpcrail.models.couplers.envelope import (  # noqa: F401  (the accumulator layout of ltd_observe)
    ACC_FMAX, ACC_FMIN, ACC_HEAD, ACC_OFFROUTE, ACC_T_BUFF, ACC_T_DRAFT, ACC_VMAX, ACC_VMIN,
)

G = 9.81  #: gravity [m/s²], as in Bosso et al. 2024 eq (6)
KMH = 1.0 / 3.6


class LTDParams(NamedTuple):
    """Runtime parameters of the LTD kernel (SI units).  Changing values never recompiles."""

    n_veh: int
    block: int
    i_notch: int
    i_energy: int
    air_brake: int
    basis: int                  # 0: schedule against time, 1: against distance travelled
    notch_rate: float           # [notch/s]
    notch_tau: float            # [s]
    front_offset: float         # front of train = s_1 + front_offset [m]
    start_front: float          # initial front position [m] (distance basis origin)
    route_s0: float
    route_ds: float
    route_end: float
    ab_c_service: float
    ab_c_emergency: float
    ab_c_release: float
    ab_tau_apply: float
    ab_tau_emergency: float
    ab_tau_release: float
    ab_emergency_level: float
    mass: np.ndarray            # [N] gravitational mass [kg]
    inv_mass_eff: np.ndarray    # [N] 1 / (mass · (1 + rotating fraction)) [1/kg]
    half_len: np.ndarray        # [N] [m]
    center_dist: np.ndarray     # [N-1] free distance between centres [m]
    link_len: np.ndarray        # [N] brake-pipe length from the previous vehicle's centre [m]
    r0: np.ndarray              # [N] constant Davis part [N]
    r1: np.ndarray              # [N] linear Davis part [N/(m/s)]
    r2: np.ndarray              # [N] quadratic Davis part [N/(m/s)²]
    rcurve: np.ndarray          # [N] curving resistance × radius [N·m]
    k_stand: np.ndarray         # [N] standstill damping m/τ [N·s/m]
    loco_type: np.ndarray       # [N] int64 index into the traction tables, -1 for wagons
    f_adhesion: np.ndarray      # [N] adhesion limit [N] (inf = none)
    trac: np.ndarray            # [T, K+1, V] traction force [N] (row 0 = notch 0)
    dynb: np.ndarray            # [T, K+1, V] dynamic-brake force magnitude [N]
    trac_dv: np.ndarray         # [T] speed grid spacing [m/s]
    trac_nv: np.ndarray         # [T] int64 number of speed points
    trac_nk: np.ndarray         # [T] int64 number of traction notches
    dynb_nk: np.ndarray         # [T] int64 number of dynamic-brake notches
    p_max: np.ndarray           # [T] power limit at the top notch [W] (0 = none)
    conn_type: np.ndarray       # [N-1] uint64 connection type per coupler
    conn_rowpar: np.ndarray     # [2C, 6] table rows (draft, buff per type), see couplers.hysteretic
    conn_typepar: np.ndarray    # [C, 3] 1/v_ε [s/m], viscous damping [N·s/m], 1/ramp length [1/m]
    conn_fm: np.ndarray         # [P] mean curves F_M = (F_L + F_U)/2 [N], all rows concatenated
    conn_fa: np.ndarray         # [P] half hysteresis F_A = (F_L − F_U)/2 [N]
    route_inv_ds: float
    route_h: np.ndarray         # [R] elevation (∫ grade) on the route grid [m]
    route_k: np.ndarray         # [R] ∫ 1/|R_c| ds on the route grid [-]
    route_hk: np.ndarray        # [R, 2] the two cumulative tables interleaved
    route_sk: np.ndarray        # [R-1, 2] grade [-] and curvature [1/m] of each grid cell
    inv_len: np.ndarray         # [N] 1 / vehicle length [1/m]
    sched_x: np.ndarray         # [S] command times [s] or distances [m]
    sched_notch: np.ndarray     # [S] signed notch command
    sched_brake: np.ndarray     # [S] brake demand (fraction of full service; > 1 = emergency)
    shoe_full: np.ndarray       # [N] shoe normal force at full service [N]
    mu0: np.ndarray             # [N]
    mu_a: np.ndarray            # [N] [1/(m/s)]
    mu_b: np.ndarray            # [N] [1/(m/s)]
    no_record: np.ndarray       # [1, 1] placeholder record array for the plain right-hand side
    # ---- noninertial couplers (couplers.ltd_noninertial); last: the hot fields keep their places ----
    n_table_types: int          # connection types below this index use the tables, the others are noninertial
    n_noninertial: int          # number of noninertial connections
    ni_cp: np.ndarray           # [C, 16] noninertial coupler parameters per type (couplers.ltd_noninertial)
    ni_conn: np.ndarray         # [N-1, 9] geometry, warm start (scratch) and force (scratch) per connection
    ni_work: np.ndarray         # [8, 72] solver scratch; row 7: Newton statistics (couplers.kinematics.NS_*)
    # ---- distributed power: one applied notch per locomotive group (lead consist, each remote) ----
    n_groups: int               # notch states B·N .. B·N + n_groups − 1 (1: every locomotive shares one notch)
    notch_group: np.ndarray     # [N] int64 group of each vehicle's notch (0 for wagons and the lead consist)
    group_delay: np.ndarray     # [G] radio delay of each group [s] (group 0: 0)
    # ---- pneumatic brake (air_brake == 2), layout in hpcrail.models.brakes.layout; placeholders otherwise ----
    pn_s: np.ndarray            # [N_S] scalars (S_*)
    pn_v: np.ndarray            # [N, N_V] per vehicle: pipe, valve branch, Jacobian slots, driver's brake valve
    pn_vp: np.ndarray           # [N, N_VP] valve parameters (VP_*)
    pn_cp: np.ndarray           # [N, N_CP] cylinder (CP_*)
    pn_dp: np.ndarray           # [N, N_DP] driver's brake valve and independent brake (DP_*)
    pn_rtv: np.ndarray          # [N, nl] R·T/V of each brake state holding air (0 for the others)
    pn_smap: np.ndarray         # [M, nl, nl + 2] int64 Jacobian slot of (local row, local column) per pattern
    pn_sched: np.ndarray        # [S, 3] service fraction, emergency flag, independent fraction per command



@dataclasses.dataclass
class LTDModel:
    """Python-side description of a built LTD model."""

    params: LTDParams
    y0: np.ndarray
    atol_scale: np.ndarray
    acc0: np.ndarray
    vehicle_types: list[str]
    vehicle_kinds: list[str]
    connection_types: list[str]
    vehicle_length: np.ndarray
    notes: list[str]
    brakes: object = None       #: the pneumatic brake's layout (kinds.ltd.brake_build.PneumaticLayout) or None

    @property
    def n_vehicles(self) -> int:
        return self.params.n_veh
