"""Wheel/rail contact of paper 004 (Yu et al. 2022): profiles, contact geometry, lookup tables (LUT),
knife-edge equivalent contact (KEC), Hertz, Kalker, the creep-force laws (Polach, FASTSIM), equivalent conicity.

Off-line (Python + numba): :mod:`.readers` (measured-profile exchange formats — plain point lists with header
metadata, SIMPACK, MiniProf — and the checks every profile passes), :mod:`.profiles` (S1002, UIC60 1:40;
quintic smoothing splines), :mod:`.geometry` (contact solver, eqs 12 and 15, both sides with their own profiles,
yaw, ``find_jumps``), :mod:`.lut` and :mod:`.kec` (table builders), :mod:`.tables` (cache, ``contact_tables``),
:mod:`.conicity` (EN 15302), :mod:`.report` (``hpcrail contact``'s dataset and figures), :mod:`.config` (the
profile-pair YAML schema: ``wheel``, ``rail`` and for an asymmetric pair ``wheel_right``, ``rail_right``).
On-line (numba, ``JIT_NRT_FREE``, no allocation): ``kec.kec_wheelset``, ``lut.lut_wheelset``,
``hertz.hertz_kalker`` / ``hertz.hertz_ellipse``, ``creep.creepages``, ``creep.yaw_offsets``,
``creep.creep_force`` (the laws of ``creep.CREEP_LAWS``: ``creep.polach``, ``creep.fastsim``),
``creep.contact_creep_forces``, ``creep.flange_penalty``.

Sign conventions (used everywhere, stated once)
------------------------------------------------
* Wheelset track frame: X forward (direction of travel), **Y to the left**, Z up.  "Left" is the +Y side.
* ``y``: lateral shift of the wheelset centre from the ideal track centre line, positive to the left;
  ``z``: height of the wheelset centre above the rail profile origins (≈ r0); ``φ``: roll, positive when
  the left wheel rises (rotation about +X).
* Rail irregularities per rail: ``y_l, y_r`` lateral (positive to the left), ``z_l, z_r`` vertical (positive
  up); ξ_a = (y_l + y_r)/2, ξ_g = y_l - y_r (gauge widening positive), ξ_v = (z_l + z_r)/2, ξ_c = z_l - z_r.
* Surface parameters as paper 004: s^w lateral from the wheel profile origin, s^r in the rail profile
  frame, both along +Y (the left wheel's flange is at negative s^w, the right wheel's at positive s^w).
* Contact angle γ: angle of the contact normal (pointing from the rail into the wheel) from the track Z
  axis, **positive when the normal leans towards the track centre** — both wheels positive on a coned tread,
  about 70° on the S1002 flange.
* Contact frame of a wheel (σ = +1 left, -1 right): t1 = (1, 0, 0), t2 = (0, cos γ, σ sin γ),
  n = (0, -σ sin γ, cos γ).  Creep forces F_x, F_y and the spin moment M_z are those of the rail on the
  wheel, along t1, t2 and about n; the normal force N acts on the wheel along n.  The force on the wheel in
  track-frame components is F_x t1 + F_y t2 + N n, applied at the contact point (C_DY, C_DZ of the record,
  relative to the wheelset centre), plus the moment M_z n.

Worked example (the on-line part of a multibody right-hand side)
----------------------------------------------------------------
::

    import numpy as np
    from numba import njit
    from hpcrail._numba import JIT_NRT_FREE
    from hpcrail.models.wheelrail import creep, hertz, kec, layout as L
    from hpcrail.models.wheelrail.config import load_profile_pair
    from hpcrail.models.wheelrail.tables import contact_tables

    cfg, doc = load_profile_pair("configs/wheelrail/s1002_uic60.yaml")
    tab = contact_tables(cfg, doc)            # built once (~5 s), then loaded from the cache
    K = tab.kec_params                        # (tab.lut_params for the LUT method)
    HK = hertz.contact_coef_params(cfg.material.E_Pa, cfg.material.nu)
    P = tab.creep_params()                    # the pair's friction.law: Polach 1999, μ = 0.2364

    @njit(**JIT_NRT_FREE)
    def wheelset_contact(K, HK, P, y, irr, pdot, x, out, N_wheel, V, v, w, Nrec, F):
        # z, φ, ∂(z, φ)/∂p, convective terms, contact records; x keeps the solution between calls
        kec.kec_wheelset(K, y, irr, pdot, x, out)
        for k in range(4):                     # normal force of each wheel shared by its two records
            Nrec[k] = N_wheel[k // 2] * out[L.CONTACT0 + k * L.N_REC + L.C_W]
        creep.contact_creep_forces(HK, P, out, Nrec, V, v[0], v[1], v[2], w[0], w[1], w[2], F)

    out = np.zeros(L.N_OUT); x = np.full(4, np.nan); Nrec = np.zeros(4); F = np.zeros((4, 8))
    irr = np.zeros(4); pdot = np.zeros(5)     # (y_l, y_r, z_l, z_r) and (ẏ, ẏ_l, ẏ_r, ż_l, ż_r)
    wheelset_contact(K, HK, P, 0.003, irr, pdot, x, out, np.array([5e4, 5e4]), 20.0,
                     np.array([20.0, 0.0, 0.0]), np.array([0.0, 20.0 / 0.46, 0.0]), Nrec, F)
    out[L.Z], out[L.DZ_DP + 0], F[0, :3]      # z, ∂z/∂y, (F_x, F_y, M_z) on the left tread

The constraint of the KEC method is eq 22 itself (solved inside ``kec_wheelset``); for a constraint
formulation with y as independent coordinate, ż = ∂z/∂p·ṗ and z̈ = ∂z/∂p·p̈ + out[CZ] (same for φ).  The LUT
method (``lut_wheelset``) gives z_clt, φ_clt (eqs 17-18) with the same derivative layout and a flange
record with the indentation δ and ∂δ/∂(y, z, φ) for the penalty ``creep.flange_penalty`` (eq 20).  The
layout of ``out`` is documented in :mod:`.layout`.
"""
