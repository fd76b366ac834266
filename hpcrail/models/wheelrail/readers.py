"""Measured-profile exchange formats and the checks every profile passes before it is fitted.

Readers (all return a :class:`RawProfile`: points in the file's units and orientation, the line of each point,
the header metadata):

* **points** — a plain list of (lateral, vertical) numbers, comma, semicolon, tab or blank separated, one
  point a line (``columns`` selects two of several columns); a first non-numeric line is a column header;
  ``#`` lines are comments, and ``# key: value`` (or ``key = value``) comment lines are **header metadata**:
  ``units`` (mm | m), ``lateral_positive`` (field | gauge), ``vertical_positive`` (down | up), ``kind``
  (wheel | rail), ``side`` (left | right), ``nominal_radius_mm``, ``flange_back_mm``, ``inclination``
  (rad or ``1:40``), ``canted`` (true | false), ``name``, ``source``.  hpcrail's shipped measured-style files
  use it (``configs/wheelrail/profiles/``).
* **simpack** — SIMPACK ``.prw`` (wheel) / ``.prr`` (rail) files: ``header``, ``spline`` and ``point``
  sections (``NAME.begin`` … ``NAME.end``), ``key = value`` lines, ``!`` comments; the spline section's
  transformations are applied in the order the format defines them: ``point_dist_min`` (drop points
  laterally closer than it to the previous kept one), ``shift.y``/``shift.z``, ``rotate`` (``units.ang.f``),
  ``bound.y.min/max`` (drop points outside), ``bound.z.min/max`` (clip), ``mirror.y``, ``mirror.z``,
  ``inversion`` (reverse the order), ``units.len.f`` (file length unit per metre: 1000 = mm).  After them the
  lateral axis points to the field side and the vertical one down (wheel: the radius grows; rail: depth).
* **miniprof** — Greenwood MiniProf ``.whl`` (wheel) / ``.ban`` (rail) files: ``Key=Value`` header lines, a
  blank line, then the points; ``"``, ``!`` and ``%`` start comments; ``ColumnDef`` (e.g. ``X,Y``) says which
  columns hold the lateral (X) and vertical (Y) coordinates [mm].  MiniProf files carry no orientation
  convention that holds for every device set-up: give ``lateral_positive``/``vertical_positive`` in the YAML
  (the wheel checks below catch a mirrored wheel).

The public descriptions used: the SIMPACK and MiniProf readers of CONTACT (Vollebregt, github.com/eve70a/CONTACT
``matlab/read_simpack.m``, ``matlab/read_miniprof.m``, Apache-2.0) — the formats only, no code.

Checks (:func:`checked_points`, on the points converted to left-wheel form [m]; each failure is a
:class:`ProfileError` naming the file, the lines and what to change): finite numbers only (a NaN row is an error
in every file), between :data:`MIN_POINTS` and :data:`MAX_POINTS` points, a lateral and vertical extent a wheel
or a rail can have (catches wrong units: m on mm data is 1000 times too small, mm on m data too large), points
in lateral order (a profile that **folds** back is refused; a reversed file is accepted), no **gap** wider than
``max_gap``, no steep **spike or step** (more than :data:`STEEP_FLOOR` high) inside the profile (steep parts are accepted at its ends: the flange
back, the rail's gauge and field faces, which are trimmed), and the orientation: a wheel has its flange (the
largest radius) on the gauge side, a rail head its top above both ends.
"""
from __future__ import annotations

import dataclasses
import math
import re

import numpy as np

MM = 1e-3
MIN_POINTS = 10
#: most points of one profile (a MiniProf measurement has ~600-1500; a densely sampled standard profile 10 000)
MAX_POINTS = 100_000
#: lateral extent of a profile [m]: wheels and rail heads are 20-300 mm wide
LATERAL_EXTENT = (0.02, 0.3)
#: vertical extent [m]: a wheel's flange is 20-45 mm high, a rail head file at least 5 mm deep
VERTICAL_EXTENT = (0.003, 0.25)

#: vertical change [m] below which a chord is not steep (noise between close measured points)
STEEP_FLOOR = 0.05e-3

META_KEYS = ("units", "lateral_positive", "vertical_positive", "kind", "side", "nominal_radius_mm", "flange_back_mm",
             "inclination", "canted", "name", "source")


class ProfileError(ValueError):
    """A profile that cannot be used (file, lines and reason in the message; never the file's contents)."""


