"""Assemble a vertical vehicle from its element list into the state-space form of Yu et al. 2023.

Degrees of freedom q (m of them): the bounce z [m] of every body and the pitch β [rad] of bodies
with a pitch inertia, in the order of ``vehicle.bodies`` (bounce before pitch).  z is positive
**upwards**; β is positive **nose up**, so the point of a body at longitudinal position x (vehicle
frame, forward +) moves by z + (x − x_body)·β.  Coordinates are absolute, measured from the
unloaded state in which every spring has its free length and every contact just touches.

Each damper with rubber joints in series (Yu et al. 2023 eq 16) contributes its stroke s [m] (the
relative displacement of its two massless end nodes, Δz = z_d1 − z_d2 in Yu et al. 2023 eq 17) as a
first-order state: with δ = z_top − z_bottom,

    c ṡ = k_e (δ − s),      compression force F = −k_e (δ − s),      k_e = 1/Σ(1/k_joint),

which is Yu et al. 2023 eq (18) (k_e = K_sd/2 for its two equal joints).  The state vector has the order
of Yu et al. 2023 eq (6)/(19):

    X = [q̇ (m),  s (n),  q (m)]ᵀ,      Ẋ = A X + B_u u(t) + B_ud u̇(t) + b_g          (eq 7, 19)

with u the rail irregularity under each wheel (with its delay x_j/V), u̇ its rate and b_g gravity.
Elements act with a compression force F (+ pushes the top point up and the bottom point down), so
by virtual work the generalised force on dof i is Q_i = F·∂δ/∂q_i (springs F = −k δ, dampers
F = −c δ̇, series dampers F = −k_e (δ − s), Hertz F = n_w (max(−δ, 0)/G)^{3/2}).  Nothing here
is specific to a vehicle layout: the quarter vehicle and the full vertical vehicle of Yu et al. 2023 are
two element lists (``configs/vertical``).
"""
from __future__ import annotations

import dataclasses
import re
from typing import Optional

import numpy as np

from hpcrail.config.errors import ConfigError, ConfigIssue

#: a point of the vehicle: ``"body"``, ``"body@x_m"`` (x along the vehicle, forward +) or ``"rail@wheel"``
POINT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:@\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?|"
                   r"[A-Za-z_][A-Za-z0-9_]*))?\s*$")


def parse_point(text: str) -> tuple[str, Optional[str]]:
    """``"body"`` → ("body", None); ``"body@9.0"`` → ("body", "9.0"); ``"rail@w1"`` → ("rail", "w1")."""
    m = POINT.match(text)
    return m.group(1), m.group(2)


# element kind codes shared with the numba kernels
SPRING, DAMPER, SERIES_DAMPER, CONTACT_LINEAR, CONTACT_HERTZ = range(5)
KIND_NAMES = ("spring", "damper", "series_damper", "contact_linear", "contact_hertz")
#: maximum number of (dof, coefficient) terms of δ = z_top − z_bottom (bounce + pitch at each end)
N_TERMS = 4


@dataclasses.dataclass
class ElementData:
    """One assembled element.  ``terms``: [(dof index, ∂δ/∂q)] with δ = z_top − z_bottom;
    ``wheel``: index of the rail input at one end (−1: none); ``rail_sign``: ∂δ/∂u (+1 rail on top,
    −1 rail at the bottom); ``node``: index of its stroke among the massless-node states (−1: none)."""

    name: str
    type: str
    kind: int
    stiffness: float = 0.0          #: k, K_H or the series stiffness k_e [N/m]
    damping: float = 0.0            #: c [N·s/m]
    hertz_g: float = 0.0            #: G [m/N^(2/3)]
    hertz_wheels: int = 1
    terms: list = dataclasses.field(default_factory=list)
    wheel: int = -1
    rail_sign: float = 0.0
    node: int = -1
    top: str = ""
    bottom: str = ""


