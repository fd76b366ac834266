"""Quasi-static lateral and vertical wheel forces of every vehicle of a consist from its in-train forces.

The screening model of TOES/TPS-type tools and of the FRA buff/draft studies (El-Sibaie 1992, 1993; Cole & Sun
2006 on wagon body and bogie rotation; Handbook of Railway Vehicle Dynamics 2nd ed. 2019, ch. 10 (steady
curving) and ch. 8 (derailment criteria)), written out here in full so that every step can be checked:

1. **Coupler angles from the route geometry** (:func:`coupler_geometry`).  Every vehicle j is a rigid body whose
   axis is the chord between its bogie centres, both on the track centre line at s_j ± b_j/2 (b_j the bogie
   centre distance); its coupler pivots lie on that axis at ±c_j, c_j = L_j/2 − l_c,j (L_j the length over
   coupler pulling faces, l_c the coupler length from the pivot to the pulling face).  The coupler of
   connection k is the straight link from the rear pivot of vehicle k to the front pivot of vehicle k + 1.  Its
   yaw angle to each car's axis (+ when its far end lies to the left of the car) gives the lateral force
   F sin α on that car at its pivot; the link's slope from the coupler-height difference Δh (loaded next to
   empty) gives the vertical force F Δh/ℓ (ℓ the link length).  This is the geometry of the noninertial
   coupler (Massa et al. 2012) and of the ``mixed_train`` kind (:mod:`hpcrail.models.mixed.kernel`) with the
   car centred on the chord of its bogie centres; UIC 530-2 / EN 15839 state their S-curve test in the same
   terms (vehicle lengths, bogie centres, coupler/buffer geometry).
2. **Bogie lateral forces** (moment balance of the car body about its centre, quasi-static): with the lateral
   coupler forces Y_f, Y_r at the pivots ±c and the unbalanced lateral acceleration a_ud = v²κ − g sin φ
   (κ the signed curvature, sin φ = cant / rail spacing: cant deficiency) acting on the whole mass m at the
   centre, the rails must supply T_1,2 = (m a_ud − Y_f − Y_r)/2 ∓ c (Y_f − Y_r)/b at the front/rear bogie
   (El-Sibaie 1993's "truck lateral force").
3. **Curving guidance forces of each bogie** (:func:`curving_table`): the steady-state curving of a bogie with
   its wheelsets held rigidly in the frame (three-piece bogie assumption), conical wheels (rolling-radius
   difference Δr(y): linear 2λy or a table), the creepages of steady curving (longitudinal ∓(eκ + Δr/(2r0)),
   lateral = −angle of attack), creep forces from Kalker's linear coefficient saturated by Polach's law (Polach
   1999, the law of the detailed model), a stiff flange beyond the flangeway clearance σ, and the external
   lateral force −T_b; lateral and yaw equilibrium give the bogie's shift and yaw and every wheel's lateral
   force (Boocock 1969; Elkins & Gostling 1977; Handbook ch. 10).  Solved once per vehicle type, curve radius
   and a grid of external forces, then interpolated.
4. **Wheel loads**: static Q0 = m g/(2 n_axles); roll transfer of the lateral loads above the rails (the
   inertial −m a_ud at the centre-of-gravity height and each bogie's share of the coupler lateral forces at
   coupler height), the vertical coupler components distributed by the lever rule to the bogies, and the pitch
   transfer of the longitudinal coupler forces at coupler height against the inertia at the CG height.
5. **Assessment quantities**: Y/Q per wheel, Y/Q per truck side (ΣY/ΣQ of one bogie side, the AAR/FRA "truck
   side L/V"), ΣY per wheelset against Prud'homme α (10 kN + P0/3), wheel unloading ΔQ/Q = (Q0 − Q)/Q0; a
   **jack-knife** flag when a limit is reached in buff with the coupler forces pushing the car out of the
   curve, a **stringline** flag when it is reached in draft with the couplers pulling it in.

Neglected (stated where the results are shown): the dynamics (it is quasi-static: impacts and oscillations are
the detailed model's business), the car body's lateral offset on its suspension, the centre-plate yaw
friction, the bogie masses' own lateral inertia apart from the car's, spin creep and the gravitational
stiffness of the tread, the suspension's roll flexibility, spirals (a route's curvature is piecewise
constant).  Sign conventions: lateral + left, forces of the wheel on the rail with Y + towards the field side
of that rail (a flanging wheel has Y > 0), in-train forces + draft.
"""
from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

G = 9.81


