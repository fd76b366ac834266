"""The first hour of a new user (issue 30 items 5-6), each small item with its check — nothing here simulates:
a compile notice that says it compiles and for how long (ticking), ``validate --show`` output that loads again,
Python assignment errors in hpcrail's one-line format, unit plausibility warnings, missing files with their
resolved path and a near miss, ``--set`` of a component file as the YAML accepts it, the integrators a kind
allows, help without ``<bool>`` and with the choices, readable output at 80 columns, the accessor on every
dataset of the API, display units for plain xarray plots, ``warmup --all``, ignored result folders."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
import yaml
from typer.testing import CliRunner

from conftest import CONFIGS, ROOT
from hpcrail import cli


def _app():
    cli._load_command_modules()
    return cli.app


def _run(*args):
    return CliRunner().invoke(_app(), list(args))


# ------------------------------------------------------------------------------------------------
# compile notice
# ------------------------------------------------------------------------------------------------
def test_compile_notice_ticks_while_compiling_here_or_in_a_helper():
    """Said once when compilation starts (here: a numba compile; elsewhere: the compile helper), then the elapsed
    time every tick while it lasts, then the total; nothing on a run that compiles nothing."""
    import numba

    from hpcrail._numba import compile_notice, compiling_elsewhere

    said = []

    @numba.njit
    def add_two(x):
        return x + 2

    with compile_notice(said.append, tick_s=0) as n:      # a numba compilation in this process
        add_two(1)
        add_two(2)
    assert said[0].startswith("compiling numba kernels (first run after installing or changing hpcrail")
    assert said[-1].startswith("compiled numba kernels for") and len(said) == 2 and n.seconds > 0
    said.clear()
    with compile_notice(said.append, tick_s=0.05) as n:
        with compiling_elsewhere():      # the compile helper compiling the integrator while this process waits
            time.sleep(0.32)
        time.sleep(0.2)                  # compiled: no more ticks
        k = len(said)
        add_two(3)                       # loaded: nothing compiles
    ticks = [s for s in said if s.startswith("… still compiling: ")]
    assert said[0].startswith("compiling numba kernels") and 2 <= len(ticks) <= 7, said
    assert len(said) == k + 1 and said[-1].startswith("compiled numba kernels for") and 0.3 <= n.seconds < 0.5
    said.clear()
    with compile_notice(said.append, tick_s=0.05) as n:   # everything compiled: silent
        add_two(4)
        time.sleep(0.12)
    assert said == [] and n.seconds == 0.0


# ------------------------------------------------------------------------------------------------
# configuration
# ------------------------------------------------------------------------------------------------
def test_validate_show_writes_a_loadable_file(tmp_path):
    r = _run("validate", str(CONFIGS / "trains/demo.yaml"), "--show")
    assert r.exit_code == 0
    assert "valid (" not in r.stdout and "valid (ltd scenario 'demo'" in r.stderr
    f = tmp_path / "resolved.yaml"
    f.write_text(r.stdout)
    r2 = _run("validate", str(f))
    assert r2.exit_code == 0 and r2.stdout.split("hash ")[1] == r.stderr.split("hash ")[1]   # the same scenario


def test_assignment_errors_are_one_config_line():
    import hpcrail
    from hpcrail.config.errors import ConfigAssignmentError

    sc = hpcrail.load(CONFIGS / "trains/demo.yaml")
    with pytest.raises(ValueError) as e:
        sc.integrator.rtol = -1
    assert isinstance(e.value, ConfigAssignmentError)
    text = str(e.value)
    assert text.startswith("assignment: Integrator.rtol: ") and "(got -1)" in text and "allowed: a finite number" \
        in text and "pydantic" not in text and "\n" not in text
    with pytest.raises(ConfigAssignmentError, match="has no option 'foo'"):
        sc.integrator.options = {"foo": 1}
    assert sc.integrator.options == {}                   # the refused value did not stay
    sc.integrator.rtol = 1e-5
    assert sc.integrator.rtol == 1e-5


def test_values_far_outside_their_usual_range_warn(tmp_path):
    """Metres typed into a millimetre field validate (unusual designs stay possible) with one warning line
    naming the field and the usual range; the shipped scenarios raise none."""
    import hpcrail
    from hpcrail.config.errors import ConfigWarning
    from hpcrail.config.examples import shipped_scenarios
    from hpcrail.kinds import load_scenario

    r = _run("validate", str(CONFIGS / "trains/demo.yaml"), "--set", "connection_types.autocoupler.slack_mm=0.01")
    assert r.exit_code == 0
    err = " ".join(r.stderr.split())
    assert "warning: --set: connection_types.autocoupler.slack_mm: unusual: this value is far below the usual 1 … " \
           "100 (typed in another unit than millimetres?)" in err and "(got 0.01)" in err
    with pytest.warns(ConfigWarning, match="draft.deflection_mm"):
        hpcrail.load(CONFIGS / "trains/demo.yaml",
                     {"connection_types.autocoupler.draft.deflection_mm": [0, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,
                                                                           0.12, 0.14, 0.16, 0.17]})
    for f in shipped_scenarios():
        _sc, doc = load_scenario(f)
        assert doc.warnings == [], (f, [str(w) for w in doc.warnings])


def test_missing_files_name_the_resolved_path_and_a_near_miss(tmp_path):
    for d in ("trains", "vehicles", "locomotives", "connections", "routes", "schedules"):
        (tmp_path / "configs" / d).mkdir(parents=True)
        for f in (CONFIGS / d).iterdir():
            (tmp_path / "configs" / d / f.name).write_bytes(f.read_bytes())
    demo = tmp_path / "configs/trains/demo.yaml"
    demo.write_text(demo.read_text().replace("../vehicles/cq_coal_wagon.yaml", "../vehicles/cq_coal_wagn.yaml"))
    r = _run("validate", str(demo))
    err = " ".join(r.output.split())
    assert r.exit_code == 2
    assert f"component file not found: {tmp_path / 'configs/vehicles/cq_coal_wagn.yaml'} (did you mean " \
           "'../vehicles/cq_coal_wagon.yaml'?)" in err
    r = _run("validate", str(tmp_path / "configs/trains/dem.yaml"))
    assert r.exit_code == 2 and "did you mean" in r.output and "demo.yaml" in r.output


def test_set_accepts_a_component_file_as_the_yaml_does(tmp_path, monkeypatch):
    import hpcrail

    other = CONFIGS / "vehicles/cq_coal_wagon.yaml"
    tree = yaml.safe_load(other.read_text())
    tree["mass_t"] = 61.5
    pn = tree.get("brake", {}).get("pneumatic")
    if isinstance(pn, str):            # the copy lives elsewhere: its own component reference made absolute
        tree["brake"]["pneumatic"] = str(other.parent / pn)
    (tmp_path / "light_wagon.yaml").write_text(yaml.safe_dump(tree))
    monkeypatch.chdir(tmp_path)
    # relative to the working directory (a file the user just wrote) ...
    r = _run("validate", str(CONFIGS / "trains/demo.yaml"), "--set", "vehicle_types.wagon=light_wagon.yaml", "--show")
    assert r.exit_code == 0, r.output
    assert yaml.safe_load(r.stdout)["vehicle_types"]["wagon"]["mass_t"] == 61.5
    # ... or as the scenario file writes it, relative to the file naming the field
    sc = hpcrail.load(CONFIGS / "trains/demo.yaml", {"vehicle_types.wagon": "../vehicles/cq_coal_wagon.yaml"})
    assert sc.vehicle_types["wagon"].mass_t == yaml.safe_load(other.read_text())["mass_t"]
    r = _run("validate", str(CONFIGS / "trains/demo.yaml"), "--set", "vehicle_types.wagon=light_wagn.yaml")
    assert r.exit_code == 2 and "did you mean 'light_wagon.yaml'?" in " ".join(r.output.split())


def test_unknown_integrator_lists_what_the_kind_allows():
    r = _run("validate", str(CONFIGS / "mixed/short_consist_curve.yaml"), "--set", "integrator.method=bdf3")
    out = " ".join(r.output.split())
    assert r.exit_code == 2 and "unknown integrator 'bdf3'" in out
    allowed = out.split("allowed: ")[1].split(", ")
    assert "rk4" in allowed and "dopri5" in allowed and "bdf2" in allowed and "cvode" not in allowed
    r = _run("validate", str(CONFIGS / "trains/demo.yaml"), "--set", "integrator.method=bdf3")
    assert "bdf2" in r.output.split("allowed: ")[1]        # an LTD train takes every method


def test_parameter_units_come_from_the_field_when_its_name_has_none(tmp_path):
    from hpcrail.sweep.spec import expand

    spec = {"base": str(CONFIGS / "trains/demo.yaml"), "parameters": {
        "connection_types.autocoupler.stiffness_scale": {"values": [0.5, 2.0]},
        "connection_types.autocoupler.slack_mm": {"values": [5.0]},
        "connection_types.autocoupler.draft.unloading_ratio": {"values": [0.3]}}}
    f = tmp_path / "units.yaml"
    f.write_text(yaml.safe_dump(spec))
    exp = expand(f)
    units = {p.name: p.units for p in exp.parameters}
    assert units["stiffness_scale"] == "1" and units["slack_mm"] == "mm" and units["unloading_ratio"] == "1"


# ------------------------------------------------------------------------------------------------
# terminal
# ------------------------------------------------------------------------------------------------
def test_help_and_tables_read_at_80_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    r = _run("run", "--help")
    assert "<bool>" not in r.output and "--plot" in r.output and "png|pdf|svg" in r.output
    assert "time|distance" in _run("plot", "--help").output
    assert "local|slurm" in _run("sweep", "--help").output
    monkeypatch.setattr(cli.console, "_width", 80)
    r = _run("integrators")
    lines = r.output.splitlines()
    assert r.exit_code == 0 and max(map(len, lines)) <= 80
    assert any(ln.startswith("bdf2 — adaptive, implicit, order 2") for ln in lines)


def test_tables_in_a_log_file_are_not_folded_to_80_columns():
    """Written to a pipe or a file (a Slurm job's log) with no COLUMNS, the tables get cli.LOG_WIDTH columns
    instead of rich's 80, which folded every cell of a run's running-safety table over three lines; COLUMNS
    still wins."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    wide = subprocess.run([sys.executable, "-m", "hpcrail", "integrators"], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=300)
    assert wide.returncode == 0, wide.stderr
    lines = wide.stdout.splitlines()
    assert 80 < max(map(len, lines)) <= cli.LOG_WIDTH and any("┃ method" in ln for ln in lines)
    narrow = subprocess.run([sys.executable, "-m", "hpcrail", "integrators"], capture_output=True, text=True,
                            cwd=ROOT, env=dict(env, COLUMNS="80"), timeout=300)
    assert max(map(len, narrow.stdout.splitlines())) <= 80


# ------------------------------------------------------------------------------------------------
# Python API
# ------------------------------------------------------------------------------------------------
def test_the_accessor_is_there_on_every_dataset_of_the_api():
    code = ("import xarray as xr, hpcrail\n"
            "assert not hasattr(xr.Dataset(), 'hpcrail')\n"
            "hpcrail.simulate\n"                           # the API alone registers ds.hpcrail
            "assert hasattr(xr.Dataset(), 'hpcrail')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr


def test_display_units_for_plain_xarray_plots():
    import hpcrail.analysis  # noqa: F401

    ds = xr.Dataset({"coupler_force": (("time",), np.array([650000.0, -120000.0]),
                                       {"units": "N", "display_units": "kN", "display_scale": 1e-3,
                                        "long_name": "in-train force"}),
                     "speed": (("time",), np.array([10.0, 20.0]), {"units": "m s-1", "display_units": "km h-1"}),
                     "notch": (("time",), np.array([1.0, 2.0]), {"units": "1"})},
                    coords={"time": ("time", [0.0, 1.0], {"units": "s"})})
    d = ds.hpcrail.in_display_units()
    np.testing.assert_allclose(d.coupler_force.values, [650.0, -120.0])
    np.testing.assert_allclose(d.speed.values, [36.0, 72.0])
    assert d.coupler_force.attrs["units"] == "kN" and d.coupler_force.attrs["units_stored"] == "N"
    assert d.notch.attrs["units"] == "1" and ds.coupler_force.attrs["units"] == "N"   # the dataset is untouched


# ------------------------------------------------------------------------------------------------
# installation
# ------------------------------------------------------------------------------------------------
def test_warmup_all_covers_every_shipped_scenario():
    from hpcrail.config.examples import shipped_scenarios

    found = {str(p.relative_to(CONFIGS)) for p in shipped_scenarios()}
    every = {str(p.relative_to(CONFIGS)) for p in CONFIGS.glob("*/*.yaml") if "simulation" in p.read_text()}
    assert found == every and "trains/train4.yaml" in found and "mixed/train4_empty_wagon.yaml" in found
    assert not any(f.startswith(("vehicles/", "connections/", "locomotives/", "routes/")) for f in found)
    r = _run("warmup", "--all", str(CONFIGS / "trains/demo.yaml"))
    assert r.exit_code == 2 and "not both" in r.output


def test_result_folders_and_sweep_locks_are_git_ignored():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    names = ["demo_figures/force_time.png", "jobs/study_report/failures.png", ".study.zarr.lock", "x/run.zarr/zarr.json"]
    r = subprocess.run(["git", "-C", str(ROOT), "check-ignore", *names], capture_output=True, text=True)
    assert sorted(r.stdout.split()) == sorted(names)
