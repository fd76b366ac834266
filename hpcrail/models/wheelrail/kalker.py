"""Kalker's creepage and spin coefficients C11, C22, C23 as functions of the contact ellipse ratio a/b.

**Kalker coefficients**: Table E.3 of Kalker (1990) for ν = 0, 0.25, 0.5 (shipped CSV), interpolated in ν
as in CONTACT (quadratic in ν for 1/C), tabulated on a uniform grid of ln(a/b) by a monotone cubic (PCHIP) through
the table nodes for 0.1 ≤ a/b ≤ 10.  Beyond the table (the flange contact's slender ellipses reach a/b ≈ 20 and
more) Kalker's asymptotes for g = min(a/b, b/a) → 0 (Kalker 1990, as implemented in CONTACT's ``linrol``):

* a < b:  C11 = π²/(4(1-ν)),  C22 = π²/4,  C23 = π√g/(3(1-ν)) (1 + ν(ln(16/g) - 5));
* a > b:  with Λ = ln(16/g²),  C11 = 2π/((Λ - 2ν) g) (1 + (3 - ln 4)/(Λ - 2ν)),
  C22 = 2π/g (1 + (1-ν)(3 - ln 4)/((1-ν)Λ + 2ν)) / ((1-ν)Λ + 2ν),  C23 = 2π/(3 g^1.5 ((1-ν)Λ - 2 + 4ν)).

The asymptotes differ from the table at g = 0.1 by up to 5 %; hpcrail joins them continuously: for
g_join = 0.025 < g < 0.1 the asymptote is multiplied by a factor going from the table's ratio at 0.1 to 1 (a
quintic smoothstep in ln g), so that the coefficients equal the table for g ≥ 0.1 and Kalker's asymptotes for
g ≤ 0.025.  The tabulated range is a/b ∈ [1/50, 50]; beyond it the end values are kept.
"""
from __future__ import annotations

import csv
import io
import math
from importlib import resources
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.interpolate import PchipInterpolator

from hpcrail._numba import JIT_NRT_FREE


# ------------------------------------------------------------------------------------------ Kalker

def kalker_table() -> tuple[np.ndarray, np.ndarray]:
    """Kalker (1990) Table E.3 from the shipped CSV: (a_over_b float64[19], C float64[19, 3, 3]) with
    C[k, coefficient (C11, C22, C23), ν index (0, 0.25, 0.5)], sorted by a/b."""
    text = resources.files("hpcrail.data").joinpath("wheelrail", "kalker_cij_table_E3.csv").read_text()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    rows = []
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        g = float(r["g"])
        aob = g if r["case"].strip() == "a<b" else 1.0 / g
        C = np.array([[float(r[f"{c}_nu{nu}"]) for nu in ("0", "0.25", "0.5")] for c in ("C11", "C22", "C23")])
        rows.append((aob, C))
    rows.sort(key=lambda t: t[0])
    aob = []
    Cs = []
    for a, C in rows:  # a/b = 1 appears in both halves with the same values: keep one
        if aob and abs(a - aob[-1]) < 1e-12:
            continue
        aob.append(a)
        Cs.append(C)
    return np.array(aob), np.array(Cs)


def kalker_nu(C_nu: np.ndarray, nu: float) -> np.ndarray:
    """Interpolate coefficients given at ν = 0, 0.25, 0.5 (last axis) to ν, quadratically in 1/C
    (the interpolation of CONTACT's ``linrol``)."""
    c0, c1, c2 = C_nu[..., 0], C_nu[..., 1], C_nu[..., 2]
    inv = (nu - 0.25) * (nu - 0.5) * 8.0 / c0 - (nu - 0.5) * nu * 16.0 / c1 + nu * (nu - 0.25) * 8.0 / c2
    return 1.0 / inv


#: range of a/b tabulated for the kernels (Kalker's asymptotes beyond the Table E.3 range 0.1..10)
AOB_MIN = 1.0 / 50.0
AOB_MAX = 50.0
G_JOIN = 0.025


