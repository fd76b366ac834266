"""Endurable longitudinal compressive force of a wagon (EN 15839:2024, derived from UIC 530-2:2011 and the ERRI B12
propelling tests): the detailed wagon of a mixed-train rig is pushed through an S-curve between two reference
vehicles at increasing constant buff forces; the endurable force is the largest force at which the running-safety
criteria hold.  ``hpcrail lcf`` is the command.

The rig (``configs/mixed/lcf_s_curve.yaml``): a heavy drag vehicle whose constant running resistance (its Davis
constant term, ``vehicle_types.<drag>.davis.a``) sets the buff force, a reference wagon, the detailed wagon, a
reference wagon and a locomotive pushing with a flat tractive force equal to it (``vehicle_types.<pusher>.traction``);
:func:`level_overrides` writes both for a force F.

Criteria (defaults, :class:`Criteria`; check the edition of the standard that applies — the limit tables of EN 15839
were not available to the author): (Y/Q) 2 m ≤ 1.2 (ASSUMED: the propelling-test value quoted for S-curves of
R = 150 m, where EN 14363's 0.8 for R ≥ 250 m does not apply), wheel unloading ΔQ/Q ≤ 0.6 (UIC 530-2), the coupler's
yaw relative to the car body within its free swing (the coupler/buffer geometry criterion; ASSUMED 15°).  Every level
also gets the quasi-static model's Y/Q and ΔQ/Q of the wagon (:mod:`hpcrail.kinds.mixed_train.safety`) at the run's
own forces: how far the screening model's endurable force is from the detailed one's.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np


@dataclasses.dataclass(frozen=True)
class Criteria:
    """Limits of the propelling test (see the module docstring)."""

    y_over_q: float = 1.2
    wheel_unloading: float = 0.6
    coupler_yaw_deg: float = 15.0


@dataclasses.dataclass
class Level:
    """One buff-force level: the set force [kN], the run's status, the buff force at the wagon when its (Y/Q) 2 m
    peaked (``peak_buff_kN``) [kN],
    the detailed wagon's largest (Y/Q) 2 m, ΔQ/Q 2 m and coupler yaw relative to its body [deg], the quasi-static
    model's largest Y/Q and ΔQ/Q, the ratios to the limits and the verdict."""

    force_kN: float
    status: str
    message: str = ""
    peak_buff_kN: float = float("nan")
    y_over_q: float = float("nan")
    wheel_unloading: float = float("nan")
    coupler_yaw_deg: float = float("nan")
    qs_y_over_q: float = float("nan")
    qs_wheel_unloading: float = float("nan")
    ratios: dict = dataclasses.field(default_factory=dict)
    verdict: str = "n/a"

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def level_overrides(sc, force_kN: float, drag: str = "drag", pusher: str = "pusher") -> list[str]:
    """``--set`` overrides making the rig's buff force ``force_kN``: the drag vehicle's Davis constant term
    (F = m/1000 · adjustment · a) and the pusher's flat tractive force (F + 1 kN: the rig's small curving
    resistance).  Raises ValueError for a rig without those vehicle types or a force the fields cannot hold."""
    vt = sc.vehicle_types
    if drag not in vt or pusher not in vt or vt[pusher].traction is None:
        raise ValueError(f"the rig needs a vehicle type {drag!r} (the resisting vehicle) and a locomotive type "
                         f"{pusher!r} (the pusher); it has {', '.join(sorted(vt))}")
    d = vt[drag]
    force_kN = float(force_kN)
    a = force_kN * 1e3 / (d.mass_t * d.davis.adjustment)
    if not 0 <= a <= 100:
        raise ValueError(f"{force_kN:g} kN needs vehicle_types.{drag}.davis.a = {a:.4g} (allowed 0..100): raise its "
                         "mass_t or davis.adjustment")
    f = force_kN + 1.0
    return [f"vehicle_types.{drag}.davis.a={a!r}",
            f"vehicle_types.{pusher}.traction.curves.traction_kN=[[{f!r}, {f!r}]]",
            f"vehicle_types.{pusher}.traction.curves.speed_kmh=[0, 300]"]


