"""Profile-pair configuration (YAML): profiles, placement, material, friction and creep law, tables.

A vehicle YAML references a profile pair file (``contact: ../wheelrail/s1002_uic60.yaml`` is resolved by the
generic loader), declares the field as :class:`ProfilePairConfig`, runs :func:`check_profile_pair` with the
location of that field in its cross-field checks, and builds with ``contact_tables(cfg.contact, doc,
loc=("contact",))``.  Lengths carry their unit in the key (``_mm``, ``_m``); the canonical form and hash come
from :mod:`hpcrail.config` — a profile ``file`` is a data file (:mod:`hpcrail.config.files`): resolved against
the YAML that names it, its contents part of the scenario id and of every result's provenance.

**Profiles as data.**  ``wheel`` and ``rail`` are the left ones and, unless ``wheel_right``/``rail_right`` are
given, the right ones too (mirror images).  Each wheel may have its own nominal radius (``nominal_radius_mm``,
default ``placement.r0_m``), each rail its own inclination (``inclination``, default ``placement.cant``).  A
profile is a built-in (:data:`BUILTIN_WHEELS`, :data:`BUILTIN_RAILS`) or a file in one of the exchange formats
of :mod:`.readers` (plain point lists with header metadata, SIMPACK ``.prw``/``.prr``, MiniProf ``.whl``/``.ban``).
Orientation, units and the radius may come from the file's header; a value given in the YAML must agree with it.

Example: ``configs/wheelrail/s1002_uic60.yaml`` (paper 004's S1002 wheel; UIC60 1:40 rail instead of the
non-public "LB-140-Area"); ``configs/wheelrail/worn_pair.yaml`` (a synthetic worn, asymmetric pair).
"""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Iterable, Literal, Optional

import numpy as np
from pydantic import Field, model_validator

from hpcrail.config import ConfigError, ConfigIssue, Document, apply_overrides, load_document, validate
from hpcrail.config.base import Strict
from hpcrail.config.errors import ConfigValueError
from hpcrail.config.files import data_file_path
from hpcrail.models.wheelrail import profiles as pr
from hpcrail.models.wheelrail import readers as rd

BUILTIN_WHEELS = ("s1002", "s1002_mbench_points")
BUILTIN_RAILS = ("uic60_1in40",)
MM = 1e-3

#: most nodes of the LUT (y × ξ_g) and of a KEC grid: the tables are built by solving the contact at each
LUT_MAX_NODES = 200_000
KEC_MAX_NODES = 20_000

ProfileFile = data_file_path("profile file")


class ProfileSource(Strict):
    """A profile: a built-in one (``builtin``) or a file (``file``, relative to this YAML) in one of the formats
    of :mod:`hpcrail.models.wheelrail.readers`.  Orientation and units default to the file's header metadata,
    then to field / down / mm."""

    builtin: Optional[str] = None
    file: Optional[ProfileFile] = None
    format: Literal["auto", "points", "simpack", "miniprof"] = Field(
        "auto", description="auto: SIMPACK for .prw/.prr, MiniProf for .whl/.ban, else a plain point list")
    columns: tuple[int, int] = Field((0, 1), description="columns of a plain point list holding the lateral and "
                                     "vertical coordinates (0 = first)")
    units: Optional[Literal["mm", "m"]] = Field(None, description="default: the file's header, else mm")
    lateral_positive: Optional[Literal["field", "gauge"]] = Field(
        None, description="direction of positive lateral coordinates in the file (default: header, else field)")
    vertical_positive: Optional[Literal["down", "up"]] = Field(
        None, description="wheel: 'down' = grows with the radius (S1002 tables); rail: 'down' = depth "
        "(default: header, else down)")
    smoothing_rms_mm: float = Field(0.0001, ge=0.0, le=0.5, description="RMS deviation of the quintic smoothing "
                                    "spline (0.1 µm for exact profile data; raise it to the noise of measured "
                                    "profiles, e.g. 0.01-0.03 mm)")
    resample_mm: Optional[float] = Field(None, ge=0.01, le=2.0, description="resample the points every this many "
                                         "mm along the lateral coordinate before smoothing (irregularly spaced or "
                                         "dense measurements); default: the points as given")
    max_gap_mm: float = Field(2.0, gt=0, le=50.0, description="largest lateral distance between neighbouring points "
                              "of the profile's non-steep part (a larger one is a missing measurement)")
    max_slope_deg: float = Field(80.0, gt=10.0, lt=90.0, description="steeper parts at the profile's ends are "
                                 "trimmed (flange back, rail faces); steeper parts inside it are an error")

    @model_validator(mode="after")
    def _columns(self):
        if not (0 <= self.columns[0] <= 31 and 0 <= self.columns[1] <= 31) or self.columns[0] == self.columns[1]:
            raise ConfigValueError("two different column numbers 0..31", field="columns",
                                   allowed="two different integers 0..31, e.g. [0, 1]")
        return self


