"""Track irregularities: one-sided PSDs (German ORE B176, FRA classes 1-6) and seeded synthesis of
stationary Gaussian samples by a sum of cosines or by an inverse FFT; inputs under each wheel with
their time delays.

This component knows nothing about vehicles: the vertical model (and later the wheel/rail model)
build their rail inputs from :class:`IrregularityProfile` and :func:`wheel_positions`.

Conventions (SI)
----------------
* Ω spatial angular frequency [rad/m]; PSDs are **one-sided in Ω**: S(Ω) [m²/(rad/m)] with
  variance σ² = ∫_0^∞ S(Ω) dΩ.  A PSD per cycle/m is S_f(f) = 2π S(2πf) (the GENSYS convention).
* Components: ``vertical`` profile (mean of the two rails, + up), ``alignment`` (mean lateral
  position, + left), ``gauge`` (gauge variation, + wide) and ``cross_level`` as the **height
  difference** Δz = z_left − z_right [m] over the rolling-circle base 2b = 1.5 m (the cross-level
  angle is Δz / 2b).  Rails (research notes §4.3): z_L = z_v + Δz/2, z_R = z_v − Δz/2,
  y_L = y_a + g/2, y_R = y_a − g/2.
* Track coordinate s [m] along the line.  A wheel at longitudinal position x_j in the vehicle
  (forward +) is at s_j(t) = s_0 + V t + x_j: the trailing wheels see the same track
  (x_lead − x_j)/V later (the per-wheel delays x_j/V).

Spectra (research notes ``wheelrail_and_vertical_research.md`` §4, parameters in
``hpcrail/data/track_irregularity_psd_parameters.csv`` with their verification status):

German (ORE B176-derived; A in m²·rad/m)::

    S_v = A_v Ωc² / ((Ω²+Ωr²)(Ω²+Ωc²))            S_a = A_a Ωc² / ((Ω²+Ωr²)(Ω²+Ωc²))
    S_φ = (A_v/b²) Ωc² Ω² / ((Ω²+Ωr²)(Ω²+Ωc²)(Ω²+Ωs²))   (cross-level angle), S_Δz = 4 b² S_φ
    S_g = A_g Ωc² Ω² / ((Ω²+Ωr²)(Ω²+Ωc²)(Ω²+Ωs²))

FRA classes 1-6 (A in cm²·rad/m, k = 0.25; S converted here from cm² to m²)::

    S_v = k A_v Ωc² / (Ω²(Ω²+Ωc²))      S_a = k A_a Ωc² / (Ω²(Ω²+Ωc²))
    S_Δz = S_g = 4 k A_v Ωc² / ((Ω²+Ωc²)(Ω²+Ωs²))      (form recalled, not verified)

Synthesis (research notes §4.3): z(x) = Σ_k a_k cos(Ω_k x + φ_k), a_k = √(2 S(Ω_k) ΔΩ), φ_k ~ U(0, 2π)
independent per component; the sum of cosines uses Ω_k = Ω_l + (k − ½)ΔΩ over the band, the IFFT the
harmonics Ω_k = 2πk/L of the profile length L (periodic sample, one ``numpy.fft.irfft``).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Iterable

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.models.track.spectra import (  # noqa: F401  (re-exported: the spectra are part of this component)
    COMPONENTS, DEFAULT_BAND_M, HALF_GAUGE_B, SPECTRA, Spectrum, band_variance, psd, spectrum,
)


# ------------------------------------------------------------------------------------------------
# synthesis
# ------------------------------------------------------------------------------------------------
@njit(**JIT)
def _sum_of_cosines(x0, dx, n, omega, amp, phase, z, dz):
    """z[j] = Σ_k amp_k cos(Ω_k x_j + φ_k), dz[j] = dz/dx at x_j = x0 + j dx (rotating phasors,
    re-anchored every 512 points so that round-off cannot accumulate)."""
    for j in range(n):
        z[j] = 0.0
        dz[j] = 0.0
    block = 512
    for k in range(omega.size):
        w = omega[k]
        a = amp[k]
        cr = math.cos(w * dx)
        ci = math.sin(w * dx)
        j0 = 0
        while j0 < n:
            arg = w * (x0 + j0 * dx) + phase[k]
            pr = math.cos(arg)
            pi = math.sin(arg)
            j1 = min(n, j0 + block)
            for j in range(j0, j1):
                z[j] += a * pr
                dz[j] -= a * w * pi
                t = pr * cr - pi * ci
                pi = pr * ci + pi * cr
                pr = t
            j0 = j1


def _phases(seed: int, component: str, n: int) -> np.ndarray:
    """Independent uniform phases per (seed, component): the vertical profile of a seed does not
    depend on which other components are synthesised."""
    rng = np.random.default_rng([int(seed), COMPONENTS.index(component)])
    return rng.uniform(0.0, 2.0 * np.pi, n)


@dataclasses.dataclass
class IrregularityProfile:
    """Synthesised irregularities on a uniform grid s_i = x0 + i·dx (i = 0..n−1).

    ``values[c]`` float64[n] irregularity [m], ``slopes[c]`` float64[n] its derivative d/ds [-]
    (exact derivative of the synthesised sum at the grid points), for each synthesised component c.
    Between grid points the profile is interpolated linearly (:meth:`at`).
    """

    x0: float
    dx: float
    values: dict
    slopes: dict
    spectrum: str = ""
    method: str = ""
    seed: int = 0
    band_m: tuple = (0.0, 0.0)

    @property
    def n(self) -> int:
        return next(iter(self.values.values())).size

    @property
    def s(self) -> np.ndarray:
        """Grid positions float64[n] [m]."""
        return self.x0 + self.dx * np.arange(self.n)

    def at(self, s, component: str = "vertical", derivative: bool = False) -> np.ndarray:
        """Irregularity [m] (or its slope [-]) at track positions ``s`` (any shape) by linear
        interpolation; zero outside the grid.  Raises ``KeyError`` for a component not synthesised."""
        arr = self.slopes[component] if derivative else self.values[component]
        return np.interp(np.asarray(s, float), self.s, arr, left=0.0, right=0.0)

    def rail(self, s, side: str, direction: str = "vertical") -> np.ndarray:
        """Position of the left/right rail [m]: vertical z_L,R = z_v ± Δz/2 or lateral
        y_L,R = y_a ± g/2 (components not synthesised count as zero)."""
        sign = {"left": 1.0, "right": -1.0}[side]
        if direction == "vertical":
            main, diff = "vertical", "cross_level"
        else:
            main, diff = "alignment", "gauge"
        out = np.zeros(np.shape(s))
        if main in self.values:
            out = out + self.at(s, main)
        if diff in self.values:
            out = out + sign * 0.5 * self.at(s, diff)
        return out

    def faded(self, fade_in_m: float, start_m: float = 0.0) -> "IrregularityProfile":
        """A copy multiplied by a raised-cosine fade-in: 0 for s ≤ start, ½(1 − cos(π(s−start)/L))
        up to start + L, 1 beyond (L = ``fade_in_m``), so that a vehicle starting at rest in static
        equilibrium on a flat track meets the irregularity gradually.  Slopes use the product rule."""
        s = self.s
        if fade_in_m <= 0:
            w = (s > start_m).astype(float)
            dw = np.zeros_like(s)
        else:
            u = np.clip((s - start_m) / fade_in_m, 0.0, 1.0)
            w = 0.5 * (1.0 - np.cos(np.pi * u))
            dw = np.where((u > 0) & (u < 1), 0.5 * np.pi / fade_in_m * np.sin(np.pi * u), 0.0)
        vals = {c: v * w for c, v in self.values.items()}
        slopes = {c: self.slopes[c] * w + self.values[c] * dw for c in self.values}
        return dataclasses.replace(self, values=vals, slopes=slopes)


def synthesise(spectrum_name: str, length_m: float, *, components: Iterable[str] = ("vertical",),
               method: str = "ifft", seed: int = 0, wavelength_min_m: float | None = None,
               wavelength_max_m: float | None = None, spacing_m: float | None = None,
               n_components: int = 2048, start_m: float = 0.0, scale: float = 1.0) -> IrregularityProfile:
    """Synthesise a seeded sample of stationary Gaussian track irregularities.

    Parameters
    ----------
    spectrum_name : one of :data:`SPECTRA`.
    length_m : length of track to cover [m], from ``start_m``.
    components : subset of :data:`COMPONENTS`.
    method : ``"sum_of_cosines"`` (Ω_k = Ω_l + (k−½)ΔΩ, ``n_components`` terms, quasi-periodic) or
        ``"ifft"`` (harmonics of the profile length, periodic over it; one inverse real FFT).
    seed : phases φ_k ~ U(0, 2π) from ``numpy.random.default_rng([seed, component index])``.
    wavelength_min_m, wavelength_max_m : synthesis band [m] (default: the family's typical band,
        :data:`DEFAULT_BAND_M`); Ω_l = 2π/λ_max, Ω_u = 2π/λ_min.
    spacing_m : grid spacing [m] (default λ_min/20: linear interpolation between grid points then
        loses < 2 % of the PSD at λ_min).
    scale : amplitude multiplier (1 = the spectrum as published).

    Returns
    -------
    :class:`IrregularityProfile` with float64[n] values [m] and slopes [-] on the grid.

    Raises
    ------
    KeyError for an unknown spectrum; ValueError for an unknown component/method or a band that is
    empty or not resolved by the grid (λ_min < 2·spacing) or longer than the profile (IFFT).

    Sources: research notes §4.3 (a_k = √(2 S(Ω_k) ΔΩ), variance Σ a_k²/2 = ∫ S dΩ).
    """
    spec = spectrum(spectrum_name)
    comps = list(components)
    for c in comps:
        if c not in COMPONENTS:
            raise ValueError(f"unknown irregularity component {c!r}; allowed: {', '.join(COMPONENTS)}")
    lmin_d, lmax_d = spec.default_band()
    lmin = float(wavelength_min_m if wavelength_min_m is not None else lmin_d)
    lmax = float(wavelength_max_m if wavelength_max_m is not None else lmax_d)
    if not 0 < lmin < lmax:
        raise ValueError(f"wavelength band must satisfy 0 < λ_min < λ_max, got [{lmin}, {lmax}] m")
    dx = float(spacing_m if spacing_m is not None else lmin / 20.0)
    if lmin < 2.0 * dx:
        raise ValueError(f"spacing_m = {dx} m does not resolve λ_min = {lmin} m (needs spacing ≤ λ_min/2)")
    if length_m <= 0:
        raise ValueError(f"length_m must be positive, got {length_m}")
    w_lo, w_hi = 2.0 * np.pi / lmax, 2.0 * np.pi / lmin
    n = int(np.ceil(length_m / dx)) + 2
    values, slopes = {}, {}
    if method == "sum_of_cosines":
        if n_components < 1:
            raise ValueError("n_components must be ≥ 1")
        dw = (w_hi - w_lo) / n_components
        omega = w_lo + (np.arange(n_components) + 0.5) * dw
        for c in comps:
            amp = scale * np.sqrt(2.0 * spec.psd(c, omega) * dw)
            z = np.empty(n)
            dz = np.empty(n)
            _sum_of_cosines(float(start_m), dx, n, omega, amp, _phases(seed, c, n_components), z, dz)
            values[c], slopes[c] = z, dz
    elif method == "ifft":
        from scipy.fft import next_fast_len

        n = next_fast_len(n, real=True)
        L = n * dx
        if lmax > L:
            raise ValueError(f"λ_max = {lmax} m exceeds the profile length {L:.1f} m: the IFFT cannot "
                             "represent it (lengthen the run or lower wavelength_max_m)")
        k = np.arange(n // 2 + 1)
        omega = 2.0 * np.pi * k / L
        dw = 2.0 * np.pi / L
        inband = (omega >= w_lo) & (omega <= w_hi) & (k > 0) & (k < n // 2 if n % 2 == 0 else True)
        for c in comps:
            S = np.zeros_like(omega)
            S[inband] = spec.psd(c, omega[inband])
            amp = scale * np.sqrt(2.0 * S * dw)
            ph = _phases(seed, c, omega.size)
            coef = 0.5 * n * amp * np.exp(1j * ph)
            # z(x_j) = Σ a_k cos(Ω_k (x_j − start) + φ_k): the profile is periodic over L from start_m
            values[c] = np.fft.irfft(coef, n)
            slopes[c] = np.fft.irfft(1j * omega * coef, n)
    else:
        raise ValueError(f"unknown synthesis method {method!r}; allowed: sum_of_cosines, ifft")
    return IrregularityProfile(x0=float(start_m), dx=dx, values=values, slopes=slopes, spectrum=spectrum_name,
                               method=method, seed=int(seed), band_m=(lmin, lmax))


def wheel_positions(t, speed_mps: float, wheel_x_m, s0_m: float = 0.0) -> np.ndarray:
    """Track positions s_j(t) = s0 + V t + x_j [m] of every wheel (float64[k, W]) at times ``t``
    (float64[k], s): wheel j sees the track (x_lead − x_j)/V after the leading wheel."""
    t = np.asarray(t, float)
    return s0_m + speed_mps * t[:, None] + np.asarray(wheel_x_m, float)[None, :]


def wheel_inputs(profile: IrregularityProfile, t, speed_mps: float, wheel_x_m, s0_m: float = 0.0,
                 component: str = "vertical") -> tuple[np.ndarray, np.ndarray]:
    """Irregularity under each wheel and its rate: ``(u, du/dt)`` float64[k, W] [m], [m/s]."""
    s = wheel_positions(t, speed_mps, wheel_x_m, s0_m)
    return profile.at(s, component), speed_mps * profile.at(s, component, derivative=True)
