"""Wheel and rail profiles: reading, trimming, (un)canting, smoothing splines, placement.

Conventions (used by every wheel/rail module; see ``hpcrail.models.wheelrail``):

* A profile is stored in *left-wheel form*: lateral coordinate ``u`` [m] positive towards the **field side**
  (outside of the track), measured from the profile origin.  The right wheel and rail are mirror images.
* Wheel: ``F(u)`` [m] is the radius offset, positive when the radius grows; the wheel radius at ``u`` is
  ``h(u) = r0 + F(u)``.  S1002: origin on the taping line (F(0) = 0), flange at negative ``u``, flange back
  at u = -70 mm.
* Rail: ``g(v)`` [m] is the height of the rail surface in the *rail profile frame* (un-canted), positive up;
  the placement cants it by β towards the track centre.  Gauge face at negative ``v``.

A profile is smoothed and differentiated with a quintic smoothing spline (scipy ``make_splrep``, k = 5,
smoothing ``s = N σ²`` for a target RMS deviation σ) and handed to numba as a ``PPoly``
(breakpoints, coefficients).  Parts steeper than ``max_slope_deg`` (flange back, rail gauge face below the
gauge corner) are trimmed before fitting: contact never happens there (the S1002 flange is at most 70°).

Sources: S1002 sections (UIC 510-2 / EN 13715, coefficients credited to H. Netter, DLR); UIC60 1:40 points
(CONTACT, Vollebregt, Apache-2.0); placement parameters of paper 004 Table 1 (Yu et al. 2022).
"""
from __future__ import annotations

import csv
import dataclasses
import functools
import hashlib
import io
import math
from importlib import resources
from pathlib import Path

import numpy as np
from scipy.interpolate import PPoly, make_splrep

from hpcrail.models.wheelrail.readers import ProfileError, read_profile_text  # noqa: F401 - ProfileError is public here

MM = 1e-3


@dataclasses.dataclass(frozen=True)
class Profile:
    """A smoothed wheel or rail profile in left-wheel form (SI units).

    ``breaks`` float64[m+1] [m] and ``coefs`` float64[6, m] are the scipy ``PPoly`` of the function
    (wheel: radius offset F(u); rail: height g(v) in the rail frame).  ``points`` float64[n, 2] are the
    (trimmed, un-canted, left-wheel form) input points the spline was fitted to, ``rms`` the RMS deviation
    of the spline from them [m].
    """

    name: str
    kind: str  # "wheel" | "rail"
    breaks: np.ndarray
    coefs: np.ndarray
    points: np.ndarray
    rms: float
    source: str
    flange_back: float = float("nan")  # wheel: lateral position of the flange back [m] (negative)
    gauge_point: tuple = (float("nan"), float("nan"))  # rail: (lateral, height) in track orientation [m]
    top: float = float("nan")  # rail: height of the highest point in track orientation [m]

    @property
    def u_min(self) -> float:
        return float(self.breaks[0])

    @property
    def u_max(self) -> float:
        return float(self.breaks[-1])

    def ppoly(self) -> PPoly:
        return PPoly(self.coefs, self.breaks, extrapolate=True)

    def __call__(self, u, nu: int = 0):
        """Value (nu = 0) or derivative of order nu at ``u`` [m] (numpy arrays accepted)."""
        p = self.ppoly()
        return p(u) if nu == 0 else p.derivative(nu)(u)

    def digest(self) -> str:
        """SHA-256 of the fitted spline (used in table cache keys)."""
        h = hashlib.sha256(self.kind.encode())
        h.update(np.ascontiguousarray(self.breaks, dtype=np.float64).tobytes())
        h.update(np.ascontiguousarray(self.coefs, dtype=np.float64).tobytes())
        return h.hexdigest()


# ------------------------------------------------------------------------------------------ reading

def read_points(path, columns: tuple[int, int] = (0, 1)) -> np.ndarray:
    """Two numeric columns of a plain point-list file (see :mod:`.readers`: comma, semicolon, tab or blank
    separated; ``#`` comments; one header line).  Returns float64[n, 2] in the file's units and order.

    Raises :class:`ProfileError` naming the file and the line when a data line cannot be parsed, holds a
    non-finite number, or fewer than 10 points are found (never the line's contents).
    """
    name = getattr(path, "name", str(path))
    try:
        text = path.read_text() if hasattr(path, "read_text") else Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        why = getattr(exc, "strerror", None) or "not UTF-8 text"
        raise ProfileError(f"{name}: cannot read profile file ({why})") from None
    return read_profile_text(text, name, "points", columns).points