class WheelSource(ProfileSource):
    flange_back_mm: Optional[float] = Field(None, ge=-200.0, le=0.0, description="lateral position of the flange "
                                            "back in the profile's coordinates (default: header, else the most "
                                            "gauge-side point)")
    nominal_radius_mm: Optional[float] = Field(None, gt=150.0, lt=800.0, description="this wheel's radius at the "
                                               "profile origin (default: header, else placement.r0_m): different "
                                               "wheel diameters on one axle")


class RailSource(ProfileSource):
    canted: bool = Field(True, description="the points are already inclined by the rail's inclination")
    gauge_depth_mm: float = Field(14.0, gt=0.0, le=30.0, description="gauge measured this far below the top of rail")
    inclination: Optional[float] = Field(None, ge=0.0, le=0.1, description="this rail's inclination β towards the "
                                         "track centre [rad] (default: header, else placement.cant)")


class Placement(Strict):
    """Paper 004 Table 1 placement; give either the gauge or L_r, and either the flange-back spacing or L_w."""

    r0_m: float = Field(0.457, ge=0.15, le=0.8, description="nominal rolling radius (both wheels unless a wheel "
                        "gives its own)")
    cant: float = Field(0.025, ge=0.0, le=0.1, description="rail inclination β towards the track centre [rad] "
                        "(1:40 = 0.025, 1:20 = 0.05)")
    gauge_mm: Optional[float] = Field(None, ge=600, le=1700, description="track gauge between the rails' gauge "
                                      "points")
    L_r_m: Optional[float] = Field(None, gt=0.25, lt=0.9)
    flange_back_spacing_mm: Optional[float] = Field(None, ge=500, le=1650, description="distance of the flange "
                                                    "backs")
    L_w_m: Optional[float] = Field(None, gt=0.25, lt=0.9)

    @model_validator(mode="after")
    def _one_of(self):
        if (self.gauge_mm is None) == (self.L_r_m is None):
            raise ValueError("give exactly one of gauge_mm and L_r_m")
        if (self.flange_back_spacing_mm is None) == (self.L_w_m is None):
            raise ValueError("give exactly one of flange_back_spacing_mm and L_w_m")
        if self.gauge_mm is not None and self.flange_back_spacing_mm is not None:
            d = self.gauge_mm - self.flange_back_spacing_mm
            if not 40.0 <= d <= 150.0:
                raise ConfigValueError(f"gauge minus flange-back spacing is {d:g} mm: two flanges (20-45 mm thick) "
                                       "and their clearance need 40-150 mm", field="flange_back_spacing_mm",
                                       allowed=f"{self.gauge_mm - 150:g} ≤ flange_back_spacing_mm ≤ "
                                               f"{self.gauge_mm - 40:g} (gauge {self.gauge_mm:g} mm)")
        return self


class Material(Strict):
    E_Pa: float = Field(2.1e11, ge=5e10, le=5e11, description="Young's modulus of wheel and rail (steel 2.1e11)")
    nu: float = Field(0.28, ge=0.1, le=0.45, description="Poisson ratio of wheel and rail")


