"""``ds.hpcrail``: notebook helpers for sweep stores and single runs.

>>> import hpcrail
>>> ds = hpcrail.open_sweep("study.zarr")      # parameters as a MultiIndex along ``scenario``
>>> ds.hpcrail.metrics_table()                 # one row per scenario: parameters, status, metrics
>>> ds.hpcrail.summary()                       # per metric: min / median / max and where the max is
>>> ds.hpcrail.grid().max_draft_force.plot()    # grid designs: one dimension per parameter
>>> ds.hpcrail.sobol()                         # saltelli designs: Sobol' indices (SALib)
>>> run = hpcrail.open_run("train4.zarr")
>>> run.hpcrail.plot_run()                     # the run figures of its kind (matplotlib figures)

Every method works on grid, zip and sampled (random, lhs, sobol, saltelli) sweep stores, opened with
:func:`hpcrail.analysis.open_sweep` or plain ``xr.open_zarr``, indexed or not.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from xarray.indexes import PandasMultiIndex

from hpcrail.results.outputs import SUCCESS
from hpcrail.results.units import clip_magnitude, pretty_units, to_display


def as_strings(da) -> np.ndarray:
    """The values of a text variable as Python ``str`` objects (fixed-width, object or StringDType)."""
    values = da.values if isinstance(da, xr.DataArray) else da
    return np.array([str(x) for x in np.asarray(values).astype(object).ravel()], dtype=object).reshape(
        np.shape(values))


def _column(name: str, attrs: dict, display_units: bool) -> str:
    units = attrs.get("display_units" if display_units else "units", attrs.get("units", ""))
    u = pretty_units(units)
    return f"{name} [{u}]" if u else name


class NearestMultiIndex(PandasMultiIndex):
    """The sweep's MultiIndex of swept parameters, with ``sel(..., method="nearest", tolerance=...)``: each
    numeric parameter's label is moved to its nearest level, then the levels are selected exactly
    (``ds.sel(slack_mm=11, method="nearest")`` selects the scenarios of the 10 mm level).  pandas' MultiIndex
    has no nearest lookup (xarray raises "multi-index does not support ``method``")."""

    def sel(self, labels, method=None, tolerance=None):
        if method is None and tolerance is None:
            return super().sel(labels)
        if method != "nearest":
            raise ValueError(f"the sweep's parameter index supports method='nearest' only, not {method!r}")
        snapped = {}
        for name, want in labels.items():
            if name in self.index.names:
                levels = np.asarray(self.index.levels[self.index.names.index(name)])
                if levels.dtype.kind in "iuf" and levels.size:
                    x = np.asarray(want, dtype=float)
                    j = np.abs(levels[None, :].astype(float) - x.reshape(-1, 1)).argmin(axis=1)
                    if tolerance is not None:
                        far = np.abs(levels[j] - x.reshape(-1)) > tolerance
                        if far.any():
                            raise KeyError(f"{name}: no level within {tolerance} of {x.reshape(-1)[far].tolist()}; "
                                           f"levels: {levels.tolist()[:20]}")
                    want = levels[j][0] if x.ndim == 0 else levels[j].reshape(x.shape)
            snapped[name] = want
        return super().sel(snapped)


@xr.register_dataset_accessor("hpcrail")
class HpcrailAccessor:
    def __init__(self, ds: xr.Dataset):
        self._ds = ds

    # -- structure ---------------------------------------------------------------------------
    @property
    def is_sweep(self) -> bool:
        """True for a sweep store (a ``scenario`` dimension), False for a single run."""
        return "scenario" in self._ds.dims

    @property
    def parameters(self) -> list[str]:
        """Coordinate names of the swept parameters, in spec order."""
        import json

        ds = self._ds
        try:
            names = [p["name"] for p in json.loads(ds.attrs.get("parameters", "[]"))]
        except (TypeError, ValueError, KeyError):
            names = []
        names = [n for n in names if n in ds.coords or n in self._level_names()]
        if not names:
            names = [n for n in ds.coords if "sweep_path" in ds[n].attrs]
        return names

    def _level_names(self) -> list[str]:
        idx = self._ds.indexes.get("scenario")
        return list(idx.names) if isinstance(idx, pd.MultiIndex) else []

    @property
    def metrics(self) -> list[str]:
        """Names of the headline metrics present (variables of role ``metric``: what the scenario's model
        kind declares as its metrics, e.g. the benchmark metrics of Bosso et al. 2024 for trains or the
        ride-comfort metrics of a vertical vehicle): one number per run (a metric per element, e.g. per detailed
        vehicle in a store written before such metrics became elements, is left out)."""
        return [n for n, v in self._ds.data_vars.items()
                if v.attrs.get("role") == "metric" and set(v.dims) <= {"scenario"}]

    def _flat(self) -> xr.Dataset:
        """The dataset with ``scenario`` as a plain integer dimension (a MultiIndex made by
        :meth:`indexed` is reset; the scenario number is the coordinate ``scenario``)."""
        ds = self._ds
        if self._level_names():
            ds = ds.reset_index("scenario").drop_vars("scenario", errors="ignore")
            if "scenario_index" in ds.coords:
                idx = ds["scenario_index"]
                ds = ds.drop_vars("scenario_index").assign_coords(scenario=("scenario", idx.values, idx.attrs))
        return ds

    def indexed(self, nearest: bool = True) -> xr.Dataset:
        """The dataset indexed by the swept parameters (a pandas MultiIndex along ``scenario``;
        the scenario number is kept as the coordinate ``scenario_index``), so that
        ``.sel(slack_mm=10)`` selects every scenario with that value and
        ``.sel(slack_mm=10, mass_t=100)`` combines parameters; with ``nearest`` (several parameters), also
        ``.sel(slack_mm=12, method="nearest")`` (:class:`NearestMultiIndex`)."""
        if self._level_names():
            return self._ds
        ds = self._ds
        params = self.parameters
        if not params:
            raise ValueError("no swept parameters in this dataset (a single run, or not an hpcrail sweep store)")
        if len(params) == 1:   # one parameter: an index of its own along scenario (scenario stays)
            return ds if params[0] in ds.indexes else ds.set_xindex(params[0])
        if "scenario" in ds.coords and "scenario_index" not in ds.coords:
            ds = ds.assign_coords(scenario_index=("scenario", np.asarray(ds["scenario"].values),
                                                  {"long_name": "scenario index in the sweep"}))
        ds = ds.set_index(scenario=params)
        if not nearest:
            return ds
        idx = ds.xindexes["scenario"]
        near = NearestMultiIndex(idx.index, idx.dim, level_coords_dtype=idx.level_coords_dtype)
        names = ["scenario", *params]
        attrs = {n: dict(ds[n].attrs) for n in names}
        ds = ds.drop_vars(names).assign_coords(xr.Coordinates.from_xindex(near))
        for n in names:
            ds[n].attrs.update(attrs[n])
        return ds

    def is_grid(self) -> bool:
        """True when the scenarios are the full cartesian product of the parameters' levels, each once
        (a grid design, or a zip over one parameter) — what :meth:`grid` needs."""
        ds = self._flat()
        params = self.parameters
        if not params or "scenario" not in ds.dims:
            return False
        cols = [np.asarray(ds[p].values) for p in params]
        keys = pd.MultiIndex.from_arrays(cols, names=params)
        n_levels = np.prod([float(len(pd.unique(c))) for c in cols])
        return bool(keys.is_unique and n_levels == ds.sizes["scenario"])

    def grid(self) -> xr.Dataset:
        """Grid designs: one dimension per swept parameter (``scenario`` unstacked).

        Raises ``ValueError`` when the scenarios are not a full grid of the parameters' levels (random,
        lhs, sobol and saltelli designs, zip over several parameters): use :meth:`indexed`, ``groupby`` or
        :meth:`metrics_table` there."""
        params = self.parameters
        if not params:
            raise ValueError("no swept parameters in this dataset (a single run, or not an hpcrail sweep store)")
        if not self.is_grid():
            raise ValueError(f"not a grid design (design {self._ds.attrs.get('design', 'unknown')!r}: the "
                             "scenarios are not every combination of the parameters' levels): use indexed(), "
                             "groupby or metrics_table()")
        flat = self._flat()
        if len(params) == 1:
            p = params[0]
            return flat.drop_indexes(p, errors="ignore").swap_dims(scenario=p).drop_vars("scenario", errors="ignore")
        return flat.hpcrail.indexed(nearest=False).unstack("scenario")

    def completed(self) -> xr.Dataset:
        """Scenarios that ran to their end (status completed or event_stop)."""
        ok = np.isin(as_strings(self._ds["status"]), SUCCESS)
        if "done" in self._ds:
            ok &= np.asarray(self._ds["done"].values).astype(bool)
        return self._ds.isel(scenario=np.flatnonzero(ok))

    # -- tables ------------------------------------------------------------------------------
    def metrics_table(self, display_units: bool = True, only_completed: bool = False) -> pd.DataFrame:
        """One row per scenario: its id, parameters, status, run statistics and metrics.

        ``display_units``: metrics in their display units (km/h, kN, mm …: the column names say the unit)
        instead of SI.  On a single run: one row.
        """
        if not self.is_sweep:
            return self._run_table(display_units)
        ds = (self.completed() if only_completed else self._ds).hpcrail._flat()
        cols: dict = {}
        idx = np.asarray(ds["scenario"].values)
        if "scenario_id" in ds.coords:
            cols["scenario_id"] = as_strings(ds["scenario_id"])
        for p in self.parameters:
            v = np.asarray(ds[p].values)
            cols[p] = as_strings(ds[p]) if v.dtype.kind in "OUT" else v
        if "status" in ds:
            cols["status"] = as_strings(ds["status"])
        for name in ("wall_time", "nsteps", "nfev"):
            if name in ds:
                cols[name] = np.atleast_1d(np.asarray(ds[name].values))
        for name in self.metrics:
            a = ds[name].attrs
            v = np.atleast_1d(np.asarray(ds[name].values))
            if v.dtype.kind in "iu" or not display_units:
                cols[_column(name, a, False) if v.dtype.kind not in "iu" else name] = v
            else:
                cols[_column(name, a, True)] = to_display(v, a)
        return pd.DataFrame(cols, index=pd.Index(idx, name="scenario"))

    def _run_table(self, display_units: bool) -> pd.DataFrame:
        ds = self._ds
        cols: dict = {"scenario_name": [ds.attrs.get("scenario_name", "")]}
        if "status" in ds:
            cols["status"] = [str(ds["status"].values)]
        for name in self.metrics:
            a = ds[name].attrs
            v = np.asarray(ds[name].values)
            if v.dtype.kind in "iu":
                cols[name] = [int(v)]
            elif display_units:
                cols[_column(name, a, True)] = [float(to_display(v, a))]
            else:
                cols[_column(name, a, False)] = [float(v)]
        return pd.DataFrame(cols)

    def summary(self) -> pd.DataFrame:
        """Per metric (display units): on a sweep, over the completed scenarios, its label, unit, count,
        min, median, max and the parameters of the scenario with the largest value (metrics numbering
        an element, e.g. the coupler of the peak force, are left out: see their histograms in
        ``hpcrail report``); on a single run, its label, value and unit.  A metric with a limit
        (:mod:`hpcrail.results.verdicts`) also gets its ``limit`` (display units) and, on a sweep, the number of
        completed scenarios that ``exceeded`` it, on a run its ``ratio`` and ``verdict``."""
        from hpcrail.results.verdicts import limit_of, ratio, verdict

        ds = self._ds
        if not self.is_sweep:
            rows = []
            for name in self.metrics:
                a = ds[name].attrs
                v = np.asarray(ds[name].values)
                value = int(v) if v.dtype.kind in "iu" else clip_magnitude(float(to_display(v, a)))
                row = {"metric": name, "label": a.get("long_name", name), "value": value,
                       "unit": pretty_units(a.get("display_units", a.get("units", "")))}
                lim = limit_of(a)
                if lim is not None:
                    row.update(limit=clip_magnitude(float(to_display(lim, a))), ratio=ratio(v.item(), lim),
                               verdict=verdict(v.item(), lim))
                rows.append(row)
            return pd.DataFrame(rows).set_index("metric") if rows else pd.DataFrame()
        done = self.completed().hpcrail._flat()
        # a make-up study's "parameters" are its make-ups' codes and features: say which scenario instead
        params = [p for p in self.parameters if done[p].attrs.get("sweep_source") != "makeup"]
        rows = []
        for name in self.metrics:
            v = np.asarray(done[name].values)
            if v.dtype.kind in "iu":
                continue
            a = done[name].attrs
            y = to_display(v, a)
            finite = np.isfinite(y)
            if not finite.any():
                continue
            i = int(np.nanargmax(np.where(finite, y, -np.inf)))
            at = ", ".join([f"scenario={int(done['scenario'].values[i])}"] * (len(params) < len(self.parameters))
                           + [f"{p}={_fmt(done[p].values[i])}" for p in params])
            row = {"metric": name, "label": a.get("long_name", name),
                   "unit": pretty_units(a.get("display_units", a.get("units", ""))),
                   "count": int(finite.sum()), "min": clip_magnitude(float(np.nanmin(y))),
                   "median": clip_magnitude(float(np.nanmedian(y))), "max": clip_magnitude(float(y[i])),
                   "max at": at}
            lim = limit_of(a)
            if lim is not None:
                row.update(limit=clip_magnitude(float(to_display(lim, a))), exceeded=int(np.sum(v[finite] > lim)))
            rows.append(row)
        return pd.DataFrame(rows).set_index("metric") if rows else pd.DataFrame()

    def failures(self) -> pd.DataFrame:
        """Scenarios that did not complete: parameters, status and message."""
        ds = self._flat()
        st = as_strings(ds["status"])
        done = np.asarray(ds["done"].values).astype(bool) if "done" in ds else np.ones(st.size, bool)
        bad = np.flatnonzero(done & ~np.isin(st, SUCCESS))
        sub = ds.isel(scenario=bad)
        cols = {p: as_strings(sub[p]) if np.asarray(sub[p].values).dtype.kind in "OUT" else np.asarray(sub[p].values)
                for p in self.parameters}
        cols["status"] = as_strings(sub["status"])
        cols["message"] = as_strings(sub["message"])
        return pd.DataFrame(cols, index=pd.Index(np.asarray(sub["scenario"].values), name="scenario"))

    def in_display_units(self) -> xr.Dataset:
        """The dataset with every variable that declares display units converted to them (kN, km/h, mm, mrad
        ...: values scaled, ``units`` set to the display unit, the stored SI unit kept as ``units_stored``), so
        that xarray's own plots and tables read as hpcrail's: ``ds.hpcrail.in_display_units().coupler_force
        .sel(coupler=123).plot()`` draws kN.  The stored dataset stays SI (CF); unit-aware analysis:
        ``ds.pint.quantify()`` (pint-xarray).  Lazy variables stay lazy."""
        from hpcrail.results.units import display_factor, display_units

        ds = self._ds.copy()
        for name in list(ds.variables):
            a = ds[name].attrs
            disp, units = display_units(a), a.get("units")
            if not units or not disp or disp == units or ds[name].dtype.kind != "f":
                continue
            f = display_factor(a)
            new = ds[name] * f
            new.attrs = dict(a, units=disp, units_stored=units)
            new.attrs.pop("display_scale", None)
            if name in ds.coords:
                ds = ds.assign_coords({name: new})
            else:
                ds[name] = new
        return ds

    # -- sensitivity and figures -------------------------------------------------------------
    def sobol(self, metrics: list[str] | None = None, **kw) -> pd.DataFrame:
        """Sobol' indices (first order ``S1``, total ``ST``, bootstrap confidence half-widths) of the float
        metrics (or ``metrics``) with respect to the swept parameters, from a ``saltelli`` design, with
        SALib (see :func:`hpcrail.analysis.sensitivity.sobol_indices`; ``kw``: ``conf_level``,
        ``num_resamples``, ``seed``).  Raises ``ValueError`` for another design."""
        from hpcrail.analysis.sensitivity import sobol_indices

        ds = self._flat()
        names = metrics or [m for m in self.metrics if ds[m].dtype.kind == "f"]
        unknown = [m for m in names if m not in ds]
        if unknown:
            raise ValueError(f"unknown metric {', '.join(unknown)}; allowed: {', '.join(self.metrics)}")
        need = list(dict.fromkeys(names + ["status"] + (["done"] if "done" in ds else [])))
        return sobol_indices(ds[need].load(), names, self.parameters, **kw)

    def plot_run(self, out_dir=None, figures: list[str] | None = None, **options) -> list:
        """The run figures the dataset's model kind declares (e.g. in-train force envelope, force against
        time, heatmap for trains; body accelerations and ride comfort for a vertical vehicle): PNG files
        in ``out_dir`` (returns their paths) or, with ``out_dir=None``, the matplotlib figures (a notebook
        shows them).  ``figures``: their names (default: all whose data the dataset has); ``options``:
        ``select={"coupler": [12, 61]}``, ``x="distance"``, ``t_max=600``.  See
        :func:`hpcrail.analysis.figures.run_figures`."""
        from hpcrail.analysis.figures import run_figures

        return run_figures(self._ds, out_dir, figures, **options)


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.4g}"
    return str(v)


__all__ = ["HpcrailAccessor", "as_strings"]
