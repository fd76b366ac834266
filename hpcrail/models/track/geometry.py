"""Horizontal track alignment with superelevation: tangents, circular curves and clothoid spirals.

The alignment is a plane curve r(s) parametrised by arc length s with tangent angle θ(s), signed
curvature κ(s) = dθ/ds (+ left) and superelevation e(s) (+ raises the right rail).  Curvature and
superelevation are piecewise linear in s (constant on tangents and curves, linear on spirals, which
join the end values of their neighbours), so θ is piecewise quadratic and exact.

The kernels read a table on a uniform grid of spacing h (``build_track_table``):

* per node i: X, Y (positions from a 6-point Gauss-Legendre quadrature of cos θ, sin θ per cell:
  exact to round-off), θ, κ, cos θ, sin θ, e;
* per cell: κ' and e' (slopes, exact when the section ends fall on the grid, which the builder
  arranges when a common spacing exists).

``track_point`` evaluates θ and κ exactly inside a cell and the position by cubic Hermite
interpolation with the exact tangents at the nodes (error below h⁴·max|r''''|/384, i.e. < 1e-12 m for
h = 0.25 m and railway curvatures).  Beyond its ends the track continues as straight lines.

Source of the test alignment: Massa et al. 2012 (Massa et al. 2012) §11, Fig. 15.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT

# columns of the node table
T_X, T_Y, T_TH, T_K, T_C, T_S, T_E = range(7)
N_TCOL = 7


@dataclasses.dataclass(frozen=True)
class Section:
    """One section as seen by the builder: length [m], curvature at start/end [1/m] and
    superelevation at start/end [m] (linear in between)."""

    length: float
    k0: float
    k1: float
    e0: float
    e1: float


def sections_from_spec(specs) -> list[Section]:
    """Resolve spirals: a spiral runs from the end values of the previous section to the start
    values of the next one (0 at the ends of the track).

    ``specs``: objects with ``kind`` ('tangent' | 'curve' | 'spiral'), ``length_m``,
    ``curvature()`` [1/m] and ``cant_m()`` [m] (see :class:`hpcrail.config.planar_train.TrackSection`).
    """
    const = []
    for s in specs:
        if s.kind == "spiral":
            const.append(None)
        else:
            const.append((s.curvature(), s.cant_m()))
    out = []
    for i, s in enumerate(specs):
        if s.kind != "spiral":
            k, e = const[i]
            out.append(Section(float(s.length_m), k, k, e, e))
            continue
        prev = const[i - 1] if i > 0 else (0.0, 0.0)
        nxt = const[i + 1] if i + 1 < len(specs) else (0.0, 0.0)
        if prev is None or nxt is None:
            raise ValueError(f"section {i + 1}: a spiral must join sections of constant curvature")
        out.append(Section(float(s.length_m), prev[0], nxt[0], prev[1], nxt[1]))
    return out


def exact_theta_kappa_cant(sections: list[Section], s: np.ndarray):
    """θ [rad], κ [1/m], κ' [1/m²], e [m] at arc lengths ``s`` (float64[k]) from the section data
    (θ(0) = 0); straight-line continuation beyond the ends."""
    s = np.asarray(s, float)
    starts = np.concatenate([[0.0], np.cumsum([q.length for q in sections])])
    th0 = np.zeros(len(sections) + 1)
    for i, q in enumerate(sections):
        th0[i + 1] = th0[i] + 0.5 * (q.k0 + q.k1) * q.length
    idx = np.clip(np.searchsorted(starts, s, side="right") - 1, 0, len(sections) - 1)
    u = s - starts[idx]
    k0 = np.array([q.k0 for q in sections])[idx]
    k1 = np.array([q.k1 for q in sections])[idx]
    ln = np.array([q.length for q in sections])[idx]
    e0 = np.array([q.e0 for q in sections])[idx]
    e1 = np.array([q.e1 for q in sections])[idx]
    kp = (k1 - k0) / ln
    th = th0[idx] + k0 * u + 0.5 * kp * u * u
    kap = k0 + kp * u
    e = e0 + (e1 - e0) / ln * u
    before = s < 0.0
    after = s > starts[-1]
    th = np.where(before, 0.0, np.where(after, th0[-1], th))
    kap = np.where(before | after, 0.0, kap)
    kp = np.where(before | after, 0.0, kp)
    e = np.where(before, sections[0].e0, np.where(after, sections[-1].e1, e))
    return th, kap, kp, e


_GL6_X, _GL6_W = np.polynomial.legendre.leggauss(6)


@dataclasses.dataclass
class TrackTable:
    """Uniform-grid table of the alignment (see module docstring)."""

    s0: float
    h: float
    nodes: np.ndarray       # float64[n, N_TCOL]
    slopes: np.ndarray      # float64[n-1, 2]: κ' and e' per cell
    length: float           # length of the defined track [m]
    exact_grid: bool        # section ends fall on grid nodes


def build_track_table(sections: list[Section], h: float) -> TrackTable:
    """Tabulate the alignment on a uniform grid of spacing ≤ ``h`` [m] from s = 0 to the end.

    The spacing is reduced so that it divides every section length when such a spacing exists with
    at most 4·10⁶ nodes (then θ, κ, e are exact in every cell).  Raises ``ValueError`` for an empty
    track.
    """
    if not sections:
        raise ValueError("a track needs at least one section")
    from hpcrail.models.tables import common_spacing

    breaks = np.concatenate([[0.0], np.cumsum([q.length for q in sections])])
    total = float(breaks[-1])
    exact = False
    try:
        g, exact = common_spacing(breaks, max_points=4_000_000)
    except ValueError:
        g = total
    if exact:
        m = max(1, int(math.ceil(g / h - 1e-9)))
        step = g / m
    else:
        n_cells = max(1, int(math.ceil(total / h)))
        step = total / n_cells
    n = int(round(total / step)) + 1
    s = step * np.arange(n)
    s[-1] = total
    th, kap, _kp, e = exact_theta_kappa_cant(sections, s)
    # positions: per-cell Gauss-Legendre of the exact tangent, then a cumulative sum
    a = s[:-1]
    b = s[1:]
    mid = 0.5 * (a + b)
    half = 0.5 * (b - a)
    pts = mid[:, None] + half[:, None] * _GL6_X[None, :]
    # evaluate θ inside each cell with the section of the cell midpoint (cells never straddle a
    # section end on an exact grid; otherwise this is the best local description)
    thp, _, _, _ = exact_theta_kappa_cant(sections, pts.ravel())
    thp = thp.reshape(pts.shape)
    dx = half * (np.cos(thp) @ _GL6_W)
    dy = half * (np.sin(thp) @ _GL6_W)
    X = np.concatenate([[0.0], np.cumsum(dx)])
    Y = np.concatenate([[0.0], np.cumsum(dy)])
    nodes = np.empty((n, N_TCOL))
    nodes[:, T_X] = X
    nodes[:, T_Y] = Y
    nodes[:, T_TH] = th
    nodes[:, T_K] = kap
    nodes[:, T_C] = np.cos(th)
    nodes[:, T_S] = np.sin(th)
    nodes[:, T_E] = e
    ds = np.diff(s)
    slopes = np.empty((n - 1, 2))
    slopes[:, 0] = np.diff(kap) / ds
    slopes[:, 1] = np.diff(e) / ds
    return TrackTable(s0=0.0, h=float(step), nodes=np.ascontiguousarray(nodes),
                      slopes=np.ascontiguousarray(slopes), length=total, exact_grid=bool(exact))


@njit(inline="always", **JIT)
def track_point(nodes, slopes, s0, h, inv_h, s):
    """Alignment at arc length ``s`` [m]: returns ``(X, Y, θ, κ, κ', e)``.

    ``nodes[n, 7]``/``slopes[n-1, 2]`` from :func:`build_track_table`.  θ, κ, e exact inside each
    cell; X, Y by cubic Hermite with exact node tangents; straight lines beyond the ends.
    """
    n = nodes.shape[0]
    u = (s - s0) * inv_h
    if u < 0.0:
        x = s - s0
        return (nodes[0, T_X] + x * nodes[0, T_C], nodes[0, T_Y] + x * nodes[0, T_S], nodes[0, T_TH],
                0.0, 0.0, nodes[0, T_E])
    i = int(u)
    if i >= n - 1:
        x = s - (s0 + (n - 1) * h)
        if x > 0.0:
            return (nodes[n - 1, T_X] + x * nodes[n - 1, T_C], nodes[n - 1, T_Y] + x * nodes[n - 1, T_S],
                    nodes[n - 1, T_TH], 0.0, 0.0, nodes[n - 1, T_E])
        i = n - 2
    x = s - (s0 + i * h)
    hc = h
    kp = slopes[i, 0]
    k = nodes[i, T_K] + kp * x
    th = nodes[i, T_TH] + nodes[i, T_K] * x + 0.5 * kp * x * x
    e = nodes[i, T_E] + slopes[i, 1] * x
    w = x / hc
    w2 = w * w
    h00 = 1.0 - 3.0 * w2 + 2.0 * w2 * w
    h10 = (w - 2.0 * w2 + w2 * w) * hc
    h01 = 3.0 * w2 - 2.0 * w2 * w
    h11 = (w2 * w - w2) * hc
    X = h00 * nodes[i, T_X] + h10 * nodes[i, T_C] + h01 * nodes[i + 1, T_X] + h11 * nodes[i + 1, T_C]
    Y = h00 * nodes[i, T_Y] + h10 * nodes[i, T_S] + h01 * nodes[i + 1, T_Y] + h11 * nodes[i + 1, T_S]
    return X, Y, th, k, kp, e
