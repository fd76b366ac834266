"""The quasi-static running-safety model (:mod:`hpcrail.models.safety.quasi_static`) applied to a mixed train: the
detailed vehicle's own geometry, wheel/rail pair and suspension, its neighbours as the ``mixed_train`` kernel sees
them, and the in-train forces of the run.  What the validation of the quasi-static model against the multibody
wagon (docs/validation.md, ``tests/test_quasi_static.py``) and the endurable-compressive-force study
(``hpcrail lcf``) use.

The neighbours' geometry is the kernel's (:mod:`hpcrail.models.mixed.kernel`): bogie centres at ±0.35 of their
length (``BOGIE_RATIO``), coupler pivots ``pivot_inset_m`` inside their coupler faces, no vertical coupler angle
(every coupler at the detailed vehicle's coupler height).
"""
from __future__ import annotations

import functools

import numpy as np

from hpcrail.models.safety.quasi_static import G, Alignment, Consist, Criteria, RunningGear, quasi_static

#: spirals of a track become this many constant-curvature pieces
SPIRAL_STEPS = 16


def track_alignment(track, before_m: float = 3000.0, after_m: float = 100_000.0) -> Alignment:
    """:class:`Alignment` of a ``railway_vehicle``/``mixed_train`` track (arc length 0 at its start): tangents and
    curves as they are (cant included), spirals in :data:`SPIRAL_STEPS` constant-curvature pieces (curvature and
    cant at each piece's middle), a tangent of ``before_m`` before the start and ``after_m`` after the end."""
    starts, ends, kap, cant = [-before_m], [0.0], [0.0], [0.0]
    pos = 0.0
    secs = track.sections
    kprev, cprev = 0.0, 0.0
    for i, s in enumerate(secs):
        if s.kind == "spiral":
            nxt = secs[i + 1] if i + 1 < len(secs) else None
            knext = nxt.curvature() if nxt is not None else 0.0
            cnext = abs(nxt.cant_m()) if nxt is not None and nxt.kind != "spiral" else 0.0
            h = s.length_m / SPIRAL_STEPS
            for q in range(SPIRAL_STEPS):
                w = (q + 0.5) / SPIRAL_STEPS
                starts.append(pos + q * h)
                ends.append(pos + (q + 1) * h)
                kap.append(kprev + (knext - kprev) * w)
                cant.append(cprev + (cnext - cprev) * w)
        else:
            kprev, cprev = s.curvature(), abs(s.cant_m())
            starts.append(pos)
            ends.append(pos + s.length_m)
            kap.append(kprev)
            cant.append(cprev)
        pos += s.length_m
    starts.append(pos)
    ends.append(pos + after_m)
    kap.append(0.0)
    cant.append(0.0)
    return Alignment(np.append(starts, ends[-1]), np.array(kap), np.array(cant), rail_spacing=track.rail_spacing_m)


@functools.lru_cache(maxsize=16)
def _profile_table(profiles_json: str):
    """:func:`hpcrail.models.safety.profiles.profile_table` of a profile pair given as JSON (cached per process)."""
    import json
    import tempfile
    from pathlib import Path

    import yaml

    from hpcrail.models.safety.profiles import profile_table

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "pair.yaml"
        p.write_text(yaml.safe_dump(json.loads(profiles_json)))
        ys, dr, tg, yfl = profile_table(p)
    return tuple(ys), tuple(dr), tuple(tg), yfl


def kalker_coefficients(Q: float, A: float = 1.09399, B: float = 0.358059, E: float = 2.1e11, nu: float = 0.28):
    """Kalker's f11 = G a b C11 and f22 = G a b C22 [N] of a Hertzian contact with curvature sums ``A``, ``B``
    [1/m] under the normal load ``Q`` [N] (defaults: S1002/UIC60 1:40 at the centred position, from hpcrail's
    KEC table of ``configs/wheelrail/s1002_uic60.yaml``).  Kalker 1967 coefficients, Hertz ellipse
    (:mod:`hpcrail.models.wheelrail.hertz`)."""
    from hpcrail.models.wheelrail.hertz import contact_coef_params, hertz_kalker

    a, b, c11, c22, _c23 = hertz_kalker(contact_coef_params(E, nu), A, B, Q)
    Gm = E / (2.0 * (1.0 + nu))
    return Gm * a * b * c11, Gm * a * b * c22


