"""Conformance of every entry of the LTD coupler-law table (hpcrail.kinds.ltd.couplers).

* Laws with an analytic Jacobian: ``ltd_jac`` equals central finite differences of ``ltd_rhs`` to 1e-6
  relative (per row, against the row's largest entry) at a state visited by an integration — on a
  route of constant grade and curvature, so that the neglected position dependence of grade and
  curvature is zero; entries outside the declared sparsity pattern are zero too.  The noninertial law
  included.
* Laws with a declared finite-difference fallback run with an implicit method on that fallback.
* Partitionable laws give the monolithic result on hidden-vehicle blocks (threads).
* The work-integral rows are outside the pattern: grouped finite differences on the pattern equal
  per-column ones (the 40 000-step TR-BDF2 case of issue 12).
"""
from __future__ import annotations

import numpy as np
import pytest
from helpers.ltd import constant_loco, frictionless_wagon, make_scenario, scenario_tree

from hpcrail.integrators import integrate
from hpcrail.kinds.ltd.couplers import LAWS

#: a connection of each law (SI-ish values of the repository's configs)
CONNECTIONS = {
    "hysteretic": {"kind": "hysteretic", "slack_mm": 10.0, "draft": {"deflection_mm": [0, 40, 80],
                   "loading_kN": [0, 400, 1500], "unloading_ratio": 0.3}, "damping_kNs_per_m": 50.0},
    "rigid_bar": {"kind": "rigid_bar", "stiffness_MN_per_m": 80.0, "damping_kNs_per_m": 100.0},
    "linear": {"kind": "linear", "stiffness_MN_per_m": 20.0, "damping_kNs_per_m": 150.0, "slack_mm": 2.0},
    "friction": {"kind": "friction", "stiffness_MN_per_m": 10.0, "static_friction_kN": 40.0, "slack_mm": 4.0},
    "noninertial": {"kind": "noninertial"},
}
CURVE = {"start_m": 300.0, "sections": [{"start_km": 0.0, "end_km": 20.0, "grade_permille": 2.0, "radius_m": 400.0}]}


def law_scenario(law: str, *extra, n_wagons: int = 5, air: bool = True):
    tree = scenario_tree(n_wagons, connection=CONNECTIONS[law], route=CURVE, duration=4.0, step=0.002,
                         loco=constant_loco(force_kN=300.0), wagon=frictionless_wagon(mass_t=60.0))
    tree["integrator"] = {"method": "trbdf2", "rtol": 1e-7, "atol": 1e-9}
    tree["simulation"]["initial_speed_kmh"] = 20.0
    # two notches and notch 1.5: the traction is smooth in the notch there (kinks at whole notches)
    tree["vehicle_types"]["loco"]["traction"]["curves"]["traction_kN"] = [[150.0, 150.0], [300.0, 300.0]]
    tree["driver"]["commands"] = [{"time_s": 0.0, "notch": 1.5}]
    if air:   # every Jacobian slot: air brake applied at t = 3.5 s (still filling at 4 s: away from its kinks)
        tree["air_brake"] = {"enabled": True}
        tree["vehicle_types"]["loco"]["brake"] = {"shoe_force_kN": 80.0}
        tree["vehicle_types"]["wagon"]["brake"] = {"shoe_force_kN": 40.0}
        tree["driver"]["commands"] = [{"time_s": 0.0, "notch": 1.5}, {"time_s": 3.5, "brake": 0.2}]
    return make_scenario(tree, list(extra))


def test_every_law_is_in_the_conformance_set():
    assert set(CONNECTIONS) == set(LAWS)
    for law in LAWS.values():
        assert law.jacobian in ("analytic", "finite_difference")
        assert law.branch in ("table", "noninertial", "friction")


