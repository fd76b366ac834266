"""The one strict base model of every configuration schema (scenario kinds, shared component blocks,
sweep specs): unknown keys are errors, defaults are validated like given values, and no bad number
gets past it.

Rules every schema inherits (issue 18):

* no NaN or ±inf anywhere (pydantic's ``allow_inf_nan=False``, which also covers numbers inside lists
  and mappings): a non-finite value used to become ``null`` in the canonical config (so different
  scenarios shared one id) and ended in tracebacks or endless runs;
* a boolean is not a number (YAML reads ``true``/``yes``/``on`` as booleans, and pydantic would take
  them as 1);
* every number lies within ±:data:`MAX_MAGNITUDE` and every integer fits an int64 — a backstop for
  fields without a physical range; the schemas give each field its own range as well.
"""
from __future__ import annotations

import math
import types as _types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from hpcrail.config.errors import ConfigAssignmentError, ConfigValueError

#: no quantity of a model in hpcrail's units (SI or the unit in the field's name) is larger
MAX_MAGNITUDE = 1e15
_INT64 = 2 ** 63 - 1

# ---- sizes that allocate: bounded so that a typo fails at validation, not in the allocator ----------
#: longest simulated time [s] of any kind (11.6 days: longer than any train journey)
MAX_DURATION_S = 1.0e6
#: most samples of a run's time series (duration / output interval + 1)
MAX_SAMPLES = 10_000_000
#: most values of one time series of a run (samples × elements: 1.6 GB of float64)
MAX_SERIES_VALUES = 200_000_000
#: most values of all the time series of a run together (8 GB of float64)
MAX_RUN_VALUES = 1_000_000_000
#: most vehicles of a train (the partition benchmark runs 100 000)
MAX_VEHICLES = 1_000_000
#: most rows of a table (traction curves, gear curves, route sections, driver commands)
MAX_TABLE_ROWS = 100_000


def _numeric_type(ann) -> bool:
    return ann is float or ann is int


def bool_where_number(ann: Any, v: Any) -> tuple | None:
    """The location (a tuple of indices/keys, ``()`` for ``v`` itself) of a boolean inside ``v``
    where ``ann`` (a field annotation) expects a number, or None."""
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return bool_where_number(typing.get_args(ann)[0], v)
    if isinstance(v, bool):
        if _numeric_type(ann):
            return ()
        if origin in (typing.Union, _types.UnionType):
            members = [typing.get_args(a)[0] if typing.get_origin(a) is typing.Annotated else a
                       for a in typing.get_args(ann)]
            takes_bool = any(a is bool or a is Any or typing.get_origin(a) is typing.Literal and v in typing.get_args(a)
                             for a in members)
            return () if not takes_bool and any(_numeric_type(a) for a in members) else None
        return None
    if isinstance(v, (list, tuple)) and origin in (list, tuple):
        args = typing.get_args(ann)
        for i, x in enumerate(v if args else ()):
            sub = bool_where_number(args[0], x)
            if sub is not None:
                return (i,) + sub
        return None
    if isinstance(v, dict) and origin is dict:
        args = typing.get_args(ann)
        for k, x in (v.items() if len(args) == 2 else ()):
            sub = bool_where_number(args[1], x)
            if sub is not None:
                return (k,) + sub
        return None
    if origin in (typing.Union, _types.UnionType) and isinstance(v, (list, dict)):
        for a in typing.get_args(ann):
            if typing.get_origin(a) in (list, tuple, dict):
                sub = bool_where_number(a, v)
                if sub is not None:
                    return sub
    return None