@dataclasses.dataclass
class RawProfile:
    """Points of a profile file as read: ``points`` float64[n, 2] (lateral, vertical) in the file's units and
    orientation (SIMPACK: after its own transformations, in mm), ``lines`` int64[n] the line of each point,
    ``meta`` the header metadata (keys of :data:`META_KEYS`), ``format`` the reader used, ``name`` the file's
    name for messages."""

    points: np.ndarray
    lines: np.ndarray
    meta: dict
    format: str
    name: str


# ------------------------------------------------------------------------------------------ readers

def _float(tok: str, name: str, lineno: int, col: int) -> float:
    try:
        v = float(tok)
    except ValueError:
        raise ProfileError(f"{name}: line {lineno}: column {col + 1} is not a number") from None
    if not math.isfinite(v):
        raise ProfileError(f"{name}: line {lineno}: column {col + 1} is not a finite number (NaN or inf): remove "
                           "the point or repair the measurement")
    return v


_SPLIT = re.compile(r"[,;\s]+")


def _check_count(n: int, name: str) -> None:
    if n > MAX_POINTS:
        raise ProfileError(f"{name}: more than {MAX_POINTS} points: not a profile (or resample it)")


def _meta_value(key: str, val: str):
    val = val.strip().strip("'\"")
    if key in ("nominal_radius_mm", "flange_back_mm"):
        try:
            v = float(val)
        except ValueError:
            return None
        return v if math.isfinite(v) else None
    if key == "inclination":
        m = re.fullmatch(r"\s*1\s*:\s*([0-9.]+)\s*", val)
        try:
            v = 1.0 / float(m.group(1)) if m else float(val)
        except (ValueError, ZeroDivisionError):
            return None
        return v if math.isfinite(v) else None
    if key == "canted":
        return {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}.get(val.lower())
    return val.lower() if key in ("units", "lateral_positive", "vertical_positive", "kind", "side") else val


def parse_points(text: str, name: str, columns: tuple[int, int] = (0, 1)) -> RawProfile:
    """Plain point list with ``#`` comments and ``# key: value`` header metadata (module docstring)."""
    rows = []
    lines = []
    meta: dict = {}
    header_seen = False
    need = max(columns) + 1
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            m = re.match(r"#\s*([A-Za-z_][A-Za-z0-9_ \-]*?)\s*[:=]\s*(.+)$", s)
            if m:
                key = m.group(1).strip().lower().replace(" ", "_").replace("-", "_")
                if key in META_KEYS:
                    v = _meta_value(key, m.group(2))
                    if v is not None:
                        meta[key] = v
            continue
        parts = [p for p in _SPLIT.split(s) if p]
        if not rows and not header_seen and any(not re.fullmatch(r"[-+0-9.eE]+|nan|NaN|inf|-inf", p) for p in parts):
            header_seen = True    # one column-header line before the data
            continue
        if len(parts) < need:
            raise ProfileError(f"{name}: line {lineno}: expected at least {need} columns, got {len(parts)}")
        rows.append((_float(parts[columns[0]], name, lineno, columns[0]), _float(parts[columns[1]], name, lineno,
                                                                                 columns[1])))
        lines.append(lineno)
        if len(rows) > MAX_POINTS:
            _check_count(len(rows), name)
    return RawProfile(np.asarray(rows, dtype=np.float64).reshape(-1, 2), np.asarray(lines, dtype=np.int64), meta,
                      "points", name)


