"""Export a result store (a run or a sweep) to CSV, netCDF or MATLAB, with the units of every column.

* ``csv`` (pandas): one table per set of dimensions — ``scalars.csv`` (one row per scenario of a sweep, one
  row for a run: parameters, status, metrics …), then ``<dims>.csv`` in long form (one row per element of the
  dimensions, e.g. ``scenario_coupler.csv`` for per-coupler envelopes, ``time_coupler.csv`` for a run's
  coupler forces); every header is ``name [units]`` (``[1]`` for dimensionless, nothing for text).
* ``netcdf`` (xarray, netCDF-4): the dataset as it is, CF attributes (``units``, ``long_name``) kept.
* ``mat`` (``scipy.io.savemat``): one MATLAB variable per data variable and coordinate, plus the structs
  ``units``, ``long_name`` and ``dims`` (variable name -> its units, long name, comma-separated dimensions)
  and ``attributes`` (the dataset's provenance).

A selection (``DIMENSION=LABEL[,LABEL...]``, ``DIMENSION=FIRST:LAST`` inclusive, or a swept parameter
``slack_mm=10,20``) and a list of variables narrow what is written.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import xarray as xr

FORMATS = ("csv", "netcdf", "mat")
SUFFIX = {"netcdf": ".nc", "mat": ".mat"}


def parse_selection(items: list[str]) -> dict:
    """``["coupler=1:20", "slack_mm=0,10"]`` -> ``{"coupler": slice(1, 20), "slack_mm": [0, 10]}`` (numbers
    where they parse).  Raises ``ValueError`` naming the bad item and the expected form."""
    def num(text):
        text = text.strip()
        for cast in (int, float):
            try:
                return cast(text)
            except ValueError:
                pass
        return text

    out: dict = {}
    for item in items:
        dim, sep, labels = item.partition("=")
        if not sep or not dim.strip() or not labels.strip():
            raise ValueError(f"--select {item!r}: expected NAME=LABEL[,LABEL...] or NAME=FIRST:LAST, e.g. coupler=1:20 "
                             "or slack_mm=0,10")
        if ":" in labels and "," not in labels:
            a, _, b = labels.partition(":")
            out[dim.strip()] = slice(num(a) if a.strip() else None, num(b) if b.strip() else None)
        else:
            out.setdefault(dim.strip(), []).extend(num(x) for x in labels.split(","))
    return out


def select(ds: xr.Dataset, selection: dict | None = None, variables: list[str] | None = None) -> xr.Dataset:
    """``ds`` narrowed to ``selection`` (dimension labels or ranges, or values of a coordinate along a dimension,
    e.g. a swept parameter) and to ``variables`` (with the coordinates they need).  Raises ``ValueError`` naming
    what is unknown and what is allowed."""
    if variables:
        unknown = [v for v in variables if v not in ds.data_vars]
        if unknown:
            raise ValueError(f"unknown variable {', '.join(unknown)}; allowed: {', '.join(map(str, ds.data_vars))}")
        ds = ds[list(variables)]
    for name, want in (selection or {}).items():
        if name in ds.dims and name in ds.indexes:
            try:
                ds = ds.sel({name: want})
            except KeyError as exc:
                have = ds.indexes[name]
                raise ValueError(f"--select {name}: no label {exc.args[0]!r}; the labels run from {have[0]} to "
                                 f"{have[-1]} ({have.size} of them)") from None
            continue
        if name in ds.coords and ds[name].ndim == 1:
            dim = ds[name].dims[0]
            vals = np.asarray(ds[name].values)
            if isinstance(want, slice):
                keep = np.ones(vals.size, bool)
                if want.start is not None:
                    keep &= vals >= want.start
                if want.stop is not None:
                    keep &= vals <= want.stop
            else:
                keep = np.isin(vals, np.asarray(want, dtype=vals.dtype if vals.dtype.kind in "iufb" else object))
            if not keep.any():
                raise ValueError(f"--select {name}: no {dim} has {name} in {want}; its values: "
                                 f"{', '.join(map(str, np.unique(vals)[:20]))}")
            ds = ds.isel({dim: np.flatnonzero(keep)})
            continue
        names = sorted({str(d) for d in ds.dims} | {str(c) for c in ds.coords if ds[c].ndim == 1})
        raise ValueError(f"--select {name}: not a dimension or coordinate of the store; allowed: {', '.join(names)}")
    return ds


def header(name: str, attrs: dict) -> str:
    """``name [units]`` (``[1]`` for a dimensionless number, the bare name for text or unitless labels)."""
    u = attrs.get("units")
    return f"{name} [{u}]" if u not in (None, "") else name


def _text(values: np.ndarray) -> np.ndarray:
    return np.array([str(x) for x in np.asarray(values).astype(object).ravel()], dtype=object).reshape(values.shape)


def _groups(ds: xr.Dataset) -> dict:
    """Data variables grouped by their dimensions (in order of appearance)."""
    groups: dict = {}
    for name, v in ds.data_vars.items():
        groups.setdefault(tuple(v.dims), []).append(name)
    return groups


def to_csv(ds: xr.Dataset, out: Path) -> list[Path]:
    """One CSV per set of dimensions in the directory ``out`` (see the module docstring)."""
    import pandas as pd

    out.mkdir(parents=True, exist_ok=True)
    files = []
    sweep = "scenario" in ds.dims
    for dims, names in _groups(ds).items():
        sub = ds[names].load()
        if not dims or dims == ("scenario",):
            fname = "scalars.csv"
        else:
            fname = "_".join(dims) + ".csv"
        if not dims:
            cols = {}
            for n in names:
                v = np.asarray(sub[n].values)
                cols[header(n, sub[n].attrs)] = [str(v) if v.dtype.kind in "OUST" else v.item()]
            df = pd.DataFrame(cols)
        else:
            # long form: the coordinates along these dimensions first, then the variables
            idx = pd.MultiIndex.from_product([np.arange(sub.sizes[d]) for d in dims], names=list(dims))
            cols = {}
            pos = {d: idx.get_level_values(d).to_numpy() for d in dims}
            # the dimensions' own coordinates first (scenario, time, coupler ...), then the ids and parameters
            order = sorted(sub.coords, key=lambda c: (c not in dims, dims.index(c) if c in dims else 0,
                                                      c != "scenario_id"))
            for c in order:
                cv = sub.coords[c]
                if not cv.dims or not set(cv.dims) <= set(dims):
                    continue
                vals = np.asarray(cv.values)
                vals = vals[tuple(pos[d] for d in cv.dims)]
                cols[header(str(c), cv.attrs)] = _text(vals) if vals.dtype.kind in "OUST" else vals
            for n in names:
                vals = np.asarray(sub[n].transpose(*dims).values).reshape(-1)
                cols[header(n, sub[n].attrs)] = _text(vals) if vals.dtype.kind in "OUST" else vals
            df = pd.DataFrame(cols)
        path = out / fname
        df.to_csv(path, index=False)
        files.append(path)
    if sweep or ds.attrs:
        meta = out / "attributes.json"
        meta.write_text(json.dumps({k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in ds.attrs.items()},
                                   indent=1, default=str))
        files.append(meta)
    return files


def read_csv(path: str | Path):
    """A CSV written by :func:`to_csv` as ``(DataFrame with bare column names, {name: units})``."""
    import pandas as pd

    df = pd.read_csv(path, keep_default_na=True)
    units, names = {}, []
    for col in df.columns:
        m = re.fullmatch(r"(.*) \[(.*)\]", col)
        name = m.group(1) if m else col
        if m:
            units[name] = m.group(2)
        names.append(name)
    df.columns = names
    return df, units


def to_netcdf(ds: xr.Dataset, path: Path) -> Path:
    """The dataset as a netCDF-4 file (CF attributes kept; coordinate variables without ``_FillValue``)."""
    out = ds.load()
    enc = {name: {"_FillValue": None} for name in out.coords}
    out.attrs = {k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in out.attrs.items()}
    try:
        out.to_netcdf(path, encoding=enc, engine="netcdf4")
    except (ImportError, ValueError) as exc:
        if "netcdf4" not in str(exc).lower() and not isinstance(exc, ImportError):
            raise
        raise ValueError("netCDF export needs the netCDF4 package: pip install netCDF4") from None
    return path


def _mat_name(name: str) -> str:
    n = re.sub(r"\W", "_", str(name))
    if not n or not n[0].isalpha():
        n = "v_" + n
    return n[:63]


def to_mat(ds: xr.Dataset, path: Path) -> Path:
    """The dataset as a MATLAB file (``scipy.io.savemat``, format 5): a variable per data variable and coordinate,
    and the structs ``units``, ``long_name``, ``dims`` and ``attributes``."""
    from scipy.io import savemat

    out = ds.load()
    data: dict = {}
    units, long_names, dims = {}, {}, {}
    for name in list(out.coords) + list(out.data_vars):
        v = out[name]
        key = _mat_name(name)
        vals = np.asarray(v.values)
        if vals.dtype.kind in "OUST":
            vals = _text(vals).astype(str) if vals.size else np.array([], dtype="U1")
        elif vals.dtype.kind == "b":
            vals = vals.astype(np.uint8)
        data[key] = vals
        units[key] = str(v.attrs.get("units", ""))
        long_names[key] = str(v.attrs.get("long_name", name))
        dims[key] = ",".join(map(str, v.dims))
    data["units"] = units
    data["long_name"] = long_names
    data["dims"] = dims
    data["attributes"] = {_mat_name(k): (str(v) if not isinstance(v, (int, float)) else v)
                          for k, v in out.attrs.items()}
    savemat(path, data, long_field_names=True, do_compression=True, oned_as="column")
    return path


def export(ds: xr.Dataset, to: str, out: str | Path, selection: dict | None = None,
           variables: list[str] | None = None) -> list[Path]:
    """Write ``ds`` (a run or a sweep dataset, opened plainly with xarray) narrowed by ``selection`` and
    ``variables`` (:func:`select`) as ``to`` (``csv``: a directory; ``netcdf``, ``mat``: a file) at ``out``.
    Returns the paths written.  Raises ``ValueError`` for an unknown format, selection or variable."""
    if to not in FORMATS:
        raise ValueError(f"unknown export format {to!r}; allowed: {', '.join(FORMATS)}")
    ds = select(ds, selection, variables)
    out = Path(out)
    if to == "csv":
        return to_csv(ds, out)
    out.parent.mkdir(parents=True, exist_ok=True)
    return [to_netcdf(ds, out) if to == "netcdf" else to_mat(ds, out)]


def default_output(store: str | Path, to: str) -> Path:
    """``STORE_csv/``, ``STORE.nc`` or ``STORE.mat`` next to the store."""
    store = Path(store)
    stem = store.name.removesuffix(".zarr")
    return store.with_name(f"{stem}_csv") if to == "csv" else store.with_name(stem + SUFFIX[to])


__all__ = ["export", "select", "parse_selection", "to_csv", "to_netcdf", "to_mat", "read_csv", "header",
           "default_output", "FORMATS"]
