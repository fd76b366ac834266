"""Rolling-radius difference Δr(y) and equivalent conicity (EN 15302 / UIC 519).

Δr(y) = r_left - r_right of the rigid contact (eq 12, roll included) as a function of the wheelset lateral
shift y (positive to the left: the left wheel rolls on a larger radius on a coned tread, Δr > 0).

Equivalent conicity tan γ_e(ŷ): the conicity of the conical wheelset whose kinematic (Klingel) oscillation
has the same wavelength L at amplitude ŷ.  Klingel's equation y'' = -Δr(y)/(2 e0 r0) (x the distance run,
e0 half the distance of the contact points, r0 the nominal radius) is integrated from y = ŷ, y' = 0 over
one period; tan γ_e = (2π/L)² e0 r0, where e0 r0 cancels (EN 15302:2008, the "integration of the
linearised equation of motion" method).  The harmonic linearisation (describing function)
tan γ_e = 1/(π ŷ) ∫_0^{2π} Δr(ŷ sin θ)/2 · sin θ dθ is provided for comparison.  For a cone of slope tan γ
on knife-edge rails without roll coupling both give tan γ exactly.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.integrate import quad, solve_ivp


def _interp(ys: np.ndarray, dr: np.ndarray):
    ys = np.asarray(ys, float)
    dr = np.asarray(dr, float)

    def f(y):
        return float(np.interp(y, ys, dr))
    return f


def klingel_wavelength(ys, dr, amplitude: float, e0r0: float = 1.0) -> float:
    """Wavelength [m] of y'' = -Δr(y)/(2 e0 r0) from y = amplitude, y' = 0 (Δr piecewise linear between the
    samples (ys [m], dr [m])).  ``e0r0`` [m²].  Raises ValueError when the motion is not oscillatory in
    the sampled range."""
    f = _interp(ys, dr)
    if amplitude <= 0 or amplitude > max(abs(ys[0]), abs(ys[-1])):
        raise ValueError(f"amplitude {amplitude} outside the sampled Δr range")

    def rhs(x, s):
        return (s[1], -f(s[0]) / (2.0 * e0r0))

    def turn(x, s):  # y' = 0 after the start
        return s[1]
    turn.direction = 0.0
    crossings = []
    x0 = 0.0
    s0 = (amplitude, 0.0)
    # guess for the wavelength of the linearised motion, to bound the integration
    slope = (f(amplitude) - f(-amplitude)) / (2.0 * amplitude)
    if slope <= 0:
        raise ValueError("Δr(y) does not restore the wheelset (non-positive mean slope)")
    L0 = 2.0 * math.pi * math.sqrt(e0r0 / (0.5 * slope))
    sol = solve_ivp(rhs, (x0, 3.0 * L0), s0, events=turn, rtol=1e-11, atol=1e-14 * max(1.0, amplitude * 1e3),
                    max_step=L0 / 400.0, method="DOP853")
    crossings = [x for x in sol.t_events[0] if x > 1e-9 * L0]
    if len(crossings) < 2:
        raise ValueError("no full Klingel oscillation found")
    return float(crossings[1])


def equivalent_conicity(ys, dr, amplitudes, method: str = "klingel") -> np.ndarray:
    """tan γ_e at each amplitude [m] from the sampled Δr(y).  ``method``: "klingel" (EN 15302 integration)
    or "harmonic" (harmonic linearisation)."""
    out = []
    f = _interp(ys, dr)
    for a in np.atleast_1d(amplitudes):
        if method == "klingel":
            L = klingel_wavelength(ys, dr, float(a))
            out.append((2.0 * math.pi / L) ** 2)
        elif method == "harmonic":
            val, _ = quad(lambda th: 0.5 * f(a * math.sin(th)) * math.sin(th), 0.0, 2.0 * math.pi, limit=400)
            out.append(val / (math.pi * a))
        else:
            raise ValueError(f"unknown equivalent-conicity method {method!r}; allowed: klingel, harmonic")
    return np.asarray(out)


def rolling_radius_difference(solver, ys):
    """Δr(y) [m] and the rigid solutions (X float64[n, 6]) on the increasing grid ``ys`` [m]."""
    X, C, S = solver.sweep(np.asarray(ys, float))
    rl = solver.placement.r0 + solver.wheel(X[:, 2])
    rr = solver.placement.r0 + solver.wheel(X[:, 4])
    return rl - rr, X
