"""Mixed trains (issue 15; paper 000 §2, Figure 1): a detailed multibody wagon inside an LTD consist, one state
vector, one integrator.  Physics checked:

* with the in-train forces switched off, the detailed wagon inside the train is the same wagon run alone
  (railway_vehicle kind, same integrator and step): equal to 1e-10 relative (bitwise in practice);
* the rest of the train agrees with the pure LTD run in which the wagon is a 1-DOF vehicle of the same mass:
  per-coupler force envelopes within 0.5 % of the train's peak force away from the wagon;
* momentum balance of the whole train at sampled states (frictionless contact on tangent track: every
  internal force cancels, action = reaction of the couplers);
* the blocks of hidden vehicles on threads equal the monolithic mixed train;
* in a curve, the coupler angle equals the one computed here from the circle's geometry, and the lateral
  force on the car body is the in-train force times the sine of that angle; buff pushes the car outwards.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from hpcrail.config import ConfigError
from hpcrail.kinds import load_scenario
from hpcrail.kinds.ltd.result import vehicle_positions
from hpcrail.kinds.mixed_train import run as R
from hpcrail.kinds.mixed_train.build import BOGIE_RATIO, build_mixed
from hpcrail.kinds.railway_vehicle.build import build_railway_vehicle
from hpcrail.kinds.railway_vehicle.run import solve as rv_solve
from hpcrail.models.ltd.kernel import (N_REC, REC_BRAKE, REC_GRADE, REC_RESISTANCE, REC_TRACTION,
                                       ltd_outputs)
from hpcrail.models.mixed.kernel import CD_ALPHA_FRONT, CD_F_CG, CD_F_FRONT, CD_F_REAR, mixed_rhs
from hpcrail.models.vehicle.layout import R_PSI, R_Y, S_POS, S_VEL

pytestmark = pytest.mark.xdist_group("mixed_train")   # one worker compiles the mixed-train kernels (conftest)
ROOT = Path(__file__).resolve().parents[1]
SHORT = ROOT / "configs/mixed/short_consist_curve.yaml"
TRAIN4 = ROOT / "configs/mixed/train4_empty_wagon.yaml"


def simulate(path, overrides, backend="off"):
    sc, _ = load_scenario(path, overrides)
    model = build_mixed(sc)
    sol, _lay = R.solve(sc, model, backend=backend)
    assert sol.status.name == "COMPLETED", sol.message
    return sc, model, sol


def test_detailed_wagon_without_in_train_forces_is_the_wagon_alone():
    """In-train forces off: the wagon's states inside the 6-vehicle train equal those of the wagon run alone
    (free forward motion, RK4 0.5 ms, same track, entering the R = 300 m curve) to 1e-10 relative."""
    sc, model, sol = simulate(SHORT, ["simulation.in_train_forces=false", "simulation.duration_s=4"])
    vsc = model.vehicle_scenarios[0]
    vm = build_railway_vehicle(vsc)
    alone = rv_solve(vsc, vm)
    o0, o1 = model.slices[0]
    inside = sol.y[:, o0:o1]
    assert inside.shape == alone.y.shape
    scale = np.max(np.abs(alone.y), axis=0) + 1e-300
    rel = np.max(np.abs(inside - alone.y) / scale)
    assert rel <= 1e-10, rel
    # not a trivial run: the wagon curved (wheelsets shifted by millimetres) and the train braked around it
    ob = o0 + vm.params.b_off[vm.params.w_body[0]]
    assert np.max(np.abs(sol.y[:, ob])) > 1e-3
    assert sol.y[-1, 1] < sol.y[0, 1] - 0.005   # the locomotive's dynamic brake slowed the lead vehicle


@pytest.mark.slow
def test_rest_of_train_agrees_with_pure_ltd_with_a_1dof_wagon():
    """Train 4 with the empty wagon at 124, 30 s of dynamic braking on tangent track (RK4 0.5 ms in both: the
    envelopes are taken over the accepted steps, so both runs use the same step grid): the
    per-coupler envelopes of the mixed train and of the pure LTD run (the wagon a 1-DOF vehicle of its mass and
    length, same integrator) differ by at most 0.5 % of the train's peak force on the couplers at least five
    couplers away from the wagon and at the wagon's own two couplers (measured: 0.03 % for both)."""
    sc, _ = load_scenario(TRAIN4, ["simulation.duration_s=30", "integrator.method=rk4", "integrator.step_s=0.0005"])
    mixed = R.run(sc)
    assert mixed.run.status == "completed"
    from hpcrail.kinds.ltd.run import run as ltd_run

    pure = ltd_run(sc.ltd_scenario())
    assert pure.run.status == "completed"
    p = sc.detailed[0].position
    k = np.arange(1, len(sc.connection_type_names()) + 1)
    away = np.abs(k - (p - 0.5)) >= 5
    names = ("coupler_max_draft_force", "coupler_max_buff_force")
    peak = max(max(np.max(mixed.values[n]), np.max(pure.values[n])) for n in names)
    assert peak > 3e5                              # the dynamic brake built up real forces
    for name in names:
        a, b = mixed.values[name], pure.values[name]
        dev = np.max(np.abs(a - b)[away]) / peak
        assert dev <= 0.005, (name, dev)
        # at the wagon's own couplers too (measured: 0.03 % away and at the wagon)
        near = np.abs(k - (p - 0.5)) < 1
        assert np.max(np.abs(a - b)[near]) / peak <= 0.005, (name, a[near], b[near])


