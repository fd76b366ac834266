"""Rolling-radius difference Δr(y) and equivalent conicity (EN 15302 / UIC 519).

Δr(y) = r_left - r_right of the rigid contact (eq 12, roll included) as a function of the wheelset lateral
shift y (positive to the left: the left wheel rolls on a larger radius on a coned tread, Δr > 0).

**Equivalent conicity** tan γ_e(ŷ) (EN 15302:2008+A1:2010): the conicity of the conical wheelset whose kinematic
(Klingel) oscillation has the same wavelength λ at the amplitude ŷ.  The standard's method ("integration of the
linearised equation of motion", :data:`METHODS` ``en15302``; ``klingel`` names the same) integrates
y'' = -Δr(y)/(2 e0 r0) (x the distance run, e0 half the distance of the contact points, r0 the nominal radius)
over one period; tan γ_e = (2π/λ)² e0 r0, where e0 r0 cancels.  The amplitude ŷ is **half the peak-to-peak
excursion** of that oscillation: for an asymmetric Δr (worn or different wheels, a wheel-diameter difference) the
wheelset oscillates about a shifted equilibrium and not symmetrically, so hpcrail finds the turning points
y1 < y2 with y2 - y1 = 2ŷ of one orbit — equal potential V(y1) = V(y2), V(y) = ∫Δr — and integrates from y1.  Of
several such orbits the one about the equilibrium nearest the track centre is taken.  Where no orbit of that
size exists (Δr does not restore the wheelset: the wheelset runs to its flange or does not oscillate) the
equivalent conicity is **0**, as the standard reports it.

The **harmonic** linearisation (describing function, ``harmonic``) tan γ_e = 1/(π ŷ) ∫_0^{2π} Δr(y_c + ŷ sin θ)/2
· sin θ dθ about the orbit's centre y_c is given for comparison.  For a cone of slope tan γ on knife-edge rails
without roll coupling both give tan γ exactly.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import solve_ivp

#: equivalent-conicity methods by name: the standard's integration (two names for it) and the harmonic one
METHODS = {"en15302": "EN 15302 integration of the linearised equation of motion (Klingel)",
           "klingel": "EN 15302 integration of the linearised equation of motion (Klingel)",
           "harmonic": "harmonic linearisation (describing function)"}


def _interp(ys: np.ndarray, dr: np.ndarray):
    ys = np.asarray(ys, float)
    dr = np.asarray(dr, float)

    def f(y):
        return float(np.interp(y, ys, dr))
    return f


def _potential(ys: np.ndarray, dr: np.ndarray) -> np.ndarray:
    """V(y) = ∫_{ys[0]}^{y} Δr dy at the samples (exact for the piecewise-linear Δr)."""
    return np.concatenate([[0.0], np.cumsum(0.5 * (dr[1:] + dr[:-1]) * np.diff(ys))])


def _V(ys, dr, V, y):
    """V at y (piecewise quadratic between the samples)."""
    i = int(np.clip(np.searchsorted(ys, y) - 1, 0, len(ys) - 2))
    t = y - ys[i]
    s = (dr[i + 1] - dr[i]) / (ys[i + 1] - ys[i])
    return V[i] + dr[i] * t + 0.5 * s * t * t


def orbit(ys, dr, amplitude: float):
    """Turning points (y1, y2), y2 - y1 = 2 ``amplitude``, of a Klingel oscillation in the sampled Δr (ys [m],
    dr [m] piecewise linear), or None where the wheelset does not oscillate with that amplitude.  Of several
    orbits, the one whose centre is nearest the restoring zero of Δr closest to y = 0."""
    from scipy.optimize import brentq

    ys = np.asarray(ys, float)
    dr = np.asarray(dr, float)
    a2 = 2.0 * amplitude
    if not (amplitude > 0 and ys[-1] - ys[0] > a2):
        return None
    V = _potential(ys, dr)

    def h(y1):
        return _V(ys, dr, V, y1 + a2) - _V(ys, dr, V, y1)

    grid = np.linspace(ys[0], ys[-1] - a2, max(64, int((ys[-1] - ys[0] - a2) / 1e-4) + 1))
    hv = np.array([h(g) for g in grid])
    roots = []
    for k in np.where(np.sign(hv[:-1]) * np.sign(hv[1:]) <= 0)[0]:
        if hv[k] == 0.0 and hv[k + 1] == 0.0:
            continue
        try:
            roots.append(brentq(h, grid[k], grid[k + 1], xtol=1e-15, rtol=1e-14))
        except ValueError:
            continue
    # restoring equilibria: zeros of Δr where it rises
    zc = [ys[i] - dr[i] * (ys[i + 1] - ys[i]) / (dr[i + 1] - dr[i]) for i in range(len(ys) - 1)
          if dr[i] <= 0.0 < dr[i + 1]]
    y_eq = min(zc, key=abs) if zc else 0.0
    best = None
    for y1 in sorted(set(roots), key=lambda r: abs(r + amplitude - y_eq)):
        y2 = y1 + a2
        f1 = float(np.interp(y1, ys, dr))
        f2 = float(np.interp(y2, ys, dr))
        if not (f1 < 0.0 < f2):
            continue
        inside = (ys > y1) & (ys < y2)
        vmax = max(float(V[inside].max()) if np.any(inside) else -np.inf, _V(ys, dr, V, y1))
        if vmax > _V(ys, dr, V, y1) + 1e-18 * max(1.0, abs(V).max()):
            continue                                     # the orbit would leave the well
        best = (float(y1), float(y2))
        break
    return best


def klingel_wavelength(ys, dr, amplitude: float, e0r0: float = 1.0, start: float | None = None) -> float:
    """Wavelength [m] of y'' = -Δr(y)/(2 e0 r0) through its turning point ``start`` (default: the left turning
    point of the orbit of half peak-to-peak ``amplitude``, :func:`orbit`); Δr piecewise linear between the samples
    (ys [m], dr [m]).  ``e0r0`` [m²].  Raises ValueError when the motion is not oscillatory in the sampled range
    (no such orbit)."""
    f = _interp(ys, dr)
    if start is None:
        ob = orbit(ys, dr, amplitude)
        if ob is None:
            raise ValueError(f"no Klingel oscillation of amplitude {amplitude} in the sampled Δr range")
        start = ob[0]

    def rhs(x, s):
        return (s[1], -f(s[0]) / (2.0 * e0r0))

    def turn(x, s):  # y' = 0 after the start
        return s[1]
    turn.direction = 0.0
    slope = (float(np.interp(start + 2 * amplitude, ys, dr)) - f(start)) / (2.0 * amplitude)
    if slope <= 0:
        raise ValueError("Δr(y) does not restore the wheelset (non-positive mean slope)")
    L0 = 2.0 * math.pi * math.sqrt(e0r0 / (0.5 * slope))
    sol = solve_ivp(rhs, (0.0, 4.0 * L0), (start, 0.0), events=turn, rtol=1e-11,
                    atol=1e-14 * max(1.0, amplitude * 1e3), max_step=L0 / 400.0, method="DOP853")
    crossings = [x for x in sol.t_events[0] if x > 1e-9 * L0]
    if len(crossings) < 2:
        raise ValueError("no full Klingel oscillation found")
    return float(crossings[1])


def equivalent_conicity(ys, dr, amplitudes, method: str = "en15302") -> np.ndarray:
    """tan γ_e at each amplitude ŷ [m] (half peak-to-peak) from the sampled Δr(y) (ys increasing [m], dr [m]):
    ``method`` one of :data:`METHODS`.  0 where the wheelset does not oscillate with that amplitude (module
    docstring).  Raises ValueError for an unknown method."""
    if method not in METHODS:
        raise ValueError(f"unknown equivalent-conicity method {method!r}; allowed: {', '.join(METHODS)}")
    ys = np.asarray(ys, float)
    dr = np.asarray(dr, float)
    f = _interp(ys, dr)
    out = []
    for a in np.atleast_1d(np.asarray(amplitudes, float)):
        ob = orbit(ys, dr, float(a)) if np.isfinite(a) and a > 0 else None
        if ob is None:
            out.append(0.0)
            continue
        if method in ("en15302", "klingel"):
            try:
                L = klingel_wavelength(ys, dr, float(a), start=ob[0])
            except ValueError:
                out.append(0.0)
                continue
            out.append((2.0 * math.pi / L) ** 2)
        else:
            yc = 0.5 * (ob[0] + ob[1])
            th = np.linspace(0.0, 2.0 * math.pi, 8193)[:-1]        # periodic: the trapezoidal rule is spectral
            val = float(np.mean(0.5 * np.interp(yc + a * np.sin(th), ys, dr) * np.sin(th))) * 2.0 * math.pi
            out.append(val / (math.pi * a))
    return np.asarray(out)


def rolling_radius_difference(solver, ys):
    """Δr(y) [m] and the rigid solutions (X float64[n, 6]) on the increasing grid ``ys`` [m] (each wheel with its
    own profile and nominal radius)."""
    X, C, S = solver.sweep(np.asarray(ys, float))
    rl, rr = solver.rolling_radii(X)
    return rl - rr, X
