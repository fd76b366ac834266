"""Matplotlib building blocks of the kinds' run figures and of sweep reports: labels and display units
from the variables' own attributes (:mod:`hpcrail.results.units`), lines of selected elements over time,
time × element heatmaps, element envelopes, and saving.

A figure function of a kind follows the :class:`~hpcrail.kinds.descriptor.Figure` contract
``make(ds, out_dir, **options)``: it returns the paths it wrote, or — with ``out_dir=None`` — the
matplotlib figures themselves (notebooks display them; tests inspect their artists).  Options shared by
the kinds' figures: ``select`` (``{dimension: [labels]}``: the elements to draw, e.g.
``{"coupler": [12, 61]}``), ``x`` (``"time"`` or ``"distance"``) and ``t_max`` [s].  The file format and
resolution are set around the drawing with :func:`save_options` (``hpcrail plot --format pdf --dpi 300``).

Conventions every figure follows (``tests/test_figure_layout.py`` checks them on every declared figure):
axis labels in words with the display unit in brackets; legends outside the axes (:func:`legend_outside`),
by element or parameter values, never by hash; titles wrapped to the figure's width (:func:`suptitle`,
:func:`axes_title`); every limit a quantity has drawn and labelled (:func:`limit_line`); integer ticks on
integer quantities (:func:`integer_ticks`); the route (curvature, grade: :func:`route_panel`) under plots
against time or track position.  A figure that can draw only part of what it shows (a sweep kept fewer
series) says what is missing with a :class:`FigureNote` warning.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import textwrap
import warnings
from pathlib import Path

import numpy as np

from hpcrail.results.units import label, to_display

#: default resolution of written raster figures [dots per inch]
DPI = 120
#: file formats :func:`finish` writes
FORMATS = ("png", "pdf", "svg")
_SAVE: contextvars.ContextVar = contextvars.ContextVar("hpcrail_figure_save", default=("png", DPI))
#: colour of limit lines and their labels
LIMIT_COLOUR = "tab:red"


class FigureNote(UserWarning):
    """A figure was drawn with less than it can show (e.g. a sweep kept fewer series than a run has);
    the message says what was left out and what to keep to get it (``outputs.series.variables``)."""


def note(text: str) -> None:
    """Warn with a :class:`FigureNote` (``hpcrail plot`` prints it as one line)."""
    warnings.warn(text, FigureNote, stacklevel=2)


@contextlib.contextmanager
def save_options(format: str | None = "png", dpi: float | None = None):
    """Write the figures of this block as ``format`` (``png``, ``pdf`` or ``svg``) at ``dpi`` dots per inch
    (raster parts; default :data:`DPI`).  Raises ``ValueError`` naming the allowed formats or for a
    non-positive dpi."""
    fmt = (format or "png").lower().lstrip(".")
    if fmt not in FORMATS:
        raise ValueError(f"figure format {format!r} not supported; allowed: {', '.join(FORMATS)}")
    if dpi is not None and not (float(dpi) > 0 and float(dpi) <= 2400):
        raise ValueError(f"dpi = {dpi}: give a resolution in dots per inch, 0 < dpi <= 2400")
    token = _SAVE.set((fmt, float(dpi) if dpi else DPI))
    try:
        yield
    finally:
        _SAVE.reset(token)


def current_save_options() -> tuple[str, float]:
    """``(format, dpi)`` of the enclosing :func:`save_options` block (default PNG at :data:`DPI`): what a
    figure drawn in another process must be saved with."""
    return _SAVE.get()


def figure_processes(jobs: int | None, n_figures: int) -> int:
    """Processes to draw ``n_figures`` independent figures with: ``jobs`` (≥ 1) if given, else the cores this
    process may run on (its CPU affinity: a Slurm allocation's, not the node's), at most 8 and never more
    than the figures.  Raises ``ValueError`` for ``jobs`` < 1."""
    if jobs is not None and int(jobs) < 1:
        raise ValueError(f"jobs = {jobs}: give the number of processes drawing figures, 1 or more (1: this process)")
    if jobs is None:
        import os

        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:      # not on Linux
            cores = os.cpu_count() or 1
        jobs = min(cores, 8)
    return max(1, min(int(jobs), n_figures))


def new_figure(nrows: int = 1, ncols: int = 1, *, figsize=(9, 5), **kw):
    """``(figure, axes)`` of a :class:`matplotlib.figure.Figure` made without pyplot (no global state,
    no GUI backend; Jupyter displays it), constrained layout; ``axes`` as ``Figure.subplots`` returns them."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols, **kw)


