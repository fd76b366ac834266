"""Contact search with yaw (issue 29): the Manchester contact benchmark's case A-2.2 — S1002 on UIC60 1:40, lateral
shift 0-10 mm with yaw 0-24 mrad — against CONTACT's reference output (Vollebregt; tests/data/wheelrail/
mbench_a22_contact_reference.csv).  The contact point of a yawed wheelset leaves the wheel's vertical plane
(geometry.wheel_point, the trace line): on the flange it lies up to 17 mm ahead of the axle and its contact angle
differs by up to 13 mrad from the planar one.  Also: the first-order longitudinal offsets the on-line kernels use
(creep.yaw_offsets) against the exact ones."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from hpcrail.models.wheelrail import layout as L
from hpcrail.models.wheelrail.config import build_profiles, load_profile_pair
from hpcrail.models.wheelrail.creep import yaw_offsets

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT / "configs" / "wheelrail" / "s1002_uic60.yaml"
REF = ROOT / "tests" / "data" / "wheelrail" / "mbench_a22_contact_reference.csv"
#: cases whose elastic contact patch straddles a rigid contact jump (the rigid contact angle is discontinuous
#: there: tread jump at |y| = 0.22 mm, flange-root jump at 4.85 mm, conformal flange root before the 6.25 mm jump)
NEAR_JUMP = {("left", 1), ("right", 1), ("right", 2), ("right", 11), ("right", 13)}


@pytest.fixture(scope="module")
def a22():
    cfg, doc = load_profile_pair(PAIR, ["wheel.builtin=s1002_mbench_points"])   # the benchmark's own points
    solver = build_profiles(cfg, doc).solver()
    rows = list(csv.DictReader(ln for ln in REF.read_text().splitlines() if not ln.startswith("#")))
    out = []
    for r in rows:
        side = 1 if r["side"] == "left" else -1
        y, phi, psi = -float(r["y_ws_mm"]) * 1e-3, float(r["roll_rad"]), -float(r["yaw_rad"])
        z, u, v, c = solver.wheel_contact(y, phi, side, psi)
        z0, u0, v0, c0 = solver.wheel_contact(y, phi, side, 0.0)
        x, _, _ = solver.solve(y, psi=psi)
        out.append(dict(side=r["side"], case=int(r["case"]), sigma=side, y=y, phi=phi, psi=psi, c=c, c0=c0, u=u,
                        x=x, gamma_ref=side * float(r["deltcp_tr_rad"]), X_ref=float(r["xcp_tr_mm"]) * 1e-3,
                        u_ref=-side * float(r["ycp_w_mm"]) * 1e-3, roll_ref=phi))
    return solver, out


def test_a22_contact_angles_with_yaw(a22):
    """Issue 29 target: contact angles of the yawed wheelset within 2e-3 rad of CONTACT on the A-2.2 positions
    (the pose as the benchmark prescribes it).  Measured: the flange cases (6.5-10 mm, yaw 15.6-24 mrad) agree
    within 1e-4 rad, where the planar search is off by 3-13 mrad; the tread cases within 1.4e-3 rad (the elastic
    patch averages the tread's curvature); the contact positions on the wheel within 0.45 mm."""
    solver, cases = a22
    checked = [k for k in cases if (k["side"], k["case"]) not in NEAR_JUMP]
    assert len(checked) == 23
    worst = max(abs(k["c"].gamma - k["gamma_ref"]) for k in checked)
    assert worst < 2e-3, worst
    flange = [k for k in checked if k["side"] == "right" and k["case"] >= 14]
    assert len(flange) == 8
    assert max(abs(k["c"].gamma - k["gamma_ref"]) for k in flange) < 1e-4
    assert min(abs(k["c0"].gamma - k["gamma_ref"]) for k in flange) > 3e-3      # yaw matters on the flange
    assert max(abs(k["c0"].gamma - k["gamma_ref"]) for k in flange) > 1.2e-2
    assert max(abs(k["u"] - k["u_ref"]) for k in checked) < 5e-4


def test_a22_contact_point_ahead_of_the_axle(a22):
    """The longitudinal position of the contact point in the track frame (CONTACT's XCP(TR)): exact trace line
    within 0.06 mm everywhere (up to 7.4 mm on the tread, 5.8 mm on the flange); the kernels' first-order offset
    dX = -sin ψ (dY - σ r tan γ_w) within 0.02 mm on the tread and 0.6 mm on the flange at 15.6 mrad."""
    solver, cases = a22
    for k in cases:
        assert abs(k["c"].dX - k["X_ref"]) < 6e-5, (k["side"], k["case"])
        out = np.zeros(L.N_OUT)
        base = L.CONTACT0 + (0 if k["sigma"] > 0 else 2) * L.N_REC
        out[base + L.C_R] = k["c0"].rolling_radius
        out[base + L.C_GAMMA] = k["c0"].gamma
        out[base + L.C_DY] = k["c0"].dY
        yaw_offsets(out, k["psi"], k["phi"])
        tol = 6e-4 if k["c"].gamma > 0.5 else 2e-5 if (k["side"], k["case"]) not in NEAR_JUMP else 1e-4
        assert abs(out[base + L.C_DX] - k["X_ref"]) < tol, (k["side"], k["case"], out[base + L.C_DX], k["X_ref"])


def test_a22_roll_of_the_rigid_yawed_wheelset(a22):
    """Solving both wheels with yaw (ContactSolver.solve(y, psi=...)) gives the wheelset roll the benchmark
    prescribes within 4.5 % (flange climbing at 6.5 mm: -4.55 vs -4.38 mrad) and 7 % on the tread, and the
    solution satisfies the yawed eq 12 to 1e-12 m."""
    solver, cases = a22
    for k in cases:
        if k["case"] == 1:
            assert abs(k["x"][1]) < 1e-15
            continue
        assert k["x"][1] == pytest.approx(k["roll_ref"], rel=0.07 if abs(k["roll_ref"]) < 1e-3 else 0.045)
        assert np.max(np.abs(solver.residual(k["y"], 0.0, k["x"], psi=k["psi"]))) < 1e-12