class Friction(Strict):
    """Creep-force law and its friction parameters.  ``law`` picks an entry of the creep-law table
    (:data:`hpcrail.models.wheelrail.creep.CREEP_LAWS`): ``polach`` (Polach 1999/2005; paper 004: μ = 0.2364
    constant, i.e. A = 1, k_A = k_S = 1) or ``fastsim`` (Kalker 1982, Coulomb friction μ)."""

    law: Literal["polach", "fastsim"] = Field("polach", description="creep-force law (see the creep-law table)")
    mu: float = Field(0.2364, gt=0, le=1.0, description="μ0, friction at zero slip velocity")
    A: float = Field(1.0, gt=0, le=1, description="μ∞/μ0 (Polach 2005); 1 = constant friction")
    B_s_per_m: float = Field(0.0, ge=0, le=100.0, description="exponential friction decrease with slip velocity")
    kA: float = Field(1.0, gt=0, le=1, description="reduction factor in the area of adhesion")
    kS: float = Field(1.0, gt=0, le=1, description="reduction factor in the area of slip (kS <= kA)")
    fastsim_strips: int = Field(24, ge=4, le=200, description="FASTSIM: strips across the contact ellipse (and "
                                "elements along each)")

    @model_validator(mode="after")
    def _ks(self):
        if self.kS > self.kA:
            raise ValueError("kS must not exceed kA (Polach 2005)")
        if self.law == "fastsim" and (self.A != 1.0 or self.B_s_per_m != 0.0 or self.kA != 1.0 or self.kS != 1.0):
            raise ConfigValueError("FASTSIM uses Coulomb friction μ: A, B_s_per_m, kA and kS are Polach's",
                                   field="law", allowed="law: polach, or A = kA = kS = 1 and B_s_per_m = 0")
        return self


class FlangePenalty(Strict):
    """LUT flange contact f = K_hertz δ^1.5 + D_damp δ̇ δ (paper 004 eq 20, Table 3)."""

    K_hertz_N_per_m1p5: float = Field(1.0e10, ge=1e7, le=1e13)
    D_damp_Ns_per_m2: float = Field(1.0e8, ge=0, le=1e11)


def _whole_steps(lo: float, hi: float, step: float, name: str, nmax: int) -> int:
    n = (hi - lo) / step
    if hi <= lo or abs(n - round(n)) > 1e-6:
        raise ConfigValueError(f"need {name}_min_mm < {name}_max_mm with a whole number of steps",
                               field=f"{name}_step_mm", allowed=f"a step dividing {hi - lo:g} mm")
    if n + 1 > nmax:
        raise ConfigValueError(f"{n + 1:.0f} table nodes along {name}: at most {nmax}", field=f"{name}_step_mm",
                               allowed=f"≥ {(hi - lo) / (nmax - 1):.3g} mm")
    return int(round(n)) + 1


class LutGrid(Strict):
    """Paper 004 Table 10."""

    y_min_mm: float = Field(-18.0, ge=-40.0, le=0.0)
    y_max_mm: float = Field(18.0, ge=0.0, le=40.0)
    y_step_mm: float = Field(0.1, ge=0.01, le=5.0)
    xi_min_mm: float = Field(-5.0, ge=-20.0, le=0.0)
    xi_max_mm: float = Field(5.0, ge=0.0, le=20.0)
    xi_step_mm: float = Field(1.0, ge=0.1, le=20.0)

    @model_validator(mode="after")
    def _grid(self):
        ny = _whole_steps(self.y_min_mm, self.y_max_mm, self.y_step_mm, "y", 10_000)
        nx = _whole_steps(self.xi_min_mm, self.xi_max_mm, self.xi_step_mm, "xi", 1_000)
        if nx * ny > LUT_MAX_NODES:
            raise ConfigValueError(f"{nx} × {ny} = {nx * ny} LUT nodes: at most {LUT_MAX_NODES}", field="y_step_mm",
                                   allowed="coarser y_step_mm or xi_step_mm")
        return self


class KecGrid(Strict):
    """Paper 004 Table 9 and §2.4 (regularisation lengths Δŝ on the tread side, Δs̄ on the flange side).  The grid
    must cover both flanges' contacts: s^k ≈ -y, so at least ±15 mm."""

    s_min_mm: float = Field(-46.4, ge=-80.0, le=-15.0)
    s_max_mm: float = Field(46.4, ge=15.0, le=80.0)
    s_step_mm: float = Field(0.2, ge=0.02, le=2.0)
    tread_band_mm: float = Field(0.5, ge=0, le=5.0)
    flange_band_mm: float = Field(1.0, ge=0, le=5.0)

    @model_validator(mode="after")
    def _grid(self):
        _whole_steps(self.s_min_mm, self.s_max_mm, self.s_step_mm, "s", KEC_MAX_NODES)
        return self


