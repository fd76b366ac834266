"""Analysis that works on every store (issue 16): grid, zip and sampled (sobol, saltelli) sweep stores
opened with ``open_sweep`` or plain ``xr.open_zarr``; text variables that read back as ordinary strings
(``Dataset.where(drop=True)`` works); ``grid()`` refuses non-grid designs with its ValueError; Sobol'
indices with SALib checked on the Ishigami function (analytic indices, Saltelli et al. 2010) through the
store's own layout; the study report's figures (lines per level, noise metrics left out, failure map
only with failures)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from helpers.sweep import write_spec

import hpcrail
from hpcrail.analysis import open_sweep
from hpcrail.analysis.report import _grid_metric, write_report
from hpcrail.analysis.sensitivity import sobol_indices
from hpcrail.results.saltelli import saltelli_block, saltelli_unit
from hpcrail.sweep.runner import run_sweep

SLACK = "connection_types.autocoupler.slack_mm"
MASS = "vehicle_types.wagon.mass_t"
COUNT = "consist.1.count"


def quiet(*_a, **_k):
    pass


def run(spec, store, **kw):
    return run_sweep(spec, store, progress=False, say=quiet, inline=True, **kw)


@pytest.fixture(scope="module")
def grid_store(tmp_path_factory):
    """3 x 2 x 2 grid over slack, wagon mass and wagon count (7 wagons cannot form the demo's wagon pairs:
    those six scenarios are invalid — a level a field refuses by itself, like a negative slack, is a spec
    error instead), 2 s of the demo train, envelopes kept."""
    d = tmp_path_factory.mktemp("grid")
    spec = write_spec(d / "grid.yaml", {SLACK: {"values": [0, 10, 20]}, MASS: {"values": [90, 120]},
                                        COUNT: {"values": [7, 8]}},
                      extra={"outputs": {"envelopes": True}})
    run(spec, d / "grid.zarr", batch_size=4)
    return d / "grid.zarr"


@pytest.fixture(scope="module")
def saltelli_store(tmp_path_factory):
    """A saltelli design: N = 4 base samples over 2 parameters -> 4 (2 + 2) = 16 scenarios."""
    d = tmp_path_factory.mktemp("saltelli")
    spec = write_spec(d / "s.yaml", {SLACK: {"uniform": [0, 25]}, MASS: {"loguniform": [70, 130]}},
                      design="saltelli", extra={"samples": 4, "seed": 3})
    run(spec, d / "s.zarr", batch_size=8)
    return d / "s.zarr"


def test_text_variables_read_back_as_ordinary_strings(grid_store, saltelli_store):
    for store in (grid_store, saltelli_store):
        ds = xr.open_zarr(store)
        for name in ("status", "message", "scenario_id"):
            assert ds[name].dtype.kind == "U", (name, ds[name].dtype)
        loaded = ds.load()
        done = loaded.where(loaded.status == "completed", drop=True)    # failed a dtype promotion before
        assert set(done.status.values.tolist()) == {"completed"}
        big = loaded.where(loaded.max_draft_force > float(loaded.max_draft_force.median()), drop=True)
        assert 0 < big.sizes["scenario"] < loaded.sizes["scenario"]
        # open_sweep loads the scenario variables: where(drop=True) needs no .compute()
        st = open_sweep(store, indexed=False)
        assert st.where(st.max_draft_force > 0, drop=True).sizes["scenario"] == int((st.max_draft_force > 0).sum())


def test_summary_table_and_failures_on_every_way_of_opening(grid_store, saltelli_store):
    for store in (grid_store, saltelli_store):
        for ds in (open_sweep(store), open_sweep(store, indexed=False), xr.open_zarr(store)):
            summ = ds.hpcrail.summary()          # AssertionError on an indexed store before
            row = summ.loc["max_draft_force"]
            assert row["label"] == "peak draft force" and row["unit"] == "kN"
            ok = ds.status.values == "completed"
            assert row["count"] == ok.sum()
            np.testing.assert_allclose(row["max"], float(ds.max_draft_force.values[ok].max()) / 1e3)
            table = ds.hpcrail.metrics_table()
            assert len(table) == ds.sizes["scenario"] and list(table.index) == list(range(ds.sizes["scenario"]))
            np.testing.assert_allclose(table["max_draft_force [kN]"], ds.max_draft_force.values / 1e3)
    fails = open_sweep(grid_store).hpcrail.failures()
    assert fails["consist_1_count"].tolist() == [7] * 6 and set(fails.status) == {"invalid"}
    assert sorted(fails["slack_mm"].tolist()) == [0, 0, 10, 10, 20, 20]


def test_grid_unstacks_grids_and_refuses_sampled_designs(grid_store, saltelli_store):
    for ds in (open_sweep(grid_store), xr.open_zarr(grid_store)):
        g = ds.hpcrail.grid()
        assert dict(g.max_draft_force.sizes) == {"slack_mm": 3, "mass_t": 2, "consist_1_count": 2}
        flat = xr.open_zarr(grid_store)
        k = int(np.flatnonzero((flat.slack_mm.values == 20) & (flat.mass_t.values == 120)
                               & (flat["consist_1_count"].values == 8))[0])
        assert float(g.max_draft_force.sel(slack_mm=20, mass_t=120, consist_1_count=8)) == \
            float(flat.max_draft_force[k])
        assert np.isnan(g.max_draft_force.sel(consist_1_count=7)).all()          # the invalid scenarios are gaps
    for ds in (open_sweep(saltelli_store), xr.open_zarr(saltelli_store)):
        assert not ds.hpcrail.is_grid()
        with pytest.raises(ValueError, match="not a grid design"):
            ds.hpcrail.grid()


def test_parameter_coordinates_are_labelled_in_words_with_units(grid_store, saltelli_store):
    ds = xr.open_zarr(saltelli_store)
    assert ds.slack_mm.attrs["long_name"] == "autocoupler slack" and ds.slack_mm.attrs["units"] == "mm"
    assert ds.mass_t.attrs["long_name"] == "wagon mass" and ds.mass_t.attrs["units"] == "t"
    assert ds.attrs["design"] == "saltelli" and ds.attrs["samples"] == 4 and ds.sizes["scenario"] == 16
    params = json.loads(ds.attrs["parameters"])
    assert [p["label"] for p in params] == ["autocoupler slack", "wagon mass"]


def test_saltelli_scenarios_are_salibs_points_through_the_inverse_cdfs(saltelli_store):
    ds = xr.open_zarr(saltelli_store)
    u = saltelli_unit(2, 4, 3)
    np.testing.assert_allclose(ds.slack_mm.values, 25 * u[:, 0], rtol=1e-12)
    np.testing.assert_allclose(ds.mass_t.values, np.exp(np.log(70) + np.log(130 / 70) * u[:, 1]), rtol=1e-12)
    # A_j and AB_j share every coordinate but the j-th (Saltelli's radial blocks)
    blk = saltelli_block(2)
    s = ds.slack_mm.values.reshape(4, blk)
    m = ds.mass_t.values.reshape(4, blk)
    np.testing.assert_array_equal(m[:, 1], m[:, 0])      # AB_1 changes slack only
    np.testing.assert_array_equal(s[:, 2], s[:, 0])      # AB_2 changes mass only


def _ishigami(x):
    a, b = 7.0, 0.1
    return np.sin(x[:, 0]) + a * np.sin(x[:, 1]) ** 2 + b * x[:, 2] ** 4 * np.sin(x[:, 0])


def test_sobol_indices_of_the_ishigami_function_through_the_store_layout():
    """Analytic indices of the Ishigami function (a = 7, b = 0.1; Saltelli et al. 2010): S1 = 0.3139,
    0.4424, 0; ST = 0.5576, 0.4424, 0.2437.  The function is evaluated on the design's points in store
    order and analysed as ``hpcrail report`` does; a failed scenario drops its whole block."""
    n, d = 2048, 3
    u = saltelli_unit(d, n, 11)
    x = -np.pi + 2 * np.pi * u
    y = _ishigami(x)
    status = np.array(["completed"] * y.size, dtype="<U16")
    status[7] = "max_steps"
    ds = xr.Dataset({"f": ("scenario", y, {"role": "metric"}), "status": ("scenario", status),
                     "done": ("scenario", np.ones(y.size, np.int8))},
                    attrs={"design": "saltelli", "samples": n, "second_order": 0, "seed": 1})
    t = sobol_indices(ds, ["f"], ["x1", "x2", "x3"], num_resamples=200)
    assert (t["samples"] == n - 1).all()                 # the block of scenario 7 is left out
    s1, st = t.loc["f"]["S1"].values, t.loc["f"]["ST"].values
    np.testing.assert_allclose(s1, [0.3139, 0.4424, 0.0], atol=0.04)
    np.testing.assert_allclose(st, [0.5576, 0.4424, 0.2437], atol=0.04)
    assert (t.loc["f"]["S1_conf"] < 0.1).all()
    with pytest.raises(ValueError, match="design 'saltelli'"):
        sobol_indices(ds.assign_attrs(design="sobol"), ["f"], ["x1", "x2", "x3"])


def test_sobol_bootstrap_is_reproducible_with_seed_0_and_leaves_numpy_global_state_alone():
    """SALib seeds its bootstrap only ``if seed:`` and from numpy's global state: with the sweeps' default seed 0
    every call gave other confidence intervals.  The same store gives the same table, whatever the caller's
    global random state, which is left as it was."""
    n, d = 256, 3
    y = _ishigami(-np.pi + 2 * np.pi * saltelli_unit(d, n, 5))
    ds = xr.Dataset({"f": ("scenario", y, {"role": "metric"}),
                     "status": ("scenario", np.array(["completed"] * y.size, dtype="<U16"))},
                    attrs={"design": "saltelli", "samples": n, "second_order": 0, "seed": 0})
    np.random.seed(1)
    a = sobol_indices(ds, ["f"], ["x1", "x2", "x3"], num_resamples=50)
    after = np.random.random()
    np.random.seed(2)
    b = sobol_indices(ds, ["f"], ["x1", "x2", "x3"], num_resamples=50)
    pd.testing.assert_frame_equal(a, b)
    assert (a["S1_conf"] > 0).all()
    np.random.seed(1)
    assert np.random.random() == after          # the caller's global state untouched by the analysis
    c = sobol_indices(ds, ["f"], ["x1", "x2", "x3"], num_resamples=50, seed=7)
    assert not np.array_equal(a["S1_conf"].values, c["S1_conf"].values)    # the seed does set the bootstrap


def test_report_figures_drawn_in_processes_are_the_serial_files(grid_store, tmp_path):
    """``jobs``: the metric figures drawn by two processes are byte for byte the serial ones, in the same order."""
    ds = xr.open_zarr(grid_store)
    one = write_report(ds, tmp_path / "one", jobs=1)
    two = write_report(ds, tmp_path / "two", jobs=2)
    assert [p.name for p in one.files] == [p.name for p in two.files]
    metric_files = [p.name for p in one.files if p.name.startswith("metric_")]
    assert len(metric_files) >= 2
    for name in metric_files:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    with pytest.raises(ValueError, match="jobs = 0"):
        write_report(ds, tmp_path / "zero", jobs=0)


def test_sobol_on_a_saltelli_sweep_store_and_its_report(saltelli_store, tmp_path):
    st = open_sweep(saltelli_store)
    t = st.hpcrail.sobol(["max_draft_force"])
    assert list(t.index.get_level_values(1)) == ["slack_mm", "mass_t"] and (t["samples"] == 4).all()
    assert np.isfinite(t["ST"]).all()
    rep = write_report(xr.open_zarr(saltelli_store), tmp_path)
    names = [p.name for p in rep.files]
    assert "sobol_indices.png" in names and "failures.png" not in names       # nothing failed
    assert rep.sobol is not None and "max_buff_force" in rep.skipped            # no buff in 2 s: noise
    assert "metric_max_buff_force.png" not in names


def test_report_of_a_grid_draws_lines_per_level_and_maps_the_failures(grid_store, tmp_path):
    ds = xr.open_zarr(grid_store).load()
    rep = write_report(ds, tmp_path)
    names = [p.name for p in rep.files]
    assert "failures.png" in names and "envelopes.png" in names and "metric_max_draft_force.png" in names
    assert "constant" in rep.skipped["max_buff_force"]
    ok = ds.status.values == "completed"
    fig = _grid_metric(ds, "max_draft_force", ["slack_mm", "mass_t", "consist_1_count"], ok, None)
    ax_slack, ax_mass, ax_count = [a for a in fig.axes if a.get_visible() and a.get_label() != "<colorbar>"]
    assert ax_slack.get_xlabel() == "autocoupler slack [mm]" and ax_slack.get_ylabel() == "peak draft force [kN]"
    lines = {ln.get_label(): ln for ln in ax_slack.get_lines()}
    assert set(lines) == {"90 t", "120 t"}              # one line per level of the second parameter
    for mass, ln in ((90, lines["90 t"]), (120, lines["120 t"])):
        sel = (ds.mass_t.values == mass) & (ds["consist_1_count"].values == 8)   # the third parameter: middle level
        order = np.argsort(ds.slack_mm.values[sel])
        np.testing.assert_allclose(ln.get_ydata(), ds.max_draft_force.values[sel][order] / 1e3)
    # lines per wagon count: the all-invalid count (7) is left out
    assert [ln.get_label().split()[0] for ln in ax_mass.get_lines()] == ["8"]
    assert {ln.get_label() for ln in ax_count.get_lines()} == {"0 mm", "10 mm", "20 mm"}
    for ln in ax_count.get_lines():                     # the invalid count is a gap on every slack line
        y = ln.get_ydata()
        assert np.isnan(y[0]) and np.isfinite(y[1])


def test_python_api_sweep_from_a_mapping(tmp_path, monkeypatch):
    from helpers.sweep import DEMO

    monkeypatch.chdir(tmp_path)
    st = hpcrail.sweep({"name": "api", "base": str(DEMO), "set": {"simulation.duration_s": 1.0},
                        "parameters": {MASS: {"values": [90, 110]}}}, inline=True, quiet=True)
    assert (tmp_path / "api.zarr").is_dir() and st.sizes["scenario"] == 2
    assert float(st.sel(mass_t=110).max_draft_force) > float(st.sel(mass_t=90).max_draft_force)
    assert "parameters:" in st.attrs["spec_yaml"]