def evaluate(sc, res, crit: Criteria, d: int = 0) -> Level:
    """The criteria of detailed vehicle ``d`` of a finished rig run ``res`` (a RunResult of the mixed kind)."""
    from hpcrail.kinds.mixed_train.safety import detailed_quasi_static

    v = res.values
    lev = Level(force_kN=float("nan"), status=res.run.status, message=res.run.message)
    # the buff force at the wagon when its (Y/Q) 2 m peaked (the start-up transient of the rig is not the level)
    lev.peak_buff_kN = -float(np.asarray(v["in_train_force_at_max_y_over_q"])[d]) * 1e-3
    lev.y_over_q = float(np.asarray(v["max_y_over_q"])[d])
    lev.wheel_unloading = float(np.asarray(v["max_wheel_unloading"])[d])
    psi = np.asarray(v["yaw"])[:, d, 0]
    yaw = np.fmax(np.abs(np.asarray(v["front_coupler_angle"])[:, d] - psi),
                  np.abs(np.asarray(v["rear_coupler_angle"])[:, d] - psi))
    lev.coupler_yaw_deg = float(np.degrees(np.nanmax(yaw))) if np.isfinite(yaw).any() else float("nan")
    try:
        q = detailed_quasi_static(sc, v, np.asarray(res.time), d)
        lev.qs_y_over_q = float(np.nanmax(q["y_over_q"]))
        lev.qs_wheel_unloading = float(np.nanmax(q["wheel_unloading"]))
    except (ValueError, RuntimeError):
        pass
    lev.ratios = {"y_over_q": lev.y_over_q / crit.y_over_q, "wheel_unloading": lev.wheel_unloading /
                  crit.wheel_unloading, "coupler_yaw": lev.coupler_yaw_deg / crit.coupler_yaw_deg}
    ok = res.run.status in ("completed", "event_stop")
    worst = max((r for r in lev.ratios.values() if math.isfinite(r)), default=float("nan"))
    lev.verdict = "FAILED RUN" if not ok else ("PASS" if worst <= 1.0 else "EXCEEDED")
    return lev


def run_levels(path, forces_kN, overrides=(), crit: Criteria = Criteria(), drag: str = "drag", pusher: str = "pusher",
               say=lambda text: None) -> list[Level]:
    """Run the rig ``path`` at every force of ``forces_kN`` (increasing) and evaluate each level.  ``overrides``:
    further ``--set`` overrides of the rig.  A run that fails (diverges: the wagon derailed in the model) is a
    level with that status."""
    from hpcrail.kinds import load_scenario
    from hpcrail.kinds.mixed_train.run import run

    base, _ = load_scenario(path, list(overrides))
    out = []
    for f in forces_kN:
        sc, _ = load_scenario(path, list(overrides) + level_overrides(base, f, drag, pusher))
        res = run(sc)
        lev = evaluate(sc, res, crit)
        lev.force_kN = float(f)
        out.append(lev)
        say(f"  {f:7.1f} kN: (Y/Q)2m {lev.y_over_q:.3f}, dQ/Q {lev.wheel_unloading:.3f}, coupler yaw "
            f"{lev.coupler_yaw_deg:.2f} deg (quasi-static Y/Q {lev.qs_y_over_q:.3f}, dQ/Q {lev.qs_wheel_unloading:.3f})"
            f" -> {lev.verdict}")
    return out


def quasi_static_endurable(levels: list[Level], crit: Criteria) -> float:
    """The quasi-static model's endurable force: where the larger of its Y/Q and ΔQ/Q ratios first reaches 1,
    interpolated linearly between the levels (NaN if it never does, the first level if it always does)."""
    F = np.array([lev.force_kN for lev in levels])
    r = np.array([max(lev.qs_y_over_q / crit.y_over_q, lev.qs_wheel_unloading / crit.wheel_unloading)
                  for lev in levels])
    bad = np.flatnonzero(~(r <= 1.0))
    if not bad.size:
        return float("nan")
    i = int(bad[0])
    if i == 0:
        return float(F[0])
    return float(F[i - 1] + (1.0 - r[i - 1]) / (r[i] - r[i - 1]) * (F[i] - F[i - 1])) if np.isfinite(r[i]) \
        else float(F[i - 1])