class Conicity(Strict):
    """EN 15302 equivalent conicity (:mod:`.conicity`): the amplitudes ŷ [mm] of its curve and the method of the
    reported value: ``en15302`` (the standard's integration of the linearised equation of motion; ``klingel``
    is the same) or ``harmonic`` (harmonic linearisation)."""

    amplitudes_mm: list[float] = Field(default_factory=lambda: [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5,
                                                                5.0, 5.5, 6.0], min_length=1, max_length=200)
    method: Literal["en15302", "klingel", "harmonic"] = "en15302"

    @model_validator(mode="after")
    def _amps(self):
        for i, a in enumerate(self.amplitudes_mm):
            if not 0.0 < a <= 20.0:
                raise ConfigValueError("an amplitude must lie in (0, 20] mm", field=("amplitudes_mm", i),
                                       allowed="0 < ŷ ≤ 20 mm", value=a)
        if len(set(self.amplitudes_mm)) != len(self.amplitudes_mm):
            raise ConfigValueError("amplitudes repeat", field="amplitudes_mm", allowed="distinct amplitudes")
        return self


class ProfilePairConfig(Strict):
    """A wheel/rail profile pair with its placement, material, friction and table grids."""

    name: str = Field(..., pattern=r"^[A-Za-z0-9_.-]+$", max_length=120)
    description: str = Field("", max_length=2000)
    wheel: WheelSource = Field(..., description="the left wheel, and the right one unless wheel_right is given")
    rail: RailSource = Field(..., description="the left rail, and the right one unless rail_right is given")
    wheel_right: Optional[WheelSource] = Field(None, description="the right wheel (its own profile, in the same "
                                               "field/gauge convention)")
    rail_right: Optional[RailSource] = Field(None, description="the right rail")
    placement: Placement
    material: Material = Field(default_factory=Material)
    friction: Friction = Field(default_factory=Friction)
    flange_penalty: FlangePenalty = Field(default_factory=FlangePenalty)
    lut: LutGrid = Field(default_factory=LutGrid)
    kec: KecGrid = Field(default_factory=KecGrid)
    conicity: Conicity = Field(default_factory=Conicity)

    @property
    def symmetric(self) -> bool:
        return self.wheel_right is None and self.rail_right is None


_PARTS = (("wheel", BUILTIN_WHEELS), ("rail", BUILTIN_RAILS), ("wheel_right", BUILTIN_WHEELS),
          ("rail_right", BUILTIN_RAILS))


def check_profile_pair(cfg: ProfilePairConfig, doc: Document, loc: tuple = ()) -> list[ConfigIssue]:
    """Cross-field checks of a validated pair (builtin xor file, known builtins).  ``loc``: where the pair sits in
    the document (e.g. ``("contact", "profiles")`` when a vehicle YAML includes it).  Data files were resolved and
    hashed by the validation itself (a missing file is reported there)."""
    issues = []
    pre = ".".join(str(p) for p in loc) + "." if loc else ""
    for part, allowed in _PARTS:
        src = getattr(cfg, part)
        if src is None:
            continue
        if (src.builtin is None) == (src.file is None):
            issues.append(ConfigIssue(doc.file_for(loc + (part,)), pre + part, "give exactly one of builtin and file",
                                      allowed="builtin: " + ", ".join(allowed) + " | file: PATH"))
        if src.builtin is not None and src.builtin not in allowed:
            issues.append(ConfigIssue(doc.file_for(loc + (part, "builtin")), f"{pre}{part}.builtin",
                                      "unknown profile", src.builtin, ", ".join(allowed)))
        if (src.file is not None and not getattr(src.file, "resolved", False)
                and getattr(src.file, "error", None) is None):   # a model not validated from a file
            p = _unresolved_path(src.file, doc, loc + (part, "file"))
            if not p.is_file():
                issues.append(ConfigIssue(doc.file_for(loc + (part, "file")), f"{pre}{part}.file",
                                          "profile file not found", str(src.file),
                                          allowed="a profile file, relative to the file naming it"))
    return issues


def _unresolved_path(name, doc, loc: tuple) -> Path:
    """A file name not resolved by the validation (a model built in Python): relative to the file holding
    ``loc`` in ``doc``, else to the working directory."""
    p = Path(str(name)).expanduser()
    if p.is_absolute():
        return p
    base = doc.path_for(loc) if doc is not None and hasattr(doc, "path_for") else None
    return ((base.parent if base is not None else Path.cwd()) / p).resolve()


def _checks(cfg: ProfilePairConfig, doc: Document) -> list[ConfigIssue]:
    return check_profile_pair(cfg, doc)


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


