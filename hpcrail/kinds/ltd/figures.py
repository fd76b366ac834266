"""Run figures of the train kinds (LTD; the planar train reuses them) and the check of friction
draft-gear runs (Oprea 2018, Figs 3-5).

Every figure function follows the :class:`~hpcrail.kinds.descriptor.Figure` contract
``make(ds, out_dir, **options)`` — PNG paths, or the matplotlib figures with ``out_dir=None`` — with the
shared options of :mod:`hpcrail.results.plotting` (``select={"coupler": [...]}``, ``x="time"|"distance"``,
``t_max``):

* :func:`force_envelope` — ``force_envelope.png``: the in-train force envelope along the train (per-coupler
  maximum draft and maximum buff over every integrator step, kN, against the coupler number), locomotive
  positions marked;
* :func:`force_time` — ``force_time.png``: in-train force against time (or distance) at the couplers of the
  peak draft and peak buff forces and next to each locomotive (or the selected couplers), with the notch,
  the brake command and the head speed below;
* :func:`force_heatmap` — ``force_heatmap.png``: in-train force over time × coupler;
* :func:`coupler_displacements` — ``coupler_displacements.png`` (planar train): slider displacements of both
  ends, knuckle displacement and shank angles of the selected couplers;
* :func:`friction_figures` writes, from a result dataset with dry-friction connections,

  - ``relative_velocity.png`` — connection extension rates v_k − v_{k+1} (Oprea 2018 Fig 3: zero while
    sticking),
  - ``relative_displacement.png`` — connection deflections (Fig 4: constant while sticking, the
    stationary values decreasing from the head to the tail),
  - ``coupler_<k>_force.png`` — in-train force of connection k, its friction and spring-damper parts
    (Fig 5: k = 4; gaps where the friction force changes sign);

:func:`stationary_check` compares the end of a run with the rigid-train solution (every
connection sticks, a = ΣF/ΣM, connection k carries the force needed to accelerate the vehicles
behind it).
"""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.results.plotting import config_of, finish, heatmap, integer_ticks, legend_outside, new_figure, \
    pick_elements, route_panel, series_lines, suptitle, time_window, title, x_axis
from hpcrail.results.units import display_units, label, pretty_units, to_display

#: at most this many couplers in the force-time figure by default
MAX_COUPLERS = 8


def locomotives(ds: xr.Dataset) -> list[int]:
    """Vehicle numbers (1 = head) of the locomotives: the ``vehicle_kind`` coordinate; else (stores written
    before it existed, sweep stores without a vehicle dimension) the consist and vehicle types of the stored
    configuration (``config_yaml``, a sweep's ``base_config_yaml``); [] when neither says."""
    if "vehicle_kind" in ds.coords and "vehicle" in ds.coords:
        kinds_ = np.asarray(ds["vehicle_kind"].values).astype(str)
        return [int(v) for v, k in zip(ds["vehicle"].values, kinds_) if k == "locomotive"]
    cfg = config_of(ds)
    table = cfg.get("vehicle_types") or cfg.get("car_types") or {}
    try:
        names = [e["type"] for e in cfg.get("consist") or [] for _ in range(int(e.get("count", 1)))]
    except (TypeError, KeyError, ValueError):
        return []
    return [i + 1 for i, n in enumerate(names) if isinstance(table.get(n), dict) and table[n].get("kind") ==
            "locomotive"]


def detailed_positions(ds: xr.Dataset) -> list[int]:
    """Consist positions of a mixed train's detailed vehicles (the ``detailed_position`` coordinate, else the
    stored configuration's ``detailed`` list); [] for other trains."""
    if "detailed_position" in ds.coords:
        return [int(v) for v in np.asarray(ds["detailed_position"].values).ravel()]
    cfg = config_of(ds)
    return [int(d["position"]) for d in cfg.get("detailed") or [] if isinstance(d, dict) and "position" in d]


