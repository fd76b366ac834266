"""Scenario → numeric railway-vehicle model: contact tables of the profile pair (built once, then loaded from
the cache), the alignment table, the irregularity splines and the packed vehicle
(:func:`hpcrail.models.vehicle.build.build_vehicle`)."""
from __future__ import annotations

import numpy as np

from hpcrail.config.errors import ConfigError, ConfigIssue
from hpcrail.config.loading import Document
from hpcrail.kinds.railway_vehicle.schema import RailwayVehicleScenario
from hpcrail.models.vehicle.build import BodySpec, ElementSpec, VehicleModel, build_vehicle
from hpcrail.models.vehicle.track import (IrregularitySplines, irregularity_splines, no_irregularity,
                                          track_params)


def vehicle_specs(v) -> tuple[list[BodySpec], list[ElementSpec]]:
    """Bodies and elements of a validated ``vehicle`` block (:class:`~hpcrail.kinds.railway_vehicle.schema.Vehicle`)
    in the model's plain form; the reference point (x = 0) is the vehicle frame's origin."""
    bodies = []
    index = {}
    for b in v.bodies:
        t = v.body_types[b.type]
        index[b.name] = len(bodies)
        bodies.append(BodySpec(name=b.name, kind=t.kind, mass=t.mass_kg, Ixx=t.inertia_kgm2[0], Iyy=t.inertia_kgm2[1],
                               Izz=t.inertia_kgm2[2], x=float(b.x_m), z=float(b.z_m or 0.0)))
    elements = []
    for e, name in zip(v.elements, v.element_names()):
        t = v.element_types[e.type]
        table = t.table or []
        elements.append(ElementSpec(name=name, i=index[e.bodies[0]], j=index[e.bodies[1]], law=t.law, axis=t.axis,
                                    point=tuple(float(c) for c in e.at_m), K=t.stiffness, D=t.damping,
                                    Ks=t.series_stiffness, table_d=tuple(r[0] for r in table),
                                    table_f=tuple(r[1] for r in table),
                                    preload=None if t.preload == "static" else float(t.preload)))
    return bodies, elements


def contact_tables_of(sc: RailwayVehicleScenario, file: str = "(scenario)", loc: tuple = ("contact", "profiles")):
    """The LUT and KEC tables of the scenario's profile pair (cached; ~5 s to build the first time).  Profile
    files were resolved against the YAML naming them and hashed when the scenario was validated
    (:mod:`hpcrail.config.files`); they are read here and checked against that digest.  Raises
    :class:`ConfigError` (``file``: the scenario, ``loc``: where the pair sits in it) for profiles that cannot be
    used, a wheelset that does not fit the track, or contact that cannot be solved on the table grids."""
    from hpcrail.models.wheelrail.tables import contact_tables

    return contact_tables(sc.contact.profiles, Document(tree={}, root_file=file), loc=loc)


def track_of(sc: RailwayVehicleScenario):
    """Alignment table parameters of the scenario's track."""
    from hpcrail.models.track.geometry import build_track_table, sections_from_spec

    secs = sections_from_spec(sc.track.sections)
    return track_params(build_track_table(secs, sc.track.grid_m), sc.track.rail_spacing_m)


def irregularity_of(sc: RailwayVehicleScenario, file: str = "(scenario)") -> IrregularitySplines:
    """Splines of the scenario's PSD irregularity (zero for ``kind: none``): synthesised from the leading
    wheelset's start over ``length_m`` (default: the run length at the initial speed, 1.5 times with a free
    forward motion, plus 5 m), faded in over ``fade_in_m``."""
    from hpcrail.models.track.irregularity import synthesise

    irr = sc.track.irregularity
    if irr.kind != "psd":
        return no_irregularity()
    sim = sc.simulation
    run = sim.speed_mps * sim.duration_s * (1.5 if sim.longitudinal == "free" else 1.0) + 5.0
    length = irr.length_m if irr.length_m is not None else run
    lo, hi = irr.band()
    try:
        prof = synthesise(irr.spectrum, length, components=irr.components, method=irr.method, seed=irr.seed,
                          wavelength_min_m=lo, wavelength_max_m=hi, spacing_m=irr.spacing_m,
                          n_components=irr.n_components, start_m=sim.start_m, scale=irr.scale)
    except ValueError as exc:
        raise ConfigError([ConfigIssue(file, "track.irregularity", str(exc))]) from None
    prof = prof.faded(irr.fade_in_m, sim.start_m)
    return irregularity_splines(prof.s, dict(prof.values))


def build_railway_vehicle(sc: RailwayVehicleScenario, file: str = "(scenario)",
                          contact_loc: tuple = ("contact", "profiles")) -> VehicleModel:
    """The numeric model of a validated scenario.  Raises :class:`ConfigError` (naming the field) for a
    vehicle without static equilibrium or an irregularity that cannot be synthesised."""
    from hpcrail.models.wheelrail import hertz

    tab = contact_tables_of(sc, file, contact_loc)
    pair = sc.contact.profiles
    bodies, elements = vehicle_specs(sc.vehicle)
    x_lead = max(b.x for b in bodies if b.kind == "wheelset")
    sim = sc.simulation
    try:
        model = build_vehicle(
            bodies, elements, wheelset_method=sc.contact.method, kec=tab.kec_params, lut=tab.lut_params,
            hk=hertz.contact_coef_params(pair.material.E_Pa, pair.material.nu), creep_law=tab.creep_params(),
            K_hertz=pair.flange_penalty.K_hertz_N_per_m1p5, D_damp=pair.flange_penalty.D_damp_Ns_per_m2,
            track=track_of(sc), irr=irregularity_of(sc, file), speed=sim.speed_mps, start_s=sim.start_m - x_lead,
            speed_mode=sim.longitudinal, spin_mode=sim.wheelset_spin, creep=sim.creep, gravity=sim.gravity_mps2,
            axle_torque=[sim.axle_torque_Nm] * len(sc.vehicle.wheelset_names()),
            coupler_points=np.asarray(sc.vehicle.coupler_points_m, float) - 0.0,
            initial_y=sim.initial.wheelset_lateral_mm * 1e-3, initial_psi=sim.initial.wheelset_yaw_mrad * 1e-3,
            fp_tol=sc.contact.fixed_point_tol, fp_maxit=sc.contact.fixed_point_max_iterations)
    except ValueError as exc:
        raise ConfigError([ConfigIssue(file, "vehicle", str(exc))]) from None
    # coupler points relative to the body that carries them
    P = model.params
    cb = P.cpl_body
    cpl = np.asarray(sc.vehicle.coupler_points_m, float) - np.array([P.b_x[cb], 0.0, P.b_z[cb]])
    model.params = P._replace(cpl_u=np.ascontiguousarray(cpl))
    model.contact_key = tab.key
    return model


__all__ = ["build_railway_vehicle", "vehicle_specs", "contact_tables_of", "track_of", "irregularity_of"]