def parse_simpack(text: str, name: str) -> RawProfile:
    """SIMPACK ``.prw``/``.prr`` profile (module docstring); the result is in mm, lateral positive to the field
    side, vertical positive down."""
    section = None
    opts: dict = {}
    rows = []
    lines = []
    for lineno, line in enumerate(text.splitlines(), 1):
        s = line.split("!", 1)[0].strip()
        if not s:
            continue
        m = re.fullmatch(r"([A-Za-z_]+)\s*\.\s*(begin|end)", s)
        if m:
            section = m.group(1).lower() if m.group(2) == "begin" else None
            continue
        if "=" in s:
            key, val = s.split("=", 1)
            key = key.strip().lower().replace(".", "_")
            if section == "spline":
                opts[key] = val.strip().strip("'\"")
            continue
        if section == "point":
            parts = [p for p in _SPLIT.split(s) if p]
            if len(parts) < 2:
                raise ProfileError(f"{name}: line {lineno}: expected at least 2 columns, got {len(parts)}")
            rows.append((_float(parts[0], name, lineno, 0), _float(parts[1], name, lineno, 1)))
            lines.append(lineno)
            _check_count(len(rows), name)
    if section is not None and section != "header":
        raise ProfileError(f"{name}: section {section!r} is not closed ({section}.end missing): a truncated file?")
    p = np.asarray(rows, dtype=np.float64).reshape(-1, 2)
    ln = np.asarray(lines, dtype=np.int64)

    def num(key, default=None):
        if key not in opts:
            return default
        try:
            v = float(opts[key])
        except ValueError:
            raise ProfileError(f"{name}: spline option {key.replace('_', '.')} is not a number") from None
        if not math.isfinite(v):
            raise ProfileError(f"{name}: spline option {key.replace('_', '.')} is not finite")
        return v

    dmin = num("point_dist_min", 0.0)
    if dmin and dmin >= 1e-12 and len(p):
        keep = [0]
        for i in range(1, len(p)):
            if abs(p[i, 0] - p[keep[-1], 0]) > dmin:
                keep.append(i)
        p, ln = p[keep], ln[keep]
    p = p + np.array([num("shift_y", 0.0), num("shift_z", 0.0)])
    rot = num("rotate", 0.0)
    if rot:
        rot /= num("units_ang_f", 1.0) or 1.0
        c, s_ = math.cos(rot), math.sin(rot)
        p = np.column_stack([c * p[:, 0] - s_ * p[:, 1], s_ * p[:, 0] + c * p[:, 1]])
    ylo, yhi = num("bound_y_min"), num("bound_y_max")
    if ylo is not None and yhi is not None and ylo < yhi:
        m = (p[:, 0] >= ylo) & (p[:, 0] <= yhi)
        p, ln = p[m], ln[m]
    zlo, zhi = num("bound_z_min"), num("bound_z_max")
    if zlo is not None and zhi is not None and zlo < zhi:
        p[:, 1] = np.clip(p[:, 1], zlo, zhi)
    if num("mirror_y", 0) == 1:
        p[:, 0] = -p[:, 0]
    if num("mirror_z", 0) == 1:
        p[:, 1] = -p[:, 1]
    if num("inversion", 0) == 1:
        p, ln = p[::-1], ln[::-1]
    f = num("units_len_f", 1000.0)
    if not f or f <= 0:
        raise ProfileError(f"{name}: spline option units.len.f must be > 0 (1000 for mm)")
    p = p * (1000.0 / f)
    meta = {"units": "mm", "lateral_positive": "field", "vertical_positive": "down"}
    if opts.get("comment"):
        meta["source"] = opts["comment"][:200]
    return RawProfile(np.ascontiguousarray(p), ln, meta, "simpack", name)


def parse_miniprof(text: str, name: str) -> RawProfile:
    """MiniProf ``.whl``/``.ban`` profile (module docstring): points in mm in the file's orientation."""
    coldef = "X,Y"
    rows = []
    lines = []
    meta: dict = {"units": "mm"}
    for lineno, line in enumerate(text.splitlines(), 1):
        s = re.split(r"[\"!%]", line, 1)[0].strip()
        if not s:
            continue
        if "=" in s:
            key, val = s.split("=", 1)
            k = key.strip().lower()
            if k == "columndef":
                coldef = val.strip()
            elif k == "diametertaperline":
                try:
                    d = float(val)
                    if math.isfinite(d) and d > 0:
                        meta["nominal_radius_mm"] = 0.5 * d
                except ValueError:
                    pass
            continue
        parts = [p for p in _SPLIT.split(s) if p]
        cols = [c.strip().upper() for c in coldef.split(",")]
        if "X" not in cols or "Y" not in cols:
            raise ProfileError(f"{name}: ColumnDef must name the X and Y columns (got {len(cols)} columns)")
        ix, iy = cols.index("X"), cols.index("Y")
        if len(parts) <= max(ix, iy):
            raise ProfileError(f"{name}: line {lineno}: expected at least {max(ix, iy) + 1} columns, got {len(parts)}")
        rows.append((_float(parts[ix], name, lineno, ix), _float(parts[iy], name, lineno, iy)))
        lines.append(lineno)
        _check_count(len(rows), name)
    return RawProfile(np.asarray(rows, dtype=np.float64).reshape(-1, 2), np.asarray(lines, dtype=np.int64), meta,
                      "miniprof", name)


FORMATS = ("auto", "points", "simpack", "miniprof")