def _data_text(name: str) -> str:
    return resources.files("hpcrail.data").joinpath("wheelrail", name).read_text()


def builtin_path(name: str):
    """A file of ``hpcrail/data/wheelrail`` as an importlib resource (usable with :func:`read_points`)."""
    return resources.files("hpcrail.data").joinpath("wheelrail", name)


# ------------------------------------------------------------------------------------------ S1002

def s1002_sections() -> list[tuple[str, float, float, dict]]:
    """The S1002 sections (name, s_from, s_to [mm], coefficients) from the shipped CSV."""
    lines = [ln for ln in _data_text("s1002_analytical_sections.csv").splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    secs: dict[str, tuple[float, float, dict]] = {}
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        name = r["section"].strip()
        lo, hi, coef = secs.get(name, (float(r["s_from_mm"]), float(r["s_to_mm"]), {}))
        coef[r["coef_name"].strip()] = float(r["value"])
        secs[name] = (lo, hi, coef)
    return [(k, v[0], v[1], v[2]) for k, v in sorted(secs.items(), key=lambda kv: kv[1][0])]


def s1002_F(s_mm: np.ndarray) -> np.ndarray:
    """S1002 radius offset F [mm] (positive = larger radius) at lateral positions ``s`` [mm] from the taping
    line (positive towards the field side), from the analytical sections A-H (UIC 510-2 / EN 13715).
    Points outside [-70, 60] mm are NaN."""
    s = np.asarray(s_mm, dtype=float)
    out = np.full(s.shape, np.nan)
    for name, lo, hi, c in s1002_sections():
        m = (s >= lo) & (s <= hi) & np.isnan(out)
        x = s[m]
        if name == "A":
            v = c["AA"] - c["BA"] * x
        elif name == "B":
            v = (c["AB"] - c["BB"] * x + c["CB"] * x ** 2 - c["DB"] * x ** 3 + c["EB"] * x ** 4
                 - c["FB"] * x ** 5 + c["GB"] * x ** 6 - c["HB"] * x ** 7 + c["IB"] * x ** 8)
        elif name == "C":
            v = -(c["AC"] + c["BC"] * x + c["CC"] * x ** 2 + c["DC"] * x ** 3 + c["EC"] * x ** 4
                  + c["FC"] * x ** 5 + c["GC"] * x ** 6 + c["HC"] * x ** 7)
        elif name == "D":
            v = c["AD"] - np.sqrt(np.maximum(c["BD"] ** 2 - (x + c["CD"]) ** 2, 0.0))
        elif name == "E":
            v = -c["AE"] - c["BE"] * x
        elif name in ("F", "G", "H"):
            v = c["A" + name] + np.sqrt(np.maximum(c["B" + name] ** 2 - (x + c["C" + name]) ** 2, 0.0))
        else:  # pragma: no cover - the shipped file has A-H only
            raise ProfileError(f"s1002_analytical_sections.csv: unknown section {name!r}")
        out[m] = v
    return out


# ------------------------------------------------------------------------------------------ processing

def _trim_steep(p: np.ndarray, max_slope: float) -> np.ndarray:
    """Longest run of consecutive points whose chord slopes are all below ``max_slope`` (|dz/dy|)."""
    dy = np.diff(p[:, 0])
    dz = np.diff(p[:, 1])
    ok = (dy > 0) & (np.abs(dz) <= max_slope * dy)
    best = (0, 0)
    i = 0
    n = len(ok)
    while i < n:
        if ok[i]:
            j = i
            while j < n and ok[j]:
                j += 1
            if j - i > best[1] - best[0]:
                best = (i, j)
            i = j
        else:
            i += 1
    return p[best[0]:best[1] + 1]


def _rotate(p: np.ndarray, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.column_stack([c * p[:, 0] - s * p[:, 1], s * p[:, 0] + c * p[:, 1]])


def _dedupe(p: np.ndarray, min_dx: float) -> np.ndarray:
    """Drop points closer than ``min_dx`` laterally to the previous kept point (the spline needs
    strictly increasing abscissae)."""
    keep = [0]
    for i in range(1, len(p)):
        if p[i, 0] - p[keep[-1], 0] >= min_dx:
            keep.append(i)
    return p[keep]


def fit_profile(points: np.ndarray, *, name: str, kind: str, source: str, smoothing_rms: float,
                max_slope_deg: float = 80.0, flange_back: float = float("nan"), gauge_point=(np.nan, np.nan),
                top: float = float("nan")) -> Profile:
    """Fit the quintic smoothing spline to left-wheel-form points float64[n, 2] [m] (sorted, trimmed here).

    ``smoothing_rms`` [m]: target RMS deviation σ of the spline from the points (scipy ``make_splrep``
    with ``s = N σ²``); 0 interpolates.  Raises :class:`ProfileError` when too few points remain.
    """
    p = np.asarray(points, dtype=np.float64)
    p = p[np.argsort(p[:, 0], kind="stable")]
    p = _trim_steep(p, math.tan(math.radians(max_slope_deg)))
    p = _dedupe(p, 1e-7)
    if len(p) < 10:
        raise ProfileError(f"{name}: fewer than 10 points left after trimming slopes above {max_slope_deg}°")
    s = len(p) * smoothing_rms ** 2
    spl = make_splrep(p[:, 0], p[:, 1], k=5, s=s)
    pp = PPoly.from_spline(spl)
    # keep only the intervals inside the data range (from_spline adds zero-length end intervals)
    x = np.asarray(pp.x, dtype=np.float64)
    c = np.asarray(pp.c, dtype=np.float64)
    keep = np.diff(x) > 0
    xs = np.concatenate([x[:-1][keep], [x[1:][keep][-1]]])
    cs = np.ascontiguousarray(c[:, keep])
    rms = float(np.sqrt(np.mean((PPoly(cs, xs)(p[:, 0]) - p[:, 1]) ** 2)))
    return Profile(name=name, kind=kind, breaks=np.ascontiguousarray(xs), coefs=cs, points=p, rms=rms,
                   source=source, flange_back=flange_back, gauge_point=tuple(gauge_point), top=top)


def to_left_form(raw: np.ndarray, *, units: str = "mm", lateral_positive: str = "field",
                 vertical_positive: str = "down", kind: str = "wheel") -> np.ndarray:
    """Convert file points (lateral, vertical) to left-wheel form [m]: lateral positive to the field side;
    wheel vertical = radius offset (positive = larger radius), rail vertical = height (positive up).

    ``units``: "mm" | "m"; ``lateral_positive``: "field" | "gauge"; ``vertical_positive``: "down" | "up"
    (wheel files: "down" means the value grows with the radius, as in the S1002 definition and SIMPACK
    files; rail files: "down" means depth below the origin).
    """
    scale = {"mm": MM, "m": 1.0}[units]
    p = np.asarray(raw, dtype=np.float64) * scale
    lat = p[:, 0] if lateral_positive == "field" else -p[:, 0]
    ver = p[:, 1]
    if kind == "wheel":
        ver = ver if vertical_positive == "down" else -ver
    else:
        ver = -ver if vertical_positive == "down" else ver
    return np.column_stack([lat, ver])


def wheel_profile(points_left: np.ndarray, *, name: str, source: str, smoothing_rms: float,
                  flange_back: float | None = None, max_slope_deg: float = 80.0) -> Profile:
    """Wheel profile from left-wheel-form points (lateral, radius offset) [m].  ``flange_back`` [m]: lateral
    position of the flange back (default: the most gauge-side input point)."""
    fb = float(np.min(points_left[:, 0])) if flange_back is None else float(flange_back)
    return fit_profile(points_left, name=name, kind="wheel", source=source, smoothing_rms=smoothing_rms,
                       max_slope_deg=max_slope_deg, flange_back=fb)


def rail_profile(points_left: np.ndarray, *, name: str, source: str, smoothing_rms: float, cant: float,
                 canted: bool, gauge_depth: float = 0.014, max_slope_deg: float = 80.0,
                 gauge_points: np.ndarray | None = None) -> Profile:
    """Rail profile from left-wheel-form points (lateral, height) [m].

    ``canted``: the points are already inclined by ``cant`` [rad] towards the track centre (as the UIC60
    1:40 file); they are rotated back about the origin into the rail profile frame.  The gauge point is
    found on the *input* points in track orientation: the most gauge-side point ``gauge_depth`` [m] below
    the highest point of the head (EN 13848-1: 14 mm); ``gauge_points`` (default: the points) are the points it is
    searched on, when the fitted ones were resampled without the steep gauge face.
    """
    p = np.asarray(points_left, dtype=np.float64)
    gp_src = p if gauge_points is None else np.asarray(gauge_points, dtype=np.float64)
    track = gp_src if canted else _rotate(gp_src, cant)  # rail in track orientation (left rail)
    top = float(np.max(track[:, 1]))
    level = top - gauge_depth
    # walk from the gauge side (sorted by lateral) to the first crossing of the gauge level
    order = np.argsort(track[:, 0], kind="stable")
    t = track[order]
    gp = (float("nan"), float("nan"))
    for i in range(len(t) - 1):
        z0, z1 = t[i, 1], t[i + 1, 1]
        if (z0 - level) * (z1 - level) <= 0.0 and z1 != z0:
            w = (level - z0) / (z1 - z0)
            gp = (float(t[i, 0] + w * (t[i + 1, 0] - t[i, 0])), level)
            break
    if not np.isfinite(gp[0]):
        raise ProfileError(f"{name}: the profile does not reach {gauge_depth * 1e3:g} mm below its top "
                           "(gauge point undefined); give the placement as L_r instead of a gauge")
    frame = _rotate(p, -cant) if canted else p
    return fit_profile(frame, name=name, kind="rail", source=source, smoothing_rms=smoothing_rms,
                       max_slope_deg=max_slope_deg, gauge_point=gp, top=top)


@functools.lru_cache(maxsize=16)
def s1002_profile(smoothing_rms: float = 1e-7, step: float = 0.05 * MM) -> Profile:
    """The S1002 wheel from its analytical sections, sampled every ``step`` [m] and smoothed (the sections
    join with small slope and curvature jumps; the quintic spline makes the profile C4)."""
    s = np.arange(-70.0, 60.0 + 1e-9, step / MM)
    F = s1002_F(s)
    ok = np.isfinite(F)
    pts = np.column_stack([s[ok] * MM, F[ok] * MM])
    return wheel_profile(pts, name="S1002", source="S1002 analytical sections (UIC 510-2 / EN 13715)",
                         smoothing_rms=smoothing_rms, flange_back=-70.0 * MM)


@functools.lru_cache(maxsize=16)
def uic60_profile(cant: float = 1.0 / 40.0, smoothing_rms: float = 1e-7, gauge_depth: float = 0.014) -> Profile:
    """UIC60 (60E1) rail head canted 1:40 (Manchester contact benchmark points, CONTACT, Apache-2.0),
    rotated back into the rail profile frame by ``cant`` [rad] (1/40 for the shipped file)."""
    raw = read_points(builtin_path("MBench_UIC60_v3_rail_points_mm.csv"))
    pts = to_left_form(raw, units="mm", lateral_positive="field", vertical_positive="down", kind="rail")
    return rail_profile(pts, name="UIC60 1:40", source="UIC60 canted 1:40, Manchester contact benchmark "
                        "(CONTACT examples/MBench_UIC60_v3.prr, Apache-2.0)", smoothing_rms=smoothing_rms,
                        cant=cant, canted=True, gauge_depth=gauge_depth)


# ------------------------------------------------------------------------------------------ placement

@dataclasses.dataclass(frozen=True)
class Placement:
    """Wheelset and track geometry of a profile pair (paper 004 Table 1), SI units.

    ``L_w`` [m]: lateral distance from the wheelset centre to each wheel profile origin;
    ``L_r`` [m]: from the track centre line to each rail profile origin (ideal gauge);
    ``r0`` [m]: nominal rolling radius (wheel radius at the profile origin); ``cant`` [rad]: rail
    inclination β towards the track centre.
    """

    L_w: float
    L_r: float
    r0: float
    cant: float

    def gauge(self, rail: Profile) -> float:
        """Track gauge [m] implied by ``L_r`` for this rail (between gauge points)."""
        return 2.0 * (self.L_r + rail.gauge_point[0])

    def flange_back_spacing(self, wheel: Profile) -> float:
        """Back-to-back distance of the wheels [m] implied by ``L_w``."""
        return 2.0 * (self.L_w + wheel.flange_back)


def L_r_from_gauge(gauge: float, rail: Profile) -> float:
    """Rail profile placement [m] giving track gauge ``gauge`` [m] (measured at the rail's gauge point)."""
    return 0.5 * gauge - rail.gauge_point[0]


def L_w_from_flange_back(spacing: float, wheel: Profile) -> float:
    """Wheel profile placement [m] giving the back-to-back distance ``spacing`` [m]."""
    return 0.5 * spacing - wheel.flange_back