def endurable(levels: list[Level]) -> dict:
    """The endurable force from the levels: the largest set force of a passing level below the first failing one
    (``last_pass_kN``), the first failing force (``first_fail_kN``), the estimate between them where the governing
    criterion's ratio reaches 1 by linear interpolation (``endurable_kN``), and that criterion (``governing``).
    ``endurable_kN`` is NaN when no level passes, the last level when none fails (a lower bound: ``bounded``
    False)."""
    last = first = None
    for lev in levels:
        if lev.verdict == "PASS":
            last = lev
        else:
            first = lev
            break
    out = {"last_pass_kN": last.force_kN if last else float("nan"),
           "first_fail_kN": first.force_kN if first else float("nan"), "governing": "", "bounded": first is not None}
    if last is None:
        out["endurable_kN"] = float("nan")
        if first is not None:
            out["governing"] = max(first.ratios, key=lambda k: first.ratios[k] if math.isfinite(first.ratios[k])
                                   else -1)
        return out
    if first is None:
        out["endurable_kN"] = last.force_kN
        return out
    if first.verdict != "EXCEEDED":                 # a failed run: no ratio to interpolate
        out["endurable_kN"] = last.force_kN
        out["governing"] = "run failed"
        return out
    gov = max(first.ratios, key=lambda k: first.ratios[k] if math.isfinite(first.ratios[k]) else -1)
    r0, r1 = last.ratios[gov], first.ratios[gov]
    f = last.force_kN + (1.0 - r0) / (r1 - r0) * (first.force_kN - last.force_kN) if r1 > r0 else last.force_kN
    out.update(endurable_kN=float(min(max(f, last.force_kN), first.force_kN)), governing=gov)
    return out


def lcf_figure(levels: list[Level], result: dict, crit: Criteria, out_dir, title: str = ""):
    """``lcf.png``: each criterion's ratio to its limit against the set buff force, the detailed wagon (solid)
    and the quasi-static model (dashed), the limit and the endurable force."""
    from hpcrail.results.plotting import finish, new_figure

    F = np.array([lev.force_kN for lev in levels])
    fig, ax = new_figure(1, 1, figsize=(8.5, 5.2))
    series = (("y_over_q", f"(Y/Q) 2 m / {crit.y_over_q:g}", "C0"),
              ("wheel_unloading", f"dQ/Q / {crit.wheel_unloading:g}", "C1"),
              ("coupler_yaw", f"coupler yaw / {crit.coupler_yaw_deg:g} deg", "C2"))
    for key, lab, col in series:
        ax.plot(F, [lev.ratios.get(key, np.nan) for lev in levels], "o-", color=col, label=f"{lab} (detailed wagon)")
    ax.plot(F, [lev.qs_y_over_q / crit.y_over_q for lev in levels], "s--", color="C0", mfc="none",
            label="Y/Q, quasi-static model")
    ax.plot(F, [lev.qs_wheel_unloading / crit.wheel_unloading for lev in levels], "s--", color="C1", mfc="none",
            label="dQ/Q, quasi-static model")
    bad = [lev.force_kN for lev in levels if lev.verdict == "FAILED RUN"]
    if bad:
        ax.plot(bad, np.ones(len(bad)), "x", color="C3", ms=10, mew=2, label="run failed (derailed in the model)")
    ax.axhline(1.0, color="C3", ls="--", lw=1, label="limit (ratio 1)")
    e = result.get("endurable_kN", float("nan"))
    if math.isfinite(e):
        ax.axvline(e, color="k", ls=":", lw=1.2, label=f"endurable force {e:.0f} kN"
                   + ("" if result.get("bounded") else " (lower bound)"))
    eq = result.get("quasi_static_kN", float("nan"))
    if math.isfinite(eq):
        ax.axvline(eq, color="0.5", ls="-.", lw=1.0, label=f"quasi-static model: {eq:.0f} kN")
    top = 3.0
    ax.set_ylim(0.0, top)
    if any(lev.qs_y_over_q / crit.y_over_q > top for lev in levels):
        ax.text(0.99, 0.97, "quasi-static Y/Q off scale where a wheel lifts (Q -> 0)", transform=ax.transAxes,
                ha="right", va="top", fontsize=8, color="C0")
    ax.set_xlabel("buff force set at the wagon [kN]")
    ax.set_ylabel("criterion / its limit")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=2, fontsize=8, frameon=False)
    ax.set_title(title or "endurable longitudinal compressive force (EN 15839 approach)", fontsize=10)
    return finish(fig, out_dir, "lcf")


