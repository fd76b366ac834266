"""Every integrator of the suite against analytic solutions and stiff references: observed orders of
convergence, Robertson (ODE and index-1 DAE), van der Pol μ = 1e3 and a stiff linear chain against
scipy / the matrix exponential, the paper-001 recurrence, failure statuses and the contract
(chunking, aliases, options, mass matrices)."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from hpcrail.integrators import Problem, Status, integrate, registry
from hpcrail.integrators import testproblems as tp

FIXED = ["rk4", "abm4", "implicit_euler", "trapezoidal", "linear_implicit_euler"]
ADAPTIVE_IMPLICIT = ["bdf", "ndf", "radau5", "trbdf2", "esdirk3"]
T_OSC = 6.0
TOUT = np.linspace(0.0, T_OSC, 13)


def osc_err(sol):
    return np.max(np.abs(sol.y - tp.oscillator_exact(TOUT)))


def slope(x, y):
    return np.polyfit(np.log(x), np.log(y), 1)[0]


def wrap(prob):
    """A Python callable for scipy from the problem's numba RHS."""
    def fun(t, y):
        out = np.empty_like(y)
        prob.rhs(t, np.ascontiguousarray(y), prob.params, out)
        return out
    return fun


# ---- observed orders ---------------------------------------------------------------------------
@pytest.mark.parametrize("method,order", [("rk4", 4), ("abm4", 4), ("implicit_euler", 1), ("trapezoidal", 2),
                                          ("linear_implicit_euler", 1)])
def test_fixed_step_orders(method, order):
    hs = np.array([0.04, 0.02, 0.01, 0.005])
    if method == "implicit_euler" or method == "linear_implicit_euler":
        hs = hs / 4
    errs = [osc_err(integrate(tp.oscillator(), method, TOUT, T_OSC, step=h, rtol=1e-12, atol=1e-14)) for h in hs]
    assert slope(hs, errs) == pytest.approx(order, abs=0.15)


@pytest.mark.parametrize("method,order,opts", [
    ("radau5", 5, {}), ("trbdf2", 2, {}), ("esdirk3", 3, {}), ("bdf", 1, {"max_order": 1}),
    ("ndf", 1, {"max_order": 1})])
def test_adaptive_implicit_orders_at_fixed_steps(method, order, opts):
    """Tolerances too loose to reject and hmax = h: every step is taken at exactly h; the Newton
    tolerance is set tight so that the observed error is the method's truncation error."""
    hs = np.array([0.1, 0.05, 0.025, 0.0125]) if order > 2 else np.array([0.02, 0.01, 0.005, 0.0025])
    errs = []
    for h in hs:
        sol = integrate(tp.oscillator(), method, TOUT, T_OSC, step=h, hmax=h, rtol=0.5, atol=1e3,
                        options=dict(opts, newton_tol=1e-13))
        assert sol.stats["rejected"] == 0
        errs.append(osc_err(sol))
    assert slope(hs, errs) == pytest.approx(order, abs=0.2)


@pytest.mark.parametrize("method,min_order,max_order,opts", [
    ("dopri5", 4.0, 6.0, {}), ("radau5", 3.5, 6.0, {}), ("bdf", 3.0, 6.0, {}), ("ndf", 3.0, 6.0, {}),
    ("bdf", 1.7, 2.5, {"max_order": 2}), ("ndf", 1.7, 2.5, {"max_order": 2}), ("trbdf2", 1.6, 2.5, {}),
    ("esdirk3", 2.6, 3.6, {})])
