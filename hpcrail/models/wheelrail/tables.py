"""Build, cache and load the contact tables of a profile pair (LUT and KEC), and assemble the parameters
of the on-line kernels.

Tables are xarray Datasets stored as zarr under ``<cache>/<key>/{lut,kec[,kec_right]}.zarr`` where ``key`` is
a SHA-256 of the fitted profile splines of both sides, their placements, the grids, the regularisation lengths
and :data:`TABLE_VERSION` (bumped when the builders change).  An asymmetric pair (different left and right
profiles or radii) has a KEC table per wheel: the right one is built in the right wheel's own left-wheel form,
on the mirrored solver.  The cache directory is ``$HPCRAIL_CACHE/wheelrail`` or ``~/.cache/hpcrail/wheelrail``;
``hpcrail contact`` also copies the tables into its output directory.

A geometry that the contact solver cannot handle on the grids (no contact at some lateral shift, a singular
Newton system) is a :class:`~hpcrail.config.ConfigError` naming the position and the inputs that decide it.
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

from hpcrail.config import ConfigError, ConfigIssue
from hpcrail.models.wheelrail import creep, hertz
from hpcrail.models.wheelrail.config import ProfilePairConfig, ProfileSet, build_profiles
from hpcrail.models.wheelrail.geometry import ContactSolver
from hpcrail.models.wheelrail.kec import KecParams, build_kec, kec_params
from hpcrail.models.wheelrail.lut import LutParams, build_lut, lut_params, tread_flange_split
from hpcrail.models.wheelrail.profiles import Placement, Profile

TABLE_VERSION = "wheelrail-tables-2"
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


def table_key(wheel: Profile, rail: Profile, placement: Placement, cfg: ProfilePairConfig,
              right: tuple | None = None) -> str:
    """Cache key of the tables of a profile pair (16 hex characters): profiles and placements of both sides
    (``right`` = (wheel, rail, placement) of an asymmetric pair), grids and the builder sources."""
    h = hashlib.sha256(TABLE_VERSION.encode())
    h.update(builder_digest().encode())
    h.update(wheel.digest().encode())
    h.update(rail.digest().encode())
    h.update(json.dumps(dataclasses.asdict(placement), sort_keys=True).encode())
    if right is not None:
        h.update(b"right")
        h.update(right[0].digest().encode())
        h.update(right[1].digest().encode())
        h.update(json.dumps(dataclasses.asdict(right[2]), sort_keys=True).encode())
    h.update(cfg.lut.model_dump_json().encode())
    h.update(cfg.kec.model_dump_json().encode())
    return h.hexdigest()[:16]


@dataclasses.dataclass
class ContactTables:
    """Everything the on-line kernels of one profile pair need, plus the off-line objects."""

    cfg: ProfilePairConfig
    profiles: ProfileSet
    lut: xr.Dataset
    kec: xr.Dataset
    kec_right: xr.Dataset | None
    key: str
    build_seconds: dict

    @property
    def wheel(self) -> Profile:
        return self.profiles.wheel

    @property
    def rail(self) -> Profile:
        return self.profiles.rail

    @property
    def placement(self) -> Placement:
        return self.profiles.placement

    @property
    def lut_params(self) -> LutParams:
        return lut_params(self.lut)

    @property
    def kec_params(self) -> KecParams:
        return kec_params(self.kec, self.kec_right)

    def hertz_params(self) -> hertz.HertzParams:
        return hertz.hertz_params(self.cfg.material.E_Pa, self.cfg.material.nu)

    def kalker_params(self) -> creep.KalkerParams:
        return creep.kalker_params(self.cfg.material.nu)

    def creep_params(self) -> creep.CreepParams:
        """Parameters of the pair's creep-force law (``friction.law``; :data:`creep.CREEP_LAWS`)."""
        f = self.cfg.friction
        return creep.creep_params(f.law, mu=f.mu, E=self.cfg.material.E_Pa, nu=self.cfg.material.nu, A=f.A,
                                  B=f.B_s_per_m, kA=f.kA, kS=f.kS, strips=f.fastsim_strips)

    def polach_params(self) -> creep.CreepParams:
        """The creep-law parameters (the name of the paper-004 default, Polach)."""
        return self.creep_params()

    def solver(self) -> ContactSolver:
        return self.profiles.solver()


def _build(solver: ContactSolver, cfg: ProfilePairConfig):
    g, k = cfg.lut, cfg.kec
    t0 = time.process_time()
    split = tread_flange_split(solver)
    split_r = split if solver.symmetric else tread_flange_split(solver.mirrored())
    t1 = time.process_time()
    lut = build_lut(solver, g.y_min_mm * MM, g.y_max_mm * MM, g.y_step_mm * MM, g.xi_min_mm * MM,
                    g.xi_max_mm * MM, g.xi_step_mm * MM, split=(split, split_r))
    t2 = time.process_time()
    kec = build_kec(solver, k.s_min_mm * MM, k.s_max_mm * MM, k.s_step_mm * MM, k.tread_band_mm * MM,
                    k.flange_band_mm * MM)
    kec_r = None
    if not solver.symmetric:
        kec_r = build_kec(solver.mirrored(), k.s_min_mm * MM, k.s_max_mm * MM, k.s_step_mm * MM,
                          k.tread_band_mm * MM, k.flange_band_mm * MM)
        kec_r.attrs["description"] = ("KEC lookup table of the right wheel (paper 004 eq 23), in its own "
                                      "left-wheel form (mirror image)")
    t3 = time.process_time()
    secs = {"split_cpu_s": t1 - t0, "lut_cpu_s": t2 - t1, "kec_cpu_s": t3 - t2}
    return lut, kec, kec_r, secs