def finish(fig, out_dir, name: str):
    """Save ``fig`` as ``out_dir/name.<format>`` (format and dpi of :func:`save_options`, default PNG at
    :data:`DPI`) and return the path; with ``out_dir=None`` return the figure (labelled ``name``)."""
    fig.set_label(name)
    if out_dir is None:
        return fig
    fmt, dpi = _SAVE.get()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.{fmt}"
    fig.savefig(path, dpi=dpi, metadata=_metadata(fmt, name))
    return path


def _metadata(fmt: str, name: str) -> dict:
    """File metadata naming the figure and its maker (no creation date: reproducible PDF and SVG files)."""
    from hpcrail._version import __version__

    creator = f"hpcrail {__version__}"
    if fmt == "png":
        return {"Title": name, "Software": creator}
    if fmt == "pdf":
        return {"Title": name, "Creator": creator, "CreationDate": None}
    return {"Title": name, "Creator": creator, "Date": None}


# ------------------------------------------------------------------------------------------------
# layout: titles that fit, legends off the data, limits, ticks
# ------------------------------------------------------------------------------------------------
def _wrap(text: str, width_in: float, fontsize: float) -> str:
    """``text`` wrapped to a width of ``width_in`` inches at ``fontsize`` points (a character is ~0.55 em)."""
    chars = max(20, int(width_in * 72.0 / (0.55 * fontsize)))
    return "\n".join(textwrap.fill(part, chars) for part in str(text).split("\n"))


def suptitle(fig, text: str, fontsize: float = 10, **kw):
    """The figure's title, wrapped to the figure's width."""
    return fig.suptitle(_wrap(text, fig.get_figwidth() * 0.96, fontsize), fontsize=fontsize, **kw)


def axes_title(ax, text: str, fontsize: float = 9, **kw):
    """An axes title wrapped to the axes' width."""
    w = ax.get_position().width * ax.figure.get_figwidth()
    return ax.set_title(_wrap(text, w, fontsize), fontsize=fontsize, **kw)