def test_adaptive_work_precision(method, min_order, max_order, opts):
    """Error against the number of steps at tightening tolerances: slope −p for an order-p method
    (variable-order BDF/NDF reach orders 3-5 at tight tolerances; capped at 2 they show order 2)."""
    low = method in ("trbdf2", "esdirk3") or opts
    tols = [1e-5, 1e-7, 1e-9] if not low else [1e-5, 1e-6, 1e-7]
    steps, errs = [], []
    for tol in tols:
        sol = integrate(tp.oscillator(), method, TOUT, T_OSC, rtol=tol, atol=tol, options=opts)
        assert sol.success
        steps.append(sol.stats["steps"])
        errs.append(osc_err(sol))
    assert errs[-1] < errs[0]
    assert min_order < -slope(steps, errs) < max_order


def test_state_space_recurrence_is_implicit_euler_on_a_linear_system():
    """Yu et al. 2023 eq (12) factorises once and matches implicit Euler (Newton) to round-off on a
    linear chain, with one RHS evaluation per step and a single LU."""
    T, h = 0.2, 0.002
    t = np.linspace(0, T, 11)
    a = integrate(tp.linear_chain(N=10), "linear_implicit_euler", t, T, step=h)
    b = integrate(tp.linear_chain(N=10), "implicit_euler", t, T, step=h, rtol=1e-13, atol=1e-15)
    assert a.stats["nlu"] == 1 and a.stats["njev"] == 1 and a.stats["nfev"] == a.stats["steps"] + 1
    np.testing.assert_allclose(a.y, b.y, rtol=1e-9, atol=1e-12)
    # and it is a consistent (first-order) approximation of the exact solution
    ex = tp.chain_exact(t, 10, 1e6, 1e5, 1e3, 1e4)
    assert np.max(np.abs(a.y - ex)) < 0.02 * np.max(np.abs(ex))


# ---- stiff references --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def robertson_ref():
    prob = tp.robertson()
    t = np.array([0.0, 0.4, 4.0, 40.0, 400.0, 4e3, 4e4])
    ref = solve_ivp(wrap(prob), (0, t[-1]), prob.y0, method="Radau", rtol=1e-12,
                    atol=1e-18 * np.array([1, 1e-4, 1]), t_eval=t)
    return t, ref.y.T


@pytest.mark.parametrize("method", ADAPTIVE_IMPLICIT)
def test_robertson_against_scipy(method, robertson_ref):
    t, ref = robertson_ref
    tol = 1e-7 if method != "trbdf2" else 1e-6
    sol = integrate(tp.robertson(), method, t, t[-1], rtol=tol, atol=1e-6 * tol)
    assert sol.success
    rel = np.abs(sol.y - ref).max(axis=0) / np.abs(ref).max(axis=0)
    assert rel.max() < (2e-5 if method != "trbdf2" else 2e-4), rel
    assert sol.stats["steps"] < 3000


@pytest.mark.parametrize("method", ["bdf", "ndf", "radau5", "trbdf2", "esdirk3"])
def test_robertson_index1_dae(method, robertson_ref):
    """M = diag(1, 1, 0), algebraic y1 + y2 + y3 = 1: same solution as the ODE, constraint exact."""
    t, ref = robertson_ref
    sol = integrate(tp.robertson(dae=True), method, t, t[-1], rtol=1e-7, atol=1e-13)
    assert sol.success
    np.testing.assert_allclose(sol.y.sum(axis=1), 1.0, atol=1e-10)
    rel = np.abs(sol.y - ref).max(axis=0) / np.abs(ref).max(axis=0)
    assert rel.max() < 2e-4, rel


@pytest.mark.parametrize("method", ADAPTIVE_IMPLICIT)
def test_van_der_pol_mu_1000(method):
    prob = tp.van_der_pol(1e3)
    T = 3000.0
    t = np.linspace(0, T, 7)
    ref = solve_ivp(wrap(prob), (0, T), prob.y0, method="Radau", rtol=1e-11, atol=1e-11, t_eval=t)
    tol = 1e-8 if method != "trbdf2" else 1e-7
    sol = integrate(prob, method, t, T, rtol=tol, atol=tol)
    assert sol.success
    # y1 jumps between ±2 on relaxation fronts: compare the phase through the sampled values
    assert np.max(np.abs(sol.y[:, 0] - ref.y[0])) < 2e-3
    assert sol.stats["steps"] < 40_000


