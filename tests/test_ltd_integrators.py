"""The integrator suite on the LTD model: the analytic Jacobian equals finite differences, every
method runs an LTD scenario by name (``integrator.method``, as a sweep varies it), and the benchmark
metrics of train 2 agree across all methods at tight tolerances."""
import numpy as np
import pytest

from hpcrail.kinds import load_scenario
from hpcrail.integrators import integrate, registry
from hpcrail.models.ltd.jacobian import ltd_jacobian_pattern
from hpcrail.kinds.ltd.problem import ltd_problem
from hpcrail.results.sampling import sample_times
from hpcrail.simulate import run_scenario

from helpers.paths import CONFIGS


def states_along_a_run(path, T, k, overrides=()):
    sc, _ = load_scenario(CONFIGS / "trains" / path, list(overrides) + [f"simulation.duration_s={T}"])
    model, prob = ltd_problem(sc)
    t = sample_times(0.0, T, T / k)
    sol = integrate(prob, "rk4", t, T, step=0.002)
    return prob, t, sol.y


def dense_jacobian(prob, t, y):
    pat = prob.jac_pattern
    vals = np.zeros(pat.nnz)
    prob.jac(t, y, prob.params, vals)
    J = np.zeros((pat.n, pat.n))
    ok = pat.rows >= 0
    np.add.at(J, (pat.rows[ok], pat.cols[ok]), vals[ok])
    return J


def one_sided_differences(prob, t, y):
    """Forward and backward differences (the model is piecewise smooth: at a kink the analytic
    Jacobian takes the side the kernel's branch takes)."""
    n = y.size
    f0, f1, f2 = np.empty(n), np.empty(n), np.empty(n)
    prob.rhs(t, y, prob.params, f0)
    Jp, Jm = np.zeros((n, n)), np.zeros((n, n))
    for c in range(n):
        d = 1e-8 * max(1e-3, abs(y[c]))
        yp = y.copy()
        yp[c] += d
        ym = y.copy()
        ym[c] -= d
        prob.rhs(t, yp, prob.params, f1)
        prob.rhs(t, ym, prob.params, f2)
        Jp[:, c] = (f1 - f0) / d
        Jm[:, c] = (f0 - f2) / d
    return Jp, Jm


@pytest.mark.parametrize("config,T", [("demo.yaml", 300.0), ("train2.yaml", 400.0)])
def test_analytic_ltd_jacobian_equals_finite_differences(config, T):
    """demo: air brake (4 states per vehicle), traction, dynamic brake, standstill; train 2: hysteretic
    draft gears, drawbars, distributed power."""
    prob, ts, Y = states_along_a_run(config, T, 12)
    p = prob.params
    rows = np.arange(p.i_energy if p.i_energy >= 0 else prob.y0.size)   # work integrals: diagonal only
    in_pattern = np.zeros((prob.y0.size, prob.y0.size), bool)
    ok = prob.jac_pattern.rows >= 0
    in_pattern[prob.jac_pattern.rows[ok], prob.jac_pattern.cols[ok]] = True
    for t, y in zip(ts, Y):
        Ja = dense_jacobian(prob, t, y)
        Jp, Jm = one_sided_differences(prob, t, y)
        Jf = np.where(np.abs(Ja - Jp) <= np.abs(Ja - Jm), Jp, Jm)
        scale = np.abs(Jf[rows]).max(axis=1, keepdims=True) + 1e-12
        err = np.abs(Ja[rows] - Jf[rows]) / scale
        assert err.max() < 1e-4, (t, np.unravel_index(np.argmax(err), err.shape))
        # what the pattern leaves out (grade/curvature dependence on position) is negligible
        outside = np.abs(np.where(in_pattern[rows], 0.0, Jf[rows])) / scale
        assert outside.max() < 1e-3