# ------------------------------------------------------------------------------------------------
# route geometry
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Alignment:
    """Horizontal alignment of a route: sections of constant signed curvature (+ left) and cant.

    ``s`` float64[n+1] section boundaries [m] (increasing), ``kappa`` float64[n] curvature [1/m], ``cant``
    float64[n] superelevation of the outer rail [m] (≥ 0), ``rail_spacing`` [m] distance of the rails'
    contact points (1.5 m for standard gauge).  Beyond either end the end sections continue.  The centre line
    starts at (0, 0) heading along +x; points are exact on every section (no table)."""

    s: np.ndarray
    kappa: np.ndarray
    cant: np.ndarray
    rail_spacing: float = 1.5

    def __post_init__(self):
        self.s = np.asarray(self.s, float)
        self.kappa = np.asarray(self.kappa, float)
        self.cant = np.asarray(self.cant, float)
        n = self.kappa.size
        if self.s.size != n + 1 or self.cant.size != n or n == 0 or np.any(np.diff(self.s) <= 0):
            raise ValueError("Alignment: needs n+1 increasing boundaries and n curvatures and cants")
        L = np.diff(self.s)
        h0 = np.concatenate([[0.0], np.cumsum(self.kappa * L)])
        x0 = np.zeros(n + 1)
        y0 = np.zeros(n + 1)
        for i in range(n):
            x, y = _arc(x0[i], y0[i], h0[i], self.kappa[i], L[i])
            x0[i + 1], y0[i + 1] = x, y
        self._x0, self._y0, self._h0 = x0[:n], y0[:n], h0[:n]
        # small-angle lateral coordinate W(s) = ∫ heading ds (exact to first order in the heading differences
        # between points a few tens of metres apart; a constant-curvature section adds κu²/2)
        w0 = np.concatenate([[0.0], np.cumsum(h0[:-1] * L + 0.5 * self.kappa * L * L)])
        self._w0 = w0[:n]

    @classmethod
    def from_sections(cls, start_m, end_m, radius_m, cant_m=None, rail_spacing: float = 1.5) -> "Alignment":
        """From contiguous sections: starts and ends [m], signed radii [m] (0 = tangent, + left), cants [m]."""
        start_m = np.asarray(start_m, float)
        r = np.asarray(radius_m, float)
        kappa = np.where(r == 0.0, 0.0, 1.0 / np.where(r == 0.0, 1.0, r))
        cant = np.zeros(r.size) if cant_m is None else np.abs(np.asarray(cant_m, float))
        return cls(np.append(start_m, float(np.asarray(end_m, float)[-1])), kappa, cant, rail_spacing)

    def index(self, s) -> np.ndarray:
        """Section index of each arc length ``s`` (the end sections extended)."""
        return np.clip(np.searchsorted(self.s, s, side="right") - 1, 0, self.kappa.size - 1)

    def point(self, s):
        """``(X, Y, heading)`` [m, m, rad] of the centre line at arc lengths ``s`` (any shape)."""
        s = np.asarray(s, float)
        i = self.index(s)
        return _arc(self._x0[i], self._y0[i], self._h0[i], self.kappa[i], s - self.s[i], heading=True)

    def lateral(self, s) -> np.ndarray:
        """Small-angle lateral coordinate W(s) = ∫₀ˢ θ du [m] of the centre line (θ the heading): the offset of a
        point B from the tangent at A is W(s_B) − W(s_A) − θ(s_A)(s_B − s_A), to first order in the heading
        change between them (≲ 0.2 rad over a coupled pair on R ≥ 150 m: relative error ≲ θ²/6)."""
        s = np.asarray(s, float)
        i = self.index(s)
        u = s - self.s[i]
        return self._w0[i] + self._h0[i] * u + 0.5 * self.kappa[i] * u * u

    def tables(self) -> tuple:
        """``(s, kappa, sin_cant, theta0, w0)`` float64 arrays of the sections for the numba kernel."""
        sc = np.sign(self.kappa) * np.minimum(self.cant / self.rail_spacing, 1.0)
        return (np.ascontiguousarray(self.s), np.ascontiguousarray(self.kappa), np.ascontiguousarray(sc),
                np.ascontiguousarray(self._h0), np.ascontiguousarray(self._w0))

    def curvature(self, s) -> np.ndarray:
        """Signed curvature [1/m] at ``s``."""
        return self.kappa[self.index(s)]

    def sin_cant(self, s) -> np.ndarray:
        """sin φ of the cant at ``s``, signed like the curvature (the raised rail is the outer one)."""
        i = self.index(s)
        return np.sign(self.kappa[i]) * np.minimum(self.cant[i] / self.rail_spacing, 1.0)

    @property
    def radii(self) -> np.ndarray:
        """The distinct signed curvatures of the route (float64[m])."""
        return np.unique(self.kappa)


def _arc(x0, y0, h0, kappa, u, heading=False):
    """End point of an arc of curvature ``kappa`` and length ``u`` from (x0, y0) heading h0 (exact; the chord
    u·sinc(κu/2) along h0 + κu/2)."""
    half = 0.5 * kappa * u
    chord = u * np.sinc(half / np.pi)
    a = h0 + half
    x = x0 + chord * np.cos(a)
    y = y0 + chord * np.sin(a)
    if heading:
        return x, y, h0 + kappa * u
    return x, y


