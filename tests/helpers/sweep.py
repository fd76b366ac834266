"""Helpers shared by the sweep tests: spec files around the demo train, store comparison."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "configs" / "trains" / "demo.yaml"

#: variables that legitimately differ between two runs of the same scenarios
TIMING = ["wall_time", "compile_time"]


def write_spec(path: Path, parameters: dict, *, duration: float = 2.0, design: str = "grid", base: Path = DEMO,
               extra: dict | None = None, set_: dict | None = None) -> Path:
    """A sweep spec over the demo train (short duration) at ``path``."""
    spec = {"base": str(base), "set": {"simulation.duration_s": duration, **(set_ or {})},
            "parameters": parameters, "design": design}
    spec.update(extra or {})
    path.write_text("# test sweep\n" + yaml.safe_dump(spec, sort_keys=False))
    return path


def load_results(store: Path) -> xr.Dataset:
    """The store's content without timings and run attributes, loaded in memory."""
    ds = xr.open_zarr(store, consolidated=True).drop_vars(TIMING).load()
    ds.attrs = {}
    return ds


def assert_same_results(a: Path, b: Path) -> None:
    """Identical stores (every variable and coordinate, NaN == NaN) apart from timings."""
    da, db = load_results(a), load_results(b)
    xr.testing.assert_identical(da, db)
    assert np.asarray(da.done.values).all()