def detect_format(text: str, name: str) -> str:
    """``simpack`` (a ``header.begin``/``spline.begin`` section or a .prw/.prr name), ``miniprof`` (a .whl/.ban
    name, or a ``ColumnDef=`` / ``XYPoints=`` line), else ``points``."""
    low = name.lower()
    if low.endswith((".prw", ".prr")) or re.search(r"^\s*(header|spline)\s*\.\s*begin", text, re.M):
        return "simpack"
    if low.endswith((".whl", ".ban")) or re.search(r"^\s*(ColumnDef|XYPoints)\s*=", text, re.M | re.I):
        return "miniprof"
    return "points"


def read_profile_text(text: str, name: str, fmt: str = "auto", columns: tuple[int, int] = (0, 1)) -> RawProfile:
    """Read a profile in ``fmt`` (:data:`FORMATS`; ``auto`` detects it).  Raises :class:`ProfileError`."""
    if fmt == "auto":
        fmt = detect_format(text, name)
    if fmt == "simpack":
        raw = parse_simpack(text, name)
    elif fmt == "miniprof":
        raw = parse_miniprof(text, name)
    elif fmt == "points":
        raw = parse_points(text, name, columns)
    else:
        raise ProfileError(f"{name}: unknown profile format {fmt!r}; allowed: {', '.join(FORMATS)}")
    if len(raw.points) < MIN_POINTS:
        raise ProfileError(f"{name}: only {len(raw.points)} profile points found; at least {MIN_POINTS} needed")
    return raw


# ------------------------------------------------------------------------------------------ checks

def _lines(raw: RawProfile, i: int, j: int) -> str:
    a, b = int(raw.lines[min(i, j)]), int(raw.lines[max(i, j)])
    return f"line {a}" if a == b else f"lines {a}-{b}"


def checked_points(raw: RawProfile, left: np.ndarray, kind: str, max_slope_deg: float = 80.0,
                   max_gap: float = 2e-3) -> tuple[np.ndarray, np.ndarray]:
    """The checks of the module docstring on ``left`` float64[n, 2] (the points of ``raw`` in left-wheel form
    [m], file order).  Returns (all points float64[n, 2] from the gauge side to the field side, the part of them
    without the steep ends float64[m, 2]).  Raises :class:`ProfileError` naming the file, the lines and what to
    change."""
    name = raw.name
    n = len(left)
    if n < MIN_POINTS:
        raise ProfileError(f"{name}: only {n} profile points; at least {MIN_POINTS} needed")
    lat, ver = left[:, 0], left[:, 1]
    w = float(lat.max() - lat.min())
    h = float(ver.max() - ver.min())
    lo, hi = LATERAL_EXTENT
    units = raw.meta.get("units", "mm")
    if not lo <= w <= hi:
        hint = (" — the numbers look like millimetres read as metres: set units: mm" if w > hi * 100 else
                " — the numbers look like metres read as millimetres: set units: m" if w < lo / 100 else "")
        raise ProfileError(f"{name}: lateral extent {w * 1e3:.4g} mm with units {units}{hint}; a {kind} profile is "
                           f"{lo * 1e3:g}-{hi * 1e3:g} mm wide")
    vlo, vhi = VERTICAL_EXTENT
    if not vlo <= h <= vhi:
        raise ProfileError(f"{name}: vertical extent {h * 1e3:.4g} mm with units {units}: a {kind} profile spans "
                           f"{vlo * 1e3:g}-{vhi * 1e3:g} mm (wrong units, or columns: set columns)")
    idx = np.arange(n)
    dy = np.diff(lat)
    tol = 1e-9
    if np.sum(dy < -tol) > np.sum(dy > tol):   # the file runs from the field side to the gauge side
        left = left[::-1]
        idx = idx[::-1]
        lat, ver = left[:, 0], left[:, 1]
        dy = np.diff(lat)
    dz = np.diff(ver)
    # steep chords; rises below STEEP_FLOOR are measurement noise between close points, not steep parts
    steep = (np.abs(dz) > math.tan(math.radians(max_slope_deg)) * np.abs(dy)) & (np.abs(dz) > STEEP_FLOOR)
    # lateral reversals outside steep parts: the profile folds back
    fold = (dy < -max(1e-6, 0.02 * np.median(np.abs(dy)))) & ~steep
    if np.any(fold):
        k = int(np.flatnonzero(fold)[0])
        raise ProfileError(f"{name}: the profile folds back at {_lines(raw, idx[k], idx[k + 1])} (the lateral "
                           f"coordinate decreases by {-dy[k] * 1e3:.3g} mm where the profile is not steep): a profile "
                           "must be a function of its lateral coordinate; repair the points or their order")
    # runs of non-steep chords: the longest one is the profile; another long one means a spike or a step
    ok = ~steep & (dy > 0)
    runs = []
    i = 0
    while i < len(ok):
        if ok[i]:
            j = i
            while j < len(ok) and ok[j]:
                j += 1
            runs.append((i, j, float(lat[j] - lat[i])))
            i = j
        else:
            i += 1
    if not runs:
        raise ProfileError(f"{name}: every part of the profile is steeper than {max_slope_deg:g}°: wrong columns or "
                           "orientation?")
    best = max(runs, key=lambda r: r[2])
    for r in runs:
        if r is not best and r[2] > max(5e-3, 0.15 * best[2]):
            a, b = (best[1], r[0]) if r[0] > best[0] else (r[1], best[0])
            raise ProfileError(f"{name}: a steep spike or step between {_lines(raw, idx[a], idx[min(b, n - 1)])} "
                               f"splits the profile ({r[2] * 1e3:.3g} mm and {best[2] * 1e3:.3g} mm of it on either "
                               f"side, steeper than {max_slope_deg:g}° between): remove the outlier points")
    i0, i1 = best[0], best[1]
    pts = left[i0:i1 + 1]
    sel = idx[i0:i1 + 1]
    gaps = np.diff(pts[:, 0])
    if gaps.size and gaps.max() > max_gap:
        k = int(np.argmax(gaps))
        raise ProfileError(f"{name}: a gap of {gaps[k] * 1e3:.3g} mm without points between "
                           f"{_lines(raw, sel[k], sel[k + 1])} (max_gap_mm = {max_gap * 1e3:g}): the measurement "
                           "misses part of the profile")
    if kind == "wheel":
        _check_wheel_orientation(pts, name)
    else:
        _check_rail_orientation(pts, name)
    return np.ascontiguousarray(left), pts