@dataclasses.dataclass
class Assembly:
    """A vehicle as lists of dofs, elements, wheels and floor points (SI units)."""

    dof_names: list            #: e.g. "car_body.bounce", "car_body.pitch"
    dof_body: list             #: body name of each dof
    dof_is_pitch: np.ndarray   #: bool[m]
    mass: np.ndarray           #: float64[m] mass [kg] or pitch inertia [kg·m²]
    body_names: list
    body_bounce: np.ndarray    #: int64[B] dof index of each body's bounce
    body_pitch: np.ndarray     #: int64[B] dof index of each body's pitch (−1: none)
    body_x: np.ndarray         #: float64[B] centre position [m]
    elements: list             #: [ElementData]
    wheel_names: list
    wheel_x: np.ndarray        #: float64[W] [m]
    floor_names: list
    floor_terms: list          #: per floor point [(dof, coefficient)] of its vertical displacement

    @property
    def m(self) -> int:
        return self.mass.size

    @property
    def n(self) -> int:
        """Number of massless-node states (series-damper strokes)."""
        return sum(1 for e in self.elements if e.node >= 0)

    @property
    def n_state(self) -> int:
        return 2 * self.m + self.n

    @property
    def node_elements(self) -> list:
        return [e for e in self.elements if e.node >= 0]

    def state_names(self) -> list[str]:
        """Names of X = [q̇, s, q] (Yu et al. 2023 eq 6)."""
        return ([f"{d}.rate" for d in self.dof_names] + [f"{e.name}.stroke" for e in self.node_elements]
                + list(self.dof_names))

    def slices(self) -> tuple[slice, slice, slice]:
        """Slices of q̇, s and q in X."""
        m, n = self.m, self.n
        return slice(0, m), slice(m, m + n), slice(m + n, 2 * m + n)


