"""`hpcrail run` + `hpcrail friction-report` on the Oprea 2018 start-up case, and the sweep job."""
from pathlib import Path

import numpy as np
import xarray as xr
import yaml
from typer.testing import CliRunner

from hpcrail import cli
from hpcrail.kinds import load_scenario

ROOT = Path(__file__).resolve().parents[1]


def _app():
    cli._load_command_modules()
    return cli.app


def test_run_and_report(tmp_path, configs_dir):
    runner = CliRunner()
    store = tmp_path / "s6.zarr"
    r = runner.invoke(_app(), ["run", str(configs_dir / "friction/startup_6.yaml"), "-o", str(store), "-q",
                               "--set", "simulation.duration_s=4"])
    assert r.exit_code == 0, r.output
    ds = xr.open_zarr(store)
    assert str(ds["status"].values) == "completed"
    assert ds.attrs["friction_treatment"] == "event_driven"
    assert "Oprea 2018" in ds.attrs["source"]
    for v in ("friction_force", "relative_velocity", "friction_mode", "stick_phases", "final_deflection",
              "mode_change_time"):
        assert "units" in ds[v].attrs and "long_name" in ds[v].attrs
    out = tmp_path / "report"
    r = runner.invoke(_app(), ["friction-report", str(store), "-o", str(out), "--coupler", "4"])
    assert r.exit_code == 0, r.output
    for name in ("relative_velocity.png", "relative_displacement.png", "coupler_4_force.png"):
        assert (out / name).stat().st_size > 10_000
    rep = (out / "report.md").read_text()
    assert "every friction connection sticks: True" in rep
    assert "| 1 | 8.3333 | 8.3333 |" in rep            # F(n-1)/n at the first connection
    r = runner.invoke(_app(), ["friction-report", str(store), "--coupler", "9"])
    assert r.exit_code == 2 and "out of range" in r.output


def test_sweep_job_paths_are_valid():
    """Every parameter of jobs/friction_regularisation.yaml is a valid --set path on its base."""
    job_file = ROOT / "jobs" / "friction_regularisation.yaml"
    job = yaml.safe_load(job_file.read_text())
    base = (job_file.parent / job["base"]).resolve()
    params = job["parameters"]
    lengths = {len(v["values"]) for v in params.values()}
    assert job["design"] == "zip" and len(lengths) == 1
    n = lengths.pop()
    treatments = params["friction.treatment"]["values"]
    assert {"event_driven", "regularised"} <= set(treatments)
    for i in range(n):
        sets = [f"{k}={v['values'][i]}" for k, v in params.items()]
        sc, _ = load_scenario(base, sets)
        assert sc.friction.treatment == treatments[i]
    widths = np.array([w for t, w in zip(treatments, params["friction.regularisation_width_mps"]["values"])
                       if t == "regularised"], float)
    assert widths.min() <= 1e-4 and widths.max() >= 1e-2
