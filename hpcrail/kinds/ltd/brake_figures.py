"""Run figures of the pneumatic brake (the :class:`~hpcrail.kinds.descriptor.Figure` contract
``make(ds, out_dir, **options)`` with the shared options ``select={"vehicle": [...]}``, ``x``, ``t_max``):

* :func:`brake_pressures` — ``brake_pressures.png``: brake-pipe and brake-cylinder gauge pressure [bar]
  against time at chosen vehicles (default: the lead, every quarter of the train, the tail and the
  remote locomotives), the brake command below;
* :func:`brake_pipe_heatmap` — ``brake_pipe_heatmap.png``: brake-pipe pressure over time × vehicle, the
  front's arrival (the metric's threshold) drawn over it, locomotives marked.
"""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.kinds.ltd.figures import locomotives
from hpcrail.results.plotting import finish, heatmap, legend_outside, new_figure, pick_elements, series_lines, \
    suptitle, time_window, title, x_axis
from hpcrail.results.units import label, to_display

#: at most this many vehicles in the pressure figure by default
MAX_VEHICLES = 7


def has_brake_pipe(ds) -> bool:
    return "brake_pipe_pressure" in ds


def default_vehicles(ds: xr.Dataset) -> list[int]:
    """The lead, the vehicles at each quarter of the train, the tail, and the remote locomotives (the
    locomotives after the first that follow a wagon)."""
    n = ds.sizes["vehicle"]
    out = [1] + [int(round(1 + q * (n - 1))) for q in (0.25, 0.5, 0.75)] + [n]
    locos = locomotives(ds)
    out += [v for i, v in enumerate(locos) if i > 0 and v - 1 not in locos]
    seen = []
    for v in sorted(set(out)):
        seen.append(v)
    return seen


def brake_pressures(ds: xr.Dataset, out_dir=None, *, select: dict | None = None, x: str = "time",
                    t_max: float | None = None, **_opts):
    """Brake-pipe (top) and brake-cylinder (middle) gauge pressure against time at the selected vehicles
    (``select={"vehicle": [...]}``; default :func:`default_vehicles`), brake command (bottom).  Raises
    ``ValueError`` without ``brake_pipe_pressure`` or for vehicles that do not exist."""
    if "brake_pipe_pressure" not in ds:
        raise ValueError("the brake-pressure figure needs the series brake_pipe_pressure (pneumatic brake)")
    sel = time_window(ds, t_max)
    vs = pick_elements(sel, "vehicle", (select or {}).get("vehicle"), default_vehicles(sel), MAX_VEHICLES + 2)
    xv, xl = x_axis(sel, x, element={"vehicle": 1})
    legend = {v: f"vehicle {v}" + (" (loco)" if v in locomotives(sel) else "") for v in vs}
    panels = [n for n in ("brake_pipe_pressure", "brake_cylinder_pressure") if n in sel]
    fig, axes = new_figure(len(panels) + 1, 1, figsize=(10, 3.0 * len(panels) + 1.8), sharex=True,
                           gridspec_kw={"height_ratios": [3] * len(panels) + [1]}, squeeze=False)
    axes = axes[:, 0]
    for ax, n in zip(axes, panels):
        series_lines(ax, sel, n, "vehicle", vs, xv, legend=legend, lw=1.1)
        ax.set_ylabel(label(sel[n].attrs, n) + " (gauge)", fontsize=9)
        ax.grid(alpha=0.3)
    legend_outside(axes[0])
    if "brake_command" in sel:
        bc = sel["brake_command"].values
        axes[-1].plot(xv, np.where(bc > 1.0, np.nan, bc), lw=1.0, label="service (fraction of full)")
        em = np.where(bc > 1.0, 1.0, np.nan)
        if np.isfinite(em).any():
            axes[-1].plot(xv, em, lw=3.0, color="tab:red", label="emergency")
        axes[-1].set_ylim(-0.05, 1.1)
        axes[-1].set_ylabel("brake command", fontsize=8)
        legend_outside(axes[-1])
        axes[-1].grid(alpha=0.3)
    axes[-1].set_xlabel(xl)
    suptitle(fig, title(ds, "brake-pipe and cylinder pressures"))
    return [finish(fig, out_dir, "brake_pressures")]


def brake_pipe_heatmap(ds: xr.Dataset, out_dir=None, *, x: str = "time", t_max: float | None = None, **_opts):
    """Brake-pipe gauge pressure over time × vehicle (bar), with the front's arrival at each vehicle
    (``brake_front_arrival_time`` after ``brake_application_command_time``) drawn over it and the
    locomotives marked.  Raises ``ValueError`` without ``brake_pipe_pressure``."""
    if "brake_pipe_pressure" not in ds:
        raise ValueError("the brake-pipe heatmap needs the series brake_pipe_pressure (pneumatic brake)")
    sel = time_window(ds, t_max)
    xv, xl = x_axis(sel, x, element={"vehicle": 1})
    fig, ax = new_figure(figsize=(10, 5.2))
    heatmap(ax, sel, "brake_pipe_pressure", "vehicle", xv, xl, cmap="viridis", symmetric=False,
            colorbar_label=label(sel["brake_pipe_pressure"].attrs, "brake_pipe_pressure") + " (gauge)")
    if x == "time" and "brake_front_arrival_time" in ds and "brake_application_command_time" in ds:
        t0 = float(ds["brake_application_command_time"])
        arr = np.asarray(ds["brake_front_arrival_time"].values, float) + t0
        veh = np.asarray(ds["vehicle"].values)
        ok = np.isfinite(arr) & (arr <= float(xv[-1]))
        if ok.any():
            ax.plot(arr[ok], veh[ok], color="tab:red", lw=1.2, ls="--", label="front arrival")
    for i, v in enumerate(locomotives(sel)):
        # mid grey: seen on the colormap's ends and in the legend (white vanished there)
        ax.axhline(v, color="0.6", lw=1.0, ls=":", label="locomotive" if i == 0 else None)
    legend_outside(ax, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=2)
    suptitle(fig, title(ds, "brake-pipe pressure over time and vehicle"))
    return [finish(fig, out_dir, "brake_pipe_heatmap")]


__all__ = ["brake_pressures", "brake_pipe_heatmap", "has_brake_pipe", "default_vehicles", "to_display"]