def solver_failure(exc: Exception, cfg: ProfilePairConfig, doc, loc: tuple) -> ConfigError:
    """A contact-table failure as a configuration error: the position where the solver failed and the inputs
    that decide whether a contact exists there (the grids, gauge and flange-back spacing, the profiles)."""
    pre = ".".join(map(str, loc)) + "." if loc else ""
    where = doc.file_for(loc) if doc is not None else "(config)"
    g, k = cfg.lut, cfg.kec
    msg = f"contact tables cannot be built: {exc}"
    allowed = (f"grids inside the lateral range where both wheels touch their rails (lut.y_min/max_mm "
               f"{g.y_min_mm:g}/{g.y_max_mm:g}, lut.xi_min/max_mm {g.xi_min_mm:g}/{g.xi_max_mm:g}, "
               f"kec.s_min/max_mm {k.s_min_mm:g}/{k.s_max_mm:g}), or a gauge, flange-back spacing and profiles "
               "that fit each other")
    return ConfigError([ConfigIssue(where, pre + "lut" if "LUT" in str(exc) or "ξ_g" in str(exc) else pre + "kec",
                                    msg, allowed=allowed)])


def contact_tables(cfg: ProfilePairConfig, doc=None, cache_dir: Path | None = None, rebuild: bool = False,
                   use_cache: bool = True, loc: tuple = ()) -> ContactTables:
    """Tables of a profile pair: loaded from the cache when present (same key), else built and stored.
    ``loc``: where the pair sits in ``doc`` (a vehicle YAML that includes it).

    Raises ConfigError (bad profiles, a wheelset that does not fit the track, contact that cannot be solved on
    the grids — naming the position)."""
    ps = build_profiles(cfg, doc, loc)
    right = None if ps.symmetric else (ps.wheel_r, ps.rail_r, ps.placement_r)
    key = table_key(ps.wheel, ps.rail, ps.placement, cfg, right)
    d = (cache_dir or cache_root()) / key
    names = ["lut", "kec"] + ([] if ps.symmetric else ["kec_right"])
    if use_cache and not rebuild and all((d / f"{n}.zarr").exists() for n in names):
        lut, kec, kec_r = _loaded_tables(d, names)
        secs = json.loads(lut.attrs.get("build_cpu_seconds", "{}"))
        return ContactTables(cfg, ps, lut, kec, kec_r, key, secs)
    solver = ps.solver()
    try:
        lut, kec, kec_r, secs = _build(solver, cfg)
    except (RuntimeError, ValueError, ArithmeticError, np.linalg.LinAlgError) as exc:
        raise solver_failure(exc, cfg, doc, loc) from None
    for ds in (lut, kec, kec_r):
        if ds is not None:
            ds.attrs.update(key=key, table_version=TABLE_VERSION, wheel=ps.wheel.source, rail=ps.rail.source,
                            wheel_right=ps.wheel_r.source, rail_right=ps.rail_r.source, pair=cfg.name,
                            build_cpu_seconds=json.dumps(secs))
    if use_cache:
        tmp = d.with_name(d.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True, exist_ok=True)
        write_zarr(lut, tmp / "lut.zarr")
        write_zarr(kec, tmp / "kec.zarr")
        if kec_r is not None:
            write_zarr(kec_r, tmp / "kec_right.zarr")
        if d.exists():
            shutil.rmtree(d, ignore_errors=True)
        try:
            tmp.rename(d)
        except OSError:  # another process stored the same key meanwhile
            shutil.rmtree(tmp, ignore_errors=True)
    return ContactTables(cfg, ps, lut, kec, kec_r, key, secs)


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


def _loaded_tables(d: Path, names: list[str]) -> tuple[xr.Dataset, xr.Dataset, xr.Dataset | None]:
    """The LUT, KEC and (asymmetric pair, ``names`` with ``kec_right``) right-wheel KEC of cache directory ``d``,
    read once per process (kept while their files are unchanged; at most :data:`_LOADED_MAX` pairs).  Callers
    must not modify the returned datasets."""
    stamp = tuple((d / f"{n}.zarr" / ".zmetadata").stat().st_mtime_ns
                  if (d / f"{n}.zarr" / ".zmetadata").exists() else 0 for n in names)
    hit = _LOADED.get(str(d))
    if hit is not None and hit[0] == stamp:
        return hit[1]
    tabs = tuple(read_zarr(d / f"{n}.zarr") for n in names)
    tabs = tabs + (None,) * (3 - len(tabs))
    if len(_LOADED) >= _LOADED_MAX:
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[str(d)] = (stamp, tabs)
    return tabs


def save_tables(tables: ContactTables, out: Path) -> list[Path]:
    """Write the LUT and KEC datasets as zarr stores into ``out`` (replaced)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, ds in (("lut", tables.lut), ("kec", tables.kec), ("kec_right", tables.kec_right)):
        if ds is None:
            continue
        p = out / f"{name}.zarr"
        write_zarr(ds, p)
        paths.append(p)
    return paths


def check_symmetric(lut: xr.Dataset) -> float:
    """Largest |z(y) - z(-y)| [m] of the ξ_g = 0 column (a symmetric pair gives ~1e-15)."""
    col = lut["V"].sel(xi_g=0.0, method="nearest").sel(quantity="z").values
    return float(np.max(np.abs(col - col[::-1])))