def test_pattern_is_banded_with_the_notch_as_border():
    sc, _ = load_scenario(CONFIGS / "trains" / "train2.yaml")
    model, prob = ltd_problem(sc)
    from hpcrail.integrators.linalg import analyse

    lay = analyse(prob.jac_pattern)
    p = model.params
    assert (lay.ml, lay.mu, lay.nb) == (p.block, p.block, 1) and lay.perm[-1] == p.i_notch
    rows, cols, border = ltd_jacobian_pattern(p, prob.y0.size)
    assert rows.size == cols.size and list(border) == [p.i_notch]


ALL = registry.method_names(include_aliases=False)


@pytest.mark.parametrize("method", ALL + ["ode15s", "ode45", "radau"])
def test_every_method_runs_an_ltd_scenario_by_name(method):
    """What a sweep does: ``--set integrator.method=<name>`` on train 2 (step_s of the file is the
    fixed step or the initial step)."""
    sc, _ = load_scenario(CONFIGS / "trains" / "train2.yaml", [f"integrator.method={method}",
                                                             "simulation.duration_s=40"])
    ds = run_scenario(sc)
    assert str(ds.status.values) == "completed", ds.attrs["status_message"]
    assert ds.attrs["integrator"] == registry.canonical_name(method)
    assert np.isfinite(ds.max_draft_force.values) and float(ds.max_draft_force) > 1e5
    assert int(ds.nsteps) > 0


# tight settings per method; first-order methods over the start-up only (100 s, which holds the
# largest draft force of the whole run), the others over 400 s (start-up, notch reductions and
# increases: draft and buff)
TIGHT = [
    ("rk4", 400, dict(step=0.0005)),   # the draft-gear bars (zero slack) need 0.5 ms: 2 ms gives +18 %
    ("abm4", 400, dict(step=0.0005)),
    ("dopri5", 400, dict(rtol=1e-7)),
    ("bdf", 400, dict(rtol=1e-7)),
    ("bdf2", 400, dict(rtol=1e-6)),
    ("ndf", 400, dict(rtol=1e-7)),
    ("radau5", 400, dict(rtol=1e-7)),
    ("trbdf2", 400, dict(rtol=1e-6)),
    ("esdirk3", 400, dict(rtol=1e-6)),
    ("trapezoidal", 400, dict(step=0.002)),
    ("implicit_euler", 100, dict(step=0.0005)),
    ("linear_implicit_euler", 100, dict(step=0.0005, options={"jacobian_every": 5})),
]
METRICS = ["max_speed", "mean_speed", "max_draft_force", "max_buff_force", "mean_max_draft_force",
           "mean_max_buff_force"]


@pytest.fixture(scope="module")
def train2_references():
    out = {}
    for T in (100, 400):
        # RK4 at 1 ms, as the test below says (the file's own method is what is being compared)
        sc, _ = load_scenario(CONFIGS / "trains" / "train2.yaml", [f"simulation.duration_s={T}",
                                                                 "integrator.method=rk4", "integrator.step_s=0.001"])
        out[T] = run_scenario(sc)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("method,T,kw", TIGHT, ids=[m for m, _, _ in TIGHT])
def test_train2_metrics_agree_across_methods(method, T, kw, train2_references):
    """The benchmark metrics of Bosso et al. 2024 Table 1 on train 2 agree within 0.5 % with RK4 at 1 ms."""
    ref = train2_references[T]
    sets = [f"integrator.method={method}", f"simulation.duration_s={T}"]
    for k, v in kw.items():
        if k == "step":
            sets.append(f"integrator.step_s={v}")
        elif k == "rtol":
            sets += [f"integrator.rtol={v}", "integrator.step_s=0.001"]
        else:
            sets += [f"integrator.options.{name}={val}" for name, val in v.items()]
    sc, _ = load_scenario(CONFIGS / "trains" / "train2.yaml", sets)
    ds = run_scenario(sc)
    assert str(ds.status.values) == "completed"
    for name in METRICS:
        a, b = float(ds[name]), float(ref[name])
        assert a == pytest.approx(b, rel=5e-3), (name, a, b)
    assert int(ds.max_draft_force_coupler) == int(ref.max_draft_force_coupler)