@pytest.mark.parametrize("law", [k for k, v in LAWS.items() if v.jacobian == "analytic"])
def test_analytic_jacobian_equals_central_differences(law):
    from hpcrail.kinds.ltd.problem import ltd_problem
    from hpcrail.models.ltd.kernel import ltd_rhs

    sc = law_scenario(law)
    model, prob = ltd_problem(sc)
    sol = integrate(prob, sc.integrator.method, np.array([4.0]), 4.0, **sc.integrator.kwargs())
    assert sol.status.success
    t, y, p = 4.0, sol.y_final.copy(), model.params
    n = y.size
    B, N = p.block, p.n_veh
    e = y[B:B * N:B]
    gap = 0.5e-3 * CONNECTIONS[law].get("slack_mm", 0.0)
    assert np.all(np.abs(e) > gap + 1e-5), e     # every connection loaded beyond its slack
    assert np.all(y[1:B * N:B] > 1.0)            # moving: away from the standstill branch
    # the analytic Jacobian, dense
    pat = prob.jac_pattern
    vals = np.zeros(pat.rows.size)
    prob.jac(t, y, p, vals)
    ok = (pat.rows >= 0) & (pat.cols >= 0)
    J = np.zeros((n, n))
    J[pat.rows[ok], pat.cols[ok]] = vals[ok]
    # central differences, column by column
    F = np.zeros((n, n))
    fp, fm = np.empty(n), np.empty(n)
    for c in range(n):
        h = 1e-7 * max(1.0, abs(y[c]))   # a noninertial force carries its Newton tolerance (~1e-13 m)
        yp, ym = y.copy(), y.copy()
        yp[c] += h
        ym[c] -= h
        ltd_rhs(t, yp, p, fp)
        ltd_rhs(t, ym, p, fm)
        F[:, c] = (fp - fm) / (2 * h)
    rows = np.arange(n) if p.i_energy < 0 else np.arange(p.i_energy)   # work integrals: outside the pattern
    assert np.abs(F[rows][:, rows]).max() > 10.0
    for r in rows:
        scale = np.abs(F[r]).max()
        err = np.abs(J[r] - F[r]).max()
        assert err <= 1e-6 * scale + 1e-12, (law, r, err / max(scale, 1e-300), int(np.argmax(np.abs(J[r] - F[r]))))


def test_noninertial_coupler_entries_are_nonzero_and_the_newton_warm_start_does_not_matter():
    """The noninertial law's in-train force depends on the extension and the relative speed (the
    entries that were zero before issue 12), and the right-hand side does not depend on the call history
    beyond rounding (the warm start of its Newton iteration lives in the parameters)."""
    from hpcrail.kinds.ltd.problem import ltd_problem
    from hpcrail.models.ltd.kernel import ltd_rhs

    sc = law_scenario("noninertial", air=False)
    model, prob = ltd_problem(sc)
    sol = integrate(prob, sc.integrator.method, np.array([3.0]), 3.0, **sc.integrator.kwargs())
    y, p = sol.y_final.copy(), model.params
    vals = np.zeros(prob.jac_pattern.rows.size)
    prob.jac(3.0, y, p, vals)
    B = p.block
    S = 8
    assert vals[S * 1 + 4] > 0 and vals[S * 1 + 3] > 0   # (v_2, e_1) stiffness and (v_2, v_1) damping
    f1, f2 = np.empty(y.size), np.empty(y.size)
    ltd_rhs(3.0, y, p, f1)
    other = y.copy()
    other[B * 2] += 1e-3                                  # another state moves every warm start
    ltd_rhs(3.0, other, p, f2)
    ltd_rhs(3.0, y, p, f2)
    assert np.abs(f2 - f1).max() <= 1e-12 * np.abs(f1).max()


@pytest.mark.parametrize("law", [k for k, v in LAWS.items() if v.jacobian == "finite_difference"])
def test_a_finite_difference_fallback_runs_implicit_methods(law):
    """A law declaring the fallback runs with TR-BDF2 on finite differences (regularised friction:
    an ordinary ODE), and its outputs are complete."""
    from hpcrail.simulate import run_scenario

    sc = law_scenario(law, "friction.treatment=regularised", "simulation.duration_s=2", air=False)
    ds = run_scenario(sc)
    assert str(ds.status.values) == "completed", str(ds.message.values)
    assert int(ds.njev) > 0 and float(ds.friction_work) > 0