def _mark_locomotives(ax, ds, axis: str = "x", offset: float = -0.5) -> None:
    """Dashed lines at the locomotives' positions on a coupler axis (vehicle v sits between couplers v-1
    and v, i.e. at v - 0.5), labelled once; dotted purple lines at the detailed vehicles of a mixed train."""
    for i, v in enumerate(locomotives(ds)):
        kw = dict(color="0.35", lw=0.8, ls="--", zorder=0, label="locomotive" if i == 0 else None)
        (ax.axvline if axis == "x" else ax.axhline)(v + offset, **kw)
    for i, v in enumerate(detailed_positions(ds)):
        kw = dict(color="tab:purple", lw=1.2, ls=":", zorder=0, label="detailed vehicle" if i == 0 else None)
        (ax.axvline if axis == "x" else ax.axhline)(v + offset, **kw)


def connection_groups(ds: xr.Dataset) -> list[tuple[str, np.ndarray]]:
    """``[(connection type, bool mask over couplers), ...]`` from the ``connection_type`` coordinate (one group
    ``("", all)`` without it or with one type), most couplers first: envelopes drawn per group never alternate
    between a slackless drawbar and a draft gear from one coupler to the next."""
    n = ds.sizes.get("coupler", 0)
    if "connection_type" not in ds.coords or n == 0:
        return [("", np.ones(n, bool))]
    names = np.array([str(x) for x in np.asarray(ds["connection_type"].values).ravel()])
    types = sorted(set(names.tolist()), key=lambda t: -(names == t).sum())
    if len(types) < 2:
        return [("", np.ones(n, bool))]
    return [(t, names == t) for t in types]


def _has(*names):
    return lambda ds: all(n in ds for n in names)


def force_envelope(ds: xr.Dataset, out_dir=None, **_opts):
    """In-train force envelope along the train: per-coupler maximum draft (+) and maximum buff (−) force
    over every integrator step [kN] against the coupler number, one line per connection type (a slackless drawbar
    and a draft gear never alternate in one line), locomotives and detailed vehicles marked (see the module
    docstring).  Raises ``ValueError`` without the envelopes ``coupler_max_draft_force`` and
    ``coupler_max_buff_force``."""
    if not ("coupler_max_draft_force" in ds and "coupler_max_buff_force" in ds):
        raise ValueError("the in-train force envelope needs coupler_max_draft_force and coupler_max_buff_force")
    k = np.asarray(ds["coupler"].values)
    da, db = ds["coupler_max_draft_force"], ds["coupler_max_buff_force"]
    draft = to_display(da.values, da.attrs)
    buff = to_display(db.values, db.attrs)
    fig, ax = new_figure(figsize=(11, 4.8))
    ax.fill_between(k, 0, draft, step="mid", color="tab:red", alpha=0.18, lw=0)
    ax.fill_between(k, 0, -buff, step="mid", color="tab:blue", alpha=0.18, lw=0)
    groups = connection_groups(ds)
    for g, (ctype, m) in enumerate(groups):
        style = dict(lw=1.4 if g == 0 else 0.9, ls="-" if g == 0 else (0, (4, 2)), marker=None if m.sum() > 40 else ".")
        suffix = f" ({ctype})" if ctype else ""
        ax.plot(k[m], draft[m], color="tab:red", label=f"max draft{suffix}", **style)
        ax.plot(k[m], -buff[m], color="tab:blue", label=f"max buff{suffix}", **style)
    ax.axhline(0, color="k", lw=0.6)
    _mark_locomotives(ax, ds)
    units = pretty_units(display_units(da.attrs))
    for vals, sign, name in ((draft, 1, "draft"), (buff, -1, "buff")):
        if np.isfinite(vals).any():
            i = int(np.nanargmax(vals))
            ax.annotate(f"peak {name} {vals[i]:,.0f} {units} at coupler {int(k[i])}", (k[i], sign * vals[i]),
                        xytext=(8, 6 * sign), textcoords="offset points", fontsize=8,
                        va="bottom" if sign > 0 else "top")
    ax.margins(y=0.12)
    ax.set_xlabel(ds["coupler"].attrs.get("long_name", "coupler number"))
    ax.set_ylabel(f"in-train force [{units}] (+ draft, − buff)")
    ax.set_xlim(k[0] - 0.5, k[-1] + 0.5)
    integer_ticks(ax, "x")
    ax.grid(alpha=0.3)
    legend_outside(ax, fontsize=8)
    suptitle(fig, title(ds, "in-train force envelope over every integrator step"))
    return [finish(fig, out_dir, "force_envelope")]


