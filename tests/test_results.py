"""The result dataset (schema shared by run and sweep): zarr round trip, units and long names on
everything, metrics taken over every step (independent of the output sampling), provenance, CLI."""
import subprocess
import sys

import numpy as np
import pytest
import xarray as xr

from hpcrail.kinds import load_scenario
from hpcrail import kinds
from hpcrail.kinds.ltd.outputs import TRAIN_METRICS

METRICS = [o.name for o in TRAIN_METRICS]
LTD = kinds.get("ltd")
from hpcrail.results.store import write_dataset
from hpcrail.simulate import run_scenario


@pytest.fixture(scope="module")
def demo(configs_dir_module):
    sc, _ = load_scenario(configs_dir_module / "trains/demo.yaml", ["simulation.duration_s=200"])
    return sc, run_scenario(sc)


@pytest.fixture(scope="module")
def configs_dir_module():
    from helpers.paths import CONFIGS
    return CONFIGS


def test_zarr_round_trip_schema(demo, tmp_path):
    sc, ds = demo
    path = write_dataset(ds, tmp_path / "demo.zarr")
    back = xr.open_zarr(path)
    assert dict(back.sizes) == {"time": 401, "vehicle": 10, "coupler": 9}
    assert list(back.vehicle.values) == list(range(1, 11)) and list(back.coupler.values) == list(range(1, 10))
    assert back.vehicle_type.values[0] == "loco" and set(back.connection_type.values) == {"autocoupler", "drawbar"}
    for name in ("position", "speed", "acceleration", "coupler_force", "coupler_deflection", "notch",
                 "brake_cylinder_pressure"):
        assert back[name].dims == LTD.output(name).dims
        assert back[name].attrs["units"] == LTD.output(name).units
    for name in METRICS:
        assert name in back and back[name].ndim == 0
    for name, var in back.variables.items():
        assert "long_name" in var.attrs, name
        if var.dtype.kind == "f":
            assert "units" in var.attrs, name
    np.testing.assert_array_equal(back.coupler_force.values, ds.coupler_force.values)
    for key in ("hpcrail_version", "git_commit", "config_yaml", "config_hash", "integrator", "host", "wall_time_s"):
        assert key in back.attrs
    # the stored canonical config re-creates the same scenario
    import yaml
    from hpcrail.config import config_hash
    from hpcrail.kinds.ltd.schema import Scenario
    assert config_hash(Scenario.model_validate(yaml.safe_load(back.attrs["config_yaml"]))) == back.attrs["config_hash"]


def test_sign_convention_and_consistency(demo):
    sc, ds = demo
    # draft while pulling away: the first coupler is in tension at t = 60 s (notch 8, accelerating)
    assert float(ds.coupler_force.sel(time=60.0, coupler=1)) > 0
    assert float(ds.coupler_deflection.sel(time=60.0, coupler=1)) > 0
    # acceleration integrates to the speed (trapezoid over the 0.5 s samples)
    from scipy.integrate import cumulative_trapezoid
    v = ds.speed.values
    v_int = v[0] + cumulative_trapezoid(ds.acceleration.values, ds.time.values, axis=0, initial=0.0)
    assert np.abs(v_int - v).max() < 0.02 * np.abs(v).max()
    # positions decrease from head to tail by about the vehicle spacing
    gaps = -np.diff(ds.position.isel(time=0).values)
    assert np.all((gaps > 15.0) & (gaps < 21.0))


@pytest.mark.parametrize("method, extra", [("rk4", []), ("dopri5", ["integrator.rtol=1e-7", "integrator.atol=1e-8"])])
def test_metrics_do_not_depend_on_output_sampling(configs_dir_module, method, extra):
    runs = []
    for interval in (0.1, 7.0):
        sc, _ = load_scenario(configs_dir_module / "trains/demo.yaml",
                              [f"output.interval_s={interval}", f"integrator.method={method}",
                               "simulation.duration_s=150"] + extra)
        runs.append(run_scenario(sc))
    for name in METRICS:
        assert float(runs[0][name]) == float(runs[1][name]), name
    np.testing.assert_array_equal(runs[0].coupler_max_draft_force.values, runs[1].coupler_max_draft_force.values)
    # the sampled series cannot see every peak; the every-step envelope bounds them (up to the dense
    # output's interpolation error between step ends, ~1e-8 relative here)
    env = runs[0].coupler_max_draft_force
    assert (runs[0].coupler_force.max("time") <= env * (1 + 1e-6) + 1e-6).all()


def test_cli_run_writes_store_and_refuses_overwrite(tmp_path, configs_dir_module):
    out = tmp_path / "d.zarr"
    cmd = [sys.executable, "-m", "hpcrail.cli", "run", str(configs_dir_module / "trains/demo.yaml"), "-o", str(out),
           "--set", "simulation.duration_s=20", "-q"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "completed" in r.stdout and out.exists()
    r2 = subprocess.run(cmd, capture_output=True, text=True)
    assert r2.returncode == 2 and "--overwrite" in r2.stdout + r2.stderr
    r3 = subprocess.run(cmd + ["--overwrite"], capture_output=True, text=True)
    assert r3.returncode == 0
