"""Kalker's creepage and spin coefficients C11, C22, C23 as functions of the contact ellipse ratio a/b.

**Kalker coefficients**: Table E.3 of Kalker (1990) for ν = 0, 0.25, 0.5 (shipped CSV), interpolated in ν
as in CONTACT (quadratic in ν for 1/C), tabulated on a uniform grid of ln(a/b) ∈ [ln 0.1, ln 10] by a
monotone cubic (PCHIP) through the table nodes; a/b outside [0.1, 10] is clamped to the table ends.
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


class KalkerParams(NamedTuple):
    """C11, C22, C23 float64[n] on ln(a/b) = lo + k·d (k = 0..n-1), for one Poisson ratio ``nu``."""

    n: int
    lo: float
    d: float
    c11: np.ndarray
    c22: np.ndarray
    c23: np.ndarray
    nu: float


def kalker_params(nu: float = 0.28, n: int = 401) -> KalkerParams:
    """Kalker coefficient table for the kernels at Poisson ratio ``nu`` (0 <= ν <= 0.5)."""
    if not 0.0 <= nu <= 0.5:
        raise ValueError(f"Kalker coefficients: nu must be in [0, 0.5], got {nu}")
    aob, C = kalker_table()
    Cn = kalker_nu(C, nu)  # [k, coef]
    x = np.log(aob)
    grid = np.linspace(x[0], x[-1], n)
    tab = [PchipInterpolator(x, Cn[:, j])(grid) for j in range(3)]
    c = np.ascontiguousarray
    return KalkerParams(n=n, lo=float(grid[0]), d=float(grid[1] - grid[0]), c11=c(tab[0]), c22=c(tab[1]),
                        c23=c(tab[2]), nu=float(nu))


@njit(**JIT_NRT_FREE)
def kalker_coefficients(Kc, a_over_b):
    """(C11, C22, C23) at a/b (clamped to [0.1, 10]); linear interpolation on the fine ln(a/b) grid."""
    u = (math.log(a_over_b) - Kc.lo) / Kc.d
    if u <= 0.0:
        return Kc.c11[0], Kc.c22[0], Kc.c23[0]
    i = int(u)
    if i >= Kc.n - 1:
        return Kc.c11[Kc.n - 1], Kc.c22[Kc.n - 1], Kc.c23[Kc.n - 1]
    w = u - i
    return (Kc.c11[i] + w * (Kc.c11[i + 1] - Kc.c11[i]), Kc.c22[i] + w * (Kc.c22[i + 1] - Kc.c22[i]),
            Kc.c23[i] + w * (Kc.c23[i + 1] - Kc.c23[i]))
