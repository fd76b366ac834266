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

from hpcrail.results.plotting import config_of, curve_spans, finish, legend_outside, level_colours, limit_line, \
    limit_of, new_figure, route_panel, shade_curves, suptitle, title, track_route
from hpcrail.results.running_safety import lowpass, sliding_mean
from hpcrail.results.units import label, to_display


def has_series(ds: xr.Dataset) -> bool:
    return "lateral_displacement" in ds and "time" in ds.dims and ds.sizes.get("time", 0) > 1


def route(ds: xr.Dataset) -> list:
    """The run's track as route sections (curvature from the scenario's ``track.sections``); [] without a stored
    configuration."""
    cfg = config_of(ds)
    track = cfg.get("track") if isinstance(cfg.get("track"), dict) else {}
    return track_route(track.get("sections") or [], 0.0, float(cfg.get("grade_permille") or 0.0))


def declared(name: str, outputs=None) -> dict:
    """The attributes the kind declares for output ``name`` (``outputs``: a declaration table, default the
    railway-vehicle kind's): limits for stores written before limits were declared."""
    if outputs is None:
        from hpcrail.kinds.railway_vehicle.outputs import RAILWAY_VEHICLE_OUTPUTS as outputs
    for o in outputs:
        if o.name == name:
            return o.attrs()
    return {}


def _increasing(s: np.ndarray) -> np.ndarray:
    """Indices of the samples where the track position ``s`` advances (a stopped vehicle repeats positions)."""
    keep = np.isfinite(s)
    run_max = np.maximum.accumulate(np.where(keep, s, -np.inf))
    first = np.r_[True, run_max[1:] > run_max[:-1]]
    return np.flatnonzero(keep & first)


def two_metre_means(sub: xr.Dataset, en: dict) -> dict:
    """EN 14363 sliding means of one vehicle's series (``sub``: dims ``time`` and ``wheel``/``wheelset``), as
    :func:`hpcrail.results.running_safety.running_safety` forms them: forces low-passed (``en["lowpass_hz"]``,
    default 20 Hz), then means over ``en["window_m"]`` (2 m) of track every ``en["step_m"]`` (0.5 m) along the
    leading wheelset's position ``distance`` (every wheelset passes the same windows, shifted by a constant).
    Y/Q from the filtered Y and Q when the dataset has them, else from its Y/Q series; ΔQ/Q from the mean of
    Q and the static wheel loads, else from its series (linear in Q: the same mean).

    Returns ``{"s": window centres float64[m] [m], "y_over_q": float64[m, wheels], "wheel_unloading": ...,
    "sum_y": float64[m, wheelsets] [N]}`` (the quantities the dataset allows); {} without ``distance``."""
    if "distance" not in sub:
        return {}
    s = np.asarray(sub["distance"].values, float)
    idx = _increasing(s)
    if idx.size < 3:
        return {}
    s = s[idx]
    t = np.asarray(sub["time"].values, float)[idx]
    dt = float(np.median(np.diff(t)))
    win, step, hz = float(en.get("window_m", 2.0)), float(en.get("step_m", 0.5)), float(en.get("lowpass_hz", 20.0))

    def series(name):
        return np.nan_to_num(np.asarray(sub[name].transpose("time", ...).values, float)[idx])

    out: dict = {}
    if "wheel_load" in sub and "lateral_force" in sub:
        qf, yf = lowpass(series("wheel_load"), dt, hz), lowpass(series("lateral_force"), dt, hz)
        with np.errstate(divide="ignore", invalid="ignore"):
            yq = np.where(qf > 0, yf / qf, 0.0)
        out["s"], out["y_over_q"] = sliding_mean(s, yq, win, step)
    elif "y_over_q" in sub:
        out["s"], out["y_over_q"] = sliding_mean(s, lowpass(series("y_over_q"), dt, hz), win, step)
    if "wheel_load" in sub and "static_wheel_load" in sub:     # (Q0 - Q)/Q0 of the mean Q, as the standard
        q0 = np.asarray(sub["static_wheel_load"].values, float)
        out["s"], mq = sliding_mean(s, lowpass(series("wheel_load"), dt, hz), win, step)
        out["wheel_unloading"] = (q0[None, :] - mq) / q0[None, :]
    elif "wheel_unloading" in sub:
        out["s"], out["wheel_unloading"] = sliding_mean(s, lowpass(series("wheel_unloading"), dt, hz), win, step)
    if "sum_y" in sub:
        out["s"], out["sum_y"] = sliding_mean(s, lowpass(series("sum_y"), dt, hz), win, step)
    return out if "s" in out and out["s"].size else {}


def en14363_settings(ds: xr.Dataset) -> dict:
    """The scenario's ``output.en14363`` settings (window, step, low-pass, limits) as stored; {} if none."""
    out = config_of(ds).get("output")
    en = out.get("en14363") if isinstance(out, dict) else None
    return en if isinstance(en, dict) else {}


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
    lim, lim_text = limit_of(ds, "y_over_q", declared("y_over_q"))
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


__all__ = ["declared", "curving_figure", "wheel_forces_figure", "has_series", "two_metre_means", "route", "wheel_styles",
           "mark_max", "en14363_settings"]
