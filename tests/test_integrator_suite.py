"""Every integrator of the suite against analytic solutions and stiff references: observed orders of
convergence, Robertson (ODE and index-1 DAE), van der Pol μ = 1e3 and a stiff linear chain against
scipy / the matrix exponential, the paper-001 recurrence, failure statuses and the contract
(chunking, aliases, options, mass matrices)."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from hpcrail.config.integrator import METHODS, block_methods
from hpcrail.integrators import Problem, Status, integrate, registry
from hpcrail.integrators import testproblems as tp

# every list of methods below comes from the catalogue: a new method is tested here without editing this file
OURS = [m for m, s in METHODS.items() if not s.external]
FIXED = [m for m in OURS if not METHODS[m].adaptive]
ADAPTIVE = [m for m in OURS if METHODS[m].adaptive]
ADAPTIVE_IMPLICIT = [m for m in ADAPTIVE if METHODS[m].implicit]


def low_order(method):
    """Order ≤ 2 (or capped there): looser tolerances keep the step counts of the stiff tests moderate."""
    return METHODS[method].order <= 2
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
@pytest.mark.parametrize("method", FIXED)
def test_fixed_step_orders(method):
    order = METHODS[method].order
    hs = np.array([0.04, 0.02, 0.01, 0.005])
    if order == 1:
        hs = hs / 4
    errs = [osc_err(integrate(tp.oscillator(), method, TOUT, T_OSC, step=h, rtol=1e-12, atol=1e-14)) for h in hs]
    assert slope(hs, errs) == pytest.approx(order, abs=0.15)


@pytest.mark.parametrize("method", ADAPTIVE_IMPLICIT)
def test_adaptive_implicit_orders_at_fixed_steps(method):
    """Tolerances too loose to reject and hmax = h: every step is taken at exactly h; the Newton
    tolerance is set tight so that the observed error is the method's truncation error (variable-order
    methods capped at order 1: their start-up order)."""
    variable = "max_order" in METHODS[method].options
    order, opts = (1, {"max_order": 1}) if variable else (METHODS[method].order, {})
    hs = np.array([0.1, 0.05, 0.025, 0.0125]) if order > 2 else np.array([0.02, 0.01, 0.005, 0.0025])
    errs = []
    for h in hs:
        sol = integrate(tp.oscillator(), method, TOUT, T_OSC, step=h, hmax=h, rtol=0.5, atol=1e3,
                        options=dict(opts, newton_tol=1e-13))
        assert sol.stats["rejected"] == 0
        errs.append(osc_err(sol))
    assert slope(hs, errs) == pytest.approx(order, abs=0.2)


@pytest.mark.parametrize("method,opts", [(m, {}) for m in ADAPTIVE] + [("ndf", {"max_order": 2})])
def test_adaptive_work_precision(method, opts):
    """Error against the number of steps at tightening tolerances: slope −p for an order-p method, p ≤ 3
    within [p − 0.4, p + 0.6]; methods of order 4-5 (and the variable-order BDF/NDF, reaching orders 3-5 at
    tight tolerances) within [3, 6]."""
    p = opts.get("max_order", METHODS[method].order)
    min_order, max_order = (p - 0.4, p + 0.6) if p <= 3 else (3.0, 6.0)
    low = p <= 3
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
    tol = 1e-7 if not low_order(method) else 1e-6
    sol = integrate(tp.robertson(), method, t, t[-1], rtol=tol, atol=1e-6 * tol)
    assert sol.success
    rel = np.abs(sol.y - ref).max(axis=0) / np.abs(ref).max(axis=0)
    assert rel.max() < (2e-5 if not low_order(method) else 2e-4), rel
    assert sol.stats["steps"] < 3000


@pytest.mark.parametrize("method", [m for m in ADAPTIVE if METHODS[m].dae])
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
    tol = 1e-8 if not low_order(method) else 1e-7
    sol = integrate(prob, method, t, T, rtol=tol, atol=tol)
    assert sol.success
    # y1 jumps between ±2 on relaxation fronts: compare the phase through the sampled values
    assert np.max(np.abs(sol.y[:, 0] - ref.y[0])) < 2e-3
    assert sol.stats["steps"] < (40_000 if not low_order(method) else 120_000)


@pytest.mark.parametrize("method", ADAPTIVE_IMPLICIT + [m for m in FIXED if METHODS[m].implicit
                                                         and m != "linear_implicit_euler"])
def test_stiff_linear_chain_against_matrix_exponential(method):
    N, k, c, m, F = 20, 1e6, 1e5, 1e3, 1e4
    T = 2.0
    t = np.linspace(0, T, 9)
    ex = tp.chain_exact(t, N, k, c, m, F)
    kw = dict(step=1e-4) if not METHODS[method].adaptive else {}
    sol = integrate(tp.linear_chain(N, k, c, m, F), method, t, T, rtol=1e-7, atol=1e-10, **kw)
    assert sol.success
    spec = METHODS[method]
    # order 1: 2e-3; a 2nd-order adaptive method at rtol 1e-7 (bdf2: 1.6e-5 measured): 3e-5; else 1e-5
    tol = 2e-3 if spec.order == 1 else (3e-5 if spec.order == 2 and spec.adaptive else 1e-5)
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
@pytest.mark.parametrize("method", ADAPTIVE)
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
@pytest.mark.parametrize("method", OURS)
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


# ---- every method that runs on blocks (catalogue: blocks=True) on 1-3 blocks and 1-3 threads ------------------
BLOCK_LAYOUTS = [(1, 1), (2, 2), (3, 1), (3, 2), (3, 3)]   # (blocks, worker threads)


@pytest.mark.parametrize("method", block_methods())
def test_blocks_reproduce_the_serial_method(method):
    """The stiff linear chain (12 masses) split into 1, 2 or 3 blocks on 1-3 threads (distributed state: every
    thread integrates its own blocks with the method's one kernel; the neighbour exchange is in the model):

    * the same blocks give bitwise the same results on any number of threads (every global number is a sum of
      per-block partial sums in block order);
    * fixed-step explicit methods do the serial arithmetic per state: bitwise the serial run on any blocks, and
      so does an adaptive explicit method on one block;
    * otherwise (error norms summed per block, the partitioned LU instead of the band LU) the results agree
      with the serial run within 1e-7 of the largest state (tolerances 1e-9), with the same number of steps
      within 2 %."""
    spec = METHODS[method]
    T = 0.2
    t = np.linspace(0.0, T, 5)
    kw = dict(rtol=1e-9, atol=1e-11) if spec.adaptive else dict(step=1e-3, rtol=1e-9, atol=1e-11)
    ref = integrate(tp.linear_chain(N=12), method, t, T, **kw)
    assert ref.success
    scale = np.abs(ref.y).max()
    runs = {}
    for P, W in BLOCK_LAYOUTS:
        sol = integrate(tp.blocked_chain(N=12, blocks=P, workers=W), method, t, T, **kw)
        assert sol.success, (P, W, sol.message)
        runs[P, W] = sol
        if not spec.implicit and (not spec.adaptive or P == 1):
            np.testing.assert_array_equal(sol.y, ref.y, err_msg=f"{P} blocks on {W} threads")
            assert sol.stats["steps"] == ref.stats["steps"]
        else:
            assert np.abs(sol.y - ref.y).max() <= 1e-7 * scale, (P, W, np.abs(sol.y - ref.y).max() / scale)
            assert abs(sol.stats["steps"] - ref.stats["steps"]) <= 0.02 * ref.stats["steps"] + 1
        assert sol.acc[0] == sol.stats["steps"] + 1     # the collective observer: every accepted step and t0
    for P, W in BLOCK_LAYOUTS:
        same = runs[P, 1] if (P, 1) in runs else runs[P, W]
        np.testing.assert_array_equal(runs[P, W].y, same.y, err_msg=f"{P} blocks: threads change the bits")
        np.testing.assert_array_equal(runs[P, W].y_final, same.y_final)


def test_every_place_that_lists_methods_agrees_with_the_catalogue(configs_dir):
    """One catalogue (hpcrail/config/integrator.py): the config's allowed values, the registry, ``hpcrail
    integrators``, the partition's distributed-state choice and the vertical kind's solver names derive from it."""
    import os
    import subprocess
    import sys

    from hpcrail.config import ConfigError
    from hpcrail.config.integrator import ALIASES, STATE_SPACE_SOLVERS, method_names
    from hpcrail.kinds import load_scenario
    from hpcrail.kinds.vertical.schema import STATE_SPACE_METHODS

    assert registry.method_names() == method_names() == sorted(set(METHODS) | set(ALIASES))
    for name, spec in METHODS.items():
        info = registry.get(name)
        assert (info.adaptive, info.implicit, info.order) == (spec.adaptive, spec.implicit, spec.order), name
        assert (info.kernel is None) == bool(spec.external), name
        assert registry.spec_of(name) is spec
        for a in spec.aliases:
            assert registry.canonical_name(a) == name
    assert registry.block_methods() == block_methods() == [m for m, s in METHODS.items() if s.blocks]
    assert all(not METHODS[m].external for m in block_methods())
    with pytest.raises(ConfigError) as ei:
        load_scenario(configs_dir / "trains/demo.yaml", ["integrator.method=no_such_method"])
    allowed = str(ei.value).split("allowed: ")[1].split(", ")
    assert [a.strip() for a in allowed] == method_names()
    out = subprocess.run([sys.executable, "-m", "hpcrail", "integrators"], capture_output=True, text=True, check=True,
                         env=dict(os.environ, COLUMNS="400", PYTHONPATH=os.pathsep.join(sys.path))).stdout
    for name, spec in METHODS.items():
        row = next(ln for ln in out.splitlines() if ln.strip("│ ").startswith(name + " "))
        assert ("blocks" in row) == spec.blocks, (name, row)
    assert STATE_SPACE_METHODS is STATE_SPACE_SOLVERS