def legend_outside(ax, handles=None, labels=None, *, title: str | None = None, fontsize: float = 7,
                   ncol: int = 1, **kw):
    """The legend of ``ax`` to the right of its axes (never over the data; constrained layout makes room).
    Returns the legend, or None when there is nothing to label."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    kw.setdefault("loc", "upper left")
    kw.setdefault("bbox_to_anchor", (1.01, 1.0))
    return ax.legend(handles, labels, title=title, fontsize=fontsize, title_fontsize=fontsize, ncol=ncol,
                     borderaxespad=0.0, frameon=False, **kw)


def limit_line(ax, value: float, text: str, *, axis: str = "y", color: str = LIMIT_COLOUR, ls: str = "--",
               lw: float = 1.0, show: bool = True):
    """A limit drawn as a line across the axes and labelled with ``text`` at its right (``axis="y"``) or
    top (``"x"``) end, kept in view.  ``show=False``: the limit is off the scale of the data (drawn only as a
    label at the edge of the axes saying where it is).  Returns the line (None when not drawn)."""
    import matplotlib.transforms as mtransforms

    if value is None or not np.isfinite(value):
        return None
    if not show:
        arrow = "↑" if axis == "y" else "→"
        ax.annotate(f"{text} {arrow} (off the scale)", xy=(0.995, 0.99) if axis == "y" else (0.99, 0.5),
                    xycoords="axes fraction", ha="right", va="top", fontsize=7, color=color)
        return None
    if axis == "y":
        line = ax.axhline(value, color=color, ls=ls, lw=lw, zorder=1.5)
        trans = mtransforms.blended_transform_factory(ax.transAxes, ax.transData)
        below = value > 0     # an upper limit: its label under the line, inside the axes (a lower one: above)
        ax.annotate(text, xy=(0.995, value), xycoords=trans, xytext=(0, -2 if below else 2),
                    textcoords="offset points", ha="right", va="top" if below else "bottom", fontsize=7,
                    color=color, annotation_clip=False,
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.75))
    else:
        line = ax.axvline(value, color=color, ls=ls, lw=lw, zorder=1.5)
        trans = mtransforms.blended_transform_factory(ax.transData, ax.transAxes)
        ax.annotate(text, xy=(value, 0.99), xycoords=trans, xytext=(2, 0), textcoords="offset points",
                    ha="left", va="top", rotation=90, fontsize=7, color=color, annotation_clip=False)
    line.set_label("_limit")   # not a legend entry: the label is on the line
    return line


def limit_in_view(values, limit: float, share: float = 0.25) -> bool:
    """Whether a limit should be drawn on the data's scale: the data reach at least ``share`` of it (else
    showing it would flatten the data; :func:`limit_line` then only says where it is)."""
    v = np.asarray(values, float)
    v = np.abs(v[np.isfinite(v)])
    return bool(v.size) and float(v.max()) >= share * abs(float(limit))


def integer_ticks(ax, axis: str = "x") -> None:
    """Whole-number ticks on ``axis`` (an integer quantity: notch, element number, count), as many as fit
    side by side (:class:`FittingIntegerLocator`)."""
    (ax.xaxis if axis == "x" else ax.yaxis).set_major_locator(_fitting_integer_locator_class()())


@functools.cache
def _fitting_integer_locator_class():
    """The class :class:`FittingIntegerLocator`, made on first use: this module imports matplotlib lazily."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties
    from matplotlib.ticker import MaxNLocator

    class FittingIntegerLocator(MaxNLocator):
        """``MaxNLocator(integer=True, nbins="auto")`` whose tick count on an x axis is also capped by the
        widest label: ``nbins="auto"`` sizes the count by the tick font, not by the labels' width, and five-digit
        masses (19 400 t) drew as an unreadable row of overlapping labels at the default ten bins."""

        def __init__(self):
            super().__init__(nbins="auto", integer=True)

        def __call__(self):
            if self.axis is not None and self.axis.axis_name == "x":
                vmin, vmax = self.axis.get_view_interval()
                fig = self.axis.axes.figure
                width = self.axis.axes.get_position().width * fig.get_figwidth() * 72.0    # points
                size = FontProperties(size=rcParams["xtick.labelsize"]).get_size_in_points()
                chars = len(f"{max(abs(vmin), abs(vmax)):.0f}") + (1 if min(vmin, vmax) < 0 else 0)
                # a digit is ~0.6 em wide; one em between labels
                self.set_params(nbins=max(2, min(9, int(width / ((0.6 * chars + 1.0) * size)))))
            return super().__call__()

    FittingIntegerLocator.__module__, FittingIntegerLocator.__qualname__ = __name__, "FittingIntegerLocator"
    return FittingIntegerLocator


def __getattr__(name):
    # ``plotting.FittingIntegerLocator`` (and so pickled figures) resolves without importing matplotlib up front
    if name == "FittingIntegerLocator":
        return _fitting_integer_locator_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_logarithmic(values, attrs: dict | None = None) -> bool:
    """Levels that read best on a log axis: a logspace/loguniform/lognormal parameter, or at least three
    positive distinct levels in a geometric progression (0.25, 0.5, 1, 2) or spanning two decades."""
    if (attrs or {}).get("sweep_source") in ("logspace", "loguniform", "lognormal"):
        v = np.asarray(values, float)
        return bool(v.size) and bool(np.all(v[np.isfinite(v)] > 0))
    try:
        v = np.unique(np.asarray(values, float))
    except (TypeError, ValueError):
        return False
    v = v[np.isfinite(v)]
    if v.size < 3 or np.any(v <= 0):
        return False
    r = v[1:] / v[:-1]
    return bool(np.allclose(r, r[0], rtol=1e-6) and r[0] >= 1.5) or bool(v[-1] / v[0] >= 100.0)


def is_integer_valued(values) -> bool:
    """True for integer dtypes and for floats that are all whole numbers."""
    v = np.asarray(values)
    if v.dtype.kind in "iu":
        return True
    if v.dtype.kind != "f":
        return False
    f = v[np.isfinite(v)]
    return bool(f.size) and bool(np.all(f == np.round(f)))


def level_colours(n: int):
    """``n`` distinguishable colours for ordered levels (tab10 up to 10, else viridis)."""
    from matplotlib import colormaps

    if n <= 10:
        return [colormaps["tab10"](i) for i in range(n)]
    cmap = colormaps["viridis"]
    return [cmap(i / max(n - 1, 1)) for i in range(n)]


#: marker shapes for the levels of a parameter
MARKERS = "osD^v<>phP*X"