def default_couplers(ds: xr.Dataset) -> tuple[list[int], dict]:
    """The couplers of :func:`force_time` by default and their legend texts: the couplers of the peak
    draft and peak buff forces, then the couplers just ahead of and behind each locomotive."""
    out: list[int] = []
    text: dict = {}
    M = ds.sizes.get("coupler", 0)

    def add(k, why):
        k = int(k)
        if 1 <= k <= M:
            if k not in out:
                out.append(k)
                text[k] = f"coupler {k} ({why})"
            elif why not in text[k]:
                text[k] = text[k][:-1] + f", {why})"

    for name, why in (("max_draft_force_coupler", "peak draft"), ("max_buff_force_coupler", "peak buff")):
        if name in ds and np.isfinite(float(ds[name])):
            add(int(ds[name]), why)
    for v in locomotives(ds):
        add(v - 1, f"ahead of loco {v}")
        add(v, f"behind loco {v}")
    return out, text


def force_time(ds: xr.Dataset, out_dir=None, *, select: dict | None = None, x: str = "time",
               t_max: float | None = None, **_opts):
    """In-train force against time (``x="distance"``: the head's position) at the selected couplers
    (``select={"coupler": [...]}``; default :func:`default_couplers`, at most :data:`MAX_COUPLERS`), one
    line per coupler, with the applied and commanded notch, the brake command and the speed of the head
    vehicle in panels below (those the dataset has).  Raises ``ValueError`` without ``coupler_force`` or
    for couplers that do not exist."""
    if "coupler_force" not in ds:
        raise ValueError("force against time needs the series coupler_force")
    sel = time_window(ds, t_max)
    requested = (select or {}).get("coupler")
    default, text = default_couplers(sel)
    ks = pick_elements(sel, "coupler", requested, default, MAX_COUPLERS)
    xv, xl = x_axis(sel, x, element={"vehicle": 1} if "vehicle" in sel.dims else None)
    panels = [p for p in (("notch", "notch_command"), ("brake_command",), ("speed",)) if p[0] in sel]
    sections = route(sel)
    head = np.asarray(sel["position"].sel(vehicle=1).values, float) if "position" in sel and "vehicle" in \
        sel["position"].dims else None
    show_route = bool(sections) and head is not None
    ratios = [3] + [1] * len(panels) + ([0.8] if show_route else [])
    fig, axes = new_figure(len(ratios), 1, figsize=(11, 4.2 + 1.5 * (len(ratios) - 1)), sharex=True,
                           gridspec_kw={"height_ratios": ratios}, squeeze=False)
    axes = axes[:, 0]
    ax = axes[0]
    series_lines(ax, sel, "coupler_force", "coupler", ks, xv, legend=text, lw=1.0)
    _mark_envelope_peaks(ax, ds, sel, ks, xv)
    ax.axhline(0, color="k", lw=0.5)
    ax.set_ylabel(label(sel["coupler_force"].attrs, "coupler_force") + " (+ draft)")
    legend_outside(ax)
    ax.grid(alpha=0.3)
    suptitle(fig, title(ds, "in-train force at the selected couplers" if requested else
                        "in-train force at the peak couplers and next to the locomotives"))
    for axp, names in zip(axes[1:], panels):
        for n, style in zip(names, ("-", "--")):
            if n in sel:
                da = sel[n]
                y = da.sel(vehicle=1).values if "vehicle" in da.dims else da.values
                axp.plot(xv, to_display(y, da.attrs), style, lw=1.0, label=da.attrs.get("long_name", n))
        first = sel[names[0]]
        axp.set_ylabel(label(first.attrs, names[0]) + (" (head)" if "vehicle" in first.dims else ""), fontsize=8)
        if len(names) > 1 and names[1] in sel:
            legend_outside(axp)
        if names[0] == "brake_command":   # a fraction of full service (an emergency shows above 1)
            axp.set_ylim(-0.05, max(1.05, float(np.nanmax(to_display(sel[names[0]].values, sel[names[0]].attrs)))
                                    + 0.05 if np.isfinite(sel[names[0]].values).any() else 1.05))
        if names[0] == "notch":
            integer_ticks(axp, "y")
        axp.grid(alpha=0.3)
    if show_route:
        route_panel(axes[-1], sections, head, xv, where="at the head")
        axes[-1].grid(alpha=0.3)
    axes[-1].set_xlabel(xl)
    return [finish(fig, out_dir, "force_time")]


