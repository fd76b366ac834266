"""Quasi-static running safety of every vehicle (issue 28; hpcrail.models.safety, hpcrail.kinds.ltd.safety).
Physics checked:

* route geometry: the first-order coupler geometry against the exact circle (yaw within 1.5 % at R = 150 m, 0.2 %
  at R = 300 m), κL/2 for identical cars on a constant curve, symmetric front/rear angles; the link length stays
  the coupler's on a tangent whose heading is far from the route's start (a bug once inflated it by √(1+θ²));
* the bogie's steady curving: lateral equilibrium (the wheelsets' ΣY sum to the external force) and yaw
  equilibrium at every grid point, creep forces within μQ, a right curve the mirror of a left one, on tangent
  without external force no net lateral force, more lateral force on the lead outer wheel in a sharper curve;
* wheel loads: the vertical coupler force of a coupler-height step and the pitch of unequal coupler forces give
  the lever-rule ΔQ/Q of a vehicle on tangent track exactly;
* buff pushes a car out of a curve, draft pulls it in: jack-knife and stringline flags where a limit is reached;
* the numba kernel equals the vectorised numpy path to 1e-9 on a curved route with loaded and empty cars;
* an LTD run: the maxima do not depend on the sampling a sweep asks for (t_out = the end only gives the same
  worst values as the full output), the element maxima equal the series' maxima, verdict attributes.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from hpcrail.models.safety import quasi_static as qs

ROOT = Path(__file__).resolve().parents[1]


def consist(n=5, length=16.0, b=11.2, hc=0.8, mass=1e5, gear=None):
    g = gear or wagon_gear()
    return qs.Consist(mass=np.full(n, mass), length=np.full(n, length), bogie_centres=np.full(n, b),
                      coupler_length=np.full(n, 1.0), coupler_height=np.full(n, hc) if np.isscalar(hc) else hc,
                      cg_height=np.full(n, 1.8), gear=np.zeros(n, np.int64), gears=[g], alpha=np.full(n, 0.85),
                      max_coupler_yaw=np.full(n, math.radians(12)), endurable_lcf=np.full(n, np.nan))


def wagon_gear(mass=1e5, mu=0.4, axles=2):
    from hpcrail.kinds.ltd.safety import kalker_s1002
    from hpcrail.models.safety.profiles import builtin

    Q0 = mass * qs.G / (4 * axles)
    f11, f22 = kalker_s1002(Q0)
    y, dr, tg, sig = builtin()
    return qs.RunningGear(axles=axles, wheelbase=1.83, rail_spacing=1.5, wheel_radius=0.457, conicity=0.2,
                          flange_clearance=sig, mu=mu, wheel_load=Q0, f11=f11, f22=f22, dr_y=y, dr=dr, tan_gamma=tg,
                          yaw_friction=0.2 * 0.15 * 0.5 * mass * qs.G, half_spacing=5.6)


def exact_yaw(R, s, veh):
    """Coupler yaw angles from exact circle geometry (points on the arc, chords, pivots on the chords)."""
    def point(u):
        return R * np.sin(u / R), R * (1 - np.cos(u / R))

    hb, c = 0.5 * veh.bogie_centres, veh.pivot
    p1 = np.array([point(x + h) for x, h in zip(s, hb)])
    p2 = np.array([point(x - h) for x, h in zip(s, hb)])
    a = (p1 - p2) / np.linalg.norm(p1 - p2, axis=1)[:, None]
    cen = 0.5 * (p1 + p2)
    fr, rr = cen + c[:, None] * a, cen - c[:, None] * a
    yf = np.full(len(s), np.nan)
    for k in range(len(s) - 1):
        u = fr[k + 1] - rr[k]
        u = u / np.linalg.norm(u)
        b = a[k + 1]
        yf[k + 1] = math.atan2(-(b[0] * u[1] - b[1] * u[0]), -(b[0] * u[0] + b[1] * u[1]))
    return yf


def test_coupler_geometry_against_the_circle():
    """Mixed lengths (16, 16, 27, 16, 20.8 m): the first-order yaw angles within 1.5 % of the exact circle's at
    R = 150 m and 0.2 % at 300 m; identical cars: κL/2 and equal front and rear angles; on a tangent 10 km after
    a curve (heading 10 rad) the link is as long as the couplers make it (2 m) and the vertical force of a
    35 mm coupler-height step is F·Δh/ℓ."""
    L = np.array([16.0, 16.0, 27.0, 16.0, 20.8])
    veh = consist(5)
    veh.length[:] = L
    veh.bogie_centres[:] = [11.2, 11.2, 19.0, 11.2, 14.6]
    cen = np.concatenate([[0.0], -np.cumsum(0.5 * (L[:-1] + L[1:]))])
    for R, tol in ((150.0, 0.015), (300.0, 0.002)):
        al = qs.Alignment.from_sections([-1000.0], [9000.0], [R])
        s = 500.0 + cen
        g = qs.coupler_geometry(al, s[None, :], veh)
        ex = exact_yaw(R, s + 1000.0, veh)
        rel = np.nanmax(np.abs(g["yaw_front"][0] - ex)) / np.nanmax(np.abs(ex))
        assert rel <= tol, (R, rel)
    same = consist(5)
    al = qs.Alignment.from_sections([-1000.0], [9000.0], [300.0])
    g = qs.coupler_geometry(al, (2000.0 - 16.0 * np.arange(5))[None, :], same)
    np.testing.assert_allclose(g["yaw_front"][0, 1:], 16.0 / 600.0, rtol=1e-3)
    np.testing.assert_allclose(g["yaw_front"][0, 1:], g["yaw_rear"][0, :-1], rtol=1e-8)
    # a tangent after 10 rad of curves: link length and vertical slope
    al = qs.Alignment.from_sections([-500.0, 0.0, 3000.0], [0.0, 3000.0, 20000.0], [0.0, 300.0, 0.0])
    hc = np.array([0.8, 0.835, 0.8, 0.835, 0.8])
    veh = consist(5, hc=hc)
    g = qs.coupler_geometry(al, (10000.0 - 16.0 * np.arange(5))[None, :], veh)
    np.testing.assert_allclose(g["link_length"], 2.0, rtol=1e-9)
    np.testing.assert_allclose(g["slope_rear"][0, :-1], np.diff(hc) / 2.0, rtol=1e-9)
    assert np.all(np.abs(g["yaw_front"][0, 1:]) < 1e-9)


def test_bogie_curving_equilibrium_and_symmetry():
    """Every grid point of the curving tables: the wheelsets' ΣY sum to the external force (lateral equilibrium,
    1e-6 relative), the solver's residual converged; a right curve mirrors a left one; on tangent without force
    no net lateral force; the lead outer wheel's Y grows from R = 600 m to R = 150 m."""
    g = wagon_gear()
    E = np.linspace(-150e3, 150e3, 61)
    Y = {}
    for R in (150.0, 600.0, -150.0):
        tab = qs.curving_table(g, 1.0 / R, E)
        assert tab["converged"].all(), R
        np.testing.assert_allclose(tab["sum_y"].sum(axis=1), E, atol=1e-6 * 150e3)
        Y[R] = tab
    np.testing.assert_allclose(Y[-150.0]["Y"], Y[150.0]["Y"][::-1, :, ::-1], atol=1e-6)
    np.testing.assert_allclose(Y[-150.0]["sum_y"], -Y[150.0]["sum_y"][::-1], atol=1e-6)
    i0 = int(np.argmin(np.abs(E)))
    assert Y[150.0]["Y"][i0, 0, 1] > Y[600.0]["Y"][i0, 0, 1] > 0      # lead axle, outer (right) wheel of a left curve
    tang = qs.curving_table(g, 0.0, np.array([0.0]))
    assert abs(tang["sum_y"].sum()) < 1e-9
    # creep forces never exceed μQ0 (the tread wheel's lateral force minus its normal force's lateral part)
    tab = Y[150.0]
    inner = tab["Y"][:, :, 0] - g.wheel_load * tab["tan_gamma"][:, :, 0]
    flange_free = np.abs(tab["y"]) < g.flange_clearance - 1e-3
    assert np.all(np.abs(inner[flange_free]) <= g.mu * g.wheel_load * (1 + 1e-9))


