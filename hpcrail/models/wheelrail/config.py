"""Profile-pair configuration (YAML): profiles, placement, material, friction, tables.

A vehicle YAML can reference a profile pair file (``contact: ../wheelrail/s1002_uic60.yaml`` is resolved by
the generic loader), declare the field as :class:`ProfilePairConfig`, run :func:`check_profile_pair` with
the location of that field in its cross-field checks, and build with
``contact_tables(cfg.contact, doc, loc=("contact",))``.  Lengths carry their unit in the key
(``_mm``, ``_m``); the canonical form and hash come from :mod:`hpcrail.config`.

Example: ``configs/wheelrail/s1002_uic60.yaml`` (paper 004's S1002 wheel; UIC60 1:40 rail instead of the
non-public "LB-140-Area").
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Literal, Optional

from pydantic import Field, model_validator

from hpcrail.config import ConfigError, ConfigIssue, Document, apply_overrides, load_document, validate
from hpcrail.config.base import Strict
from hpcrail.models.wheelrail import profiles as pr

BUILTIN_WHEELS = ("s1002", "s1002_mbench_points")
BUILTIN_RAILS = ("uic60_1in40",)


class ProfileSource(Strict):
    """A profile: a built-in one (``builtin``) or a two-column text file (``file``, relative to this YAML;
    lateral and vertical coordinates, ``#`` comments and one header line allowed)."""

    builtin: Optional[str] = None
    file: Optional[str] = None
    columns: tuple[int, int] = (0, 1)
    units: Literal["mm", "m"] = "mm"
    lateral_positive: Literal["field", "gauge"] = Field(
        "field", description="direction of positive lateral coordinates in the file (left-wheel view)")
    vertical_positive: Literal["down", "up"] = Field(
        "down", description="wheel: 'down' = grows with the radius (S1002 tables); rail: 'down' = depth")
    smoothing_rms_mm: float = Field(0.0001, ge=0.0, description="RMS deviation of the smoothing spline "
                                    "(0.1 µm for exact profile data; raise it to the noise of measured profiles)")
    max_slope_deg: float = Field(80.0, gt=10.0, lt=90.0, description="steeper parts are trimmed")


class WheelSource(ProfileSource):
    flange_back_mm: Optional[float] = Field(None, description="lateral position of the flange back "
                                            "(default: the most gauge-side point)")


class RailSource(ProfileSource):
    canted: bool = Field(True, description="the points are already inclined by placement.cant")
    gauge_depth_mm: float = Field(14.0, gt=0.0, description="gauge measured this far below the top of rail")


class Placement(Strict):
    """Paper 004 Table 1 placement; give either the gauge or L_r, and either the flange-back spacing or L_w."""

    r0_m: float = Field(0.457, gt=0.1, lt=1.0, description="nominal rolling radius")
    cant: float = Field(0.025, ge=0.0, lt=0.2, description="rail inclination β towards the track centre [rad]")
    gauge_mm: Optional[float] = Field(None, gt=500, lt=2500)
    L_r_m: Optional[float] = Field(None, gt=0.25, lt=1.25)
    flange_back_spacing_mm: Optional[float] = Field(None, gt=500, lt=2500)
    L_w_m: Optional[float] = Field(None, gt=0.25, lt=1.25)

    @model_validator(mode="after")
    def _one_of(self):
        if (self.gauge_mm is None) == (self.L_r_m is None):
            raise ValueError("give exactly one of gauge_mm and L_r_m")
        if (self.flange_back_spacing_mm is None) == (self.L_w_m is None):
            raise ValueError("give exactly one of flange_back_spacing_mm and L_w_m")
        return self


class Material(Strict):
    E_Pa: float = Field(2.1e11, gt=0)
    nu: float = Field(0.28, ge=0.0, lt=0.5)


class Friction(Strict):
    """Polach creep-force parameters (paper 004: μ = 0.2364 constant, i.e. A = 1, k_A = k_S = 1)."""

    mu: float = Field(0.2364, gt=0, le=1.5, description="μ0, friction at zero slip velocity")
    A: float = Field(1.0, gt=0, le=1, description="μ∞/μ0 (Polach 2005); 1 = constant friction")
    B_s_per_m: float = Field(0.0, ge=0, description="exponential friction decrease with slip velocity")
    kA: float = Field(1.0, gt=0, le=1, description="reduction factor in the area of adhesion")
    kS: float = Field(1.0, gt=0, le=1, description="reduction factor in the area of slip (kS <= kA)")

    @model_validator(mode="after")
    def _ks(self):
        if self.kS > self.kA:
            raise ValueError("kS must not exceed kA (Polach 2005)")
        return self


class FlangePenalty(Strict):
    """LUT flange contact f = K_hertz δ^1.5 + D_damp δ̇ δ (paper 004 eq 20, Table 3)."""

    K_hertz_N_per_m1p5: float = Field(1.0e10, gt=0)
    D_damp_Ns_per_m2: float = Field(1.0e8, ge=0)


class LutGrid(Strict):
    """Paper 004 Table 10."""

    y_min_mm: float = -18.0
    y_max_mm: float = 18.0
    y_step_mm: float = Field(0.1, gt=0)
    xi_min_mm: float = -5.0
    xi_max_mm: float = 5.0
    xi_step_mm: float = Field(1.0, gt=0)

    @model_validator(mode="after")
    def _grid(self):
        for lo, hi, st, nm in ((self.y_min_mm, self.y_max_mm, self.y_step_mm, "y"),
                               (self.xi_min_mm, self.xi_max_mm, self.xi_step_mm, "xi")):
            n = (hi - lo) / st
            if hi <= lo or abs(n - round(n)) > 1e-6:
                raise ValueError(f"{nm}: need {nm}_min_mm < {nm}_max_mm with a whole number of steps")
        return self


class KecGrid(Strict):
    """Paper 004 Table 9 and §2.4 (regularisation lengths Δŝ on the tread side, Δs̄ on the flange side)."""

    s_min_mm: float = -46.4
    s_max_mm: float = 46.4
    s_step_mm: float = Field(0.2, gt=0)
    tread_band_mm: float = Field(0.5, ge=0)
    flange_band_mm: float = Field(1.0, ge=0)

    @model_validator(mode="after")
    def _grid(self):
        n = (self.s_max_mm - self.s_min_mm) / self.s_step_mm
        if self.s_max_mm <= self.s_min_mm or abs(n - round(n)) > 1e-6:
            raise ValueError("need s_min_mm < s_max_mm with a whole number of steps")
        return self


class Conicity(Strict):
    amplitudes_mm: list[float] = Field(default_factory=lambda: [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5,
                                                                5.0, 5.5, 6.0])
    method: Literal["klingel", "harmonic"] = "klingel"


class ProfilePairConfig(Strict):
    """A wheel/rail profile pair with its placement, material, friction and table grids."""

    name: str = Field(..., pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    wheel: WheelSource
    rail: RailSource
    placement: Placement
    material: Material = Field(default_factory=Material)
    friction: Friction = Field(default_factory=Friction)
    flange_penalty: FlangePenalty = Field(default_factory=FlangePenalty)
    lut: LutGrid = Field(default_factory=LutGrid)
    kec: KecGrid = Field(default_factory=KecGrid)
    conicity: Conicity = Field(default_factory=Conicity)


def check_profile_pair(cfg: ProfilePairConfig, doc: Document, loc: tuple = ()) -> list[ConfigIssue]:
    """Cross-field checks of a validated pair (builtin xor file, known builtins, files exist).  ``loc``:
    where the pair sits in the document (e.g. ``("contact",)`` when a vehicle YAML includes it)."""
    issues = []
    pre = ".".join(str(p) for p in loc) + "." if loc else ""
    for part, allowed in (("wheel", BUILTIN_WHEELS), ("rail", BUILTIN_RAILS)):
        src = getattr(cfg, part)
        if (src.builtin is None) == (src.file is None):
            issues.append(ConfigIssue(doc.file_for(loc + (part,)), pre + part, "give exactly one of builtin and file",
                                      allowed="builtin: " + ", ".join(allowed) + " | file: PATH"))
        if src.builtin is not None and src.builtin not in allowed:
            issues.append(ConfigIssue(doc.file_for(loc + (part, "builtin")), f"{pre}{part}.builtin",
                                      "unknown profile", src.builtin, ", ".join(allowed)))
        if src.file is not None:
            p = resolve_file(doc, loc + (part, "file"), src.file)
            if not p.is_file():
                issues.append(ConfigIssue(doc.file_for(loc + (part, "file")), f"{pre}{part}.file",
                                          "profile file not found", src.file))
    return issues


def _checks(cfg: ProfilePairConfig, doc: Document) -> list[ConfigIssue]:
    return check_profile_pair(cfg, doc)


def resolve_file(doc: Document, loc: tuple, name: str) -> Path:
    """A file named in the YAML, relative to the file that holds the entry."""
    p = Path(name)
    if p.is_absolute():
        return p
    return (Path(doc.file_for(loc)).resolve().parent / p).resolve()


def load_profile_pair(path: str | Path, overrides: Iterable[str] = ()) -> tuple[ProfilePairConfig, Document]:
    """Load, override (``dotted.path=value``) and validate a profile-pair YAML.  Raises ConfigError
    listing every problem (file, field, value, allowed)."""
    doc = load_document(path)
    issues = []
    try:
        apply_overrides(doc, overrides)
    except ConfigError as exc:
        issues += exc.issues
    try:
        cfg = validate(ProfilePairConfig, doc, _checks)
    except ConfigError as exc:
        raise ConfigError(issues + exc.issues) from None
    if issues:
        raise ConfigError(issues)
    return cfg, doc


def build_profiles(cfg: ProfilePairConfig, doc: Document | None = None, loc: tuple = ()):
    """(wheel Profile, rail Profile, profiles.Placement) of a validated configuration; ``loc`` is where the
    pair sits in ``doc`` (files are resolved relative to the YAML that names them).

    Raises ConfigError naming the file and field when a profile cannot be read or fitted."""
    mm = 1e-3
    W, R = cfg.wheel, cfg.rail
    try:
        if W.builtin == "s1002":
            wheel = pr.s1002_profile(smoothing_rms=W.smoothing_rms_mm * mm)
        else:
            if W.builtin == "s1002_mbench_points":
                raw = pr.read_points(pr.builtin_path("MBench_S1002_v3_wheel_points_mm.csv"))
                lat, ver, fb, src = "gauge", "down", -70.0, "S1002, Manchester contact benchmark points (CONTACT)"
            else:
                raw = pr.read_points(resolve_file(doc, loc + ("wheel", "file"), W.file), W.columns)
                lat, ver, fb, src = W.lateral_positive, W.vertical_positive, W.flange_back_mm, str(W.file)
            pts = pr.to_left_form(raw, units=W.units, lateral_positive=lat, vertical_positive=ver, kind="wheel")
            if W.flange_back_mm is not None:
                fb = W.flange_back_mm
            wheel = pr.wheel_profile(pts, name=W.builtin or Path(W.file).stem, source=src,
                                     smoothing_rms=W.smoothing_rms_mm * mm,
                                     flange_back=None if fb is None else fb * mm, max_slope_deg=W.max_slope_deg)
    except pr.ProfileError as exc:
        raise ConfigError([ConfigIssue(doc.file_for(loc + ("wheel",)) if doc else "(config)", "wheel", str(exc))]) from None
    try:
        if R.builtin == "uic60_1in40":
            if abs(cfg.placement.cant - 1.0 / 40.0) > 1e-12 and R.canted:
                raise pr.ProfileError("the built-in UIC60 points are canted 1:40; placement.cant must be 0.025")
            rail = pr.uic60_profile(cant=cfg.placement.cant, smoothing_rms=R.smoothing_rms_mm * mm,
                                    gauge_depth=R.gauge_depth_mm * mm)
        else:
            raw = pr.read_points(resolve_file(doc, loc + ("rail", "file"), R.file), R.columns)
            pts = pr.to_left_form(raw, units=R.units, lateral_positive=R.lateral_positive,
                                  vertical_positive=R.vertical_positive, kind="rail")
            rail = pr.rail_profile(pts, name=Path(R.file).stem, source=str(R.file),
                                   smoothing_rms=R.smoothing_rms_mm * mm, cant=cfg.placement.cant, canted=R.canted,
                                   gauge_depth=R.gauge_depth_mm * mm, max_slope_deg=R.max_slope_deg)
    except pr.ProfileError as exc:
        raise ConfigError([ConfigIssue(doc.file_for(loc + ("rail",)) if doc else "(config)", "rail", str(exc))]) from None
    P = cfg.placement
    L_r = P.L_r_m if P.L_r_m is not None else pr.L_r_from_gauge(P.gauge_mm * mm, rail)
    L_w = P.L_w_m if P.L_w_m is not None else pr.L_w_from_flange_back(P.flange_back_spacing_mm * mm, wheel)
    return wheel, rail, pr.Placement(L_w=float(L_w), L_r=float(L_r), r0=P.r0_m, cant=P.cant)
