"""Scenario → numeric vertical model: :func:`build_vertical` assembles the vehicle of a validated
:class:`~hpcrail.kinds.vertical.schema.VerticalScenario`, finds its static equilibrium, forms the
state-space matrices and sets up the track input; :func:`build_profile` synthesises its PSD track
irregularity.  Sources: Yu et al. 2023 eqs (1)-(19); track inputs from
:mod:`hpcrail.models.track.irregularity` with the per-wheel delays x_j/V.
"""
from __future__ import annotations

import numpy as np

from hpcrail.config.errors import ConfigError, ConfigIssue
from hpcrail.kinds.vertical.schema import VerticalScenario
from hpcrail.models.track.irregularity import IrregularityProfile, synthesise
from hpcrail.models.vertical import assembly as asmmod
from hpcrail.models.vertical.build import KMH, VerticalModel, VerticalParams, acc_layout, initial_accumulator, terms_array
from hpcrail.models.vertical.kernel import TRACK_GRID, TRACK_HARMONIC, TRACK_NONE


def track_length_needed(sc: VerticalScenario, wheel_x: np.ndarray) -> float:
    """Track length [m] from the leading wheel's start to its end position (plus 1 m)."""
    return sc.simulation.speed_kmh * KMH * sc.simulation.duration_s + 1.0


def build_profile(sc: VerticalScenario, wheel_x: np.ndarray, file: str = "(scenario)") -> IrregularityProfile | None:
    """Synthesise the PSD irregularity of ``sc.track.irregularity`` on s ∈ [0, L] (the leading wheel
    starts at s = 0; wheels behind it see zero until they reach s = 0) with the fade-in applied.

    L is ``length_m`` if given (the same track for every speed in a sweep), else the run length.
    """
    irr = sc.track.irregularity
    if irr.kind != "psd":
        return None
    need = track_length_needed(sc, wheel_x)
    length = irr.length_m if irr.length_m is not None else need
    if length < need:
        raise ConfigError([ConfigIssue(file, "track.irregularity.length_m", f"the run needs {need:.1f} m of track "
                                       f"(speed × duration)", irr.length_m, f"≥ {need:.1f}")])
    lo, hi = irr.band()
    try:
        prof = synthesise(irr.spectrum, length, components=irr.components, method=irr.method, seed=irr.seed,
                          wavelength_min_m=lo, wavelength_max_m=hi, spacing_m=irr.spacing_m,
                          n_components=irr.n_components, start_m=0.0, scale=irr.scale)
    except ValueError as exc:
        raise ConfigError([ConfigIssue(file, "track.irregularity", str(exc))]) from None
    return prof.faded(irr.fade_in_m, 0.0)


def build_vertical(sc: VerticalScenario, file: str = "(scenario)", profile: IrregularityProfile | None = None
                   ) -> VerticalModel:
    """Assemble the vehicle, find its static equilibrium, set up the track input.

    ``profile``: use this synthesised profile instead of synthesising ``sc.track.irregularity``
    (batches of realisations).  Raises :class:`ConfigError` for a vehicle without static equilibrium.
    """
    asm = asmmod.assemble(sc.vehicle, file)
    g = sc.simulation.gravity_mps2
    X_s = asmmod.static_equilibrium(asm, g, file)
    ss = asmmod.state_space(asm, g, X_lin=X_s)
    sv, sst, sq = asm.slices()
    E = len(asm.elements)
    el_kind = np.array([e.kind for e in asm.elements], np.int64)
    el_k = np.array([e.stiffness if e.kind != asmmod.CONTACT_HERTZ else e.hertz_wheels / e.hertz_g ** 1.5
                     for e in asm.elements], float)
    el_c = np.array([e.damping for e in asm.elements], float)
    el_nt, el_dof, el_coef = terms_array([e.terms for e in asm.elements])
    d0 = np.array([asmmod.delta(e, X_s[sq]) for e in asm.elements], float)
    F0 = asmmod.element_forces(asm, X_s)
    fp_nt, fp_dof, fp_coef = terms_array(asm.floor_terms)
    V = sc.simulation.speed_kmh * KMH
    wx = asm.wheel_x
    xref = float(wx.max()) if wx.size else 0.0
    irr = sc.track.irregularity
    notes = []
    h = dict(h_amp=0.0, h_omega_t=0.0, h_omega_x=0.0, h_phase=0.0)
    g_x0, g_inv_dx, g_z, g_dz = 0.0, 1.0, np.zeros(2), np.zeros(2)
    prof = None
    if irr.kind == "none":
        kind = TRACK_NONE
    elif irr.kind == "harmonic":
        kind = TRACK_HARMONIC
        if irr.frequency_rad_per_s is not None:
            wt = irr.frequency_rad_per_s
            wxs = wt / V if V > 0 else 0.0
        else:
            wxs = 2 * np.pi / irr.wavelength_m
            wt = wxs * V
        h = dict(h_amp=irr.amplitude_mm * 1e-3, h_omega_t=wt, h_omega_x=wxs, h_phase=irr.phase_rad)
    else:
        kind = TRACK_GRID
        prof = profile if profile is not None else build_profile(sc, wx, file)
        g_x0, g_inv_dx = prof.x0, 1.0 / prof.dx
        g_z = np.ascontiguousarray(prof.values["vertical"]) if "vertical" in prof.values else np.zeros(prof.n)
        g_dz = np.ascontiguousarray(prof.slopes["vertical"]) if "vertical" in prof.slopes else np.zeros(prof.n)
        if "vertical" not in prof.values:
            notes.append("track.irregularity.components has no 'vertical' profile: the pitch-plane model sees "
                         "a smooth track")
    n_fp = fp_nt.size
    o1, o2, o3, o4, _ = acc_layout(n_fp, E, wx.size)
    p = VerticalParams(m=asm.m, n=asm.n, inv_mass=1.0 / asm.mass, el_kind=el_kind, el_k=el_k, el_c=el_c,
                       el_node=np.array([e.node for e in asm.elements], np.int64),
                       el_wheel=np.array([e.wheel for e in asm.elements], np.int64),
                       el_rsign=np.array([e.rail_sign for e in asm.elements], float),
                       el_nt=el_nt, el_dof=el_dof, el_coef=el_coef, el_d0=d0, el_F0=F0,
                       fp_nt=fp_nt, fp_dof=fp_dof, fp_coef=fp_coef, trk_kind=kind, speed=float(V),
                       s0=-xref, wheel_x=np.ascontiguousarray(wx, dtype=float), h_xref=xref, **h,
                       g_x0=float(g_x0), g_inv_dx=float(g_inv_dx), g_z=g_z, g_dz=g_dz,
                       o_elmax=o1, o_elmin=o2, o_wmax=o3, o_wmin=o4, scratch=np.zeros(asm.m + wx.size))
    y0 = np.zeros(asm.n_state)
    if sc.simulation.initial_state == "unloaded":
        y0 = -X_s.copy()
    linear = not any(e.kind == asmmod.CONTACT_HERTZ for e in asm.elements)
    return VerticalModel(params=p, asm=asm, gravity=g, x_static=X_s, ss=ss, y0=y0, acc0=initial_accumulator(p),
                         linear=linear, profile=prof, notes=notes)