def _mark_envelope_peaks(ax, ds: xr.Dataset, window: xr.Dataset, ks, xv) -> None:
    """The run's peak draft and buff forces (``max_*_force`` at ``time_of_max_*_force``: the envelope, taken at
    every integrator step) as black markers on the force axes, when their coupler is drawn and the peak lies
    inside the window: a sharp peak falls between the output samples (a run-in's buff peak of 3.52 MN drew
    as 2.1 MN at 0.25 s output).  ``xv``: the horizontal values of ``window``'s samples (time or the head's
    distance, interpolated at the peak time)."""
    attrs = ds["coupler_force"].attrs
    t = np.asarray(window["time"].values, float)
    if t.size < 2:
        return
    for name, sign, marker in (("draft", 1.0, "^"), ("buff", -1.0, "v")):
        names = (f"max_{name}_force", f"max_{name}_force_coupler", f"time_of_max_{name}_force")
        if not all(n in ds and ds[n].ndim == 0 for n in names):
            continue
        force, k, tp = (float(ds[n]) for n in names)
        if not (np.isfinite(force) and force > 0.0 and np.isfinite(tp) and t[0] <= tp <= t[-1]) or int(k) not in ks:
            continue
        f = float(to_display(sign * force, attrs))
        ax.plot([float(np.interp(tp, t, xv))], [f], marker=marker, color="k", ls="none", ms=6, zorder=5,
                label=f"peak {name} {abs(f):,.0f} {display_units(attrs)} at {tp:.2f} s (envelope, coupler {int(k)})")


def route(ds: xr.Dataset) -> list:
    """The route of the stored scenario (``route.sections``: chainage in km, radius, grade) as
    :class:`~hpcrail.results.plotting.RouteSection`; [] without one."""
    from hpcrail.results.plotting import RouteSection

    secs = (config_of(ds).get("route") or {}).get("sections") if isinstance(config_of(ds).get("route"), dict) else None
    out = []
    for r in secs or []:
        try:
            k = 1.0 / float(r["radius_m"]) if r.get("radius_m") else 0.0
            out.append(RouteSection(float(r["start_km"]) * 1e3, float(r["end_km"]) * 1e3, k, k,
                                    float(r.get("grade_permille") or 0.0)))
        except (TypeError, KeyError, ValueError):
            return []
    return out


def force_heatmap(ds: xr.Dataset, out_dir=None, *, x: str = "time", t_max: float | None = None, **_opts):
    """In-train force over time (or distance) × coupler as an image, draft red, buff blue, the
    locomotives' positions marked.  Raises ``ValueError`` without ``coupler_force``."""
    if "coupler_force" not in ds:
        raise ValueError("the force heatmap needs the series coupler_force")
    sel = time_window(ds, t_max)
    xv, xl = x_axis(sel, x, element={"vehicle": 1} if "vehicle" in sel.dims else None)
    fig, ax = new_figure(figsize=(10, 5.2))
    heatmap(ax, sel, "coupler_force", "coupler", xv, xl,
            colorbar_label=label(sel["coupler_force"].attrs, "coupler_force") + " (+ draft, − buff)")
    _mark_locomotives(ax, sel, axis="y")
    legend_outside(ax, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=2)
    suptitle(fig, title(ds, "in-train force over time and coupler"))
    return [finish(fig, out_dir, "force_heatmap")]