# ------------------------------------------------------------------------------------------ building

@dataclasses.dataclass
class ProfileSet:
    """The fitted profiles and placements of both sides (left-wheel form each; a symmetric pair has the same
    objects on both sides)."""

    wheel: pr.Profile
    rail: pr.Profile
    placement: pr.Placement
    wheel_r: pr.Profile
    rail_r: pr.Profile
    placement_r: pr.Placement

    @property
    def symmetric(self) -> bool:
        return self.wheel_r is self.wheel and self.rail_r is self.rail and self.placement_r == self.placement

    def gauge(self) -> float:
        """Track gauge [m] between the gauge points of both rails."""
        return self.placement.L_r + self.rail.gauge_point[0] + self.placement_r.L_r + self.rail_r.gauge_point[0]

    def flange_back_spacing(self) -> float:
        """Distance of the flange backs [m]."""
        return self.placement.L_w + self.wheel.flange_back + self.placement_r.L_w + self.wheel_r.flange_back

    def solver(self, **kw):
        from hpcrail.models.wheelrail.geometry import ContactSolver

        if self.symmetric:
            return ContactSolver(self.wheel, self.rail, self.placement, **kw)
        return ContactSolver(self.wheel, self.rail, self.placement, wheel_right=self.wheel_r,
                             rail_right=self.rail_r, placement_right=self.placement_r, **kw)

    def __iter__(self):   # (wheel, rail, placement) of the left side: the symmetric pair's old triple
        return iter((self.wheel, self.rail, self.placement))


def _where(doc, loc) -> str:
    return doc.file_for(loc) if doc is not None else "(config)"


def _merge(yaml_value, meta: dict, key: str, default, file: str, where: str, field: str):
    """The YAML value, else the file header's, else the default; both given and different is an error."""
    hv = meta.get(key)
    if yaml_value is not None and hv is not None and hv != yaml_value:
        raise ConfigError([ConfigIssue(where, field, f"the file's header says {key}: {hv}", yaml_value,
                                       allowed=f"{hv} (as in {file}), or remove {key} from one of them")])
    return yaml_value if yaml_value is not None else (hv if hv is not None else default)


def _raw_points(src: ProfileSource, kind: str, doc, loc: tuple, pre: str):
    """(RawProfile, left-wheel-form points [m] checked and trimmed, file label) of a file profile."""
    from hpcrail.config.files import DataFile

    where = _where(doc, loc)
    field = pre
    f = src.file
    if not getattr(f, "resolved", False):
        f = DataFile(str(f), _unresolved_path(f, doc, loc + ("file",)))
    text = f.read_text(field=field + ".file", where=where)
    name = Path(str(src.file)).name
    raw = rd.read_profile_text(text, name, src.format, src.columns)
    meta = raw.meta
    if meta.get("kind") and meta["kind"] != kind:
        raise ConfigError([ConfigIssue(where, field + ".file", f"the file's header says it is a {meta['kind']} "
                                       f"profile, given as the {kind}", str(src.file),
                                       allowed=f"a {kind} profile file")])
    units = _merge(src.units, meta, "units", "mm", name, where, field + ".units")
    lat = _merge(src.lateral_positive, meta, "lateral_positive", "field", name, where, field + ".lateral_positive")
    ver = _merge(src.vertical_positive, meta, "vertical_positive", "down", name, where, field + ".vertical_positive")
    for key, val, allowed in (("units", units, ("mm", "m")), ("lateral_positive", lat, ("field", "gauge")),
                              ("vertical_positive", ver, ("down", "up"))):
        if val not in allowed:
            raise ConfigError([ConfigIssue(where, field + ".file", f"the file's header gives {key}: {val}",
                                           str(src.file), allowed=" | ".join(allowed))])
    left = pr.to_left_form(raw.points, units=units, lateral_positive=lat, vertical_positive=ver, kind=kind)
    full, pts = rd.checked_points(raw, left, kind, src.max_slope_deg, src.max_gap_mm * MM)
    raw.meta["_all_points"] = full
    if not src.resample_mm:
        pts = full                      # the fit trims the steep ends itself (the rail's gauge point lies there)
    else:
        step = src.resample_mm * MM
        n = int(math.floor((pts[-1, 0] - pts[0, 0]) / step)) + 1
        if n < rd.MIN_POINTS:
            raise rd.ProfileError(f"{name}: resample_mm {src.resample_mm:g} leaves {n} points; at least "
                                  f"{rd.MIN_POINTS} needed")
        u = pts[0, 0] + step * np.arange(n)
        pts = np.column_stack([u, np.interp(u, pts[:, 0], pts[:, 1])])
    raw.meta.setdefault("_gauge_end_mm", float(np.min(left[:, 0])) / MM)   # the file's most gauge-side point
    return raw, pts, str(src.file)


