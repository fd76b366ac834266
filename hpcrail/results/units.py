"""Units people read: labels ``"peak draft force [kN]"`` and values in display units, from the CF
attributes every hpcrail variable carries (``units``, ``display_units``, ``long_name``).

Conversions and unit formatting use pint with cf-xarray's registry (which reads CF/udunits strings such
as ``"km h-1"``); the declared ``display_scale`` is the fallback when pint cannot convert.  For
unit-aware analysis of whole datasets use pint-xarray (docs/results.md)::

    import cf_xarray.units, pint_xarray          # the CF unit registry, then the .pint accessor
    ds.max_draft_force.pint.quantify().pint.to("kN")
"""
from __future__ import annotations

import functools
import math

import numpy as np

#: dimensionless scaled units pint does not read, and how they are written (CF allows "1e-3")
_SCALED = {"1e-3": "‰", "0.001": "‰", "1e-2": "%", "0.01": "%", "percent": "%", "1": "", "": ""}


@functools.lru_cache(maxsize=1)
def _registry():
    try:
        import cf_xarray.units  # noqa: F401  (registers the CF formatter and udunits syntax)

        return cf_xarray.units.units
    except ImportError:
        return None


@functools.lru_cache(maxsize=256)
def pretty_units(units: str | None) -> str:
    """CF/udunits units as people write them: ``"km h-1"`` -> ``"km/h"``, ``"m s-2"`` -> ``"m/s²"``,
    ``"1e-3"`` -> ``"‰"``, ``"1"`` -> ``""`` (unknown strings are returned unchanged)."""
    u = (units or "").strip()
    if u in _SCALED:
        return _SCALED[u]
    reg = _registry()
    if reg is None:
        return u
    try:
        return f"{reg.Unit(u):~P}" or u
    except Exception:  # noqa: BLE001 - any unit pint cannot read is shown as written
        return u


@functools.lru_cache(maxsize=256)
def conversion_factor(units: str, to: str) -> float | None:
    """Factor from ``units`` to ``to`` (pint, CF registry); None if pint cannot convert them."""
    if units == to:
        return 1.0
    if units in _SCALED and to in _SCALED:
        scale = {"‰": 1e-3, "%": 1e-2, "": 1.0}
        return scale[_SCALED[units]] / scale[_SCALED[to]]
    reg = _registry()
    if reg is None:
        return None
    try:
        return float(reg.Quantity(1.0, units).to(to).magnitude)
    except Exception:  # noqa: BLE001
        return None


def display_units(attrs: dict) -> str:
    """The unit a variable is shown in (``display_units``, else ``units``)."""
    return str(attrs.get("display_units") or attrs.get("units") or "")


def display_factor(attrs: dict) -> float:
    """Factor from a variable's ``units`` to its display units (pint; the declared ``display_scale``
    when pint cannot convert)."""
    units, disp = str(attrs.get("units") or ""), display_units(attrs)
    f = conversion_factor(units, disp) if units and disp else 1.0
    if f is None or not math.isfinite(f):
        f = float(attrs.get("display_scale", 1.0))
    return f


def to_display(values, attrs: dict) -> np.ndarray:
    """``values`` (in ``attrs["units"]``) in the display units, as float64."""
    return np.asarray(values, dtype=float) * display_factor(attrs)


def label(attrs: dict, name: str = "", units: str | None = None) -> str:
    """Axis label ``"<long_name> [<display units>]"`` (no brackets for dimensionless quantities)."""
    text = str(attrs.get("long_name") or name)
    u = pretty_units(display_units(attrs) if units is None else units)
    return f"{text} [{u}]" if u else text


def clip_magnitude(value: float, digits: int = 4) -> float:
    """``value`` with -0 and round-off negatives below the printed precision turned into +0."""
    if value is None or not math.isfinite(value):
        return value
    if value == 0 or (value < 0 and abs(value) < 0.5 * 10 ** -digits):
        return 0.0
    return value + 0.0


__all__ = ["pretty_units", "conversion_factor", "display_units", "display_factor", "to_display", "label",
           "clip_magnitude"]
