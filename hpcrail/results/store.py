"""Zarr storage of result datasets (compressed, chunked for reading time windows)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import xarray as xr

#: target bytes per chunk of a time series
CHUNK_BYTES = 2 ** 21


class StoreExistsError(FileExistsError):
    """The output store exists and ``overwrite`` was not given."""


def time_chunks(ds: xr.Dataset) -> dict:
    """Chunk sizes: whole vehicle/coupler axes, time windows of about :data:`CHUNK_BYTES`."""
    width = max([ds.sizes.get(d, 1) for d in ("vehicle", "coupler")] + [1])
    ct = int(max(16, min(ds.sizes.get("time", 1), CHUNK_BYTES // (8 * width))))
    return {"time": ct}


def _encoding(ds: xr.Dataset, chunks: dict) -> dict:
    enc = {}
    for name, var in ds.variables.items():
        if var.dtype.kind in "fiu" and var.ndim >= 1:
            enc[name] = {"chunks": tuple(chunks.get(d, ds.sizes[d]) for d in var.dims)}
    for name in ds.coords:   # CF 2.5.1: coordinate variables have no _FillValue
        enc.setdefault(name, {})["_FillValue"] = None
    return enc


def write_dataset(ds: xr.Dataset, path: str | Path, overwrite: bool = False) -> Path:
    """Write ``ds`` to a zarr store (format 2, consolidated metadata) at ``path``.

    Raises :class:`StoreExistsError` if the store exists and ``overwrite`` is false.
    """
    path = Path(path)
    if path.exists():
        if not overwrite:
            raise StoreExistsError(f"{path} exists; pass --overwrite to replace it")
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    out = ds.copy()
    for name in list(out.variables):
        if out[name].dtype == object:
            out[name] = out[name].astype(str)
    # zarr format 2: fixed-width strings and consolidated metadata are part of its specification, so
    # the store stays readable by other zarr implementations years from now
    out.to_zarr(path, mode="w", encoding=_encoding(out, time_chunks(out)), consolidated=True, zarr_format=2)
    return path


def write_netcdf(ds: xr.Dataset, path: str | Path) -> Path:
    """Write a result dataset (a run, or a sweep store opened with xarray) to a netCDF-4 file for tools that
    read netCDF, keeping the CF rules of the zarr store (coordinate variables without ``_FillValue``).
    Needs the netCDF4 or h5netcdf package."""
    path = Path(path)
    out = ds.load() if hasattr(ds, "load") else ds
    enc = {name: {"_FillValue": None} for name in out.coords}
    out.to_netcdf(path, encoding=enc)
    return path


def open_result(path: str | Path) -> xr.Dataset:
    """Open a result store written by hpcrail (lazy, dask-backed)."""
    return xr.open_zarr(path, consolidated=True)


__all__ = ["write_dataset", "write_netcdf", "open_result", "StoreExistsError", "time_chunks", "np"]