@pytest.mark.parametrize("method", ADAPTIVE_IMPLICIT + ["implicit_euler", "trapezoidal"])
def test_stiff_linear_chain_against_matrix_exponential(method):
    N, k, c, m, F = 20, 1e6, 1e5, 1e3, 1e4
    T = 2.0
    t = np.linspace(0, T, 9)
    ex = tp.chain_exact(t, N, k, c, m, F)
    kw = dict(step=1e-4) if method in ("implicit_euler", "trapezoidal") else {}
    sol = integrate(tp.linear_chain(N, k, c, m, F), method, t, T, rtol=1e-7, atol=1e-10, **kw)
    assert sol.success
    tol = {"implicit_euler": 2e-3, "trapezoidal": 1e-5}.get(method, 1e-5)
    assert np.max(np.abs(sol.y - ex)) < tol * np.max(np.abs(ex))
    # block-tridiagonal Jacobian: analytic, banded storage (no dense LU)
    assert sol.stats["njev"] >= 1


def test_finite_difference_and_dense_jacobians_agree_with_the_analytic_one():
    t = np.linspace(0, 1.0, 5)
    runs = {mode: integrate(tp.linear_chain(N=15), "ndf", t, 1.0, rtol=1e-8, atol=1e-11, jacobian=mode)
            for mode in ("analytic", "finite_difference", "dense")}
    ex = tp.chain_exact(t, 15, 1e6, 1e5, 1e3, 1e4)
    for mode, sol in runs.items():
        assert np.max(np.abs(sol.y - ex)) < 1e-5 * np.max(np.abs(ex)), mode
    # FD over 7 column groups vs 30 columns for the dense pattern
    fd, dense = runs["finite_difference"], runs["dense"]
    assert fd.stats["nfev"] - fd.stats["newton_iterations"] < dense.stats["nfev"] - dense.stats["newton_iterations"]


def test_generic_sparse_path_finds_the_band_of_a_scrambled_chain():
    """A model that is not written as a chain: reverse Cuthill-McKee recovers a narrow band,
    finite differences need only a handful of column groups, and the solution is the chain's."""
    from hpcrail.integrators.linalg import analyse

    N = 20
    prob, perm = tp.scrambled_chain(N)
    lay = analyse(prob.jac_pattern)
    assert lay.ml + lay.mu <= 8 and lay.nb == 0 and lay.ngroups <= 12
    t = np.linspace(0, 1.0, 5)
    sol = integrate(prob, "radau5", t, 1.0, rtol=1e-8, atol=1e-11)
    ex = tp.chain_exact(t, N, 1e6, 1e5, 1e3, 1e4)
    assert np.max(np.abs(sol.y - ex[:, perm])) < 1e-6 * np.max(np.abs(ex))


# ---- failures are statuses ---------------------------------------------------------------------
@pytest.mark.parametrize("method", ADAPTIVE_IMPLICIT + ["dopri5"])
def test_blow_up_is_a_status_not_an_exception(method):
    sol = integrate(tp.blowup(1.0), method, np.array([0.0, 2.0]), 2.0, rtol=1e-6, atol=1e-9, max_steps=20_000)
    assert not sol.success
    assert sol.status in (Status.STEP_UNDERFLOW, Status.NON_FINITE, Status.NEWTON_FAILURE)
    assert 0.99 < sol.t_reached < 1.01
    assert np.isnan(sol.y[-1]).all()


@pytest.mark.parametrize("method", ["implicit_euler", "trapezoidal"])
def test_newton_failure_is_a_status(method):
    """y' = −sign(y): near y = 0 the implicit equation has no solution for any step above hmin."""
    sol = integrate(tp.relay(), method, np.array([0.0, 3.0]), 3.0, step=0.3, hmin=1e-3, max_steps=10_000)
    assert sol.status is Status.NEWTON_FAILURE
    assert 0.9 < sol.t_reached < 1.0 + 1e-9
    assert sol.stats["newton_failures"] > 0