def _wheel(W: WheelSource, doc, loc: tuple, pre: str):
    """(Profile, nominal radius from the file or None)."""
    if W.builtin == "s1002":
        return pr.s1002_profile(smoothing_rms=W.smoothing_rms_mm * MM), None
    if W.builtin == "s1002_mbench_points":
        raw = rd.read_profile_text(pr.builtin_path("MBench_S1002_v3_wheel_points_mm.csv").read_text(),
                                   "MBench_S1002_v3_wheel_points_mm.csv", "points")
        pts = pr.to_left_form(raw.points, units="mm", lateral_positive="gauge", vertical_positive="down", kind="wheel")
        fb = -70.0 if W.flange_back_mm is None else W.flange_back_mm
        return pr.wheel_profile(pts, name=W.builtin, source="S1002, Manchester contact benchmark points (CONTACT)",
                                smoothing_rms=W.smoothing_rms_mm * MM, flange_back=fb * MM,
                                max_slope_deg=W.max_slope_deg), None
    raw, pts, label = _raw_points(W, "wheel", doc, loc, pre)
    where = _where(doc, loc)
    fb = _merge(W.flange_back_mm, raw.meta, "flange_back_mm", raw.meta["_gauge_end_mm"], raw.name, where,
                pre + ".flange_back_mm")
    r0 = _merge(W.nominal_radius_mm, raw.meta, "nominal_radius_mm", None, raw.name, where,
                pre + ".nominal_radius_mm")
    src = raw.meta.get("source") or label
    if fb is not None and not -200.0 <= fb <= 0.0:
        raise ConfigError([ConfigIssue(where, pre + ".flange_back_mm", "flange back from the file's header out of "
                                       "range", fb, allowed="-200 ≤ flange_back_mm ≤ 0")])
    w = pr.wheel_profile(pts, name=raw.meta.get("name") or Path(label).stem, source=src,
                         smoothing_rms=W.smoothing_rms_mm * MM, flange_back=None if fb is None else fb * MM,
                         max_slope_deg=W.max_slope_deg)
    if r0 is not None and not 150.0 < r0 < 800.0:
        raise ConfigError([ConfigIssue(where, pre + ".nominal_radius_mm", "nominal radius from the file's header out "
                                       "of range", r0, allowed="150 < nominal_radius_mm < 800")])
    return w, r0


def _rail(R: RailSource, cant: float, doc, loc: tuple, pre: str):
    where = _where(doc, loc)
    if R.builtin == "uic60_1in40":
        if abs(cant - 1.0 / 40.0) > 1e-12 and R.canted:
            raise ConfigError([ConfigIssue(where, pre + ".inclination" if R.inclination is not None else
                                           "placement.cant", "the built-in UIC60 points are canted 1:40", cant,
                                           allowed="0.025, or canted: false with any inclination")])
        return pr.uic60_profile(cant=cant, smoothing_rms=R.smoothing_rms_mm * MM, gauge_depth=R.gauge_depth_mm * MM)
    raw, pts, label = _raw_points(R, "rail", doc, loc, pre)
    return pr.rail_profile(pts, name=raw.meta.get("name") or Path(label).stem, source=raw.meta.get("source") or label,
                           smoothing_rms=R.smoothing_rms_mm * MM, cant=cant, canted=R.canted,
                           gauge_depth=R.gauge_depth_mm * MM, max_slope_deg=R.max_slope_deg,
                           gauge_points=raw.meta["_all_points"])


def _profile_issue(doc, loc, part, exc, src) -> ConfigError:
    field = "file" if src.file is not None else "builtin"
    return ConfigError([ConfigIssue(_where(doc, loc + (part, field)), ".".join(map(str, loc + (part, field))),
                                    str(exc), str(getattr(src, field)),
                                    allowed="a profile file that passes the checks of hpcrail.models.wheelrail.readers "
                                            "(see docs/models.md, 'Wheel and rail profiles')")])


