"""Track input of the railway-vehicle model: the centre-line frame at an arc length (alignment and cant
from :mod:`hpcrail.models.track.geometry`) and the four rail irregularities of paper 004 (eqs 4-5, 18) as
C2 cubic splines of the arc length s.

**Track frame** (paper 004 eq 1 with no vertical grade): origin on the track centre line, X tangent
(direction of travel), Y to the left in the plane of the rails, Z normal to it (up); its rotation from the
global frame is A^t(s) = R_z(ψ^t) R_x(φ^t), heading ψ^t from the alignment table and the cant angle
φ^t = -asin(e / 2b) from the superelevation e (geometry convention: e > 0 raises the right rail, the outer
rail of a left curve) over the rail spacing 2b.  Its angular velocity per unit arc length in its own
components is Ω = (φ^t', κ sin φ^t, κ cos φ^t) with the curvature κ = dψ^t/ds (+ left).

**Irregularities** (paper 004 §2.1, Fig. 3): alignment ξ_a = (y_l + y_r)/2, gauge variation
ξ_g = y_l - y_r (+ wide), vertical profile ξ_v = (z_l + z_r)/2 and cross level ξ_c = z_l - z_r, synthesised
from the PSDs of :mod:`hpcrail.models.track.irregularity` (ORE B176, FRA classes) on a uniform grid and
interpolated by not-a-knot cubic splines (paper 004 uses cubic splines on a 0.1 m grid); the kernels need
ξ, ξ' and ξ'' (the rails' accelerations enter the wheelset constraint accelerations).  The rails are then
y_l = ξ_a + ξ_g/2, y_r = ξ_a - ξ_g/2, z_l = ξ_v + ξ_c/2, z_r = ξ_v - ξ_c/2 (the sign conventions of
:mod:`hpcrail.models.wheelrail`).  Outside the synthesised range the irregularities are zero.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from hpcrail._numba import JIT_NRT_FREE
from hpcrail.models.track.geometry import N_TCOL, T_C, T_E, T_K, T_S, T_TH, T_X, T_Y

#: irregularity channels, in the order of the spline table
CHANNELS = ("alignment", "gauge", "vertical", "cross_level")
CH_A, CH_G, CH_V, CH_C = range(4)


class IrregularitySplines(NamedTuple):
    """Cubic splines of the four irregularity channels on a uniform grid: cell i covers
    [x0 + i·dx, x0 + (i+1)·dx); ``c`` float64[n, 4, 4] holds per cell and channel the coefficients of
    ξ(s) = c0 + c1 u + c2 u² + c3 u³, u = s - (x0 + i·dx) [m].  ``n`` = 0: no irregularity."""

    n: int
    x0: float
    dx: float
    c: np.ndarray


def no_irregularity() -> IrregularitySplines:
    """Splines of a perfect track."""
    return IrregularitySplines(n=0, x0=0.0, dx=1.0, c=np.zeros((1, 4, 4)))


def irregularity_splines(s: np.ndarray, values: dict) -> IrregularitySplines:
    """Not-a-knot cubic splines through samples on the uniform grid ``s`` (float64[m], m >= 4) of the
    channels in ``values`` (name -> float64[m] [m]; channels missing are zero).

    Raises ValueError for a non-uniform grid or an unknown channel."""
    from scipy.interpolate import CubicSpline

    s = np.asarray(s, float)
    if s.size < 4:
        raise ValueError("an irregularity spline needs at least 4 grid points")
    dx = float(s[1] - s[0])
    if dx <= 0 or np.max(np.abs(np.diff(s) - dx)) > 1e-9 * max(1.0, abs(dx)):
        raise ValueError("irregularity samples must lie on a uniform increasing grid")
    unknown = set(values) - set(CHANNELS)
    if unknown:
        raise ValueError(f"unknown irregularity channel(s) {sorted(unknown)}; allowed: {', '.join(CHANNELS)}")
    n = s.size - 1
    c = np.zeros((n, 4, 4))
    for k, name in enumerate(CHANNELS):
        if name not in values:
            continue
        v = np.asarray(values[name], float)
        if v.shape != s.shape:
            raise ValueError(f"channel {name}: {v.shape} samples for a grid of {s.shape}")
        sp = CubicSpline(s, v, bc_type="not-a-knot")
        # scipy: c[m, i] multiplies (x - x_i)^(3 - m)
        c[:, k, 0] = sp.c[3]
        c[:, k, 1] = sp.c[2]
        c[:, k, 2] = sp.c[1]
        c[:, k, 3] = sp.c[0]
    return IrregularitySplines(n=n, x0=float(s[0]), dx=dx, c=np.ascontiguousarray(c))


@njit(inline="always", **JIT_NRT_FREE)
def irregularity_at(T, s, ch):
    """(ξ, dξ/ds, d²ξ/ds²) of channel ``ch`` (:data:`CHANNELS` index) at arc length ``s`` [m]; zero
    outside the splined range."""
    if T.n == 0:
        return 0.0, 0.0, 0.0
    u = (s - T.x0) / T.dx
    if u < 0.0 or u >= T.n:
        return 0.0, 0.0, 0.0
    i = int(u)
    x = s - (T.x0 + i * T.dx)
    c0 = T.c[i, ch, 0]
    c1 = T.c[i, ch, 1]
    c2 = T.c[i, ch, 2]
    c3 = T.c[i, ch, 3]
    return c0 + x * (c1 + x * (c2 + x * c3)), c1 + x * (2.0 * c2 + 3.0 * x * c3), 2.0 * c2 + 6.0 * x * c3


class TrackParams(NamedTuple):
    """Centre-line table of :func:`hpcrail.models.track.geometry.build_track_table` (``nodes`` float64[n,
    7], ``slopes`` float64[n-1, 2], ``s0``, ``h``, ``inv_h``) and the rail spacing ``two_b`` [m] that turns
    the superelevation into the cant angle."""

    nodes: np.ndarray
    slopes: np.ndarray
    s0: float
    h: float
    inv_h: float
    two_b: float
    length: float


def track_params(table, two_b: float) -> TrackParams:
    """Kernel parameters from a :class:`~hpcrail.models.track.geometry.TrackTable`."""
    if table.nodes.shape[1] != N_TCOL:
        raise ValueError("unexpected track table layout")
    return TrackParams(nodes=np.ascontiguousarray(table.nodes), slopes=np.ascontiguousarray(table.slopes),
                       s0=float(table.s0), h=float(table.h), inv_h=1.0 / float(table.h), two_b=float(two_b),
                       length=float(table.length))


@njit(inline="always", **JIT_NRT_FREE)
def track_frame(T, s):
    """Track frame at arc length ``s`` [m]: ``(X, Y, ψ^t, κ, κ', φ^t, φ^t')`` — origin [m], heading [rad],
    curvature [1/m] and its slope [1/m²], cant angle [rad] and its slope [rad/m] (e' of the cell; the second
    derivative of the cant is zero inside cells).  Straight level track beyond the table."""
    nodes = T.nodes
    n = nodes.shape[0]
    u = (s - T.s0) * T.inv_h
    if u < 0.0:
        x = s - T.s0
        c = nodes[0, T_C]
        sn = nodes[0, T_S]
        e = nodes[0, T_E]
        return (nodes[0, T_X] + x * c, nodes[0, T_Y] + x * sn, nodes[0, T_TH], 0.0, 0.0,
                -math.asin(e / T.two_b), 0.0)
    i = int(u)
    if i >= n - 1:
        x = s - (T.s0 + (n - 1) * T.h)
        if x > 0.0:
            c = nodes[n - 1, T_C]
            sn = nodes[n - 1, T_S]
            e = nodes[n - 1, T_E]
            return (nodes[n - 1, T_X] + x * c, nodes[n - 1, T_Y] + x * sn, nodes[n - 1, T_TH], 0.0, 0.0,
                    -math.asin(e / T.two_b), 0.0)
        i = n - 2
    x = s - (T.s0 + i * T.h)
    hc = T.h
    kp = T.slopes[i, 0]
    k = nodes[i, T_K] + kp * x
    th = nodes[i, T_TH] + nodes[i, T_K] * x + 0.5 * kp * x * x
    ep = T.slopes[i, 1]
    e = nodes[i, T_E] + ep * x
    w = x / hc
    w2 = w * w
    h00 = 1.0 - 3.0 * w2 + 2.0 * w2 * w
    h10 = (w - 2.0 * w2 + w2 * w) * hc
    h01 = 3.0 * w2 - 2.0 * w2 * w
    h11 = (w2 * w - w2) * hc
    c0 = nodes[i, T_C]
    s0 = nodes[i, T_S]
    c1 = nodes[i + 1, T_C]
    s1 = nodes[i + 1, T_S]
    X = h00 * nodes[i, T_X] + h10 * c0 + h01 * nodes[i + 1, T_X] + h11 * c1
    Y = h00 * nodes[i, T_Y] + h10 * s0 + h01 * nodes[i + 1, T_Y] + h11 * s1
    r = e / T.two_b
    phi = -math.asin(r)
    dphi = -ep / (T.two_b * math.sqrt(1.0 - r * r))
    return X, Y, th, k, kp, phi, dphi


__all__ = ["CHANNELS", "IrregularitySplines", "no_irregularity", "irregularity_splines", "irregularity_at",
           "TrackParams", "track_params", "track_frame"]
