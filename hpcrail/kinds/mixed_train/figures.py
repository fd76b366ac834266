"""Figures of the ``mixed_train`` kind.

* run: ``running_safety_v<position>`` per detailed vehicle — its coupler forces and the lateral force they
  put on the car body, then the EN 14363 assessment quantities as the standard judges them: the 2 m sliding
  means (of the 20 Hz low-passed forces) of Y/Q per wheel, of the wheel unloading ΔQ/Q and of ΣY per wheelset,
  each against its limit (drawn and labelled, the largest value marked), the wheelsets' lateral displacement
  and the route (curvature, grade) below, all against the track position of its leading wheelset, the curves
  shaded.  From a sweep store (``hpcrail plot STUDY.zarr --scenario K``) it draws what the sweep kept and
  says (a :class:`~hpcrail.results.plotting.FigureNote`) which series to add to ``outputs.series.variables``
  for the rest;
* sweep report: ``running_safety_vs_buff`` — the worst 2 m means of Y/Q, ΔQ/Q and ΣY/limit of each completed
  scenario against the peak compressive force at the detailed vehicle (paper 000's "admissible longitudinal
  compressive force" question), each swept parameter shown by its values: colour, marker, rows of panels.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr
from matplotlib.ticker import MaxNLocator

from hpcrail.results.plotting import axes_title, config_of, curve_spans, declared_attrs, encode_parameters, finish, \
    legend_outside, level_colours, level_text, limit_line, limit_of, mark_max, new_figure, note, parameter_names, \
    route_panel, shade_curves, suptitle, track_route, values_of, wheel_styles
from hpcrail.results.running_safety import en14363_settings, two_metre_means
from hpcrail.results.units import label, to_display


def has_series(ds: xr.Dataset) -> bool:
    return "y_over_q" in ds and "detailed_vehicle" in ds.dims and ds.sizes.get("time", 0) > 1


def route(ds: xr.Dataset) -> list:
    """The route of the run (the scenario's ``track`` and constant grade), [] without a stored configuration."""
    cfg = config_of(ds)
    track = cfg.get("track") if isinstance(cfg.get("track"), dict) else {}
    return track_route(track.get("sections") or [], 0.0, float(cfg.get("grade_permille") or 0.0))


def _declared(name: str) -> dict:
    from hpcrail.kinds.mixed_train.outputs import MIXED_TRAIN_OUTPUTS

    return declared_attrs(MIXED_TRAIN_OUTPUTS, name)


def _verdict_title(ax, sub, name: str, lim, what: str = "") -> None:
    """The EN 14363 assessment of a panel as its title: the run's 2 m-mean maximum ``name``, its ratio to the
    limit and the verdict (:mod:`hpcrail.results.verdicts`), red when exceeded."""
    from hpcrail.results.verdicts import EXCEEDED, verdict

    if name not in sub or lim is None:
        return
    val = float(sub[name])
    if not np.isfinite(val):
        return
    v = verdict(val, lim)
    head = f"{what} 2 m mean maximum" if what else "2 m mean maximum"
    ax.set_title(f"{head} {val:.3g} of {lim:g} (ratio {val / lim:.2f}): {v}", fontsize=9, loc="left",
                 color="tab:red" if v == EXCEEDED else "tab:green")


def running_safety_figure(ds: xr.Dataset, out_dir: str | Path, *, x: str = "distance", t_max: float | None = None,
                          **_opts) -> list:
    """One figure per detailed vehicle (see the module docstring).  ``x``: ``"distance"`` (default: the track
    position of the leading wheelset) or ``"time"``.  Raises ``ValueError`` for another ``x``."""
    if x not in ("distance", "time"):
        raise ValueError(f"x must be 'time' or 'distance', got {x!r}")
    if t_max is not None and "time" in ds.dims:
        ds = ds.sel(time=slice(None, float(t_max)))
    cfg = config_of(ds)
    en = en14363_settings(ds)
    sections = route(ds)
    files = []
    missing = [n for n in ("distance", "wheel_load", "lateral_force", "wheel_unloading", "front_coupler_force",
                           "rear_coupler_force", "lateral_displacement") if n not in ds]
    for d, vlabel in enumerate(ds["detailed_vehicle"].values):
        sub = ds.isel(detailed_vehicle=d)
        means = two_metre_means(sub, en)
        along = x == "distance" and "distance" in sub
        t = np.asarray(sub["time"].values, float)
        dist = np.asarray(sub["distance"].values, float) if "distance" in sub else None
        xs = dist if along else t
        xlabel = "track position of the leading wheelset [m]" if along else "simulated time [s]"

        def to_x(pos):   # track positions (2 m window centres) on the horizontal axis
            if along:
                return pos
            ok = np.isfinite(dist)
            return np.interp(pos, dist[ok], t[ok]) if dist is not None else pos * np.nan

        panels = []
        if any(n in sub for n in ("front_coupler_force", "rear_coupler_force", "coupler_lateral_force")):
            panels.append("forces")
        panels += ["y_over_q"] + [n for n in ("wheel_unloading", "sum_y") if n in sub]
        if "lateral_displacement" in sub and "body" in sub.dims:
            panels.append("lateral")
        if sections and dist is not None:
            panels.append("route")
        heights = [1.0 if p != "route" else 0.55 for p in panels]
        fig, axes = new_figure(len(panels), 1, figsize=(11, 2.35 * sum(heights) + 1.2), sharex=True, squeeze=False,
                               gridspec_kw={"height_ratios": heights})
        axes = dict(zip(panels, axes[:, 0]))
        if "forces" in axes:
            ax = axes["forces"]
            for n, text, kw in (("front_coupler_force", "front coupler", {}), ("rear_coupler_force", "rear coupler", {}),
                                ("coupler_lateral_force", "lateral force on the car body (+ left)", {"color": "k"})):
                if n in sub:
                    ax.plot(xs, to_display(sub[n].values, sub[n].attrs), lw=1.1, label=text, **kw)
            ax.axhline(0, color="0.5", lw=0.6)
            f = np.stack([to_display(sub[n].values, sub[n].attrs) for n in ("front_coupler_force",
                          "rear_coupler_force") if n in sub], axis=1) if "front_coupler_force" in sub else None
            if f is not None and np.isfinite(f).any() and np.nanmin(f) < 0:
                mark_max(ax, xs, f, lambda k, e: f"peak buff {-f[k, e]:.0f} kN", key=-f)
            ax.set_ylabel("in-train force [kN]\n(+ draft, − buff)", fontsize=9)
            legend_outside(ax)
        wheels = [str(w) for w in sub["wheel"].values] if "wheel" in sub.dims else []
        styles = wheel_styles(wheels)
        for name, ylab, worst in (("y_over_q", "Y/Q", "max_y_over_q"), ("wheel_unloading", "ΔQ/Q",
                                                                        "max_wheel_unloading")):
            if name not in axes:
                continue
            ax = axes[name]
            lim, lim_text = limit_of(sub, worst, _declared(worst))     # the run's own limit (y_q_limit ...)
            if name in means:
                c, y = to_x(means["s"]), means[name]
                for k, (col, ls) in enumerate(styles):
                    ax.plot(c, y[:, k], ls, color=col, lw=1.0, label=wheels[k])
                ax.set_ylabel(f"{ylab} 2 m mean", fontsize=9)
                mark_max(ax, c, y, lambda k, e: f"max {y[k, e]:.3g} ({wheels[e]}, {means['s'][k]:.0f} m)")
                if lim is not None:
                    limit_line(ax, lim, f"limit {lim:g} ({lim_text})")
            else:
                v = np.asarray(sub[name].transpose("time", "wheel").values, float)
                for k, (col, ls) in enumerate(styles):
                    ax.plot(xs, v[:, k], ls, color=col, lw=0.8, label=wheels[k])
                ax.set_ylabel(f"{ylab} (instantaneous)", fontsize=9)
                if lim is not None:
                    limit_line(ax, lim, f"limit {lim:g} of the 2 m mean ({lim_text})")
            _verdict_title(ax, sub, worst, lim)
            legend_outside(ax, ncol=1)
        if "sum_y" in axes:
            ax = axes["sum_y"]
            lims = to_display(sub["sum_y_limit"].values, sub["sum_y_limit"].attrs) if "sum_y_limit" in sub else None
            lim_text = "Prud'homme limit α (10 kN + P0/3), EN 14363"
            ws = [str(w) for w in sub["wheelset"].values]
            cols = level_colours(len(ws))
            if "sum_y" in means:
                c, y = to_x(means["s"]), to_display(means["sum_y"], sub["sum_y"].attrs)
                ax.set_ylabel("ΣY 2 m mean [kN]\n(+ left)", fontsize=9)
                mark_max(ax, c, y, lambda k, e: f"max |ΣY| {abs(y[k, e]):.3g} kN ({ws[e]})", key=np.abs(y))
            else:
                c, y = xs, to_display(sub["sum_y"].transpose("time", "wheelset").values, sub["sum_y"].attrs)
                ax.set_ylabel("ΣY [kN] (+ left,\ninstantaneous)", fontsize=9)
            for k, w in enumerate(ws):
                ax.plot(c, y[:, k], color=cols[k], lw=1.0, label=w)
            if lims is not None:
                lims = np.atleast_1d(lims)
                if np.allclose(lims, lims[0], rtol=1e-3):
                    for sign in (1, -1):
                        limit_line(ax, sign * float(lims[0]), f"{'+' if sign > 0 else '−'}{lims[0]:.3g} kN "
                                   f"({lim_text})" if sign > 0 else f"−{lims[0]:.3g} kN")
                else:
                    for k, w in enumerate(ws):
                        for sign in (1, -1):
                            limit_line(ax, sign * float(lims[k]), f"{w} {sign * lims[k]:+.3g} kN", color=cols[k],
                                       ls=":")
            _verdict_title(ax, sub, "sum_y_ratio", 1.0, "|ΣY| / Prud'homme limit")
            legend_outside(ax)
        if "lateral" in axes:
            ax = axes["lateral"]
            kinds_ = [str(k) for k in sub["body_kind"].values] if "body_kind" in sub.coords else []
            da = sub["lateral_displacement"]
            for b, name in enumerate(sub["body"].values):
                if kinds_ and kinds_[b] != "wheelset":
                    continue
                ax.plot(xs, to_display(da.isel(body=b).values, da.attrs), lw=0.9, label=str(name))
            ax.set_ylabel(label(dict(da.attrs, long_name="wheelset lateral\ndisplacement"), ""), fontsize=9)
            legend_outside(ax)
        if "route" in axes:
            route_panel(axes["route"], sections, dist, xs, where="under the leading wheelset")
        spans = curve_spans(sections)
        for p, ax in axes.items():
            if p != "route" and dist is not None:
                shade_curves(ax, spans, None if along else (lambda s_: float(to_x(np.array([s_]))[0])))
            ax.grid(alpha=0.3)
        list(axes.values())[-1].set_xlabel(xlabel)
        pos = int(sub["detailed_position"]) if "detailed_position" in sub.coords else vlabel
        how = ("EN 14363 2 m sliding means (forces low-passed at "
               f"{float(en.get('lowpass_hz', 20.0)):g} Hz) against their limits" if means else
               "instantaneous values (this dataset has no track position: no 2 m means)")
        shaded = "; curves shaded" if dist is not None and curve_spans(sections) else ""
        name = ds.attrs.get("scenario_name", "")
        suptitle(fig, f"{name + ': ' if name else ''}running safety of the detailed vehicle at position {pos} under "
                      f"in-train forces — {how}{shaded}", fontsize=10)
        files.append(finish(fig, out_dir, f"running_safety_{vlabel}"))
    if missing:
        note(f"running_safety: drawn without {', '.join(missing)} (not kept in this dataset): add them to "
             "outputs.series.variables of the sweep (or run the scenario: hpcrail run) for "
             + ("the track position, the 2 m means against their limits and the route" if "distance" in missing
                else "the full figure"))
    return files


def has_study(ds: xr.Dataset) -> bool:
    return "worst_y_over_q" in ds and "peak_buff_force_at_detailed" in ds and "scenario" in ds.dims


def running_safety_vs_buff(ds: xr.Dataset, out_dir: str | Path, **_opts) -> list:
    """Worst (Y/Q) 2 m, ΔQ/Q 2 m and ΣY/limit per completed scenario against the peak buff force at the
    detailed vehicle [kN], the EN 14363 limits drawn and labelled; the swept parameters shown by their values
    (:func:`~hpcrail.results.plotting.encode_parameters`: colour = the parameter with most levels, marker = the
    next, one row of panels per level of a third), points of equal marker joined in the colour parameter's order
    (how the metric moves as that parameter grows)."""
    status = np.asarray([str(v) for v in np.asarray(ds["status"].values).tolist()])
    ok = np.isin(status, ("completed", "event_stop"))
    if "done" in ds:
        ok &= np.asarray(ds["done"].values).astype(bool)
    enc = encode_parameters(ds, parameter_names(ds), ok)
    cfg = config_of(ds)
    xa = ds["peak_buff_force_at_detailed"].attrs
    x_all = to_display(ds["peak_buff_force_at_detailed"].values, xa)
    metrics = [n for n in ("worst_y_over_q", "worst_wheel_unloading", "worst_sum_y_ratio") if n in ds]
    rows = enc.levels[enc.facet] if enc.facet else [None]
    fig, axes = new_figure(len(rows), len(metrics), figsize=(4.4 * len(metrics) + 2.6, 3.7 * len(rows) + 1.0),
                           squeeze=False, sharex=True)
    cvals = values_of(ds, enc.colour) if enc.colour else None
    mvals = values_of(ds, enc.marker) if enc.marker else None
    fvals = values_of(ds, enc.facet) if enc.facet else None
    for r, flevel in enumerate(rows):
        in_row = ok & (fvals == flevel) if enc.facet else ok
        for c, name in enumerate(metrics):
            ax = axes[r, c]
            a = ds[name].attrs
            y_all = to_display(ds[name].values, a)
            groups = enc.levels[enc.marker] if enc.marker else [None]
            for mlevel in groups:
                sel = in_row & (mvals == mlevel) if enc.marker else in_row
                idx = np.flatnonzero(sel)
                if not idx.size:
                    continue
                if enc.colour is not None:
                    order = idx[np.argsort([enc.levels[enc.colour].index(v) for v in cvals[idx]], kind="stable")]
                    if len(order) > 1 and not enc.pooled:
                        ax.plot(x_all[order], y_all[order], "-", color="0.6", lw=0.7, zorder=1)
                for i in idx:
                    ax.scatter([x_all[i]], [y_all[i]], s=38, marker=enc.marker_of(mvals[i]) if enc.marker else "o",
                               color=enc.colour_of(cvals[i]) if enc.colour else "C0", edgecolor="k", lw=0.5,
                               zorder=3)
            lim, lim_text = limit_of(ds, name, _declared(name))
            parts, colour = [], "k"
            if enc.facet:
                parts.append(f"{ds[enc.facet].attrs.get('long_name', enc.facet)} = {level_text(ds, enc.facet, flevel)}")
            if lim is not None:      # the verdicts of the row's scenarios (hpcrail.results.verdicts: value > limit)
                limit_line(ax, lim, f"limit {lim:g}" + (f" ({lim_text})" if lim_text else ""))
                y_row = y_all[in_row]
                n_ex = int(np.sum(y_row > lim))
                parts.append(f"{n_ex} of {y_row.size} scenarios EXCEEDED" if n_ex else f"all {y_row.size} PASS")
                colour = "tab:red" if n_ex else "tab:green"
            if parts:
                axes_title(ax, ": ".join(parts), fontsize=8, loc="left", color=colour)
            ax.set_ylabel(label(a, name), fontsize=8)
            ax.xaxis.set_major_locator(MaxNLocator(nbins=5))
            ax.grid(alpha=0.3)
        for c in range(len(metrics)):
            if r == len(rows) - 1:
                axes[r, c].set_xlabel(label(xa, "peak_buff_force_at_detailed"), fontsize=8)
    handles, labels = enc.legend(ds)
    if handles:
        legend_outside(axes[0, -1], handles, labels, fontsize=8)
    pooled = f"; pooled over {', '.join(ds[p].attrs.get('long_name', p) for p in enc.pooled)}" if enc.pooled else ""
    suptitle(fig, f"Running safety of the detailed vehicle against the peak buff (compressive) force at it: "
                  f"{int(ok.sum())} completed of {ok.size} scenarios (EN 14363 2 m means, limits dashed){pooled}")
    return [finish(fig, out_dir, "running_safety_vs_buff")]


__all__ = ["running_safety_figure", "running_safety_vs_buff", "has_series", "has_study", "two_metre_means", "route"]
