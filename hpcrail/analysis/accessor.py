"""``ds.hpcrail``: notebook helpers for sweep stores (and single runs where they make sense).

>>> import xarray as xr, hpcrail.analysis
>>> ds = xr.open_zarr("study.zarr")
>>> ds.hpcrail.metrics_table()                 # one row per scenario: parameters, status, metrics
>>> ds.hpcrail.indexed().sel(slack_mm=10)       # select by a swept parameter
>>> ds.hpcrail.grid().max_draft_force.plot()    # grid designs: one dimension per parameter
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import xarray as xr

from hpcrail.results.outputs import SUCCESS


def as_strings(da: xr.DataArray) -> np.ndarray:
    return np.array([str(x) for x in np.asarray(da.values).astype(object)], dtype=object)


@xr.register_dataset_accessor("hpcrail")
class HpcrailAccessor:
    def __init__(self, ds: xr.Dataset):
        self._ds = ds

    # -- structure ---------------------------------------------------------------------------
    @property
    def parameters(self) -> list[str]:
        """Coordinate names of the swept parameters, in spec order."""
        ds = self._ds
        try:
            names = [p["name"] for p in json.loads(ds.attrs.get("parameters", "[]"))]
        except (TypeError, ValueError):
            names = []
        names = [n for n in names if n in ds.coords]
        if not names:
            names = [n for n in ds.coords if "sweep_path" in ds[n].attrs]
        return names

    @property
    def metrics(self) -> list[str]:
        """Names of the headline metrics present (variables of role ``metric``: what the scenario's model
        kind declares as its metrics, e.g. the benchmark metrics of Bosso et al. 2024 for trains or the
        ride-comfort metrics of a vertical vehicle)."""
        return [n for n, v in self._ds.data_vars.items() if v.attrs.get("role") == "metric"]

    def indexed(self) -> xr.Dataset:
        """The dataset indexed by the swept parameters (a pandas MultiIndex along ``scenario``;
        the scenario number is kept as the coordinate ``scenario_index``), so that
        ``.sel(slack_mm=10)`` selects every scenario with that value and
        ``.sel(slack_mm=10, mass_t=100)`` combines parameters."""
        ds = self._ds
        params = self.parameters
        if not params:
            raise ValueError("no swept parameters in this dataset")
        if "scenario" in ds.coords and "scenario_index" not in ds.coords:
            ds = ds.assign_coords(scenario_index=("scenario", np.asarray(ds["scenario"].values),
                                                  {"long_name": "scenario index in the sweep"}))
        return ds.set_index(scenario=params)

    def grid(self) -> xr.Dataset:
        """Grid designs: one dimension per swept parameter (``scenario`` unstacked).

        Raises ``ValueError`` when parameter combinations repeat (random designs)."""
        ds = self._ds
        params = self.parameters
        if not params:
            raise ValueError("no swept parameters in this dataset")
        keys = pd.MultiIndex.from_arrays([np.asarray(ds[p].values) for p in params], names=params)
        if not keys.is_unique:
            raise ValueError("parameter combinations repeat (not a grid design): use indexed() or groupby")
        ind = self.indexed()
        if len(params) == 1:
            return ind.swap_dims(scenario=params[0]).drop_vars("scenario", errors="ignore")
        return ind.unstack("scenario")

    def completed(self) -> xr.Dataset:
        """Scenarios that ran to their end (status completed or event_stop)."""
        ok = np.isin(as_strings(self._ds["status"]), SUCCESS)
        return self._ds.isel(scenario=np.flatnonzero(ok))

    # -- tables ------------------------------------------------------------------------------
    def metrics_table(self, display_units: bool = True, only_completed: bool = False) -> pd.DataFrame:
        """One row per scenario: its id, parameters, status, run statistics and metrics.

        ``display_units``: metrics in their display units (km/h, kN, mm …: the column names say the unit)
        instead of SI.
        """
        ds = self.completed() if only_completed else self._ds
        cols: dict = {}
        idx = np.asarray(ds["scenario"].values) if "scenario" in ds.coords else None
        if "scenario_id" in ds.coords:
            cols["scenario_id"] = as_strings(ds["scenario_id"])
        for p in self.parameters:
            v = np.asarray(ds[p].values)
            cols[p] = as_strings(ds[p]) if v.dtype.kind in "OUT" else v
        if "status" in ds:
            cols["status"] = as_strings(ds["status"]) if ds["status"].ndim else [str(ds["status"].values)]
        for name in ("wall_time", "nsteps", "nfev"):
            if name in ds:
                cols[name] = np.atleast_1d(np.asarray(ds[name].values))
        for name in self.metrics:
            a = ds[name].attrs
            units, disp, fac = a.get("units", ""), a.get("display_units", ""), float(a.get("display_scale", 1.0))
            v = np.atleast_1d(np.asarray(ds[name].values))
            if display_units and disp and disp != "1":
                cols[f"{name} [{disp}]"] = v * fac
            else:
                cols[name if units in ("1", "") else f"{name} [{units}]"] = v
        return pd.DataFrame(cols, index=pd.Index(idx, name="scenario") if idx is not None else None)

    def summary(self) -> pd.DataFrame:
        """Per metric over the completed scenarios: count, min, median, max (display units) and the
        parameters of the scenario with the largest value."""
        t = self.metrics_table(display_units=True, only_completed=True)
        rows = []
        params = self.parameters
        metrics = self.metrics
        for col in t.columns:
            if col.split(" [")[0] not in metrics or self._ds[col.split(" [")[0]].attrs.get("units") == "1" \
                    and np.issubdtype(self._ds[col.split(" [")[0]].dtype, np.integer):
                continue
            s = pd.to_numeric(t[col], errors="coerce")
            if s.notna().sum() == 0:
                continue
            imax = s.idxmax()
            at = ", ".join(f"{p}={t.loc[imax, p]}" for p in params)
            rows.append({"metric": col, "count": int(s.notna().sum()), "min": s.min(), "median": s.median(),
                         "max": s.max(), "max at": at})
        return pd.DataFrame(rows).set_index("metric") if rows else pd.DataFrame()

    def failures(self) -> pd.DataFrame:
        """Scenarios that did not complete: parameters, status and message."""
        ds = self._ds
        st = as_strings(ds["status"])
        done = np.asarray(ds["done"].values).astype(bool) if "done" in ds else np.ones(st.size, bool)
        bad = np.flatnonzero(done & ~np.isin(st, SUCCESS))
        sub = ds.isel(scenario=bad)
        cols = {p: as_strings(sub[p]) if np.asarray(sub[p].values).dtype.kind in "OUT" else np.asarray(sub[p].values)
                for p in self.parameters}
        cols["status"] = as_strings(sub["status"])
        cols["message"] = as_strings(sub["message"])
        return pd.DataFrame(cols, index=pd.Index(np.asarray(sub["scenario"].values), name="scenario"))


__all__ = ["HpcrailAccessor"]