def kalker_asymptote(aob, nu: float) -> np.ndarray:
    """Kalker's slender-ellipse asymptotes (module docstring) at a/b ``aob`` (array), Poisson ratio ν:
    float64[..., 3] = (C11, C22, C23).  Valid as min(a/b, b/a) → 0 (use for a/b < 0.1 or > 10)."""
    aob = np.asarray(aob, float)
    g = np.minimum(aob, 1.0 / aob)
    out = np.empty(aob.shape + (3,))
    lt = aob <= 1.0
    pi = math.pi
    gl = g[lt]
    out[lt, 0] = pi ** 2 / 4.0 / (1.0 - nu)
    out[lt, 1] = pi ** 2 / 4.0
    out[lt, 2] = pi * np.sqrt(gl) / 3.0 / (1.0 - nu) * (1.0 + nu * (np.log(16.0 / gl) - 5.0))
    gg = g[~lt]
    al = np.log(16.0 / gg ** 2)
    out[~lt, 0] = 2.0 * pi / (al - 2.0 * nu) / gg * (1.0 + (3.0 - math.log(4.0)) / (al - 2.0 * nu))
    out[~lt, 1] = (2.0 * pi / gg * (1.0 + (1.0 - nu) * (3.0 - math.log(4.0)) / ((1.0 - nu) * al + 2.0 * nu))
                   / ((1.0 - nu) * al + 2.0 * nu))
    out[~lt, 2] = 2.0 * pi / 3.0 / gg ** 1.5 / ((1.0 - nu) * al - 2.0 + 4.0 * nu)
    return out


def kalker_coefficients_extended(aob, nu: float) -> np.ndarray:
    """C11, C22, C23 float64[..., 3] at a/b ``aob`` (array) for Poisson ratio ν: Table E.3 (PCHIP in ln a/b) for
    0.1 ≤ a/b ≤ 10, Kalker's asymptotes joined continuously beyond (module docstring); a/b outside
    [:data:`AOB_MIN`, :data:`AOB_MAX`] takes the end values."""
    aob = np.clip(np.asarray(aob, float), AOB_MIN, AOB_MAX)
    tab_aob, C = kalker_table()
    Cn = kalker_nu(C, nu)
    x = np.log(tab_aob)
    la = np.log(aob)
    out = np.empty(aob.shape + (3,))
    inside = (aob >= tab_aob[0]) & (aob <= tab_aob[-1])
    for j in range(3):
        out[inside, j] = PchipInterpolator(x, Cn[:, j])(la[inside])
    for side, edge, cedge in ((aob < tab_aob[0], tab_aob[0], Cn[0]), (aob > tab_aob[-1], tab_aob[-1], Cn[-1])):
        if not np.any(side):
            continue
        ratio = cedge / kalker_asymptote(np.array([edge]), nu)[0]      # table / asymptote at g = 0.1
        g = np.minimum(aob[side], 1.0 / aob[side])
        t = np.clip((np.log(g) - math.log(G_JOIN)) / (math.log(0.1) - math.log(G_JOIN)), 0.0, 1.0)
        w = t ** 3 * (10.0 + t * (-15.0 + 6.0 * t))
        out[side] = kalker_asymptote(aob[side], nu) * (1.0 + (ratio[None, :] - 1.0) * w[:, None])
    return out


class KalkerParams(NamedTuple):
    """C11, C22, C23 float64[n] on ln(a/b) = lo + k·d (k = 0..n-1), for one Poisson ratio ``nu``."""

    n: int
    lo: float
    d: float
    c11: np.ndarray
    c22: np.ndarray
    c23: np.ndarray
    nu: float


def kalker_params(nu: float = 0.28, n: int = 1201) -> KalkerParams:
    """Kalker coefficient table for the kernels at Poisson ratio ``nu`` (0 <= ν <= 0.5) on ``n`` points of
    ln(a/b) ∈ [ln 1/50, ln 50] (:func:`kalker_coefficients_extended`)."""
    if not 0.0 <= nu <= 0.5:
        raise ValueError(f"Kalker coefficients: nu must be in [0, 0.5], got {nu}")
    grid = np.linspace(math.log(AOB_MIN), math.log(AOB_MAX), n)
    tab = kalker_coefficients_extended(np.exp(grid), nu)
    c = np.ascontiguousarray
    return KalkerParams(n=n, lo=float(grid[0]), d=float(grid[1] - grid[0]), c11=c(tab[:, 0]), c22=c(tab[:, 1]),
                        c23=c(tab[:, 2]), nu=float(nu))


@njit(**JIT_NRT_FREE)
def kalker_coefficients(Kc, a_over_b):
    """(C11, C22, C23) at a/b (clamped to [1/50, 50]); linear interpolation on the fine ln(a/b) grid."""
    u = (math.log(a_over_b) - Kc.lo) / Kc.d
    if u <= 0.0:
        return Kc.c11[0], Kc.c22[0], Kc.c23[0]
    i = int(u)
    if i >= Kc.n - 1:
        return Kc.c11[Kc.n - 1], Kc.c22[Kc.n - 1], Kc.c23[Kc.n - 1]
    w = u - i
    return (Kc.c11[i] + w * (Kc.c11[i + 1] - Kc.c11[i]), Kc.c22[i] + w * (Kc.c22[i + 1] - Kc.c22[i]),
            Kc.c23[i] + w * (Kc.c23[i + 1] - Kc.c23[i]))
