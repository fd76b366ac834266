"""The pneumatic brake (issue 24): physics against analytic solutions and published bands.

* a valve-less pipe: a small pressure pulse travels at the isothermal speed of sound √(RT) (2 %) and
  decays by laminar wall friction as exp(−R t/2), R = 32 μ/(ρ D²) (the linearised telegraph solution, 10 %);
* a leaking pipe fed at its head: the steady pressure and flow along it equal the steady isothermal
  Darcy equations with uniform leakage integrated by scipy (1 % of the total drop);
* the 150-vehicle rack (AAR equipment): the emergency front travels at 250-300 m/s, the service front
  more slowly; the air mass balance closes to 1e-9; after a full service and its release every valve
  releases and the pipe recharges;
* one UIC wagon: filling (95 %) and release (to 0.4 bar) times inside the UIC 540 bands for G and P;
* an AAR valve: full service = equalisation of the auxiliary reservoir and the cylinder (0.5 %), emergency
  = equalisation with the emergency reservoir added;
* the analytic Jacobian of the brake rows = central differences, states along service, emergency,
  separation and release of a consist with every valve type and device;
* a charged train at rest stays charged (bitwise) and a leaking one does not apply;
* distributed power: a remote group's applied notch is the lead's delayed by its radio delay; ECP applies
  every vehicle after its delay with the pipe charged; a two-way EOT and a separation vent the rear;
* train 4: the empirical and the pneumatic brake, matched, give the same stopping distance within 10 %
  (the buff forces differ: printed); the shipped pneumatic trip runs forward and releases every brake;
* hidden-vehicle blocks (shared state): the blocked right-hand side is bitwise the monolithic one for every
  valve type and device across block ends; RK4 on 2 threads and 3 blocks is bitwise the monolithic run in every
  output; BDF2 agrees with the monolithic BDF2 within its tolerance; distributed state is a config error.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.ltd import assert_outputs_bitwise, make_scenario
from helpers.mpi import mpi_pair, needs_mpi
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from hpcrail.config.errors import ConfigError
from hpcrail.config.loading import load_document
from hpcrail.integrators import integrate
from hpcrail.kinds import load_scenario
from hpcrail.kinds.ltd.brakes import BAR, cylinder_geometry, equalisation_pressure
from hpcrail.kinds.ltd.problem import ltd_problem
from hpcrail.models.brakes import layout as L
from hpcrail.simulate import run_scenario
from test_kinds import ROOT

pytestmark = pytest.mark.xdist_group("brakes")

BRAKES = ROOT / "configs" / "brakes"
EQ = BRAKES / "equipment"
#: a vehicle whose brake is cut out: the pipe only (no valve, no branch volume)
CUT_OUT = {"valve": {"kind": "cut_out"}, "auxiliary_reservoir_l": 10.0, "branch_volume_l": 0.0,
           "cylinder": {"diameter_mm": 200.0}, "rigging": {"ratio": 5.0}}


def _equipment(name):
    """An equipment file of configs/brakes/equipment with its component files resolved (a tree built in code
    resolves no file names)."""
    return load_document(EQ / name).tree


def _loco(equipment):
    return {"kind": "locomotive", "mass_t": 80.0, "length_m": 16.0, "brake": {"pneumatic": equipment},
            "traction": {"curves": {"speed_kmh": [0, 100], "traction_kN": [[100.0, 100.0]],
                                    "dynamic_brake_kN": [[0.0, 50.0]]}}}


def _tree(consist, types, *, commands=None, pneumatic=None, duration=10.0, method="bdf2", rtol=1e-6, speed=0.0,
          interval=0.1):
    return {"name": "brakes", "vehicle_types": types,
            "connection_types": {"c": {"kind": "linear", "stiffness_MN_per_m": 20.0, "damping_kNs_per_m": 200.0}},
            "consist": consist, "connections": {"default": "c"},
            "route": {"start_m": 5000.0, "sections": [{"start_km": 0.0, "end_km": 10.0}]},
            "driver": {"commands": commands or [{"time_s": 0.0, "brake": 0.0}]},
            "air_brake": {"enabled": True, "model": "pneumatic", "pneumatic": pneumatic or {}},
            "simulation": {"duration_s": duration, "initial_speed_kmh": speed},
            "integrator": {"method": method, "rtol": rtol, "atol": 1e-8, "step_s": 1e-4},
            "output": {"interval_s": interval, "energy": False}}


def pipe_tree(n, cells, *, leak=0.0, friction_factor=None):
    """A locomotive (driver's brake valve) and n − 1 cut-out vehicles: a plain 16 m-per-vehicle pipe."""
    pipe = {"cells_per_vehicle": cells, "roughness_mm": 0.0, "leakage_bar_per_min": leak,
            "coupling_loss_coefficient": 0.0}
    if friction_factor:
        pipe["darcy_friction_factor"] = friction_factor
    types = {"loco": _loco(dict(CUT_OUT, driver_brake_valve={"feed_pressure_bar": 5.0})),
             "wagon": {"mass_t": 80.0, "length_m": 16.0, "brake": {"pneumatic": CUT_OUT}}}
    return _tree([{"type": "loco"}, {"type": "wagon", "count": n - 1}], types, pneumatic={"pipe": pipe})


def _cells(model, y, what="cell"):
    """Pipe states (cells or faces) of every vehicle, head to tail: float64[..., n·nc]."""
    p = model.params
    B, N, nc = p.block, p.n_veh, model.brakes.nc
    li = L.local_indices(nc, model.brakes.nx)
    blk = np.asarray(y)[..., :B * N].reshape(np.shape(y)[:-1] + (N, B))
    return np.stack([blk[..., 2 + li[what](c)] for c in range(nc)], axis=-1).reshape(np.shape(y)[:-1] + (N * nc,))


# ------------------------------------------------------------------------------------------------
# the pipe alone
# ------------------------------------------------------------------------------------------------
def _pulse(friction_factor=None):
    """A 100 Pa Gaussian bump (σ = 40 m) at 400 m in a 1600 m valve-less pipe (4 cells per 16 m vehicle):
    the times and heights of its right-going half's peak at 11 cells from 640 m to 1440 m (before any
    reflection), and the isothermal speed of sound and laminar friction rate R = 32 μ/(ρ D²)."""
    n, nc = 100, 4
    model, prob = ltd_problem(make_scenario(pipe_tree(n, nc, friction_factor=friction_factor)))
    p = model.params
    dx = 16.0 / nc
    x = (np.arange(n * nc) + 0.5) * dx
    y0 = prob.y0.copy()
    blk = y0[:p.block * n].reshape(n, p.block)
    li = L.local_indices(nc, model.brakes.nx)
    bump = 100.0 * np.exp(-((x - 400.0) / 40.0) ** 2).reshape(n, nc)   # Re ≈ 300: laminar
    for c in range(nc):
        blk[:, 2 + li["cell"](c)] += bump[:, c]
    prob.y0 = y0
    dt = 0.002
    t_out = np.arange(0.0, 4.0 + 1e-9, dt)
    sol = integrate(prob, "bdf2", t_out, 4.0, rtol=1e-9, atol=1e-9, step=1e-4)
    assert sol.status.success
    P = _cells(model, sol.y) - model.y0[2]
    ts, amps, xs = [], [], []
    for i in range(160, 380, 20):
        k = int(np.argmax(P[:, i]))
        a, b, c = P[k - 1, i], P[k, i], P[k + 1, i]
        d = 0.5 * (a - c) / (a - 2 * b + c)     # parabolic peak
        ts.append(t_out[k] + d * dt)
        amps.append(b - 0.25 * (a - c) * d)
        xs.append(x[i])
    RT = p.pn_s[L.S_RT]
    R = 32.0 * 1.81e-5 / (model.y0[2] / RT * p.pn_s[L.S_DIAM] ** 2)
    return np.asarray(ts), np.asarray(amps), np.asarray(xs), math.sqrt(RT), R


def test_a_pulse_in_a_valveless_pipe_travels_at_the_isothermal_speed_of_sound_and_decays_by_laminar_friction():
    ts, amps, xs, c, R = _pulse()
    speed = 1.0 / np.polyfit(xs, ts, 1)[0]
    assert abs(speed / c - 1.0) < 0.02, (speed, c)
    assert amps[0] < 50.0                                          # the bump split into two halves
    decay = -np.polyfit(ts, np.log(amps), 1)[0]
    # the same pulse without wall friction: the decay of the discretisation alone (dispersion, ~10 % of R/2
    # with 4 m cells); the friction's own attenuation is the difference (the linearised telegraph solution
    # of a low-loss line: amplitude ∝ exp(−R t/2))
    ts0, amps0, *_ = _pulse(friction_factor=1e-12)
    decay0 = -np.polyfit(ts0, np.log(amps0), 1)[0]
    print(f"\npulse: speed {speed:.2f} m/s (√(RT) = {c:.2f}), decay {decay:.5f}/s, of which the discretisation "
          f"{decay0:.5f}/s, friction {decay - decay0:.5f}/s against R/2 = {0.5 * R:.5f}/s")
    assert decay0 < 0.2 * decay
    assert abs((decay - decay0) / (0.5 * R) - 1.0) < 0.05


def test_the_steady_pressure_of_a_leaking_pipe_is_the_isothermal_darcy_solution():
    n, nc, f = 100, 2, 0.03
    model, prob = ltd_problem(make_scenario(pipe_tree(n, nc, leak=0.5, friction_factor=f)))
    p = model.params
    sol = integrate(prob, "bdf2", np.array([180.0, 200.0]), 200.0, rtol=1e-8, atol=1e-9, step=1e-3)
    assert sol.status.success
    P, G = _cells(model, sol.y[-1]), _cells(model, sol.y[-1], "face")
    drift = np.abs(_cells(model, sol.y[-1]) - _cells(model, sol.y[0])).max()
    assert drift < 2e-3 * (P[0] - P[-1])                                # steady
    s = p.pn_s
    RT, A, D, patm = s[L.S_RT], s[L.S_AREA], s[L.S_DIAM], s[L.S_PATM]
    lam = p.pn_v[0, L.V_LEAK]
    dx = 16.0 / nc
    xc = (np.arange(n * nc) + 0.5) * dx
    length = 16.0 * n

    def steady(_x, z):   # dp/dx = −f R T G|G| / (2 D A² p), dG/dx = −λ A (p − p_atm)/(R T)
        q, g = z
        return [-f * RT * g * abs(g) / (2 * D * A * A * q), -lam * A * (q - patm) / RT]

    def from_tail(p_tail):
        return solve_ivp(steady, (length, xc[0]), [p_tail, 0.0], rtol=1e-11, atol=1e-12, dense_output=True)

    p_tail = brentq(lambda q: from_tail(q).y[0, -1] - P[0], P[0] - 1e5, P[0])
    exact = from_tail(p_tail).sol
    drop = P[0] - exact(xc)[0][-1]
    assert drop > 5e3                                              # a gradient worth comparing (Pa)
    assert np.abs(P - exact(xc)[0]).max() < 0.01 * drop
    faces = xc + 0.5 * dx
    assert np.abs(G[:-1] - exact(faces[:-1])[1]).max() < 0.01 * G[0]   # flow = the leakage downstream


# ------------------------------------------------------------------------------------------------
# racks and single wagons
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rack_runs():
    """The 150-vehicle rack (AAR equipment): emergency and full service, 20 s each."""
    out = {}
    for cmd in ("emergency", "1.0"):
        sc, _ = load_scenario(BRAKES / "rack" / "brake_rack_150.yaml",
                              [f"driver.commands.0.brake={cmd}", "simulation.duration_s=20"])
        out[cmd] = run_scenario(sc)
    return out


def test_the_emergency_front_of_the_150_rack_travels_at_250_to_300_m_per_s_and_the_service_front_slower(rack_runs):
    em, sv = (float(rack_runs[c]["brake_signal_speed"]) for c in ("emergency", "1.0"))
    print(f"\nbrake-signal speed, 150-vehicle rack (AAR): emergency {em:.1f} m/s, service {sv:.1f} m/s "
          f"({100 * (1 - sv / em):.0f} % slower)")
    assert 250.0 <= em <= 300.0
    assert sv < 0.9 * em
    # a full service fires no emergency portion (no undesired emergency): every cylinder below the
    # emergency equalisation pressure
    for ds in rack_runs.values():   # the reduced Jacobian: the balance closes to the Newton tolerance
        assert abs(float(ds["air_mass_balance_residual"])) < 1e-4
    # the emergency vents the whole pipe and applies every vehicle to the emergency equalisation pressure
    eq = load_scenario(BRAKES / "rack" / "brake_rack_150.yaml")[0].vehicle_types["wagon"].brake.pneumatic
    em_bar = equalisation_pressure(eq, 6.2 * BAR, eq.auxiliary_reservoir_l + eq.valve.emergency_reservoir_l) / BAR
    peak = rack_runs["emergency"]["max_brake_cylinder_pressure"].values[1:] / BAR
    assert np.allclose(peak, em_bar, rtol=0.02), (peak.min(), peak.max(), em_bar)
    assert rack_runs["1.0"]["max_brake_cylinder_pressure"].values[1:].max() / BAR < 0.9 * em_bar


def test_after_a_full_service_and_release_every_aar_valve_of_the_rack_releases_and_the_pipe_recharges():
    """Full service at 1 s, release at 40 s (the rack file's release command), 300 s: the release signal reaches
    the rear of 2.4 km of pipe weakly, and a service piston it leaves part-way must still finish its stroke.
    Before the piston was made bistable the rear 40 valves stayed part-way with both the release exhaust and the
    quick service open: their cylinders held ~0.7 bar for good and the pipe leaked away through them (the tail
    pipe fell from 5.38 to 5.29 bar between 150 and 300 s; release_time_tail NaN) — as the rear of
    train4_pneumatic's trip did for its last 2 500 s."""
    sc, _ = load_scenario(BRAKES / "rack" / "brake_rack_150.yaml",
                          ["driver.commands.0.brake=1.0", "simulation.duration_s=300", "output.interval_s=5"])
    ds = run_scenario(sc)
    t = ds["time"].values
    bc = ds["brake_cylinder_pressure"].values / BAR
    bp = ds["brake_pipe_pressure"].values[:, -1] / BAR
    t_rel = float(ds["release_time_tail"])
    print(f"\nrack full service, release at 40 s: tail released after {t_rel:.1f} s; tail pipe "
          f"{bp[t == 150][0]:.3f} / {bp[t == 200][0]:.3f} / {bp[-1]:.3f} bar at 150 / 200 / 300 s")
    assert math.isfinite(t_rel) and t_rel < 160.0
    assert bc[t >= 200].max() < 0.01            # every cylinder empty (gauge, bar)
    late = bp[t >= 150]
    assert np.all(np.diff(late) > 0.0) and late[-1] > late[0] + 0.3    # the tail pipe recharges, steadily
    # the reduced Jacobian closes the air balance to the Newton tolerance per step: 2e-4 over these 300 s
    assert abs(float(ds["air_mass_balance_residual"])) < 1e-3


def test_the_reduced_and_the_full_jacobian_give_the_same_brake_response(rack_runs):
    """The integrators' reduced brake Jacobian (the default) changes the Newton iteration, not the solution:
    the same rack emergency with every entry agrees to the integration tolerance, and closes the air balance
    to rounding."""
    sc, _ = load_scenario(BRAKES / "rack" / "brake_rack_150.yaml",
                          ["driver.commands.0.brake=emergency", "simulation.duration_s=20",
                           "air_brake.pneumatic.jacobian=full"])
    full = run_scenario(sc)
    red = rack_runs["emergency"]
    assert float(full["brake_signal_speed"]) == pytest.approx(float(red["brake_signal_speed"]), rel=0.01)
    for name in ("brake_application_time", "max_brake_cylinder_pressure"):
        assert np.allclose(full[name].values, red[name].values, rtol=0.01, atol=0.05), name
    assert abs(float(full["air_mass_balance_residual"])) < 1e-12
    print(f"\nrack emergency: air balance residual reduced Jacobian {float(red['air_mass_balance_residual']):.1e}, "
          f"full {float(full['air_mass_balance_residual']):.1e}; steps {int(red['nsteps'])} / {int(full['nsteps'])}")


@pytest.mark.parametrize("setting, fill, release", [("G", (18, 30), (45, 60)), ("P", (3, 5), (15, 20))])
def test_one_uic_wagon_fills_and_releases_inside_the_uic_540_bands(setting, fill, release):
    sc, _ = load_scenario(BRAKES / "rack" / "one_wagon_uic.yaml",
                          [f"vehicle_types.wagon.brake.pneumatic.valve.setting={setting}"])
    ds = run_scenario(sc)
    t_fill, t_rel = float(ds["application_time_tail"]), float(ds["release_time_tail"])
    print(f"\nUIC {setting}: filling (95 %) {t_fill:.1f} s, release (0.4 bar) {t_rel:.1f} s")
    assert fill[0] <= t_fill <= fill[1]
    assert release[0] <= t_rel <= release[1]
    assert float(ds["max_brake_cylinder_pressure"][-1]) == pytest.approx(3.8 * BAR, rel=0.01)


def _aar_pair(commands, quick_service=True):
    types = {"loco": _loco(_equipment("aar_locomotive.yaml")),
             "wagon": {"mass_t": 100.0, "length_m": 16.0, "brake": {"pneumatic": _equipment("aar_heavy_haul_wagon.yaml")}}}
    tree = _tree([{"type": "loco"}, {"type": "wagon"}], types, commands=commands, duration=60.0, rtol=1e-6)
    over = [] if quick_service else ["vehicle_types.wagon.brake.pneumatic.valve.quick_service_limit_bar=0"]
    return make_scenario(tree, over)


def test_an_aar_full_service_equalises_the_auxiliary_reservoir_and_the_cylinder():
    sc = _aar_pair([{"time_s": 1.0, "brake": 1.0}], quick_service=False)
    ds = run_scenario(sc)
    eq = sc.vehicle_types["wagon"].brake.pneumatic
    p_eq = equalisation_pressure(eq, 6.2 * BAR, eq.auxiliary_reservoir_l)
    bc = ds["brake_cylinder_pressure"].values[-1, 1]
    ar = ds["auxiliary_reservoir_pressure"].values[-1, 1]
    print(f"\nAAR full service: cylinder {bc / BAR:.3f} bar, reservoir {ar / BAR:.3f} bar, equalisation "
          f"{p_eq / BAR:.3f} bar ({p_eq / 6894.76:.1f} psi)")
    assert bc == pytest.approx(p_eq, rel=0.005)
    assert ar == pytest.approx(p_eq, rel=0.005)
    assert 60 <= p_eq / 6894.76 <= 68                   # AAR practice: ~64 psi from 90 psi
    # the emergency portion adds the emergency reservoir: ~77 psi
    ds = run_scenario(_aar_pair([{"time_s": 1.0, "brake": "emergency"}], quick_service=False))
    p_em = equalisation_pressure(eq, 6.2 * BAR, eq.auxiliary_reservoir_l + eq.valve.emergency_reservoir_l)
    assert ds["brake_cylinder_pressure"].values[-1, 1] == pytest.approx(p_em, rel=0.005)
    assert 73 <= p_em / 6894.76 <= 81


# ------------------------------------------------------------------------------------------------
# Jacobian, conservation, rest
# ------------------------------------------------------------------------------------------------
def mixed_tree(**kw):
    """Every valve type and device on 7 vehicles: UIC and AAR wagons, a remote locomotive, a two-way EOT,
    a separation, leakage; service, emergency, release."""
    types = {"loco": _loco(_equipment("uic_locomotive.yaml")),
             "uic": {"mass_t": 80.0, "length_m": 14.0, "brake": {"pneumatic": _equipment("uic_wagon.yaml")}},
             "aar": {"mass_t": 100.0, "length_m": 17.0, "brake": {"pneumatic": _equipment("aar_heavy_haul_wagon.yaml")}},
             "off": {"mass_t": 60.0, "length_m": 12.0, "brake": {"pneumatic": CUT_OUT}}}
    consist = [{"type": "loco"}, {"type": "uic", "count": 2}, {"type": "aar"}, {"type": "off"},
               {"type": "loco", "remote": {"radio_delay_s": 0.5}}, {"type": "uic"}]
    cmds = [{"time_s": 0.5, "brake": 0.6, "notch": 1, "independent_brake": 0.5}, {"time_s": 6.0, "brake": "emergency"},
            {"time_s": 12.0, "brake": 0.0}]
    pn = {"pipe": {"cells_per_vehicle": 3, "leakage_bar_per_min": 0.2}, "eot": {"kind": "two_way", "radio_delay_s": 0.3},
          "separation": {"coupler": 3, "time_s": 9.0, "opening_time_s": 0.5}, "jacobian": "full"}
    return _tree(consist, types, commands=cmds, pneumatic=pn, duration=16.0, speed=30.0, **kw)


@pytest.mark.parametrize("control", ["conventional", "ecp"])
def test_the_analytic_jacobian_of_the_brake_rows_equals_central_differences(control):
    sc = make_scenario(mixed_tree(), [f"air_brake.pneumatic.control={control}"])
    model, prob = ltd_problem(sc)
    p = model.params
    times = np.array([1.0, 2.5, 6.3, 7.5, 9.2, 12.5, 14.0])
    sol = integrate(prob, "bdf2", times, times[-1], rtol=1e-6, atol=1e-8, step=1e-4)
    assert sol.status.success
    n = model.y0.size
    pat = prob.jac_pattern
    ok = (pat.rows >= 0) & (pat.cols >= 0)
    B, N = p.block, p.n_veh
    brows = np.array([B * j + 2 + k for j in range(N) for k in range(B - 2)])
    checked = 0
    for k, t in enumerate(times):
        y = sol.y[k].copy()
        vals = np.zeros(pat.rows.size)
        prob.jac(t, y, p, vals)
        J = np.zeros((n, n))
        np.add.at(J, (pat.rows[ok], pat.cols[ok]), vals[ok])
        f0, fp, fm = np.empty(n), np.empty(n), np.empty(n)
        prob.rhs(t, y, p, f0)
        F, Fp, Fm = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
        for c in range(n):
            h = 1e-7 * max(1.0, abs(y[c]))
            yp, ym = y.copy(), y.copy()
            yp[c] += h
            ym[c] -= h
            prob.rhs(t, yp, p, fp)
            prob.rhs(t, ym, p, fm)
            F[:, c], Fp[:, c], Fm[:, c] = (fp - fm) / (2 * h), (fp - f0) / h, (f0 - fm) / h
        for r in brows:
            scale = max(np.abs(F[r]).max(), 1e-12)
            smooth = np.abs(Fp[r] - Fm[r]) <= 1e-6 * scale + 1e-9    # a kink inside the difference: skip
            err = np.where(smooth, np.abs(J[r] - F[r]), 0.0)
            checked += int(smooth.sum())
            assert err.max() <= 1e-5 * scale + 1e-9, (t, r // B, r % B - 2, int(np.argmax(err)), err.max(), scale)
    assert checked > 0.9 * len(times) * brows.size * n


@pytest.mark.parametrize("method, tol", [("rk4", 1e-12), ("bdf2", 1e-9)])
def test_the_air_mass_balance_closes(method, tol):
    over = [f"integrator.method={method}", "integrator.step_s=0.0005"] if method == "rk4" else []
    ds = run_scenario(make_scenario(mixed_tree(), over))
    assert str(ds["status"].values) == "completed"
    res = float(ds["air_mass_balance_residual"])
    print(f"\n{method}: air mass balance residual {res:.2e} of {float(ds['air_mass_initial']):.2f} kg, "
          f"{float(ds['air_exchanged']):.3f} kg exchanged")
    assert abs(res) < tol
    assert float(ds["air_exchanged"]) > 0.01 * float(ds["air_mass_initial"])   # the test vents a lot of air


def test_a_charged_train_at_rest_stays_charged_and_a_leaking_one_does_not_apply():
    sc, _ = load_scenario(BRAKES / "rack" / "brake_rack_150.yaml",
                          ["driver.commands.0.brake=0.0", "driver.commands.1.brake=0.0", "simulation.duration_s=60"])
    model, prob = ltd_problem(sc)
    sol = integrate(prob, "bdf2", np.array([60.0]), 60.0, **sc.integrator.kwargs())
    p = model.params
    blk0 = model.y0[:p.block * p.n_veh].reshape(p.n_veh, p.block)[:, 2:]
    blk1 = sol.y_final[:p.block * p.n_veh].reshape(p.n_veh, p.block)[:, 2:]
    assert np.array_equal(blk0, blk1)                       # an exact equilibrium: no drift at all
    sc, _ = load_scenario(BRAKES / "rack" / "brake_rack_150.yaml",
                          ["driver.commands.0.brake=0.0", "driver.commands.1.brake=0.0", "simulation.duration_s=120",
                           "air_brake.pneumatic.pipe.leakage_bar_per_min=0.2"])
    ds = run_scenario(sc)
    bp = ds["brake_pipe_pressure"].values
    assert bp[-1, 0] - bp[-1, -1] > 0.01 * BAR             # the leakage gradient formed
    assert float(ds["brake_cylinder_pressure"].max()) < 0.05 * BAR   # but no brake applied


# ------------------------------------------------------------------------------------------------
# train control
# ------------------------------------------------------------------------------------------------
def test_a_remote_locomotive_group_follows_the_lead_notch_after_its_radio_delay():
    from helpers.ltd import constant_loco, frictionless_wagon, scenario_tree

    tree = scenario_tree(6, commands=[{"time_s": 1.0, "notch": 1}, {"time_s": 4.0, "notch": 0}], duration=10.0,
                         loco=constant_loco(rate=0.5, tau=0.2), wagon=frictionless_wagon())
    tree["consist"] = [{"type": "loco"}, {"type": "wagon", "count": 3}, {"type": "loco", "remote": {"radio_delay_s": 1.5}},
                       {"type": "wagon", "count": 3}]
    model, prob = ltd_problem(make_scenario(tree))
    p = model.params
    assert p.n_groups == 2 and list(p.notch_group[[0, 4]]) == [0, 1]
    t = np.arange(0.0, 10.0, 0.01)
    sol = integrate(prob, "rk4", t, 10.0, step=0.001)
    lead, remote = sol.y[:, p.i_notch], sol.y[:, p.i_notch + 1]
    k = int(round(1.5 / 0.01))
    # the same filter of the command shifted by 1.5 s (to the RK4 step's resolution of the command's jump)
    assert np.abs(remote[k:] - lead[:-k]).max() < 1e-3
    assert remote[:k].max() == 0.0 and lead.max() == pytest.approx(1.0, abs=1e-3)   # exponential approach (tau)


def test_ecp_applies_every_vehicle_after_its_delay_and_the_pipe_stays_charged(rack_runs):
    sc, _ = load_scenario(BRAKES / "rack" / "brake_rack_150.yaml",
                          ["driver.commands.0.brake=1.0", "simulation.duration_s=20", "air_brake.pneumatic.control=ecp"])
    ds = run_scenario(sc)
    app = ds["brake_application_time"].values
    conv = rack_runs["1.0"]["brake_application_time"].values
    print(f"\nfull service, 150 vehicles: application time lead/tail ECP {app[0]:.1f}/{app[-1]:.1f} s, "
          f"conventional {conv[0]:.1f}/{conv[-1]:.1f} s")
    assert np.ptp(app[1:]) < 0.5                            # every wagon at once (identical wagons)
    assert app[-1] < conv[-1] - 3.0                         # no front to wait for
    # the pipe only supplies air: it recharges the reservoirs (a gradient along the train) but stays above the
    # full-service reduction, and the driver's brake valve holds it at the feed pressure
    bp = ds["brake_pipe_pressure"].values
    assert bp.min() > (6.2 - 1.8) * BAR and np.abs(bp[:, 0] - 6.2 * BAR).max() < 0.05 * BAR


def test_a_two_way_eot_and_a_separation_vent_the_rear():
    base = ["driver.commands.0.brake=emergency", "simulation.duration_s=12"]
    plain = run_scenario(load_scenario(BRAKES / "rack" / "brake_rack_150.yaml", base)[0])
    eot = run_scenario(load_scenario(BRAKES / "rack" / "brake_rack_150.yaml",
                                     base + ["air_brake.pneumatic.eot.kind=two_way"])[0])
    a0, a1 = plain["brake_front_arrival_time"].values, eot["brake_front_arrival_time"].values
    assert a1[-1] < 0.3 * a0[-1]                             # the rear vents after the radio delay
    assert a1[-1] == pytest.approx(1.0, abs=0.3)
    # a separation at coupler 100 at t = 5 s with no command: both parts vent, every vehicle applies
    sep = run_scenario(load_scenario(BRAKES / "rack" / "brake_rack_150.yaml",
                                     ["driver.commands.0.brake=0.0", "driver.commands.1.brake=0.0",
                                      "simulation.duration_s=20", "air_brake.pneumatic.separation.coupler=100",
                                      "air_brake.pneumatic.separation.time_s=5.0"])[0])
    assert float(sep["brake_cylinder_pressure"].values[-1].min()) > 3.0 * BAR
    assert abs(float(sep["air_mass_balance_residual"])) < 1e-4


# ------------------------------------------------------------------------------------------------
# empirical and pneumatic on train 4
# ------------------------------------------------------------------------------------------------
def _crossing(t, x, level):
    """First time each column of ``x`` (float64[k, m]) reaches ``level`` (linear between samples; NaN never)."""
    out = np.full(x.shape[1], np.nan)
    for j in range(x.shape[1]):
        k = np.flatnonzero(x[:, j] >= level)
        if k.size and k[0] > 0:
            k = k[0]
            out[j] = t[k - 1] + (level - x[k - 1, j]) / (x[k, j] - x[k - 1, j]) * (t[k] - t[k - 1])
    return out


@pytest.mark.slow
def test_the_empirical_and_the_pneumatic_brake_stop_train_4_within_10_percent():
    """A full service from 60 km/h on train 4 (no remote driver's brake valve: one front, as the empirical
    brake has).  The empirical brake is matched to the pneumatic run: the same block force at full service
    (``shoe_force_kN`` derived from the equipment), its propagation speed = the slope of the time at which the
    cylinders reach half their full-service pressure against position, its cylinder lag = the lead wagon's
    (t95 − t50)/ln 10.  The effective propagation (~40 m/s) is far below the pipe's signal speed (~200 m/s):
    the pipe of a long train drains slowly, its rear applies gradually."""
    common = ["driver.commands.0.brake=1.0", "consist.2.remote=null", "simulation.duration_s=150",
              "vehicle_types.wagon.brake.shoe_force_kN=null", "vehicle_types.loco.brake.shoe_force_kN=null"]
    train = ROOT / "configs" / "trains" / "train4_emergency.yaml"
    pn = run_scenario(load_scenario(train, common)[0])
    t = pn["time"].values
    bc = pn["brake_cylinder_pressure"].values
    full = bc[:, 2].max()                                      # the lead wagon's full-service pressure
    t50, t95 = _crossing(t, bc, 0.5 * full), _crossing(t, bc, 0.95 * full)
    pos = -(pn["position"].values[0] - pn["position"].values[0, 0])   # distance behind the head [m]
    ok = np.isfinite(t50)
    assert ok.mean() > 0.95
    speed = 1.0 / np.polyfit(pos[ok], t50[ok], 1)[0]
    tau = (t95[2] - t50[2]) / math.log(10.0)
    em = run_scenario(load_scenario(train, common + [
        "air_brake.model=empirical", f"air_brake.service_propagation_mps={speed:.6g}",
        f"air_brake.apply_time_constant_s={tau:.6g}"])[0])
    d_pn, d_em = float(pn["stopping_distance"]), _stopping_distance(em)
    print(f"\ntrain 4, full service from 60 km/h, matched (propagation {speed:.0f} m/s, lag {tau:.1f} s; the pipe's "
          f"signal {float(pn['brake_signal_speed']):.0f} m/s): stopping distance pneumatic {d_pn:.0f} m, empirical "
          f"{d_em:.0f} m ({100 * (d_em / d_pn - 1):+.1f} %); largest buff force pneumatic "
          f"{float(pn['max_buff_force']) / 1e3:.0f} kN at coupler {int(pn['max_buff_force_coupler'])}, empirical "
          f"{float(em['max_buff_force']) / 1e3:.0f} kN at coupler {int(em['max_buff_force_coupler'])}")
    assert d_em == pytest.approx(d_pn, rel=0.10)


@pytest.mark.slow
def test_the_shipped_pneumatic_trip_runs_forward_and_releases_every_brake():
    """``train4_pneumatic.yaml`` as shipped (3 863 s): its driver schedule was once train 4's replayed after the
    application, and the train stalled at 2 850 s and rolled back for the rest of the trip; its rear brakes once
    never released (the AAR piston left part-way).  The train runs forward from its start to the end, every
    cylinder is empty from 1 500 s on and the pipe recharged (within 0.01 bar of the lead's) from 2 000 s on, and the
    air balance closes."""
    ds = run_scenario(load_scenario(ROOT / "configs" / "trains" / "train4_pneumatic.yaml",
                                    ["output.envelope_check.enabled=false"])[0])
    t = ds["time"].values
    v = ds["speed"].values
    bc = ds["brake_cylinder_pressure"].values / BAR
    bp = ds["brake_pipe_pressure"].values / BAR
    late = t >= 1500.0
    print(f"\ntrain4_pneumatic: lowest speed after 150 s {v[t >= 150.0].min():.2f} m/s, release_time_tail "
          f"{float(ds['release_time_tail']):.1f} s, head travel {ds['position'].values[-1, 0] / 1e3:.1f} km, "
          f"warnings {ds.attrs['warnings']}")
    assert str(ds.attrs["status"]) == "completed"
    assert v.min() > -1e-3 and v[t >= 150.0].min() > 5.0
    assert math.isfinite(float(ds["release_time_tail"]))
    rech = t >= 2000.0
    assert bc[late].max() < 0.01 and np.abs(bp[rech] - bp[rech][:, :1]).max() < 0.01
    assert abs(float(ds["air_mass_balance_residual"])) < 1e-3
    assert not ds.attrs["warnings"]


def test_two_passes_give_the_one_pass_run_through_the_application_and_release():
    """``air_brake.pneumatic.passes: two`` (the brake system, then the motion with the recorded cylinder pressures;
    ``kinds/ltd/two_pass.py``) against the one-pass run of ``train4_pneumatic.yaml`` over its first 1 400 s (the
    full-service application at 1 300 s and the release at 1 330 s, distributed power with a 1 s radio delay): the
    system is block triangular, so the two differ by the integration error only.  Asserted: every coupler's
    draft and buff envelope within 0.5 % of the largest force (the issue's accuracy target; the two-pass trip is
    0.23 % from the rtol 1e-7 reference, the one-pass 0.29 %, benchmarks/brakes_two_pass.py), the brake metrics
    (front arrival → signal speed within 0.5 %, application and release times within 0.1 s, the largest buff
    while braking within 0.5 %), the train's mean speed within 5 mm/s and every position within 0.2 m, the pipe
    pressures within 0.05 bar at every sample and the cylinders until 30 s after the release command, the air balance
    closing in both, and the run path recorded."""
    runs = {}
    for passes in ("one", "two"):
        sc, _ = load_scenario(ROOT / "configs" / "trains" / "train4_pneumatic.yaml",
                              ["simulation.duration_s=1400", f"air_brake.pneumatic.passes={passes}",
                               "output.envelope_check.enabled=false"])
        runs[passes] = run_scenario(sc)
    one, two = runs["one"], runs["two"]
    assert str(two.attrs["status"]) == "completed" and int(two.attrs["brake_passes"]) == 2
    assert "brake_passes" not in one.attrs
    fmax = max(float(one["max_draft_force"]), float(one["max_buff_force"]))
    for name in ("coupler_max_draft_force", "coupler_max_buff_force"):
        err = np.abs(two[name].values - one[name].values).max() / fmax
        print(f"\n{name}: largest difference {100 * err:.3f} % of the largest force")
        assert err < 0.005
    assert float(two["brake_signal_speed"]) == pytest.approx(float(one["brake_signal_speed"]), rel=0.005)
    for name in ("application_time_lead", "application_time_tail", "release_time_lead", "release_time_tail"):
        assert float(two[name]) == pytest.approx(float(one[name]), abs=0.1), name
    assert float(two["max_buff_force_braking"]) == pytest.approx(float(one["max_buff_force_braking"]), rel=0.005)
    assert int(two["max_buff_force_braking_coupler"]) == int(one["max_buff_force_braking_coupler"])
    t = one["time"].values
    assert np.abs(two["speed"].values.mean(axis=1) - one["speed"].values.mean(axis=1)).max() < 0.005
    assert np.abs(two["position"].values - one["position"].values).max() < 0.2
    assert np.abs(two["brake_pipe_pressure"].values - one["brake_pipe_pressure"].values).max() < 0.05 * BAR
    # the cylinders through the application and the release's first 30 s; later a few rear AAR valves release
    # seconds apart: a weak release signal at the end of the pipe and a bistable piston make their release times
    # move with the step sequence (docs/performance.md: up to 9 s between rtol 3e-6 and 1e-7 in one pass)
    early = t <= 1360.0
    dbc = np.abs(two["brake_cylinder_pressure"].values - one["brake_cylinder_pressure"].values)
    assert dbc[early].max() < 0.05 * BAR
    # relative residuals; the shipped reduced brake Jacobian closes the balance to the Newton tolerance (one pass
    # 2.2e-6, two passes 7.0e-6 here; jacobian: full closes it to rounding)
    for ds in (one, two):
        assert abs(float(ds["air_mass_balance_residual"])) < 3e-5


def test_the_motion_pass_on_its_compact_layout_is_bitwise_the_full_state_model():
    """The motion pass's callbacks (``models/ltd/two_pass``: 5 values per vehicle, only the brake states they read
    interpolated) against the one-pass right-hand side, Jacobian and observer on
    :func:`~hpcrail.models.ltd.two_pass.fill`'s full state (every recorded brake state interpolated), on the
    7-vehicle consist with both locomotive groups and their independent brakes: brake records drawn off the charged
    state (cylinders from empty to full, independent brakes applied), the vehicles moving, at times inside steps of
    the record table, on its nodes and outside it.  Bitwise: every motion row of the right-hand side (the tail's
    applied notches and work integrals too), every slot of the motion Jacobian, every envelope and brake metric
    of the observer after the sequence of steps."""
    from hpcrail.kinds.ltd.two_pass import layout, motion_problem
    from hpcrail.models.ltd.jacobian import ltd_jac_pneumatic
    from hpcrail.models.ltd.kernel import ltd_observe_pneumatic, ltd_rhs_pneumatic
    from hpcrail.models.ltd.two_pass import fill, motion_jac, motion_observe, motion_rhs

    model, prob = ltd_problem(make_scenario(mixed_tree(), ["output.energy=true"]))
    p = model.params
    motion, rec = layout(p, prob.y0.size)
    assert p.i_energy >= 0 and np.count_nonzero(p.pn_v[:, L.V_IND]) == 2
    rng = np.random.default_rng(45)
    times = np.array([0.0, 0.4, 1.1, 3.0, 7.5, 12.5])
    states = [_perturbed_brake_state(model, rng) for _ in times]
    table = np.array([np.concatenate([[t], y[rec], rng.normal(0, 2 * BAR, rec.size)]) for t, y in zip(times, states)])
    N = p.n_veh
    table[:, 1 + 2 * N:1 + 3 * N] = 1e5 + rng.uniform(0.0, 4.0 * BAR, (times.size, N))   # independent brakes applied
    mp, _ = motion_problem(prob, table)
    P, sel = mp.params, mp.params[4]
    ym = states[2][motion]
    dm, vals = np.full(motion.size, np.nan), np.full(sel.size, np.nan)
    full, dfull, vfull = prob.y0.copy(), np.full(prob.y0.size, np.nan), np.zeros(prob.jac_pattern.nnz)
    acc, acc_full = mp.acc0.copy(), prob.acc0.copy()
    cursor = np.zeros(1, dtype=np.int64)
    checked = 0
    for t in (-1.0, 0.2, 0.4, 0.5, 1.1, 2.9, 5.0, 7.5, 9.0, 14.0, 20.0):
        ym = ym + rng.normal(0, 1e-3, ym.size)
        fill(t, ym, motion, rec, table, cursor, full)
        motion_rhs(t, ym, P, dm)
        ltd_rhs_pneumatic(t, full, p, dfull)
        assert np.array_equal(dm, dfull[motion]), (t, np.flatnonzero(dm != dfull[motion]))
        motion_jac(t, ym, P, vals)
        ltd_jac_pneumatic(t, full, p, vfull)
        assert np.array_equal(vals, vfull[sel]), (t, np.flatnonzero(vals != vfull[sel]))
        motion_observe(t, ym, P, acc)
        ltd_observe_pneumatic(t, full, p, acc_full)
        assert np.array_equal(acc, acc_full, equal_nan=True), (t, np.flatnonzero(acc != acc_full))
        checked += np.count_nonzero(dm) + np.count_nonzero(vals)
    assert checked > 5 * (motion.size + sel.size) and np.isfinite(acc).sum() > motion.size   # not trivially zero


def _stopping_distance(ds):
    """Head travel from the command (t = 2 s) until every vehicle stood still, from the sampled speeds and
    positions of a run (the empirical brake has no stopping metric)."""
    t = ds["time"].values
    v = np.abs(ds["speed"].values).max(axis=1)
    stop = np.flatnonzero((v <= 0.01) & (t > 2.0))
    assert stop.size
    pos = ds["position"].values[:, 0]
    return float(pos[stop[0]] - np.interp(2.0, t, pos))


# ------------------------------------------------------------------------------------------------
# configuration errors
# ------------------------------------------------------------------------------------------------
def test_pneumatic_configuration_errors_name_the_field():
    rack = BRAKES / "rack" / "brake_rack_150.yaml"
    cases = [
        (["partition.backend=threads", "partition.state=distributed"], "partition.state"),
        (["vehicle_types.wagon.brake.pneumatic=null"], "vehicle_types.wagon.brake"),
        (["vehicle_types.loco.brake.pneumatic.driver_brake_valve=null"], "driver_brake_valve"),
        (["air_brake.pneumatic.separation.coupler=150", "air_brake.pneumatic.separation.time_s=1"], "separation.coupler"),
        (["vehicle_types.wagon.brake.pneumatic.valve.kind=triple"], "valve"),
        (["integrator.method=mrbdf2"], "multirate integrator's blocks do not evaluate the pneumatic brake"),
    ]
    for over, field in cases:
        with pytest.raises(ConfigError) as exc:
            load_scenario(rack, over)
        assert field in str(exc.value), (over, str(exc.value))
    with pytest.raises(ConfigError) as exc:     # a remote needs a time-based schedule
        load_scenario(ROOT / "configs" / "trains" / "train4_emergency.yaml", ["driver.basis=distance",
                                                                               "driver.commands.0.distance_m=10",
                                                                               "driver.commands.0.time_s=null"])
    assert "driver.basis" in str(exc.value)
    for over in (["air_brake.pneumatic.passes=two", "partition.backend=threads"],        # two passes: one block,
                 ["air_brake.pneumatic.passes=two", "integrator.method=mrbdf2"]):         # a single-rate method
        with pytest.raises(ConfigError) as exc:
            load_scenario(rack, over)
        assert "air_brake.pneumatic.passes" in str(exc.value), (over, str(exc.value))
    with pytest.raises(ConfigError) as exc:     # and a time-based schedule
        load_scenario(ROOT / "configs" / "trains" / "train4_emergency.yaml", [
            "air_brake.pneumatic.passes=two", "driver.basis=distance", "driver.commands.0.distance_m=10",
            "driver.commands.0.time_s=null"])
    assert "air_brake.pneumatic.passes" in str(exc.value) and "time-based" in str(exc.value)


def test_cylinder_geometry_and_equalisation_are_consistent():
    sc, _ = load_scenario(BRAKES / "rack" / "brake_rack_150.yaml")
    eq = sc.vehicle_types["wagon"].brake.pneumatic
    g = cylinder_geometry(eq)
    assert g["vc"] == pytest.approx(g["v0"] + g["area"] * eq.cylinder.stroke_mm * 1e-3)
    p = equalisation_pressure(eq, 6.2 * BAR, eq.auxiliary_reservoir_l)
    vr = eq.auxiliary_reservoir_l * 1e-3
    m0 = (6.2 * BAR + 101325.0) * vr + 101325.0 * g["v0"]
    assert (p + 101325.0) * (vr + g["vc"] + g["a3"] * (p - g["pc"])) == pytest.approx(m0, rel=1e-9)


# ------------------------------------------------------------------------------------------------
# hidden-vehicle blocks (shared state): issue 24, "blocks on threads = monolithic"
# ------------------------------------------------------------------------------------------------
def _perturbed_brake_state(model, rng):
    """y0 with every brake state moved off its charged value (pipe cells and reservoirs ±0.3 bar, face flows,
    cylinder air, AAR pistons anywhere in [0, 1]) and the vehicles moving: every valve branch in play."""
    p = model.params
    B, N = p.block, p.n_veh
    nc, nx = model.brakes.nc, model.brakes.nx
    li = L.local_indices(nc, nx)
    y = model.y0.copy()
    y[1:B * N:B] = 8.0 + rng.normal(0, 0.3, N)
    y[B:B * N:B] = rng.normal(0, 0.01, N - 1)
    for j in range(N):
        b = B * j + 2
        for c in range(nc):
            y[b + li["cell"](c)] += rng.normal(0, 0.3 * BAR)
            y[b + li["face"](c)] = rng.normal(0, 0.02)
        y[b + li["ar"]] += rng.normal(0, 0.3 * BAR)
        y[b + li["bc"]] += abs(rng.normal(0, 1.5 * BAR))
        y[b + li["eq"]] += rng.normal(0, 0.3 * BAR)
        for k in range(nx):
            y[b + li["x"](k)] += rng.normal(0, 0.3 * BAR)
        if int(p.pn_v[j, L.V_KIND]) == L.K_AAR:
            y[b + li["x"](2)], y[b + li["x"](3)] = rng.uniform(0, 1, 2)
    return y


@pytest.mark.parametrize("control", ["conventional", "ecp"])
def test_the_blocked_brake_rhs_is_bitwise_the_monolithic_rhs(control):
    """One evaluation of the shared-state threads kernel (each range: its motion and its brake states,
    ``partition/ltd._range_job_pneumatic``) on every layout of the 7-vehicle consist with every valve type and
    device (UIC, AAR, cut-out, remote driver's brake valve, two-way EOT at the tail, a separation at coupler 3,
    leakage): at times before the command, in service, in emergency, while the hose parts and after the release,
    the derivative is bitwise the monolithic one (the brake pipe's coupling states are read across block ends
    from the one state vector)."""
    import numba

    from hpcrail.models.ltd.kernel import ltd_rhs_pneumatic
    from hpcrail.partition.layout import layout_from_blocks
    from hpcrail.partition.ltd import ltd_rhs_threads_pneumatic, partitioned_params, thread_kernels

    model, _prob = ltd_problem(make_scenario(mixed_tree(), [f"air_brake.pneumatic.control={control}"]))
    p = model.params
    assert thread_kernels(p)[0] is ltd_rhs_threads_pneumatic
    rng = np.random.default_rng(24)
    before = numba.get_num_threads()
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    try:
        for t in (0.2, 1.0, 6.4, 9.2, 12.5):
            y = _perturbed_brake_state(model, rng)
            ref = np.full_like(y, np.nan)
            ltd_rhs_pneumatic(t, y, p, ref)
            assert np.all(np.isfinite(ref)) and np.abs(ref[2:p.block * p.n_veh]).max() > 0.0
            for blocks in (1, 2, 3):
                pp = partitioned_params(p, layout_from_blocks(model.n_vehicles, blocks))
                d = np.full_like(y, np.nan)
                ltd_rhs_threads_pneumatic(t, y, pp, d)
                assert np.array_equal(d, ref), (t, blocks, np.flatnonzero(d != ref))
    finally:
        numba.set_num_threads(before)


#: a 36-vehicle cut of the AAR rack running at 60 km/h: emergency at 0.2 s (the front reaches the tail at 2.0 s,
#: the tail's cylinder 95 % at 3.7 s; in-train forces while the front runs down the pipe), release command at 4 s
RACK_BLOCKS = ["consist.1.count=35", "simulation.initial_speed_kmh=60", "driver.commands.0.time_s=0.2",
               "driver.commands.1.time_s=4.0", "simulation.duration_s=5", "output.interval_s=0.1",
               "partition.blocks=3", "partition.threads=2"]


def test_rk4_on_two_threads_and_three_blocks_is_bitwise_the_monolithic_run():
    """RK4 (fixed step 0.5 ms) with shared state: every sampled series (brake-pipe, auxiliary-reservoir and
    cylinder pressures, speeds, in-train forces, positions), every per-vehicle and scalar brake metric and every
    coupler envelope is bitwise the monolithic run's (flat tangent track: the blocks' position scan does not
    enter the forces)."""
    rack = BRAKES / "rack" / "brake_rack_150.yaml"
    over = RACK_BLOCKS + ["integrator.method=rk4", "integrator.step_s=0.0005"]
    a = run_scenario(load_scenario(rack, over + ["partition.backend=off"])[0])
    b = run_scenario(load_scenario(rack, over + ["partition.backend=threads"])[0])
    assert b.attrs["partition"].startswith("threads: 3 blocks") and "2 threads" in b.attrs["partition"]
    assert b.attrs["partition_state"] == "shared" and a.attrs["partition_state"] == "serial"
    # the run exercises what it compares: the front reached the tail, every cylinder applied, the rear ran in
    # (buff) while braking
    assert np.all(np.isfinite(a["brake_front_arrival_time"].values))
    assert np.all(np.isfinite(a["brake_application_time"].values))
    assert float(a["max_buff_force_braking"]) > 1e5
    assert str(b.status.values) == "completed" and int(a.nsteps) == int(b.nsteps) == 10000
    compared = assert_outputs_bitwise(a, b)
    assert {"brake_pipe_pressure", "auxiliary_reservoir_pressure", "brake_cylinder_pressure", "coupler_force",
            "brake_signal_speed", "air_mass_balance_residual"} <= set(a.data_vars) and compared > 40


def test_distributed_state_with_the_pneumatic_brake_is_a_config_error_and_auto_picks_shared():
    """The distributed state's exchange rows do not carry the brake pipe's coupling states: ``partition.state:
    distributed`` with the pneumatic brake (or with remote locomotives) is a config error naming the field and the
    allowed value; ``auto`` picks shared state (and stays monolithic below the break-even length)."""
    from hpcrail.kinds.ltd.problem import backend

    rack = BRAKES / "rack" / "brake_rack_150.yaml"
    for be in ("threads", "mpi", "auto"):
        with pytest.raises(ConfigError) as exc:
            load_scenario(rack, [f"partition.backend={be}", "partition.state=distributed"])
        msg = str(exc.value)
        assert "partition.state" in msg and "shared" in msg and "pneumatic brake" in msg, msg
    load_scenario(rack, ["partition.backend=off", "partition.state=distributed"])   # no blocks: no error
    sc, _ = load_scenario(rack, ["partition.backend=threads"])
    assert (backend(sc, threads=2).name, backend(sc, threads=2).state) == ("threads", "shared")
    sc, _ = load_scenario(rack, ["partition.auto_min_vehicles=100"])
    b = backend(sc, threads=2)
    assert (b.name, b.state) == ("threads", "shared") and "pneumatic brake" in b.why
    sc, _ = load_scenario(rack)
    assert backend(sc, threads=2).name == "off"    # 150 vehicles: below the default break-even
    # remote locomotive groups (distributed power; their driver's brake valves are in the blocked right-hand side
    # checked bitwise above, their notches are global states): shared state only, as the pneumatic brake
    dp = ROOT / "configs" / "trains" / "train4_emergency.yaml"
    sc, _ = load_scenario(dp, ["partition.backend=threads"])
    assert backend(sc, threads=2).state == "shared" and "remote locomotives" in backend(sc, threads=2).why
    with pytest.raises(ConfigError) as exc:
        load_scenario(dp, ["partition.backend=threads", "partition.state=distributed", "air_brake.model=empirical"])
    assert "partition.state" in str(exc.value) and "remote locomotive" in str(exc.value)


@pytest.mark.mpi
@needs_mpi
def test_mpi_shared_state_is_bitwise_the_monolithic_run(tmp_path):
    """``mpiexec -n 2 hpcrail run ... --partition mpi`` with the pneumatic brake (shared state: every rank
    evaluates its ranges' motion and brake states, the derivative slices are gathered, every rank computes the
    whole train's brake metrics): RK4 on the 36-vehicle rack cut, every output bitwise the serial run's."""
    over = [o for o in RACK_BLOCKS if not o.startswith("partition.threads")]
    a, b = mpi_pair(BRAKES / "rack" / "brake_rack_150.yaml", over + ["integrator.method=rk4", "integrator.step_s=0.0005"],
                    tmp_path, ROOT)
    assert "2 MPI ranks" in b.attrs["partition"] and b.attrs["partition_state"] == "shared"
    assert float(a["max_buff_force_braking"]) > 1e5
    assert_outputs_bitwise(a, b)