def coupler_displacements(ds: xr.Dataset, out_dir=None, *, select: dict | None = None, x: str = "time",
                          t_max: float | None = None, **_opts):
    """Planar couplers: slider displacement of both ends, knuckle displacement and shank angles of the
    selected couplers (default: peak draft and peak buff couplers, at most 4) against time.  Raises
    ``ValueError`` without ``slider_displacement``."""
    if "slider_displacement" not in ds:
        raise ValueError("coupler displacements need the series slider_displacement")
    sel = time_window(ds, t_max)
    default, _text = default_couplers(sel)
    ks = pick_elements(sel, "coupler", (select or {}).get("coupler"), default, 4)
    xv, xl = x_axis(sel, x, element={"vehicle": 1} if "vehicle" in sel.dims else None)
    names = [n for n in ("slider_displacement", "knuckle_displacement", "shank_angle") if n in sel]
    fig, axes = new_figure(len(names), 1, figsize=(10, 2.6 * len(names) + 1), sharex=True, squeeze=False)
    for ax, n in zip(axes[:, 0], names):
        da = sel[n]
        for i, k in enumerate(ks):
            c = f"C{i}"
            if "coupler_end" in da.dims:
                for end, style in zip(np.asarray(sel["coupler_end"].values).astype(str), ("-", "--")):
                    ax.plot(xv, to_display(da.sel(coupler=k, coupler_end=end).values, da.attrs), style, color=c,
                            lw=1.0, label=f"coupler {k}, {end} end")
            else:
                ax.plot(xv, to_display(da.sel(coupler=k).values, da.attrs), color=c, lw=1.0, label=f"coupler {k}")
        ax.set_ylabel(label(da.attrs, n), fontsize=9)
        ax.grid(alpha=0.3)
        legend_outside(ax)
    axes[-1, 0].set_xlabel(xl)
    suptitle(fig, title(ds, "coupler displacements"))
    return [finish(fig, out_dir, "coupler_displacements")]


#: the per-coupler envelopes a study figure draws, in order
COUPLER_ENVELOPE_NAMES = ("coupler_max_draft_force", "coupler_max_buff_force", "coupler_max_draft_deflection",
                          "coupler_max_buff_deflection")


def has_study_envelopes(ds: xr.Dataset) -> bool:
    return "scenario" in ds.dims and any(n in ds and ds[n].dims == ("scenario", "coupler")
                                         for n in COUPLER_ENVELOPE_NAMES)


