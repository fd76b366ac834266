"""Run figures of the ``vertical`` kind (the :class:`~hpcrail.kinds.descriptor.Figure` contract
``make(ds, out_dir, **options)``; options of :mod:`hpcrail.results.plotting`: ``select={"body": [...],
"floor_point": [...]}``, ``t_max``):

* :func:`body_accelerations` — ``body_accelerations.png``: vertical floor accelerations at the floor points,
  bounce and pitch accelerations of the bodies, against time;
* :func:`ride_comfort` — ``ride_comfort.png``: per floor point, Sperling's W_z, the EN 12299 Wb-weighted
  r.m.s. acceleration, the N_MV vertical term and the peak |acceleration| (the run's element outputs).
"""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.results.plotting import finish, legend_outside, new_figure, pick_elements, series_lines, suptitle, \
    time_window, title, x_axis
from hpcrail.results.units import label, to_display

#: comfort outputs per floor point drawn by :func:`ride_comfort`, in order
COMFORT = ("sperling_wz", "wb_rms", "n_mv_z", "max_abs_acceleration")


def _bodies_default(ds) -> list:
    """Bodies drawn by default: the suspended bodies (wheelsets follow the rail and would hide them)."""
    names = [str(b) for b in np.asarray(ds["body"].values)]
    return [b for b in names if not b.startswith("wheelset")] or names


def body_accelerations(ds: xr.Dataset, out_dir=None, *, select: dict | None = None, t_max: float | None = None,
                       **_opts):
    """Floor accelerations (every floor point, or ``select["floor_point"]``), bounce accelerations and pitch
    accelerations of the bodies (``select["body"]``; default the suspended bodies) against time.  Raises
    ``ValueError`` without ``floor_acceleration``/``bounce_acceleration``."""
    if "floor_acceleration" not in ds or "bounce_acceleration" not in ds:
        raise ValueError("body accelerations need the series floor_acceleration and bounce_acceleration")
    sel = time_window(ds, t_max)
    select = select or {}
    xv, xl = x_axis(sel, "time")
    fps = pick_elements(sel, "floor_point", select.get("floor_point"), (), 6)
    bodies = pick_elements(sel, "body", select.get("body"), _bodies_default(sel), 6)
    pitched = [b for b in bodies if "pitch_acceleration" in sel
               and np.isfinite(np.asarray(sel["pitch_acceleration"].sel(body=b).values)).any()]
    panels = [("floor_acceleration", "floor_point", fps), ("bounce_acceleration", "body", bodies)]
    if pitched:
        panels.append(("pitch_acceleration", "body", pitched))
    fig, axes = new_figure(len(panels), 1, figsize=(10, 2.7 * len(panels) + 0.8), sharex=True, squeeze=False)
    for ax, (var, dim, elems) in zip(axes[:, 0], panels):
        series_lines(ax, sel, var, dim, elems, xv, legend={e: str(e) for e in elems}, lw=0.8)
        ax.set_ylabel(label(sel[var].attrs, var), fontsize=9)
        ax.grid(alpha=0.3)
        legend_outside(ax)
    axes[-1, 0].set_xlabel(xl)
    speed = ds.attrs.get("speed_mps")
    what = "body and floor accelerations" + (f" at {float(speed) * 3.6:.0f} km/h" if speed else "")
    suptitle(fig, title(ds, what))
    return [finish(fig, out_dir, "body_accelerations")]


def ride_comfort(ds: xr.Dataset, out_dir=None, **_opts):
    """Ride comfort per floor point: one bar panel per output of :data:`COMFORT` the dataset has (EN 12299
    Wb r.m.s. and N_MV vertical term, Sperling W_z, peak |acceleration|).  Raises ``ValueError`` without
    any of them."""
    names = [n for n in COMFORT if n in ds and ds[n].dims == ("floor_point",)]
    if not names:
        raise ValueError(f"ride comfort needs one of {', '.join(COMFORT)} per floor point")
    fps = [str(f) for f in np.asarray(ds["floor_point"].values)]
    fig, axes = new_figure(1, len(names), figsize=(3.1 * len(names) + 0.6, 3.8), squeeze=False)
    for ax, n in zip(axes[0], names):
        da = ds[n]
        v = to_display(da.values, da.attrs)
        bars = ax.bar(range(len(fps)), np.nan_to_num(v), color="tab:blue", alpha=0.8)
        for b, val in zip(bars, v):
            ax.annotate("n/a" if not np.isfinite(val) else f"{val:.3g}", (b.get_x() + b.get_width() / 2,
                        b.get_height()), xytext=(0, 2), textcoords="offset points", ha="center", fontsize=8)
        ax.set_xticks(range(len(fps)), fps, rotation=30, ha="right", fontsize=8)
        ax.set_xlabel(ds["floor_point"].attrs.get("long_name", "floor point"), fontsize=8)
        ax.set_ylabel(label(da.attrs, n), fontsize=9)
        ax.margins(y=0.15)
        ax.grid(alpha=0.3, axis="y")
    suptitle(fig, title(ds, "ride comfort per floor point (EN 12299, Sperling)"))
    return [finish(fig, out_dir, "ride_comfort")]


def has_accelerations(ds) -> bool:
    return "floor_acceleration" in ds and "bounce_acceleration" in ds


def has_comfort(ds) -> bool:
    return any(n in ds and ds[n].dims == ("floor_point",) for n in COMFORT)


__all__ = ["body_accelerations", "ride_comfort", "has_accelerations", "has_comfort", "COMFORT"]