def wheel_styles(names) -> list[tuple]:
    """(colour, line style) per wheel: one colour per wheelset, left wheel solid, right wheel dashed."""
    sets = list(dict.fromkeys(str(n).split()[0] for n in names))
    cols = level_colours(len(sets))
    return [(cols[sets.index(str(n).split()[0])], "-" if "left" in str(n) else "--") for n in names]


def mark_max(ax, x, y, text_of, key=None) -> None:
    """A marker at the largest value of ``key`` (default ``y``; float64[k, n]) drawn at ``y`` with a text
    ``text_of(k, e)`` (``key = |y|`` marks the largest magnitude, ``-y`` the most negative value)."""
    key = y if key is None else key
    if not np.isfinite(key).any():
        return
    k, e = np.unravel_index(int(np.nanargmax(key)), key.shape)
    below = y[k, e] >= 0
    ax.plot([x[k]], [y[k, e]], "o", ms=5, mfc="none", mec="k", mew=1.0, zorder=5, label="_max")
    ax.annotate(text_of(k, e), (x[k], y[k, e]), xytext=(6, -2 if below else 2), textcoords="offset points",
                fontsize=7, va="top" if below else "bottom", zorder=5)


def declared_attrs(outputs, name: str) -> dict:
    """The attributes an output declaration table (``outputs``: a kind's :class:`~hpcrail.results.outputs.Output`
    tuple) gives output ``name`` ({} when it has none): limits for stores written before limits were declared."""
    for o in outputs:
        if o.name == name:
            return o.attrs()
    return {}


def config_of(ds) -> dict:
    """The scenario configuration stored with a dataset (``config_yaml``; a sweep store's
    ``base_config_yaml``) as a plain mapping ({} when there is none)."""
    import yaml

    text = ds.attrs.get("config_yaml") or ds.attrs.get("base_config_yaml") or ""
    try:
        cfg = yaml.safe_load(text) if text else {}
    except yaml.YAMLError:
        return {}
    return cfg if isinstance(cfg, dict) else {}


def limit_of(ds, name: str, attrs: dict | None = None):
    """``(limit, source)`` of variable ``name`` in its display units: the run's own limit (the variable's
    ``limit`` attribute: a scenario's ``y_q_limit``, see :mod:`hpcrail.results.verdicts`), else the declaration's
    (``attrs``: for stores written before limits were declared); ``(None, "")`` without one."""
    a = dict(attrs or {})
    if name in ds.variables:
        a.update({k: v for k, v in ds[name].attrs.items() if k in ("limit", "limit_source", "units",
                                                                    "display_units", "display_scale")})
    lim = a.get("limit")
    try:
        lim = float(lim) if lim is not None else None
    except (TypeError, ValueError):
        lim = None
    if lim is None or not np.isfinite(lim):
        return None, ""
    return float(to_display(lim, a)), str(a.get("limit_source", ""))


# ------------------------------------------------------------------------------------------------
# sweep stores: parameters as colour, marker and facets
# ------------------------------------------------------------------------------------------------
def parameter_names(ds) -> list[str]:
    """The swept parameters of a sweep store in spec order (its ``parameters`` attribute; else the
    coordinates carrying ``sweep_path``)."""
    import json

    try:
        names = [p["name"] for p in json.loads(ds.attrs.get("parameters", "[]"))]
    except (TypeError, ValueError, KeyError):
        names = []
    names = [n for n in names if n in ds.variables]
    return names or [n for n in ds.coords if "sweep_path" in ds[n].attrs]


def level_text(ds, p: str, value) -> str:
    """A parameter value with its unit, as a legend shows it (``0.25 1/s``, ``drawbar.yaml``)."""
    from hpcrail.results.units import pretty_units

    if isinstance(value, (float, np.floating)):
        value = f"{float(value):.4g}"
    return f"{value} {pretty_units(ds[p].attrs.get('units', '')) if p in ds.variables else ''}".strip()


def parameter_label(ds, p: str) -> str:
    """``"<long_name> [<units>]"`` of a swept parameter."""
    return label(ds[p].attrs, p) if p in ds.variables else p