def study_envelopes(ds: xr.Dataset, out_dir=None, **_opts):
    """Sweep report: each stored per-coupler envelope (peak draft/buff force and deflection) along the train,
    one line per level of the swept parameter that moves the envelopes most (the median over the others;
    every completed scenario within the grey min-max band), one line style per connection type (a drawbar
    within a wagon pair and the draft gears between pairs are never joined into one zigzag), locomotives and
    detailed vehicles marked.  Envelopes constant over the couplers and scenarios are left out (named in the
    title).  Raises ``ValueError`` without completed scenarios or envelopes."""
    from hpcrail.results.plotting import encode_parameters, level_colours, level_text, parameter_label, \
        parameter_names, values_of

    status = np.array([str(v) for v in np.asarray(ds["status"].values).tolist()])
    ok = np.isin(status, ("completed", "event_stop"))
    if "done" in ds:
        ok &= np.asarray(ds["done"].values).astype(bool)
    if not ok.any():
        raise ValueError("no completed scenario: no envelopes to draw")
    names, flat = [], []
    for n in COUPLER_ENVELOPE_NAMES:
        if n in ds and ds[n].dims == ("scenario", "coupler"):
            z = to_display(ds[n].values[ok], ds[n].attrs)
            f = z[np.isfinite(z)]
            (names if f.size and np.ptp(f) > 1e-6 * max(np.abs(f).max(), 1e-300) else flat).append(n)
    if not names:
        raise ValueError(f"every stored envelope is constant ({', '.join(flat)})")
    enc = encode_parameters(ds, parameter_names(ds), ok)
    p = _most_influential(ds, enc.levels, names[0], ok) or enc.colour
    levels = enc.levels.get(p, [None])
    colours = level_colours(len(levels))
    k = np.asarray(ds["coupler"].values)
    groups = connection_groups(ds)
    ncol = 2 if len(names) > 1 else 1
    nrow = int(np.ceil(len(names) / ncol))
    fig, axes = new_figure(nrow, ncol, figsize=(6.2 * ncol + 2.4, 3.4 * nrow + 0.9), squeeze=False)
    pv = values_of(ds, p) if p else None
    styles = ["-", (0, (3, 2)), ":", "-."]
    for ax, n in zip(axes.flat, names):
        da = ds[n]
        z = to_display(da.values, da.attrs)
        for g, (ctype, m) in enumerate(groups):
            ls = styles[g % len(styles)]
            band = z[ok][:, m]
            with np.errstate(all="ignore"):
                import warnings

                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    lo, hi = np.nanmin(band, axis=0), np.nanmax(band, axis=0)
                    ax.fill_between(k[m], lo, hi, color="0.5", alpha=0.18 if g == 0 else 0.1, lw=0)
                    for c, lv in enumerate(levels):
                        rows = ok & (pv == lv) if p else ok
                        if not rows.any():
                            continue
                        med = np.nanmedian(z[rows][:, m], axis=0)
                        ax.plot(k[m], med, ls=ls, color=colours[c], lw=1.3 if g == 0 else 0.9,
                                marker="." if m.sum() <= 40 else None, ms=4)
        _mark_locomotives(ax, ds)
        ax.set_xlim(k[0] - 0.5, k[-1] + 0.5)
        integer_ticks(ax, "x")
        ax.set_xlabel(ds["coupler"].attrs.get("long_name", "coupler number"), fontsize=8)
        ax.set_ylabel(label(da.attrs, n), fontsize=8)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles, labels = [], []
    if p:
        handles.append(Line2D([], [], ls="none"))
        labels.append(parameter_label(ds, p) + (" (median over the others)" if len(enc.levels) > 1 else ""))
        for c, lv in enumerate(levels):
            handles.append(Line2D([], [], color=colours[c], lw=1.5))
            labels.append("  " + level_text(ds, p, lv))
    if len(groups) > 1:
        handles.append(Line2D([], [], ls="none"))
        labels.append("connection type")
        for g, (ctype, m) in enumerate(groups):
            handles.append(Line2D([], [], color="0.2", ls=styles[g % len(styles)], lw=1.2))
            labels.append(f"  {ctype} ({int(m.sum())} couplers)")
    handles.append(Patch(color="0.5", alpha=0.25))
    labels.append("min-max of every scenario")
    h0, l0 = axes.flat[0].get_legend_handles_labels()
    legend_outside(axes[0, -1], handles + h0, labels + l0, fontsize=8)
    left = f"; constant, not drawn: {', '.join(flat)}" if flat else ""
    suptitle(fig, f"Envelopes along the train: {int(ok.sum())} completed of {ok.size} scenarios{left}")
    return [finish(fig, out_dir, "envelopes")]


def _most_influential(ds, levels: dict, name: str, ok) -> str | None:
    """The swept parameter whose levels explain most of the variation of envelope ``name`` over the completed
    scenarios ``ok`` (the variance of the per-level means, summed over the couplers); None without one."""
    z = np.asarray(ds[name].values, float)[ok]
    best, score = None, -1.0
    for p, lv in levels.items():
        v = np.asarray([str(x) for x in np.asarray(ds[p].values)[ok]])
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                means = np.array([np.nanmean(z[v == str(x)], axis=0) for x in lv])
                sc = float(np.nansum(np.nanvar(means, axis=0)))
        if sc > score:
            best, score = p, sc
    return best


has_envelopes = _has("coupler_max_draft_force", "coupler_max_buff_force")
has_coupler_force = _has("coupler_force")
has_slider_displacement = _has("slider_displacement")


def _colours(n):
    from matplotlib import colormaps

    cmap = colormaps["viridis" if n > 10 else "tab10"]
    return [cmap(i / max(n - 1, 1)) if n > 10 else cmap(i) for i in range(n)]


