"""Train make-up screening (sweep design ``makeup``, :mod:`hpcrail.sweep.makeup`): rank the drawn make-ups by a
risk metric and show which position patterns drive it.

* :func:`ranking`: the completed make-ups, worst first by the spec's ``rank_by`` metric (default the worst
  quasi-static running-safety ratio), with each one's code in run-length form, the safety metrics with their
  verdicts and the pattern features;
* :func:`pattern_sensitivity`: for each pattern feature, the first-order Sobol' index S1 estimated from the given
  sample by SALib (``SALib.analyze.delta`` with ``method="sobol"``: Plischke, Borgonovo & Smith 2013 — valid for
  any sample, not only a Saltelli design) with its bootstrap confidence interval, and the standardised
  regression coefficient of a linear regression of the metric on all features (numpy least squares; its R² says
  how much a linear model explains);
* :func:`makeup_figures`: ``makeup_ranking.png`` (the worst make-ups as strips of their vehicles, the metric and
  its limit beside) and ``makeup_sensitivity.png`` (S1, δ and the regression coefficients per feature).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from hpcrail.results.outputs import SUCCESS

#: colours of the make-up strips: locomotive, then the car groups in spec order
STRIP_COLOURS = ("#222222", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")


def is_makeup(ds) -> bool:
    """True for a study store of design ``makeup``."""
    return str(ds.attrs.get("design", "")) == "makeup"


def spec_of(ds) -> dict:
    """The ``makeup:`` block of the study's spec (from the store's attributes)."""
    try:
        return json.loads(ds.attrs.get("makeup", "") or "{}")
    except ValueError:
        return {}


def feature_names(ds) -> list[str]:
    """The numeric pattern-feature coordinates of a make-up study."""
    return [n for n in ds.coords if ds[n].attrs.get("sweep_source") == "makeup" and ds[n].dims == ("scenario",)
            and ds[n].dtype.kind in "fiu"]


def rank_metric(ds, metric: str | None = None) -> str:
    """The metric the make-ups are ranked by: ``metric``, else the spec's ``rank_by`` (default the worst
    quasi-static ratio); raises ValueError for a metric the store does not have."""
    m = metric or spec_of(ds).get("rank_by") or "worst_qs_ratio"
    if m not in ds or ds[m].dims != ("scenario",):
        raise ValueError(f"the make-up study has no metric {m!r} to rank by (makeup.rank_by or --rank-by)")
    return m


def _ok(ds) -> np.ndarray:
    status = np.array([str(s) for s in np.asarray(ds["status"].values).ravel()])
    done = np.asarray(ds["done"].values).astype(bool) if "done" in ds else np.ones(status.size, bool)
    return done & np.isin(status, SUCCESS)


#: safety metrics shown next to the rank metric when the store has them
SHOWN = ("worst_qs_ratio", "worst_qs_y_over_q", "worst_qs_wheel_unloading", "worst_lcf_ratio", "vehicles_exceeding",
         "jackknife_vehicles", "stringline_vehicles", "max_buff_force")


def ranking(ds, k: int = 10, metric: str | None = None) -> pd.DataFrame:
    """The ``k`` worst completed make-ups (largest rank metric first): scenario, run-length make-up code, the
    rank metric and its verdict (when it has a limit), the safety metrics of :data:`SHOWN` and the features."""
    from hpcrail.results.verdicts import verdict

    m = rank_metric(ds, metric)
    ok = _ok(ds)
    y = np.asarray(ds[m].values, float)
    idx = np.flatnonzero(ok & np.isfinite(y))
    idx = idx[np.argsort(-y[idx], kind="stable")][:k]
    lim = ds[m].attrs.get("limit")
    rows = []
    for i in idx:
        r = {"scenario": int(ds["scenario"].values[i]), "makeup": compress(str(ds["makeup"].values[i])), m: y[i]}
        if lim is not None:
            r["verdict"] = verdict(y[i], lim)
        for s in SHOWN:
            if s in ds and s != m and ds[s].dims == ("scenario",):
                r[s] = ds[s].values[i].item()
        for f in feature_names(ds):
            r[f] = ds[f].values[i].item()
        rows.append(r)
    return pd.DataFrame(rows)


def compress(code: str) -> str:
    """Run-length form of a make-up code (``##`` + 60 × ``L`` → ``2# 60L``)."""
    if not code:
        return ""
    out, cur, n = [], code[0], 0
    for ch in code:
        if ch == cur:
            n += 1
        else:
            out.append(f"{n}{cur}")
            cur, n = ch, 1
    out.append(f"{n}{cur}")
    return " ".join(out)


def pattern_sensitivity(ds, metric: str | None = None, *, seed: int = 0, num_resamples: int = 100) -> pd.DataFrame:
    """Which pattern features drive ``metric`` (default :func:`rank_metric`) over the completed make-ups: per
    feature (the index) ``S1`` and ``S1_conf`` (first-order Sobol' index from the given sample,
    ``SALib.analyze.delta`` with ``method="sobol"``, 95 % bootstrap half-width) and ``src`` (the standardised
    coefficient of the least-squares regression of the metric on all features, its ``R2`` in the frame's
    ``attrs``).  Constant or non-finite features are left out.  The bootstrap (and SALib's resampled
    estimate of S1 itself) draws from ``seed``: the same store and seed give the same frame
    (:func:`~hpcrail.analysis.sensitivity.salib_rng`).  Raises ``ValueError`` with fewer than 20
    usable make-ups or a constant metric."""
    from SALib.analyze import delta

    m = rank_metric(ds, metric)
    ok = _ok(ds)
    y = np.asarray(ds[m].values, float)
    feats = feature_names(ds)
    X = np.column_stack([np.asarray(ds[f].values, float) for f in feats]) if feats else np.zeros((y.size, 0))
    use = ok & np.isfinite(y) & np.all(np.isfinite(X), axis=1)
    keep = [j for j in range(X.shape[1]) if np.ptp(X[use, j]) > 0] if use.any() else []
    if use.sum() < 20 or not keep:
        raise ValueError(f"pattern sensitivity needs at least 20 completed make-ups with varying features (have "
                         f"{int(use.sum())})")
    Xu, yu = X[use][:, keep], y[use]
    if np.ptp(yu) == 0:
        raise ValueError(f"{m} does not vary over the make-ups")
    names = [feats[j] for j in keep]
    problem = {"num_vars": len(names), "names": names,
               "bounds": [[float(Xu[:, j].min()), float(Xu[:, j].max())] for j in range(len(names))]}
    import contextlib
    import inspect
    import io

    # SALib >= 1.6 computes only S1 with method="sobol" (its δ estimators cost minutes on a thousand samples)
    kw = {"method": "sobol"} if "method" in inspect.signature(delta.analyze).parameters else {}
    from hpcrail.analysis.sensitivity import salib_rng

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), salib_rng(seed):
        res = delta.analyze(problem, Xu, yu, num_resamples=num_resamples, conf_level=0.95, seed=seed,
                            print_to_console=False, **kw)
    Z = (Xu - Xu.mean(axis=0)) / Xu.std(axis=0)
    zy = (yu - yu.mean()) / yu.std()
    A = np.column_stack([Z, np.ones(len(zy))])
    coef, *_ = np.linalg.lstsq(A, zy, rcond=None)
    r2 = 1.0 - np.sum((A @ coef - zy) ** 2) / np.sum(zy ** 2)
    df = pd.DataFrame({"S1": res["S1"], "S1_conf": res["S1_conf"], "src": coef[:-1]},
                      index=pd.Index(names, name="feature"))
    df.attrs.update(metric=m, R2=float(r2), samples=int(use.sum()))
    return df.sort_values("S1", ascending=False)


