"""Sweep report: figures that read like a study, from the declarations every variable carries (``long_name``,
units, display units, ``role``) and the swept parameters' own labels and units — for any model kind.

:func:`write_report` writes into a directory

* ``metric_<name>.png`` per headline metric (role ``metric``, floating point) that varies over the completed
  scenarios (a metric constant to 1 ppm is numerical noise and is listed as such instead):

  - grid designs: the metric against each parameter, one line per level of a second parameter (the other
    parameters at their middle level); a heatmap over the two parameters when the second has more than
    :data:`MAX_LINES` levels — interactions stay visible, nothing is averaged away;
  - sampled designs (random, lhs, sobol, saltelli) and zip: the scenarios against each parameter,
    coloured by a second parameter;

* ``positions.png``: metrics numbering an element (integer metrics such as the coupler of the peak draft
  force) as histograms over the completed scenarios;
* ``envelopes.png``: the stored per-element envelopes (role ``envelope``) along the elements, median and
  bands (10-90 % and min-max) across the completed scenarios;
* ``sobol_indices.png`` (design ``saltelli``): first-order and total Sobol' indices with their bootstrap
  confidence intervals, per metric (SALib; :mod:`hpcrail.analysis.sensitivity`);
* the figures the store's model kind declares for studies (``report_figures`` of its descriptor, e.g. the
  mixed train's running safety against the peak buff force);
* ``failures.png``: the status of every scenario over the parameters, on the parameters' own scales — only
  when a scenario failed or is pending.

``hpcrail report STUDY.zarr`` calls it and prints the summary table
(:meth:`hpcrail.analysis.accessor.HpcrailAccessor.summary`) and the Sobol' indices.
"""
from __future__ import annotations

import dataclasses
import itertools
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from hpcrail.analysis.accessor import SUCCESS, as_strings
from hpcrail.results.plotting import axes_title, current_save_options, figure_processes, finish, integer_ticks, \
    is_integer_valued, is_logarithmic, legend_outside, level_colours, limit_in_view, limit_line, limit_of, new_figure, \
    save_options, suptitle
from hpcrail.results.units import clip_magnitude, display_units, label, pretty_units, to_display

#: lines per level of a second parameter at most; more levels give a heatmap
MAX_LINES = 12
#: at most this many parameter pairs in the failure map
MAX_PAIRS = 6
#: a metric whose spread over the completed scenarios is below this fraction of its magnitude is noise
NOISE = 1e-6
LOG_SOURCES = ("logspace", "loguniform", "lognormal")


@dataclasses.dataclass
class Report:
    """What :func:`write_report` made: ``files`` (figure paths, or the figures themselves), ``skipped`` (metric -> why it has no figure),
    ``sobol`` (Sobol' indices of a saltelli design, else None)."""

    files: list
    skipped: dict
    sobol: pd.DataFrame | None = None
    makeup_ranking: pd.DataFrame | None = None
    makeup_sensitivity: pd.DataFrame | None = None


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def _param_values(ds, p) -> tuple[np.ndarray, list | None]:
    """Positions of a parameter's values on its axis (its own numbers; strings as categories) and the
    category labels (None for numbers)."""
    v = np.asarray(ds[p].values)
    if v.dtype.kind in "biuf":
        return v.astype(float), None
    s = as_strings(v)
    cats = sorted(set(s.tolist()))
    pos = {c: i for i, c in enumerate(cats)}
    return np.array([pos[c] for c in s], float), cats