def test_wheel_loads_from_coupler_height_and_pitch_on_tangent():
    """A car between two neighbours with couplers 40 mm higher, buff F at both ends, on tangent track: each
    coupler pushes it down by V = F Δh/ℓ, the lever rule gives each bogie V(1/2 + c/b) + V(1/2 − c/b) = V; the
    head car is lifted at its rear pivot and pitched by the coupler force at coupler height: ΔQ/Q exactly."""
    hc = np.array([0.84, 0.80, 0.84])
    veh = consist(3, hc=hc)
    al = qs.Alignment.from_sections([-1000.0], [5000.0], [0.0])
    s = (1000.0 - 16.0 * np.arange(3))[None, :]
    F = np.array([[-300e3, -300e3]])
    v = np.full((1, 3), 10.0)
    out = qs.quasi_static(al, veh, qs.Criteria(), s, v, np.zeros((1, 3)), F, engine="numpy")
    V = 300e3 * 0.04 / 2.0            # downward on the middle car at each pivot (buff pushes it from higher pivots)
    Q0 = veh.gears[0].wheel_load
    # both pivots push down with V: each bogie carries V(1/2 + c/b) + V(1/2 − c/b) = V, per wheel V/4
    np.testing.assert_allclose(out["wheel_unloading"][0, 1], -(V / 4) / Q0, rtol=1e-9)
    # the head car is lifted at its rear pivot by V (its rear bogie by V(1/2 + c/b)) and pitched by the buff force
    # at coupler height pushing it alone (ax = 0 given: h_c F / b off its rear bogie)
    c, b = veh.pivot[0], veh.bogie_centres[0]
    unl = (V * (0.5 + c / b) + 0.84 * 300e3 / b) / 4 / Q0
    np.testing.assert_allclose(out["wheel_unloading"][0, 0], unl, rtol=1e-9)
    numba = qs.quasi_static(al, veh, qs.Criteria(), s, v, np.zeros((1, 3)), F, engine="numba")
    np.testing.assert_allclose(numba["wheel_unloading"], out["wheel_unloading"], atol=1e-12)