#: the loaded Manchester wagon's car body (configs/wheelrail/vehicles/manchester_wagon1.yaml) as overrides of the
#: empty wagon of the propelling rig
LOADED_BODY = ["detailed.0.vehicle.body_types.car_body.mass_kg=32000",
               "detailed.0.vehicle.body_types.car_body.inertia_kgm2=[56800, 1970000, 1970000]",
               "detailed.0.vehicle.bodies.0.z_m=1.8"]


def rig_overrides(rig, force_kN: float, mode: str = "buff", radius_m: float | None = None, cant_mm: float = 0.0,
                  speed_kmh: float | None = None, duration_s: float | None = None, loaded: bool = False) -> list[str]:
    """``--set`` overrides of the propelling rig (``configs/mixed/lcf_s_curve.yaml``) for a validation case: the
    in-train force ``force_kN`` at the wagon in ``buff`` (the drag vehicle ahead, the pusher behind) or ``draft``
    (the locomotive ahead pulling, the drag vehicle behind), a steady curve of ``radius_m`` with ``cant_mm`` after
    a 40 m tangent and a 20 m spiral (None: the rig's own S-curve), the speed and duration, the loaded car body."""
    from hpcrail.kinds import load_scenario

    base, _ = load_scenario(rig)
    over = level_overrides(base, force_kN)
    if radius_m is not None:
        over.append(f"track.sections=[{{kind: tangent, length_m: 40}}, {{kind: spiral, length_m: 20}}, "
                    f"{{kind: curve, length_m: 800, radius_m: {radius_m}, cant_mm: {cant_mm}}}]")
    if speed_kmh is not None:
        over.append(f"simulation.initial_speed_kmh={speed_kmh}")
    if duration_s is not None:
        over.append(f"simulation.duration_s={duration_s}")
    if mode == "draft":
        over.append("consist=[{type: pusher}, {type: reference, count: 3}, {type: drag}]")
    return over + (LOADED_BODY if loaded else [])


def compare_with_detailed(rig, overrides, steady: bool = True, window_s: float = 1.5) -> dict:
    """Run the rig with ``overrides`` and compare the quasi-static model with the multibody wagon: the largest
    wheel Y/Q and ΔQ/Q of each (``steady``: means over the last ``window_s`` seconds; else the largest 2 m sliding
    means over the passage, EN 14363).  Returns ``{"detailed": (Y/Q, ΔQ/Q), "quasi_static": (Y/Q, ΔQ/Q), "force":
    mean in-train force at the wagon at the end [N], "status": ...}``."""
    from hpcrail.kinds import load_scenario
    from hpcrail.kinds.mixed_train.run import run
    from hpcrail.kinds.mixed_train.safety import detailed_quasi_static
    from hpcrail.results.running_safety import sliding_mean

    sc, _ = load_scenario(rig, list(overrides))
    res = run(sc)
    v, t = res.values, np.asarray(res.time)
    out = {"status": res.run.status}
    if res.run.status != "completed":
        return out
    q = detailed_quasi_static(sc, v, t)
    yq, dq = np.asarray(v["y_over_q"])[:, 0], np.asarray(v["wheel_unloading"])[:, 0]
    if steady:
        w = t >= t[-1] - window_s
        out["detailed"] = (float(np.nanmax(np.nanmean(yq[w], axis=0))), float(np.nanmax(np.nanmean(dq[w], axis=0))))
        out["quasi_static"] = (float(np.nanmean(q["y_over_q"][w])), float(np.nanmean(q["wheel_unloading"][w])))
    else:
        pos = np.asarray(v["distance"])[:, 0]
        out["detailed"] = tuple(float(np.nanmax(sliding_mean(pos, x)[1])) for x in (yq, dq))
        out["quasi_static"] = tuple(float(np.nanmax(sliding_mean(pos, x)[1])) for x in (q["y_over_q"],
                                                                                         q["wheel_unloading"]))
    out["force"] = float(0.5 * (np.asarray(v["front_coupler_force"])[-1, 0] + np.asarray(v["rear_coupler_force"])[-1, 0]))
    return out


__all__ = ["rig_overrides", "compare_with_detailed", "LOADED_BODY", "Criteria", "Level", "level_overrides", "evaluate", "run_levels", "endurable", "lcf_figure"]