def build_profiles(cfg: ProfilePairConfig, doc: Document | None = None, loc: tuple = ()) -> ProfileSet:
    """Fitted profiles and placements of both sides (:class:`ProfileSet`; it also unpacks as the left side's
    (wheel, rail, placement)) of a validated configuration; ``loc`` is where the pair sits in ``doc``.

    Raises ConfigError naming the file and field when a profile cannot be read or fitted, or when the wheelset
    does not fit the track (:func:`check_fit`)."""
    P = cfg.placement
    built = {}
    radius = {}
    for part in ("wheel", "wheel_right"):
        src = getattr(cfg, part)
        if src is None:
            continue
        try:
            built[part], radius[part] = _wheel(src, doc, loc + (part,), ".".join(map(str, loc + (part,))))
        except (pr.ProfileError, ValueError) as exc:
            raise _profile_issue(doc, loc, part, exc, src) from None
    for part in ("rail", "rail_right"):
        src = getattr(cfg, part)
        if src is None:
            continue
        cant = P.cant if src.inclination is None else src.inclination
        try:
            built[part] = _rail(src, cant, doc, loc + (part,), ".".join(map(str, loc + (part,))))
        except (pr.ProfileError, ValueError) as exc:
            raise _profile_issue(doc, loc, part, exc, src) from None

    def placement_of(wkey, rkey):
        wheel, rail = built[wkey], built[rkey]
        src = getattr(cfg, wkey)
        rsrc = getattr(cfg, rkey)
        r0 = src.nominal_radius_mm * MM if src.nominal_radius_mm is not None else (
            radius[wkey] * MM if radius.get(wkey) is not None else P.r0_m)
        cant = P.cant if rsrc.inclination is None else rsrc.inclination
        L_r = P.L_r_m if P.L_r_m is not None else pr.L_r_from_gauge(P.gauge_mm * MM, rail)
        L_w = P.L_w_m if P.L_w_m is not None else pr.L_w_from_flange_back(P.flange_back_spacing_mm * MM, wheel)
        return pr.Placement(L_w=float(L_w), L_r=float(L_r), r0=float(r0), cant=float(cant))

    pl = placement_of("wheel", "rail")
    wr = "wheel_right" if cfg.wheel_right is not None else "wheel"
    rr = "rail_right" if cfg.rail_right is not None else "rail"
    pr_ = placement_of(wr, rr)
    ps = ProfileSet(built["wheel"], built["rail"], pl, built[wr], built[rr], pr_ if pr_ != pl else pl)
    issues = check_fit(ps, cfg, doc, loc)
    if issues:
        raise ConfigError(issues)
    return ps


def flangeway_clearance(wheel: pr.Profile, rail: pr.Profile, P: pr.Placement) -> float:
    """Lateral clearance [m] between a wheel's flange and its rail with the wheelset centred on the track (one
    side, left-wheel form): the largest lateral shift towards the flange before any point of the flange face
    reaches the rail at the same height (from the flange tip up to 3 mm below the rail's top), the wheel resting
    on the rail (negative: the flange overlaps the rail)."""
    u = np.linspace(wheel.u_min, wheel.u_max, 4001)
    v = np.linspace(rail.u_min, rail.u_max, 4001)
    cb, sb = math.cos(P.cant), math.sin(P.cant)
    Yw = P.L_w + u
    Zw = -(P.r0 + wheel(u))
    Yr = P.L_r + cb * v - sb * rail(v)
    Zr = sb * v + cb * rail(v)
    # wheel resting on the rail: lowest vertical gap over the common lateral range is zero
    lo, hi = max(Yw.min(), Yr.min()), min(Yw.max(), Yr.max())
    if hi <= lo:
        return -np.inf
    yy = np.linspace(lo, hi, 2001)
    o_r = np.argsort(Yr)
    gap = np.interp(yy, Yw, Zw) - np.interp(yy, Yr[o_r], Zr[o_r])
    dz = -float(np.min(gap))
    Zw = Zw + dz
    # flange face: the wheel's field-facing flange side, from its tip up to the height of the rail's top;
    # rail: its gauge side up to its top; compare the lateral positions at common heights
    itip = int(np.argmin(np.where(u < 0, Zw, np.inf)))
    top = float(Zr.max())
    j = itip
    while j + 1 < u.size and Zw[j + 1] > Zw[j] and Zw[j] < top:
        j += 1
    fy, fz = Yw[itip:j + 1], Zw[itip:j + 1]
    it = int(np.argmax(Zr))
    gy, gz = Yr[:it + 1], Zr[:it + 1]
    if fy.size < 2 or gy.size < 2:
        return -np.inf
    z_lo = max(float(fz.min()), float(gz.min()))
    z_hi = min(top - 3e-3, float(fz.max()))     # below the tread contact at the rail's top
    if z_hi <= z_lo:
        return np.inf
    zz = np.linspace(z_lo, z_hi, 400)
    # the flange's field-facing side: the largest Y of the wheel below each height on the flange
    of = np.argsort(fz)
    og = np.argsort(gz)
    yf = np.interp(zz, fz[of], fy[of])
    yg = np.interp(zz, gz[og], gy[og])
    return float(np.min(yg - yf))