def test_buff_pushes_out_draft_pulls_in_and_the_flags():
    """Five empty 25 t wagons standing on R = 300 m without cant (no cant deficiency): buff makes the middle car's
    coupler lateral force point out of the curve (2 F sin(κL/2)) and raises its Y/Q; at 1.5 MN buff a limit is
    reached and it is flagged jack-knife, at 1.5 MN draft stringline; not at 100 kN."""
    veh = consist(5, mass=25e3, gear=wagon_gear(25e3))
    al = qs.Alignment.from_sections([-1000.0], [5000.0], [300.0])
    s = (1000.0 - 16.0 * np.arange(5))[None, :]
    v = np.zeros((1, 5))
    res = {}
    for F in (-1.5e6, -100e3, 0.0, 100e3, 1.5e6):
        res[F] = qs.quasi_static(al, veh, qs.Criteria(), s, v, np.zeros((1, 5)), np.full((1, 4), F))
    np.testing.assert_allclose(res[-100e3]["coupler_lateral_force"][0, 2], -2 * 100e3 * math.sin(16.0 / 600.0),
                               rtol=2e-3)
    assert res[-100e3]["coupler_lateral_force"][0, 2] < 0 < res[100e3]["coupler_lateral_force"][0, 2]
    assert res[-100e3]["y_over_q"][0, 2] > res[0.0]["y_over_q"][0, 2]
    assert res[-1.5e6]["jackknife"][0, 2] == 1 and res[-1.5e6]["stringline"][0, 2] == 0
    assert res[1.5e6]["stringline"][0, 2] == 1 and res[1.5e6]["jackknife"][0, 2] == 0
    assert res[-100e3]["jackknife"][0, 1:4].sum() == 0 and res[100e3]["stringline"][0, 1:4].sum() == 0