def _out_of_range(v: Any, loc: tuple = ()):
    """``(location, value)`` of the first number inside ``v`` (a validated value: number, list,
    mapping) that is not finite or lies beyond the backstop range, or None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return (loc, v) if abs(v) > _INT64 else None
    if isinstance(v, float):
        return (loc, v) if not math.isfinite(v) or abs(v) > MAX_MAGNITUDE else None
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            bad = _out_of_range(x, loc + (i,))
            if bad is not None:
                return bad
    elif isinstance(v, dict):
        for k, x in v.items():
            bad = _out_of_range(x, loc + (k,))
            if bad is not None:
                return bad
    return None


class Strict(BaseModel):
    """Pydantic base of every hpcrail schema: ``extra="forbid"`` (a misspelt key is an error naming
    the allowed keys), ``validate_default=True`` (defaults pass the same validators),
    ``validate_assignment=True`` (``sc.simulation.duration_s = -1`` raises :class:`ConfigAssignmentError`, one
    line naming the field, the value and what is allowed, in a notebook as in a file),
    ``allow_inf_nan=False``, booleans refused as numbers, numbers within ±:data:`MAX_MAGNITUDE`."""

    model_config = ConfigDict(extra="forbid", validate_default=True, validate_assignment=True, allow_inf_nan=False)

    def __setattr__(self, name, value):
        """Assignments are validated like the files: a refused value raises :class:`ConfigAssignmentError`
        (one line: ``assignment: Integrator.rtol: ... (got -1); allowed: ...``), not pydantic's text."""
        missing = object()
        old = self.__dict__.get(name, missing)
        try:
            super().__setattr__(name, value)
        except ValidationError as exc:
            from hpcrail.config.loading import assignment_issues

            if old is not missing and self.__dict__.get(name, missing) is not old:
                self.__dict__[name] = old      # a model-level check refused it after the field took the value
            raise ConfigAssignmentError(assignment_issues(type(self), name, value, exc)) from None

    @model_validator(mode="before")
    @classmethod
    def _no_boolean_numbers(cls, data):
        if isinstance(data, dict):
            for name, value in data.items():
                field = cls.model_fields.get(name) if isinstance(name, str) else None
                sub = bool_where_number(field.annotation, value) if field is not None else None
                if sub is not None:
                    raise ConfigValueError("a boolean where a number is expected (YAML reads true/false, yes/no "
                                           "and on/off as booleans)", field=".".join(map(str, (name,) + sub)))
        return data

    @field_validator("*", mode="after")
    @classmethod
    def _finite_magnitudes(cls, v, info):
        bad = _out_of_range(v)
        if bad is not None:
            loc, x = bad
            field = loc or None   # relative to the field (the error is located at the field already)
            if isinstance(x, int):
                raise ConfigValueError("an integer beyond the int64 range", field=field, allowed=f"|value| ≤ {_INT64}")
            if not math.isfinite(x):
                raise ConfigValueError("NaN and ±inf are not allowed", field=field, allowed="finite numbers")
            raise ConfigValueError(f"a number beyond ±{MAX_MAGNITUDE:g} (no quantity of the models is that large)",
                                   field=field, allowed=f"|value| ≤ {MAX_MAGNITUDE:g}")
        return v


def typical(lo: float, hi: float, *, zero_ok: bool = False, units: str | None = None) -> dict:
    """``json_schema_extra`` of a field whose values usually lie within ``lo`` … ``hi`` (magnitudes, in the
    field's unit; for a list, its largest magnitude): a value outside gives a warning when the scenario is
    loaded — a value typed in another unit, metres into a ``_mm`` field — not an error (unusual designs stay
    possible).  ``zero_ok``: 0 is usual too (no slack, no cant).  ``units``: the field's CF units when its name
    does not carry them (``"1"`` for a dimensionless factor)."""
    extra: dict = {"typical": [float(lo), float(hi)]}
    if zero_ok:
        extra["typical_zero_ok"] = True
    if units is not None:
        extra["units"] = units
    return extra


def samples_issue(duration_s: float, interval_s: float, width: int = 1) -> str | None:
    """Why a run of ``duration_s`` sampled every ``interval_s`` with ``width`` values per sample
    would store too much (None if it would not)."""
    n = duration_s / interval_s + 1.0
    if n > MAX_SAMPLES:
        return f"{n:.3g} samples (duration / interval); at most {MAX_SAMPLES:.0e}"
    if n * width > MAX_SERIES_VALUES:
        return f"{n:.3g} samples of {width} values ({n * width:.3g} per series); at most {MAX_SERIES_VALUES:.0e}"
    return None


__all__ = ["Strict", "MAX_MAGNITUDE", "bool_where_number", "MAX_DURATION_S", "MAX_SAMPLES", "MAX_SERIES_VALUES",
           "MAX_RUN_VALUES",
           "MAX_VEHICLES", "MAX_TABLE_ROWS", "samples_issue", "typical"]