def assemble(vehicle, file: str = "(scenario)") -> Assembly:
    """Build the :class:`Assembly` of a validated vehicle (:class:`~hpcrail.kinds.vertical.schema.Vehicle`:
    bodies, wheels, element types by ``kind`` — spring, damper, series_damper, contact — and elements
    between points).

    Raises :class:`ConfigError` for references the schema checks did not catch (defensive).
    """
    dof_names, dof_body, is_pitch, mass = [], [], [], []
    body_index, body_bounce, body_pitch, body_x = {}, [], [], []
    for b in vehicle.bodies:
        t = vehicle.body_types[b.type]
        body_index[b.name] = len(body_bounce)
        body_bounce.append(len(dof_names))
        dof_names.append(f"{b.name}.bounce")
        dof_body.append(b.name)
        is_pitch.append(False)
        mass.append(t.mass_kg)
        if t.pitch_inertia_kgm2 is not None:
            body_pitch.append(len(dof_names))
            dof_names.append(f"{b.name}.pitch")
            dof_body.append(b.name)
            is_pitch.append(True)
            mass.append(t.pitch_inertia_kgm2)
        else:
            body_pitch.append(-1)
        body_x.append(b.x_m)
    wheel_index = {w.name: i for i, w in enumerate(vehicle.wheels)}

    def point_terms(text: str, loc: str):
        """(terms, wheel index) of a point's vertical displacement."""
        name, arg = parse_point(text)
        if name == "rail":
            if arg not in wheel_index:
                raise ConfigError([ConfigIssue(file, loc, "unknown wheel", text)])
            return [], wheel_index[arg]
        if name not in body_index:
            raise ConfigError([ConfigIssue(file, loc, "unknown body", text)])
        bi = body_index[name]
        terms = [(body_bounce[bi], 1.0)]
        if arg is not None:
            lever = float(arg) - body_x[bi]
            if body_pitch[bi] >= 0 and lever != 0.0:
                terms.append((body_pitch[bi], lever))
        return terms, -1

    elements = []
    node = 0
    for i, (e, name) in enumerate(zip(vehicle.elements, vehicle.element_names())):
        typ = vehicle.element_types[e.type]
        top, wt = point_terms(e.top, f"vehicle.elements.{i}.top")
        bot, wb = point_terms(e.bottom, f"vehicle.elements.{i}.bottom")
        terms: dict[int, float] = {}
        for d, c in top:
            terms[d] = terms.get(d, 0.0) + c
        for d, c in bot:
            terms[d] = terms.get(d, 0.0) - c
        ed = ElementData(name=name, type=e.type, kind=-1, terms=[(d, c) for d, c in terms.items() if c != 0.0],
                         top=e.top, bottom=e.bottom)
        if wt >= 0:
            ed.wheel, ed.rail_sign = wt, 1.0
        elif wb >= 0:
            ed.wheel, ed.rail_sign = wb, -1.0
        if typ.kind == "spring":
            ed.kind, ed.stiffness = SPRING, typ.stiffness_N_per_m
        elif typ.kind == "damper":
            ed.kind, ed.damping = DAMPER, typ.damping_Ns_per_m
        elif typ.kind == "series_damper":
            ed.kind, ed.damping, ed.stiffness = SERIES_DAMPER, typ.damping_Ns_per_m, typ.series_stiffness
            ed.node = node
            node += 1
        elif typ.kind == "contact":
            if typ.law == "linear":
                ed.kind, ed.stiffness = CONTACT_LINEAR, typ.stiffness_N_per_m
            else:
                ed.kind, ed.hertz_g, ed.hertz_wheels = CONTACT_HERTZ, typ.hertz_constant_m_per_N2_3, typ.wheels
        if len(ed.terms) > N_TERMS:
            raise ConfigError([ConfigIssue(file, f"vehicle.elements.{i}", "too many degrees of freedom at the "
                                           "element's ends", len(ed.terms), f"≤ {N_TERMS}")])
        elements.append(ed)
    floor_names, floor_terms = [], []
    for i, fp in enumerate(vehicle.floor_point_list()):
        t, _ = point_terms(fp.point, f"vehicle.floor_points.{i}.point")
        floor_names.append(fp.name)
        floor_terms.append(t)
    return Assembly(dof_names=dof_names, dof_body=dof_body, dof_is_pitch=np.array(is_pitch, bool),
                    mass=np.array(mass, float), body_names=[b.name for b in vehicle.bodies],
                    body_bounce=np.array(body_bounce, np.int64), body_pitch=np.array(body_pitch, np.int64),
                    body_x=np.array(body_x, float), elements=elements,
                    wheel_names=[w.name for w in vehicle.wheels],
                    wheel_x=np.array([w.x_m for w in vehicle.wheels], float),
                    floor_names=floor_names, floor_terms=floor_terms)


@dataclasses.dataclass
class StateSpace:
    """Ẋ = A X + B_u u + B_ud u̇ + b_g (Yu et al. 2023 eq 7/19), linearised at ``X_lin`` for Hertz contacts.

    Shapes: A float64[N, N], B_u and B_ud float64[N, W], b_g float64[N] with N = 2m + n.
    """

    A: np.ndarray
    B_u: np.ndarray
    B_ud: np.ndarray
    b_g: np.ndarray

    @property
    def B_w(self) -> np.ndarray:
        """Input matrix of w = [u, u̇] (float64[N, 2W])."""
        return np.hstack([self.B_u, self.B_ud])


def delta(e: ElementData, q: np.ndarray, u: np.ndarray | None = None) -> float:
    """Relative displacement δ = z_top − z_bottom [m] of element ``e`` for dofs ``q``, rail inputs ``u``."""
    d = sum(c * q[i] for i, c in e.terms)
    if e.wheel >= 0 and u is not None:
        d += e.rail_sign * u[e.wheel]
    return float(d)


def hertz_force(e: ElementData, d: float) -> float:
    """Compression force of a Hertz contact [N]: n_w·(max(−δ, 0)/G)^{3/2}."""
    comp = max(-d, 0.0)
    return e.hertz_wheels * (comp / e.hertz_g) ** 1.5


