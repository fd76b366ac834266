"""The study store: the outputs the scenarios' model kinds declare, stacked along ``scenario``.

The store's variables are the union, over the valid scenarios, of the outputs their kinds declare for
them (:mod:`hpcrail.results.outputs`), selected by role: metrics, scalars, run statistics and
per-element results always, envelopes with ``outputs.envelopes``, the series named in
``outputs.series.variables`` (decimated to ``outputs.series.interval_s``); event logs never.  Every
variable carries its declaration's attributes (CF ``units``, ``long_name``, ``description``, ``role``,
display units).  Dimensions: ``scenario`` and the kinds' dimensions at their largest size over the
scenarios (shorter ones padded with fill values), plus ``time`` for series.  Coordinates along
``scenario``: ``scenario`` (index), ``scenario_id`` (hash of the canonical scenario config) and one per
swept parameter (its readable name, the dotted path in the ``sweep_path`` attribute); along the kinds'
dimensions their labels (``vehicle``/``coupler`` numbers, body or floor-point names) and static
coordinates such as ``vehicle_type`` when every scenario has the same.

Concurrency protocol (no locks needed):

* the driver creates the whole store up front (metadata, coordinates, ``status = "pending"``) in a
  temporary directory and renames it into place, so a store is never half-created;
* the store is chunked along ``scenario`` by the batch size; a task owns its batch, i.e. whole
  chunks, and writes them with ``to_zarr(region=...)`` (zarr writes each chunk file atomically);
* a task sets ``done`` for its scenarios only *after* their data is written: a task killed at any
  point leaves its scenarios not done, and re-running them rewrites the same chunks;
* metadata never changes during the run; it is consolidated at creation and again at the end.

Stores are zarr format 2 with consolidated metadata, like single-run stores.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import uuid
from pathlib import Path

import numpy as np
import xarray as xr

from hpcrail import kinds
from hpcrail.results.dataset import SCHEMA_VERSION, TIME_ATTRS
from hpcrail.results.outputs import RUN_OUTPUTS, SUCCESS, SWEEP_ROLES, Output

SWEEP_FORMAT = "2"
STATUS_PENDING = "pending"
#: statuses set by the sweep itself (not an integrator): bad overrides, exceptions while building
STATUS_INVALID = "invalid"
STATUS_ERROR = "error"

#: target size of a series chunk [bytes]
SERIES_CHUNK_BYTES = 16 * 2 ** 20

#: text variables are fixed-width unicode (``<U``) so that they read back as ordinary numpy strings (a
#: variable-length zarr string reads back as numpy's StringDType, which ``Dataset.where`` cannot hold);
#: width of ``status`` and ``scenario_id``, and of ``message`` (longer messages are cut, see :func:`fit_text`)
STATUS_WIDTH = 16
MESSAGE_WIDTH = 512
_DTYPES = {"float64": np.float64, "int64": np.int64, "int8": np.int8, "str": f"<U{MESSAGE_WIDTH}"}


def fit_text(text: str, width: int = MESSAGE_WIDTH) -> str:
    """``text`` cut to ``width`` characters (ending in " [...]" when cut) for a fixed-width variable."""
    text = str(text)
    return text if len(text) <= width else text[:width - 6] + " [...]"


def parameter_units(path: str) -> str | None:
    """CF/udunits units from the field-name suffix of a dotted path (``slack_mm`` -> ``mm``), None if the
    name carries none (see :func:`hpcrail.sweep.spec.parameter_units`)."""
    from hpcrail.sweep.spec import parameter_units as units

    return units(path)


@dataclasses.dataclass
class Layout:
    """Shape of a study store: dimension sizes, chunking and variables (dims, dtype, attrs)."""

    n_scenarios: int
    batch_size: int
    sizes: dict                   #: dimension -> size (the kinds' dimensions and ``time``)
    times: np.ndarray | None
    envelopes: bool
    series: list
    variables: dict  # name -> (dims, dtype, attrs)
    dims: dict = dataclasses.field(default_factory=dict)   #: dimension -> its Dim declaration
    kept: dict = dataclasses.field(default_factory=dict)   #: "<dim>_kept" -> (dim, first, last) of the series kept

    def _sizes(self, scenario: int) -> dict:
        return {"scenario": scenario, **self.sizes}

    def chunks(self, name: str) -> tuple:
        dims, dtype, _ = self.variables[name]
        sizes = self._sizes(self.batch_size)
        ch = {d: max(1, sizes[d]) for d in dims}
        if "time" in dims:
            width = np.prod([ch[d] for d in dims if d not in ("time",)])
            ch["time"] = int(max(1, min(sizes["time"], SERIES_CHUNK_BYTES // (8 * width))))
        return tuple(ch[d] for d in dims)

    def shape(self, name: str) -> tuple:
        sizes = self._sizes(self.n_scenarios)
        return tuple(sizes[d] for d in self.variables[name][0])

    def batches(self) -> list[tuple[int, int]]:
        """``(start, stop)`` of every batch: batch k covers scenarios [k·B, min((k+1)·B, S))."""
        B, S = self.batch_size, self.n_scenarios
        return [(a, min(a + B, S)) for a in range(0, S, B)]

    def fill(self, name: str):
        dims, dtype, _ = self.variables[name]
        if np.dtype(dtype).kind in "OU":
            return STATUS_PENDING if name == "status" else ""
        if np.dtype(dtype).kind in "iu":
            return 0
        return np.nan

    def empty(self, name: str, n: int) -> np.ndarray:
        """Fill values for ``n`` scenarios of variable ``name``."""
        dims, dtype, _ = self.variables[name]
        shape = (n,) + self.shape(name)[1:]
        return np.full(shape, self.fill(name), dtype=dtype)


def series_times(max_duration: float, interval: float) -> np.ndarray:
    """Sample times of kept series: 0, Δ, 2Δ, … ≤ the longest duration [s]."""
    n = int(np.floor(max_duration / interval + 1e-9))
    return np.round(interval * np.arange(n + 1), 12)


def _variable(o: Output, note: str = "") -> tuple:
    attrs = o.attrs()
    if note:
        attrs["description"] = f"{attrs['description']} {note}"
    return (("scenario",) + o.dims, _DTYPES[o.dtype], attrs)


def stored(o: Output, outputs) -> bool:
    """Whether the sweep options ``outputs`` (:class:`~hpcrail.sweep.spec.Outputs`) keep output ``o``."""
    if o.role in SWEEP_ROLES:
        return True
    if o.role == "envelope":
        return bool(outputs.envelopes)
    if o.role == "series":
        return outputs.series is not None and o.name in outputs.series.variables
    return False


def make_layout(exp, batch_size: int) -> Layout:
    """Layout of the store of expansion ``exp`` (see the module docstring).  Raises ``ValueError`` when
    two kinds of the sweep declare one output name with different dimensions or types."""
    out = exp.spec.outputs
    valid = [p for p in exp.points if p.error is None]
    v: dict = {}
    v["status"] = (("scenario",), f"<U{STATUS_WIDTH}", RUN_OUTPUTS[0].attrs())
    v["message"] = (("scenario",), f"<U{MESSAGE_WIDTH}", RUN_OUTPUTS[1].attrs())
    v["done"] = (("scenario",), np.int8, {"long_name": "scenario done", "description": "One once the scenario's "
                                          "results are written (whatever its status), zero while it is pending.",
                                          "flag_values": np.array([0, 1], dtype=np.int8),
                                          "flag_meanings": "pending done"})
    for o in RUN_OUTPUTS[2:]:
        v[o.name] = _variable(o)
    sizes: dict = {}
    dims: dict = {}
    series = []
    note = f"Sampled every {out.series.interval_s:g} s." if out.series else ""
    select = (out.series.select or {}) if out.series else {}
    kept = {f"{d}_kept": (d, int(r[0]), int(r[1])) for d, r in select.items()}
    for kname in sorted({p.kind for p in valid}):
        kind = kinds.get(kname)
        pts = [p for p in valid if p.kind == kname]
        used = frozenset().union(*[p.outputs for p in pts])
        for d in kind.dims:
            dims.setdefault(d.name, d)
        for p in pts:
            for d, n in p.sizes.items():
                sizes[d] = max(sizes.get(d, 0), n)
        for o in kind.outputs:
            if o.name not in used or not stored(o, out):
                continue
            var = _variable(o, note if o.role == "series" else "")
            if o.role == "series" and any(d in select for d in o.dims):
                sel = ", ".join(f"{d} {a}..{b}" for k_, (d, a, b) in kept.items() if d in o.dims)
                var = (tuple(f"{d}_kept" if d in select else d for d in var[0]), var[1],
                       {**var[2], "description": f"{var[2]['description']} Kept for {sel} only."})
            if o.name in v and (v[o.name][0], v[o.name][1]) != var[:2]:
                raise ValueError(f"output {o.name!r} is declared with different dimensions or types by the kinds "
                                 "of this sweep")
            v[o.name] = var
            if o.role == "series" and o.name not in series:
                series.append(o.name)
    times = None
    if series:
        times = series_times(max([p.duration for p in valid] + [0.0]), out.series.interval_s)
        sizes["time"] = len(times)
    used = {d for dims_, _dt, _a in v.values() for d in dims_}
    kept = {k: r for k, r in kept.items() if k in used}
    for k, (d, a, b) in kept.items():
        sizes[k] = b - a + 1
    return Layout(n_scenarios=exp.size, batch_size=batch_size, sizes=sizes, times=times, envelopes=out.envelopes,
                  series=series, variables=v, dims=dims, kept=kept)


def _coordinates(exp, layout: Layout) -> dict:
    S = exp.size
    c = {"scenario": ("scenario", np.arange(S, dtype=np.int64), {"long_name": "scenario index in the sweep"}),
         "scenario_id": ("scenario", np.array([p.id for p in exp.points], dtype=f"<U{STATUS_WIDTH}"),
                         {"long_name": "scenario id", "description": "Hash of the canonical scenario config (hpcrail "
                          "validate prints it); x-prefixed for scenarios whose overrides do not validate."})}
    for j, par in enumerate(exp.parameters):
        vals = [p.values[j] for p in exp.points]
        if all(isinstance(x, bool) for x in vals):
            arr = np.array(vals, dtype=bool)
        elif all((isinstance(x, int) and not isinstance(x, bool)) for x in vals):
            arr = np.array(vals, dtype=np.int64)
        elif all((isinstance(x, (int, float)) and not isinstance(x, bool)) or x is None for x in vals):
            arr = np.array([np.nan if x is None else float(x) for x in vals], dtype=np.float64)
        else:
            arr = np.array(["" if x is None else str(x) for x in vals], dtype=str)
        attrs = {"long_name": par.label, "description": f"Swept parameter {par.path} ({par.source}).",
                 "sweep_path": par.path, "sweep_source": par.source}
        if par.units:
            attrs["units"] = par.units
        c[par.name] = ("scenario", arr, attrs)
    used_dims = {d for dims, _dt, _a in layout.variables.values() for d in dims}
    valid = [p for p in exp.points if p.error is None]
    for name, d in layout.dims.items():
        n = layout.sizes.get(name, 0)
        if name not in used_dims or not n or d.labels == "none":
            continue
        labels = None
        if d.labels == "names":
            have = {p.coords[name][1] for p in valid if name in p.coords}
            if len(have) == 1 and len(next(iter(have))) == n:
                labels = np.asarray(next(iter(have)), dtype=str)
        if labels is None:
            attrs = {"long_name": d.long_name if d.labels == "index" else f"{d.long_name} position",
                     **({} if d.labels == "index" else {"description": "Position of the element: the scenarios' "
                                                                      "labels differ."})}
            c[name] = (name, np.arange(1, n + 1), attrs)
        else:
            c[name] = (name, labels, {"long_name": d.long_name})
    # static coordinates that every scenario shares (vehicle_type, connection_type, body_x ...)
    if valid:
        names = set.intersection(*[set(p.coords) for p in valid])
        for cname in sorted(names):
            if cname in c:
                continue
            dim, values, attrs = valid[0].coords[cname]
            if dim not in c or len(values) != layout.sizes.get(dim, -1):
                continue
            if all(p.coords[cname][1] == values for p in valid):
                arr = np.asarray(values)
                c[cname] = (dim, arr.astype(str) if arr.dtype.kind in "OU" else arr, dict(attrs))
    for k, (d, a, b) in layout.kept.items():
        long_name = layout.dims[d].long_name if d in layout.dims else d
        c[k] = (k, np.arange(a, b + 1), {"long_name": f"{long_name} (series kept)", "description": f"The {d}s "
                                         f"{a}..{b} whose series the sweep kept (outputs.series.select)."})
    if layout.times is not None:
        c["time"] = ("time", layout.times, dict(TIME_ATTRS))
    return c


def _value_type(par) -> str:
    """How a parameter's coordinate values map back to override values: ``file`` (component files: their
    trees in ``sweep_file_values``), ``json`` (mappings or lists, stored as JSON text) or ``plain``."""
    levels = par.levels or []
    if any(isinstance(v, str) and v.lower().endswith((".yaml", ".yml")) for v in levels):
        return "file"
    if any(isinstance(v, (dict, list)) for v in levels):
        return "json"
    return "plain"


def study_attrs(exp, layout: Layout) -> dict:
    """Provenance and sweep description attributes of the store (strings and numbers only)."""
    from hpcrail.config.files import input_files_record
    from hpcrail.config.loading import canonical_yaml
    from hpcrail.provenance import provenance_attrs

    spec = exp.spec
    base_canon = None
    base_files = "[]"
    try:
        base_sc = kinds.validate_document(exp.base_doc)
        base_canon = canonical_yaml(base_sc)
        base_files = input_files_record(base_sc)
    except Exception:  # noqa: BLE001 - validated during expansion; never fatal for attributes
        base_canon = ""
    used = sorted({p.kind for p in exp.points if p.error is None})
    a = dict(provenance_attrs())
    a.update({
        "title": f"hpcrail sweep: {exp.name}",
        "Conventions": "CF-1.10",
        "hpcrail_schema_version": SCHEMA_VERSION,
        "hpcrail_sweep_format": SWEEP_FORMAT,
        "model": ",".join(used),
        "sweep_name": exp.name,
        "sweep_description": spec.description,
        "spec_file": str(exp.spec_file),
        "spec_yaml": exp.spec_text,
        "cli_set": json.dumps(list(exp.cli_set)),
        "sweep_fingerprint": exp.fingerprint(),
        "design": spec.design,
        "seed": int(spec.seed),
        "samples": int(spec.samples or 0),
        "second_order": int(spec.second_order),
        "n_scenarios": int(exp.size),
        "batch_size": int(layout.batch_size),
        "parameters": json.dumps([{"path": p.path, "name": p.name, "source": p.source, "label": p.label,
                                   "units": p.units, "value_type": _value_type(p)} for p in exp.parameters]),
        # the trees of component files given as values: hpcrail scenario / rerun rebuild members from the store
        "sweep_file_values": json.dumps({v: tree for (_where, v), tree in exp.file_values.items()}, default=str),
        "outputs": json.dumps(spec.outputs.model_dump()),
        "makeup": json.dumps(spec.makeup.model_dump()) if spec.makeup is not None else "",
        "budget": json.dumps(spec.budget.model_dump()),
        "base_file": str(exp.spec_file.parent / spec.base),
        "base_config_hash": exp.base_hash,
        "base_config_yaml": base_canon,
        "base_input_files": base_files,
        "sign_convention": "; ".join(kinds.get(k).sign_convention for k in used),
    })
    return a


def _template(exp, layout: Layout) -> xr.Dataset:
    import dask.array as da

    data = {}
    for name, (dims, dtype, attrs) in layout.variables.items():
        shape = layout.shape(name)
        if len(dims) > 1:  # envelopes / series: metadata only, chunks appear when tasks write them
            arr = da.full(shape, layout.fill(name), dtype=dtype, chunks=layout.chunks(name))
        else:
            arr = np.full(shape, layout.fill(name), dtype=dtype)
        data[name] = (dims, arr, attrs)
    ds = xr.Dataset(data, coords=_coordinates(exp, layout))
    ds.attrs.update(study_attrs(exp, layout))
    return ds


def create_store(exp, path: str | Path, layout: Layout) -> Path:
    """Create the whole store of ``exp`` at ``path`` (all scenarios pending).

    Built in a temporary directory next to ``path`` and renamed into place, so an interrupted
    creation never leaves a half-made store.  Raises ``FileExistsError`` if ``path`` exists.
    """
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists")
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.creating")
    ds = _template(exp, layout)
    enc = {name: {"chunks": layout.chunks(name)} for name in layout.variables}
    for name in ds.coords:
        enc[name] = {"_FillValue": None}   # CF 2.5.1: coordinate variables have no _FillValue
        if ds[name].dims == ("scenario",):
            enc[name]["chunks"] = (max(1, exp.size),)
    try:
        ds.to_zarr(tmp, mode="w-", compute=False, encoding=enc, zarr_format=2, consolidated=True)
        os.rename(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return path


def repair_coordinates(exp, path: str | Path, layout: Layout, names) -> None:
    """Rewrite the per-scenario coordinates ``names`` (scenario ids, parameter values) of a store of
    ``exp`` from the expansion (their chunks could not be read)."""
    import zarr

    g = zarr.open_group(str(path), mode="r+", zarr_format=2)
    coords = _coordinates(exp, layout)
    for name in names:
        if name in coords and coords[name][0] == "scenario":
            vals = coords[name][1]
            g[name][:] = vals.astype(str) if vals.dtype == object else vals


def copy_scenarios(old: str | Path, new: str | Path, layout: Layout, pairs: np.ndarray, block: int = 4096) -> None:
    """Copy finished scenarios from the store ``old`` into the new store ``new`` (of ``layout``) and mark them
    done there: ``pairs`` int64[k, 2] of (index in ``old``, index in ``new``).  Every variable both stores have
    is copied row by row; the other dimensions are cut or padded with fill values to the new sizes (a study
    grown with longer trains or runs); variables only the new store has keep their fill values."""
    import zarr

    go = zarr.open_group(str(old), mode="r", zarr_format=2)
    gn = zarr.open_group(str(new), mode="r+", zarr_format=2)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    pairs = pairs[np.argsort(pairs[:, 1], kind="stable")]
    names = [n for n in layout.variables if n != "done" and n in go]
    for a in range(0, len(pairs), block):
        part = pairs[a:a + block]
        io, inew = part[:, 0], part[:, 1]
        for name in names:
            src = go[name]
            dims, dtype, _ = layout.variables[name]
            vals = src.get_orthogonal_selection((io,) + (slice(None),) * (src.ndim - 1))
            vals = as_strings(vals).astype(dtype) if np.dtype(dtype).kind in "OU" else np.asarray(vals)
            dst = layout.empty(name, len(part))
            if vals.ndim != dst.ndim:
                continue
            cut = tuple(slice(0, min(x, y)) for x, y in zip(vals.shape[1:], dst.shape[1:]))
            dst[(slice(None),) + cut] = vals[(slice(None),) + cut]
            gn[name].set_orthogonal_selection((inew,) + (slice(None),) * (dst.ndim - 1), dst)
        gn["done"].set_orthogonal_selection((inew,), np.ones(len(part), dtype=np.int8))


def write_region(path: str | Path, layout: Layout, start: int, stop: int, arrays: dict) -> None:
    """Write whole chunks ``[start, stop)`` along ``scenario`` of every variable in ``arrays``
    (name -> numpy array of shape (stop-start, ...)), then — in a second write — mark them done.
    ``arrays`` must not contain ``done``."""
    if start % layout.batch_size or not (stop - start == layout.batch_size or stop == layout.n_scenarios):
        # a task owns whole chunks: two writers never share one (no read-modify-write race; zarr-python
        # issue 3682 lost data exactly so, with dask chunks smaller than shards)
        raise ValueError(f"region [{start}, {stop}) is not one whole batch of {layout.batch_size} scenarios")
    region = {"scenario": slice(start, stop)}
    data = {name: (layout.variables[name][0], arr) for name, arr in arrays.items() if name != "done"}
    xr.Dataset(data).to_zarr(path, region=region, mode="r+", consolidated=False, zarr_format=2)
    done = xr.Dataset({"done": (("scenario",), np.ones(stop - start, dtype=np.int8))})
    done.to_zarr(path, region=region, mode="r+", consolidated=False, zarr_format=2)


def read_region(path: str | Path, layout: Layout, start: int, stop: int) -> dict:
    """Current values of every variable for scenarios ``[start, stop)`` (numpy arrays)."""
    import zarr

    g = zarr.open_group(str(path), mode="r", zarr_format=2)
    out = {}
    for name, (dims, dtype, _a) in layout.variables.items():
        arr = g[name][start:stop]
        out[name] = as_strings(arr).astype(dtype) if np.dtype(dtype).kind in "OU" else np.array(arr)
    return out


def open_group(path: str | Path, mode: str = "r"):
    import zarr

    return zarr.open_group(str(path), mode=mode, zarr_format=2)


def read_state(path: str | Path) -> dict:
    """``{"attrs", "scenario_id", "done", "status", "corrupt"}`` of a study store (fast: zarr, no xarray).

    Every per-scenario variable is read chunk by chunk: a chunk that cannot be read (a corrupted or
    truncated file) is listed in ``corrupt`` (variable -> ``[(start, stop), ...]``) and its scenarios
    count as pending (``done`` false, ``status`` "pending"), so that a resume recomputes and rewrites
    them.  Raises ``ValueError`` if ``path`` is not an hpcrail sweep store or its metadata cannot be
    read.
    """
    try:
        g = open_group(path)
        attrs = dict(g.attrs)
    except Exception as exc:  # noqa: BLE001 - any unreadable store gets the same clear message
        raise ValueError(f"{path} is not an hpcrail sweep store (not a readable zarr store: {type(exc).__name__})") from None
    if "sweep_fingerprint" not in attrs:
        raise ValueError(f"{path} is not an hpcrail sweep store (no sweep_fingerprint attribute)")
    n = int(attrs.get("n_scenarios", 0))
    corrupt: dict = {}

    def per_scenario(name, dtype, fill):
        out = np.full(n, fill, dtype=dtype)
        try:
            arr = g[name]
            step = int(arr.chunks[0]) or n
        except Exception:  # noqa: BLE001 - its metadata is unreadable: every scenario affected
            corrupt.setdefault(name, []).append((0, n))
            return out
        try:   # the whole array at once (fast); chunk by chunk only to find what cannot be read
            vals = arr[:]
            out[:] = as_strings(vals) if dtype == object else np.asarray(vals)
            return out
        except Exception:  # noqa: BLE001
            pass
        for a in range(0, n, step):
            b = min(n, a + step)
            try:
                vals = arr[a:b]
                out[a:b] = as_strings(vals) if dtype == object else np.asarray(vals)
            except Exception:  # noqa: BLE001 - a corrupted chunk: recorded, its scenarios pending
                corrupt.setdefault(name, []).append((a, b))
        return out

    scenario_id = per_scenario("scenario_id", object, "")
    done = per_scenario("done", np.int8, 0).astype(bool)
    status = per_scenario("status", object, STATUS_PENDING)
    for name, arr in _scenario_arrays(g, n):
        if name not in ("scenario_id", "done", "status"):
            numeric = arr.dtype.kind in "iufb"
            per_scenario(name, arr.dtype if numeric else object, 0 if numeric else "")
    for name, ranges in corrupt.items():
        if name in coordinate_names(attrs):
            continue   # coordinates are rewritten from the spec on resume (see hpcrail.sweep.runner)
        for a, b in ranges:
            done[a:b] = False
            status[a:b] = STATUS_PENDING
    return {"attrs": attrs, "scenario_id": scenario_id, "done": done, "status": status, "corrupt": corrupt}


def _scenario_arrays(g, n: int):
    """``(name, array)`` of every one-dimensional array along ``scenario`` (arrays whose metadata cannot
    be read are listed too, as None, and reported by :func:`read_state`)."""
    for name in sorted(g.array_keys()):
        try:
            arr = g[name]
        except Exception:  # noqa: BLE001
            continue
        if len(arr.shape) == 1 and arr.shape[0] == n and name != "scenario":
            yield name, arr


def coordinate_names(attrs: dict) -> set:
    """Names of a store's coordinates along ``scenario`` besides its index (written once, at creation):
    the scenario ids and the swept parameters."""
    try:
        params = {p["name"] for p in json.loads(attrs.get("parameters", "[]"))}
    except (TypeError, ValueError, KeyError):
        params = set()
    return params | {"scenario_id"}


def corrupt_summary(state: dict) -> str:
    """One line about unreadable chunks of a store state ("" if none)."""
    c = state.get("corrupt") or {}
    if not c:
        return ""
    n = len({i for ranges in c.values() for a, b in ranges for i in range(a, b)})
    return (f"{sum(len(r) for r in c.values())} unreadable chunk(s) in {', '.join(sorted(c))} "
            f"({n} scenarios)")


def as_strings(arr) -> np.ndarray:
    """A numpy array of Python ``str`` objects from a zarr string array (StringDType or object)."""
    return np.array([str(x) for x in np.asarray(arr).astype(object)], dtype=object)


def counts(state: dict) -> dict:
    """Done / failed / pending counts and the count of every status of a store state."""
    done, status = state["done"], state["status"]
    ok = done & np.isin(status, SUCCESS)
    by = {}
    for s in np.unique(status[done]):
        by[str(s)] = int(np.sum(status[done] == s))
    return {"total": int(done.size), "done": int(done.sum()), "completed": int(ok.sum()),
            "failed": int((done & ~ok).sum()), "pending": int((~done).sum()), "by_status": by}


def counts_of(path: str | Path) -> dict:
    """:func:`counts` of a store from its ``done`` and ``status`` arrays only (what a progress line
    re-reads during a run; :func:`read_state` also checks every other array).  Raises on unreadable
    chunks."""
    g = open_group(path)
    done = np.asarray(g["done"][:]).astype(bool)
    status = as_strings(g["status"][:])
    return counts({"done": done, "status": status})


def finalize(path: str | Path, extra_attrs: dict | None = None) -> None:
    """Update attributes and consolidate the metadata (end of a run); remove stale ``.partial``
    files left by writers killed mid-write (zarr writes a chunk to a temporary file, then renames)."""
    import zarr

    g = open_group(path, mode="r+")
    if extra_attrs:
        g.attrs.update(extra_attrs)
    zarr.consolidate_metadata(str(path), zarr_format=2)
    for p in Path(path).rglob("*.partial"):
        if re.search(r"\.[0-9a-f]{32}\.partial$", p.name):
            p.unlink(missing_ok=True)


__all__ = ["Layout", "make_layout", "create_store", "copy_scenarios", "write_region", "read_region", "read_state", "counts", "counts_of",
           "corrupt_summary", "repair_coordinates",
           "finalize", "series_times", "stored", "SUCCESS", "STATUS_PENDING", "STATUS_INVALID", "STATUS_ERROR"]