def test_momentum_balance_of_the_whole_train():
    """Frictionless wheel/rail contact on tangent track: at every sampled state Σ m_j dv_j/dt over the
    hidden vehicles plus M dv/dt of the detailed wagon equals the sum of the external forces (traction /
    dynamic brake, resistance, grade of the hidden vehicles; resistance and grade at the wagon's centre of
    gravity) to 1e-9 of the forces' scale: the coupler forces on the wagon are the reactions of those on its
    neighbours."""
    sc, model, sol = simulate(SHORT, ["track.sections=[{kind: tangent, length_m: 2000}]", "detailed.0.creep=false",
                                      "simulation.duration_s=6", "grade_permille=2.0"])
    P = model.params
    L = P.ltd
    n_ltd = model.n_ltd
    Y = np.ascontiguousarray(sol.y)
    k = Y.shape[0]
    rec = np.full((k, N_REC, L.n_veh), np.nan)
    acc = np.full((k, L.n_veh), np.nan)
    ncmd = np.full(k, np.nan)
    bcmd = np.full(k, np.nan)
    ltd_outputs(sol.t, np.ascontiguousarray(Y[:, :n_ltd]), L, rec, acc, ncmd, bcmd)
    from hpcrail.kinds.mixed_train.run import detailed_records

    C, _ = detailed_records(model, sol)
    j = sc.detailed[0].position - 1
    m = 1.0 / L.inv_mass_eff
    hidden = np.arange(L.n_veh) != j
    worst = 0.0
    for i in range(0, k, 25):
        dy = np.zeros(Y.shape[1])
        mixed_rhs(sol.t[i], Y[i].copy(), P, dy)
        a = dy[1:L.block * L.n_veh:L.block]
        ext = rec[i, REC_TRACTION] + rec[i, REC_BRAKE] + rec[i, REC_RESISTANCE] + rec[i, REC_GRADE]
        lhs = np.sum(m[hidden] * a[hidden]) + L.mass[j] * a[j]
        rhs = np.sum(ext[hidden]) + C[i, 0, CD_F_CG]
        scale = np.sum(np.abs(m * a)) + np.sum(np.abs(ext)) + abs(C[i, 0, CD_F_FRONT]) + abs(C[i, 0, CD_F_REAR])
        worst = max(worst, abs(lhs - rhs) / scale)
    assert worst <= 1e-9, worst
    assert np.nanmin(C[:, 0, CD_F_FRONT]) < -2e4       # the couplers carried real buff forces


@pytest.mark.slow
def test_blocks_on_threads_equal_the_monolithic_mixed_train():
    """Train 4 with the detailed wagon, 3 s: hidden-vehicle blocks on numba threads (boundary vehicles: head,
    tail, the detailed wagon and one more) give the monolithic states to rounding: 1e-12 relative plus 1e-12
    absolute (the blocks' positions come from a scan over block lengths; measured differences ≤ 8e-14)."""
    over = ["simulation.duration_s=3", "partition.backend=threads", "partition.blocks=2", "integrator.method=rk4",
            "integrator.step_s=0.0005"]
    sc, model, mono = simulate(TRAIN4, over, backend="off")
    _sc, _m, thr = simulate(TRAIN4, over, backend="threads")
    lay = R.layout_of(sc, 2)
    assert sc.detailed[0].position - 1 in lay.boundary and lay.n_blocks >= 3
    scale = np.max(np.abs(mono.y), axis=0)
    excess = np.abs(thr.y - mono.y) - (1e-12 * scale + 1e-12)   # SI states: m, m/s, rad, rad/s
    assert np.max(excess) <= 0.0, np.max(np.abs(thr.y - mono.y))