# ------------------------------------------------------------------------------------------------
# vehicle data
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class RunningGear:
    """A bogie of one vehicle type for the steady-state curving of :func:`curving_table` (SI).

    ``axles`` per bogie (1 for a two-axle wagon's "bogie": its axle), ``wheelbase`` [m] first to last axle,
    ``rail_spacing`` 2e [m], ``wheel_radius`` r0 [m], ``conicity`` λ (Δr = 2λy) unless the table ``dr_y``/``dr``
    [m] gives Δr(y) (left minus right rolling radius at the wheelset's shift y, + left), ``flange_clearance``
    σ [m] (flange contact beyond |y| = σ), ``mu`` wheel/rail friction, ``wheel_load`` Q0 [N], ``f11``/``f22``
    Kalker's longitudinal and lateral creep coefficients G·a·b·C11, G·a·b·C22 [N] at Q0, ``flange_stiffness``
    [N/m], ``tan_gamma`` tan of the left wheel's contact angle (track frame, + towards the track centre) on the
    grid ``dr_y`` (the right wheel's at −y; the wheels push the rails outwards with Q tan γ; None: 0);
    ``yaw_stiffness`` [N m/rad] and ``yaw_friction`` [N m]: the car body's resistance to the bogie's rotation
    relative to it (secondary yaw stiffness; centre-plate or side-bearer friction moment), ``half_spacing``
    [m] half the bogie centre distance (the body's axis lies at ∓κ·half_spacing to the front/rear bogie's
    track tangent)."""

    axles: int
    wheelbase: float
    rail_spacing: float
    wheel_radius: float
    conicity: float
    flange_clearance: float
    mu: float
    wheel_load: float
    f11: float
    f22: float
    flange_stiffness: float = 1.0e8
    dr_y: tuple | None = None
    dr: tuple | None = None
    tan_gamma: tuple | None = None
    yaw_stiffness: float = 0.0
    yaw_friction: float = 0.0
    half_spacing: float = 0.0

    @property
    def x(self) -> np.ndarray:
        """Axle positions in the bogie frame [m], leading first (float64[axles])."""
        if self.axles == 1:
            return np.zeros(1)
        return np.linspace(0.5 * self.wheelbase, -0.5 * self.wheelbase, self.axles)

    def delta_r(self, y: np.ndarray) -> np.ndarray:
        """Rolling-radius difference Δr(y) [m] (left − right)."""
        if self.dr_y is None:
            return 2.0 * self.conicity * y
        return np.interp(y, np.asarray(self.dr_y), np.asarray(self.dr))

    def tan_gamma_left(self, y: np.ndarray) -> np.ndarray:
        """tan γ of the left wheel at shift ``y`` [m] (clamped to the flange clearance; 0 without a table)."""
        if self.tan_gamma is None:
            return np.zeros_like(np.asarray(y, float))
        yc = np.clip(y, -self.flange_clearance, self.flange_clearance)
        return np.interp(yc, np.asarray(self.dr_y), np.asarray(self.tan_gamma))


def polach_saturation(f_lin: np.ndarray, limit: np.ndarray | float) -> np.ndarray:
    """Polach's creep-force saturation (Polach 1999 eq 8 with k_A = k_S = 1): the resultant creep force
    μQ (2/π) (ε/(1+ε²) + atan ε), ε = (π/4) F_lin/(μQ), of a linear (Kalker) resultant ``f_lin`` [N] and the
    limit ``limit`` = μQ [N]; returns the ratio F/F_lin (1 at F_lin → 0)."""
    eps = 0.25 * np.pi * f_lin / limit
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (2.0 / np.pi) * (eps / (1.0 + eps * eps) + np.arctan(eps)) / (2.0 * eps)
    return np.where(eps > 1e-12, r, 1.0)


def _softplus(z):
    return np.logaddexp(0.0, z)


def _bogie_residual(g: RunningGear, kappa: float, E: np.ndarray, yb: np.ndarray, pb: np.ndarray, parts=False,
                    bogie: int = 1):
    """Lateral and yaw residuals of a bogie (κ ≥ 0: a left curve; ``bogie`` +1 the front, −1 the rear one) with
    external lateral force ``E`` [N] (+ left) at shift ``yb`` [m] and yaw ``pb`` [rad] of its frame (relative to
    the track tangent at its centre)."""
    x = g.x[None, :]
    e = 0.5 * g.rail_spacing
    y = yb[:, None] + x * pb[:, None] - 0.5 * kappa * x * x
    psi = pb[:, None] - kappa * x
    xlong = e * kappa + g.delta_r(y) / (2.0 * g.wheel_radius)     # left wheel's longitudinal creepage: −xlong
    fx = g.f11 * xlong                                            # creep force on the left wheel (right: −fx)
    fy = g.f22 * psi                                              # lateral creep force on each wheel
    lim = g.mu * g.wheel_load
    sat = polach_saturation(np.hypot(fx, fy), lim)
    fx = fx * sat
    fy = fy * sat
    w = 2e-4                                                      # flange smoothing width [m]
    k = g.flange_stiffness
    nl = -k * w * _softplus((y - g.flange_clearance) / w)        # left flange (wheelset shifted left)
    nr = k * w * _softplus((-g.flange_clearance - y) / w)        # right flange
    tl, tr = g.tan_gamma_left(y), g.tan_gamma_left(-y)
    nl = nl - g.wheel_load * tl                                   # + the normal forces' lateral components
    nr = nr + g.wheel_load * tr
    lat = 2.0 * fy + nl + nr
    r1 = lat.sum(axis=1) + E
    rel = pb + bogie * kappa * g.half_spacing
    r2 = (x * lat).sum(axis=1) - (e * 2.0 * fx).sum(axis=1) - g.yaw_stiffness * rel - g.yaw_friction * np.tanh(rel / 1e-4)
    if parts:
        return r1, r2, dict(y=y, psi=psi, fy=fy, fx=fx, nl=nl, nr=nr, tl=tl, tr=tr)
    return r1, r2


