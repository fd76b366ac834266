"""Run figures of the ``railway_vehicle`` kind (from a result dataset, any store or a ``hpcrail run``), against
the track position of the leading wheelset, the curves shaded and the route (curvature) below:

* ``curving`` — lateral displacement and yaw of every wheelset, bogie frame and the car body (paper 004
  Figs 17, 19-22);
* ``wheel_forces`` — per wheel: vertical force Q, lateral force Y, the EN 14363 2 m sliding mean of Y/Q
  against its limit (:func:`two_metre_means`, the largest value marked) and the flange-contact flags.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from hpcrail.results.plotting import config_of, curve_spans, declared_attrs, finish, legend_outside, limit_line, \
    limit_of, mark_max, new_figure, route_panel, shade_curves, suptitle, title, track_route, wheel_styles
from hpcrail.results.running_safety import en14363_settings, two_metre_means
from hpcrail.results.units import label, to_display


def declared(name: str) -> dict:
    """The attributes the railway-vehicle kind declares for output ``name`` (limits of stores written before
    limits were declared)."""
    from hpcrail.kinds.railway_vehicle.outputs import RAILWAY_VEHICLE_OUTPUTS

    return declared_attrs(RAILWAY_VEHICLE_OUTPUTS, name)


def has_series(ds: xr.Dataset) -> bool:
    return "lateral_displacement" in ds and "time" in ds.dims and ds.sizes.get("time", 0) > 1


def route(ds: xr.Dataset) -> list:
    """The run's track as route sections (curvature from the scenario's ``track.sections``); [] without a stored
    configuration."""
    cfg = config_of(ds)
    track = cfg.get("track") if isinstance(cfg.get("track"), dict) else {}
    return track_route(track.get("sections") or [], 0.0, float(cfg.get("grade_permille") or 0.0))


def _finish_along_track(fig, axes, ds, s, out_dir, name):
    """Shade the curves on every axes, draw the route under the last one, grid, save."""
    sections = route(ds)
    spans = curve_spans(sections)
    for ax in axes[:-1] if sections else axes:
        shade_curves(ax, spans)
        ax.grid(alpha=0.3)
    if sections:
        route_panel(axes[-1], sections, s, s, where="under the leading wheelset")
        axes[-1].grid(alpha=0.3)
    axes[-1].set_xlabel("position of the leading wheelset [m]")
    return finish(fig, out_dir, name)


def _figure(ds, n_panels: int, height: float):
    """Figure with ``n_panels`` panels along the track plus the route panel when the dataset has a route."""
    extra = 1 if route(ds) else 0
    ratios = [1.0] * n_panels + [0.45] * extra
    fig, axes = new_figure(n_panels + extra, 1, figsize=(10.5, height * n_panels + 1.3 * extra + 1.0), sharex=True,
                           squeeze=False, gridspec_kw={"height_ratios": ratios})
    return fig, list(axes[:, 0])


def curving_figure(ds: xr.Dataset, out_dir: str | Path | None = None, **_opts) -> list:
    """Lateral displacement [mm] and yaw [mrad] of every body against the leading wheelset's position."""
    s = np.asarray(ds["distance"].values, float)
    fig, axes = _figure(ds, 2, 2.9)
    kinds = [str(k) for k in ds["body_kind"].values] if "body_kind" in ds.coords else ["rigid"] * ds.sizes["body"]
    for b, name in enumerate(ds["body"].values):
        ls = "-" if kinds[b] == "wheelset" else "--"
        for ax, var in ((axes[0], "lateral_displacement"), (axes[1], "yaw")):
            da = ds[var]
            ax.plot(s, to_display(da.isel(body=b).values, da.attrs), ls, lw=1.2, label=str(name))
    for ax, var in ((axes[0], "lateral_displacement"), (axes[1], "yaw")):
        ax.set_ylabel(label(ds[var].attrs, var), fontsize=9)
    legend_outside(axes[0], title="body (dashed: not a wheelset)")
    speed = ds.attrs.get("speed_mps")
    what = f"curving ({ds.attrs.get('contact_method', '')} contact" + (
        f", {float(speed) * 3.6:.0f} km/h)" if speed else ")")
    suptitle(fig, title(ds, what))
    return [_finish_along_track(fig, axes, ds, s, out_dir, "curving")]


def wheel_forces_figure(ds: xr.Dataset, out_dir: str | Path | None = None, **_opts) -> list:
    """Q, Y, (Y/Q) 2 m mean against its limit and flange contact per wheel against the leading wheelset's
    position."""
    s = np.asarray(ds["distance"].values, float)
    fig, axes = _figure(ds, 4, 2.3)
    wheels = [str(w) for w in ds["wheel"].values]
    styles = wheel_styles(wheels)
    for k, (c, ls) in enumerate(styles):
        for ax, var in ((axes[0], "wheel_load"), (axes[1], "lateral_force")):
            da = ds[var]
            ax.plot(s, to_display(da.isel(wheel=k).values, da.attrs), ls, color=c, lw=1.0, label=wheels[k])
        fl = ds["flange_contact"].isel(wheel=k).values.astype(float)
        axes[3].plot(s, fl * 0.8 + k, color=c, lw=1.5)
    axes[0].set_ylabel(label(ds["wheel_load"].attrs, "Q"), fontsize=9)
    axes[1].set_ylabel(label(ds["lateral_force"].attrs, "Y"), fontsize=9)
    en = en14363_settings(ds)
    means = two_metre_means(ds, en)
    lim, lim_text = limit_of(ds, "max_y_over_q", declared("max_y_over_q"))   # the run's own (y_q_limit)
    if "y_over_q" in means:
        c_, y = means["s"], means["y_over_q"]
        for k, (c, ls) in enumerate(styles):
            axes[2].plot(c_, y[:, k], ls, color=c, lw=1.0)
        axes[2].set_ylabel("Y/Q 2 m mean", fontsize=9)
        mark_max(axes[2], c_, y, lambda k, e: f"max {y[k, e]:.3g} ({wheels[e]}, {c_[k]:.0f} m)")
    else:
        for k, (c, ls) in enumerate(styles):
            axes[2].plot(s, ds["y_over_q"].isel(wheel=k).values, ls, color=c, lw=1.0)
        axes[2].set_ylabel("Y/Q (instantaneous)", fontsize=9)
    if lim is not None:
        limit_line(axes[2], lim, f"limit {lim:g} ({lim_text})")
    axes[3].set_yticks(np.arange(len(wheels)) + 0.4, wheels, fontsize=7)
    axes[3].set_ylabel("flange contact", fontsize=9)
    legend_outside(axes[0], title="wheel")
    suptitle(fig, title(ds, "wheel/rail forces and the EN 14363 derailment quotient (2 m mean, forces low-passed "
                            f"at {float(en.get('lowpass_hz', 20.0)):g} Hz)"))
    return [_finish_along_track(fig, axes, ds, s, out_dir, "wheel_forces")]


__all__ = ["declared", "curving_figure", "wheel_forces_figure", "has_series", "route"]
