"""Verdicts of assessment quantities against their limits, for every table, ``--json``, report and figure.

An output declares its upper limit (``Output.limit`` and ``limit_source``: EN 14363 (Y/Q)_lim 0.8, (ΔQ/Q)_lim
0.6, a ratio to Prud'homme's limit 1.0, ...); a run may state its own (a scenario's ``y_q_limit``) in the
variable's ``limit`` attribute.  The verdict of a value is ``PASS`` when value ≤ limit, ``EXCEEDED`` above it and
``n/a`` for NaN.  :func:`cut_short_warnings` says when the time of a maximum lies within the last 2 % of a run
(the event may have been cut short by the end of the simulation).
"""
from __future__ import annotations

import math

import numpy as np

PASS = "PASS"
EXCEEDED = "EXCEEDED"
NA = "n/a"
#: a maximum within this fraction of the run's end may be cut short
CUT_SHORT = 0.02


def verdict(value, limit) -> str:
    """``PASS`` (value ≤ limit), ``EXCEEDED`` or ``n/a`` (value or limit not a finite number)."""
    try:
        v, lim = float(value), float(limit)
    except (TypeError, ValueError):
        return NA
    if not (math.isfinite(v) and math.isfinite(lim)):
        return NA
    return PASS if v <= lim else EXCEEDED


def ratio(value, limit) -> float:
    """value / limit (NaN when either is missing or the limit is 0)."""
    try:
        v, lim = float(value), float(limit)
    except (TypeError, ValueError):
        return float("nan")
    return v / lim if math.isfinite(v) and math.isfinite(lim) and lim != 0 else float("nan")


def limit_of(attrs: dict) -> float | None:
    """The limit of a variable from its attributes (None without one)."""
    lim = attrs.get("limit")
    try:
        return None if lim is None else float(lim)
    except (TypeError, ValueError):
        return None


def assessment(value, attrs: dict) -> dict | None:
    """``{"limit", "ratio", "verdict", "limit_source"}`` of a value of a variable with a limit (None without)."""
    lim = limit_of(attrs)
    if lim is None:
        return None
    return {"limit": lim, "ratio": ratio(value, lim), "verdict": verdict(value, lim),
            "limit_source": attrs.get("limit_source", "")}


def element_assessment(ds, dim: str, k: int = 5) -> tuple[list, list]:
    """The ``k`` worst elements along ``dim`` (e.g. the vehicles of an LTD run) over the variables of role
    ``element`` with a limit and that dimension alone: ``(columns, rows)``, each row ``{"element": label,
    "type": the element's type name if the dataset has one, "worst_ratio", "verdict", "values": {variable: (value,
    ratio)}}``, worst first (by the largest ratio to a limit)."""
    names = [n for n, v in ds.data_vars.items() if v.dims == (dim,) and v.attrs.get("role") == "element"
             and limit_of(v.attrs) is not None and v.dtype.kind == "f"]
    if not names:
        return [], []
    vals = np.vstack([np.asarray(ds[n].values, float) for n in names])
    lims = np.array([limit_of(ds[n].attrs) for n in names])[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        rat = vals / lims
    worst = np.nanmax(np.where(np.isfinite(rat), rat, -np.inf), axis=0)
    order = np.argsort(-worst, kind="stable")[:k]
    labels = ds[dim].values if dim in ds.coords else np.arange(1, vals.shape[1] + 1)
    tcoord = next((c for c in (f"{dim}_type", f"{dim}_name") if c in ds.coords), None)
    rows = []
    for i in order:
        if not np.isfinite(worst[i]):
            continue
        rows.append({"element": labels[i].item() if hasattr(labels[i], "item") else labels[i],
                     "type": str(ds[tcoord].values[i]) if tcoord else "",
                     "worst_ratio": float(worst[i]), "verdict": PASS if worst[i] <= 1.0 else EXCEEDED,
                     "values": {n: (float(vals[j, i]), float(rat[j, i])) for j, n in enumerate(names)}})
    return names, rows


def cut_short_warnings(values: dict, names, t_end: float, labels: dict | None = None) -> list[str]:
    """Warnings for the times of maxima (``values[name]``, scalars or arrays [s]) within the last
    :data:`CUT_SHORT` of a run that ended at ``t_end`` [s]: the event may have been cut short."""
    out = []
    if not t_end or t_end <= 0:
        return out
    edge = (1.0 - CUT_SHORT) * t_end
    for name in names:
        if name not in values:
            continue
        t = np.atleast_1d(np.asarray(values[name], float))
        late = np.isfinite(t) & (t >= edge)
        if late.any():
            what = (labels or {}).get(name, name.replace("_", " "))
            n = int(late.sum())
            where = "" if t.size == 1 else f" ({n} of {t.size} elements)"
            out.append(f"{what} at t = {float(np.nanmax(t[late])):.4g} s lies within the last {CUT_SHORT:.0%} of the "
                       f"run (ended at {t_end:.4g} s){where}: the event may be cut short — run longer to see it whole")
    return out


__all__ = ["PASS", "EXCEEDED", "NA", "CUT_SHORT", "verdict", "ratio", "limit_of", "assessment", "element_assessment",
           "cut_short_warnings"]
