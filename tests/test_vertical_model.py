"""Vertical vehicle dynamics with massless damper nodes (Yu et al. 2023): assembly, statics, eigenvalues,
solver accuracy (recurrence first order, exact discretisation against Radau, integrators on the ODE
form), the index-1 DAE form and the Hertz contact."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import eig, eigh, expm

from hpcrail.kinds import load_scenario
from hpcrail.integrators.statespace import discretise, recurrence_lti, run_lti
from hpcrail import kinds
from hpcrail.kinds.vertical.build import build_vertical
from hpcrail.kinds.vertical.run import solve, vertical_result
from hpcrail.models.vertical.build import dae_form
from hpcrail.results.dataset import build_dataset


def vertical_dataset(sc, model, sol):
    """The run dataset of a solution (the kind's outputs through the one dataset builder)."""
    return build_dataset(kinds.get("vertical"), sc, vertical_result(sc, model, sol))
from hpcrail.models.vertical.kernel import vertical_dae_rhs, vertical_inputs, vertical_observe, vertical_rhs

G = 9.81
# Yu et al. 2023 §III.A (quarter vehicle)
MC, MT, CP, CS, KP, KS, KPD, KSD = 14398.0, 1379.0, 28300.0, 60000.0, 2.74e6, 5.68e5, 40e6, 20e6
# Yu et al. 2023 §III.B (full vehicle; M_c = 3.4e4, see configs/vertical/components/paper001_full_vehicle.yaml)
FM = dict(Mc=3.4e4, Jc=2.277e6, Mt=3000.0, Jt=2710.0, Mw=1400.0, Kp=5.5e5, Ks=4e5, Cp=6e4, Cs=8e4, Kpd=5e6,
          Ksd=5e6, KH=8e7, Lc=9.0, Lt=1.2)


def quarter(*sets):
    return load_scenario("configs/vertical/quarter_vehicle.yaml", list(sets))[0]


def full(*sets):
    return load_scenario("configs/vertical/full_vehicle.yaml", list(sets))[0]


def full_K_M(include_series=False):
    """Stiffness and mass matrices of the 10-dof pitch-plane vehicle written out by hand
    (research notes §6.3 with per-bogie K_s and per-wheelset K_p as printed by Yu et al. 2023; order
    z_c, β_c, z_t1, β_t1, z_t2, β_t2, z_w1..z_w4; point displacement z + x β)."""
    p = FM
    ks, kp, kh, lc, lt = p["Ks"], p["Kp"], p["KH"], p["Lc"], p["Lt"]
    if include_series:  # dampers locked: the joints (k_e = K/2 each damper) act as springs in parallel
        ks, kp = ks + p["Ksd"] / 2, kp + p["Kpd"] / 2
    K = np.zeros((10, 10))
    K[0, 0] = 2 * ks
    K[0, 2] = K[0, 4] = -ks
    K[1, 1] = 2 * ks * lc ** 2
    K[1, 2] = -ks * lc
    K[1, 4] = ks * lc
    K[2, 2] = K[4, 4] = ks + 2 * kp
    K[2, 6] = K[2, 7] = K[4, 8] = K[4, 9] = -kp
    K[3, 3] = K[5, 5] = 2 * kp * lt ** 2
    K[3, 6] = K[5, 8] = -kp * lt
    K[3, 7] = K[5, 9] = kp * lt
    for i in range(6, 10):
        K[i, i] = kp + kh
    K = np.triu(K) + np.triu(K, 1).T
    M = np.diag([p["Mc"], p["Jc"], p["Mt"], p["Jt"], p["Mt"], p["Jt"], p["Mw"], p["Mw"], p["Mw"], p["Mw"]])
    return K, M


# ------------------------------------------------------------------------------------------------
# assembly
# ------------------------------------------------------------------------------------------------
def test_quarter_vehicle_assembly_reproduces_paper_eq18_19():
    """The element list of configs/vertical/quarter_vehicle.yaml assembles into Yu et al. 2023 eq (19):
    x = [ż_c, ż_t, Δz_2, Δz_1, z_c, z_t], A = [[A1, [A2; A3]], [I, O]], B u = F(t) z_v."""
    model = build_vertical(quarter("simulation.gravity_mps2=0"))
    ss = model.ss
    A1 = np.array([[0, 0, KSD / (2 * MC), 0],
                   [0, 0, -KSD / (2 * MT), KPD / (2 * MT)],
                   [0, 0, -KSD / (2 * CS), 0],
                   [0, 0, 0, -KPD / (2 * CP)]])
    A2 = np.array([[-(KS + KSD / 2) / MC, (KS + KSD / 2) / MC],
                   [(KS + KSD / 2) / MT, -(KP + KPD / 2 + KS + KSD / 2) / MT]])
    A3 = np.array([[KSD / (2 * CS), -KSD / (2 * CS)],
                   [0, KPD / (2 * CP)]])
    A = np.zeros((6, 6))
    A[:4, :4] = A1
    A[:2, 4:] = A2
    A[2:4, 4:] = A3
    A[4:, :2] = np.eye(2)
    F = np.array([0, (KP + KPD / 2) / MT, 0, -KPD / (2 * CP), 0, 0])
    np.testing.assert_allclose(ss.A, A, rtol=1e-14, atol=0)
    np.testing.assert_allclose(ss.B_u[:, 0], F, rtol=1e-14, atol=0)
    assert not ss.B_ud.any() and not ss.b_g.any()
    assert model.asm.state_names() == ["car_body.bounce.rate", "bogie.bounce.rate", "secondary_damper.stroke",
                                       "primary_damper.stroke", "car_body.bounce", "bogie.bounce"]


def test_rhs_kernel_equals_state_space_form():
    """The numba element loop is the affine map A y + B_u u(t) + B_ud u̇(t) of the assembled
    matrices (dynamic coordinates: gravity and static preloads cancel exactly)."""
    for sc in (quarter(), full()):
        model = build_vertical(sc)
        rng = np.random.default_rng(3)
        N, W = model.n_state, model.asm.wheel_x.size
        for t in (0.0, 0.37, 1.9):
            y = rng.normal(scale=1e-3, size=N)
            f = np.zeros(N)
            vertical_rhs(t, y, model.params, f)
            w = np.zeros(2 * W)
            vertical_inputs(t, y, model.params, w)
            ref = model.ss.A @ y + model.ss.B_w @ w
            np.testing.assert_allclose(f, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())


def test_static_deflection_equals_K_inverse_M_g():
    """The static equilibrium found by the builder (including the series-damper nodes, whose static
    stroke equals the relative displacement) equals K⁻¹ M g with K, M written out by hand."""
    q = build_vertical(quarter())
    K = np.array([[KS, -KS], [-KS, KS + KP]])
    Mg = -G * np.array([MC, MT])
    sv, ss, sq = q.asm.slices()
    np.testing.assert_allclose(q.x_static[sq], np.linalg.solve(K, Mg), rtol=1e-12)
    assert np.all(q.x_static[sv] == 0)
    f = build_vertical(full())
    K, M = full_K_M()
    g = -G * np.array([1, 0, 1, 0, 1, 0, 1, 1, 1, 1.0])
    sv, ss, sq = f.asm.slices()
    np.testing.assert_allclose(f.x_static[sq], np.linalg.solve(K, M @ g), rtol=1e-12, atol=1e-15)
    # static wheel loads of the statically determinate vehicle: (M_c/4 + M_t/2 + M_w) g each
    Q0 = (FM["Mc"] / 4 + FM["Mt"] / 2 + FM["Mw"]) * G
    contact = [i for i, e in enumerate(f.asm.elements) if e.type == "wheel_rail"]
    np.testing.assert_allclose(f.params.el_F0[contact], Q0, rtol=1e-12)


def test_drop_under_gravity_settles_to_static_equilibrium():
    """Released at rest with every spring at its free length, the quarter vehicle settles to the
    static deflection (dynamic state → 0)."""
    sc = quarter("simulation.initial_state=unloaded", "track.irregularity={kind: none}", "integrator.method=exact",
                 "integrator.step_s=0.01", "output.interval_s=0.05", "simulation.duration_s=30")
    model = build_vertical(sc)
    sol = solve(model, sc.integrator, 30.0, 0.05)
    assert sol.status.success
    assert np.max(np.abs(sol.y[-1])) < 1e-12 * np.max(np.abs(model.y0))
    # the car body overshoots (damped, ζ < 1): its largest upward excursion is positive
    iz = model.asm.slices()[2].start
    assert sol.y[:, iz].max() > 0.0


@pytest.mark.parametrize("which", ["quarter", "full"])
def test_natural_frequencies_are_eigenvalues_of_A(which):
    """Undamped limit (damper c → 0: the massless nodes decouple) and locked limit (c → ∞: the rubber
    joints act as springs): the oscillatory eigenvalues of A are ±i ω with ω² the eigenvalues of
    (K, M), K and M written out by hand."""
    if which == "quarter":
        K0 = np.array([[KS, -KS], [-KS, KS + KP]])
        Kl = K0 + np.array([[KSD / 2, -KSD / 2], [-KSD / 2, KSD / 2 + KPD / 2]])
        M = np.diag([MC, MT])
        mk = quarter
        paths = ("vehicle.element_types.secondary_damper.damping_Ns_per_m",
                 "vehicle.element_types.primary_damper.damping_Ns_per_m")
    else:
        K0, M = full_K_M()
        Kl, _ = full_K_M(include_series=True)
        mk = full
        paths = ("vehicle.element_types.secondary_damper.damping_Ns_per_m",
                 "vehicle.element_types.primary_damper.damping_Ns_per_m")
    # c = 0.1 N s/m: damping ratio ~1e-6 (frequency shift ~ζ² negligible) while the node poles
    # −k_e/c stay moderate (round-off of a degenerate pair ~ eps·‖A‖); c = 1e13: k_e/(ω c) < 1e-7
    for c, K in ((0.1, K0), (1e13, Kl)):
        model = build_vertical(mk(*(f"{p}={c}" for p in paths)))
        lam = eig(model.ss.A, right=False)
        osc = np.sort(np.abs(lam[lam.imag > 1e-6]))
        omega = np.sqrt(eigh(K, M, eigvals_only=True))
        np.testing.assert_allclose(osc, np.sort(omega), rtol=1e-6)
        # the remaining eigenvalues are the massless-node modes −k_e/c (and nothing oscillatory)
        assert np.sum(np.abs(lam.imag) > 1e-6) == 2 * M.shape[0]


# ------------------------------------------------------------------------------------------------
# solver accuracy
# ------------------------------------------------------------------------------------------------
def _harmonic_exact(model, amp, omega, t):
    """Exact response of the linear model at rest to u = amp·sin(ω t) under its single wheel:
    y(t) = e^{At}(y0 − y_p(0)) + y_p(t), y_p = Im(Ŷ e^{iωt}), (iω I − A) Ŷ = B_u amp + B_ud iω amp."""
    A = model.ss.A
    b = model.ss.B_u[:, 0] * amp + model.ss.B_ud[:, 0] * 1j * omega * amp
    Yh = np.linalg.solve(1j * omega * np.eye(A.shape[0]) - A, b)
    yp = np.imag(np.exp(1j * omega * t)[:, None] * Yh[None, :])
    return np.array([expm(A * ti) @ (-yp[0]) for ti in t]) + yp


def _rel(y, ref):
    return np.max(np.abs(y - ref)) / np.max(np.abs(ref))


def test_recurrence_is_first_order_and_exact_foh_second_order():
    """Against the closed-form response of the quarter vehicle to z_v = 0.5 sin 6t mm: the paper's
    recurrence (12) converges with order 1 (implicit Euler), the FOH exact discretisation with
    order 2 (exact for piecewise-linear input; the sine's curvature is the only error)."""
    sc = quarter("simulation.duration_s=3")
    model = build_vertical(sc)
    t_ref = np.arange(0, 3.0 + 1e-9, 0.05)
    ref = _harmonic_exact(model, 0.5e-3, 6.0, t_ref)
    for method, steps, order in (("recurrence", (4e-4, 2e-4, 1e-4), 1.0), ("exact", (0.0125, 0.00625, 0.003125), 2.0)):
        errs = []
        for h in steps:
            it = sc.integrator.model_copy(update={"method": method, "step_s": h})
            sol = solve(model, it, 3.0, 0.05)
            assert sol.status.success
            np.testing.assert_allclose(sol.t, t_ref, atol=1e-12)
            errs.append(_rel(sol.y, ref))
        orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
        np.testing.assert_allclose(orders, order, atol=0.05 * order)
    # documented accuracy of configs/vertical/quarter_vehicle.yaml (Δt = 0.1 ms): 0.1 %
    assert errs_at(sc, model, ref, "recurrence", 1e-4) < 1.2e-3


def errs_at(sc, model, ref, method, h):
    it = sc.integrator.model_copy(update={"method": method, "step_s": h})
    return _rel(solve(model, it, 3.0, 0.05).y, ref)


def test_exact_discretisation_matches_tight_radau():
    """Full vehicle released under gravity from the unloaded state (no track input): the ZOH exact
    discretisation through the whole pipeline (config → assembly → numba march) equals scipy's
    Radau at rtol 1e-9 (global error ~1e-11) to 1e-8 relative, with a 10 ms step."""
    sc = full("simulation.duration_s=1", "simulation.initial_state=unloaded", "track.irregularity={kind: none}",
              "integrator.hold=zoh", "integrator.step_s=0.01", "output.interval_s=0.05")
    model = build_vertical(sc)
    sol = solve(model, sc.integrator, 1.0, 0.05)
    A = model.ss.A
    r = solve_ivp(lambda t, y: A @ y, (0.0, 1.0), model.y0, method="Radau", t_eval=sol.t, rtol=1e-9, atol=1e-14,
                  jac=A)
    assert r.success
    assert _rel(sol.y, r.y.T) < 1e-8


@pytest.mark.parametrize("hold", ["zoh", "foh"])
def test_discretisation_exact_for_held_inputs(hold):
    """Γ₀, Γ₁ of the block matrix exponential are exact for inputs held constant (ZOH) or linear
    (FOH) over each step: full-vehicle A, B_w with a random piecewise input, compared with Radau
    integrating every step separately (rtol 1e-10); the numba march reproduces the numpy recurrence."""
    model = build_vertical(full())
    A, Bw = model.ss.A, model.ss.B_w
    h, nst = 0.05, 10
    rng = np.random.default_rng(7)
    w = rng.normal(scale=1e-3, size=(nst + 1, Bw.shape[1]))
    Phi, G0, G1 = discretise(A, Bw, h, hold)
    y = np.zeros(A.shape[0])
    ref = y.copy()
    for k in range(nst):
        wk, wk1 = w[k], w[k + 1]
        if hold == "zoh":
            f = lambda t, x, wk=wk: A @ x + Bw @ wk  # noqa: E731
        else:
            f = lambda t, x, wk=wk, wk1=wk1: A @ x + Bw @ (wk + (wk1 - wk) * t / h)  # noqa: E731
        r = solve_ivp(f, (0.0, h), ref, method="Radau", rtol=1e-10, atol=1e-16, jac=A)
        ref = r.y[:, -1]
        y = Phi @ y + G0 @ wk + G1 @ wk1
        assert _rel(y, ref) < 1e-8
    # recurrence (12) in the same y_{k+1} = Φ y_k + Γ₀ w_k + Γ₁ w_{k+1} form equals implicit Euler
    P, R0, R1 = recurrence_lti(A, Bw, h)
    y1 = P @ np.ones(A.shape[0]) + R1 @ w[1]
    ie = np.linalg.solve(np.eye(A.shape[0]) - h * A, np.ones(A.shape[0]) + h * Bw @ w[1])
    np.testing.assert_allclose(y1, ie, rtol=1e-12)
    assert not R0.any()


def test_numba_march_equals_numpy_recurrence():
    """run_lti (numba) reproduces y_{k+1} = Φ y_k + Γ₀ w_k + Γ₁ w_{k+1} evaluated in numpy."""
    sc = full("simulation.duration_s=0.5")
    model = build_vertical(sc)
    Phi, G0, G1 = discretise(model.ss.A, model.ss.B_w, 0.001, "foh")
    sol = run_lti(Phi, G0, G1, vertical_inputs, vertical_observe, model.params, model.y0, h=0.001, nsteps=500,
                  stride=50, acc0=model.acc0)
    W = model.asm.wheel_x.size
    y = model.y0.copy()
    w0 = np.zeros(2 * W)
    vertical_inputs(0.0, y, model.params, w0)
    out = [y.copy()]
    for k in range(500):
        w1 = np.zeros(2 * W)
        vertical_inputs((k + 1) * 0.001, y, model.params, w1)
        y = Phi @ y + G0 @ w0 + G1 @ w1
        w0 = w1
        if (k + 1) % 50 == 0:
            out.append(y.copy())
    np.testing.assert_allclose(sol.y, np.array(out), rtol=1e-11, atol=1e-11 * np.abs(out).max())
    assert sol.stats["steps"] == 500


def test_integrator_suite_on_the_ode_form():
    """The massless nodes as first-order states make an ODE that the registered integrators solve:
    RK4 converges with order 4 and DOPRI5 at rtol 1e-10 matches the closed form to 1e-8."""
    sc = quarter("simulation.duration_s=3")
    model = build_vertical(sc)
    t_ref = np.arange(0, 3.0 + 1e-9, 0.05)
    ref = _harmonic_exact(model, 0.5e-3, 6.0, t_ref)
    errs = [errs_at(sc, model, ref, "rk4", h) for h in (2e-3, 1e-3)]
    assert 3.7 < np.log2(errs[0] / errs[1]) < 4.6
    it = sc.integrator.model_copy(update={"method": "dopri5", "rtol": 1e-10, "atol": 1e-14})
    sol = solve(model, it, 3.0, 0.05)
    assert sol.status.success and _rel(sol.y, ref) < 1e-8


def test_dae_form_with_singular_mass_matrix_reproduces_the_recurrence():
    """Hook for implicit DAE integrators: M ẏ = F(t, y) with M = diag(masses, 1, 1, 0) (the massless
    node velocities algebraic, index 1).  Implicit Euler on this DAE equals Yu et al. 2023's recurrence
    (12) on the ODE form to round-off, and on the ODE trajectory the algebraic residual vanishes."""
    sc = full("simulation.duration_s=0.5", "integrator.method=recurrence", "integrator.step_s=0.001")
    model = build_vertical(sc)
    mass, z0 = dae_form(model)
    m, n, N = model.asm.m, model.asm.n, model.n_state
    assert np.count_nonzero(mass == 0) == n and mass.size == N + n
    p = model.params

    def F(t, z):
        out = np.zeros_like(z)
        vertical_dae_rhs(t, np.ascontiguousarray(z), p, out)
        return out

    nz = z0.size
    J = np.column_stack([F(0.0, e) - F(0.0, np.zeros(nz)) for e in np.eye(nz)])
    h = 0.001
    z = z0.copy()
    Z = [z.copy()]
    for k in range(500):
        z = np.linalg.solve(np.diag(mass) - h * J, mass * z + h * F((k + 1) * h, np.zeros(nz)))
        Z.append(z.copy())
    sol = solve(model, sc.integrator, 0.5, 0.001)
    Z = np.array(Z)
    assert _rel(Z[:, :N], sol.y) < 1e-12
    f = np.zeros(N)
    y = sol.y[250].copy()
    vertical_rhs(0.25, y, p, f)
    r = F(0.25, np.concatenate([y, f[m:m + n]]))
    assert np.max(np.abs(r[N:])) < 1e-9 * np.max(np.abs(p.el_F0))
    np.testing.assert_allclose(mass[:N] * f, r[:N], atol=1e-9 * np.abs(r[:N]).max())


# ------------------------------------------------------------------------------------------------
# nonlinear Hertz contact
# ------------------------------------------------------------------------------------------------
def _hertz(*sets):
    # G chosen so that the tangent stiffness at the static load equals K_H = 8e7 N/m per wheelset
    Pw = (FM["Mc"] / 4 + FM["Mt"] / 2 + FM["Mw"]) * G / 2
    Gh = 1.5 * 2 * Pw ** (1 / 3) / FM["KH"]
    return full("vehicle.element_types.wheel_rail={kind: contact, law: hertz, hertz_constant_m_per_N2_3: %r, "
                "wheels: 2}" % Gh, "integrator.method=recurrence", *sets)


def test_hertz_contact_statics_and_small_amplitude_linearisation():
    """Hertz contact: the static loads of the statically determinate vehicle equal the linear model's,
    the state space linearised at equilibrium equals the linear-contact model, and a small input
    (0.01 mm) gives the linear response to within the nonlinearity (∝ amplitude / static compression)."""
    lin = build_vertical(full())
    her = build_vertical(_hertz())
    assert not her.linear
    np.testing.assert_allclose(her.params.el_F0, lin.params.el_F0, rtol=1e-9, atol=1e-12 * lin.params.el_F0.max())
    np.testing.assert_allclose(her.ss.A, lin.ss.A, rtol=1e-9, atol=1e-9 * np.abs(lin.ss.A).max())
    sets = ("track.irregularity.amplitude_mm=0.01", "simulation.duration_s=1", "integrator.method=recurrence",
            "integrator.step_s=0.0005")
    sl, sh = full(*sets), _hertz(*sets)
    yl = solve(build_vertical(sl), sl.integrator, 1.0, 0.01).y
    yh = solve(build_vertical(sh), sh.integrator, 1.0, 0.01).y
    assert _rel(yh, yl) < 5e-3


def test_hertz_contact_loses_contact_without_pulling():
    """At the wheelset resonance (38 Hz, almost undamped in Yu et al. 2023's parameters) a 0.5 mm input
    lifts the wheels: the Hertz wheel load reaches exactly 0 and never goes negative (tight DOPRI5)."""
    sc = _hertz("track.irregularity.amplitude_mm=0.5", "track.irregularity.frequency_rad_per_s=230",
                "simulation.duration_s=0.3", "integrator.method=dopri5", "integrator.rtol=1e-9",
                "integrator.atol=1e-12")
    model = build_vertical(sc)
    sol = solve(model, sc.integrator, 0.3, 0.005)
    assert sol.status.success
    ds = vertical_dataset(sc, model, sol)
    assert float(ds.min_wheel_load) == 0.0
    assert float(ds.max_wheel_unloading_ratio) == pytest.approx(1.0)
    assert float(ds.wheel_load.min()) == 0.0
    # the linear (bilateral) contact under the same input pulls the wheel down instead
    lin = full("track.irregularity.amplitude_mm=0.5", "track.irregularity.frequency_rad_per_s=230",
               "simulation.duration_s=0.3", "integrator.method=dopri5", "integrator.rtol=1e-9", "integrator.atol=1e-12")
    ml = build_vertical(lin)
    dl = vertical_dataset(lin, ml, solve(ml, lin.integrator, 0.3, 0.005))
    assert float(dl.min_wheel_load) < 0.0 and "lose contact" in dl.attrs["warnings"]


def _wheelset_on_hertz(method, step=None, **it):
    """A quarter vehicle with a wheelset on a Hertz contact and track damping, as an element list
    (no per-model code): a nonlinear model whose modes are all reasonably damped."""
    from hpcrail.config.loading import Document, validate
    from hpcrail.kinds.vertical.schema import VerticalScenario, check_vertical

    tree = {
        "model": "vertical", "name": "wheelset_on_hertz",
        "vehicle": {
            "body_types": {"car": {"mass_kg": 8000}, "frame": {"mass_kg": 1500}, "wheelset": {"mass_kg": 700}},
            "bodies": [{"name": "car", "type": "car"}, {"name": "frame", "type": "frame"},
                       {"name": "wheelset", "type": "wheelset"}],
            "wheels": [{"name": "w", "x_m": 0.0}],
            "element_types": {
                "ks": {"kind": "spring", "stiffness_N_per_m": 2e5},
                "cs": {"kind": "series_damper", "damping_Ns_per_m": 2e4, "joint_stiffness_N_per_m": 5e6},
                "kp": {"kind": "spring", "stiffness_N_per_m": 5e5},
                "cp": {"kind": "series_damper", "damping_Ns_per_m": 1.5e4, "joint_stiffness_N_per_m": 5e6},
                "hz": {"kind": "contact", "law": "hertz", "hertz_constant_m_per_N2_3": 4.0e-7, "wheels": 2},
                "ct": {"kind": "damper", "damping_Ns_per_m": 6e4}},
            "elements": [{"type": "ks", "top": "car", "bottom": "frame"}, {"type": "cs", "top": "car", "bottom": "frame"},
                         {"type": "kp", "top": "frame", "bottom": "wheelset"},
                         {"type": "cp", "top": "frame", "bottom": "wheelset"},
                         {"type": "hz", "top": "wheelset", "bottom": "rail@w"},
                         {"type": "ct", "top": "wheelset", "bottom": "rail@w"}]},
        "track": {"irregularity": {"kind": "harmonic", "amplitude_mm": 2.0, "frequency_rad_per_s": 40.0,
                                   "phase_rad": 0.0}},
        "simulation": {"duration_s": 1.0},
        "integrator": {"method": method, "step_s": step, **it},
        "output": {"interval_s": 0.01}}
    return validate(VerticalScenario, Document(tree=tree, root_file="(test)"), check_vertical)


def test_recurrence_is_first_order_for_a_nonlinear_hertz_model():
    """Yu et al. 2023's recurrence with the matrix factorised once at the static equilibrium is a
    linearly implicit Euler (W-method) for the Hertz contact and keeps order 1 (against a tight
    DOPRI5 solution); the large input changes the contact stiffness by tens of per cent."""
    sc = _wheelset_on_hertz("dopri5", None, rtol=1e-11, atol=1e-13)
    model = build_vertical(sc)
    ref = solve(model, sc.integrator, 1.0, 0.01)
    assert ref.status.success
    Q0 = model.params.el_F0[4]
    wmin, wmax = ref.acc[model.params.o_wmin], ref.acc[model.params.o_wmax]
    assert wmin > 0 and (wmax - wmin) / Q0 > 0.3        # strongly nonlinear, always in contact
    errs = []
    # the 100 Hz wheelset mode (ζ ≈ 0.07) needs h·ω ≪ 1 before the asymptotic order shows:
    # observed orders 0.73, 0.86, 0.93, 0.96 from h = 0.2 ms down to 12.5 µs
    for h in (5e-5, 2.5e-5, 1.25e-5):
        it = sc.integrator.model_copy(update={"method": "recurrence", "step_s": h})
        errs.append(_rel(solve(model, it, 1.0, 0.01).y, ref.y))
    orders = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    np.testing.assert_allclose(orders, 1.0, atol=0.1)