def check_fit(ps: ProfileSet, cfg: ProfilePairConfig, doc, loc: tuple) -> list[ConfigIssue]:
    """The wheelset fits the track: on each side the rail's top lies under the wheel's tread (between its flange
    tip and its field side) and the flange clears the rail's gauge face by 0-30 mm with the wheelset centred.
    Returns the issues (file, field, value, allowed) — gauge, flange-back spacing or profiles that do not fit."""
    issues = []
    pre = ".".join(map(str, loc)) + "." if loc else ""
    P = cfg.placement
    where = _where(doc, loc + ("placement",))
    fb_field = pre + "placement." + ("flange_back_spacing_mm" if P.flange_back_spacing_mm is not None else "L_w_m")
    for name, wheel, rail, pl in (("left", ps.wheel, ps.rail, ps.placement), ("right", ps.wheel_r, ps.rail_r,
                                                                          ps.placement_r)):
        u = np.linspace(wheel.u_min, wheel.u_max, 2001)
        F = wheel(u)
        neg = u < 0
        u_tip = float(u[neg][np.argmax(F[neg])]) if np.any(neg) else float(u[0])
        v = np.linspace(rail.u_min, rail.u_max, 2001)
        cb, sb = math.cos(pl.cant), math.sin(pl.cant)
        Yr = pl.L_r + cb * v - sb * rail(v)
        Zr = sb * v + cb * rail(v)
        y_top = float(Yr[np.argmax(Zr)])
        y_lo, y_hi = pl.L_w + u_tip, pl.L_w + wheel.u_max
        gauge = ps.gauge() * 1e3
        fbs = ps.flange_back_spacing() * 1e3
        if not y_lo < y_top < y_hi:
            issues.append(ConfigIssue(where, fb_field, f"the wheelset does not fit the track: the {name} rail's top "
                                      f"lies {abs(y_top - (y_lo if y_top <= y_lo else y_hi)) * 1e3:.1f} mm "
                                      f"{'inside the flange tip' if y_top <= y_lo else 'beyond the field side'} of "
                                      f"the {name} wheel (gauge {gauge:.1f} mm, flange-back spacing {fbs:.1f} mm)",
                                      fbs, allowed="a gauge and flange-back spacing that put each rail head under "
                                                   "its wheel's tread (standard gauge: 1435 and 1360 mm)"))
            continue
        c = flangeway_clearance(wheel, rail, pl)
        if not -0.5e-3 <= c <= 30e-3:
            what = "overlaps the rail by" if c < 0 else "clears the rail by"
            issues.append(ConfigIssue(where, fb_field, f"the wheelset does not fit the track: with the wheelset "
                                      f"centred the {name} flange {what} {abs(c) * 1e3:.1f} mm (gauge {gauge:.1f} mm, "
                                      f"flange-back spacing {fbs:.1f} mm)", fbs,
                                      allowed="a flangeway clearance of 0-30 mm per side (standard gauge: 1435 and "
                                              "1360 mm give about 6 mm)"))
    return issues


__all__ = ["ProfilePairConfig", "ProfileSet", "WheelSource", "RailSource", "Placement", "Material", "Friction",
           "FlangePenalty", "LutGrid", "KecGrid", "Conicity", "check_profile_pair", "load_profile_pair",
           "build_profiles", "check_fit", "flangeway_clearance", "BUILTIN_WHEELS", "BUILTIN_RAILS"]