def test_kernel_equals_numpy_on_a_curved_route():
    """Train-4-like consist (loaded and empty wagons, locomotives) through an S-curve with cant, spirals as steps,
    random in-train forces: every output of the numba kernel equals the numpy path to 1e-9."""
    from hpcrail.kinds import load_scenario
    from hpcrail.kinds.ltd.safety import model_inputs

    sc, _ = load_scenario(ROOT / "configs/trains/train4_makeup.yaml")
    al, veh, crit = model_inputs(sc)
    al = qs.Alignment.from_sections([0.0, 19500.0, 19800.0, 19806.0, 20100.0], [19500.0, 19800.0, 19806.0, 20100.0,
                                                                                   40000.0],
                                    [0.0, 250.0, 0.0, -400.0, 0.0], [0.0, 0.08, 0.0, 0.05, 0.0])
    rng = np.random.default_rng(1)
    T, N = 40, veh.n
    head = np.linspace(20400.0, 21200.0, T)
    s = head[:, None] - np.concatenate([[0.0], np.cumsum(0.5 * (veh.length[:-1] + veh.length[1:]))])[None, :]
    v = np.full((T, N), 14.0)
    ax = rng.normal(0, 0.05, (T, N))
    F = rng.normal(-150e3, 250e3, (T, N - 1))
    a = qs.quasi_static(al, veh, crit, s, v, ax, F, engine="numpy")
    b = qs.quasi_static(al, veh, crit, s, v, ax, F, engine="numba")
    for k in ("y_over_q", "truck_side", "wheel_unloading", "sum_y_ratio", "worst_ratio", "coupler_lateral_force",
              "yaw_front", "yaw_rear", "bogie_lateral_force"):
        np.testing.assert_allclose(b[k], a[k], rtol=1e-9, atol=1e-9 * max(1.0, np.nanmax(np.abs(a[k]))), err_msg=k)
    for k in ("jackknife", "stringline"):
        np.testing.assert_array_equal(b[k], a[k])
    assert np.nanmax(a["worst_ratio"]) > 0.5          # the forces were not trivial


def test_ltd_run_maxima_independent_of_the_requested_samples():
    """train4_makeup for 30 s: the run's quasi-static maxima are the same whether its series are sampled every
    second or only at the end (what a sweep without series asks for), and equal the maxima of the stored series;
    the verdict attributes are set (limit 0.8 for Y/Q)."""
    from hpcrail.kinds import load_scenario
    from hpcrail.simulate import run_scenario

    sc, _ = load_scenario(ROOT / "configs/trains/train4_makeup.yaml", ["simulation.duration_s=30"])
    full = run_scenario(sc)
    end = run_scenario(sc, t_out=np.array([30.0]))
    assert full.sizes["time"] == 31 and end.sizes["time"] == 1
    for name in ("max_qs_y_over_q", "max_qs_wheel_unloading", "max_qs_sum_y_ratio", "qs_worst_ratio",
                 "worst_qs_ratio", "worst_qs_ratio_vehicle", "peak_buff_force_at_vehicle"):
        np.testing.assert_array_equal(full[name].values, end[name].values, err_msg=name)
    np.testing.assert_allclose(full.max_qs_y_over_q.values, full.qs_y_over_q.max("time").values, rtol=0)
    assert full.worst_qs_y_over_q.attrs["limit"] == 0.8 and "EN 14363" in full.worst_qs_y_over_q.attrs["limit_source"]
    assert float(full.worst_qs_ratio) > 0.05