def curving_table(g: RunningGear, kappa: float, E: np.ndarray, bogie: int = 1):
    """Steady-state curving of a rigid bogie under external lateral forces ``E`` (float64[m], increasing, + left)
    on a curve of curvature ``kappa`` [1/m] (any sign: a right curve is solved mirrored); ``bogie`` +1 for the
    vehicle's front bogie, −1 for its rear one (the body's yaw resistance pulls them opposite ways).

    Returns a dict of float64 arrays: ``Y`` [m, axles, 2] force of each wheel on its rail (left, right; + towards
    the field side; with the static wheel load in the normal forces' lateral components Q0 tan γ), ``tan_gamma``
    [m, axles, 2] the wheels' tan γ, ``sum_y`` [m, axles] track shifting force of each wheelset (+ left), ``y``
    [m, axles] wheelset shifts [m], ``attack`` [m, axles] angles of attack [rad], ``converged`` bool[m] (the scaled
    equilibrium residual below 1e-6 of 2·axles·μQ0).  Unknowns: the bogie's shift and yaw; equations: its
    lateral and yaw equilibrium (the flange contact a stiff smoothed penalty), solved by damped Newton with
    continuation along ``E`` from the value nearest zero (:func:`hpcrail.models.safety.kernel.solve_grid`).
    Sources: Boocock 1969, Elkins & Gostling 1977 (steady curving); Polach 1999 (saturation)."""
    from hpcrail.models.safety.kernel import solve_grid

    E = np.ascontiguousarray(E, float)
    mirror = kappa < 0.0
    k = abs(kappa)
    Em = np.ascontiguousarray(-E[::-1] if mirror else E)
    n = Em.size
    lam = g.conicity if g.dr_y is None else max(float(np.interp(3e-3, g.dr_y, g.dr)) / 6e-3, 1e-3)
    y0 = float(np.clip(-0.5 * g.rail_spacing * k * g.wheel_radius / lam, -g.flange_clearance, g.flange_clearance))
    dr_y = np.zeros(0) if g.dr_y is None else np.ascontiguousarray(g.dr_y, float)
    dr = np.zeros(0) if g.dr is None else np.ascontiguousarray(g.dr, float)
    tg = np.zeros(0) if g.tan_gamma is None else np.ascontiguousarray(g.tan_gamma, float)
    yb, pb, res = np.empty(n), np.empty(n), np.empty(n)
    solve_grid(np.ascontiguousarray(g.x), k, Em, y0, 0.0, 0.5 * g.rail_spacing, g.wheel_radius, g.conicity, dr_y,
               dr, tg, g.flange_clearance, g.mu, g.wheel_load, g.f11, g.f22, g.flange_stiffness,
               np.array([bogie * k * g.half_spacing, g.yaw_stiffness, g.yaw_friction]), yb, pb, res)
    _r1, _r2, p = _bogie_residual(g, k, Em, yb, pb, parts=True, bogie=bogie)
    # forces of the wheels on the rails: the left rail's field side is +y, the right rail's -y
    yl = -(p["fy"] + p["nl"])
    yr = p["fy"] + p["nr"]
    sum_y = -(2.0 * p["fy"] + p["nl"] + p["nr"])
    Y = np.stack([yl, yr], axis=-1)
    tgam = np.stack([p["tl"], p["tr"]], axis=-1)
    yw = p["y"]
    att = p["psi"]
    conv = res < 1e-6
    if mirror:
        Y, sum_y, yw, att, conv = Y[::-1, :, ::-1], -sum_y[::-1], -yw[::-1], -att[::-1], conv[::-1]
        tgam = tgam[::-1, :, ::-1]
    return {"Y": Y, "sum_y": sum_y, "y": yw, "attack": att, "converged": conv, "tan_gamma": tgam}


