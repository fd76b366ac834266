"""Structured Jacobians of the railway vehicle and of the mixed train (issue 27).

* the railway vehicle's structured Jacobian (:func:`~hpcrail.models.vehicle.jacobian.vehicle_jac`: analytic
  suspension and rigid-body columns, wheelset columns by finite differences restricted to the wheelset) equals
  central finite differences of the whole right-hand side at states visited by the Manchester wagon on the
  irregular R = 500 m track (tangent, transition, curve with flange contact), KEC and LUT contact, to 1e-4 of
  each row's largest entry;
* the mixed train's pattern (the consist's band, each detailed vehicle a local block, the coupler border) holds
  every dependency: column-by-column finite differences of the whole right-hand side are exactly zero outside it,
  and the integrators' grouped finite differences equal the column-by-column ones inside it; the vehicle's
  fill stays inside the consist's band;
* an implicit method on the mixed train (TR-BDF2 with that Jacobian) agrees with RK4 on the short consist in
  a curve.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hpcrail.integrators.linalg import JacobianPattern, analyse, build_spec, fd_values
from hpcrail.kinds import load_scenario
from hpcrail.kinds.mixed_train import run as R
from hpcrail.kinds.mixed_train.build import build_mixed
from hpcrail.kinds.railway_vehicle.build import build_railway_vehicle
from hpcrail.kinds.railway_vehicle.run import solve as rv_solve
from hpcrail.models.ltd.jacobian import ltd_jacobian_pattern
from hpcrail.models.mixed.kernel import mixed_rhs
from hpcrail.models.vehicle.jacobian import jac_work_size, vehicle_jac, vehicle_pattern
from hpcrail.models.vehicle.kernel import diag_size, vehicle_outputs, vehicle_rhs
from hpcrail.models.vehicle.layout import D_BODY, D_WHEEL, DW_FLANGE, R_Y, S_POS, S_VEL

ROOT = Path(__file__).resolve().parents[1]
IRREGULAR = ROOT / "configs/wheelrail/manchester_R500_irregular.yaml"
SHORT = ROOT / "configs/mixed/short_consist_curve.yaml"
TRAIN4 = ROOT / "configs/mixed/train4_empty_wagon.yaml"


def central_fd(f, y, rel=1e-6, floor=1e-3):
    """Column-by-column central differences of ``f`` at ``y`` (increment rel·max(floor, |y_c|))."""
    n = y.size
    J = np.zeros((n, n))
    for c in range(n):
        h = rel * max(floor, abs(y[c]))
        yp = y.copy()
        ym = y.copy()
        yp[c] += h
        ym[c] -= h
        J[:, c] = (f(yp) - f(ym)) / (yp[c] - ym[c])
    return J


VEHICLE_RTOL = 1e-4      # entry error relative to the largest entry of its row (see the test's docstring)


@pytest.mark.parametrize("contact", ["kec", "lut"])
def test_vehicle_jacobian_equals_finite_differences_on_visited_states(contact):
    """Manchester wagon, irregular track, 12 s (ABM4 1 ms: tangent, transition at 100-150 m, curve with a wheel
    in flange contact for KEC): at four visited states every column of the structured Jacobian but s equals central
    finite differences of the whole right-hand side to VEHICLE_RTOL = 1e-4 of the largest entry of its row
    (measured ≤ 3.7e-5; the reference itself moves by up to 9e-5 between increments 1e-5 and 1e-6 of |y|:
    the contact is only piecewise smooth, so the issue's 1e-6 is not measurable this way), and it has no entry
    outside :func:`vehicle_pattern`.  The s column (track geometry, irregularities: piecewise in s) is finite
    differences in both and not compared."""
    sc, _ = load_scenario(IRREGULAR, ["simulation.duration_s=12", f"contact.method={contact}"])
    model = build_railway_vehicle(sc)
    P = model.params
    sol = rv_solve(sc, model)
    assert sol.status.name == "COMPLETED"
    n = P.n_state
    rows, cols = vehicle_pattern(P)
    inside = np.zeros((n, n), bool)
    inside[rows, cols] = True
    work = np.zeros(jac_work_size(P))

    def f(y):
        d = np.zeros(n)
        vehicle_rhs(0.0, y, P, d)
        return d

    ts = (3.0, 6.5, 9.0, 11.5)
    k = np.searchsorted(sol.t, ts)
    Y = np.ascontiguousarray(sol.y[k])
    D = np.zeros((len(ts), diag_size(P)))
    vehicle_outputs(np.asarray(ts), Y, P, D, np.zeros_like(Y))
    fl = D[:, P.n_body * D_BODY:P.n_body * D_BODY + 2 * P.n_ws * D_WHEEL].reshape(len(ts), -1, D_WHEEL)[:, :, DW_FLANGE]
    if contact == "kec":            # a state with a wheel in flange contact is among those checked (the LUT's
        assert fl.max() == 1.0      # flange flag is not raised at these four states)
    for t, y in zip(ts, Y):
        J = np.zeros((n, n))
        vehicle_jac(t, y, P, np.zeros(0), J, work)
        Jf = central_fd(f, y)
        scale = np.max(np.abs(Jf), axis=1, keepdims=True) + 1e-300
        err = (np.abs(J - Jf) / scale)[:, S_POS + 1:]
        assert err.max() <= VEHICLE_RTOL, (t, np.unravel_index(np.argmax(err), err.shape), err.max())
        assert np.all(J[~inside] == 0.0)
        assert np.all(np.abs(Jf[~inside]) <= 1e-9 * np.broadcast_to(scale, Jf.shape)[~inside])


@pytest.mark.xdist_group("mixed_train")
def test_mixed_train_pattern_holds_every_dependency_and_groups_are_exact():
    """Short consist with the detailed wagon in a curve, state after 1 s (RK4): in the wagon's rows and columns and
    its LTD speed row, column-by-column forward differences of the whole mixed right-hand side are exactly 0
    outside the pattern, and the grouped differences of the implicit methods (one right-hand side per group)
    equal them inside it to 1e-9 of the row's largest entry.
    On train 4 (pattern analysis only) the groups number about the wagon's states (not the train's), and
    eliminating the wagon's block keeps the consist's band widths."""
    sc, _ = load_scenario(SHORT, ["simulation.duration_s=1"])
    model = build_mixed(sc)
    sol, _lay = R.solve(sc, model, backend="off")
    assert sol.status.name == "COMPLETED"
    P = model.params
    y = np.ascontiguousarray(sol.y[-1])
    n = y.size
    pat = R.jacobian_pattern(model)
    lay = analyse(pat)
    n_ltd = int(P.det_off[0])
    # train 4 (243 vehicles, the wagon at 124): the groups number about the wagon's states, not the train's,
    # and eliminating the wagon's block keeps the consist's band (the short consist's 13 LTD states are dense)
    sc4, _ = load_scenario(TRAIN4, [])
    m4 = build_mixed(sc4)
    lay4 = analyse(R.jacobian_pattern(m4))
    P4 = m4.params
    assert lay4.ngroups <= P4.vehs[0].n_state + 3 * P4.ltd.block + lay4.nb, (lay4.ngroups, m4.y0.size)
    n4 = int(P4.det_off[0])
    lr, lc, lb = ltd_jacobian_pattern(P4.ltd, n4)
    ltd_lay = analyse(JacobianPattern.sparse(n4, lr, lc, border=lb, ordering="natural"))
    assert (lay4.ml, lay4.mu, lay4.nb) == (ltd_lay.ml, ltd_lay.mu, ltd_lay.nb)

    f0 = np.zeros(n)
    mixed_rhs(0.0, y, P, f0)
    Jf = np.zeros((n, n))
    for c in range(n):                      # the integrators' increment, column by column
        yp = y.copy()
        yp[c] = y[c] + np.sqrt(2.220446049250313e-16 * max(1e-5, abs(y[c])))
        f1 = np.zeros(n)
        mixed_rhs(0.0, yp, P, f1)
        Jf[:, c] = (f1 - f0) / (yp[c] - y[c])
    inside = np.zeros((n, n), bool)
    inside[pat.rows, pat.cols] = True
    # what this pattern adds to the LTD kind's: the wagon's rows and columns and its LTD speed row (the LTD part
    # is the ltd kind's pattern, which leaves out the weak dependence of the route resistance on the positions,
    # as its analytic Jacobian does)
    j = sc.detailed[0].position - 1
    new = np.zeros((n, n), bool)
    new[n_ltd:, :] = True
    new[:, n_ltd:] = True
    new[P.ltd.block * j + 1, :] = True
    out = new & ~inside
    assert np.all(Jf[out] == 0.0), np.argwhere(out & (Jf != 0.0))[:5]
    spec = build_spec(lay, pat, False, True)
    vals = np.zeros(pat.nnz)
    nf = fd_values(mixed_rhs, P, 0.0, y, f0, spec, vals, np.empty(n), np.empty(n))
    assert nf == lay.ngroups
    G = np.zeros((n, n))
    G[pat.rows, pat.cols] = vals
    # the integrator's increment is applied as y + δ; the column loop above divides by the same rounded δ
    scale = np.max(np.abs(Jf), axis=1, keepdims=True) + 1e-300
    assert np.max((np.abs(G - Jf * inside) / scale)[new]) <= 1e-9


@pytest.mark.xdist_group("mixed_train")
def test_implicit_mixed_train_agrees_with_rk4():
    """Short consist in the R = 300 m curve, 3 s: TR-BDF2 (rtol 1e-6, atol 1e-8, grouped finite-difference
    Jacobian with the wagon's block eliminated into the band) against RK4 0.5 ms: the wagon's car-body lateral
    displacement within 2 % of its peak, the in-train deflections and speeds within 1e-3 of their peaks, and
    the two copies of the wagon's speed equal to 1e-9 m/s."""
    sc, _ = load_scenario(SHORT, ["simulation.duration_s=3"])
    model = build_mixed(sc)
    ref, _ = R.solve(sc, model, backend="off")
    sci, _ = load_scenario(SHORT, ["simulation.duration_s=3", "integrator.method=trbdf2", "integrator.rtol=1e-6",
                                   "integrator.atol=1e-8"])
    imp, _ = R.solve(sci, build_mixed(sci), backend="off")
    assert imp.status.name == "COMPLETED", imp.message
    assert np.array_equal(imp.t, ref.t)
    o0, _o1 = model.slices[0]
    vp = model.params.vehs[0]
    ob = o0 + vp.b_off[vp.cpl_body] + R_Y
    yr, yi = ref.y[:, ob], imp.y[:, ob]
    assert np.max(np.abs(yr)) > 1e-3                    # the car body shifted in the curve
    assert np.max(np.abs(yi - yr)) <= 0.02 * np.max(np.abs(yr))
    B = model.params.ltd.block
    N = model.params.ltd.n_veh
    for k in (0, 1):                                    # deflections, speeds
        a, b = ref.y[:, k:B * N:B], imp.y[:, k:B * N:B]
        assert np.max(np.abs(a - b)) <= 1e-3 * np.max(np.abs(a)) + 1e-9
    j = sc.detailed[0].position - 1
    assert np.max(np.abs(imp.y[:, o0 + S_VEL] - imp.y[:, B * j + 1])) <= 1e-9
    assert imp.stats["steps"] < ref.stats["steps"] / 3   # not a trivial comparison: far fewer, longer steps
