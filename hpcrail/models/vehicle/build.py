"""Parameters, state layout and set-up (static preloads, initial state) of the railway-vehicle model.

A vehicle is described by plain dataclasses (:class:`BodySpec`, :class:`ElementSpec`), independent of any
configuration schema: the ``railway_vehicle`` kind translates its YAML into them, and the mixed-train kind
will do the same for each detailed vehicle.  :func:`build_vehicle` packs them into the
:class:`VehicleParams` NamedTuple read by :mod:`hpcrail.models.vehicle.kernel` (float64/int64 arrays and
scalars: values are data, one compilation serves every vehicle, contact method and track).

State layout (offsets relative to the vehicle's first state, :class:`Layout`):

* ``[0] s`` arc length of the vehicle reference point (the car-body centre) [m], ``[1] v = ṡ`` [m/s];
* one block per body, in the order given: a rigid body (car body, bogie frame) has
  ``[y, z, φ, θ, ψ, ẏ, ż, φ̇, θ̇, ψ̇]`` (:data:`RIGID_BLOCK`), lateral and vertical displacement from its
  reference position in its own track frame [m] and roll, pitch, yaw relative to it [rad]; a wheelset has
  ``[y, ψ, ẏ, ψ̇, ω]`` (:data:`WHEELSET_BLOCK`), the independent coordinates of the embedded contact
  constraint (z and φ follow from y and the rails) and the absolute angular velocity ω about its axle
  [rad/s];
* one first-order state per damper with series stiffness: the damper stroke u [m] (massless node, as
  the vertical kind's series dampers, Yu et al. 2023 eq 16).

Every body's track frame sits at s_b = s + x_b (x_b its fixed longitudinal offset from the reference):
bodies have no relative longitudinal freedom (paper 004's X-component of the relative coordinates is zero);
the forward motion is one degree of freedom, prescribed (v̇ = 0, the holonomic constant-speed constraint of
paper 004 eqs 16 and 24) or free (driven by the applied and contact longitudinal forces).
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from hpcrail.models.vehicle.track import IrregularitySplines, TrackParams
from hpcrail.models.wheelrail.creep import CreepParams
from hpcrail.models.wheelrail.hertz import ContactCoefParams
from hpcrail.models.wheelrail.kec import KecParams
from hpcrail.models.wheelrail.lut import LutParams
from hpcrail.models.vehicle.layout import (  # noqa: F401  (re-exported: build.X is the public spelling)
    R_Y, R_Z, R_PHI, R_TH, R_PSI, RIGID_BLOCK, W_Y, W_PSI, W_YD, W_PSID, W_OM, WHEELSET_BLOCK, S_POS, S_VEL,
    HEAD, KIND_RIGID, KIND_WHEELSET, LAW_SPRING_DAMPER, LAW_SERIES_DAMPER, LAW_BUMPSTOP, LAWS, AXES,
    METHOD_KEC, METHOD_LUT, METHODS, SPEED_PRESCRIBED, SPEED_FREE, SPIN_FREE, SPIN_ROLLING, D_BODY, D_WHEEL,
    DWS_ITER, DWS_KEC, DWS_CLAMP, DWS_SUMY, DWS_OMEGA, DWS_Z, DWS_PHI, DWS_ZDOT, DWS_PHIDOT, D_WS, WORK_BODY,
    WORK_WS, DW_Q, DW_Y, DW_N, DW_XI_X, DW_XI_Y, DW_SPIN, DW_SW, DW_SR, DW_GAMMA, DW_FLANGE, DW_DELTA, DW_FX,
    DW_NFLANGE, DW_R, DW_TGAMMA,
)


@dataclasses.dataclass
class BodySpec:
    """A rigid body.  ``kind``: ``"rigid"`` (car body, bogie frame: 5 degrees of freedom) or ``"wheelset"``
    (2 independent + spin).  Mass [kg] and principal inertias [kg m²] about axes parallel to the track
    frame; ``x`` [m] longitudinal position of the centre in the vehicle (forward +); ``z`` [m] height of the
    centre of gravity above the plane of the rails (wheelsets: given by the contact, ignored)."""

    name: str
    kind: str
    mass: float
    Ixx: float
    Iyy: float
    Izz: float
    x: float
    z: float = 0.0


@dataclasses.dataclass
class ElementSpec:
    """A suspension element between bodies ``i`` and ``j`` (indices into the body list), acting along (or,
    for ``r*`` axes, about) an axis of body i's track frame (paper 004 eqs 27-31 linearised about the
    reference configuration: the deformation is the relative displacement of its end points along the axis,
    so geometric stiffness of preloaded springs is not modelled).

    ``point`` (x, y, z) [m]: where both end points coincide in the reference configuration (vehicle frame:
    x forward from the reference, y left, z above the rails).  ``law``: ``spring_damper`` (f = K d + D ḋ),
    ``series_damper`` (f = K d + K_s (d - u), c u̇ = K_s (d - u): a damper D with a series stiffness K_s in
    parallel with K) or ``bumpstop`` (f = F_table(d) + K d + D ḋ).  Forces in N (moments in N m for rotations),
    d in m (rad).  ``preload``: None = solved for the static equilibrium (vertical springs), else a constant
    force [N]."""

    name: str
    i: int
    j: int
    law: str
    axis: str
    point: tuple
    K: float = 0.0
    D: float = 0.0
    Ks: float = 0.0
    table_d: tuple = ()
    table_f: tuple = ()
    preload: float | None = 0.0


class VehicleParams(NamedTuple):
    """Everything the kernels read (see the module docstring of :mod:`hpcrail.models.vehicle`)."""

    # sizes, modes
    n_body: int
    n_ws: int
    n_el: int
    n_state: int
    n_work: int
    speed_mode: int
    spin_mode: int
    creep_on: float
    gravity: float
    # bodies [n_body]
    b_kind: np.ndarray
    b_ws: np.ndarray
    b_off: np.ndarray
    b_mass: np.ndarray
    b_I: np.ndarray          # float64[n_body, 3]: Ixx, Iyy, Izz
    b_x: np.ndarray
    b_z: np.ndarray          # reference height of the centre above the rails (wheelsets: centred contact)
    m_total: float
    # wheelsets [n_ws]
    w_body: np.ndarray
    w_method: np.ndarray
    w_r0: np.ndarray
    w_torque: np.ndarray
    # contact
    kec: KecParams
    lut: LutParams
    hk: ContactCoefParams
    creep_law: CreepParams   # the creep-force law and its parameters (creep.CREEP_LAWS)
    K_hertz: float
    D_damp: float
    fp_tol: float
    fp_maxit: int
    # elements [n_el]
    e_i: np.ndarray
    e_j: np.ndarray
    e_axis: np.ndarray
    e_law: np.ndarray
    e_uP: np.ndarray         # float64[n_el, 3]: end point on body i relative to its centre (body axes)
    e_uQ: np.ndarray
    e_K: np.ndarray
    e_D: np.ndarray
    e_Ks: np.ndarray
    e_F0: np.ndarray
    e_node: np.ndarray       # state offset of the series node (-1: none)
    e_tab: np.ndarray        # bumpstop table (-1: none)
    tab_n: np.ndarray        # int64[nt] breakpoints per table
    tab_x: np.ndarray        # float64[nt, m]
    tab_c: np.ndarray        # float64[nt, m, 4] piecewise-cubic coefficients per interval
    # track
    track: TrackParams
    irr: IrregularitySplines
    # external forces: coupler points on body cpl_body (body axes, float64[2, 3])
    cpl_body: int
    cpl_u: np.ndarray


@dataclasses.dataclass
class Layout:
    """Names and offsets of the states and outputs of one vehicle."""

    body_names: list
    body_kinds: list
    wheelset_names: list
    wheel_names: list
    element_names: list
    body_off: np.ndarray
    node_off: np.ndarray
    n_state: int

    def state_names(self) -> list[str]:
        names = ["s", "v"]
        for b, k in zip(self.body_names, self.body_kinds):
            if k == "wheelset":
                names += [f"{b}.{q}" for q in ("y", "psi", "ydot", "psidot", "omega")]
            else:
                names += [f"{b}.{q}" for q in ("y", "z", "phi", "theta", "psi", "ydot", "zdot", "phidot",
                                                "thetadot", "psidot")]
        for e, o in zip(self.element_names, self.node_off):
            if o >= 0:
                names.append(f"{e}.stroke")
        return names


@dataclasses.dataclass
class VehicleModel:
    """A built vehicle: parameters, initial state, layout and set-up notes."""

    params: VehicleParams
    y0: np.ndarray
    layout: Layout
    static_wheel_load: np.ndarray     # float64[2 n_ws] Q0 [N]
    notes: list
    contact_key: str = ""


# --------------------------------------------------------------------------------------------------
def _pchip_table(d: np.ndarray, f: np.ndarray):
    """Monotone piecewise-cubic (PCHIP) coefficients of a force table f(d): float64[m-1, 4] for
    f = c0 + c1 u + c2 u² + c3 u³ on [d_i, d_{i+1}), u = d - d_i."""
    from scipy.interpolate import PchipInterpolator

    p = PchipInterpolator(d, f, extrapolate=True)
    c = np.empty((d.size - 1, 4))
    c[:, 0] = p.c[3]
    c[:, 1] = p.c[2]
    c[:, 2] = p.c[1]
    c[:, 3] = p.c[0]
    return c


def table_force(d: float, x: np.ndarray, c: np.ndarray) -> float:
    """Python evaluation of a bumpstop table (for tests and figures): linear beyond the ends."""
    m = x.size
    if d <= x[0]:
        return float(c[0, 0] + c[0, 1] * (d - x[0]))
    if d >= x[m - 1]:
        u = x[m - 1] - x[m - 2]
        i = m - 2
        f1 = c[i, 0] + u * (c[i, 1] + u * (c[i, 2] + u * c[i, 3]))
        s1 = c[i, 1] + u * (2 * c[i, 2] + 3 * u * c[i, 3])
        return float(f1 + s1 * (d - x[m - 1]))
    i = int(np.searchsorted(x, d, side="right") - 1)
    u = d - x[i]
    return float(c[i, 0] + u * (c[i, 1] + u * (c[i, 2] + u * c[i, 3])))


def _static_preloads(bodies, elements, uP, uQ, gravity: float) -> tuple[np.ndarray, float]:
    """Preloads of the elements whose ``preload`` is None such that every rigid body is in equilibrium
    (vertical force, roll and pitch moments) in the reference configuration on level straight track
    (least-norm solution; wheelsets rest on their contacts).  Returns (F0 float64[n_el], residual [N])."""
    rig = [b for b, s in enumerate(bodies) if s.kind == "rigid"]
    free = [e for e, s in enumerate(elements) if s.preload is None]
    F0 = np.array([0.0 if s.preload is None else float(s.preload) for s in elements])
    if not rig:
        return F0, 0.0
    row = {b: k for k, b in enumerate(rig)}
    nr = 3 * len(rig)

    def gen(e, f):
        """(F_z, M_x, M_y) of an element force f on its bodies (force on P: -f a, on Q: +f a)."""
        s = elements[e]
        out = np.zeros(nr)
        ax = np.zeros(3)
        ax[AXES[s.axis] % 3] = 1.0
        rot = AXES[s.axis] >= 3
        for body, u, sign in ((s.i, uP[e], -1.0), (s.j, uQ[e], 1.0)):
            if body not in row:
                continue
            k = 3 * row[body]
            if rot:
                m = sign * f * ax
                out[k:k + 3] += (0.0, m[0], m[1])
            else:
                F = sign * f * ax
                M = np.cross(u, F)
                out[k:k + 3] += (F[2], M[0], M[1])
        return out

    b = np.zeros(nr)
    for body in rig:
        b[3 * row[body]] -= bodies[body].mass * gravity
    for e, s in enumerate(elements):
        if s.preload is not None and s.preload != 0.0:
            b += gen(e, float(s.preload))
    if free:
        G = np.column_stack([gen(e, 1.0) for e in free])
        sol, *_ = np.linalg.lstsq(G, -b, rcond=None)
        F0[free] = sol
        res = float(np.max(np.abs(G @ sol + b)))
    else:
        res = float(np.max(np.abs(b)))
    return F0, res


def build_vehicle(bodies: list[BodySpec], elements: list[ElementSpec], *, wheelset_method: str | list,
                  kec: KecParams, lut: LutParams, hk: ContactCoefParams, creep_law: CreepParams, K_hertz: float,
                  D_damp: float, track: TrackParams, irr: IrregularitySplines, speed: float, start_s: float,
                  speed_mode: str = "prescribed", spin_mode: str = "free", creep: bool = True,
                  gravity: float = 9.81, axle_torque: list | None = None, coupler_points=None,
                  initial_y: float = 0.0, initial_psi: float = 0.0, fp_tol: float = 1e-10,
                  fp_maxit: int = 60) -> VehicleModel:
    """Pack a vehicle into :class:`VehicleParams` and its initial state.

    ``wheelset_method``: ``"kec"`` or ``"lut"`` (one name, or one per wheelset).  Contact tables from
    :func:`hpcrail.models.wheelrail.tables.contact_tables`; ``K_hertz`` [N/m^1.5], ``D_damp`` [N s/m²]: LUT
    flange penalty (paper 004 eq 20).  ``speed`` [m/s]: initial (and, prescribed, constant) forward speed;
    ``start_s`` [m]: arc length of the reference point (car-body centre) at t = 0.  ``axle_torque`` [N m]
    per wheelset (driving +, free speed mode).  ``coupler_points`` float64[2, 3] on the first rigid body
    (body axes, front then rear) where :func:`~hpcrail.models.vehicle.kernel.vehicle_eval` applies the
    external coupler forces.  ``initial_y`` [m], ``initial_psi`` [rad]: lateral shift and yaw of every
    wheelset at t = 0 (the rest of the vehicle in its reference position).  ``fp_tol`` [-], ``fp_maxit``:
    tolerance (relative to the wheel loads) and iteration cap of the normal/creep-force fixed point.

    Raises ValueError for an inconsistent description (unknown law/axis/method, element joining a body to
    itself, no static equilibrium for the preloads)."""
    from hpcrail.models.vehicle.kernel import centred_contact

    nb = len(bodies)
    if nb == 0:
        raise ValueError("a vehicle needs at least one body")
    kinds = [b.kind for b in bodies]
    for b in bodies:
        if b.kind not in ("rigid", "wheelset"):
            raise ValueError(f"body {b.name!r}: kind must be rigid or wheelset, got {b.kind!r}")
    ws_bodies = [k for k, b in enumerate(bodies) if b.kind == "wheelset"]
    nw = len(ws_bodies)
    if nw == 0:
        raise ValueError("a vehicle needs at least one wheelset")
    methods = [wheelset_method] * nw if isinstance(wheelset_method, str) else list(wheelset_method)
    if len(methods) != nw or any(m not in METHODS for m in methods):
        raise ValueError(f"wheelset_method: one of {', '.join(METHODS)} (or one per wheelset), got {wheelset_method!r}")
    if speed_mode not in ("prescribed", "free") or spin_mode not in ("free", "rolling"):
        raise ValueError(f"speed_mode prescribed|free and spin_mode free|rolling, got {speed_mode!r}, {spin_mode!r}")
    if speed_mode == "free" and spin_mode == "rolling":
        raise ValueError("a free forward speed needs the wheelset spin as a degree of freedom (spin_mode free)")
    # state layout
    off = np.zeros(nb, dtype=np.int64)
    pos = HEAD
    for k, b in enumerate(bodies):
        off[k] = pos
        pos += WHEELSET_BLOCK if b.kind == "wheelset" else RIGID_BLOCK
    ne = len(elements)
    node = np.full(ne, -1, dtype=np.int64)
    for e, s in enumerate(elements):
        if s.law not in LAWS or s.axis not in AXES:
            raise ValueError(f"element {s.name!r}: law must be one of {', '.join(LAWS)} and axis one of "
                             f"{', '.join(AXES)}, got {s.law!r}, {s.axis!r}")
        if not (0 <= s.i < nb and 0 <= s.j < nb) or s.i == s.j:
            raise ValueError(f"element {s.name!r} must join two different bodies of the vehicle")
        if s.law == "series_damper":
            if s.Ks <= 0 or s.D <= 0:
                raise ValueError(f"element {s.name!r}: a series damper needs D > 0 and Ks > 0")
            node[e] = pos
            pos += 1
    n_state = pos
    # contact reference: wheelset centre height with the wheelset centred on a perfect track
    w_body = np.array(ws_bodies, dtype=np.int64)
    w_method = np.array([METHODS[m] for m in methods], dtype=np.int64)
    cc = np.array([centred_contact(kec, lut, int(m)) for m in w_method])
    z0 = cc[:, 0]
    r_roll = cc[:, 1]
    b_z = np.array([b.z for b in bodies], float)
    b_z[w_body] = z0
    b_x = np.array([b.x for b in bodies], float)
    # element end points relative to the body centres (reference configuration)
    uP = np.zeros((ne, 3))
    uQ = np.zeros((ne, 3))
    for e, s in enumerate(elements):
        p = np.asarray(s.point, float)
        if p.shape != (3,):
            raise ValueError(f"element {s.name!r}: point must be (x, y, z)")
        uP[e] = p - (b_x[s.i], 0.0, b_z[s.i])
        uQ[e] = p - (b_x[s.j], 0.0, b_z[s.j])
    F0, res = _static_preloads(bodies, elements, uP, uQ, gravity)
    m_ref = max(b.mass for b in bodies) * max(gravity, 1.0)
    if res > 1e-6 * m_ref:
        raise ValueError(f"no static equilibrium: the preloadable elements leave {res:.3g} N unbalanced (give "
                         "vertical springs with preload: null under every rigid body)")
    # bumpstop tables
    tabs = [e for e, s in enumerate(elements) if s.law == "bumpstop"]
    m = max([len(elements[e].table_d) for e in tabs], default=2)
    tab_n = np.zeros(max(len(tabs), 1), dtype=np.int64)
    tab_x = np.zeros((max(len(tabs), 1), max(m, 2)))
    tab_c = np.zeros((max(len(tabs), 1), max(m, 2), 4))
    e_tab = np.full(ne, -1, dtype=np.int64)
    for k, e in enumerate(tabs):
        s = elements[e]
        d = np.asarray(s.table_d, float)
        f = np.asarray(s.table_f, float)
        if d.size < 2 or d.size != f.size or np.any(np.diff(d) <= 0):
            raise ValueError(f"element {s.name!r}: the bumpstop table needs >= 2 increasing deflections, one "
                             "force each")
        tab_n[k] = d.size
        tab_x[k, :d.size] = d
        tab_c[k, :d.size - 1] = _pchip_table(d, f)
        e_tab[e] = k
    # wheelsets
    r0 = np.array([0.5 * (kec.r0 + kec.r0_r)] * nw)
    torque = np.zeros(nw) if axle_torque is None else np.asarray(axle_torque, float).reshape(nw)
    cpl = np.zeros((2, 3)) if coupler_points is None else np.asarray(coupler_points, float).reshape(2, 3)
    rig = [k for k, b in enumerate(bodies) if b.kind == "rigid"]
    cpl_body = rig[0] if rig else int(w_body[0])
    n_work = WORK_BODY * nb + WORK_WS * nw
    P = VehicleParams(
        n_body=nb, n_ws=nw, n_el=ne, n_state=int(n_state), n_work=int(n_work),
        speed_mode=SPEED_PRESCRIBED if speed_mode == "prescribed" else SPEED_FREE,
        spin_mode=SPIN_FREE if spin_mode == "free" else SPIN_ROLLING, creep_on=1.0 if creep else 0.0,
        gravity=float(gravity),
        b_kind=np.array([KIND_WHEELSET if k == "wheelset" else KIND_RIGID for k in kinds], dtype=np.int64),
        b_ws=np.array([ws_bodies.index(k) if k in ws_bodies else -1 for k in range(nb)], dtype=np.int64),
        b_off=off, b_mass=np.array([b.mass for b in bodies], float),
        b_I=np.ascontiguousarray([[b.Ixx, b.Iyy, b.Izz] for b in bodies], dtype=float),
        b_x=b_x, b_z=b_z, m_total=float(sum(b.mass for b in bodies)),
        w_body=w_body, w_method=w_method, w_r0=r0, w_torque=torque,
        kec=kec, lut=lut, hk=hk, creep_law=creep_law, K_hertz=float(K_hertz), D_damp=float(D_damp),
        fp_tol=float(fp_tol), fp_maxit=int(fp_maxit),
        e_i=np.array([s.i for s in elements], dtype=np.int64), e_j=np.array([s.j for s in elements], dtype=np.int64),
        e_axis=np.array([AXES[s.axis] for s in elements], dtype=np.int64),
        e_law=np.array([LAWS[s.law] for s in elements], dtype=np.int64),
        e_uP=np.ascontiguousarray(uP), e_uQ=np.ascontiguousarray(uQ),
        e_K=np.array([s.K for s in elements], float), e_D=np.array([s.D for s in elements], float),
        e_Ks=np.array([s.Ks for s in elements], float), e_F0=F0, e_node=node, e_tab=e_tab,
        tab_n=tab_n, tab_x=np.ascontiguousarray(tab_x), tab_c=np.ascontiguousarray(tab_c),
        track=track, irr=irr, cpl_body=int(cpl_body), cpl_u=np.ascontiguousarray(cpl))
    # initial state
    y0 = np.zeros(n_state)
    x_front = float(np.max(b_x))
    y0[S_POS] = start_s
    y0[S_VEL] = speed
    for k in ws_bodies:
        y0[off[k] + W_Y] = initial_y
        y0[off[k] + W_PSI] = initial_psi
    for w, k in enumerate(ws_bodies):
        y0[off[k] + W_OM] = speed / r_roll[w]   # pure rolling of the centred wheelset
    del x_front
    names = [b.name for b in bodies]
    wn = [names[k] for k in ws_bodies]
    layout = Layout(body_names=names, body_kinds=kinds, wheelset_names=wn,
                    wheel_names=[f"{w} {side}" for w in wn for side in ("left", "right")],
                    element_names=[s.name for s in elements], body_off=off, node_off=node, n_state=int(n_state))
    model = VehicleModel(params=P, y0=y0, layout=layout, static_wheel_load=np.zeros(2 * nw), notes=[])
    from hpcrail.models.vehicle.kernel import static_wheel_loads

    model.static_wheel_load = static_wheel_loads(P, y0)
    return model



__all__ = ["BodySpec", "ElementSpec", "VehicleParams", "VehicleModel", "Layout", "build_vehicle", "table_force",
           "R_Y", "R_Z", "R_PHI", "R_TH", "R_PSI", "RIGID_BLOCK", "W_Y", "W_PSI", "W_YD", "W_PSID", "W_OM",
           "WHEELSET_BLOCK", "S_POS", "S_VEL", "LAWS", "AXES", "METHODS"]
