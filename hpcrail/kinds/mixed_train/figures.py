"""Figures of the ``mixed_train`` kind.

* run: ``running_safety_v<position>.png`` per detailed vehicle — its coupler forces and the lateral force they
  put on the car body, Y/Q per wheel, wheel unloading ΔQ/Q, ΣY per wheelset with the Prud'homme limit and the
  wheelsets' lateral displacement, all against the track position of its leading wheelset (EN 14363 limits
  dotted);
* sweep report: ``running_safety_vs_buff.png`` — the worst Y/Q, ΔQ/Q and ΣY/limit of each completed scenario
  against the peak compressive force at the detailed vehicle (paper 000's "admissible longitudinal
  compressive force" question), coloured by a swept parameter.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr

from hpcrail.results.plotting import finish, new_figure


def has_series(ds: xr.Dataset) -> bool:
    return "y_over_q" in ds and "detailed_vehicle" in ds.dims and ds.sizes.get("time", 0) > 1


def running_safety_figure(ds: xr.Dataset, out_dir: str | Path, **_opts) -> list[Path]:
    """One figure per detailed vehicle (see the module docstring)."""
    from matplotlib import colormaps

    from hpcrail.results.verdicts import verdict

    files = []
    for d, label in enumerate(ds["detailed_vehicle"].values):
        sub = ds.isel(detailed_vehicle=d)
        lim_yq = float(ds["max_y_over_q"].attrs.get("limit", 0.8)) if "max_y_over_q" in ds else 0.8
        lim_dq = float(ds["max_wheel_unloading"].attrs.get("limit", 0.6)) if "max_wheel_unloading" in ds else 0.6
        s = sub["distance"].values
        fig, axes = new_figure(5, 1, figsize=(10, 12.5), sharex=True)
        ax = axes[0]
        ax.plot(s, sub["front_coupler_force"].values * 1e-3, lw=1.1, label="front coupler")
        ax.plot(s, sub["rear_coupler_force"].values * 1e-3, lw=1.1, label="rear coupler")
        ax.plot(s, sub["coupler_lateral_force"].values * 1e-3, lw=1.1, color="k", label="lateral force on the car "
                "body (+ left)")
        ax.axhline(0, color="0.5", lw=0.6)
        ax.set_ylabel("force [kN]\n(+ draft, − buff)")
        ax.legend(fontsize=8, ncol=3, loc="best")
        cmap = colormaps["tab10"]
        for k, name in enumerate(sub["wheel"].values):
            ls = "-" if "left" in str(name) else "--"
            axes[1].plot(s, sub["y_over_q"].isel(wheel=k).values, ls, color=cmap(k % 10), lw=0.9, label=str(name))
            axes[2].plot(s, sub["wheel_unloading"].isel(wheel=k).values, ls, color=cmap(k % 10), lw=0.9)
        axes[1].axhline(lim_yq, color="k", ls=":", lw=1, label=f"limit {lim_yq:g}")
        axes[1].set_ylabel("Y/Q")
        axes[1].legend(fontsize=7, ncol=5, loc="best")
        axes[2].axhline(lim_dq, color="k", ls=":", lw=1)
        axes[2].set_ylabel("ΔQ/Q")
        # the EN 14363 assessment values (2 m sliding means) with their verdicts
        for ax, name, lim in ((axes[1], "max_y_over_q", lim_yq), (axes[2], "max_wheel_unloading", lim_dq)):
            if name in sub:
                val = float(sub[name])
                ax.set_title(f"2 m mean maximum {val:.3f} of {lim:g} (ratio {val / lim:.2f}): {verdict(val, lim)}",
                             fontsize=9, loc="left", color="C3" if verdict(val, lim) == "EXCEEDED" else "C2")
        if "sum_y_ratio" in sub:
            r = float(sub["sum_y_ratio"])
            axes[3].set_title(f"2 m mean |ΣY| / Prud'homme limit {r:.2f}: {verdict(r, 1.0)}", fontsize=9, loc="left",
                              color="C3" if verdict(r, 1.0) == "EXCEEDED" else "C2")
        for k, name in enumerate(sub["wheelset"].values):
            c = cmap(k % 10)
            axes[3].plot(s, sub["sum_y"].isel(wheelset=k).values * 1e-3, color=c, lw=0.9, label=str(name))
            lim = float(sub["sum_y_limit"].isel(wheelset=k)) * 1e-3
            axes[3].axhline(lim, color=c, ls=":", lw=0.8)
            axes[3].axhline(-lim, color=c, ls=":", lw=0.8)
        axes[3].set_ylabel("ΣY [kN]\n(Prud'homme limits dotted)")
        axes[3].legend(fontsize=7, ncol=4, loc="best")
        kinds = sub["body_kind"].values if "body_kind" in sub.coords else []
        for b, name in enumerate(sub["body"].values):
            if len(kinds) and kinds[b] != "wheelset":
                continue
            axes[4].plot(s, sub["lateral_displacement"].isel(body=b).values * 1e3, lw=0.9, label=str(name))
        axes[4].set_ylabel("wheelset lateral\ndisplacement [mm]")
        axes[4].set_xlabel("track position of the leading wheelset [m]")
        axes[4].legend(fontsize=7, ncol=4, loc="best")
        for a in axes:
            a.grid(alpha=0.3)
        pos = int(sub["detailed_position"]) if "detailed_position" in sub.coords else label
        fig.suptitle(f"{ds.attrs.get('scenario_name', '')}: detailed vehicle at position {pos} — running safety "
                     f"under in-train forces (instantaneous values; EN 14363 limits dotted)", fontsize=10)
        files.append(finish(fig, out_dir, f"running_safety_{label}"))
    return files


def has_study(ds: xr.Dataset) -> bool:
    return "worst_y_over_q" in ds and "peak_buff_force_at_detailed" in ds and "scenario" in ds.dims


def running_safety_vs_buff(ds: xr.Dataset, out_dir: str | Path, **_opts) -> list[Path]:
    """Worst Y/Q, ΔQ/Q and ΣY/limit per completed scenario against the peak buff force at the detailed vehicle,
    coloured by the first swept parameter that varies (markers by the second)."""
    status = np.asarray(ds["status"].values).astype(str)
    ok = np.isin(status, ("completed", "event_stop"))
    if "done" in ds:
        ok &= np.asarray(ds["done"].values).astype(bool)
    params = list(ds.attrs.get("parameters", "").split(",")) if ds.attrs.get("parameters") else []
    params = [p.strip() for p in params if p.strip() in ds.coords] or \
        [c for c in ds.coords if ds[c].dims == ("scenario",) and c not in ("scenario",)]
    varying = [p for p in params if np.unique(np.asarray(ds[p].values)[ok].astype(str)).size > 1]
    x = np.asarray(ds["peak_buff_force_at_detailed"].values, float)[ok] * 1e-3
    fig, axes = new_figure(1, 3, figsize=(15, 4.6))
    colour = varying[0] if varying else None
    marker = varying[1] if len(varying) > 1 else None
    cvals = np.asarray(ds[colour].values)[ok] if colour else np.zeros(x.size)
    mvals = np.asarray(ds[marker].values)[ok].astype(str) if marker else np.array(["all"] * x.size)
    levels = list(dict.fromkeys(mvals.tolist()))
    marks = "osD^v<>ph*"
    for ax, (name, lim, lab) in zip(axes, (("worst_y_over_q", 0.8, "max (Y/Q) 2 m mean"),
                                           ("worst_wheel_unloading", 0.6, "max ΔQ/Q 2 m mean"),
                                           ("worst_sum_y_ratio", 1.0, "max |ΣY| 2 m mean / Prud'homme limit"))):
        y = np.asarray(ds[name].values, float)[ok]
        lim = float(ds[name].attrs.get("limit", lim))
        n_ex = int(np.sum(y > lim))
        sc = None
        for i, lv in enumerate(levels):
            m = mvals == lv
            try:
                c = cvals[m].astype(float)
            except (TypeError, ValueError):
                c = np.unique(cvals.astype(str), return_inverse=True)[1][m]
            sc = ax.scatter(x[m], y[m], c=c, cmap="viridis", marker=marks[i % len(marks)], s=36, edgecolor="k",
                            lw=0.4, label=f"{marker} = {lv}" if marker else None,
                            vmin=np.nanmin(cvals.astype(float)) if colour and cvals.dtype.kind in "fiu" else None,
                            vmax=np.nanmax(cvals.astype(float)) if colour and cvals.dtype.kind in "fiu" else None)
        ax.axhline(lim, color="r", ls=":", lw=1, label=f"limit {lim:g} ({ds[name].attrs.get('limit_source', 'EN 14363')})")
        ax.set_xlabel("peak buff force at the detailed vehicle [kN]")
        ax.set_ylabel(lab)
        ax.set_title(f"{n_ex} of {y.size} scenarios EXCEEDED" if n_ex else f"all {y.size} scenarios PASS",
                     fontsize=9, color="C3" if n_ex else "C2")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        if colour and sc is not None:
            fig.colorbar(sc, ax=ax, label=colour)
    fig.suptitle(f"Running safety of the detailed vehicle against the peak compressive in-train force: "
                 f"{int(ok.sum())} completed of {ok.size} scenarios", fontsize=10)
    return [finish(fig, out_dir, "running_safety_vs_buff")]


__all__ = ["running_safety_figure", "running_safety_vs_buff", "has_series", "has_study"]