def hertz_tangent(e: ElementData, d: float) -> float:
    """dF/d(−δ) of a Hertz contact [N/m] at δ."""
    comp = max(-d, 0.0)
    return 1.5 * e.hertz_wheels * comp ** 0.5 / e.hertz_g ** 1.5


def state_space(asm: Assembly, gravity: float, X_lin: np.ndarray | None = None,
                contact_stiffness: dict | None = None) -> StateSpace:
    """Assemble A, B_u, B_ud, b_g from the element list.

    Parameters
    ----------
    gravity : g [m/s²] (gravity acts on bounce dofs, −m g).
    X_lin : float64[N] absolute state at which Hertz contacts are linearised (tangent stiffness);
        ignored by linear elements.  Default: the unloaded state (zero tangent stiffness).
    contact_stiffness : optional {element index: stiffness} overriding Hertz contacts (used to find
        the static equilibrium).

    For linear elements the result is exact: f(X, t) = A X + B_u u + B_ud u̇ + b_g.
    Source: Yu et al. 2023 eqs (2)-(7); the quarter vehicle gives exactly its eqs (18)-(19).
    """
    m, n = asm.m, asm.n
    N = 2 * m + n
    W = asm.wheel_x.size
    sv, ss, sq = asm.slices()
    A = np.zeros((N, N))
    Bu = np.zeros((N, W))
    Bud = np.zeros((N, W))
    bg = np.zeros(N)
    inv_m = 1.0 / asm.mass
    q_lin = X_lin[sq] if X_lin is not None else np.zeros(m)
    for ei, e in enumerate(asm.elements):
        rows = [(i, c) for i, c in e.terms]
        k = c = 0.0
        if e.kind in (SPRING, CONTACT_LINEAR):
            k = e.stiffness
        elif e.kind == DAMPER:
            c = e.damping
        elif e.kind == CONTACT_HERTZ:
            if contact_stiffness is not None and ei in contact_stiffness:
                k = contact_stiffness[ei]
            else:
                k = hertz_tangent(e, delta(e, q_lin))
        if e.kind == SERIES_DAMPER:
            ke, cd = e.stiffness, e.damping
            js = ss.start + e.node
            for i, ci in rows:
                for j, cj in rows:
                    A[sv.start + i, sq.start + j] += -ke * ci * cj * inv_m[i]
                A[sv.start + i, js] += ke * ci * inv_m[i]
                if e.wheel >= 0:
                    Bu[sv.start + i, e.wheel] += -ke * ci * e.rail_sign * inv_m[i]
            for j, cj in rows:
                A[js, sq.start + j] += ke * cj / cd
            A[js, js] += -ke / cd
            if e.wheel >= 0:
                Bu[js, e.wheel] += ke * e.rail_sign / cd
            continue
        for i, ci in rows:
            for j, cj in rows:
                A[sv.start + i, sq.start + j] += -k * ci * cj * inv_m[i]
                A[sv.start + i, sv.start + j] += -c * ci * cj * inv_m[i]
            if e.wheel >= 0:
                Bu[sv.start + i, e.wheel] += -k * ci * e.rail_sign * inv_m[i]
                Bud[sv.start + i, e.wheel] += -c * ci * e.rail_sign * inv_m[i]
    for i in range(m):
        A[sq.start + i, sv.start + i] = 1.0
        if not asm.dof_is_pitch[i]:
            bg[sv.start + i] = -gravity
    return StateSpace(A=A, B_u=Bu, B_ud=Bud, b_g=bg)


