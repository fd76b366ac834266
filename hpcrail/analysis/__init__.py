"""Analysis of result stores: the ``ds.hpcrail`` xarray accessor, run figures, sweep reports and
Sobol' indices."""
from hpcrail.analysis.accessor import HpcrailAccessor  # noqa: F401  (registers ds.hpcrail)


def open_run(path):
    """Open a run store written by ``hpcrail run`` (lazy, dask-backed; ``ds.hpcrail`` available)."""
    import xarray as xr

    return xr.open_zarr(path, consolidated=True)


def open_sweep(path, indexed: bool = True):
    """Open a sweep store: the scenario variables (metrics, scalars, status …) and coordinates loaded —
    so that ``ds.where(ds.max_draft_force > 5e5, drop=True)`` and ``groupby("slack_mm")`` work directly
    — envelopes, series and messages lazy (dask); with ``indexed`` the swept parameters form a
    MultiIndex so that ``ds.sel(slack_mm=10, mass_t=100)`` works (see ``ds.hpcrail.indexed``).

    Stores written before text variables were fixed-width (numpy StringDType on reading) get them as
    ordinary strings."""
    import numpy as np
    import xarray as xr

    ds = xr.open_zarr(path, consolidated=True)
    load = [n for n in ds.variables if ds[n].dims == ("scenario",) and n != "message"]
    ds = ds.assign({n: ds[n].load() for n in load if n in ds.data_vars})
    ds = ds.assign_coords({n: ds[n].load() for n in load if n in ds.coords})
    old = [n for n in ds.variables if np.dtype(ds[n].dtype).kind == "T"]
    if old:
        ds = ds.assign({n: ds[n].astype(object) for n in old if n in ds.data_vars})
        ds = ds.assign_coords({n: ds[n].astype(object) for n in old if n in ds.coords})
    return ds.hpcrail.indexed() if indexed else ds


__all__ = ["HpcrailAccessor", "open_sweep", "open_run"]