@dataclasses.dataclass
class Encoding:
    """How a figure of a sweep shows its swept parameters: ``colour`` (most levels), ``marker`` (next), ``facet``
    (one row of panels per level of the next, at most :data:`MAX_FACETS` levels), ``pooled`` (the rest: every
    scenario drawn, not distinguished: say so in the title).  ``levels``: parameter -> its sorted levels over
    the scenarios drawn."""

    colour: str | None
    marker: str | None
    facet: str | None
    pooled: list
    levels: dict

    def colour_of(self, value):
        lv = self.levels.get(self.colour, [])
        cols = level_colours(len(lv))
        return cols[_index(lv, value)] if lv else "C0"

    def marker_of(self, value) -> str:
        lv = self.levels.get(self.marker, [])
        return MARKERS[_index(lv, value) % len(MARKERS)] if lv else "o"

    def legend(self, ds) -> tuple[list, list]:
        """Legend handles and labels: one entry per colour level, then one per marker level, each group
        headed by its parameter's label."""
        from matplotlib.lines import Line2D

        handles, labels = [], []
        for p, kind in ((self.colour, "colour"), (self.marker, "marker")):
            if p is None:
                continue
            handles.append(Line2D([], [], ls="none"))
            labels.append(parameter_label(ds, p))
            for v in self.levels[p]:
                if kind == "colour":
                    h = Line2D([], [], ls="none", marker="s", ms=7, mfc=self.colour_of(v), mec="none")
                else:
                    h = Line2D([], [], ls="none", marker=self.marker_of(v), ms=6, mfc="0.6", mec="k", mew=0.5)
                handles.append(h)
                labels.append("  " + level_text(ds, p, v))
        return handles, labels


#: at most this many rows of panels (facets) for one parameter
MAX_FACETS = 4


def _index(levels, value) -> int:
    for i, v in enumerate(levels):
        if v == value or (isinstance(v, float) and isinstance(value, (float, np.floating)) and np.isclose(v, value)):
            return i
    return 0


def encode_parameters(ds, params: list, ok) -> Encoding:
    """Assign the swept ``params`` (those that vary over the scenarios ``ok``, a bool mask) to colour, marker and
    facets: the parameter with the most levels gets the colour, the next the marker, the next the rows of
    panels (if it has at most :data:`MAX_FACETS` levels)."""
    ok = np.asarray(ok, bool)
    levels = {}
    for p in params:
        v = np.asarray(ds[p].values)[ok]
        if v.dtype.kind in "biuf":
            u = sorted(set(v.tolist()))
        else:
            u = sorted({str(x) for x in v.tolist()})
        if len(u) > 1:
            levels[p] = u
    order = sorted(levels, key=lambda p: -len(levels[p]))   # stable: spec order among equal counts
    colour = order[0] if order else None
    marker = order[1] if len(order) > 1 else None
    facet = order[2] if len(order) > 2 and len(levels[order[2]]) <= MAX_FACETS else None
    pooled = [p for p in order if p not in (colour, marker, facet)]
    return Encoding(colour, marker, facet, pooled, levels)


def values_of(ds, p: str, ok=None) -> np.ndarray:
    """A parameter's values (numbers, or ``str`` for text) over the scenarios (``ok``: a bool mask)."""
    v = np.asarray(ds[p].values)
    if v.dtype.kind not in "biuf":
        v = np.array([str(x) for x in v.tolist()], dtype=object)
    return v if ok is None else v[np.asarray(ok, bool)]


# ------------------------------------------------------------------------------------------------
# the route under plots against time or track position
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class RouteSection:
    """A stretch of route from ``start_m`` to ``end_m`` [m] of track position: curvature 1/R [1/m] going
    linearly from ``k0`` to ``k1`` (spirals; + left), constant ``grade_permille`` (+ uphill), cant [mm]
    from ``cant0_mm`` to ``cant1_mm``."""

    start_m: float
    end_m: float
    k0: float
    k1: float
    grade_permille: float = 0.0
    cant0_mm: float = 0.0
    cant1_mm: float = 0.0


def route_at(sections, positions) -> tuple[np.ndarray, np.ndarray]:
    """``(curvature [1/m], grade [‰])`` of the route ``sections`` at the track ``positions`` [m] (float64[k];
    NaN outside the route)."""
    s = np.asarray(positions, float)
    k = np.full(s.shape, np.nan)
    g = np.full(s.shape, np.nan)
    for r in sections:
        m = (s >= r.start_m) & (s <= r.end_m)
        if m.any():
            u = (s[m] - r.start_m) / max(r.end_m - r.start_m, 1e-12)
            k[m] = r.k0 + (r.k1 - r.k0) * u
            g[m] = r.grade_permille
    return k, g