def friction_figures(ds: xr.Dataset, out_dir=None, coupler: int = 4, max_lines: int = 12,
                     t_max: float | None = None, report: bool = False, store_name: str = "", **_opts) -> list:
    """Write the three figures as PNG into ``out_dir``; returns their paths (the figures with
    ``out_dir=None``).

    ``coupler``: 1-based connection for the force figure (Oprea 2018 Fig 5 shows the 4th);
    ``max_lines``: at most this many connections per figure (evenly spread over a long train);
    ``t_max``: end of the time axis [s] (default: the whole run).

    Raises ``ValueError`` if the dataset has no friction variables or ``coupler`` is out of range.
    """
    if "relative_velocity" not in ds:
        raise ValueError("the dataset has no friction draft-gear results (no 'relative_velocity' variable)")
    M = ds.sizes["coupler"]
    if not 1 <= coupler <= M:
        raise ValueError(f"coupler {coupler} out of range 1..{M}")
    sel = time_window(ds, t_max)
    t = sel["time"].values
    ks = np.unique(np.linspace(1, M, min(M, max_lines)).round().astype(int))
    cols = _colours(len(ks))
    name = ds.attrs.get("scenario_name", "")
    treat = ds.attrs.get("friction_treatment", "").replace("_", "-")
    out = []
    for var, ylabel, fname, scale, what in (
            ("relative_velocity", "relative velocity v_k − v_k+1 [m/s]", "relative_velocity", 1.0,
             "relative velocities (Oprea 2018 Fig 3)"),
            ("coupler_deflection", "relative displacement (deflection) [mm]", "relative_displacement", 1e3,
             "relative displacements (Oprea 2018 Fig 4)")):
        fig, ax = new_figure(figsize=(8, 4.5))
        for c, k in zip(cols, ks):
            ax.plot(t, sel[var].sel(coupler=k).values * scale, color=c, lw=1.2, label=f"{k}: vehicles {k}-{k + 1}")
        ax.set_xlabel("simulated time [s]")
        ax.set_ylabel(ylabel)
        suptitle(fig, f"{name}: {what}, {treat}")
        ax.grid(alpha=0.3)
        legend_outside(ax, title="connection", ncol=2 if len(ks) > 12 else 1)
        out.append(finish(fig, out_dir, fname))
    fig, ax = new_figure(figsize=(8, 4.5))
    f = sel["coupler_force"].sel(coupler=coupler).values * 1e-3
    tf = sel["friction_force"].sel(coupler=coupler).values * 1e-3
    ax.plot(t, f, color="k", lw=1.4, label="in-train force (spring + damper + friction)")
    ax.plot(t, f - tf, color="tab:blue", lw=1.0, ls="--", label="spring + damper part")
    ax.plot(t, tf, color="tab:red", lw=1.0, ls=":", label="friction part")
    ax.set_xlabel("simulated time [s]")
    ax.set_ylabel(f"connection {coupler} force [kN] (+ draft)")
    suptitle(fig, f"{name}: force of connection {coupler} (Oprea 2018 Fig 5), {treat}")
    ax.grid(alpha=0.3)
    legend_outside(ax, loc="lower left", bbox_to_anchor=(0.0, 1.01), ncol=3)
    out.append(finish(fig, out_dir, f"coupler_{coupler}_force"))
    if report and out_dir is not None:   # the hpcrail friction-report command
        out.append(friction_report(ds, out_dir, out, store_name or ds.attrs.get("scenario_name", "")))
    return out


def scenario_of(ds: xr.Dataset):
    """The validated scenario stored in a result dataset (``config_yaml`` attribute)."""
    import yaml

    from hpcrail.config import Document
    from hpcrail.kinds import validate_document

    return validate_document(Document(tree=yaml.safe_load(ds.attrs["config_yaml"]), root_file="<dataset>"))