@pytest.mark.parametrize("law", [k for k, v in LAWS.items() if v.partitionable])
def test_partitionable_laws_give_the_monolithic_result_on_threads(law):
    from hpcrail.simulate import run_scenario

    over = ["integrator.method=rk4", "integrator.step_s=0.002", "simulation.duration_s=2", "partition.blocks=3"]
    a = run_scenario(law_scenario(law, *over, "partition.backend=off", n_wagons=12))
    b = run_scenario(law_scenario(law, *over, "partition.backend=threads", n_wagons=12))
    assert b.attrs["partition"].startswith("threads: 3 blocks")
    for v in ("speed", "coupler_force", "coupler_deflection", "brake_cylinder_pressure"):
        scale = np.abs(a[v].values).max()
        assert np.abs(b[v].values - a[v].values).max() <= 1e-10 * scale, (law, v)
    assert int(a.nsteps) == int(b.nsteps)


@pytest.mark.parametrize("law", [k for k, v in LAWS.items() if not v.partitionable])
def test_unpartitionable_laws_are_refused_by_the_blocks(law):
    from hpcrail.config import ConfigError

    with pytest.raises(ConfigError, match=f"uses {law} connections"):
        law_scenario(law, "partition.backend=threads")


def test_grouped_finite_differences_equal_per_column_ones_with_work_integrals():
    """The work-integral rows depend on every state; declared in the pattern (even only their zero
    diagonal) they made grouped finite differences credit a whole column group's change to the diagonal
    (760 s⁻¹ on noninertial_curve_100, TR-BDF2: 39 648 steps for 60 s instead of 1 400)."""
    from hpcrail.integrators import registry
    from hpcrail.integrators import linalg
    from hpcrail.integrators.driver import problem_spec
    from hpcrail.kinds.ltd.problem import ltd_problem
    from hpcrail.models.ltd.kernel import ltd_rhs

    sc = law_scenario("hysteretic", n_wagons=12)
    assert sc.output.energy
    model, prob = ltd_problem(sc)
    sol = integrate(prob, sc.integrator.method, np.array([4.0]), 4.0, **sc.integrator.kwargs())
    y, p, n = sol.y_final.copy(), model.params, sol.y_final.size
    spec, _ = problem_spec(prob, registry.get("trbdf2"), "finite_difference")
    f0 = np.empty(n)
    ltd_rhs(4.0, y, p, f0)
    grouped = np.zeros(prob.jac_pattern.rows.size)
    linalg.fd_values(ltd_rhs, p, 4.0, y, f0, spec, grouped, np.empty(n), np.empty(n))
    pat = prob.jac_pattern
    for k in np.flatnonzero(pat.rows >= 0):
        c = pat.cols[k]
        d = np.sqrt(2.220446049250313e-16 * max(1e-5, abs(y[c])))
        yp = y.copy()
        yp[c] += d
        fp = np.empty(n)
        ltd_rhs(4.0, yp, p, fp)
        one = (fp[pat.rows[k]] - f0[pat.rows[k]]) / (yp[c] - y[c])
        assert abs(grouped[k] - one) <= 1e-9 * max(1.0, abs(one)), (k, pat.rows[k], c, grouped[k], one)
    # and TR-BDF2 takes as many steps on finite differences as with the analytic Jacobian
    runs = {}
    for jm in ("analytic", "finite_difference"):
        kw = sc.integrator.kwargs()
        kw["jacobian"] = jm
        runs[jm] = integrate(ltd_problem(sc)[1], "trbdf2", np.array([4.0]), 4.0, **kw).stats
    assert runs["finite_difference"]["steps"] <= 1.2 * runs["analytic"]["steps"], runs


def test_the_mixed_kernel_flag_is_its_own_question():
    """``mixed`` (the mixed train's kernel evaluates the law) is a separate flag of the law table, not an
    overloaded ``partitionable``: the mixed kernel runs the table branch only, and its scenario check reads the
    flag (a consist with a friction draft gear is refused naming the laws it accepts)."""
    from hpcrail.kinds.ltd.couplers import mixed_laws

    assert set(mixed_laws()) == {k for k, law in LAWS.items() if law.branch == "table" and law.kind != "friction"}
    assert all(law.partitionable for law in LAWS.values() if law.mixed)