def track_route(sections: list, start_m: float = 0.0, grade_permille: float = 0.0) -> list[RouteSection]:
    """The route of a track given as tangent / curve / spiral sections (mappings with ``kind``, ``length_m``,
    ``radius_m`` or ``degree_of_curve``, ``cant_mm`` or ``superelevation_mm``: the ``track.sections`` of the
    railway-vehicle, mixed-train and planar-train scenarios) from arc length ``start_m`` with a constant
    grade; a spiral goes linearly from the curvature and cant of the section before to those after."""
    def k_of(sec):
        if not isinstance(sec, dict) or sec.get("kind") != "curve":
            return 0.0
        if sec.get("radius_m"):
            return 1.0 / float(sec["radius_m"])
        d = sec.get("degree_of_curve")
        return float(d) / 1746.375 if d else 0.0    # arc definition: R = 5729.58 ft / D

    def cant_of(sec):
        if not isinstance(sec, dict) or sec.get("kind") == "spiral":
            return 0.0
        return float(sec.get("cant_mm") or sec.get("superelevation_mm") or 0.0)

    out = []
    pos = float(start_m)
    secs = [x for x in sections or [] if isinstance(x, dict)]
    for i, sec in enumerate(secs):
        length = float(sec.get("length_m") or 0.0)
        if sec.get("kind") == "spiral":
            prev, nxt = (secs[i - 1] if i else None), (secs[i + 1] if i + 1 < len(secs) else None)
            k0, k1 = k_of(prev), k_of(nxt)
            c0, c1 = cant_of(prev), cant_of(nxt)
        else:
            k0 = k1 = k_of(sec)
            c0 = c1 = cant_of(sec)
        out.append(RouteSection(pos, pos + length, k0, k1, float(grade_permille), c0, c1))
        pos += length
    return out


def curve_spans(sections) -> list[tuple[float, float]]:
    """``[(start_m, end_m), ...]`` of the stretches of curved track (spirals and curves merged)."""
    spans: list = []
    for r in sections:
        if r.k0 == 0 and r.k1 == 0:
            continue
        if spans and abs(spans[-1][1] - r.start_m) < 1e-6:
            spans[-1] = (spans[-1][0], r.end_m)
        else:
            spans.append((r.start_m, r.end_m))
    return spans


def route_panel(ax, sections, positions, xvals, *, where: str = "") -> None:
    """The route under a plot against time or track position: curvature 1000/R [1/km] (+ left curves) as a
    filled line and the grade [‰] on a second axis, at the track ``positions`` [m] (float64[k]) of the
    samples drawn at ``xvals`` (``where``: whose position, e.g. "at the head").  Nothing is drawn for a
    route without curves or grades."""
    k, g = route_at(sections, positions)
    x = np.asarray(xvals, float)
    ax.fill_between(x, 0, k * 1e3, color="0.6", alpha=0.5, lw=0, label="curvature")
    ax.plot(x, k * 1e3, color="0.3", lw=0.8)
    ax.axhline(0, color="0.5", lw=0.5)
    ax.set_ylabel("curvature\n1000/R [1/km]", fontsize=8)
    kk = k[np.isfinite(k)]
    top = float(np.max(np.abs(kk))) * 1e3 if kk.size else 0.0
    ax.set_ylim(-1.15 * max(top, 1e-3), 1.15 * max(top, 1e-3))
    gg = g[np.isfinite(g)]
    if gg.size and np.any(gg != 0):
        ax2 = ax.twinx()
        ax2.plot(x, g, color="tab:brown", lw=1.2, label="grade")
        ax2.set_ylabel("grade [‰]\n(+ uphill)", fontsize=8, color="tab:brown")
        ax2.tick_params(axis="y", colors="tab:brown", labelsize=7)
        gmax = max(float(np.max(np.abs(gg))), 0.1)
        ax2.set_ylim(-1.3 * gmax, 1.3 * gmax)
    ax.tick_params(axis="y", labelsize=7)
    text = "route" + (f" {where}" if where else "")
    ax.text(0.005, 0.95, text, transform=ax.transAxes, ha="left", va="top", fontsize=7, color="0.25")