def _check_wheel_orientation(p: np.ndarray, name: str) -> None:
    """A wheel in left-wheel form has its flange (the largest radius offset, 15-45 mm above the tread) in its
    gauge-side third."""
    u, F = p[:, 0], p[:, 1]
    w = u[-1] - u[0]
    gauge = u <= u[0] + w / 3.0
    field = u >= u[-1] - w / 3.0
    fg, ff = float(F[gauge].max()), float(F[field].max())
    fmin = float(F.min())
    med = float(np.median(F))
    if ff - fmin > 0.01 and ff > fg + 0.005:
        raise ProfileError(f"{name}: the flange (largest radius) is on the field side: the lateral orientation is "
                           "reversed — set lateral_positive (field | gauge)")
    if fg - med >= 0.005 and ff - med > max(0.003, 0.4 * (fg - med)):
        raise ProfileError(f"{name}: both ends rise {(fg - med) * 1e3:.3g} and {(ff - med) * 1e3:.3g} mm above the "
                           "middle, as a rail head does: is this a rail profile, or is vertical_positive reversed?")
    if fg - float(np.median(F)) < 0.005:
        if float(np.median(F)) - fmin > 0.01 and F[gauge].min() < np.median(F) - 0.01:
            raise ProfileError(f"{name}: the flange points the wrong way (it lowers the radius): the vertical "
                               "orientation is reversed — set vertical_positive (down | up)")
        raise ProfileError(f"{name}: no flange found (the gauge-side third rises {max(fg - float(np.median(F)), 0) * 1e3:.3g} "
                           "mm above the tread): is this a rail profile, or are the columns swapped?")


def _check_rail_orientation(p: np.ndarray, name: str) -> None:
    """A rail head (left-wheel form, height up) has its top inside, above both ends."""
    v, g = p[:, 0], p[:, 1]
    top = float(g.max())
    it = int(np.argmax(g))
    if it == 0 or it == len(g) - 1 or top - g[0] < 0.002 or top - g[-1] < 0.002:
        if float(g.min()) < min(g[0], g[-1]) - 0.002:
            raise ProfileError(f"{name}: the rail head is upside down (its lowest point is inside): set "
                               "vertical_positive (down | up)")
        raise ProfileError(f"{name}: the highest point is not inside the head with both sides falling away: is this "
                           "a wheel profile, or are the columns swapped?")


__all__ = ["ProfileError", "RawProfile", "read_profile_text", "parse_points", "parse_simpack", "parse_miniprof",
           "detect_format", "checked_points", "FORMATS", "MAX_POINTS", "MIN_POINTS"]