def _param_axis(ax, ds, p, which: str = "x", cats=None, values=None) -> None:
    """Label the axis of parameter ``p`` with its name and unit; categories as ticks; a log scale for
    logarithmic levels (logspace/loguniform/lognormal, or a geometric progression); whole-number ticks for an
    integer parameter."""
    a = ds[p].attrs
    text = label(a, p)
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xlabel if which == "x" else ax.set_ylabel)(text)
    if cats is not None:
        if which == "x":
            ax.set_xticks(range(len(cats)), cats, rotation=30, ha="right", fontsize=8)
        else:
            ax.set_yticks(range(len(cats)), cats, fontsize=8)
        return
    if values is None:
        return
    vals = np.asarray(values, float)
    vals = vals[np.isfinite(vals)]
    if is_logarithmic(vals, a):
        (ax.set_xscale if which == "x" else ax.set_yscale)("log")
        levels = np.unique(vals)
        if levels.size <= 8:      # the levels themselves as ticks (0.25, 0.5, 1, 2), not only the decades
            from matplotlib.ticker import FixedLocator, NullLocator

            axis.set_major_locator(FixedLocator(levels))
            axis.set_minor_locator(NullLocator())
            axis.set_major_formatter(lambda v, _pos: f"{v:g}")
    elif is_integer_valued(np.asarray(ds[p].values)):
        integer_ticks(ax, which)


def _level_text(ds, p, value) -> str:
    if isinstance(value, (float, np.floating)):
        value = f"{float(value):.4g}"
    return f"{value} {pretty_units(ds[p].attrs.get('units', ''))}".strip()


def is_noise(y: np.ndarray) -> bool:
    """True when the finite values are all NaN or constant to :data:`NOISE` of their magnitude."""
    f = y[np.isfinite(y)]
    if f.size == 0:
        return True
    return float(np.ptp(f)) <= NOISE * max(float(np.max(np.abs(f))), 1e-300)


def plottable_metrics(ds, metrics, ok) -> tuple[list, list, dict]:
    """``(float metrics to plot, integer metrics, skipped -> reason)``."""
    floats, ints, skipped = [], [], {}
    for m in metrics:
        v = np.asarray(ds[m].values)
        if v.dtype.kind in "iu":
            vals = np.unique(v[ok])
            if vals.size == 1:
                skipped[m] = f"the same in every completed scenario ({int(vals[0])})"
            elif vals.size > 1:
                ints.append(m)
            continue
        y = to_display(v, ds[m].attrs)[ok]
        if not np.isfinite(y).any():
            skipped[m] = "no finite value in the completed scenarios"
        elif is_noise(y):
            f = y[np.isfinite(y)]
            u = pretty_units(display_units(ds[m].attrs))
            skipped[m] = f"constant over the completed scenarios ({clip_magnitude(float(np.median(f))):.4g}" \
                         f"{' ' + u if u else ''})"
        else:
            floats.append(m)
    return floats, ints, skipped


def _suptitle(fig, ds, m, n_ok, n) -> None:
    a = ds[m].attrs
    suptitle(fig, f"{a.get('long_name', m)} ({m}): {n_ok} completed of {n} scenarios\n{a.get('description', '')}",
             fontsize=9)


def declared_attrs(ds, name: str) -> dict:
    """The attributes the store's model kind declares for output ``name`` (limits of stores written before
    limits were declared); {} when the kind or the output is unknown."""
    from hpcrail import kinds

    for kname in str(ds.attrs.get("model", "")).split(","):
        try:
            return kinds.get(kname.strip()).output(name).attrs()
        except (KeyError, TypeError):
            continue
    return {}


def _draw_limit(ax, ds, m, shown) -> None:
    """The metric's limit (if it declares one) as a labelled line: on the data's scale when the data reach
    a quarter of it, else a note at the edge saying where it is."""
    lim, text = limit_of(ds, m, declared_attrs(ds, m))
    if lim is None:
        return
    words = f"limit {lim:g}" + (f" ({text})" if text else "")
    limit_line(ax, lim, words, show=limit_in_view(shown, lim))