def shade_curves(ax, spans, xmap=None) -> None:
    """Light grey bands over the curved stretches ``spans`` (track positions [m]); ``xmap`` maps a position
    to the axis' value (None: the axis is the track position in metres)."""
    lo, hi = ax.get_xlim()
    for a, b in spans:
        if xmap is not None:
            a, b = xmap(a), xmap(b)
        if np.isfinite(a) and np.isfinite(b) and b > a:
            ax.axvspan(a, b, color="0.85", alpha=0.5, lw=0, zorder=0)
    ax.set_xlim(lo, hi)   # the bands never widen the axis


# ------------------------------------------------------------------------------------------------
# checks (tests): legends over data, titles off the figure
# ------------------------------------------------------------------------------------------------
def _data_points(ax) -> np.ndarray:
    """Display coordinates of the data points drawn in ``ax`` (lines, scatter, images' corners excluded)."""
    pts = []
    for ln in ax.get_lines():
        if ln.get_label().startswith("_") and ln.get_linestyle() in ("--", ":") and len(ln.get_xdata()) == 2:
            continue   # limit and reference lines
        xy = np.column_stack([np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)])
        if xy.size:
            pts.append(ln.get_transform().transform(xy))
    for c in ax.collections:
        off = c.get_offsets()
        if len(off) and c.get_offset_transform() is not None:
            pts.append(c.get_offset_transform().transform(np.asarray(off, float)))
    pts = [p[np.all(np.isfinite(p), axis=1)] for p in pts]
    return np.concatenate(pts) if pts else np.zeros((0, 2))


def layout_problems(fig) -> list[str]:
    """What breaks the figure conventions in a drawn figure: legends covering data points of their axes,
    titles or axis labels outside the figure, axes without axis labels, neighbouring tick labels of one axis
    that overlap (unreadable numbers).  [] when none."""
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    fb = fig.bbox
    out = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or ax.get_label() == "<colorbar>":
            continue
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            lb = leg.get_window_extent(r)
            pts = _data_points(ax)
            inside = (pts[:, 0] > lb.x0) & (pts[:, 0] < lb.x1) & (pts[:, 1] > lb.y0) & (pts[:, 1] < lb.y1)
            if inside.any():
                out.append(f"axes {i}: the legend covers {int(inside.sum())} data points")
        for what, text in (("title", ax.title), ("x label", ax.xaxis.label), ("y label", ax.yaxis.label)):
            if text.get_text() and text.get_visible():
                b = text.get_window_extent(r)
                if b.x0 < fb.x0 - 1 or b.x1 > fb.x1 + 1 or b.y0 < fb.y0 - 1 or b.y1 > fb.y1 + 1:
                    out.append(f"axes {i}: the {what} {text.get_text()[:40]!r} runs off the figure")
        for what, labels, lo, hi in (("x", ax.get_xticklabels(), "x0", "x1"), ("y", ax.get_yticklabels(), "y0", "y1")):
            boxes = sorted((getattr(b, lo), getattr(b, hi), t.get_text()) for t in labels    # rotated: slanted
                           if t.get_visible() and t.get_text() and not t.get_rotation()  # boxes overlap
                           for b in [t.get_window_extent(r)])
            for (_a0, a1, ta), (b0, _b1, tb) in zip(boxes, boxes[1:]):
                if b0 < a1 - 0.5:
                    out.append(f"axes {i}: the {what} tick labels {ta!r} and {tb!r} overlap")
                    break
    st = getattr(fig, "_suptitle", None)
    if st is not None and st.get_text():
        b = st.get_window_extent(r)
        if b.x0 < fb.x0 - 1 or b.x1 > fb.x1 + 1 or b.y1 > fb.y1 + 1:
            out.append(f"the figure title {st.get_text()[:40]!r} runs off the figure")
    return out


def title(ds, what: str) -> str:
    """``"<scenario name>: <what>"``."""
    name = ds.attrs.get("scenario_name", "")
    return f"{name}: {what}" if name else what


def time_window(ds, t_max: float | None = None):
    """``ds`` restricted to ``time <= t_max`` (the whole run for None)."""
    return ds if t_max is None or "time" not in ds.dims else ds.sel(time=slice(None, float(t_max)))


