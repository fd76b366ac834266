"""One-sided PSDs of track irregularities (German ORE B176, FRA classes 1-6): the spectrum table and
its formulas (no numba: a scenario's ``track.irregularity`` block validates against this table).
Synthesis of samples is :mod:`hpcrail.models.track.irregularity`.

Conventions (SI): Ω spatial angular frequency [rad/m]; PSDs are one-sided in Ω: S(Ω) [m²/(rad/m)] with
variance σ² = ∫_0^∞ S(Ω) dΩ (a PSD per cycle/m is S_f(f) = 2π S(2πf), the GENSYS convention);
components ``vertical``, ``alignment``, ``gauge`` and ``cross_level`` (height difference over the
rolling-circle base 2b = 1.5 m).  Formulas and parameters: see the docstring of
:mod:`hpcrail.models.track.irregularity` and ``hpcrail/data/track_irregularity_psd_parameters.csv``
(its comment lines give each value's source and verification status).
"""
from __future__ import annotations

import csv
import dataclasses
import io
from importlib import resources

import numpy as np

COMPONENTS = ("vertical", "alignment", "gauge", "cross_level")
#: half the rolling-circle spacing b [m] used by the cross-level spectra (research notes §4.1)
HALF_GAUGE_B = 0.75
#: spectra accepted by ``track.irregularity.spectrum``
SPECTRA = ("german_low", "german_high", "fra_class_1", "fra_class_2", "fra_class_3", "fra_class_4",
           "fra_class_5", "fra_class_6")
#: typical wavelength band [m] (λ_min, λ_max) used with each family in public code (research notes §4.1)
DEFAULT_BAND_M = {"german": (0.5, 80.0), "fra": (1.5, 300.0)}


@dataclasses.dataclass(frozen=True)
class Spectrum:
    """Parameters of one PSD family/level (one row of the CSV), SI units (A in m²·rad/m)."""

    name: str
    family: str            #: "german" or "fra"
    A_v: float
    A_a: float
    A_g: float             #: German gauge coefficient (NaN for FRA, whose gauge form uses A_v)
    omega_c: float
    omega_r: float
    omega_s: float
    k: float
    verified: str          #: verification status copied from the CSV

    def psd(self, component: str, omega) -> np.ndarray:
        """One-sided PSD S(Ω) [m²/(rad/m)] of ``component`` at spatial angular frequencies ``omega``
        (float64 array, rad/m, > 0).  Raises ``ValueError`` for an unknown component."""
        w2 = np.asarray(omega, dtype=float) ** 2
        c2, r2, s2 = self.omega_c ** 2, self.omega_r ** 2, self.omega_s ** 2
        if self.family == "german":
            base = c2 / ((w2 + r2) * (w2 + c2))
            if component == "vertical":
                return self.A_v * base
            if component == "alignment":
                return self.A_a * base
            if component == "cross_level":
                # angle spectrum (A_v/b²)·… converted to the height difference over 2b: × 4b²
                return 4.0 * self.A_v * base * w2 / (w2 + s2)
            if component == "gauge":
                return self.A_g * base * w2 / (w2 + s2)
        else:
            with np.errstate(divide="ignore"):
                if component == "vertical":
                    return self.k * self.A_v * c2 / (w2 * (w2 + c2))
                if component == "alignment":
                    return self.k * self.A_a * c2 / (w2 * (w2 + c2))
            if component in ("cross_level", "gauge"):
                return 4.0 * self.k * self.A_v * c2 / ((w2 + c2) * (w2 + s2))
        raise ValueError(f"unknown irregularity component {component!r}; allowed: {', '.join(COMPONENTS)}")

    def default_band(self) -> tuple[float, float]:
        """(λ_min, λ_max) [m] typically used with this family."""
        return DEFAULT_BAND_M[self.family]


def _load_spectra() -> dict[str, Spectrum]:
    text = resources.files("hpcrail.data").joinpath("track_irregularity_psd_parameters.csv").read_text()
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    out = {}
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        fam = r["family"].strip().lower()

        def num(key, scale=1.0):
            v = r.get(key, "").strip()
            return float(v) * scale if v else float("nan")

        if fam == "german":
            name = {"low_disturbance": "german_low", "high_disturbance": "german_high"}[r["level"].strip()]
            sc = 1.0
        else:
            name = "fra_" + r["level"].strip().replace("class", "class_")
            sc = 1e-4  # cm² → m²
        out[name] = Spectrum(name=name, family=fam, A_v=num("A_v", sc), A_a=num("A_a", sc), A_g=num("A_g", sc),
                             omega_c=num("Omega_c"), omega_r=num("Omega_r"), omega_s=num("Omega_s"),
                             k=num("k") if fam == "fra" else 1.0, verified=r["verified"].strip())
    return out


_SPECTRA: dict[str, Spectrum] | None = None


def spectrum(name: str) -> Spectrum:
    """The named spectrum (``german_low``, ``german_high``, ``fra_class_1`` … ``fra_class_6``).

    Raises ``KeyError`` naming the allowed values for an unknown name.
    """
    global _SPECTRA
    if _SPECTRA is None:
        _SPECTRA = _load_spectra()
    if name not in _SPECTRA:
        raise KeyError(f"unknown track irregularity spectrum {name!r}; allowed: {', '.join(sorted(_SPECTRA))}")
    return _SPECTRA[name]


def psd(name: str, component: str, omega) -> np.ndarray:
    """Shortcut for ``spectrum(name).psd(component, omega)`` [m²/(rad/m)], Ω in rad/m."""
    return spectrum(name).psd(component, omega)


def band_variance(spectrum_name: str, component: str, wavelength_min_m: float, wavelength_max_m: float,
                  scale: float = 1.0) -> float:
    """σ² = ∫ S(Ω) dΩ over the band [2π/λ_max, 2π/λ_min] [m²] (adaptive quadrature)."""
    from scipy.integrate import quad

    spec = spectrum(spectrum_name)
    lo, hi = 2 * np.pi / wavelength_max_m, 2 * np.pi / wavelength_min_m
    val, _ = quad(lambda w: float(spec.psd(component, np.array([w]))[0]), lo, hi, limit=500)
    return scale * scale * val