@functools.lru_cache(maxsize=512)
def cached_table(g: RunningGear, kappa: float, bogie: int = 1, points: int = 401, e_limit: float = 2.0e6):
    """:func:`curving_table` of ``g`` on curvature ``kappa`` over a fixed grid of external forces (cached per
    process: a sweep's scenarios share their vehicle types and radii): ``points`` values E_s sinh(u), u uniform,
    up to ±``e_limit`` [N], E_s = μQ0 (dense where the creep forces saturate, 3 % apart at large |E| where the
    flange carries the rest linearly).  Returns ``(grid, table)``."""
    es = max(g.mu * g.wheel_load, 1.0)
    umax = math.asinh(e_limit / es)
    grid = es * np.sinh(np.linspace(-umax, umax, points | 1))
    grid[grid.size // 2] = 0.0                 # the middle node is exactly zero (the kernel's tangent shortcut)
    return grid, curving_table(g, kappa, grid, bogie)


# ------------------------------------------------------------------------------------------------
# the consist
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Consist:
    """Per-vehicle data of the quasi-static model (float64[N] unless said, N vehicles head first, SI).

    ``mass`` [kg]; ``length`` over coupler pulling faces; ``bogie_centres`` b (distance of the bogie centres);
    ``coupler_length`` l_c (pivot to pulling face); ``coupler_height`` and ``cg_height`` above the rails;
    ``gear`` int64[N]: index of each vehicle's :class:`RunningGear` in ``gears``; ``alpha`` Prud'homme's α
    (0.85 wagons, 1.0 locomotives); ``max_coupler_yaw`` [rad] the coupler's free swing (geometry criterion);
    ``endurable_lcf`` [N] endurable longitudinal compressive force (NaN: not given); ``body`` int64[N]: index
    of the car body's lateral law on each bogie in ``body_laws`` (−1: the body is held on its bogie centres);
    a law is ``(displacement [m], force [N])`` increasing arrays (odd: both signs) of the lateral force on the
    body at one bogie against its lateral displacement there (secondary suspension, bumpstops, bolster play);
    ``body_mass`` [kg] the mass that shifts with the body (its weight's moment loads the wheels; default: all)."""

    mass: np.ndarray
    length: np.ndarray
    bogie_centres: np.ndarray
    coupler_length: np.ndarray
    coupler_height: np.ndarray
    cg_height: np.ndarray
    gear: np.ndarray
    gears: list
    alpha: np.ndarray
    max_coupler_yaw: np.ndarray
    endurable_lcf: np.ndarray
    body: np.ndarray | None = None
    body_laws: list = dataclasses.field(default_factory=list)
    body_mass: np.ndarray | None = None

    def __post_init__(self):
        if self.body is None:
            self.body = np.full(self.mass.size, -1, np.int64)
        if self.body_mass is None:
            self.body_mass = self.mass

    @property
    def n(self) -> int:
        return int(self.mass.size)

    @property
    def pivot(self) -> np.ndarray:
        """Distance of the coupler pivots from the vehicle centre c = L/2 − l_c [m]."""
        return 0.5 * self.length - self.coupler_length


@dataclasses.dataclass(frozen=True)
class Criteria:
    """Limits of the quasi-static assessment: ``y_over_q`` per wheel (EN 14363 (Y/Q)_lim 0.8), ``truck_side``
    ΣY/ΣQ of a bogie side (AAR M-1001 ch. XI / FRA 49 CFR 213.333: 0.6), ``wheel_unloading`` ΔQ/Q (EN 14363,
    UIC 530-2: 0.6), ΣY against Prud'homme α (10 kN + P0/3) with the per-vehicle α of :class:`Consist`."""

    y_over_q: float = 0.8
    truck_side: float = 0.6
    wheel_unloading: float = 0.6


def coupler_geometry(align: Alignment, s: np.ndarray, veh: Consist, shift: np.ndarray | None = None) -> dict:
    """Coupler yaw angles and vertical slopes of a consist at centre positions ``s`` float64[T, N] [m], the car
    bodies displaced laterally by ``shift`` float64[T, N, 2] [m] (+ left) at their front and rear bogie (None:
    centred on their bogies).  Geometry to first order in the heading change along a coupled pair
    (:meth:`Alignment.lateral`); the angles themselves are exact functions of those positions.

    Returns float64[T, N] arrays ``yaw_front``, ``yaw_rear`` [rad] (angle of the link to the car body's axis, +
    when its far end lies to the left; NaN for the head's front and the tail's rear coupler), ``slope_front``,
    ``slope_rear`` (Δh/ℓ of the link towards the neighbour, + when the neighbour's pivot is higher) and
    float64[T, N−1] ``link_length`` [m]."""
    s = np.asarray(s, float)
    hb = 0.5 * veh.bogie_centres[None, :]
    w1 = align.lateral(s + hb)
    w2 = align.lateral(s - hb)
    phi = (w1 - w2) / (2.0 * hb)                  # axis heading (small-angle frame)
    w = 0.5 * (w1 + w2)                           # axis lateral at the centre
    if shift is not None:
        w = w + 0.5 * (shift[..., 0] + shift[..., 1])
        phi = phi + (shift[..., 0] - shift[..., 1]) / (2.0 * hb)
    c = veh.pivot[None, :]
    # link k: rear pivot of car k -> front pivot of car k+1 (x: arc length, y: small-angle lateral)
    dx = (s[:, 1:] + c[:, 1:]) - (s[:, :-1] - c[:, :-1])
    dy = (w[:, 1:] + c[:, 1:] * phi[:, 1:]) - (w[:, :-1] - c[:, :-1] * phi[:, :-1])
    ll = np.hypot(dx, dy - phi[:, :-1] * dx)      # the link's length (its offset from car k's axis)
    T, N = s.shape
    yaw_f = np.full((T, N), np.nan)
    yaw_r = np.full((T, N), np.nan)
    pk, pn = phi[:, :-1], phi[:, 1:]
    # rear coupler of car k: the link's offset from car k's axis over its length (dx < 0: it points backwards)
    yaw_r[:, :-1] = np.arctan2(dy - pk * dx, -dx)
    # front coupler of car k+1: the link reversed, against car k+1's axis
    yaw_f[:, 1:] = np.arctan2(-(dy - pn * dx), -dx)
    h = veh.coupler_height
    dh = (h[1:] - h[:-1])[None, :] / ll          # + when the car behind is higher
    sl_f = np.full((T, N), np.nan)
    sl_r = np.full((T, N), np.nan)
    sl_r[:, :-1] = dh
    sl_f[:, 1:] = -dh
    return {"yaw_front": yaw_f, "yaw_rear": yaw_r, "slope_front": sl_f, "slope_rear": sl_r, "link_length": ll}


def _coupler_loads(geo, Ff, Fr, veh, m_a_ud):
    """Lateral coupler forces on the car (front, rear), their shares C1, C2 at the bogies and the rails'
    lateral forces T1, T2 on the bogies (float64[T, N] each) — step 2 of the module docstring."""
    b = veh.bogie_centres[None, :]
    c = veh.pivot[None, :]
    Yf = Ff * np.sin(np.nan_to_num(geo["yaw_front"]))
    Yr = Fr * np.sin(np.nan_to_num(geo["yaw_rear"]))
    C1 = 0.5 * (Yf + Yr) + c * (Yf - Yr) / b
    C2 = 0.5 * (Yf + Yr) - c * (Yf - Yr) / b
    return Yf, Yr, C1, C2, 0.5 * m_a_ud - C1, 0.5 * m_a_ud - C2


def _body_shift(align, s0, veh, Ff, Fr, m_a_ud, *, iterations: int = 200, tol: float = 1e-6):
    """Lateral displacement of every compliant car body on its bogies (float64[T, N, 2] [m]) in equilibrium
    with the coupler forces at the angles it produces (fixed point, under-relaxed; the coupler's geometric
    stiffness F/ℓ makes buff amplify the shift — the lateral buckling EN 15839 guards against).  Returns
    ``(shift, converged)``."""
    T, N = s0.shape
    shift = np.zeros((T, N, 2))
    soft = veh.body >= 0
    if not soft.any():
        return shift, True
    inv = {}
    for li, (d, f) in enumerate(veh.body_laws):
        inv[li] = (np.asarray(f, float), np.asarray(d, float))
    conv = False
    for _ in range(iterations):
        geo = coupler_geometry(align, s0, veh, shift)
        _yf, _yr, C1, C2, _t1, _t2 = _coupler_loads(geo, Ff, Fr, veh, m_a_ud)
        H = np.stack([C1 - 0.5 * m_a_ud, C2 - 0.5 * m_a_ud], axis=-1)    # lateral load on the body at each bogie
        new = np.zeros_like(shift)
        for li, (f, d) in inv.items():
            sel = veh.body == li
            new[:, sel, :] = np.interp(H[:, sel, :], f, d)
        step = new - shift
        shift = shift + 0.5 * step
        if np.max(np.abs(step)) < tol:
            conv = True
            break
    return shift, conv


#: per-vehicle series of :func:`quasi_static` (float64[T, N])
SERIES = ("y_over_q", "truck_side", "wheel_unloading", "sum_y_ratio", "coupler_lateral_force", "yaw_front",
          "yaw_rear", "bogie_lateral_force")


def _kernel_path(align: Alignment, veh: Consist, crit: Criteria, s, v, ax, F, ok) -> dict:
    """:func:`quasi_static` of a consist of rigid car bodies by the numba kernel
    :func:`hpcrail.models.safety.kernel.qs_series` (one pass over samples and vehicles)."""
    from hpcrail.models.safety.kernel import qs_series

    T, N = s.shape
    kap = np.unique(align.kappa)
    kidx = np.searchsorted(kap, align.kappa).astype(np.int64)
    ng = len(veh.gears)
    amax = max(g.axles for g in veh.gears)
    P = None
    es = np.zeros(ng)
    umax = np.zeros(ng)
    gridE = None
    used = set(veh.gear.tolist())
    not_conv = 0
    for gi, g in enumerate(veh.gears):
        for bi, bs in ((0, 1), (1, -1)):
            for ki, kv in enumerate(kap):
                if gi not in used:
                    continue
                grid, tab = cached_table(g, float(kv), bs)
                if P is None:
                    P = grid.size
                    tabY = np.zeros((ng, 2, kap.size, P, amax, 2))
                    tabS = np.zeros((ng, 2, kap.size, P, amax))
                not_conv += int((~tab["converged"]).sum())
                tabY[gi, bi, ki, :, :g.axles, :] = tab["Y"]
                tabS[gi, bi, ki, :, :g.axles] = tab["sum_y"]
                es[gi] = max(g.mu * g.wheel_load, 1.0)
                umax[gi] = math.asinh(grid[-1] / es[gi])
                if gridE is None:
                    gridE = np.zeros((ng, P))
                gridE[gi] = grid
    sec_s, sec_k, sec_sc, sec_h0, sec_w0 = align.tables()
    gq = veh.gear
    nax = np.array([veh.gears[i].axles for i in gq], np.int64)
    r0 = np.array([veh.gears[i].wheel_radius for i in gq])
    Q0 = np.array([veh.gears[i].wheel_load for i in gq])
    sylim = veh.alpha * (10e3 + 2.0 * Q0 / 3.0)
    out = {k: np.empty((T, N)) for k in ("y_over_q", "truck_side", "wheel_unloading", "sum_y_ratio", "sum_y",
                                          "coupler_lateral_force", "bogie_lateral_force", "yaw_front", "yaw_rear",
                                          "worst_ratio", "curvature", "cant_deficiency_acc")}
    jack = np.empty((T, N), np.int8)
    string = np.empty((T, N), np.int8)
    c = np.ascontiguousarray
    qs_series(sec_s, sec_k, sec_sc, sec_h0, sec_w0, kidx, c(0.5 * veh.bogie_centres), c(veh.pivot), c(veh.mass),
              c(veh.coupler_height), c(veh.cg_height), c(gq.astype(np.int64)), nax, r0, Q0, c(sylim),
              0.5 * align.rail_spacing, tabY, tabS, gridE, es, umax, crit.y_over_q, crit.truck_side, crit.wheel_unloading,
              c(np.where(ok[:, None], s, 0.0)), c(np.where(ok[:, None], v, 0.0)),
              c(np.where(ok[:, None], np.nan_to_num(ax), 0.0)), c(np.where(ok[:, None], F, 0.0)), c(ok),
              out["y_over_q"], out["truck_side"], out["wheel_unloading"], out["sum_y_ratio"], out["sum_y"],
              out["coupler_lateral_force"], out["bogie_lateral_force"], out["yaw_front"], out["yaw_rear"],
              out["worst_ratio"], jack, string, out["curvature"], out["cant_deficiency_acc"])
    out.update(jackknife=jack, stringline=string, body_shift=np.zeros((T, N, 2)), not_converged=not_conv,
               body_converged=True)
    return out


def quasi_static(align: Alignment, veh: Consist, crit: Criteria, s: np.ndarray, v: np.ndarray, ax: np.ndarray,
                 F: np.ndarray, *, chunk: int = 256, wheels_of: int | None = None, engine: str = "auto") -> dict:
    """The quasi-static running-safety quantities of every vehicle at every sample (module docstring).

    ``s`` float64[T, N] vehicle centre positions along the route [m]; ``v`` float64[T, N] speeds [m/s]; ``ax``
    float64[T, N] longitudinal accelerations [m/s²]; ``F`` float64[T, N−1] in-train forces [N] (+ draft).  Rows
    with non-finite inputs give NaN.

    Returns float64[T, N] arrays: ``y_over_q`` (largest wheel Y/Q of the vehicle), ``truck_side`` (largest
    bogie-side ΣY/ΣQ), ``wheel_unloading`` (largest ΔQ/Q), ``sum_y_ratio`` (largest |ΣY|/Prud'homme limit),
    ``sum_y`` [N] (the largest wheelset |ΣY|), ``coupler_lateral_force`` [N] (lateral force of both couplers on
    the car, + left), ``bogie_lateral_force`` [N] (largest |T_b|), ``yaw_front``/``yaw_rear`` [rad],
    ``worst_ratio`` (largest ratio of the four quantities to their limits), int8 ``jackknife``/``stringline``
    (a limit reached in buff with the couplers pushing the car outwards / in draft pulling it inwards),
    ``curvature`` [1/m] and ``cant_deficiency_acc`` [m/s²] at the vehicle centre, float64[T, N, 2] ``body_shift``
    [m]; scalars ``not_converged`` (curving equilibria that did not converge) and ``body_converged``; with
    ``wheels_of`` = j the wheel forces of vehicle j: ``wheel_Y``, ``wheel_Q`` float64[T, 2 bogies, axles, 2 sides
    (left, right)] [N] and ``wheel_sum_y`` float64[T, 2, axles].  ``engine``: ``numba`` (the one-pass kernel of
    :func:`hpcrail.models.safety.kernel.qs_series`, rigid car bodies only), ``numpy`` (vectorised, every
    option), ``auto`` (the kernel where it applies).  Both give the same numbers to rounding (tested).  Raises
    ValueError on inconsistent shapes."""
    s = np.asarray(s, float)
    T, N = s.shape
    if v.shape != (T, N) or ax.shape != (T, N) or F.shape != (T, N - 1) or veh.n != N:
        raise ValueError("quasi_static: s, v, ax must be [T, N] and F [T, N-1] for the consist's N vehicles")
    ok = np.isfinite(s).all(axis=1) & np.isfinite(F).all(axis=1) & np.isfinite(v).all(axis=1)
    rigid = bool(np.all(veh.body < 0))
    if engine == "numba" and (not rigid or wheels_of is not None):
        raise ValueError("quasi_static: the numba kernel takes rigid car bodies and no wheels_of")
    if engine == "numba" or (engine == "auto" and rigid and wheels_of is None):
        return _kernel_path(align, veh, crit, s, np.asarray(v, float), np.asarray(ax, float), np.asarray(F, float), ok)
    s0 = np.where(ok[:, None], s, 0.0)
    Ff = np.zeros((T, N))
    Fr = np.zeros((T, N))
    Ff[:, 1:] = np.where(ok[:, None], F, 0.0)
    Fr[:, :-1] = np.where(ok[:, None], F, 0.0)
    m = veh.mass[None, :]
    b = veh.bogie_centres[None, :]
    c = veh.pivot[None, :]
    kc = align.curvature(s0)
    a_ud = np.where(ok[:, None], v * v, 0.0) * kc - G * align.sin_cant(s0)
    m_a_ud = m * a_ud
    shift, body_conv = _body_shift(align, s0, veh, Ff, Fr, m_a_ud)
    geo = coupler_geometry(align, s0, veh, shift if (veh.body >= 0).any() else None)
    Yf, Yr, C1, C2, T1, T2 = _coupler_loads(geo, Ff, Fr, veh, m_a_ud)
    Vf = Ff * np.nan_to_num(geo["slope_front"])
    Vr = Fr * np.nan_to_num(geo["slope_rear"])
    kb = np.stack([align.curvature(s0 + 0.5 * b), align.curvature(s0 - 0.5 * b)], axis=-1)   # [T, N, 2]
    Tb = np.stack([T1, T2], axis=-1)
    tables = {}
    not_conv = 0
    for gi, g in enumerate(veh.gears):
        sel = veh.gear == gi
        if not sel.any():
            continue
        for bi, bs in ((0, 1), (1, -1)):
            for kv in np.unique(kb[:, sel, bi]):
                grid, tab = cached_table(g, float(kv), bs)
                not_conv += int((~tab["converged"]).sum())
                tables[(gi, bi, float(kv))] = (grid, tab)
    nmax = max(g.axles for g in veh.gears)
    out = {k: np.full((T, N), np.nan) for k in ("y_over_q", "truck_side", "wheel_unloading", "sum_y_ratio", "sum_y")}
    Q0 = np.array([veh.gears[gi].wheel_load for gi in veh.gear])
    na = np.array([veh.gears[gi].axles for gi in veh.gear])
    r0 = np.array([veh.gears[gi].wheel_radius for gi in veh.gear])
    e = 0.5 * align.rail_spacing
    hc = veh.coupler_height[None, :]
    hg = veh.cg_height[None, :]
    sy_lim = veh.alpha * (10e3 + 2.0 * Q0 / 3.0)
    if wheels_of is not None:
        wY = np.full((T, 2, nmax, 2), np.nan)
        wQ = np.full((T, 2, nmax, 2), np.nan)
        wS = np.full((T, 2, nmax), np.nan)
    for t0 in range(0, T, chunk):
        sl = slice(t0, min(T, t0 + chunk))
        n_t = sl.stop - sl.start
        Y = np.full((n_t, N, 2, nmax, 2), np.nan)
        SY = np.full((n_t, N, 2, nmax), np.nan)
        for (gi, bi, kv), (grid, tab) in tables.items():
            mask = (veh.gear[None, :, None] == gi) & (kb[sl] == kv) & (np.arange(2) == bi)[None, None, :]
            if not mask.any():
                continue
            Ev = -Tb[sl][mask]
            na_g = veh.gears[gi].axles
            yv = np.empty((Ev.size, na_g, 2))
            syv = np.empty((Ev.size, na_g))
            for i in range(na_g):
                syv[:, i] = np.interp(Ev, grid, tab["sum_y"][:, i])
                for side in range(2):
                    yv[:, i, side] = np.interp(Ev, grid, tab["Y"][:, i, side])
            Y[:, :, :, :na_g, :][mask] = yv
            SY[:, :, :, :na_g][mask] = syv
        # wheel loads [n_t, N, 2 bogies, axles, 2 sides]
        nb = na[None, :]
        Vb1 = -(Vf[sl] * (0.5 + c / b) + Vr[sl] * (0.5 - c / b))
        Vb2 = -(Vf[sl] * (0.5 - c / b) + Vr[sl] * (0.5 + c / b))
        pitch = (hc * (Ff[sl] - Fr[sl]) - hg * m * np.where(ok[sl, None], ax[sl], 0.0)) / b
        dP = np.stack([Vb1 + pitch, Vb2 - pitch], axis=-1) / (2.0 * nb[..., None])           # per wheel
        # roll: the lateral loads above the axles (inertia at the CG, couplers at coupler height) shared by the
        # bogie's axles, plus each axle's own track shifting force at axle height
        rr = r0[None, :]
        inert = -0.5 * m_a_ud[sl]
        wshift = 0.5 * veh.body_mass[None, :, None] * G * shift[sl]                            # body weight offset
        above = (np.stack([inert * (hg - rr) + C1[sl] * (hc - rr), inert * (hg - rr) + C2[sl] * (hc - rr)],
                          axis=-1) + wshift) / (2.0 * e * nb[..., None])                        # [n_t, N, 2]
        roll = above[..., None] + SY * r0[None, :, None, None] / (2.0 * e)                      # [n_t, N, 2, ax]
        Qs = (Q0[None, :, None, None] + dP[..., None])[..., None] + np.stack([roll, -roll], axis=-1)
        Qsafe = np.maximum(Qs, 1e-2 * Q0[None, :, None, None, None])
        if wheels_of is not None:
            wY[sl] = Y[:, wheels_of]
            wQ[sl] = np.where(np.isfinite(Y[:, wheels_of]), Qs[:, wheels_of], np.nan)
            wS[sl] = SY[:, wheels_of]
        out["y_over_q"][sl] = np.nanmax((Y / Qsafe).reshape(n_t, N, -1), axis=-1)
        side_y = np.nansum(Y, axis=3)                                                           # [.., bogie, side]
        side_q = np.nansum(np.where(np.isfinite(Y), Qs, 0.0), axis=3)
        out["truck_side"][sl] = np.nanmax((side_y / np.maximum(side_q, 1e-2 * Q0[None, :, None, None])
                                           ).reshape(n_t, N, -1), axis=-1)
        unl = (Q0[None, :, None, None, None] - Qs) / Q0[None, :, None, None, None]
        out["wheel_unloading"][sl] = np.nanmax(np.where(np.isfinite(Y), unl, np.nan).reshape(n_t, N, -1), axis=-1)
        out["sum_y"][sl] = np.nanmax(np.abs(SY).reshape(n_t, N, -1), axis=-1)
        out["sum_y_ratio"][sl] = out["sum_y"][sl] / sy_lim[None, :]
    worst = np.maximum.reduce([out["y_over_q"] / crit.y_over_q, out["truck_side"] / crit.truck_side,
                               out["wheel_unloading"] / crit.wheel_unloading, out["sum_y_ratio"]])
    Fm = 0.5 * (Ff + Fr)
    ylat = Yf + Yr
    inward = ylat * np.sign(kc)
    crit_hit = worst >= 1.0
    dominant = np.abs(ylat) > np.abs(m_a_ud)
    jack = crit_hit & (Fm < 0) & (inward < 0) & dominant
    string = crit_hit & (Fm > 0) & (inward > 0) & dominant
    bad = ~ok[:, None]
    for k in out:
        out[k][np.broadcast_to(bad, out[k].shape)] = np.nan
    worst[np.broadcast_to(bad, worst.shape)] = np.nan
    res = dict(out)
    res.update(worst_ratio=worst, coupler_lateral_force=np.where(bad, np.nan, ylat),
               bogie_lateral_force=np.where(bad, np.nan, np.maximum(np.abs(T1), np.abs(T2))),
               yaw_front=np.where(bad, np.nan, geo["yaw_front"]), yaw_rear=np.where(bad, np.nan, geo["yaw_rear"]),
               jackknife=(jack & ~bad).astype(np.int8), stringline=(string & ~bad).astype(np.int8),
               curvature=np.where(bad, np.nan, kc), cant_deficiency_acc=np.where(bad, np.nan, a_ud),
               body_shift=shift, not_converged=not_conv, body_converged=bool(body_conv))
    if wheels_of is not None:
        res.update(wheel_Y=wY, wheel_Q=wQ, wheel_sum_y=wS)
    return res


def prudhomme(P0_N, alpha):
    """Prud'homme's limit α (10 kN + P0/3) [N] of the track shifting force (EN 14363 as quoted in
    :mod:`hpcrail.results.running_safety`)."""
    return alpha * (10e3 + np.asarray(P0_N, float) / 3.0)


def nadal(flange_angle_rad: float, mu: float) -> float:
    """Nadal's single-wheel climb limit (tan γ − μ)/(1 + μ tan γ) (Nadal 1908; Handbook ch. 8)."""
    t = math.tan(flange_angle_rad)
    return (t - mu) / (1.0 + mu * t)


__all__ = ["Alignment", "RunningGear", "Consist", "Criteria", "coupler_geometry", "curving_table", "quasi_static",
           "polach_saturation", "prudhomme", "nadal", "SERIES", "G"]
