"""Contact lookup table (LUT, paper 004 eqs 14-21): tread contact solved off-line on a (y, ξ_g) grid,
flange contact as a Hertzian penalty on the tabulated maximum relative indentation.

**Off-line** (:func:`build_lut`).  The wheel profile is split at the tread/flange boundary u_split (found by
:func:`tread_flange_split`: the wheel point between the two contact points of the rigid two-point
contact jump with the largest rise of the contact angle — where the flange first touches).  On the grid of
paper 004 Table 10 (y ∈ [-18, 18] mm step 0.1 mm, ξ_g ∈ [-5, 5] mm step 1 mm) the *tread* contact of both
wheels (wheel regions u >= u_split) is solved with eq 12 (a tread end point touching the rail when the
tread's own tangent contact has run off the region), which gives z_clt, φ_clt and the tread contact
points (eq 14).  On the flange region (u <= u_split) the maximum relative indentation (eq 15) at that
wheelset position gives δ (negative: clearance) and the flange contact geometry.  Derivatives: ∂/∂y and
∂/∂ξ_g of z and φ exactly (implicit function theorem on eq 12), second derivatives by central differences
of the exact first ones, slopes of every other quantity by central differences.

**Interpolation** (on-line).  In y: quintic Hermite for z and φ (values, slopes, second derivatives: C2;
error O(Δy⁶)), cubic Hermite for the other quantities (C1).  In ξ_g: cubic Hermite with the exact ∂/∂ξ_g
for z and φ, linear for the rest.  Inside a cell that contains a rigid contact jump (tread two-point
contact, e.g. S1002/UIC60 at ±0.2 mm) the interpolant smooths the jump over that cell.

**On-line** (:func:`lut_wheelset`, ``JIT_NRT_FREE``).  Inputs y and the rail irregularities: ȳ = y - ξ_a,
ξ_a = (y_l + y_r)/2, ξ_g = y_l - y_r, ξ_v = (z_l + z_r)/2, ξ_c = z_l - z_r; z = z_clt(ȳ, ξ_g) + ξ_v and
φ = φ_clt(ȳ, ξ_g) + ξ_c/(2 L_r) (eq 18).  Output: :mod:`.layout`; the flange record carries δ corrected to
first order for the actual (z, φ) of the wheelset, δ = δ_tab + ∂δ/∂z (z - z_clt - ξ_v) + ∂δ/∂φ (φ - ...),
and ∂δ/∂(y, z, φ) for the penalty force f = K_hertz δ^1.5 + D_damp δ̇ δ (eq 20) and its generalised force.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import xarray as xr
from numba import njit

from hpcrail._numba import JIT_NRT_FREE
from hpcrail.models.wheelrail import layout as L
from hpcrail.models.wheelrail.geometry import NAN, ContactSolver, side_quantities

#: per-node quantities of the LUT (axis "quantity"); z/φ and their ∂/∂ξ_g first, then per wheel
#: (l = left, r = right) the tread contact and the flange indentation and geometry
QUANTITIES = ("z", "phi", "z_xi", "phi_xi",
              "u_l", "v_l", "h_l", "gamma_w_l", "A_l", "B_l",
              "u_r", "v_r", "h_r", "gamma_w_r", "A_r", "B_r",
              "delta_l", "delta_r",
              "uf_l", "vf_l", "hf_l", "gammaf_w_l", "Af_l", "Bf_l",
              "uf_r", "vf_r", "hf_r", "gammaf_w_r", "Af_r", "Bf_r")
NQ = len(QUANTITIES)
IQ = {name: i for i, name in enumerate(QUANTITIES)}
TREAD0 = (4, 10)     # first tread quantity of the left / right wheel
DELTA = (16, 17)
FLANGE0 = (18, 24)
#: flange records carry their geometry only when the tabulated indentation exceeds this [m] (-2 mm)
FLANGE_GEOMETRY_BELOW = -2e-3


class LutParams(NamedTuple):
    """LUT arrays for the numba kernels (SI units).

    Grid: ``ny`` lateral shifts from ``y0`` step ``dy``, ``nx`` gauge variations from ``x0`` step ``dx``.
    ``V, D`` float64[nx, ny, NQ]: values and ∂/∂y of :data:`QUANTITIES`; ``D2`` float64[nx, ny, 4]: ∂²/∂y²
    of (z, φ, z_xi, φ_xi) (the last two: ∂²/∂y∂ξ_g).  ``r0, L_w, L_r`` [m]; ``u_split`` [m] (wheel coordinate
    of the tread/flange boundary, left-wheel form): the left wheel's; ``_r``: the right wheel's (asymmetric
    pairs; equal for a symmetric one).
    """

    ny: int
    y0: float
    dy: float
    nx: int
    x0: float
    dx: float
    V: np.ndarray
    D: np.ndarray
    D2: np.ndarray
    r0: float
    L_w: float
    L_r: float
    u_split: float
    r0_r: float
    L_w_r: float
    L_r_r: float
    u_split_r: float


# ------------------------------------------------------------------------------------------ split

def tread_flange_split(solver: ContactSolver, y_max: float = 0.02, step: float = 1e-5, jump_min: float = 1e-3):
    """Tread/flange boundary of the wheel (left-wheel form) from the rigid contact of the profile pair.

    The left wheel is swept from y = 0 to ``y_max`` [m]; among its contact jumps (:meth:`ContactSolver.find_jumps`;
    jumps within 20 µm of each other count as one) the one with the largest rise of the wheel contact angle is the
    tread/flange transition: the flange first touches there, and the boundary is the ridge between the contacts
    of its first jump.
    Returns dict(u_split, y_flange, u_tread, u_flange, gamma_tread, gamma_flange, kind).  Without any jump
    the boundary is the wheel point where the contact angle first exceeds 45° (y_flange = NaN).
    """
    ys = np.arange(0.0, y_max + 0.5 * step, step)
    X, C, S = solver.sweep(ys)
    best = None
    slope = lambda u: math.degrees(math.atan(-float(solver.wheel(u, 1))))  # noqa: E731
    found = []
    for k in np.where(np.abs(np.diff(X[:, 2])) > jump_min)[0]:
        found += [(k, j) for j in solver.find_jumps(ys[k:k + 2], X[k:k + 2], 1)]
    # jumps closer than 20 µm are one event (S1002/UIC60: onto the flange root's concave arc, then onto the
    # flange face, 1 µm apart): from the first jump's outer contact to the last one's inner contact
    groups = []
    for k, j in found:
        if groups and abs(j["y"] - groups[-1][-1][1]["y"]) < 2e-5:
            groups[-1].append((k, j))
        else:
            groups.append([(k, j)])
    for grp in groups:
        (k, j), (k2, j2) = grp[0], grp[-1]
        if j["kind"] == "fast":
            uo, ui = float(X[k, 2]), float(X[k2 + 1, 2])
            cand = dict(y_flange=j["y"], u_tread=uo, u_flange=ui, u_split=0.5 * (uo + ui), kind="fast")
        else:
            cand = dict(y_flange=j["y"], u_tread=j["u_outer"], u_flange=j2["u_inner"], u_split=j["ridge"],
                        kind=j["kind"] if len(grp) == 1 else f"{len(grp)} jumps: " + ", ".join(
                            jj["kind"] for _, jj in grp))
        cand["gamma_tread"] = slope(cand["u_tread"])
        cand["gamma_flange"] = slope(cand["u_flange"])
        if best is None or cand["gamma_flange"] - cand["gamma_tread"] > best["gamma_flange"] - best["gamma_tread"]:
            best = cand
    if best is None:
        u = solver.gp.wu
        g = np.degrees(np.arctan(-np.gradient(solver.gp.wF, u)))
        i = np.where((u < 0) & (g > 45.0))[0]
        us = float(u[i[-1]]) if i.size else float(solver.u_tip)
        best = dict(y_flange=NAN, u_tread=us, u_flange=us, u_split=us, kind="none", gamma_tread=45.0,
                    gamma_flange=45.0)
    return best


# ------------------------------------------------------------------------------------------ build

def _wheel_state(solver, y, xi, x, region_f):
    """Tread and flange quantities of both wheels at a LUT solution x: float64[NQ - 4] in QUANTITIES order
    from index 4."""
    out = np.empty(NQ - 4)
    for k, side in enumerate((1, -1)):
        u, v = (x[2], x[3]) if side > 0 else (x[4], x[5])
        c = solver.quantities(x, side)
        out[6 * k:6 * k + 6] = (u, v, c.rolling_radius, c.gamma_w, c.A, c.B)
        ok, uf, vf, d = solver.indentation(y, xi, x, side, region_f[k])
        out[12 + k] = d
        gp = solver.gp if side > 0 else solver.gpr
        hf, gwf, gamf, kwf, krf, Af, Bf = side_quantities(gp, float(side), float(x[1]), float(uf), float(vf))[:7]
        out[14 + 6 * k:20 + 6 * k] = (uf, vf, hf, gwf, Af, Bf)
    return out


def build_lut(solver: ContactSolver, y_min: float = -18e-3, y_max: float = 18e-3, y_step: float = 0.1e-3,
              xi_min: float = -5e-3, xi_max: float = 5e-3, xi_step: float = 1e-3, split=None,
              eps: float = 1e-6) -> xr.Dataset:
    """Contact lookup table (paper 004 eq 14 plus the flange indentation of eq 15) as an xarray Dataset.

    ``y_*`` and ``xi_*`` [m]: grid (Table 10 default); ``split``: result of :func:`tread_flange_split` for the
    left wheel, or a pair (left, right) of them for an asymmetric pair (computed when None); ``eps`` [m]: step
    of the central differences.  Raises RuntimeError naming the position when a grid point has no contact.
    """
    P = solver.placement
    Pr = solver.placement_r
    if split is None:
        split = tread_flange_split(solver)
    split_l, split_r = split if isinstance(split, tuple) else (split, split)
    if not solver.symmetric and not isinstance(split, tuple):
        split_r = tread_flange_split(solver.mirrored())
    us = float(split_l["u_split"])
    usr = float(split_r["u_split"])
    reg_t = ((us, solver.u_max), (usr, solver.u_max_r))
    reg_f = ((solver.u_tip, us), (solver.u_tip_r, usr))
    ny = int(round((y_max - y_min) / y_step)) + 1
    nx = int(round((xi_max - xi_min) / xi_step)) + 1
    ygrid = y_min + y_step * np.arange(ny)
    xgrid = xi_min + xi_step * np.arange(nx)
    V = np.empty((nx, ny, NQ))
    D = np.empty((nx, ny, NQ))
    D2 = np.empty((nx, ny, 4))
    corner = np.zeros((nx, ny, 2))
    for ix, xi in enumerate(xgrid):
        X, C, S = solver.sweep(ygrid, xi, reg_t)
        for iy, y in enumerate(ygrid):
            x = X[iy]
            cc = (C[iy, 0], C[iy, 1])
            corner[ix, iy] = [0.0 if np.isnan(c) else 1.0 for c in cc]
            dy, dxi = solver.sensitivities(y, xi, x, cc)
            V[ix, iy, 0:4] = (x[0], x[1], dxi[0], dxi[1])
            D[ix, iy, 0:2] = (dy[0], dy[1])
            V[ix, iy, 4:] = _wheel_state(solver, y, xi, x, reg_f)
            sens = []
            states = []
            for sgn in (-1.0, 1.0):
                xe, ok = solver.newton(y + sgn * eps, xi, x, cc)
                if not ok:
                    raise RuntimeError(f"LUT: no continuation at y = {y * 1e3:.3f} mm, ξ_g = {xi * 1e3:.1f} mm")
                sens.append(solver.sensitivities(y + sgn * eps, xi, xe, cc))
                states.append(_wheel_state(solver, y + sgn * eps, xi, xe, reg_f))
            (dym, dxm), (dyp, dxp) = sens
            D2[ix, iy] = ((dyp[0] - dym[0]) / (2 * eps), (dyp[1] - dym[1]) / (2 * eps),
                          (dxp[0] - dxm[0]) / (2 * eps), (dxp[1] - dxm[1]) / (2 * eps))
            D[ix, iy, 2] = D2[ix, iy, 2]
            D[ix, iy, 3] = D2[ix, iy, 3]
            D[ix, iy, 4:] = (states[1] - states[0]) / (2 * eps)
    ds = xr.Dataset(
        {
            "V": (("xi_g", "y", "quantity"), V, {"long_name": "tabulated quantities (SI)"}),
            "D": (("xi_g", "y", "quantity"), D, {"long_name": "their derivative with respect to y"}),
            "D2": (("xi_g", "y", "second"), D2, {"long_name": "d2/dy2 of z, phi; d2/dy dxi_g of z, phi"}),
            "corner": (("xi_g", "y", "wheel"), corner,
                       {"long_name": "1 where the tread end point (u_split) carries the tread contact"}),
        },
        coords={"xi_g": xgrid, "y": ygrid, "quantity": list(QUANTITIES),
                "second": ["z_yy", "phi_yy", "z_yxi", "phi_yxi"], "wheel": ["left", "right"]},
        attrs={"r0": P.r0, "L_w": P.L_w, "L_r": P.L_r, "cant": P.cant, "u_split": us,
               "y_flange": float(split_l["y_flange"]), "split_kind": split_l["kind"],
               "u_tread": float(split_l["u_tread"]), "u_flange": float(split_l["u_flange"]),
               "r0_right": Pr.r0, "L_w_right": Pr.L_w, "L_r_right": Pr.L_r, "cant_right": Pr.cant,
               "u_split_right": usr, "y_flange_right": float(split_r["y_flange"]),
               "split_kind_right": split_r["kind"], "u_tread_right": float(split_r["u_tread"]),
               "u_flange_right": float(split_r["u_flange"]),
               "description": "contact lookup table (paper 004 eq 14) with flange indentation (eq 15); y_flange: "
                              "the left flange first touches at y = y_flange, the right one at y = -y_flange_right"},
    )
    return ds


def lut_params(ds: xr.Dataset) -> LutParams:
    """Numba parameters from a LUT Dataset (see :func:`build_lut`)."""
    y = np.asarray(ds["y"].values, float)
    x = np.asarray(ds["xi_g"].values, float)
    c = np.ascontiguousarray
    return LutParams(ny=int(y.size), y0=float(y[0]), dy=float(y[1] - y[0]), nx=int(x.size), x0=float(x[0]),
                     dx=float(x[1] - x[0]) if x.size > 1 else 1.0,
                     V=c(ds["V"].values, dtype=float), D=c(ds["D"].values, dtype=float),
                     D2=c(ds["D2"].values, dtype=float), r0=float(ds.attrs["r0"]), L_w=float(ds.attrs["L_w"]),
                     L_r=float(ds.attrs["L_r"]), u_split=float(ds.attrs["u_split"]),
                     r0_r=float(ds.attrs.get("r0_right", ds.attrs["r0"])),
                     L_w_r=float(ds.attrs.get("L_w_right", ds.attrs["L_w"])),
                     L_r_r=float(ds.attrs.get("L_r_right", ds.attrs["L_r"])),
                     u_split_r=float(ds.attrs.get("u_split_right", ds.attrs["u_split"])))


# ------------------------------------------------------------------------------------------ on-line

@njit(inline="always", **JIT_NRT_FREE)
def _clamp_cell(n, x0, dx, x):
    u = (x - x0) / dx
    if u <= 0.0:
        return 0, 0.0
    if u >= n - 1:
        return n - 2, 1.0
    i = int(u)
    return i, u - i


@njit(**JIT_NRT_FREE)
def lut_wheelset(T, y, irr, rates, zphi, out):
    """On-line LUT evaluation for one wheelset (paper 004 eqs 14, 17-21).

    Inputs: ``y`` [m] lateral shift from the ideal track centre line; ``irr`` float64[4] = (y_l, y_r, z_l,
    z_r) rail irregularities [m]; ``rates`` float64[5] = ṗ = (ẏ, ẏ_l, ẏ_r, ż_l, ż_r) [m/s]; ``zphi``
    float64[2] = actual (z, φ) of the wheelset for the first-order correction of the flange indentation
    (NaN: on the constraint).  ``out`` float64[layout.N_OUT] (:mod:`.layout`): z, φ on the LUT constraint
    (eq 17-18), their derivatives with respect to p = (y, y_l, y_r, z_l, z_r) and convective terms, the
    tread contact of each wheel (record 0, weight 1) and the flange contact (record 1, weight 0, with δ
    and ∂δ/∂(y, z, φ)).  Returns 0, or 1 when (ȳ, ξ_g) was clamped to the table range.  No allocation.
    """
    yl = irr[0]
    yr = irr[1]
    zl = irr[2]
    zr = irr[3]
    xa = 0.5 * (yl + yr)
    xg = yl - yr
    xv = 0.5 * (zl + zr)
    xc = zl - zr
    yb = y - xa
    flag = 0
    if yb < T.y0 or yb > T.y0 + (T.ny - 1) * T.dy or xg < T.x0 or xg > T.x0 + (T.nx - 1) * T.dx:
        flag = 1
    iy, t = _clamp_cell(T.ny, T.y0, T.dy, yb)
    ix, s = _clamp_cell(T.nx, T.x0, T.dx, xg)
    if T.nx == 1:
        ix = 0
        s = 0.0
    ix1 = ix + 1 if T.nx > 1 else 0
    h = T.dy
    t2 = t * t
    t3 = t2 * t
    # cubic Hermite basis (value, d/dy)
    h00 = 2.0 * t3 - 3.0 * t2 + 1.0
    h10 = (t3 - 2.0 * t2 + t) * h
    h01 = -2.0 * t3 + 3.0 * t2
    h11 = (t3 - t2) * h
    g00 = (6.0 * t2 - 6.0 * t) / h
    g10 = 3.0 * t2 - 4.0 * t + 1.0
    g01 = (-6.0 * t2 + 6.0 * t) / h
    g11 = 3.0 * t2 - 2.0 * t
    c00 = (12.0 * t - 6.0) / (h * h)
    c10 = (6.0 * t - 4.0) / h
    c01 = (-12.0 * t + 6.0) / (h * h)
    c11 = (6.0 * t - 2.0) / h
    # quintic Hermite basis (value, d/dy, d2/dy2)
    t4 = t3 * t
    t5 = t4 * t
    q00 = 1.0 - 10.0 * t3 + 15.0 * t4 - 6.0 * t5
    q10 = (t - 6.0 * t3 + 8.0 * t4 - 3.0 * t5) * h
    q20 = (0.5 * t2 - 1.5 * t3 + 1.5 * t4 - 0.5 * t5) * h * h
    q01 = 10.0 * t3 - 15.0 * t4 + 6.0 * t5
    q11 = (-4.0 * t3 + 7.0 * t4 - 3.0 * t5) * h
    q21 = (0.5 * t3 - t4 + 0.5 * t5) * h * h
    p00 = (-30.0 * t2 + 60.0 * t3 - 30.0 * t4) / h
    p10 = 1.0 - 18.0 * t2 + 32.0 * t3 - 15.0 * t4
    p20 = (t - 4.5 * t2 + 6.0 * t3 - 2.5 * t4) * h
    p01 = (30.0 * t2 - 60.0 * t3 + 30.0 * t4) / h
    p11 = (-12.0 * t2 + 28.0 * t3 - 15.0 * t4)
    p21 = (1.5 * t2 - 4.0 * t3 + 2.5 * t4) * h
    r00 = (-60.0 * t + 180.0 * t2 - 120.0 * t3) / (h * h)
    r10 = (-36.0 * t + 96.0 * t2 - 60.0 * t3) / h
    r20 = 1.0 - 9.0 * t + 18.0 * t2 - 10.0 * t3
    r01 = (60.0 * t - 180.0 * t2 + 120.0 * t3) / (h * h)
    r11 = (-24.0 * t + 84.0 * t2 - 60.0 * t3) / h
    r21 = 3.0 * t - 12.0 * t2 + 10.0 * t3
    # z and φ on the two ξ columns: quintic in y; their ξ-slopes: cubic in y
    zc0 = 0.0
    zc1 = 0.0
    zy0 = 0.0
    zy1 = 0.0
    zyy0 = 0.0
    zyy1 = 0.0
    pc0 = 0.0
    pc1 = 0.0
    py0 = 0.0
    py1 = 0.0
    pyy0 = 0.0
    pyy1 = 0.0
    zx0 = 0.0
    zx1 = 0.0
    zxy0 = 0.0
    zxy1 = 0.0
    zxyy0 = 0.0
    zxyy1 = 0.0
    px0 = 0.0
    px1 = 0.0
    pxy0 = 0.0
    pxy1 = 0.0
    pxyy0 = 0.0
    pxyy1 = 0.0
    for col in range(2):
        jx = ix if col == 0 else ix1
        V0 = T.V[jx, iy]
        V1 = T.V[jx, iy + 1]
        D0 = T.D[jx, iy]
        D1 = T.D[jx, iy + 1]
        S0 = T.D2[jx, iy]
        S1 = T.D2[jx, iy + 1]
        zc = q00 * V0[0] + q10 * D0[0] + q20 * S0[0] + q01 * V1[0] + q11 * D1[0] + q21 * S1[0]
        zy = p00 * V0[0] + p10 * D0[0] + p20 * S0[0] + p01 * V1[0] + p11 * D1[0] + p21 * S1[0]
        zyy = r00 * V0[0] + r10 * D0[0] + r20 * S0[0] + r01 * V1[0] + r11 * D1[0] + r21 * S1[0]
        pc = q00 * V0[1] + q10 * D0[1] + q20 * S0[1] + q01 * V1[1] + q11 * D1[1] + q21 * S1[1]
        py = p00 * V0[1] + p10 * D0[1] + p20 * S0[1] + p01 * V1[1] + p11 * D1[1] + p21 * S1[1]
        pyy = r00 * V0[1] + r10 * D0[1] + r20 * S0[1] + r01 * V1[1] + r11 * D1[1] + r21 * S1[1]
        zx = h00 * V0[2] + h10 * D0[2] + h01 * V1[2] + h11 * D1[2]
        zxy = g00 * V0[2] + g10 * D0[2] + g01 * V1[2] + g11 * D1[2]
        zxyy = c00 * V0[2] + c10 * D0[2] + c01 * V1[2] + c11 * D1[2]
        px = h00 * V0[3] + h10 * D0[3] + h01 * V1[3] + h11 * D1[3]
        pxy = g00 * V0[3] + g10 * D0[3] + g01 * V1[3] + g11 * D1[3]
        pxyy = c00 * V0[3] + c10 * D0[3] + c01 * V1[3] + c11 * D1[3]
        if col == 0:
            zc0, zy0, zyy0, pc0, py0, pyy0 = zc, zy, zyy, pc, py, pyy
            zx0, zxy0, zxyy0, px0, pxy0, pxyy0 = zx, zxy, zxyy, px, pxy, pxyy
        else:
            zc1, zy1, zyy1, pc1, py1, pyy1 = zc, zy, zyy, pc, py, pyy
            zx1, zxy1, zxyy1, px1, pxy1, pxyy1 = zx, zxy, zxyy, px, pxy, pxyy
    # cubic Hermite in ξ_g with the exact ξ-slopes
    hx = T.dx
    s2 = s * s
    s3 = s2 * s
    e00 = 2.0 * s3 - 3.0 * s2 + 1.0
    e10 = (s3 - 2.0 * s2 + s) * hx
    e01 = -2.0 * s3 + 3.0 * s2
    e11 = (s3 - s2) * hx
    f00 = (6.0 * s2 - 6.0 * s) / hx
    f10 = 3.0 * s2 - 4.0 * s + 1.0
    f01 = (-6.0 * s2 + 6.0 * s) / hx
    f11 = 3.0 * s2 - 2.0 * s
    k00 = (12.0 * s - 6.0) / (hx * hx)
    k10 = (6.0 * s - 4.0) / hx
    k01 = (-12.0 * s + 6.0) / (hx * hx)
    k11 = (6.0 * s - 2.0) / hx
    if T.nx == 1:
        e00, e10, e01, e11 = 1.0, 0.0, 0.0, 0.0
        f00, f10, f01, f11 = 0.0, 1.0, 0.0, 0.0
        k00, k10, k01, k11 = 0.0, 0.0, 0.0, 0.0
    z_t = e00 * zc0 + e10 * zx0 + e01 * zc1 + e11 * zx1
    z_y = e00 * zy0 + e10 * zxy0 + e01 * zy1 + e11 * zxy1
    z_yy = e00 * zyy0 + e10 * zxyy0 + e01 * zyy1 + e11 * zxyy1
    z_x = f00 * zc0 + f10 * zx0 + f01 * zc1 + f11 * zx1
    z_xx = k00 * zc0 + k10 * zx0 + k01 * zc1 + k11 * zx1
    z_xy = f00 * zy0 + f10 * zxy0 + f01 * zy1 + f11 * zxy1
    p_t = e00 * pc0 + e10 * px0 + e01 * pc1 + e11 * px1
    p_y = e00 * py0 + e10 * pxy0 + e01 * py1 + e11 * pxy1
    p_yy = e00 * pyy0 + e10 * pxyy0 + e01 * pyy1 + e11 * pxyy1
    p_x = f00 * pc0 + f10 * px0 + f01 * pc1 + f11 * px1
    p_xx = k00 * pc0 + k10 * px0 + k01 * pc1 + k11 * px1
    p_xy = f00 * py0 + f10 * pxy0 + f01 * py1 + f11 * pxy1
    i2Lr = 1.0 / (T.L_r + T.L_r_r)
    z = z_t + xv
    phi = p_t + i2Lr * xc
    out[L.Z] = z
    out[L.PHI] = phi
    # d(ȳ, ξ_g, ξ_v, ξ_c)/dp for p = (y, y_l, y_r, z_l, z_r)
    out[L.DZ_DP + 0] = z_y
    out[L.DZ_DP + 1] = -0.5 * z_y + z_x
    out[L.DZ_DP + 2] = -0.5 * z_y - z_x
    out[L.DZ_DP + 3] = 0.5
    out[L.DZ_DP + 4] = 0.5
    out[L.DPHI_DP + 0] = p_y
    out[L.DPHI_DP + 1] = -0.5 * p_y + p_x
    out[L.DPHI_DP + 2] = -0.5 * p_y - p_x
    out[L.DPHI_DP + 3] = i2Lr
    out[L.DPHI_DP + 4] = -i2Lr
    ybd = rates[0] - 0.5 * (rates[1] + rates[2])
    xgd = rates[1] - rates[2]
    out[L.ZDOT] = z_y * ybd + z_x * xgd + 0.5 * (rates[3] + rates[4])
    out[L.PHIDOT] = p_y * ybd + p_x * xgd + i2Lr * (rates[3] - rates[4])
    out[L.CZ] = z_yy * ybd * ybd + 2.0 * z_xy * ybd * xgd + z_xx * xgd * xgd
    out[L.CPHI] = p_yy * ybd * ybd + 2.0 * p_xy * ybd * xgd + p_xx * xgd * xgd
    out[L.SK_L] = np.nan
    out[L.SK_R] = np.nan
    out[L.ITER] = 0.0
    za = zphi[0] if zphi[0] == zphi[0] else z
    pa = zphi[1] if zphi[1] == zphi[1] else phi
    w0 = 1.0 - s
    w1 = s
    cph = math.cos(pa)
    sph = math.sin(pa)
    for wheel in range(2):
        sigma = 1.0 if wheel == 0 else -1.0
        ps = sigma * pa
        sps = sigma * sph
        base_t = L.L_PRIMARY if wheel == 0 else L.R_PRIMARY
        base_f = L.L_SECONDARY if wheel == 0 else L.R_SECONDARY
        q0 = TREAD0[wheel]
        vals = _interp_group(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, q0)
        L_w = T.L_w if wheel == 0 else T.L_w_r
        _record(out, base_t, sigma, ps, cph, sps, 1.0, vals[0], vals[1], vals[2], vals[3], vals[4], vals[5], L_w)
        dlt = _ih(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, DELTA[wheel])
        if dlt < FLANGE_GEOMETRY_BELOW:
            # flange far from the rail: no penalty force; only the (negative) indentation is reported
            _record(out, base_f, sigma, ps, cph, sps, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, L_w)
            out[base_f + L.C_DELTA] = dlt
            continue
        fv = _interp_group(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, FLANGE0[wheel])
        _record(out, base_f, sigma, ps, cph, sps, 0.0, fv[0], fv[1], fv[2], fv[3], fv[4], fv[5], L_w)
        # partial derivatives of the indentation at fixed contact points (envelope theorem), track frame
        gam = out[base_f + L.C_GAMMA]
        dYc = out[base_f + L.C_DY]
        dZc = out[base_f + L.C_DZ]
        nY = -sigma * math.sin(gam)   # contact normal (rail -> wheel), original orientation
        nZ = math.cos(gam)
        ddy = -nY
        ddz = -nZ
        ddphi = -(nY * (-dZc) + nZ * dYc)
        out[base_f + L.C_DELTA] = dlt + ddz * (za - z) + ddphi * (pa - phi)
        out[base_f + L.C_DDY] = ddy
        out[base_f + L.C_DDZ] = ddz
        out[base_f + L.C_DDPHI] = ddphi
    return flag


@njit(inline="always", **JIT_NRT_FREE)
def _interp_group(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, q0):
    a = _ih(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, q0)
    b = _ih(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, q0 + 1)
    c = _ih(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, q0 + 2)
    d = _ih(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, q0 + 3)
    e = _ih(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, q0 + 4)
    f = _ih(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, q0 + 5)
    return a, b, c, d, e, f


@njit(inline="always", **JIT_NRT_FREE)
def _ih(T, ix, ix1, iy, w0, w1, h00, h10, h01, h11, q):
    return (w0 * (h00 * T.V[ix, iy, q] + h10 * T.D[ix, iy, q] + h01 * T.V[ix, iy + 1, q] + h11 * T.D[ix, iy + 1, q])
            + w1 * (h00 * T.V[ix1, iy, q] + h10 * T.D[ix1, iy, q] + h01 * T.V[ix1, iy + 1, q]
                    + h11 * T.D[ix1, iy + 1, q]))


@njit(inline="always", **JIT_NRT_FREE)
def _record(out, base, sigma, ps, cps, sps, wgt, u, v, h, gw, A, B, L_w):
    a = L_w + u
    b = -h
    out[base + L.C_W] = wgt
    out[base + L.C_SW] = sigma * u
    out[base + L.C_SR] = sigma * v
    out[base + L.C_R] = h
    out[base + L.C_GAMMA] = gw + ps
    out[base + L.C_A] = A
    out[base + L.C_B] = B
    out[base + L.C_DY] = sigma * (cps * a - sps * b)
    out[base + L.C_DZ] = sps * a + cps * b
    out[base + L.C_DELTA] = 0.0
    out[base + L.C_DDY] = 0.0
    out[base + L.C_DDZ] = 0.0
    out[base + L.C_DDPHI] = 0.0
    out[base + L.C_DX] = 0.0
