"""Post-processing: figures and checks of result datasets, the ``ds.hpcrail`` xarray accessor and sweep
reports (plots)."""
from hpcrail.analysis.accessor import HpcrailAccessor  # noqa: F401  (registers ds.hpcrail)


def open_sweep(path, indexed: bool = True):
    """Open a sweep store (lazy); with ``indexed`` the parameter coordinates are indexed so that
    ``ds.sel(slack_mm=10)`` works directly."""
    import xarray as xr

    ds = xr.open_zarr(path, consolidated=True)
    return ds.hpcrail.indexed() if indexed else ds


__all__ = ["HpcrailAccessor", "open_sweep"]
