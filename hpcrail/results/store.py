"""Zarr storage of result datasets (compressed, chunked for reading time windows), written safely.

* ``overwrite`` replaces only an hpcrail *run* store: never a regular file, a directory that is not an
  hpcrail store, or a sweep store (:func:`check_output`, called before anything is simulated);
* the output's folder must be writable — checked by creating a file there, before simulating;
* a store is written under a temporary name next to its target and renamed into place, so a failed
  write (full disk, I/O error, interrupt) leaves no half-written store and an existing store intact.
"""
from __future__ import annotations

import errno
import os
import shutil
import uuid
from pathlib import Path

import numpy as np
import xarray as xr

#: target bytes per chunk of a time series
CHUNK_BYTES = 2 ** 21


class StoreExistsError(FileExistsError):
    """The output store exists and ``overwrite`` was not given."""


class _PathError(OSError):
    def __init__(self, code: int | None, message: str):
        super().__init__(message)
        self.errno = code

    def __str__(self) -> str:
        return str(self.args[0])


class OutputPathError(_PathError):
    """The output path cannot take a result store (an existing file or foreign directory, a sweep
    store, a folder that is not writable); the message says why and what to do."""


class StoreWriteError(_PathError):
    """Writing a store failed (full disk, I/O error); nothing was left behind and an existing store at
    the path is unchanged."""


def store_kind(path: str | Path) -> str | None:
    """``"run"`` or ``"sweep"`` if ``path`` is an hpcrail zarr store (by its attributes), else None."""
    import json

    path = Path(path)
    if not path.is_dir():
        return None
    for meta in (path / ".zattrs", path / "zarr.json"):
        if meta.is_file():
            try:
                attrs = json.loads(meta.read_text())
            except (OSError, ValueError):
                return None
            attrs = attrs.get("attributes", attrs) if meta.name == "zarr.json" else attrs
            if "hpcrail_sweep_format" in attrs or "sweep_fingerprint" in attrs:
                return "sweep"
            if "hpcrail_schema_version" in attrs:
                return "run"
    return None


def _why(exc: OSError) -> str:
    return f"{exc.strerror or exc} (errno {exc.errno})" if exc.errno else str(exc)


#: the files that make a directory a zarr store or group (format 2 and 3)
_ZARR_MARKERS = (".zgroup", ".zarray", ".zattrs", "zarr.json")


def enclosing_store(folder: str | Path) -> Path | None:
    """The zarr store (any, not only hpcrail's) that ``folder`` is or lies inside, or None."""
    folder = Path(folder).resolve()
    for d in (folder, *folder.parents):
        if any((d / m).is_file() for m in _ZARR_MARKERS):
            return d
    return None


def check_writable(folder: str | Path) -> None:
    """Raise :class:`OutputPathError` unless a file can be created in ``folder`` (created if missing) and
    ``folder`` is not a zarr store or inside one (``-o run.zarr/inner.zarr``: the inner store would become
    a stray group of the outer one and be lost when it is rewritten)."""
    folder = Path(folder)
    outer = enclosing_store(folder)
    if outer is not None:
        raise OutputPathError(errno.EEXIST, f"{folder} is inside the zarr store {outer}: a store is never written "
                              "inside another one; choose a path outside it")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".hpcrail-write-test-{uuid.uuid4().hex[:8]}"
        with open(probe, "wb") as fh:
            fh.write(b"0")
        probe.unlink()
    except OSError as exc:
        raise OutputPathError(exc.errno, f"cannot write to {folder}: {_why(exc)}") from None


def check_output(path: str | Path, overwrite: bool = False) -> None:
    """Refuse an output path before anything is computed: raises :class:`StoreExistsError` (exists,
    no ``overwrite``) or :class:`OutputPathError` (not an hpcrail run store, or a folder that cannot
    be written)."""
    path = Path(path)
    if path.exists() or path.is_symlink():
        if not overwrite:
            raise StoreExistsError(f"{path} exists; pass --overwrite to replace it")
        kind = store_kind(path)
        if path.is_symlink() or kind is None:
            what = "a symbolic link" if path.is_symlink() else "a file" if not path.is_dir() else \
                "a directory that is not an hpcrail store"
            raise OutputPathError(errno.EEXIST, f"{path} is {what}: --overwrite only replaces an hpcrail run store; "
                                  "choose another -o")
        if kind == "sweep":
            raise OutputPathError(errno.EEXIST, f"{path} is a sweep store: --overwrite never replaces one with a "
                                  "single run; choose another -o (or delete it yourself)")
    check_writable(path.parent)


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

    The store is written to a temporary directory next to ``path`` and renamed into place; an
    existing run store is replaced only once the new one is complete.

    Raises :class:`StoreExistsError` if the store exists and ``overwrite`` is false,
    :class:`OutputPathError` if ``path`` is not an hpcrail run store or its folder is not writable,
    :class:`StoreWriteError` if writing fails (nothing is left behind; an existing store is intact).
    An interrupt while writing removes the temporary store and propagates.
    """
    path = Path(path)
    check_output(path, overwrite)
    out = ds.copy()
    for name in list(out.variables):
        if out[name].dtype == object:
            out[name] = out[name].astype(str)
    tag = uuid.uuid4().hex[:8]
    tmp = path.with_name(f".{path.name}.{tag}.writing")
    old = path.with_name(f".{path.name}.{tag}.replaced")
    try:
        # zarr format 2: fixed-width strings and consolidated metadata are part of its specification, so
        # the store stays readable by other zarr implementations years from now
        out.to_zarr(tmp, mode="w-", encoding=_encoding(out, time_chunks(out)), consolidated=True, zarr_format=2)
        if path.exists():
            os.rename(path, old)
        try:
            os.rename(tmp, path)
        except BaseException:
            if old.exists() and not path.exists():
                os.rename(old, path)
            raise
    except OSError as exc:
        raise StoreWriteError(exc.errno, f"cannot write {path}: {_why(exc)}; nothing was written"
                              + (" and the existing store is unchanged" if path.exists() else "")) from None
    finally:
        for p in (tmp, old):
            if p.exists():
                shutil.rmtree(p, ignore_errors=True)
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


__all__ = ["write_dataset", "write_netcdf", "open_result", "StoreExistsError", "OutputPathError", "StoreWriteError",
           "check_output", "check_writable", "enclosing_store", "store_kind", "time_chunks", "np"]
