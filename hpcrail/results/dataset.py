"""The one builder of run datasets (``hpcrail run``, ``hpcrail sweep``, the Python API), for every kind.

A kind's run returns a :class:`~hpcrail.results.outputs.RunResult` — plain arrays of the outputs it
declares — and :func:`build_dataset` makes the xarray Dataset: dimension ``time`` [s] for series,
the kind's dimensions (``vehicle``, ``coupler``, ``body`` …) with their coordinates, every declared
output with its CF ``units``, ``long_name`` and hpcrail attributes, the run outputs (``status``,
``message``, ``wall_time``, ``nsteps`` …) and, once, the provenance and configuration attributes.

It checks that every output the kind declares for the scenario is present with its declared
dimensions, that nothing undeclared is there, and that a completed run has finite values wherever
the declaration does not say NaN is legitimate; any mismatch raises
:class:`~hpcrail.results.outputs.OutputError` naming the kind and the output (a sweep records the
scenario as ``error`` with that message).
"""
from __future__ import annotations

import json

import numpy as np
import xarray as xr

from hpcrail.results.outputs import RUN_OUTPUTS, OutputError, RunResult

SCHEMA_VERSION = "3"

#: the ``time`` coordinate's attributes: seconds of simulated time from the start of the run.  It is an
#: elapsed time, not a calendar time: CF's ``standard_name: time`` and ``axis: T`` require units of the
#: form "s since <epoch>" (CF 1.10 §4.4), which xarray would decode into dates — so neither is set
TIME_ATTRS = {"units": "s", "long_name": "simulated time",
              "description": "Simulated time from the start of the run (elapsed seconds, not a calendar time)."}


def to_json(value) -> str:
    """``value`` (dicts, lists, numpy scalars) as a JSON string (numpy scalars as numbers)."""
    def default(o):
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
        return str(o)

    return json.dumps(value, default=default, sort_keys=True)


def _np_dtype(dtype: str):
    return {"float64": np.float64, "int64": np.int64, "int8": np.int8, "str": str}[dtype]


def dimension_coords(kind, shape, time=None) -> dict:
    """Coordinates of a run dataset: ``time`` (if given), every ``index`` dimension of the kind (1..n)
    and the scenario's static coordinates (``shape.coords``)."""
    c = {}
    if time is not None:
        c["time"] = ("time", np.asarray(time, float), dict(TIME_ATTRS))
    for d in kind.dims:
        n = shape.sizes.get(d.name)
        if n is not None and d.labels == "index":
            c[d.name] = (d.name, np.arange(1, n + 1), {"long_name": d.long_name})
    for name, (dim, values, attrs) in shape.coords.items():
        arr = np.asarray(values)
        if arr.dtype.kind in "OU":
            arr = arr.astype(str)
        c[name] = (dim, arr, dict(attrs))
    return c


def check_values(kind, scenario, result: RunResult, shape) -> list:
    """The declared outputs of ``scenario`` (in declaration order), after checking ``result`` against
    them; raises :class:`OutputError` naming the kind and the output."""
    declared = [o for o in kind.outputs if o.applies(scenario)]
    names = {o.name for o in declared}
    missing = [o.name for o in declared if o.name not in result.values]
    if missing:
        raise OutputError(f"kind {kind.name!r}: its run did not produce the declared output(s) "
                          f"{', '.join(missing)}")
    extra = sorted(set(result.values) - names)
    if extra:
        raise OutputError(f"kind {kind.name!r}: its run produced undeclared output(s) {', '.join(extra)} "
                          "(declare them in the kind's outputs, or check their condition)")
    sizes = dict(shape.sizes)
    if result.time is not None:
        sizes["time"] = len(result.time)
    for o in declared:
        v = result.values[o.name]
        shp = np.shape(v)
        if len(shp) != len(o.dims):
            raise OutputError(f"kind {kind.name!r}: output {o.name!r} has {len(shp)} dimensions, declared "
                              f"{o.dims!r}")
        for d, n in zip(o.dims, shp):
            if d in sizes and sizes[d] != n:
                raise OutputError(f"kind {kind.name!r}: output {o.name!r} has {n} entries along {d!r}, the "
                                  f"scenario has {sizes[d]}")
            sizes.setdefault(d, n)   # log dimensions: their length comes from the run
        if result.run.success and not o.missing and o.dtype != "str":
            a = np.asarray(v, dtype=float)
            if a.size and not np.all(np.isfinite(a)):
                raise OutputError(f"kind {kind.name!r}: output {o.name!r} is not finite in a completed run "
                                  f"({int(np.sum(~np.isfinite(a)))} of {a.size} values)")
    return declared


