"""Matplotlib building blocks of the kinds' run figures and of sweep reports: labels and display units
from the variables' own attributes (:mod:`hpcrail.results.units`), lines of selected elements over time,
time × element heatmaps, element envelopes, and saving.

A figure function of a kind follows the :class:`~hpcrail.kinds.descriptor.Figure` contract
``make(ds, out_dir, **options)``: it returns the PNG paths it wrote, or — with ``out_dir=None`` — the
matplotlib figures themselves (notebooks display them; tests inspect their artists).  Options shared by
the kinds' figures: ``select`` (``{dimension: [labels]}``: the elements to draw, e.g.
``{"coupler": [12, 61]}``), ``x`` (``"time"`` or ``"distance"``) and ``t_max`` [s].
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from hpcrail.results.units import label, to_display

#: resolution of written PNGs
DPI = 120


def new_figure(nrows: int = 1, ncols: int = 1, *, figsize=(9, 5), **kw):
    """``(figure, axes)`` of a :class:`matplotlib.figure.Figure` made without pyplot (no global state,
    no GUI backend; Jupyter displays it), constrained layout; ``axes`` as ``Figure.subplots`` returns them."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols, **kw)


def finish(fig, out_dir, name: str):
    """Save ``fig`` as ``out_dir/name.png`` (returns the path); with ``out_dir=None`` return the figure."""
    if out_dir is None:
        return fig
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.png"
    fig.savefig(path, dpi=DPI)
    return path


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


__all__ = ["new_figure", "finish", "title", "time_window", "x_axis", "series_lines", "heatmap", "pick_elements", "DPI"]
