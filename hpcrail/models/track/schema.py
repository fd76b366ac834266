"""``track:`` block shared by scenario kinds that run over track irregularities (vertical vehicle
dynamics now, wheel/rail contact later).  The physics is :mod:`hpcrail.models.track.irregularity`;
this module imports only the spectrum table (no numba: validating a scenario imports it).

``track.irregularity`` selects one of:

* ``{kind: none}`` — perfectly smooth track;
* ``{kind: harmonic, amplitude_mm, frequency_rad_per_s | wavelength_m, phase_rad}`` — a sinusoidal
  vertical profile z(s) = A sin(Ω s + φ); with ``frequency_rad_per_s`` = ω the leading wheel sees
  A sin(ω t + φ) (Ω = ω/V), the form of the examples of Yu et al. 2023;
* ``{kind: psd, spectrum, method, seed, ...}`` — a seeded sample of the German (ORE B176) or FRA
  spectra synthesised by a sum of cosines or an inverse FFT (:mod:`hpcrail.models.track.irregularity`).

Sweeps vary ``track.irregularity.seed`` and ``track.irregularity.spectrum`` like any other field.
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import Field, model_validator

from hpcrail.config.base import Strict
from hpcrail.config.errors import ConfigValueError

#: most points of a synthesised irregularity profile (profile length / spacing)
MAX_PROFILE_POINTS = 50_000_000
from hpcrail.models.track.spectra import COMPONENTS, SPECTRA, spectrum

ComponentName = Literal["vertical", "alignment", "gauge", "cross_level"]
SpectrumName = Literal["german_low", "german_high", "fra_class_1", "fra_class_2", "fra_class_3", "fra_class_4",
                       "fra_class_5", "fra_class_6"]
assert set(SpectrumName.__args__) == set(SPECTRA) and set(ComponentName.__args__) == set(COMPONENTS)


class NoIrregularity(Strict):
    """A perfectly smooth track (free vibration, gravity settling, tests)."""

    kind: Literal["none"] = "none"


class HarmonicIrregularity(Strict):
    """Sinusoidal vertical profile z(s) = A sin(Ω s + φ).

    Give exactly one of ``frequency_rad_per_s`` (ω: the leading wheel sees A sin(ω t + φ) at the
    scenario speed, Ω = ω/V, as in Yu et al. 2023 §III) or ``wavelength_m`` (Ω = 2π/λ).  The profile
    starts where the leading wheel is at t = 0: a wheel x behind it sees A sin(ω(t − x/V) + φ) from
    t = x/V on and a smooth rail before.
    """

    kind: Literal["harmonic"] = "harmonic"
    amplitude_mm: float = Field(..., ge=-1000, le=1000, description="amplitude A of the vertical profile")
    frequency_rad_per_s: Optional[float] = Field(None, gt=0, le=1e5, description="excitation ω seen by the leading "
                                                 "wheel")
    wavelength_m: Optional[float] = Field(None, ge=1e-3, le=1e5)
    phase_rad: float = Field(0.0, ge=-7, le=7, description="φ (within ±2π)")

    @model_validator(mode="after")
    def _one(self):
        if (self.frequency_rad_per_s is None) == (self.wavelength_m is None):
            raise ConfigValueError("give exactly one of frequency_rad_per_s and wavelength_m",
                                   allowed="frequency_rad_per_s or wavelength_m")
        return self


class PSDIrregularity(Strict):
    """Seeded sample of a published irregularity spectrum (stationary Gaussian).

    ``method``: ``ifft`` (fast; periodic over the profile length) or ``sum_of_cosines``
    (``n_components`` terms over the band).  The band defaults to the family's typical wavelengths
    (German 0.5-80 m, FRA 1.5-300 m); ``spacing_m`` defaults to λ_min/20.  ``fade_in_m``: the
    profile rises from zero with a raised cosine over this length from the point where the leading
    wheel starts, so that a vehicle starting in static equilibrium meets it gradually.
    """

    kind: Literal["psd"] = "psd"
    spectrum: SpectrumName = Field(..., description="german_low, german_high (ORE B176) or fra_class_1..6")
    method: Literal["ifft", "sum_of_cosines"] = "ifft"
    seed: int = Field(0, ge=0, le=2 ** 63 - 1)
    components: list[ComponentName] = Field(["vertical"], min_length=1, max_length=4)
    wavelength_min_m: Optional[float] = Field(None, ge=0.01, le=1e4)
    wavelength_max_m: Optional[float] = Field(None, ge=0.01, le=1e4)
    spacing_m: Optional[float] = Field(None, ge=1e-3, le=1e3, description="grid spacing of the synthesised profile")
    n_components: int = Field(2048, ge=1, le=1_000_000, description="terms of the sum of cosines")
    length_m: Optional[float] = Field(None, gt=0, le=1e7, description="length of track synthesised from the leading "
                                      "wheel's start (default: the run length V·T); fix it so that every speed of a "
                                      "sweep runs over the same track sample")
    fade_in_m: float = Field(20.0, ge=0, le=1e4)
    scale: float = Field(1.0, ge=0, le=100, description="amplitude multiplier (1 = the published spectrum)")

    @model_validator(mode="after")
    def _band(self):
        lo_d, hi_d = spectrum(self.spectrum).default_band()
        lo = self.wavelength_min_m if self.wavelength_min_m is not None else lo_d
        hi = self.wavelength_max_m if self.wavelength_max_m is not None else hi_d
        if lo >= hi:
            raise ConfigValueError("wavelength_min_m must be below wavelength_max_m", field="wavelength_min_m",
                                   allowed=f"< {hi} (wavelength_max_m)")
        if self.spacing_m is not None and self.spacing_m > lo / 2:
            raise ConfigValueError(f"spacing_m does not resolve the shortest wavelength {lo} m", field="spacing_m",
                                   allowed=f"≤ {lo / 2:g}")
        return self

    def spacing(self) -> float:
        """Grid spacing [m] after defaults (λ_min/20)."""
        return self.spacing_m if self.spacing_m is not None else self.band()[0] / 20.0

    def band(self) -> tuple[float, float]:
        """(λ_min, λ_max) [m] after defaults."""
        lo_d, hi_d = spectrum(self.spectrum).default_band()
        return (self.wavelength_min_m if self.wavelength_min_m is not None else lo_d,
                self.wavelength_max_m if self.wavelength_max_m is not None else hi_d)


Irregularity = Annotated[Union[NoIrregularity, HarmonicIrregularity, PSDIrregularity], Field(discriminator="kind")]


class Track(Strict):
    """Track input of a scenario."""

    irregularity: Irregularity = NoIrregularity()
