"""Build, cache and load the contact tables of a profile pair (LUT and KEC), and assemble the parameters
of the on-line kernels.

Tables are xarray Datasets stored as zarr under ``<cache>/<key>/{lut,kec}.zarr`` where ``key`` is a SHA-256
of the fitted profile splines, the placement, the grids, the regularisation lengths and
:data:`TABLE_VERSION` (bumped when the builders change).  The cache directory is ``$HPCRAIL_CACHE/wheelrail``
or ``~/.cache/hpcrail/wheelrail``; ``hpcrail contact`` also copies the tables into its output directory.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import time
from pathlib import Path

import numpy as np
import xarray as xr

from hpcrail.models.wheelrail import creep, hertz
from hpcrail.models.wheelrail.config import ProfilePairConfig, build_profiles
from hpcrail.models.wheelrail.geometry import ContactSolver
from hpcrail.models.wheelrail.kec import KecParams, build_kec, kec_params
from hpcrail.models.wheelrail.lut import LutParams, build_lut, lut_params, tread_flange_split
from hpcrail.models.wheelrail.profiles import Placement, Profile

TABLE_VERSION = "wheelrail-tables-1"
MM = 1e-3


def cache_root() -> Path:
    base = os.environ.get("HPCRAIL_CACHE")
    root = Path(base) if base else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hpcrail"
    return root / "wheelrail"


def builder_digest() -> str:
    """SHA-256 of the wheel/rail modules' sources: tables built by other code are never reused."""
    h = hashlib.sha256()
    for p in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()


def table_key(wheel: Profile, rail: Profile, placement: Placement, cfg: ProfilePairConfig) -> str:
    """Cache key of the tables of a profile pair (16 hex characters): profiles, placement, grids and the
    builder sources."""
    h = hashlib.sha256(TABLE_VERSION.encode())
    h.update(builder_digest().encode())
    h.update(wheel.digest().encode())
    h.update(rail.digest().encode())
    h.update(json.dumps(dataclasses.asdict(placement), sort_keys=True).encode())
    h.update(cfg.lut.model_dump_json().encode())
    h.update(cfg.kec.model_dump_json().encode())
    return h.hexdigest()[:16]


@dataclasses.dataclass
class ContactTables:
    """Everything the on-line kernels of one profile pair need, plus the off-line objects."""

    cfg: ProfilePairConfig
    wheel: Profile
    rail: Profile
    placement: Placement
    lut: xr.Dataset
    kec: xr.Dataset
    key: str
    build_seconds: dict

    @property
    def lut_params(self) -> LutParams:
        return lut_params(self.lut)

    @property
    def kec_params(self) -> KecParams:
        return kec_params(self.kec)

    def hertz_params(self) -> hertz.HertzParams:
        return hertz.hertz_params(self.cfg.material.E_Pa, self.cfg.material.nu)

    def kalker_params(self) -> creep.KalkerParams:
        return creep.kalker_params(self.cfg.material.nu)

    def polach_params(self) -> creep.PolachParams:
        f = self.cfg.friction
        return creep.polach_params(mu=f.mu, E=self.cfg.material.E_Pa, nu=self.cfg.material.nu, A=f.A,
                                   B=f.B_s_per_m, kA=f.kA, kS=f.kS)

    def solver(self) -> ContactSolver:
        return ContactSolver(self.wheel, self.rail, self.placement)


def _build(solver: ContactSolver, cfg: ProfilePairConfig):
    g, k = cfg.lut, cfg.kec
    t0 = time.process_time()
    split = tread_flange_split(solver)
    t1 = time.process_time()
    lut = build_lut(solver, g.y_min_mm * MM, g.y_max_mm * MM, g.y_step_mm * MM, g.xi_min_mm * MM,
                    g.xi_max_mm * MM, g.xi_step_mm * MM, split=split)
    t2 = time.process_time()
    kec = build_kec(solver, k.s_min_mm * MM, k.s_max_mm * MM, k.s_step_mm * MM, k.tread_band_mm * MM,
                    k.flange_band_mm * MM)
    t3 = time.process_time()
    secs = {"split_cpu_s": t1 - t0, "lut_cpu_s": t2 - t1, "kec_cpu_s": t3 - t2}
    return lut, kec, secs


