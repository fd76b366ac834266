"""Sweep report: PNG plots of every metric (the variables of role ``metric`` its model kind declares)
against every swept parameter, and a failure map.  Labels come from the declarations stored with
each variable (``long_name``, display units).

``hpcrail report STUDY.zarr`` calls :func:`write_report` and prints the summary table of
:meth:`hpcrail.analysis.accessor.HpcrailAccessor.summary`.
"""
from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import numpy as np
import xarray as xr

from hpcrail.analysis.accessor import SUCCESS, as_strings

#: at most this many parameter pairs in the failure map
MAX_PAIRS = 6


def _axis_values(values: np.ndarray):
    """Numeric positions for a parameter (categories for strings) and tick labels (or None)."""
    if values.dtype.kind in "biuf":
        return values.astype(float), None
    labels = sorted(set(values.tolist()))
    pos = {v: i for i, v in enumerate(labels)}
    return np.array([pos[v] for v in values], float), labels


def _label(ds: xr.Dataset, p: str) -> str:
    u = ds[p].attrs.get("units")
    return f"{p} [{u}]" if u else p


def _metric_figure(ds, metric: str, params: list[str], ok: np.ndarray, path: Path) -> Path:
    import matplotlib.pyplot as plt

    a = ds[metric].attrs
    units, long_name = a.get("units", ""), a.get("long_name", metric)
    disp = a.get("display_units", units)
    disp = "" if disp == "1" else disp
    fac = float(a.get("display_scale", 1.0))
    y = np.asarray(ds[metric].values, float) * fac
    n = len(params)
    ncol = min(n, 3)
    nrow = int(np.ceil(n / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False)
    for ax, p in zip(axes.flat, params):
        x, labels = _axis_values(np.asarray(ds[p].values) if ds[p].dtype.kind in "biuf" else as_strings(ds[p]))
        ax.scatter(x[ok], y[ok], s=8, alpha=0.5, lw=0, color="C0", label="scenarios")
        levels = np.unique(x[ok])
        if 1 < levels.size <= 25:
            med = [np.nanmedian(y[ok][x[ok] == lv]) for lv in levels]
            ax.plot(levels, med, "-o", color="C3", ms=3, lw=1.2, label="median")
        if labels is not None:
            ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
        if ds[p].attrs.get("sweep_source") in ("logspace", "loguniform", "lognormal") and np.all(x[ok] > 0):
            ax.set_xscale("log")
        ax.set_xlabel(_label(ds, p))
        ax.set_ylabel(f"{long_name} [{disp}]" if disp else long_name)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7)
    title = textwrap.fill(f"{metric}: {a.get('description', long_name)}", width=50 * ncol)
    fig.suptitle(f"{title}\n({int(ok.sum())} completed of {ok.size} scenarios)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _failure_figure(ds, params: list[str], status: np.ndarray, done: np.ndarray, path: Path) -> Path:
    import matplotlib.pyplot as plt

    cats = ["completed"] + sorted({s for s in status[done] if s not in SUCCESS}) + (["pending"] if (~done).any() else [])
    colors = {"completed": "0.75", "pending": "white"}
    palette = iter(plt.get_cmap("tab10").colors)
    for c in cats:
        colors.setdefault(c, next(palette))
    cat = np.where(~done, "pending", np.where(np.isin(status, SUCCESS), "completed", status))
    vals = {p: _axis_values(np.asarray(ds[p].values) if ds[p].dtype.kind in "biuf" else as_strings(ds[p]))
            for p in params}
    pairs = list(itertools.combinations(params, 2))[:MAX_PAIRS] if len(params) > 1 else [(params[0], None)]
    ncol = min(len(pairs), 3)
    nrow = int(np.ceil(len(pairs) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.4 * ncol, 3.6 * nrow), squeeze=False)
    for ax, (px, py) in zip(axes.flat, pairs):
        x, xl = vals[px]
        if py is None:
            y, yl = np.array([cats.index(c) for c in cat], float), cats
        else:
            y, yl = vals[py]
        for c in cats:
            m = cat == c
            if m.any():
                ax.scatter(x[m], y[m], s=14 if c != "completed" else 8, color=colors[c], edgecolors="k" if c ==
                           "pending" else "none", lw=0.4, label=f"{c} ({int(m.sum())})", alpha=0.9)
        if xl is not None:
            ax.set_xticks(range(len(xl)), xl, rotation=30, ha="right")
        if yl is not None:
            ax.set_yticks(range(len(yl)), yl)
        ax.set_xlabel(_label(ds, px))
        ax.set_ylabel(_label(ds, py) if py else "status")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(pairs):]:
        ax.set_visible(False)
    axes.flat[0].legend(fontsize=7, loc="best")
    n_fail = int((done & ~np.isin(status, SUCCESS)).sum())
    fig.suptitle(f"failure map: {n_fail} failed, {int((~done).sum())} pending of {status.size} scenarios",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_report(ds: xr.Dataset, outdir: str | Path, metrics: list[str] | None = None) -> list[Path]:
    """Write ``metric_<name>.png`` (each metric against each swept parameter, completed scenarios,
    median per level) and ``failures.png`` (status of every scenario over parameter pairs) into
    ``outdir``; returns the files written.  Raises ``ValueError`` for a dataset without swept
    parameters (a single run)."""
    import matplotlib

    matplotlib.use("Agg")
    params = ds.hpcrail.parameters
    if not params:
        raise ValueError("not a sweep store: no swept parameter coordinates")
    metrics = [m for m in (metrics or ds.hpcrail.metrics) if m in ds and ds[m].dims == ("scenario",)]
    keep = list(dict.fromkeys(metrics + ["status", "done"]))
    sub = ds[keep].load()
    status = as_strings(sub["status"])
    done = np.asarray(sub["done"].values).astype(bool)
    ok = done & np.isin(status, SUCCESS)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    files = [_metric_figure(sub, m, params, ok, outdir / f"metric_{m}.png") for m in metrics]
    files.append(_failure_figure(sub, params, status, done, outdir / "failures.png"))
    return files


__all__ = ["write_report"]