def test_max_steps_is_a_status_for_implicit_methods():
    sol = integrate(tp.van_der_pol(), "radau5", np.array([0.0, 3000.0]), 3000.0, rtol=1e-8, max_steps=50)
    assert sol.status is Status.MAX_STEPS and sol.stats["steps"] + sol.stats["rejected"] == 50


# ---- contract ----------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["abm4", "dopri5", "bdf", "radau5", "trbdf2", "implicit_euler",
                                    "linear_implicit_euler"])
def test_chunking_and_sampling_do_not_change_the_steps(method):
    kw = dict(step=0.01) if not registry.get(method).adaptive else {}
    a = integrate(tp.van_der_pol(10.0), method, np.linspace(0, 20, 3), 20.0, rtol=1e-6, n_chunks=1, **kw)
    b = integrate(tp.van_der_pol(10.0), method, np.linspace(0, 20, 41), 20.0, rtol=1e-6, n_chunks=37, **kw)
    assert a.stats == b.stats
    np.testing.assert_array_equal(a.y_final, b.y_final)
    assert a.acc[0] == a.stats["steps"] + 1      # observe: every accepted step and t0
    np.testing.assert_array_equal(a.y[-1], b.y[-1])


def test_registry_names_aliases_and_options():
    assert registry.canonical_name("ode15s") == "ndf"
    assert registry.canonical_name("ODE45") == "dopri5"
    assert registry.canonical_name("radau") == "radau5"
    assert registry.canonical_name("ode23tb") == "trbdf2"
    assert registry.canonical_name("state_space_euler") == "linear_implicit_euler"
    assert registry.get("bdf").kernel is registry.get("ndf").kernel   # one compilation for both
    with pytest.raises(ValueError, match="'bdf' has no option 'order'; allowed: .*max_order"):
        integrate(tp.oscillator(), "bdf", TOUT, T_OSC, options={"order": 2})
    with pytest.raises(ValueError, match="outside"):
        integrate(tp.oscillator(), "bdf", TOUT, T_OSC, options={"max_order": 7})
    with pytest.raises(ValueError, match="explicit"):
        integrate(tp.robertson(dae=True), "dopri5", TOUT, T_OSC)
    with pytest.raises(ValueError, match="analytic"):
        integrate(tp.relay(), "bdf", TOUT, T_OSC, jacobian="analytic")


def test_abm4_extra_corrector_iterations_cost_one_evaluation_each():
    a = integrate(tp.oscillator(), "abm4", TOUT, T_OSC, step=0.01)
    b = integrate(tp.oscillator(), "abm4", TOUT, T_OSC, step=0.01, options={"corrector_iterations": 3})
    steps = a.stats["steps"]
    assert b.stats["nfev"] - a.stats["nfev"] == 2 * (steps - 3)   # RK4 start-up: 3 steps
    assert osc_err(b) < 2 * osc_err(a)


def test_mass_matrix_scales_the_ode():
    """M y' = f with a regular diagonal M equals y' = M⁻¹ f."""
    m = np.array([2.0, 0.5])
    p1 = tp.oscillator()
    p2 = Problem(p1.rhs, p1.observe, p1.params, p1.y0, jac=p1.jac, jac_pattern=p1.jac_pattern, mass=m,
                 acc0=p1.acc0)
    sol = integrate(p2, "radau5", TOUT, T_OSC, rtol=1e-9, atol=1e-12)
    # y1' = y2/2, y2' = -2 y1: ω = 1, amplitude ratio 2
    ex = np.stack([np.cos(TOUT), -2.0 * np.sin(TOUT)], axis=-1)
    np.testing.assert_allclose(sol.y, ex, atol=1e-6)