def x_axis(ds, x: str = "time", position_var: str = "position", element: dict | None = None):
    """``(values, label)`` of the horizontal axis of a time-series figure: ``time`` [s], or
    ``distance`` — the ``position_var`` series of the element ``element`` (e.g. ``{"vehicle": 1}``, the
    head) in its display units.  Raises ``ValueError`` for another ``x`` or a missing position."""
    if x == "time":
        return np.asarray(ds["time"].values, float), label(ds["time"].attrs, "time")
    if x == "distance":
        if position_var not in ds:
            raise ValueError(f"x='distance' needs the series {position_var!r}, which this dataset does not have")
        pos = ds[position_var]
        if element:
            pos = pos.sel(element)
        a = dict(pos.attrs)
        return to_display(pos.values, a), f"distance: {label(a, position_var)}"
    raise ValueError(f"x must be 'time' or 'distance', got {x!r}")


def series_lines(ax, ds, var: str, dim: str, elements, xvals, legend: dict | None = None, **kw) -> list:
    """One line per element of ``dim`` (``elements``: labels) of series ``var`` against ``xvals``, in
    display units; ``legend``: element -> legend text.  Returns the lines."""
    da = ds[var]
    a = dict(da.attrs)
    lines = []
    for e in elements:
        y = to_display(da.sel({dim: e}).values, a)
        text = (legend or {}).get(e, f"{dim} {e}")
        lines += ax.plot(xvals, y, label=text, **kw)
    ax.set_ylabel(label(a, var))
    return lines


def heatmap(ax, ds, var: str, dim: str, xvals, xlabel: str, cmap: str = "RdBu_r", symmetric: bool = True,
            colorbar_label: str | None = None):
    """``var`` (dims ``time, dim``) as a time × element image (display units); ``symmetric`` centres a
    diverging colour map on zero.  Returns the image."""
    da = ds[var]
    a = dict(da.attrs)
    z = to_display(da.transpose("time", dim).values, a).T
    finite = z[np.isfinite(z)]
    vmax = float(np.max(np.abs(finite))) if finite.size else 1.0
    vmax = vmax or 1.0
    elems = np.asarray(ds[dim].values)
    numeric = elems.dtype.kind in "iuf"
    y0, y1 = (float(elems[0]) - 0.5, float(elems[-1]) + 0.5) if numeric else (-0.5, len(elems) - 0.5)
    im = ax.imshow(z, aspect="auto", origin="lower", interpolation="nearest", cmap=cmap,
                   extent=(float(xvals[0]), float(xvals[-1]), y0, y1),
                   vmin=-vmax if symmetric else None, vmax=vmax if symmetric else None)
    if not numeric:
        ax.set_yticks(range(len(elems)), [str(e) for e in elems])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ds[dim].attrs.get("long_name", dim))
    cb = ax.figure.colorbar(im, ax=ax, pad=0.01)
    cb.set_label(colorbar_label or label(a, var))
    return im


def pick_elements(ds, dim: str, requested=None, default=(), limit: int = 8) -> list:
    """The elements of ``dim`` to draw: ``requested`` (checked: ``ValueError`` naming the allowed
    labels), else ``default`` (deduplicated, in order, at most ``limit``), else up to ``limit`` evenly
    spread elements."""
    labels = list(np.asarray(ds[dim].values).tolist()) if dim in ds.coords else list(range(1, ds.sizes[dim] + 1))
    if requested:
        bad = [e for e in requested if e not in labels]
        if bad:
            shown = f"{labels[0]}..{labels[-1]}" if all(isinstance(v, int) for v in labels) else ", ".join(
                map(str, labels))
            raise ValueError(f"{dim} {bad} not in this dataset; allowed: {shown}")
        return list(requested)
    out = []
    for e in default:
        if e in labels and e not in out:
            out.append(e)
    if out:
        return out[:limit]
    idx = np.unique(np.linspace(0, len(labels) - 1, min(limit, len(labels))).round().astype(int))
    return [labels[i] for i in idx]


__all__ = ["new_figure", "finish", "current_save_options", "figure_processes",
           "title", "time_window", "x_axis", "series_lines", "heatmap", "pick_elements", "DPI",
           "FORMATS", "save_options", "FigureNote", "note", "suptitle", "axes_title", "legend_outside", "limit_line",
           "limit_in_view", "integer_ticks", "is_logarithmic", "is_integer_valued", "level_colours", "MARKERS",
           "config_of", "limit_of", "wheel_styles", "mark_max", "declared_attrs", "parameter_names", "level_text", "parameter_label", "Encoding",
           "encode_parameters", "values_of", "MAX_FACETS", "RouteSection", "route_at", "track_route", "curve_spans", "route_panel", "shade_curves", "layout_problems"]