def element_forces(asm: Assembly, X: np.ndarray, u: np.ndarray | None = None,
                   ud: np.ndarray | None = None) -> np.ndarray:
    """Compression force of every element [N] (float64[E]) at absolute state X (python reference)."""
    sv, ss, sq = asm.slices()
    q, v, s = X[sq], X[sv], X[ss]
    out = np.zeros(len(asm.elements))
    for k, e in enumerate(asm.elements):
        d = delta(e, q, u)
        if e.kind in (SPRING, CONTACT_LINEAR):
            out[k] = -e.stiffness * d
        elif e.kind == DAMPER:
            dd = sum(c * v[i] for i, c in e.terms) + (e.rail_sign * ud[e.wheel] if e.wheel >= 0 and ud is not None
                                                      else 0.0)
            out[k] = -e.damping * dd
        elif e.kind == SERIES_DAMPER:
            out[k] = -e.stiffness * (d - s[e.node])
        else:
            out[k] = hertz_force(e, d)
    return out


def static_equilibrium(asm: Assembly, gravity: float, file: str = "(scenario)") -> np.ndarray:
    """Absolute state X_s float64[N] at rest under gravity on a smooth track (f(X_s) = 0).

    Linear models: X_s = −A⁻¹ b_g.  Hertz contacts: the contact loads are first found with stiff
    linear contacts, then the secant stiffness P/δ(P) of each contact is used and the result is
    polished by Newton iterations on f(X) = 0 with the tangent Jacobian.

    Raises :class:`ConfigError` if the structure cannot carry its weight (singular stiffness, a
    Hertz contact in tension).
    """
    from hpcrail._numba import one_blas_thread   # (not at module level: the schema imports parse_point)

    with one_blas_thread():   # bits independent of the BLAS thread count
        return _static_equilibrium(asm, gravity, file)


def _static_equilibrium(asm: Assembly, gravity: float, file: str) -> np.ndarray:
    hertz = [i for i, e in enumerate(asm.elements) if e.kind == CONTACT_HERTZ]
    if gravity == 0.0:
        return np.zeros(asm.n_state)

    def solve(ss_):
        try:
            return np.linalg.solve(ss_.A, -ss_.b_g)
        except np.linalg.LinAlgError:
            raise ConfigError([ConfigIssue(file, "vehicle", "singular stiffness: the vehicle has no static "
                                           "equilibrium (a body or a pitch is not held)")]) from None

    if not hertz:
        return solve(state_space(asm, gravity))
    sq = asm.slices()[2]
    # 1. loads with stiff linear contacts (exact for statically determinate vehicles)
    Xr = solve(state_space(asm, gravity, contact_stiffness={i: 1e13 for i in hertz}))
    stiff = {}
    for i in hertz:
        e = asm.elements[i]
        P = -1e13 * delta(e, Xr[sq])
        if P <= 0:
            raise ConfigError([ConfigIssue(file, f"vehicle.elements.{i}", "contact carries no load under gravity "
                                           "(a Hertz contact cannot pull)", e.name)])
        comp = e.hertz_g * (P / e.hertz_wheels) ** (2.0 / 3.0)
        stiff[i] = P / comp
    X = solve(state_space(asm, gravity, contact_stiffness=stiff))
    # 2. Newton polish with the tangent Jacobian
    for _ in range(30):
        ssl = state_space(asm, gravity, X_lin=X)
        r = residual(asm, gravity, X)
        dX = np.linalg.solve(ssl.A, -r)
        X = X + dX
        if np.max(np.abs(dX)) < 1e-14 * max(1.0, np.max(np.abs(X))):
            break
    return X


def residual(asm: Assembly, gravity: float, X: np.ndarray, u=None, ud=None) -> np.ndarray:
    """f(X) (python reference of the numba right-hand side) float64[N]."""
    m = asm.m
    sv, ss, sq = asm.slices()
    F = element_forces(asm, X, u, ud)
    Q = np.zeros(m)
    out = np.zeros(asm.n_state)
    for k, e in enumerate(asm.elements):
        for i, c in e.terms:
            Q[i] += c * F[k]
        if e.node >= 0:
            out[ss.start + e.node] = -F[k] / e.damping
    g = np.where(asm.dof_is_pitch, 0.0, -gravity)
    out[sv] = Q / asm.mass + g
    out[sq] = X[sv]
    return out
