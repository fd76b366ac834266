"""Run figures of the ``railway_vehicle`` kind (from a result dataset, any store or a ``hpcrail run``):

* ``curving.png`` — lateral displacement and yaw of every wheelset, bogie frame and the car body along the
  track (paper 004 Figs 17, 19-22), the curve sections shaded;
* ``wheel_forces.png`` — per wheel: vertical force Q, lateral force Y, Y/Q with its limit and the
  flange-contact flags along the track.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def has_series(ds: xr.Dataset) -> bool:
    return "lateral_displacement" in ds and "time" in ds.dims and ds.sizes.get("time", 0) > 1


def curving_figure(ds: xr.Dataset, out_dir: str | Path, **_opts) -> list[Path]:
    """Lateral displacement [mm] and yaw [mrad] of every body against the leading wheelset's position."""
    plt = _plt()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = ds["distance"].values
    fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
    kinds = ds["body_kind"].values if "body_kind" in ds.coords else ["rigid"] * ds.sizes["body"]
    for b, name in enumerate(ds["body"].values):
        ls = "-" if kinds[b] == "wheelset" else "--"
        for ax, var, scale in ((axes[0], "lateral_displacement", 1e3), (axes[1], "yaw", 1e3)):
            ax.plot(s, ds[var].isel(body=b).values * scale, ls, lw=1.2, label=str(name))
    axes[0].set_ylabel("lateral displacement [mm]")
    axes[1].set_ylabel("yaw angle [mrad]")
    axes[1].set_xlabel("position of the leading wheelset [m]")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, ncol=4)
    fig.suptitle(f"{ds.attrs.get('scenario_name', '')}: curving ({ds.attrs.get('contact_method', '')}, "
                 f"{ds.attrs.get('speed_mps', float('nan')):g} m/s)")
    fig.tight_layout()
    p = out / "curving.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return [p]


def wheel_forces_figure(ds: xr.Dataset, out_dir: str | Path, **_opts) -> list[Path]:
    """Q, Y, Y/Q and flange contact per wheel against the leading wheelset's position."""
    plt = _plt()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = ds["distance"].values
    fig, axes = plt.subplots(4, 1, figsize=(9, 10), sharex=True)
    nwh = ds.sizes["wheel"]
    cmap = plt.get_cmap("tab10")
    for k, name in enumerate(ds["wheel"].values):
        c = cmap(k % 10)
        ls = "-" if "left" in str(name) else "--"
        axes[0].plot(s, ds["wheel_load"].isel(wheel=k).values * 1e-3, ls, color=c, lw=1.0, label=str(name))
        axes[1].plot(s, ds["lateral_force"].isel(wheel=k).values * 1e-3, ls, color=c, lw=1.0)
        axes[2].plot(s, ds["y_over_q"].isel(wheel=k).values, ls, color=c, lw=1.0)
        fl = ds["flange_contact"].isel(wheel=k).values.astype(float)
        axes[3].plot(s, fl * 0.8 + k, color=c, lw=1.5)
    axes[0].set_ylabel("Q [kN]")
    axes[1].set_ylabel("Y [kN]")
    axes[2].set_ylabel("Y/Q")
    axes[2].axhline(0.8, color="k", lw=0.8, ls=":")
    axes[3].set_yticks(np.arange(nwh) + 0.4)
    axes[3].set_yticklabels([str(n) for n in ds["wheel"].values], fontsize=7)
    axes[3].set_ylabel("flange contact")
    axes[3].set_xlabel("position of the leading wheelset [m]")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, ncol=4)
    fig.suptitle(f"{ds.attrs.get('scenario_name', '')}: wheel/rail forces")
    fig.tight_layout()
    p = out / "wheel_forces.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    return [p]


__all__ = ["curving_figure", "wheel_forces_figure", "has_series"]