def body_yaw_stiffness(vehicle) -> float:
    """Yaw stiffness [N m/rad] between the car body and its first bogie frame: longitudinal springs at lateral
    offset d add K d², rotational springs about z their K (series dampers: no static moment)."""
    car = next(b.name for b in vehicle.bodies if vehicle.body_kind(b) == "rigid")
    frames = [b.name for b in vehicle.bodies if vehicle.body_kind(b) == "rigid" and b.name != car]
    if not frames:
        return 0.0
    k = 0.0
    for el in vehicle.elements:
        if set(el.bodies) != {car, frames[0]}:
            continue
        et = vehicle.element_types[el.type]
        if et.law == "spring_damper" and et.axis == "x":
            k += et.stiffness * el.at_m[1] ** 2
        elif et.law == "spring_damper" and et.axis == "rz":
            k += et.stiffness
    return k


def body_lateral_law(vehicle) -> tuple | None:
    """Lateral force on the car body at one bogie [N] against its lateral displacement there [m] (increasing
    arrays on ±70 mm) from the vehicle's elements between the car body and its first bogie frame: springs along
    ``y`` add K d, bumpstops their table, series dampers nothing (no static force).  None without such
    elements."""
    bodies = {b.name: b for b in vehicle.bodies}
    car = next(b.name for b in vehicle.bodies if vehicle.body_kind(b) == "rigid")
    frames = [b.name for b in vehicle.bodies if vehicle.body_kind(b) == "rigid" and b.name != car]
    if not frames:
        return None
    first = frames[0]
    d = np.linspace(-0.07, 0.07, 281)
    f = np.zeros_like(d)
    found = False
    for el in vehicle.elements:
        if set(el.bodies) != {car, first}:
            continue
        et = vehicle.element_types[el.type]
        if et.axis != "y":
            continue
        if et.law == "spring_damper":
            f += et.stiffness * d
            found = True
        elif et.law == "bumpstop":
            tab = np.asarray(et.table, float)
            f += np.interp(d, tab[:, 0], tab[:, 1]) + et.stiffness * d
            found = True
    del bodies
    return (d, f) if found else None


def detailed_running_gear(sc, d: int, Q0: float) -> RunningGear:
    """The bogie of detailed vehicle ``d`` as a :class:`RunningGear`: axles and wheelbase from its wheelsets'
    positions, the rolling-radius difference and flange clearance of its profile pair (hpcrail's contact tables),
    the pair's friction, Kalker's coefficients at the static wheel load ``Q0`` [N]."""
    dv = sc.detailed[d]
    v = dv.vehicle
    xs = sorted((b.x_m for b in v.bodies if v.body_kind(b) == "wheelset"), reverse=True)
    front = [x for x in xs if x > 0]
    prof = dv.contact.profiles
    ys, dr, tg, yfl = _profile_table(prof.model_dump_json())
    f11, f22 = kalker_coefficients(Q0)
    frames = [b for b in v.bodies if v.body_kind(b) == "rigid"][1:]
    half = max(abs(b.x_m) for b in frames) if frames else 0.0
    return RunningGear(axles=len(front), wheelbase=(max(front) - min(front)) if len(front) > 1 else 0.0,
                       yaw_stiffness=body_yaw_stiffness(v), half_spacing=half,
                       rail_spacing=sc.track.rail_spacing_m, wheel_radius=prof.placement.r0_m, conicity=0.0,
                       flange_clearance=yfl, mu=prof.friction.mu, wheel_load=Q0, f11=f11, f22=f22, dr_y=ys, dr=dr,
                       tan_gamma=tg)