def makeup_figures(ds, outdir, metric: str | None = None) -> list:
    """``makeup_ranking.png`` and ``makeup_sensitivity.png`` (see the module docstring) for ``metric`` (default
    :func:`rank_metric`)."""
    from hpcrail.results.plotting import finish, new_figure
    from hpcrail.results.units import label, to_display

    files = []
    m = rank_metric(ds, metric)
    top = ranking(ds, 15, m)
    if len(top):
        mk = spec_of(ds)
        groups = mk.get("cars", [])
        chars = ["#"] + [g.get("code") or ("E" if g.get("empty") else "L") for g in groups]
        colours = {c: STRIP_COLOURS[i % len(STRIP_COLOURS)] for i, c in enumerate(dict.fromkeys(chars))}
        names = {"#": mk.get("locomotives", {}).get("type", "locomotive")}
        for g, c in zip(groups, chars[1:]):
            names.setdefault(c, g["type"])
        fig, (ax, bx) = new_figure(1, 2, figsize=(12, 0.42 * len(top) + 1.6),
                                   gridspec_kw={"width_ratios": [4, 1]})
        from matplotlib.colors import ListedColormap

        order = list(colours)
        cmap = ListedColormap([colours[c] for c in order])
        codes = [str(ds["makeup"].values[int(s)]) for s in top["scenario"]]
        n = max(len(c) for c in codes)
        img = np.full((len(codes), n), np.nan)
        for r, c in enumerate(codes):
            img[r, :len(c)] = [order.index(ch) for ch in c]
        ax.imshow(img, aspect="auto", cmap=cmap, vmin=-0.5, vmax=len(order) - 0.5, interpolation="nearest",
                  extent=(0.5, n + 0.5, len(codes) - 0.5, -0.5))
        wv = f"{m}_vehicle" if f"{m}_vehicle" in ds else None
        if wv is not None:
            wx = [int(ds[wv].values[int(sc)]) for sc in top["scenario"]]
            ax.plot(wx, range(len(wx)), "o", ms=6, mfc="white", mec="C3", mew=1.5, ls="none",
                    label="vehicle of the worst ratio")
        ax.set_yticks(range(len(codes)), [f"#{s}" for s in top["scenario"]])
        ax.set_xlabel("vehicle (1 = head)")
        ax.set_ylabel("make-up (scenario), worst first")
        from matplotlib.patches import Patch

        handles = [Patch(color=colours[c], label=names.get(c, c)) for c in order]
        if wv is not None:
            handles += ax.get_legend_handles_labels()[0]
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=len(handles), fontsize=8,
                  frameon=False)
        a = ds[m].attrs
        vals = to_display(top[m].to_numpy(float), a)
        lim = a.get("limit")
        cols = ["C3" if lim is not None and v > float(lim) * float(a.get("display_scale", 1.0)) else "C0"
                for v in vals]
        bx.barh(range(len(vals)), vals, color=cols)
        bx.set_ylim(len(vals) - 0.5, -0.5)
        bx.set_yticks([])
        if lim is not None:
            bx.axvline(float(lim) * float(a.get("display_scale", 1.0)), color="k", ls="--", lw=1.2, zorder=3,
                       label=f"limit ({a.get('limit_source', '')})")
            bx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=8, frameon=False)
        bx.set_xlabel(label(a, m))
        ok = int(_ok(ds).sum())
        fig.suptitle(f"{ds.attrs.get('sweep_name', 'make-up study')}: the {len(top)} worst of {ok} make-ups by "
                     f"{a.get('long_name', m)}", fontsize=10)
        files.append(finish(fig, outdir, "makeup_ranking"))
    try:
        sens = pattern_sensitivity(ds, m)
    except ValueError:
        return files
    fig, ax = new_figure(1, 1, figsize=(8.5, 0.45 * len(sens) + 1.8))
    yy = np.arange(len(sens))
    ax.barh(yy - 0.2, sens["S1"], 0.4, xerr=sens["S1_conf"], color="C0", label="first-order Sobol' S1 (given data)")
    ax.barh(yy + 0.2, sens["src"], 0.4, color="C1", label=f"standardised regression coefficient (R² = "
            f"{sens.attrs['R2']:.2f})")
    ax.set_yticks(yy, [ds[f].attrs.get("long_name", f) for f in sens.index])
    ax.set_ylim(len(sens) - 0.5, -0.5)
    ax.axvline(0, color="0.4", lw=0.8)
    ax.set_xlabel(f"sensitivity of {ds[m].attrs.get('long_name', m)}")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1, fontsize=8, frameon=False)
    ax.grid(alpha=0.3, axis="x")
    ax.set_title(f"which make-up patterns drive the risk ({sens.attrs['samples']} make-ups; SALib, numpy lstsq)",
                 fontsize=10)
    files.append(finish(fig, outdir, "makeup_sensitivity"))
    return files


__all__ = ["is_makeup", "compress", "ranking", "pattern_sensitivity", "makeup_figures", "feature_names", "rank_metric"]