def stationary_check(ds: xr.Dataset) -> dict:
    """Compare the last sample of a run with the rigid-train solution.

    Returns a dict: ``all_stick`` (every friction connection sticks: mode 1, or inside the band for the
    regularised treatment), ``accel`` float64[N] the vehicles' accelerations [m/s²], ``accel_rigid``
    = Σ applied forces / Σ M (traction, resistance, brake and grade forces; effective masses),
    ``force`` float64[N−1] the connection forces [N] and ``force_rigid`` float64[N−1] the forces that
    accelerate the vehicles behind each connection with ``accel_rigid`` — F·(n−k)/n for n equal
    masses pulled by F at the head (Oprea 2018 §5).
    """
    sc = scenario_of(ds)
    vt = [sc.vehicle_types[n] for n in sc.vehicle_type_names()]
    mass = np.array([v.mass_t * 1e3 * (1.0 + v.rotating_mass_fraction) for v in vt])
    last = ds.isel(time=-1)
    applied = (last["tractive_force"] + last["resistance_force"] + last["brake_force"] + last["grade_force"]).values
    a_rigid = applied.sum() / mass.sum()
    # force in connection k = momentum rate of the vehicles behind it minus their applied forces
    behind = np.cumsum((mass * a_rigid - applied)[::-1])[::-1][1:]
    fric = np.array([sc.connection_types[n].kind == "friction" for n in sc.connection_type_names()])
    mode = last["friction_mode"].values
    return {"all_stick": bool(np.all(mode[fric] == 1)), "accel": last["acceleration"].values,
            "accel_rigid": float(a_rigid), "force": last["coupler_force"].values, "force_rigid": behind,
            "mass": mass}


def friction_report(ds: xr.Dataset, out, paths: list, store_name: str = ""):
    """Write ``report.md`` of a friction run into ``out``: stick/slip mode changes, the final stationary phase
    against the rigid train (:func:`stationary_check`), friction work and the figures ``paths``; returns its
    path."""
    from pathlib import Path

    import numpy as np

    M = ds.sizes["coupler"]
    chk = stationary_check(ds)
    lines = [f"# {ds.attrs.get('scenario_name', store_name)}: dry-friction draft gears",
             "", f"treatment: {ds.attrs.get('friction_treatment')}, stick band η = "
             f"{ds.attrs.get('friction_stick_band_mps'):g} m/s, integrator {ds.attrs.get('integrator')}, "
             f"status {ds['status'].values}, {int(ds['nsteps'])} steps, {int(ds['nfev'])} RHS evaluations, "
             f"{int(ds['n_events'])} events, wall {float(ds['wall_time']):.3f} s", ""]
    if "mode_change_time" in ds and ds.sizes.get("mode_change", 0):
        names = {0: "free", 1: "stick", 2: "slip +", -2: "slip -", 3: "break-away +", -3: "break-away -"}
        lines += ["## Mode changes", "", "| t [s] | connection | new mode |", "|---|---|---|"]
        for t, k, mo in zip(ds["mode_change_time"].values, ds["mode_change_coupler"].values,
                            ds["mode_change_mode"].values):
            lines.append(f"| {t:.6f} | {int(k)} | {names.get(int(mo), int(mo))} |")
        lines.append("")
    lines += ["## Final state vs the rigid train", "",
              f"every friction connection sticks: {chk['all_stick']}; acceleration of the vehicles "
              f"{np.min(chk['accel']):.6g}..{np.max(chk['accel']):.6g} m/s², rigid train ΣF/ΣM = "
              f"{chk['accel_rigid']:.6g} m/s²", "",
              "| connection | force [kN] | rigid-train force [kN] | final deflection [mm] | stick phases | "
              "stick time [s] |", "|---|---|---|---|---|---|"]
    for k in range(M):
        lines.append(f"| {k + 1} | {chk['force'][k] / 1e3:.4f} | {chk['force_rigid'][k] / 1e3:.4f} | "
                     f"{float(ds['final_deflection'][k]) * 1e3:.4f} | {float(ds['stick_phases'][k]):.0f} | "
                     f"{float(ds['stick_time'][k]):.3f} |")
    lines += ["", f"friction work {float(ds['friction_work']):.6g} J"]
    if "energy_balance_residual" in ds:
        lines.append(f"; energy balance residual {float(ds['energy_balance_residual']):.3g} J")
    lines += ["", "Figures: " + ", ".join(p.name for p in paths), ""]
    path = Path(out) / "report.md"
    path.write_text("\n".join(lines))
    return path