def mixed_consist(sc, Q0: float, d: int = 0) -> Consist:
    """The consist of a mixed train for the quasi-static model, exact for detailed vehicle ``d`` (its bogie
    centres, pivots, coupler height, centre of gravity, suspension) and with the kernel's geometry for the
    others (see the module docstring); every vehicle shares the detailed vehicle's running gear (only the
    detailed vehicle's wheel forces are compared)."""
    from hpcrail.kinds.mixed_train.build import BOGIE_RATIO

    ltd = sc.ltd_scenario()
    names = ltd.vehicle_type_names()
    dv = sc.detailed[d]
    v = dv.vehicle
    j = dv.position - 1
    n = len(names)
    length = np.array([ltd.vehicle_types[t].length_m for t in names])
    mass = np.array([ltd.vehicle_types[t].mass_t * 1e3 for t in names])
    b = 2.0 * BOGIE_RATIO * length
    lc = np.full(n, dv.pivot_inset_m)
    frames = [bd for bd in v.bodies if v.body_kind(bd) == "rigid"]
    car = frames[0]
    b[j] = 2.0 * max(abs(bd.x_m) for bd in frames[1:]) if len(frames) > 1 else b[j]
    hc = np.full(n, float(v.coupler_points_m[0][2]))
    masses = np.array([v.body_types[bd.type].mass_kg for bd in v.bodies])
    z = np.array([bd.z_m if bd.z_m is not None else 0.0 for bd in v.bodies])
    r0 = dv.contact.profiles.placement.r0_m
    z = np.where([v.body_kind(bd) == "wheelset" for bd in v.bodies], r0, z)
    hg = np.full(n, float(np.sum(masses * z) / masses.sum()))
    gear = detailed_running_gear(sc, d, Q0)
    law = body_lateral_law(v)
    body = np.full(n, -1, np.int64)
    laws = []
    if law is not None:
        body[j] = 0
        laws.append(law)
    mb = mass.copy()
    mb[j] = v.body_types[car.type].mass_kg
    return Consist(mass=mass, length=length, bogie_centres=b, coupler_length=lc, coupler_height=hc, cg_height=hg,
                   body_mass=mb,
                   gear=np.zeros(n, np.int64), gears=[gear], alpha=np.full(n, sc.output.en14363.prudhomme_alpha),
                   max_coupler_yaw=np.full(n, np.radians(15.0)), endurable_lcf=np.full(n, np.nan), body=body,
                   body_laws=laws)


def detailed_quasi_static(sc, values: dict, t: np.ndarray, d: int = 0) -> dict:
    """The quasi-static quantities of detailed vehicle ``d`` of a mixed-train run from the run's own in-train
    forces at the vehicle (``front_coupler_force``/``rear_coupler_force``), its position (``distance`` of the
    leading wheelset) and the lead vehicle's speed, the other couplers' forces taken equal to the nearer of the
    two (a steady consist).  ``values``: the run's outputs (arrays with the ``detailed_vehicle`` axis); ``t`` their
    sample times [s].  Returns the dict of :func:`~hpcrail.models.safety.quasi_static.quasi_static` restricted to
    the vehicle (float64[T] series) plus ``Q0`` [N]."""
    dv = sc.detailed[d]
    j = dv.position - 1
    Q0 = float(np.mean(np.asarray(values["static_wheel_load"])[d]))
    veh = mixed_consist(sc, Q0, d)
    n = veh.n
    v = dv.vehicle
    x_lead = max(bd.x_m for bd in v.bodies if v.body_kind(bd) == "wheelset")
    sc_j = np.asarray(values["distance"])[:, d] - x_lead
    L = veh.length
    centres = np.concatenate([[0.0], -np.cumsum(0.5 * (L[:-1] + L[1:]))])
    s = sc_j[:, None] + (centres - centres[j])[None, :]
    spd = np.broadcast_to(np.asarray(values["head_speed"])[:, None], s.shape).copy()
    ff = np.nan_to_num(np.asarray(values["front_coupler_force"])[:, d])
    fr = np.nan_to_num(np.asarray(values["rear_coupler_force"])[:, d])
    F = np.empty((t.size, n - 1))
    F[:, :j] = ff[:, None]
    F[:, j:] = fr[:, None]
    if j > 0:
        F[:, j - 1] = ff
    ax = np.zeros_like(s)
    align = track_alignment(sc.track)
    out = quasi_static(align, veh, Criteria(y_over_q=sc.output.en14363.y_q_limit,
                                            wheel_unloading=sc.output.en14363.dq_q_limit), s, spd, ax, F,
                       wheels_of=j)
    res = {k: (a[:, j] if isinstance(a, np.ndarray) and a.ndim == 2 else a) for k, a in out.items()}
    res["Q0"] = Q0
    return res


__all__ = ["track_alignment", "kalker_coefficients", "body_lateral_law", "detailed_running_gear", "mixed_consist",
           "detailed_quasi_static", "G"]