def test_coupler_lateral_force_is_in_train_force_times_sine_of_the_coupler_angle():
    """In the circular curve (R = 300 m, the wagon and its neighbours inside it): the front coupler angle of
    the kernel equals the angle computed here from the circle (car body pivot from its lateral displacement and
    yaw; the neighbour's centre on the chord of its bogie centres, its pivot on its axis) to 1e-6 rad, the
    lateral force on the car body equals Σ F sin(angle) of both couplers to 1e-6 of |F|, and in buff it
    points out of the curve."""
    sc, model, sol = simulate(SHORT, ["simulation.duration_s=20"])
    P = model.params
    L = P.ltd
    vp = P.vehs[0]
    j = sc.detailed[0].position - 1
    o0, _ = model.slices[0]
    ob = o0 + vp.b_off[vp.cpl_body]
    C, _ = R.detailed_records(model, sol)
    Rc = 300.0
    kap = 1.0 / Rc
    curve = (160.0, 760.0)
    res = R.mixed_result(sc, model, sol)
    lat = res.values["coupler_lateral_force"][:, 0]
    n_checked = 0
    n_buff = 0
    for i in range(sol.t.size):
        y = sol.y[i]
        s = y[o0 + S_POS]
        if not (curve[0] + 40 <= s <= curve[1] - 40):
            continue
        yb, psi = y[ob + R_Y], y[ob + R_PSI]
        uys = []
        for front in (True, False):
            c = 0 if front else 1
            if front:
                delta = L.center_dist[j - 1] + y[L.block * j]
                arm = L.half_len[j - 1] - sc.detailed[0].pivot_inset_m
                b = BOGIE_RATIO * 2 * L.half_len[j - 1]
            else:
                delta = -(L.center_dist[j] + y[L.block * (j + 1)])
                arm = L.half_len[j + 1] - sc.detailed[0].pivot_inset_m
                b = BOGIE_RATIO * 2 * L.half_len[j + 1]
            th = delta * kap
            cx, cy = Rc * math.sin(th), Rc * (1 - math.cos(th))
            cx, cy = cx - 0.5 * kap * b * b * math.sin(th), cy + 0.5 * kap * b * b * math.cos(th)
            sg = -1.0 if front else 1.0
            qx, qy = cx + sg * arm * math.cos(th), cy + sg * arm * math.sin(th)
            xc = vp.cpl_u[c, 0]
            px, py = xc * math.cos(psi), yb + xc * math.sin(psi)
            dx, dy = qx - px, qy - py
            ln = math.hypot(dx, dy)
            uys.append(dy / ln)
            if front:
                assert abs(math.atan2(dy, dx) - C[i, 0, CD_ALPHA_FRONT]) <= 1e-6
        Ff, Fr = C[i, 0, CD_F_FRONT], C[i, 0, CD_F_REAR]
        expect = Ff * uys[0] + Fr * uys[1]
        assert abs(lat[i] - expect) <= 1e-6 * max(abs(Ff), abs(Fr), 1.0)
        n_checked += 1
        if Ff < -5e4 and Fr < -5e4:
            n_buff += 1
            assert lat[i] < 0, (sol.t[i], lat[i])       # buff pushes the car body out of the left curve
    assert n_checked > 200 and n_buff > 20, (n_checked, n_buff)


def test_running_safety_outputs_under_in_train_forces():
    """The declared outputs of a run: EN 14363 maxima with their time and position, and the in-train force at
    the wagon at that time is the sampled mean of its two coupler forces there."""
    sc, model, sol = simulate(SHORT, [])
    res = R.mixed_result(sc, model, sol)
    v = res.values
    assert res.run.status == "completed"
    t = res.time
    i = int(np.argmin(np.abs(t - v["max_y_over_q_time"][0])))
    f = 0.5 * (v["front_coupler_force"][i, 0] + v["rear_coupler_force"][i, 0])
    assert v["in_train_force_at_max_y_over_q"][0] == pytest.approx(f, rel=1e-12)
    assert 0 < v["max_y_over_q"][0] < 2 and v["worst_y_over_q"] == v["max_y_over_q"][0]
    assert v["peak_buff_force_at_vehicle"][0] == pytest.approx(
        -min(np.min(v["front_coupler_force"]), np.min(v["rear_coupler_force"])), rel=1e-12)
    # the wagon started at its LTD position: the vehicle's and the consist's speeds agree at every sample
    j = sc.detailed[0].position - 1
    o0, _ = model.slices[0]
    np.testing.assert_array_equal(sol.y[:, o0 + S_VEL], sol.y[:, model.params.ltd.block * j + 1])
    s_ltd = vehicle_positions(model.ltd, sol.y[:, :model.n_ltd])[:, j]
    assert np.max(np.abs(s_ltd - sol.y[:, o0 + S_POS])) < 1e-8


@pytest.mark.parametrize("override, field, fragment", [
    ("detailed.0.position=1", "detailed.0.position", "locomotive"),
    ("detailed.0.position=9", "detailed.0.position", "outside the consist"),
    ("integrator.method=bdf2", "integrator.method", "explicit methods"),
    ("front_start_m=20", "front_start_m", "before the start of the track"),
    ("simulation.initial_speed_kmh=1", "simulation.initial_speed_kmh", "moving"),
    ("partition.backend=mpi", "partition.backend", "threads"),
    ("partition.state=distributed", "partition.state", "auto or shared"),
])
def test_bad_mixed_train_inputs_name_the_field(override, field, fragment):
    with pytest.raises(ConfigError) as exc:
        load_scenario(SHORT, [override])
    text = str(exc.value)
    assert field in text and fragment in text, text


def test_a_route_is_refused():
    with pytest.raises(ConfigError, match="route"):
        load_scenario(SHORT, ["route={sections: [{start_km: 0, end_km: 1}]}"])