def build_dataset(kind, scenario, result: RunResult, *, config_yaml: str | None = None,
                  attrs: bool = True) -> xr.Dataset:
    """The run dataset of ``scenario`` from its kind's ``result`` (see the module docstring).

    ``kind`` is the scenario's :class:`~hpcrail.kinds.descriptor.ModelKind`.  ``attrs=False`` leaves
    out the provenance and configuration attributes (a sweep stores them once per study; they cost
    a git call and a YAML dump) and keeps ``status``, ``status_message`` and ``warnings``.
    Raises :class:`OutputError` when the result does not match the declarations.
    """
    shape = kind.shape(scenario)
    declared = check_values(kind, scenario, result, shape)
    dv = {}
    run_values = result.run.values()
    for o in RUN_OUTPUTS:
        value = run_values[o.name]
        dv[o.name] = xr.DataArray(np.asarray(value, dtype=_np_dtype(o.dtype)) if o.dtype != "str" else str(value),
                                  attrs=o.attrs())
    for o in declared:
        a = o.attrs()
        a.update(result.value_attrs.get(o.name, {}))
        v = result.values[o.name]
        arr = np.asarray(v, dtype=str) if o.dtype == "str" else np.asarray(v, dtype=_np_dtype(o.dtype))
        dv[o.name] = (o.dims, arr, a)
    coords = dimension_coords(kind, shape, result.time)
    for name, (dim, values, a) in result.coords.items():
        coords[name] = (dim, np.asarray(values), dict(a))
    # every variable goes into one Dataset constructor: assigning variables one by one costs ~50 ms of
    # xarray merging per run, which a sweep of thousands of short scenarios pays per scenario
    ds = xr.Dataset(dv, coords=coords)
    warnings = "\n".join(result.warnings)
    run = result.run
    if not attrs:
        ds.attrs.update({"status": run.status, "status_message": run.message, "warnings": warnings})
        return ds
    ds.attrs.update(provenance(kind, scenario, run, config_yaml))
    ds.attrs.update(result.attrs)
    ds.attrs["warnings"] = warnings
    return ds


def provenance(kind, scenario, run, config_yaml: str | None = None) -> dict:
    """Provenance and configuration attributes of one run (the only place they are written)."""
    from hpcrail.config.files import input_files_record
    from hpcrail.config.loading import canonical_yaml, config_hash
    from hpcrail.provenance import provenance_attrs

    a = dict(provenance_attrs())
    a.update({
        "title": f"hpcrail {kind.title}: {scenario.name}",
        "Conventions": "CF-1.10",
        "hpcrail_schema_version": SCHEMA_VERSION,
        "model": kind.name,
        "source": kind.source,
        "scenario_name": scenario.name,
        "scenario_description": scenario.description,
        "config_yaml": config_yaml if config_yaml is not None else canonical_yaml(scenario),
        "config_hash": config_hash(scenario),
        "input_files": input_files_record(scenario),
        "integrator": run.method,
        "integrator_settings": to_json(scenario.integrator.model_dump(mode="json")),
        "integrator_stats": to_json(run.stats),
        "status": run.status,
        "status_message": run.message,
        "wall_time_s": float(run.wall_time),
        "compile_time_s": float(run.compile_time),
        "sign_convention": kind.sign_convention,
    })
    return a


__all__ = ["build_dataset", "check_values", "dimension_coords", "provenance", "SCHEMA_VERSION", "TIME_ATTRS",
           "to_json"]
