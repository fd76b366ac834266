"""Run figure of the quasi-static running safety of every vehicle (:mod:`hpcrail.kinds.ltd.safety`):
``running_safety.png`` — each vehicle's largest ratio of Y/Q, truck-side Y/Q, ΔQ/Q, ΣY/Prud'homme and peak buff /
endurable compressive force to its limit along the train, the limit, the locomotives, the flagged vehicles, and the
verdict in the title."""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.results.plotting import finish, new_figure, title

#: (element output, label, colour)
RATIOS = (("max_qs_y_over_q", "Y/Q", "C0"), ("max_qs_truck_side_l_v", "truck-side Y/Q", "C1"),
          ("max_qs_wheel_unloading", "ΔQ/Q", "C2"), ("max_qs_sum_y_ratio", "ΣY / Prud'homme", "C4"),
          ("lcf_ratio", "peak buff / endurable force", "C3"))


def has_running_safety(ds: xr.Dataset) -> bool:
    return "qs_worst_ratio" in ds and "vehicle" in ds.dims


def running_safety(ds: xr.Dataset, out_dir=None, **_opts):
    """Each vehicle's running-safety maxima over their limits along the train (see the module docstring).
    Raises ``ValueError`` without the running-safety outputs."""
    from hpcrail.results.verdicts import verdict

    if not has_running_safety(ds):
        raise ValueError("the running-safety figure needs the quasi-static outputs (output.running_safety.enabled)")
    v = np.asarray(ds["vehicle"].values)
    fig, ax = new_figure(figsize=(11, 4.8))
    for name, lab, col in RATIOS:
        if name not in ds:
            continue
        y = np.asarray(ds[name].values, float) / float(ds[name].attrs.get("limit", 1.0))
        if not np.isfinite(y).any():
            continue
        ax.step(v, y, where="mid", color=col, lw=1.1,
                label=f"{lab} / {float(ds[name].attrs.get('limit', 1.0)):g} ({ds[name].attrs.get('limit_source', '')})")
    ax.axhline(1.0, color="k", ls="--", lw=1.2, label="limit (ratio 1)")
    kinds = np.asarray(ds["vehicle_kind"].values).astype(str) if "vehicle_kind" in ds.coords else []
    for i, k in enumerate(np.flatnonzero(np.asarray(kinds) == "locomotive")):
        ax.axvline(v[k], color="0.4", ls=":", lw=0.8, zorder=0, label="locomotive" if i == 0 else None)
    for name, mk, lab in (("jackknife", "v", "jack-knife flag"), ("stringline", "^", "stringline flag")):
        if name in ds and np.asarray(ds[name].values).any():
            f = np.flatnonzero(np.asarray(ds[name].values) > 0)
            ax.plot(v[f], np.full(f.size, 1.05), mk, color="C3", ms=6, ls="none", label=lab)
    w = float(ds["worst_qs_ratio"]) if "worst_qs_ratio" in ds else float("nan")
    lw = float(ds["worst_lcf_ratio"]) if "worst_lcf_ratio" in ds else float("nan")
    worst = np.nanmax([w, lw]) if np.isfinite([w, lw]).any() else float("nan")
    n_bad = int(ds["vehicles_exceeding"]) if "vehicles_exceeding" in ds else 0
    ax.set_xlabel("vehicle (1 = head)")
    ax.set_ylabel("maximum over the run / its limit")
    ax.set_xlim(v[0] - 0.5, v[-1] + 0.5)
    ax.set_ylim(bottom=0.0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncol=3, frameon=False)
    ax.set_title(title(ds, f"quasi-static running safety of every vehicle: worst ratio {worst:.2f} "
                           f"({verdict(worst, 1.0)}), {n_bad} vehicles beyond a quasi-static limit"), fontsize=10)
    return [finish(fig, out_dir, "running_safety")]


__all__ = ["running_safety", "has_running_safety"]