def contact_tables(cfg: ProfilePairConfig, doc=None, cache_dir: Path | None = None, rebuild: bool = False,
                   use_cache: bool = True, loc: tuple = ()) -> ContactTables:
    """Tables of a profile pair: loaded from the cache when present (same key), else built and stored.
    ``loc``: where the pair sits in ``doc`` (a vehicle YAML that includes it).

    Raises ConfigError (bad profiles) or RuntimeError (contact cannot be solved on the grids)."""
    wheel, rail, placement = build_profiles(cfg, doc, loc)
    key = table_key(wheel, rail, placement, cfg)
    d = (cache_dir or cache_root()) / key
    if use_cache and not rebuild and (d / "lut.zarr").exists() and (d / "kec.zarr").exists():
        lut, kec = _loaded_tables(d)
        secs = json.loads(lut.attrs.get("build_cpu_seconds", "{}"))
        return ContactTables(cfg, wheel, rail, placement, lut, kec, key, secs)
    solver = ContactSolver(wheel, rail, placement)
    lut, kec, secs = _build(solver, cfg)
    for ds in (lut, kec):
        ds.attrs.update(key=key, table_version=TABLE_VERSION, wheel=wheel.source, rail=rail.source,
                        pair=cfg.name, build_cpu_seconds=json.dumps(secs))
    if use_cache:
        tmp = d.with_name(d.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True, exist_ok=True)
        write_zarr(lut, tmp / "lut.zarr")
        write_zarr(kec, tmp / "kec.zarr")
        if d.exists():
            shutil.rmtree(d, ignore_errors=True)
        try:
            tmp.rename(d)
        except OSError:  # another process stored the same key meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    return ContactTables(cfg, wheel, rail, placement, lut, kec, key, secs)


def write_zarr(ds: xr.Dataset, path: Path) -> None:
    """Store a table (zarr format 2, consolidated metadata: fixed-width string coordinates are part of
    that specification, as in :mod:`hpcrail.results.store`)."""
    ds.to_zarr(path, mode="w", consolidated=True, zarr_format=2)


def read_zarr(path: Path) -> xr.Dataset:
    """A stored table read into memory as numpy arrays (``chunks=None``: no dask collection is built, so a
    call inside a dask task — a sweep worker — never schedules the read as cluster tasks, nor ships zarr
    objects between workers; issue 30)."""
    with xr.open_dataset(path, engine="zarr", chunks=None, consolidated=True) as ds:
        return ds.load()


#: tables read in this process (a sweep worker reads each profile pair once): directory -> (mtime key, lut, kec)
_LOADED: dict = {}
_LOADED_MAX = 8


def _loaded_tables(d: Path) -> tuple[xr.Dataset, xr.Dataset]:
    """The LUT and KEC of cache directory ``d``, read once per process (kept while their files are unchanged;
    at most :data:`_LOADED_MAX` pairs).  Callers must not modify the returned datasets."""
    stamp = tuple((d / n / ".zmetadata").stat().st_mtime_ns if (d / n / ".zmetadata").exists() else 0
                  for n in ("lut.zarr", "kec.zarr"))
    hit = _LOADED.get(str(d))
    if hit is not None and hit[0] == stamp:
        return hit[1], hit[2]
    lut, kec = read_zarr(d / "lut.zarr"), read_zarr(d / "kec.zarr")
    if len(_LOADED) >= _LOADED_MAX:
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[str(d)] = (stamp, lut, kec)
    return lut, kec


def save_tables(tables: ContactTables, out: Path) -> list[Path]:
    """Write the LUT and KEC datasets as zarr stores into ``out`` (replaced)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, ds in (("lut", tables.lut), ("kec", tables.kec)):
        p = out / f"{name}.zarr"
        write_zarr(ds, p)
        paths.append(p)
    return paths


def check_symmetric(lut: xr.Dataset) -> float:
    """Largest |z(y) - z(-y)| [m] of the ξ_g = 0 column (a symmetric pair gives ~1e-15)."""
    col = lut["V"].sel(xi_g=0.0, method="nearest").sel(quantity="z").values
    return float(np.max(np.abs(col - col[::-1])))