# ------------------------------------------------------------------------------------------------
# metric figures
# ------------------------------------------------------------------------------------------------
def _grid_metric(ds, m, params, ok, path_dir):
    """Grid design: per parameter, lines per level of the next parameter (others at their middle level),
    or a heatmap over the two when the next has more than MAX_LINES levels."""
    g = ds[[m] + params].copy()
    g[m] = g[m].where(xr.DataArray(ok, dims="scenario"))
    grid = g.hpcrail.grid()[m]
    a = ds[m].attrs
    y = to_display(grid.values, a)
    grid = grid.copy(data=y)
    n = len(params)
    ncol = min(n, 3)
    nrow = int(np.ceil(n / ncol))
    fig, axes = new_figure(nrow, ncol, figsize=(4.6 * ncol + 0.6, 3.7 * nrow + 0.7), squeeze=False)
    for ax, (i, px) in zip(axes.flat, enumerate(params)):
        xs = np.asarray(grid[px].values)
        xnum = xs.dtype.kind in "biuf"
        xpos = xs.astype(float) if xnum else np.arange(len(xs), dtype=float)
        if n == 1:
            ax.plot(xpos, grid.values, "-o", ms=3, lw=1.2, color="C0")
            _draw_limit(ax, ds, m, grid.values)
            title = ""
        else:
            pc = params[(i + 1) % n]
            others = {p: grid.sizes[p] // 2 for p in params if p not in (px, pc)}
            sub = grid.isel(others).transpose(px, pc)
            title = "; ".join(f"{ds[p].attrs.get('long_name', p)} = {_level_text(ds, p, grid[p].values[k])}"
                              for p, k in others.items())
            levels = np.asarray(sub[pc].values)
            if len(levels) > MAX_LINES:
                cnum = levels.dtype.kind in "biuf"
                cpos = levels.astype(float) if cnum else np.arange(len(levels), dtype=float)
                im = ax.pcolormesh(xpos, cpos, sub.values.T, shading="nearest", cmap="viridis")
                cb = fig.colorbar(im, ax=ax, pad=0.01)
                cb.set_label(label(a, m), fontsize=8)
                _param_axis(ax, ds, pc, "y", None if cnum else [str(v) for v in levels], cpos)
            else:
                colours = level_colours(len(levels))
                for k, lv in enumerate(levels):
                    if not np.isfinite(sub.values[:, k]).any():   # a level where no scenario completed
                        continue
                    color = colours[k]
                    ax.plot(xpos, sub.values[:, k], "-o", ms=2.5, lw=1.1, color=color,
                            label=_level_text(ds, pc, lv))
                legend_outside(ax, title=label(ds[pc].attrs, pc), ncol=2 if len(levels) > 12 else 1)
                ax.set_ylabel(label(a, m))
                _draw_limit(ax, ds, m, sub.values)
        _param_axis(ax, ds, px, "x", None if xnum else [str(v) for v in xs], xpos)
        if n == 1:
            ax.set_ylabel(label(a, m))
        if title:
            axes_title(ax, f"at {title}", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    _suptitle(fig, ds, m, int(ok.sum()), ok.size)
    return finish(fig, path_dir, f"metric_{m}")


def _scatter_metric(ds, m, params, ok, path_dir):
    """Sampled (and zip) designs: every completed scenario against each parameter, coloured by the next."""
    a = ds[m].attrs
    y = to_display(ds[m].values, a)
    n = len(params)
    ncol = min(n, 3)
    nrow = int(np.ceil(n / ncol))
    fig, axes = new_figure(nrow, ncol, figsize=(4.6 * ncol + 0.8, 3.7 * nrow + 0.7), squeeze=False)
    vals = {p: _param_values(ds, p) for p in params}
    for ax, (i, px) in zip(axes.flat, enumerate(params)):
        x, cats = vals[px]
        if n > 1:
            pc = params[(i + 1) % n]
            c, ccats = vals[pc]
            norm = None
            if ccats is None and is_logarithmic(c[ok], ds[pc].attrs):
                from matplotlib.colors import LogNorm

                norm = LogNorm()
            sc = ax.scatter(x[ok], y[ok], c=c[ok], s=9, lw=0, alpha=0.85, cmap="viridis", norm=norm)
            cb = fig.colorbar(sc, ax=ax, pad=0.01)
            cb.set_label(label(ds[pc].attrs, pc), fontsize=8)
            if ccats is not None:
                cb.set_ticks(range(len(ccats)), labels=ccats)
            elif norm is None and is_integer_valued(np.asarray(ds[pc].values)):
                from matplotlib.ticker import MaxNLocator

                cb.locator = MaxNLocator(integer=True)     # a count (empties next to locomotives): 0 1 2, not 0.5
                cb.update_ticks()
        else:
            ax.scatter(x[ok], y[ok], s=9, lw=0, alpha=0.85, color="C0")
        _param_axis(ax, ds, px, "x", cats, x[ok])
        ax.set_ylabel(label(a, m))
        _draw_limit(ax, ds, m, y[ok])
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    _suptitle(fig, ds, m, int(ok.sum()), ok.size)
    return finish(fig, path_dir, f"metric_{m}")


#: ``jobs=None`` draws the metric figures in helper processes only from this many panels on (colour bars count)
AUTO_MIN_PANELS = 80


def _metric_figure_job(grid: bool, ds, m, params, ok, path_dir, fmt: str, dpi: float):
    """One metric's figure in a worker process of :func:`metric_figures` (format and dpi passed along: the
    caller's :func:`save_options` block does not reach another process)."""
    with save_options(fmt, dpi):
        return (_grid_metric if grid else _scatter_metric)(ds, m, params, ok, path_dir)


def metric_figures(ds, metrics, params, ok, path_dir, *, grid: bool, jobs: int | None = 1,
                   progress=None) -> list:
    """The figure of each metric of ``metrics`` against the swept ``params`` (``ok`` bool[scenario]: the completed
    scenarios; ``grid``: the design is a full grid): paths in ``metrics`` order, or the figures when ``path_dir``
    is None.  A figure costs per axes (a parameter panel and its colour bar), not per scenario — about 2-4 s for
    nine parameters on one core — so with more than one figure to write they are drawn by ``jobs`` processes
    (None: the cores this process may use, at most 8, when there are at least :data:`AUTO_MIN_PANELS` panels,
    else 1; 1: this process alone; n: this process and n − 1 helpers, :mod:`multiprocessing` ``spawn``: a script
    calling this needs the ``if __name__ == "__main__":`` guard).  The files are byte for byte those of a serial
    run (Agg renders deterministically).  ``progress``: called with a short text (``"metric figures 3/14"``) as
    each figure is done.  Raises ``ValueError`` for ``jobs`` < 1."""
    make = _grid_metric if grid else _scatter_metric
    n = figure_processes(jobs, len(metrics))
    # a helper costs ~2-3 s to start (imports, its first figure): automatically only for enough panels (a panel
    # with its colour bar ~0.2-0.4 s; measured: 33 line panels gained nothing, 252 scatter panels 11 s of 36)
    if jobs is None and len(metrics) * len(params) * (1 if grid else 2) < AUTO_MIN_PANELS:
        n = 1
    say = progress or (lambda _text: None)
    total = len(metrics)
    if path_dir is None or n <= 1:
        out = []
        for k, m in enumerate(metrics):
            out.append(make(ds, m, params, ok, path_dir))
            say(f"metric figures {k + 1}/{total}")
        return out
    import concurrent.futures as cf
    import multiprocessing as mp

    fmt, dpi = current_save_options()
    out = [None] * total
    done = 0
    # n − 1 helper processes take the figures from the front while this process, already warm, draws from the back
    # (a helper needs ~2 s to import and draw its first figure); spawn, not fork: this process may hold threads
    # (zarr, dask).  Each helper gets only its metric's data.
    with cf.ProcessPoolExecutor(n - 1, mp_context=mp.get_context("spawn")) as ex:
        futures = [ex.submit(_metric_figure_job, grid, ds[[m]], m, params, ok, path_dir, fmt, dpi) for m in metrics]
        for k in range(total - 1, -1, -1):
            if not futures[k].cancel():     # a helper has it (helpers take them in order: so do all before it)
                break
            out[k] = make(ds, metrics[k], params, ok, path_dir)
            done += 1
            say(f"metric figures {done}/{total} ({n} processes)")
        for f in cf.as_completed([f for f in futures if not f.cancelled()]):
            done += 1
            say(f"metric figures {done}/{total} ({n} processes)")
        for k, f in enumerate(futures):
            if out[k] is None:
                out[k] = f.result()
    return out


def _positions_figure(ds, ints, params, ok, path_dir):
    """Integer metrics (element numbers) as histograms over the completed scenarios, stacked by the levels
    of the first parameter when it has at most six."""
    from matplotlib.ticker import MaxNLocator

    n = len(ints)
    ncol = min(n, 2)
    nrow = int(np.ceil(n / ncol))
    fig, axes = new_figure(nrow, ncol, figsize=(5.2 * ncol, 3.6 * nrow + 0.5), squeeze=False)
    p0 = params[0]
    x0, cats0 = _param_values(ds, p0)
    levels = np.unique(x0[ok])
    stack = 1 < levels.size <= 6
    for ax, m in zip(axes.flat, ints):
        v = np.asarray(ds[m].values)[ok]
        lo, hi = (int(v.min()), int(v.max())) if v.size else (0, 1)
        bins = np.arange(lo - 0.5, hi + 1.5, max(1, int(np.ceil((hi - lo + 1) / 60))))
        if stack:
            data = [v[x0[ok] == lv] for lv in levels]
            names = [cats0[int(lv)] if cats0 else _level_text(ds, p0, lv) for lv in levels]
            ax.hist(data, bins=bins, stacked=True, label=names)
            legend_outside(ax, title=label(ds[p0].attrs, p0))
        else:
            ax.hist(v, bins=bins, color="C0")
        ax.set_xlabel(ds[m].attrs.get("long_name", m))
        ax.set_ylabel("scenarios")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3, axis="y")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    suptitle(fig, f"where the extremes occur: {int(ok.sum())} completed scenarios", fontsize=9)
    return finish(fig, path_dir, "positions")


def envelope_variables(ds) -> list[str]:
    """Stored envelopes along one element dimension (role ``envelope``, dims ``(scenario, element)``)."""
    return [n for n, v in ds.data_vars.items() if v.attrs.get("role") == "envelope" and v.ndim == 2
            and v.dims[0] == "scenario" and v.dtype.kind == "f"]


def varying_envelopes(ds, names, ok, skipped: dict) -> list[str]:
    """The envelopes of ``names`` that are not constant over elements and completed scenarios (the others
    go to ``skipped`` with the reason)."""
    out = []
    for n in names:
        z = to_display(ds[n].values[ok], ds[n].attrs)
        if is_noise(z.ravel()):
            f = z[np.isfinite(z)]
            u = pretty_units(display_units(ds[n].attrs))
            skipped[n] = ("no finite value" if not f.size else
                          f"constant along the elements and over the completed scenarios "
                          f"({clip_magnitude(float(f[0])):.4g}{' ' + u if u else ''})")
        else:
            out.append(n)
    return sorted(out, key=lambda n: declared_order(ds).get(n, (1, n)))


def declared_order(ds) -> dict:
    """Output name -> sort key in the declaration order of the store's model kind(s)."""
    from hpcrail import kinds

    order: dict = {}
    for name in str(ds.attrs.get("model", "")).split(","):
        try:
            for i, o in enumerate(kinds.get(name.strip()).outputs):
                order.setdefault(o.name, (0, len(order)))
        except (KeyError, TypeError):
            continue
    return order


def _envelopes_figure(ds, names, ok, path_dir):
    """Each envelope along its elements: median, 10-90 % and min-max bands across the completed scenarios."""
    n = len(names)
    ncol = min(n, 2)
    nrow = int(np.ceil(n / ncol))
    fig, axes = new_figure(nrow, ncol, figsize=(5.6 * ncol, 3.4 * nrow + 0.5), squeeze=False)
    idx = np.flatnonzero(ok)
    for ax, name in zip(axes.flat, names):
        da = ds[name]
        dim = da.dims[1]
        z = to_display(da.isel(scenario=idx).values, da.attrs)
        elems = np.asarray(ds[dim].values) if dim in ds.coords else np.arange(1, z.shape[1] + 1)
        numeric = elems.dtype.kind in "iuf"
        x = elems.astype(float) if numeric else np.arange(len(elems), dtype=float)
        with np.errstate(all="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                q = np.nanpercentile(z, [0, 10, 50, 90, 100], axis=0)
        step = "mid" if numeric else None    # one value per element: steps, not slopes between elements
        ax.fill_between(x, q[0], q[4], color="C0", alpha=0.15, lw=0, label="min-max", step=step)
        ax.fill_between(x, q[1], q[3], color="C0", alpha=0.35, lw=0, label="10-90 %", step=step)
        if numeric:
            ax.step(x, q[2], where="mid", color="C0", lw=1.2, label="median")
        else:
            ax.plot(x, q[2], "o-", color="C0", lw=1.2, ms=3, label="median")
        if not numeric:
            ax.set_xticks(range(len(elems)), [str(e) for e in elems], rotation=30, ha="right", fontsize=7)
        ax.set_xlabel(ds[dim].attrs.get("long_name", dim) if dim in ds.coords else dim)
        ax.set_ylabel(label(da.attrs, name), fontsize=9)
        ax.grid(alpha=0.3)
        legend_outside(ax)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    suptitle(fig, f"envelopes along the elements across {idx.size} completed scenarios", fontsize=9)
    return finish(fig, path_dir, "envelopes")


def _sobol_figure(ds, table: pd.DataFrame, path_dir):
    """Grouped bars of S1 and ST per parameter with their confidence intervals, one panel per metric."""
    metrics = [m for m in dict.fromkeys(table.index.get_level_values(0)) if table.loc[m]["ST"].notna().any()]
    n = len(metrics)
    ncol = min(n, 3)
    nrow = int(np.ceil(n / ncol))
    params = list(dict.fromkeys(table.index.get_level_values(1)))
    fig, axes = new_figure(nrow, ncol, figsize=(1.2 * len(params) * ncol + 2.6 * ncol, 3.3 * nrow + 0.8),
                           squeeze=False)
    xs = np.arange(len(params))
    for ax, m in zip(axes.flat, metrics):
        t = table.loc[m].reindex(params)
        ax.bar(xs - 0.19, t["S1"], 0.38, yerr=t["S1_conf"], capsize=3, color="C0", label="first order S1")
        ax.bar(xs + 0.19, t["ST"], 0.38, yerr=t["ST_conf"], capsize=3, color="C1", label="total ST")
        ax.axhline(0, color="k", lw=0.6)
        ax.set_xticks(xs, [ds[p].attrs.get("long_name", p) if p in ds else p for p in params], rotation=20,
                      ha="right", fontsize=8)
        ax.set_ylabel("Sobol' index")
        ax.set_ylim(min(-0.05, float(np.nanmin(t["S1"] - t["S1_conf"])) - 0.02),
                    max(1.05, float(np.nanmax(t["ST"] + t["ST_conf"])) + 0.02))
        axes_title(ax, ds[m].attrs.get("long_name", m), fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if metrics:
        legend_outside(axes.flat[min(n, ncol) - 1])
    n_used = int(table["samples"].min()) if len(table) else 0
    suptitle(fig, f"Sobol' indices (SALib, Saltelli scheme): {n_used} of {ds.attrs.get('samples')} base samples, "
                  f"95 % bootstrap confidence intervals", fontsize=9)
    return finish(fig, path_dir, "sobol_indices")


def _failure_figure(ds, params, status, done, path_dir, messages=None):
    """Status of every scenario over parameter pairs (one parameter: against its status), own scales, and the
    reasons: the most frequent messages of each failure status (``messages``: one text per scenario)."""
    import collections

    cats = ["completed"] + sorted({s for s in status[done] if s not in SUCCESS}) + (["pending"] if (~done).any() else [])
    from matplotlib import colormaps

    colors = {"completed": "0.75", "pending": "white"}
    palette = iter(colormaps["tab10"].colors)
    for c in cats:
        colors.setdefault(c, next(palette))
    cat = np.where(~done, "pending", np.where(np.isin(status, SUCCESS), "completed", status))
    vals = {p: _param_values(ds, p) for p in params}
    pairs = list(itertools.combinations(params, 2))[:MAX_PAIRS] if len(params) > 1 else [(params[0], None)]
    ncol = min(len(pairs), 3)
    nrow = int(np.ceil(len(pairs) / ncol))
    reasons = []
    if messages is not None:
        for c in cats:
            if c in ("completed", "pending"):
                continue
            for msg, k in collections.Counter(messages[cat == c].tolist()).most_common(3):
                reasons.append((c, k, str(msg)))
    fig, axes = new_figure(nrow, ncol, figsize=(4.6 * ncol + 2.6, 3.8 * nrow + 0.8 + 0.28 * len(reasons)),
                           squeeze=False)
    for ax, (px, py) in zip(axes.flat, pairs):
        x, xl = vals[px]
        if py is None:
            y, yl = np.array([cats.index(c) for c in cat], float), cats
        else:
            y, yl = vals[py]
        # scenarios at the same point of this pair (other parameters differ): one marker per status, its
        # area the share of the point's scenarios with that status
        cells = pd.DataFrame({"x": x, "y": y, "cat": cat})
        share = cells.groupby(["x", "y"])["cat"].value_counts(normalize=True).rename("share").reset_index()
        for c in cats:
            sub_ = share[share["cat"] == c]
            if len(sub_):
                ax.scatter(sub_["x"], sub_["y"], s=(8 if c == "completed" else 40) * np.sqrt(sub_["share"]),
                           color=colors[c], edgecolors="k" if c == "pending" else "none", lw=0.4,
                           label=f"{c} ({int((cat == c).sum())})", alpha=0.9, zorder=3 if c == "completed" else 2)
        _param_axis(ax, ds, px, "x", xl, x)
        if py is None:
            ax.set_yticks(range(len(yl)), yl)
            ax.set_ylabel("status")
        else:
            _param_axis(ax, ds, py, "y", yl, y)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(pairs):]:
        ax.set_visible(False)
    legend_outside(axes.flat[len(pairs) - 1], title="status (scenarios)")
    n_fail = int((done & ~np.isin(status, SUCCESS)).sum())
    suptitle(fig, f"failure map: {n_fail} failed, {int((~done).sum())} pending of {status.size} scenarios "
                  "(marker area: share of the scenarios at that point)", fontsize=10)
    if reasons:
        lines = [f"{c} ({k}×): {msg}" for c, k, msg in reasons]
        width = int(fig.get_figwidth() * 72 / (0.55 * 7.5))
        text = "\n".join(textwrap.shorten(t, width, placeholder=" …") for t in lines)
        fig.supxlabel("why: " + text.replace("\n", "\n       ") if len(lines) == 1 else "why:\n" + text,
                      fontsize=7.5, ha="left", x=0.01, multialignment="left")
    return finish(fig, path_dir, "failures")


# ------------------------------------------------------------------------------------------------
def kind_report_figures(ds, outdir: Path, skipped: dict) -> list:
    """The report figures the store's model kind(s) declare (``ModelKind.report_figures``) whose ``applies``
    holds; a figure that fails is listed in ``skipped`` with its reason instead of stopping the report."""
    from hpcrail import kinds

    files = []
    for name in str(ds.attrs.get("model", "")).split(","):
        try:
            kind = kinds.get(name.strip())
        except (KeyError, TypeError):
            continue
        for fig in kind.report_figures:
            try:
                if fig.applies is None or fig.applies(ds):
                    files += list(fig.make(ds, outdir))
            except (ValueError, KeyError) as exc:
                skipped[f"figure {fig.name}"] = str(exc)
    return files


def kind_figure_names(ds) -> set:
    """Names of the report figures the store's model kind(s) declare (a kind's ``envelopes`` replaces the
    generic envelope figure: trains draw theirs per connection type with the locomotives marked)."""
    from hpcrail import kinds

    names: set = set()
    for name in str(ds.attrs.get("model", "")).split(","):
        try:
            names |= {f.name for f in kinds.get(name.strip()).report_figures}
        except (KeyError, TypeError):
            continue
    return names


def write_report(ds: xr.Dataset, outdir: str | Path | None, metrics: list[str] | None = None,
                 rank_by: str | None = None, *, format: str = "png", dpi: float | None = None,
                 jobs: int | None = 1, progress=None) -> Report:
    """Write the study's figures into ``outdir`` (see the module docstring) as ``format`` (png, pdf, svg) at
    ``dpi`` and return a :class:`Report` (``outdir=None``: its ``files`` are the matplotlib figures).
    ``metrics``: only these metrics; ``rank_by``: the metric a make-up study is ranked by (default its spec's);
    ``jobs``: processes drawing the metric figures (default 1: this process; None: as ``hpcrail report``, helper
    processes when there are enough panels; :func:`metric_figures`); ``progress``: called with a short text as
    the figures are drawn (the CLI shows it on the terminal).  Raises ``ValueError`` for a dataset without swept
    parameters (a single run: see ``hpcrail plot``), an unknown format or ``jobs`` < 1."""
    figure_processes(jobs, 1)      # a bad jobs fails before any work
    with save_options(format, dpi):
        return _write_report(ds, outdir, metrics, rank_by, jobs, progress or (lambda _text: None))


def _write_report(ds: xr.Dataset, outdir: str | Path | None, metrics: list[str] | None, rank_by: str | None,
                  jobs: int | None, say) -> Report:
    ds = ds.hpcrail._flat()
    params = ds.hpcrail.parameters
    if not params:
        raise ValueError("not a sweep store: no swept parameter coordinates (a single run: hpcrail plot)")
    # a make-up study's code (one string per scenario) is a label, not an axis: its features are the axes
    params = [p for p in params if not (ds[p].attrs.get("sweep_source") == "makeup" and ds[p].dtype.kind in "OUS")]
    metrics = [m for m in (metrics or ds.hpcrail.metrics) if m in ds and ds[m].dims == ("scenario",)]
    envs = envelope_variables(ds)
    keep = list(dict.fromkeys(metrics + envs + ["status", "done"]))
    sub = ds[keep].load()
    status = as_strings(sub["status"])
    done = np.asarray(sub["done"].values).astype(bool) if "done" in sub else np.ones(status.size, bool)
    ok = done & np.isin(status, SUCCESS)
    if outdir is not None:     # None: the figures themselves (a notebook shows them; tests inspect them)
        outdir = Path(outdir)
        outdir.mkdir(parents=True, exist_ok=True)
    floats, ints, skipped = plottable_metrics(sub, metrics, ok)
    files = []
    grid = sub.hpcrail.is_grid() and ok.any()
    files += metric_figures(sub, floats, params, ok, outdir, grid=grid, jobs=jobs, progress=say)
    say("the other figures")
    if ints and ok.any():
        files.append(_positions_figure(sub, ints, params, ok, outdir))
    envs = varying_envelopes(sub, envs, ok, skipped) if ok.any() else []
    if envs and "envelopes" not in kind_figure_names(ds):
        files.append(_envelopes_figure(sub, envs, ok, outdir))
    table = None
    if ds.attrs.get("design") == "saltelli" and floats:
        from hpcrail.analysis.sensitivity import sobol_indices

        try:
            table = sobol_indices(sub, floats, params)
        except ValueError as exc:
            skipped["Sobol' indices"] = str(exc)
        else:
            if table["ST"].notna().any():
                files.append(_sobol_figure(sub, table, outdir))
    if (~ok).any():
        msgs = as_strings(ds["message"].values) if "message" in ds else None
        files.append(_failure_figure(sub, params, status, done, outdir, msgs))
    files += kind_report_figures(ds, outdir, skipped)
    rank = sens = None
    from hpcrail.analysis import makeup

    if makeup.is_makeup(ds):
        say("the make-up ranking and pattern sensitivity")
        try:
            rank = makeup.ranking(ds, metric=rank_by)
            files += makeup.makeup_figures(ds, outdir, rank_by)
            sens = makeup.pattern_sensitivity(ds, rank_by)
        except ValueError as exc:
            skipped["make-up ranking"] = str(exc)
    return Report(files=files, skipped=skipped, sobol=table, makeup_ranking=rank, makeup_sensitivity=sens)


__all__ = ["write_report", "metric_figures", "Report", "plottable_metrics", "is_noise", "envelope_variables"]
