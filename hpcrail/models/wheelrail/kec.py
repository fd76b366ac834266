"""Knife-edge equivalent contact (KEC, paper 004 eqs 22-23): equivalent profiles, regularised
tread/flange transition, and the on-line constraint solve as a numba kernel with its derivatives.

**Off-line** (:func:`build_kec`).  The rigid contact of the real profiles (eq 12, :mod:`.geometry`) is
solved on a fine sweep of the lateral shift y; every wheelset solution (y, z, φ) is mapped to the
knife-edge-equivalent coordinates of the left wheel by inverting the left rows of eq 22 (no
irregularity): s^k = -(y + φ z + φ² L_w)/(1 + φ²), f^k = φ s^k + z + φ L_w - r0.  On the grid of paper 004
Table 9 (s^k ∈ [-46.4, 46.4] mm, step 0.2 mm) the table stores f^k, its first two derivatives (the first
exact by the implicit function theorem, the second by central differences of the first) and the real
contact quantities (s^w, s^r, rolling radius, contact angle, Hertz curvature sums) with their slopes.
The right wheel uses the mirror image (symmetric profile pair): f^rk(s) = f^lk(-s).

**Contact jumps** (two-point contact: the rigid contact point leaves one basin of the gap for another)
make f^k kinked and s^w(s^k) discontinuous (paper Fig. 9).  Each jump at s^k_j is regularised over the
band [s^k_j - Δs̄, s^k_j + Δŝ] (flange side Δs̄ = 1 mm, tread side Δŝ = 0.5 mm, paper 004 §2.4; the
reference defining the two lengths was not available, this is hpcrail's reading: both lengths are
measured in the KEC coordinate, Δs̄ towards the flange), widened to grid nodes; neighbouring bands that
would overlap share one node between their jumps (merged only when no node lies between them).  Inside a
band f^k is the quintic that matches f, f', f'' at both ends (C2), and the normal force is shared
between the tread-end contact A (band end on the tread side) and the flange-start contact B with the
weight w ∈ [0, 1] (quintic smoothstep, 0 at A, 1 at B) — eq 26's Q = Q_tre + Q_fla.

**On-line** (:func:`kec_wheelset`, ``JIT_NRT_FREE``, no allocation).  Given the wheelset lateral shift y and
the rail irregularities (y_l, y_r, z_l, z_r), Newton solves eq 22 for x = (z, φ, s^lk, s^rk) (4x4, closed
form elimination), then writes z, φ, their derivatives with respect to p = (y, y_l, y_r, z_l, z_r), the
convective second-order terms for given rates ṗ and the contact records of both wheels into the output
vector described in :mod:`.layout`.

Sign conventions: :mod:`hpcrail.models.wheelrail` (Y left, Z up, φ positive = left side up, contact angle
positive towards the track centre).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import xarray as xr
from numba import njit

from hpcrail._numba import JIT_NRT_FREE
from hpcrail.models.wheelrail import layout as L
from hpcrail.models.wheelrail.geometry import ContactSolver, kec_coordinates, kec_node_newton
from hpcrail.models.wheelrail.interp import grid_cell, hermite5

#: contact quantities stored per KEC node (left-wheel form): wheel and rail coordinates, rolling radius,
#: wheel-frame contact angle, Hertz curvature sums
QUANTITIES = ("u", "v", "h", "gamma_w", "A", "B")
NQ = len(QUANTITIES)
#: kinds of contact jumps (:meth:`ContactSolver.find_jumps`), by their code in the tables
JUMP_KINDS = ("two-point", "fast", "fold")


class KecParams(NamedTuple):
    """KEC tables for the numba kernels (SI units, left-wheel form), one set per wheel: the fields without
    suffix are the left wheel's, those ending in ``_r`` the right wheel's (built in its own left-wheel form, the
    mirror image; a symmetric pair shares the arrays).

    Grid: ``n`` nodes from ``k0`` with step ``dk`` [m].  ``f, f1, f2`` float64[n]: regularised equivalent
    profile and its derivatives.  ``q, dq`` float64[n, NQ]: contact quantities (:data:`QUANTITIES`) and their
    slopes, node-major.  Bands (``nb`` of them): ``lo, hi`` float64[nb] [m]; ``qa, qb`` float64[nb, NQ]: the
    contacts A (tread end, at ``hi``) and B (flange start, at ``lo``).  ``r0, L_w`` [m]: nominal radius and
    profile-origin distance of the wheel.
    """

    n: int
    k0: float
    dk: float
    f: np.ndarray
    f1: np.ndarray
    f2: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    nb: int
    lo: np.ndarray
    hi: np.ndarray
    qa: np.ndarray
    qb: np.ndarray
    r0: float
    L_w: float
    n_r: int
    k0_r: float
    dk_r: float
    f_r: np.ndarray
    f1_r: np.ndarray
    f2_r: np.ndarray
    q_r: np.ndarray
    dq_r: np.ndarray
    nb_r: int
    lo_r: np.ndarray
    hi_r: np.ndarray
    qa_r: np.ndarray
    qb_r: np.ndarray
    r0_r: float
    L_w_r: float


# ------------------------------------------------------------------------------------------ build

def _quintic_bridge(x0, x1, a, b, xq):
    """Quintic Hermite through (f, f', f'') = a at x0 and b at x1; value, slope, curvature at xq."""
    h = x1 - x0
    t = (np.asarray(xq) - x0) / h
    p0, v0, c0 = a[0], a[1] * h, a[2] * h * h
    p1, v1, c1 = b[0], b[1] * h, b[2] * h * h
    d = p1 - p0
    c3 = 10 * d - 6 * v0 - 4 * v1 - 1.5 * c0 + 0.5 * c1
    c4 = -15 * d + 8 * v0 + 7 * v1 + 1.5 * c0 - c1
    c5 = 6 * d - 3 * (v0 + v1) - 0.5 * (c0 - c1)
    val = p0 + t * (v0 + t * (0.5 * c0 + t * (c3 + t * (c4 + t * c5))))
    der = v0 + t * (c0 + t * (3 * c3 + t * (4 * c4 + t * 5 * c5)))
    cur = c0 + t * (6 * c3 + t * (12 * c4 + t * 20 * c5))
    return val, der / h, cur / (h * h)


def _node_state(solver: ContactSolver, X7):
    """f and the left-wheel contact quantities of a KEC node solution X7 = (z, φ, u_l, v_l, u_r, v_r, y)."""
    z, phi, y = X7[0], X7[1], X7[6]
    s, f = kec_coordinates(y, z, phi, solver.placement.r0, solver.placement.L_w)
    c = solver.quantities(X7[:6], 1)
    return f, np.array([X7[2], X7[3], c.rolling_radius, c.gamma_w, c.A, c.B])


def _node_by_bisection(solver, kappa, ys, ks, X, P):
    """Rigid solution whose left KEC coordinate is κ, by a bracketed root of s^k(y) - κ on the globally
    verified contact (s^k is continuous and decreasing in y even where the contact point jumps)."""
    from scipy.optimize import brentq

    i = int(np.searchsorted(-ks, -kappa))
    i = min(max(i, 1), len(ys) - 1)
    guess = {"x": X[i - 1]}

    def g(y):
        x, st, cr = solver.solve(y, 0.0, guess=guess["x"])
        guess["x"] = x
        return kec_coordinates(y, x[0], x[1], P.r0, P.L_w)[0] - kappa

    y = brentq(g, ys[i - 1], ys[i], xtol=1e-15, rtol=1e-15, maxiter=200)
    x, st, cr = solver.solve(y, 0.0, guess=guess["x"])
    return np.append(x, y)


def build_kec(solver: ContactSolver, s_min: float = -46.4e-3, s_max: float = 46.4e-3, s_step: float = 0.2e-3,
              tread_band: float = 0.5e-3, flange_band: float = 1.0e-3, sweep_step: float = 1e-5,
              jump_min: float = 1e-3, eps: float = 1e-6) -> xr.Dataset:
    """KEC lookup table (paper 004 eq 23) for the solver's profile pair, as an xarray Dataset.

    ``s_min, s_max, s_step`` [m]: KEC grid (Table 9 default).  ``tread_band`` Δŝ and ``flange_band`` Δs̄ [m]:
    regularisation lengths on each side of a contact jump.  ``sweep_step`` [m]: lateral step of the rigid
    sweep that detects jumps; a jump is a change of the left contact point by more than ``jump_min`` [m]
    between two sweep points (true two-point jumps are located exactly, eq 15).  ``eps`` [m]: step of the
    central differences.  Raises RuntimeError when the contact cannot be solved over the range.
    """
    P = solver.placement
    n = int(round((s_max - s_min) / s_step)) + 1
    kap = s_min + s_step * np.arange(n)
    # 1. rigid sweep covering the grid (s^k ≈ -y)
    margin = 2e-3
    ys = np.arange(-s_max - margin, -s_min + margin + 0.5 * sweep_step, sweep_step)
    X, C, S = solver.sweep(ys)
    ks = np.array([kec_coordinates(y, x[0], x[1], P.r0, P.L_w)[0] for y, x in zip(ys, X)])
    if not np.all(np.diff(ks) < 0):
        raise RuntimeError("KEC coordinate is not monotonic in the lateral shift over the sweep")
    # 2. jumps of the left contact point
    jumps = []
    found = []
    for k in np.where(np.abs(np.diff(X[:, 2])) > jump_min)[0]:
        found += solver.find_jumps(ys[k:k + 2], X[k:k + 2], 1)
    for j in found:
        yj, xo, kind = j["y"], j["x_outer"], j["kind"]
        uo, ui = j["u_outer"], j["u_inner"]
        kj = kec_coordinates(yj, xo[0], xo[1], P.r0, P.L_w)[0]
        if jumps and kind == "fast" and jumps[-1]["kind"] == "fast" and yj - jumps[-1]["y"] < 2.5 * sweep_step:
            jumps[-1].update(y=0.5 * (jumps[-1]["y"] + yj), kappa=0.5 * (jumps[-1]["kappa"] + kj), u_inner=ui)
            continue
        jumps.append(dict(y=yj, kappa=kj, kind=kind, u_outer=uo, u_inner=ui))
    # 3. nodes: rigid solution at each s^k
    Xn = np.empty((n, 7))
    f = np.empty(n)
    f1 = np.empty(n)
    f2 = np.empty(n)
    q = np.empty((NQ, n))
    dq = np.empty((NQ, n))
    ok_all = np.ones(n, dtype=bool)
    order = np.argsort(ks)  # ks decreases with y: increasing order for np.interp
    for i, kv in enumerate(kap):
        yg = float(np.interp(kv, ks[order], ys[order]))
        kk = int(np.argmin(np.abs(ys - yg)))
        x, st, cr = solver.solve(yg, 0.0, guess=X[kk])
        X7 = np.append(x, yg)
        ok, dX = kec_node_newton(solver.gp, solver.gpr, X7, kv, 60, np.nan, np.nan)
        if not ok:  # near a fast contact-point sweep: root of s^k(y) - κ on the verified solution
            X7 = _node_by_bisection(solver, kv, ys, ks, X, P)
            ok, dX = kec_node_newton(solver.gp, solver.gpr, X7, kv, 0, np.nan, np.nan)
        if not ok:
            raise RuntimeError(f"KEC node s^k = {kv * 1e3:.3f} mm did not converge")
        Xn[i] = X7
        fv, qv = _node_state(solver, X7)
        f[i] = fv
        q[:, i] = qv
        phi = X7[1]
        f1[i] = phi + (kv + P.L_w) * dX[1] + dX[0]
        # central differences (same branch: Newton continuation from the node)
        vals = []
        slopes = []
        for sgn in (-1.0, 1.0):
            Xe = X7.copy()
            oke, dXe = kec_node_newton(solver.gp, solver.gpr, Xe, kv + sgn * eps, 40, np.nan, np.nan)
            ok_all[i] &= oke
            fe, qe = _node_state(solver, Xe)
            vals.append(qe)
            slopes.append(Xe[1] + (kv + sgn * eps + P.L_w) * dXe[1] + dXe[0])
        f2[i] = (slopes[1] - slopes[0]) / (2 * eps)
        dq[:, i] = (vals[1] - vals[0]) / (2 * eps)
    f_rigid = f.copy()
    f1_rigid = f1.copy()
    f2_rigid = f2.copy()
    # 4. bands snapped outward to nodes; neighbouring bands that would overlap share one node between
    #    their jumps (merged only when no node lies between the two jumps)
    bands = []
    for j in sorted(jumps, key=lambda d: d["kappa"]):
        if not s_min < j["kappa"] < s_max:   # found in the sweep's margin beyond the grid: no band
            continue
        raw_lo, raw_hi = j["kappa"] - flange_band, j["kappa"] + tread_band
        lo = max(int(math.floor((raw_lo - s_min) / s_step + 1e-9)), 0)
        hi = min(int(math.ceil((raw_hi - s_min) / s_step - 1e-9)), n - 1)
        jn = (j["kappa"] - s_min) / s_step
        if bands and lo < bands[-1][1]:
            prev = bands[-1]
            pj = (prev[2][-1]["kappa"] - s_min) / s_step
            cand = [m for m in range(int(math.floor(pj)) + 1, int(math.ceil(jn))) if pj < m < jn]
            if cand:
                mid = 0.5 * ((prev[3] - s_min) / s_step + (raw_lo - s_min) / s_step)
                m = min(cand, key=lambda c: abs(c - mid))
                prev[1] = m
                lo = m
            else:
                prev[1] = max(hi, prev[1])
                prev[2].append(j)
                prev[3] = raw_hi
                continue
        bands.append([lo, hi, [j], raw_hi])
    in_band = np.zeros(n, dtype=np.int64) - 1
    for b, (lo, hi, js, _) in enumerate(bands):
        inner = np.arange(lo + 1, hi)
        v, d1, d2 = _quintic_bridge(kap[lo], kap[hi], (f[lo], f1[lo], f2[lo]), (f[hi], f1[hi], f2[hi]), kap[inner])
        f[inner], f1[inner], f2[inner] = v, d1, d2
        in_band[lo:hi + 1] = b
    nb = len(bands)
    ds = xr.Dataset(
        {
            "f": ("s_k", f, {"long_name": "KEC equivalent wheel profile f^k (regularised)", "units": "m"}),
            "f1": ("s_k", f1, {"long_name": "df^k/ds^k", "units": "1"}),
            "f2": ("s_k", f2, {"long_name": "d2f^k/ds^k2", "units": "1/m"}),
            "f_rigid": ("s_k", f_rigid, {"long_name": "equivalent profile of the rigid contact (unregularised)",
                                         "units": "m"}),
            "f1_rigid": ("s_k", f1_rigid, {"units": "1"}),
            "f2_rigid": ("s_k", f2_rigid, {"units": "1/m"}),
            "y": ("s_k", Xn[:, 6], {"long_name": "wheelset lateral shift of the rigid solution", "units": "m"}),
            "z": ("s_k", Xn[:, 0], {"long_name": "wheelset centre height of the rigid solution", "units": "m"}),
            "phi": ("s_k", Xn[:, 1], {"long_name": "wheelset roll of the rigid solution", "units": "rad"}),
            "q": (("quantity", "s_k"), q, {"long_name": "left-wheel contact quantities (left-wheel form)"}),
            "dq": (("quantity", "s_k"), dq, {"long_name": "slopes of q with respect to s^k"}),
            "band": ("s_k", in_band, {"long_name": "regularisation band index (-1: none)"}),
            "band_lo": ("band_index", np.array([kap[b[0]] for b in bands], dtype=float), {"units": "m"}),
            "band_hi": ("band_index", np.array([kap[b[1]] for b in bands], dtype=float), {"units": "m"}),
            "band_qa": (("band_index", "quantity"), np.array([q[:, b[1]] for b in bands]).reshape(nb, NQ)),
            "band_qb": (("band_index", "quantity"), np.array([q[:, b[0]] for b in bands]).reshape(nb, NQ)),
            "jump_s_k": ("jump", np.array([j["kappa"] for j in jumps], dtype=float), {"units": "m"}),
            "jump_y": ("jump", np.array([j["y"] for j in jumps], dtype=float), {"units": "m"}),
            "jump_u_outer": ("jump", np.array([j["u_outer"] for j in jumps], dtype=float), {"units": "m"}),
            "jump_u_inner": ("jump", np.array([j["u_inner"] for j in jumps], dtype=float), {"units": "m"}),
            "jump_kind": ("jump", np.array([JUMP_KINDS.index(j["kind"]) for j in jumps], dtype=np.int64),
                          {"long_name": "kind of contact jump", "flag_values": [0, 1, 2],
                           "flag_meanings": "two_point_contact fast_contact_point_sweep fold_of_the_contact_branch",
                           "description": "0: two-point contact (located by eq 15), 1: contact point moving "
                                          "faster than the sweep resolves, 2: the tangency of the old contact "
                                          "point is lost (fold, located by bisection)"}),
            "node_ok": ("s_k", ok_all),
        },
        coords={"s_k": kap, "quantity": list(QUANTITIES)},
        attrs={"r0": P.r0, "L_w": P.L_w, "L_r": P.L_r, "cant": P.cant, "tread_band": tread_band,
               "flange_band": flange_band, "s_step": s_step,
               "description": "KEC lookup table (paper 004 eq 23), left-wheel form; right wheel mirrored"},
    )
    return ds


def _side_arrays(ds: xr.Dataset) -> tuple:
    k = np.asarray(ds["s_k"].values, float)
    nb = int(ds.sizes.get("band_index", 0))
    c = np.ascontiguousarray
    return (int(k.size), float(k[0]), float(k[1] - k[0]), c(ds["f"].values, dtype=float),
            c(ds["f1"].values, dtype=float), c(ds["f2"].values, dtype=float), c(ds["q"].values.T, dtype=float),
            c(ds["dq"].values.T, dtype=float), nb, c(ds["band_lo"].values.reshape(nb), dtype=float),
            c(ds["band_hi"].values.reshape(nb), dtype=float), c(ds["band_qa"].values.reshape(nb, NQ), dtype=float),
            c(ds["band_qb"].values.reshape(nb, NQ), dtype=float), float(ds.attrs["r0"]), float(ds.attrs["L_w"]))


def kec_params(ds: xr.Dataset, ds_right: xr.Dataset | None = None) -> KecParams:
    """Numba parameters from the KEC Datasets of the left wheel and (asymmetric pairs) of the right one, the
    latter built in its own left-wheel form (:func:`build_kec` on ``solver.mirrored()``)."""
    left = _side_arrays(ds)
    right = left if ds_right is None else _side_arrays(ds_right)
    return KecParams(*left, *right)


# ------------------------------------------------------------------------------------------ on-line

@njit(inline="always", **JIT_NRT_FREE)
def smoothstep5(t):
    """Quintic smoothstep: 0 at t <= 0, 1 at t >= 1, zero first and second derivatives at both ends."""
    if t <= 0.0:
        return 0.0
    if t >= 1.0:
        return 1.0
    return t * t * t * (10.0 + t * (-15.0 + 6.0 * t))


@njit(inline="always", **JIT_NRT_FREE)
def kec_profile(K, kappa):
    """Regularised equivalent profile of the left wheel at the left-wheel-form KEC coordinate κ [m]: (f, f', f'')."""
    return hermite5(K.f, K.f1, K.f2, K.n, K.k0, K.dk, kappa)


@njit(inline="always", **JIT_NRT_FREE)
def kec_profile_right(K, kappa):
    """Regularised equivalent profile of the right wheel at its own left-wheel-form KEC coordinate κ [m]."""
    return hermite5(K.f_r, K.f1_r, K.f2_r, K.n_r, K.k0_r, K.dk_r, kappa)


@njit(inline="always", **JIT_NRT_FREE)
def _write_record(out, base, sigma, ps, cps, sps, wgt, u, v, h, gw, A, B, L_w):
    """Contact record (layout.C_*) from left-form quantities; ps = σφ, cps, sps its cosine and sine."""
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


@njit(inline="always", **JIT_NRT_FREE)
def _kec_side_contact(n, k0, dk, q, dq, nb, lo, hi, qa, qb, L_w, kappa, sigma, ps, cps, sps, out, base1, base2):
    """Contact records of one wheel from its table arrays at left-wheel-form KEC coordinate κ: primary record
    at ``base1``, secondary (flange-start contact B of a regularisation band, weight w) at ``base2``; ps = σφ
    with its cosine and sine.  Returns w."""
    for b in range(nb):
        if kappa >= lo[b] and kappa <= hi[b]:
            w = smoothstep5((hi[b] - kappa) / (hi[b] - lo[b]))
            qa_ = qa[b]
            qb_ = qb[b]
            _write_record(out, base1, sigma, ps, cps, sps, 1.0 - w, qa_[0], qa_[1], qa_[2], qa_[3], qa_[4], qa_[5],
                          L_w)
            _write_record(out, base2, sigma, ps, cps, sps, w, qb_[0], qb_[1], qb_[2], qb_[3], qb_[4], qb_[5], L_w)
            return w
    i, t = grid_cell(n, k0, dk, kappa)
    h = dk
    t2 = t * t
    t3 = t2 * t
    h00 = 2.0 * t3 - 3.0 * t2 + 1.0
    h10 = (t3 - 2.0 * t2 + t) * h
    h01 = -2.0 * t3 + 3.0 * t2
    h11 = (t3 - t2) * h
    q0 = q[i]
    q1 = q[i + 1]
    d0 = dq[i]
    d1 = dq[i + 1]
    u = h00 * q0[0] + h10 * d0[0] + h01 * q1[0] + h11 * d1[0]
    v = h00 * q0[1] + h10 * d0[1] + h01 * q1[1] + h11 * d1[1]
    hh = h00 * q0[2] + h10 * d0[2] + h01 * q1[2] + h11 * d1[2]
    gw = h00 * q0[3] + h10 * d0[3] + h01 * q1[3] + h11 * d1[3]
    A = h00 * q0[4] + h10 * d0[4] + h01 * q1[4] + h11 * d1[4]
    B = h00 * q0[5] + h10 * d0[5] + h01 * q1[5] + h11 * d1[5]
    _write_record(out, base1, sigma, ps, cps, sps, 1.0, u, v, hh, gw, A, B, L_w)
    _write_record(out, base2, sigma, ps, cps, sps, 0.0, u, v, hh, gw, A, B, L_w)
    return 0.0


@njit(inline="always", **JIT_NRT_FREE)
def kec_contact(K, kappa, sigma, ps, cps, sps, out, base1, base2):
    """Contact records of the left (σ = +1) or right (σ = -1) wheel at its left-wheel-form KEC coordinate κ
    (see :func:`_kec_side_contact`).  Returns the flange-start weight w."""
    if sigma > 0.0:
        return _kec_side_contact(K.n, K.k0, K.dk, K.q, K.dq, K.nb, K.lo, K.hi, K.qa, K.qb, K.L_w, kappa, sigma, ps,
                                 cps, sps, out, base1, base2)
    return _kec_side_contact(K.n_r, K.k0_r, K.dk_r, K.q_r, K.dq_r, K.nb_r, K.lo_r, K.hi_r, K.qa_r, K.qb_r, K.L_w_r,
                             kappa, sigma, ps, cps, sps, out, base1, base2)


@njit(inline="always", **JIT_NRT_FREE)
def _kec_solve_dir(a1, b1, a2, b2, c3, d3, c4, d4, r1, r2, r3, r4):
    """Solve the eq-22 Jacobian system J·d = r by elimination (J rows: [0, a1, b1, 0], [0, a2, 0, b2],
    [1, c3, d3, 0], [1, c4, 0, d4]; unknowns z, φ, s_l, s_r)."""
    den = c3 - c4 - d3 * a1 / b1 + d4 * a2 / b2
    dphi = (r3 - r4 - d3 * r1 / b1 + d4 * r2 / b2) / den
    dsl = (r1 - a1 * dphi) / b1
    dsr = (r2 - a2 * dphi) / b2
    dz = r3 - c3 * dphi - d3 * dsl
    return dz, dphi, dsl, dsr


@njit(**JIT_NRT_FREE)
def kec_wheelset(K, y, irr, rates, x, out):
    """On-line KEC constraint solve of one wheelset (paper 004 eq 22) and its contact points.

    Inputs: ``y`` [m] wheelset lateral shift from the ideal track centre line (positive left);
    ``irr`` float64[4] = (y_l, y_r, z_l, z_r) rail irregularities [m] (lateral positive left, vertical
    positive up); ``rates`` float64[5] = ṗ = (ẏ, ẏ_l, ẏ_r, ż_l, ż_r) [m/s] (zeros if not needed);
    ``x`` float64[4] = (z, φ, s^lk, s^rk): initial guess, overwritten by the solution (pass the previous
    solution; x[0] = NaN starts cold).  ``out`` float64[layout.N_OUT] receives the results
    (:mod:`.layout`).  Returns the number of Newton iterations (negative if not converged to 1e-13 m in 30).
    No allocation (JIT_NRT_FREE).
    """
    yl = irr[0]
    yr = irr[1]
    zl = irr[2]
    zr = irr[3]
    r0 = K.r0
    Lw = K.L_w
    r0r = K.r0_r
    Lwr = K.L_w_r
    if not (x[0] == x[0]):  # cold start: centred knife edges, no roll
        x[2] = yl - y
        x[3] = yr - y
        x[1] = (zl - zr) / (Lw + Lwr)
        fl = kec_profile(K, x[2])[0]
        fr = kec_profile_right(K, -x[3])[0]
        x[0] = r0 + 0.5 * (fl + fr + zl + zr) + 0.5 * (r0r - r0)
    z = x[0]
    phi = x[1]
    sl = x[2]
    sr = x[3]
    it = 0
    conv = False
    fl = fl1 = fl2 = fr = fr1 = fr2 = 0.0
    a1 = b1 = a2 = b2 = c3 = d3 = c4 = d4 = 0.0
    for it in range(1, 31):
        fl, fl1, fl2 = kec_profile(K, sl)
        fr, g1, g2 = kec_profile_right(K, -sr)
        fr1 = -g1
        fr2 = g2
        a1 = r0 + fl
        b1 = 1.0 + phi * fl1
        a2 = r0r + fr
        b2 = 1.0 + phi * fr1
        c3 = Lw + sl
        d3 = phi - fl1
        c4 = -Lwr + sr
        d4 = phi - fr1
        r1 = y + sl + phi * a1 - yl
        r2 = y + sr + phi * a2 - yr
        r3 = z + phi * c3 - a1 - zl
        r4 = z + phi * c4 - a2 - zr
        dz, dphi, dsl, dsr = _kec_solve_dir(a1, b1, a2, b2, c3, d3, c4, d4, r1, r2, r3, r4)
        z -= dz
        phi -= dphi
        sl -= dsl
        sr -= dsr
        if abs(dz) + abs(dsl) + abs(dsr) + abs(dphi) * Lw < 1e-13:
            conv = True
            break
    # the Jacobian of the last iteration is used for the derivatives (the step was below 1e-13 m)
    x[0] = z
    x[1] = phi
    x[2] = sl
    x[3] = sr
    out[L.Z] = z
    out[L.PHI] = phi
    out[L.SK_L] = sl
    out[L.SK_R] = sr
    # dx/dp = -J^-1 dR/dp ; dR/dp columns: y -> (1, 1, 0, 0), y_l -> (-1, 0, 0, 0), y_r -> (0, -1, 0, 0),
    # z_l -> (0, 0, -1, 0), z_r -> (0, 0, 0, -1)
    zd = 0.0
    pd = 0.0
    sld = 0.0
    srd = 0.0
    for k in range(5):
        q1 = 0.0
        q2 = 0.0
        q3 = 0.0
        q4 = 0.0
        if k == 0:
            q1 = 1.0
            q2 = 1.0
        elif k == 1:
            q1 = -1.0
        elif k == 2:
            q2 = -1.0
        elif k == 3:
            q3 = -1.0
        else:
            q4 = -1.0
        gz, gp, gsl, gsr = _kec_solve_dir(a1, b1, a2, b2, c3, d3, c4, d4, q1, q2, q3, q4)
        out[L.DZ_DP + k] = -gz
        out[L.DPHI_DP + k] = -gp
        zd -= gz * rates[k]
        pd -= gp * rates[k]
        sld -= gsl * rates[k]
        srd -= gsr * rates[k]
    out[L.ZDOT] = zd
    out[L.PHIDOT] = pd
    # convective terms: xdd = -J^-1 Q(xd), Q = second derivatives of R along xd
    Q1 = 2.0 * pd * sld * fl1 + phi * fl2 * sld * sld
    Q2 = 2.0 * pd * srd * fr1 + phi * fr2 * srd * srd
    Q3 = 2.0 * pd * sld - fl2 * sld * sld
    Q4 = 2.0 * pd * srd - fr2 * srd * srd
    cz, cp, _, _ = _kec_solve_dir(a1, b1, a2, b2, c3, d3, c4, d4, Q1, Q2, Q3, Q4)
    out[L.CZ] = -cz
    out[L.CPHI] = -cp
    out[L.ITER] = it if conv else -it
    cph = math.cos(phi)
    sph = math.sin(phi)
    kec_contact(K, sl, 1.0, phi, cph, sph, out, L.L_PRIMARY, L.L_SECONDARY)
    kec_contact(K, -sr, -1.0, -phi, cph, -sph, out, L.R_PRIMARY, L.R_SECONDARY)
    return it if conv else -it
