"""Post-processing: figures and checks of result datasets, the ``ds.hpcrail`` xarray accessor and sweep
reports (plots)."""
from hpcrail.analysis.accessor import HpcrailAccessor  # noqa: F401  (registers ds.hpcrail)


def open_sweep(path, indexed: bool = True):
    """Open a sweep store: data lazy (dask), coordinates along ``scenario`` loaded (so that
    ``groupby("slack_mm")`` works); with ``indexed`` the swept parameters form a MultiIndex so
    that ``ds.sel(slack_mm=10, mass_t=100)`` works directly (see ``ds.hpcrail.indexed``)."""
    import xarray as xr

    ds = xr.open_zarr(path, consolidated=True)
    ds = ds.assign_coords({c: ds[c].load() for c in ds.coords if ds[c].dims == ("scenario",)})
    return ds.hpcrail.indexed() if indexed else ds


__all__ = ["HpcrailAccessor", "open_sweep"]
