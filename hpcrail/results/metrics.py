"""Benchmark metrics of the International Benchmarking of LTD Simulators (paper 000, Tables 1-2),
all in SI units, and their display in engineering units.

Metrics are computed from the ``observe`` accumulator, i.e. over *every accepted integrator step*,
never only over the sampled output; the mean speed comes from the distance travelled, which is exact
and independent of the sampling interval.
"""
from __future__ import annotations

import numpy as np

#: name -> (units, long_name, display unit, display factor)
METRICS = {
    "max_speed": ("m s-1", "maximum speed over all vehicles and steps", "km/h", 3.6),
    "mean_speed": ("m s-1", "average speed over all vehicles and the whole run (distance / time)", "km/h", 3.6),
    "max_draft_force": ("N", "largest draft (tensile) in-train force over all couplers and steps", "kN", 1e-3),
    "max_draft_force_coupler": ("1", "coupler number (1 = behind the lead vehicle) of the largest draft force", "", 1),
    "max_buff_force": ("N", "largest buff (compressive) in-train force magnitude over all couplers and steps",
                       "kN", 1e-3),
    "max_buff_force_coupler": ("1", "coupler number of the largest buff force", "", 1),
    "mean_max_draft_force": ("N", "mean over coupler positions of the per-position maximum draft force", "kN", 1e-3),
    "mean_max_buff_force": ("N", "mean over coupler positions of the per-position maximum buff force magnitude",
                            "kN", 1e-3),
    "max_draft_deflection": ("m", "maximum draft deflection (extension incl. slack) at the reference coupler",
                             "mm", 1e3),
    "max_buff_deflection": ("m", "maximum buff deflection magnitude (incl. slack) at the reference coupler",
                            "mm", 1e3),
}


def ltd_metrics(max_force: np.ndarray, min_force: np.ndarray, max_ext: np.ndarray, min_ext: np.ndarray,
                max_speed: float, mean_speed: float, reference_coupler: int | None) -> dict:
    """Benchmark metrics from per-coupler envelopes.

    Parameters
    ----------
    max_force, min_force : float64[N-1] per-coupler extreme in-train force over all steps [N]
        (+ draft, − buff).
    max_ext, min_ext : float64[N-1] per-coupler extreme extension [m] (+ draft).
    max_speed, mean_speed : [m/s].
    reference_coupler : 1-based coupler for the deflection metrics; ``None`` = the coupler of the
        largest draft force.

    Returns a dict of the names in :data:`METRICS` plus ``reference_coupler``.
    """
    draft = np.maximum(max_force, 0.0)
    buff = np.maximum(-min_force, 0.0)
    kd = int(np.argmax(draft))
    kb = int(np.argmax(buff))
    ref = reference_coupler if reference_coupler is not None else kd + 1
    return {
        "max_speed": float(max_speed),
        "mean_speed": float(mean_speed),
        "max_draft_force": float(draft[kd]),
        "max_draft_force_coupler": kd + 1,
        "max_buff_force": float(buff[kb]),
        "max_buff_force_coupler": kb + 1,
        "mean_max_draft_force": float(draft.mean()),
        "mean_max_buff_force": float(buff.mean()),
        "max_draft_deflection": float(max(max_ext[ref - 1], 0.0)),
        "max_buff_deflection": float(max(-min_ext[ref - 1], 0.0)),
        "reference_coupler": int(ref),
    }


def metrics_table_rows(ds) -> list[tuple[str, str, str]]:
    """``(long name, value, unit)`` rows of a run's metrics in km/h, kN, mm (for printing)."""
    rows = []
    tables = dict(METRICS)
    significant = False
    if ds.attrs.get("model") == "vertical":
        from hpcrail.results.vertical import VERTICAL_METRICS

        tables = dict(VERTICAL_METRICS)
        significant = True
    for name, (_u, long_name, disp, fac) in tables.items():
        if name not in ds:
            continue
        v = ds[name].values.item()
        if significant:
            s = f"{v * fac:.4g}"
        elif disp == "" and name.endswith("_coupler"):
            s = f"{int(v)}"
        elif disp == "":
            s = f"{v:,.3f}"
        else:
            s = f"{v * fac:,.2f}"
        label = long_name
        if name.endswith("deflection"):
            label += f" (coupler {ds[name].attrs.get('reference_coupler', '?')})"
        rows.append((name, s, disp, label))
    return rows
