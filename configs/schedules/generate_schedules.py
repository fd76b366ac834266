"""Generate the notch schedules of the benchmark-like trains 2 and 4 (reproducible, documented).

The benchmark's driving commands are not public.  This script drives a point-mass model of each
train (total mass, the locomotives' notch curves, the Davis resistance of every vehicle at the train's
speed, the grade and curvature averaged over the train's length) along the assumed route with a simple
rule-based driver, and writes the resulting notch commands (time basis) to CSV:

* the driver aims at a target speed (line speed, lower in curves), changes at most one notch per
  ``decision interval`` (3 s, as in the placeholder schedules of shared/data/ltd), powers up when
  more than 3 km/h below the target, eases off / applies dynamic brake when more than 1 km/h above;
* the notch sequence therefore contains the throttle changes, coasting and dynamic-brake phases that
  excite in-train forces.

The pneumatic-brake trip of train 4 (``train4_pneumatic.csv``) is driven by the same driver through a
full-service air-brake application and its release (``BRAKED``): the point mass then also carries the air
brake's retarding force, μ(v)·Σ F_N,full·g(t) with the vehicles' full-service block forces and μ(v) of the
LTD model's empirical brake data, g following the command u (fraction of full service) as a first-order lag
whose time constant is the empirical brake's cylinder time constant plus the time the pipe signal needs to
reach the middle of the train (apply: τ_apply + L/(2 c_service); release: τ_release + L/(2 c_release)); the
driver applies no traction while the air brake is applied (g > 0.02) and otherwise keeps his rules, so he
powers up again after the release.  Replaying train 4's schedule instead (the earlier file) left the train
~2 km behind the point mass it was made for: at 2733 s it met that schedule's full dynamic brake on an
up-grade, stalled at 2850 s and rolled back for the rest of the trip (−8 m/s at 3750 s).

Run from the repository root:  python configs/schedules/generate_schedules.py
The full LTD simulation then follows these commands exactly (it does not use the point-mass model).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.kinds.ltd.build import build_ltd  # noqa: E402
from hpcrail.models.ltd.build import G, KMH  # noqa: E402

TRAINS = {
    # name: (line speed km/h, curve speed km/h, duration s)
    "train2": (88.0, 75.0, 2711.0),
    "train4": (80.0, 70.0, 3863.0),
}
#: trips with an air-brake application: name -> (train whose point mass drives, brake commands (time [s],
#: fraction of full service)); line and curve speeds and duration as that train's
BRAKED = {
    "train4_pneumatic": ("train4", ((1300.0, 1.0), (1330.0, 0.0))),
}
DECISION_S = 3.0
#: the driver applies no traction while the air brake's point-mass application g exceeds this
G_NO_TRACTION = 0.02


def point_mass_schedule(name: str, line_kmh: float, curve_kmh: float, duration: float, brakes=()):
    """Notch commands ``[(time [s], notch)]`` of the rule-based driver and the point-mass distance [m];
    ``brakes``: air-brake commands ``((time [s], fraction of full service), ...)`` the point mass follows."""
    sc, _ = load_scenario(HERE.parent / "trains" / f"{name}.yaml")
    model = build_ltd(sc)
    p = model.params
    M = p.mass.sum()
    m_eff = (1.0 / p.inv_mass_eff).sum()
    L = model.vehicle_length.sum()
    locos = [j for j in range(p.n_veh) if p.loco_type[j] >= 0]
    secs = sc.route.sections
    bk = np.array([secs[0].start_km] + [s.end_km for s in secs]) * 1e3
    grade = np.array([s.grade_permille for s in secs]) * 1e-3
    curv = np.array([0.0 if s.radius_m == 0 else 1 / abs(s.radius_m) for s in secs])
    H = np.concatenate([[0.0], np.cumsum(grade * np.diff(bk))])
    K = np.concatenate([[0.0], np.cumsum(curv * np.diff(bk))])

    def mean_over(table, a, b):
        return (np.interp(b, bk, table) - np.interp(a, bk, table)) / (b - a)

    limits = np.array([s.speed_limit_kmh or np.inf for s in secs])

    def target(front):
        # the lowest limit over the train's extent (and a little ahead: the driver brakes in time)
        a, b = max(front - L, bk[0]), front + 600.0
        i0 = max(np.searchsorted(bk, a, side="right") - 1, 0)
        i1 = min(np.searchsorted(bk, b, side="right") - 1, len(secs) - 1)
        lim = limits[i0:i1 + 1].min()
        k_max = max(mean_over(K, a, front + 1.0), 0.0)
        return min(line_kmh, lim, curve_kmh if k_max > 1e-6 else np.inf) * KMH

    # loco curves from the scenario (all locomotives are of one type in trains 2 and 4)
    lt = sc.vehicle_types[model.vehicle_types[locos[0]]].traction.curves
    vk = np.asarray(lt.speed_kmh) * KMH
    tr = np.asarray(lt.traction_kN) * 1e3
    db = np.asarray(lt.dynamic_brake_kN) * 1e3

    def force(v, notch):
        if notch > 0:
            return len(locos) * np.interp(abs(v), vk, tr[notch - 1])
        if notch < 0:
            return -len(locos) * np.interp(abs(v), vk, db[-notch - 1]) * np.sign(v)
        return 0.0

    def resistance(v, front):
        kap = mean_over(K, front - L, front)
        r0 = np.sum(p.r0 + p.rcurve * kap)
        run = np.sum(p.r1 * v + p.r2 * v * abs(v))
        return run + (r0 if v > 0.01 else 0.0)

    # the air brake (BRAKED trips): full-service block forces and μ(v) of the empirical brake's data
    f_full = p.shoe_full
    tau_apply = p.ab_tau_apply + 0.5 * L / p.ab_c_service
    tau_release = p.ab_tau_release + 0.5 * L / p.ab_c_release
    bt = np.array([b[0] for b in brakes] or [np.inf])
    bu = np.array([b[1] for b in brakes] or [0.0])

    def air_brake(v, g):
        sp = abs(v)
        return np.sum(p.mu0 * (1.0 + p.mu_a * sp) / (1.0 + p.mu_b * sp) * f_full) * g

    dt = 0.5
    t, v, front, notch, g = 0.0, 0.0, sc.route.start_m, 0, 0.0
    next_decision = 0.5
    cmds = []
    while t < duration:
        if t >= next_decision:
            vt = target(front)
            new = notch
            if v < vt - 3 * KMH:
                new = min(notch + 1, 8) if notch >= 0 else notch + 1
            elif v > vt + 1 * KMH:
                new = max(notch - 1, -8)
            elif notch < 0 and v < vt - 1 * KMH:
                new = notch + 1
            if g > G_NO_TRACTION:
                new = min(new, 0)
            if new != notch:
                notch = new
                cmds.append((round(t, 1), notch))
            next_decision += DECISION_S
        slope = mean_over(H, front - L, front)
        i = np.searchsorted(bt, t, side="right") - 1
        u = bu[i] if i >= 0 else 0.0
        g += dt * (u - g) / (tau_apply if u > g else tau_release)
        F = force(v, notch) - resistance(v, front) - M * G * slope - (air_brake(v, g) if v > 0.0 else 0.0)
        if v <= 0.0 and F < 0:
            F = 0.0
        v = max(v + dt * F / m_eff, 0.0)
        front += dt * v
        t += dt
    return cmds, front - sc.route.start_m


def main(out_dir: Path = HERE):
    """Write every schedule into ``out_dir`` (default: next to this script, the shipped files)."""
    out_dir = Path(out_dir)
    for name, (line, curve, dur) in TRAINS.items():
        cmds, dist = point_mass_schedule(name, line, curve, dur)
        out = out_dir / f"{name}_notches.csv"
        with out.open("w") as f:
            f.write(f"# Driver notch schedule of the benchmark-like {name} (time basis), ASSUMED: the benchmark's\n")
            f.write("# driving commands are not public. Generated by configs/schedules/generate_schedules.py: a rule-based\n")
            f.write(f"# driver on a point-mass model of the train, line speed {line:g} km/h, {curve:g} km/h in curves,\n")
            f.write(f"# one notch change per {DECISION_S:g} s at most (point-mass distance {dist / 1e3:.1f} km in {dur:g} s).\n")
            f.write("# notch: + traction, - dynamic brake.\n")
            f.write("time_s,notch\n")
            for t, n in cmds:
                f.write(f"{t},{n}\n")
        print(f"{name}: {len(cmds)} commands, point-mass distance {dist / 1e3:.2f} km, "
              f"mean speed {dist / dur * 3.6:.1f} km/h -> {out}")
    for name, (train, brakes) in BRAKED.items():
        line, curve, dur = TRAINS[train]
        cmds, dist = point_mass_schedule(train, line, curve, dur, brakes)
        rows = sorted([(t, str(n), "") for t, n in cmds] + [(t, "", f"{u:g}") for t, u in brakes],
                      key=lambda r: r[0])
        out = out_dir / f"{name}.csv"
        (t_a, _), (t_r, _) = brakes[0], brakes[-1]
        with out.open("w") as f:
            f.write(f"# Driver schedule of {name} (time basis), ASSUMED: generated by configs/schedules/generate_schedules.py\n")
            f.write(f"# like {train}_notches.csv (the same commands up to the application), with a full-service air-brake\n")
            f.write(f"# application at {t_a:g} s (at ~84 km/h under dynamic brake, approaching the 60 km/h curve at km 20)\n")
            f.write(f"# and its release at {t_r:g} s; the point mass carries the air brake and its driver powers up again\n")
            f.write(f"# after the release (point-mass distance {dist / 1e3:.1f} km in {dur:g} s).\n")
            f.write("# notch: + traction, - dynamic brake; brake: fraction of full service (0 = release).\n")
            f.write("time_s,notch,brake\n")
            for t, n, b in rows:
                f.write(f"{t:g},{n},{b}\n")
        print(f"{name}: {len(cmds)} notch and {len(brakes)} brake commands, point-mass distance "
              f"{dist / 1e3:.2f} km -> {out}")


if __name__ == "__main__":
    main()
