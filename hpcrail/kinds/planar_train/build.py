"""Scenario → numeric planar-train model: :func:`build_planar` converts a validated
:class:`~hpcrail.kinds.planar_train.schema.PlanarTrainScenario` to a
:class:`~hpcrail.models.planar_train.build.PlanarModel` (SI arrays, initial state at rest relative
spacing, tolerance scales, observe accumulator).  Source: Massa et al. 2012 §6-§8.
"""
from __future__ import annotations

import numpy as np

from hpcrail.kinds.planar_train.schema import PlanarTrainScenario
from hpcrail.models.couplers.envelope import envelope_acc0
from hpcrail.models.couplers.kinematics import G_N, N_NS, coupler_parameter_array
from hpcrail.models.planar_train.build import (
    F_CONSTANT, F_HOLD_SPEED, G, N_CO, N_SHANK_BLOCKS, N_W, PlanarModel, PlanarParams,
)
from hpcrail.models.track.geometry import build_track_table, sections_from_spec


def shank_cg(sc: PlanarTrainScenario) -> float:
    sh = sc.coupler.shank
    return sh.cg_from_pin_m if sh.cg_from_pin_m is not None else 0.5 * sh.length_m


def build_planar(sc: PlanarTrainScenario) -> PlanarModel:
    """Convert a validated scenario to a :class:`~hpcrail.models.planar_train.build.PlanarModel` (SI
    arrays, initial state at rest relative spacing, tolerance scales, observe accumulator).  Raises
    nothing beyond the schema's checks."""
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
    acc0 = envelope_acc0(M, extra=N_SHANK_BLOCKS * M)
    return PlanarModel(params=params, y0=y0, atol_scale=scale, acc0=acc0, vehicle_types=names,
                       coupler_model=cpl.model, track_length=tab.length, notes=notes, state_names=state_names)
