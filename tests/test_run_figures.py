"""Run figures (issue 16): every kind's declared figures are drawn from a run dataset with labels in words
and units, the plotted values are the dataset's values in display units (kN, km/h, m/s²), one line per
requested coupler, locomotives marked where the train has them; ``hpcrail plot`` / ``run --plot`` write
them, ``hpcrail report`` on a run store too, and bad requests exit 2 naming what is allowed."""
from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from typer.testing import CliRunner

import hpcrail
from hpcrail import cli
from hpcrail.analysis.figures import run_figures
from hpcrail.kinds.ltd.figures import default_couplers, locomotives


def _app():
    cli._load_command_modules()
    return cli.app


@pytest.fixture(scope="module")
def demo(tmp_path_factory, configs_dir_module):
    """The demo train (1 locomotive + 9 wagons) for 60 s: start, notch 8."""
    store = tmp_path_factory.mktemp("demo") / "demo.zarr"
    r = CliRunner().invoke(_app(), ["run", str(configs_dir_module / "trains/demo.yaml"), "-o", str(store), "-q",
                                    "--set", "simulation.duration_s=60", "--plot"])
    assert r.exit_code == 0, r.output
    return store, xr.open_zarr(store).load()


@pytest.fixture(scope="module")
def configs_dir_module():
    from helpers.paths import CONFIGS

    return CONFIGS


def _axes(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def test_run_plot_writes_the_train_figures(demo):
    store, _ds = demo
    fig_dir = store.with_name("demo_figures")
    names = sorted(p.name for p in fig_dir.iterdir())
    assert names == ["force_envelope.png", "force_heatmap.png", "force_time.png", "running_safety.png"]
    assert all((fig_dir / n).stat().st_size > 20_000 for n in names)


def test_force_envelope_is_the_stored_envelope_in_kN_with_the_locomotive_marked(demo):
    _store, ds = demo
    [fig] = run_figures(ds, None, ["force_envelope"])
    [ax] = _axes(fig)
    assert ax.get_ylabel() == "in-train force [kN] (+ draft, − buff)"
    assert ax.get_xlabel().startswith("coupler number")
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    # one line per connection type (the drawbars within the wagon pairs never zigzag with the draft gears)
    types = np.asarray(ds.connection_type.values).astype(str)
    assert sorted(set(types)) == ["autocoupler", "drawbar"]
    for t in ("autocoupler", "drawbar"):
        m = types == t
        np.testing.assert_array_equal(lines[f"max draft ({t})"].get_xdata(), ds.coupler.values[m])
        np.testing.assert_allclose(lines[f"max draft ({t})"].get_ydata(), ds.coupler_max_draft_force.values[m] / 1e3,
                                   rtol=1e-12)
        np.testing.assert_allclose(lines[f"max buff ({t})"].get_ydata(), -ds.coupler_max_buff_force.values[m] / 1e3,
                                   rtol=1e-12)
    assert locomotives(ds) == [1] and list(ds.vehicle_kind.values[:2]) == ["locomotive", "wagon"]
    assert lines["locomotive"].get_xdata()[0] == 0.5          # vehicle 1 sits ahead of coupler 1
    # the peak annotated is the benchmark metric
    texts = [t.get_text() for t in ax.texts]
    assert any(f"{float(ds.max_draft_force) / 1e3:,.0f} kN at coupler {int(ds.max_draft_force_coupler)}" in t
               for t in texts), texts


def test_force_time_draws_one_line_per_requested_coupler(demo):
    _store, ds = demo
    [fig] = run_figures(ds, None, ["force_time"], select={"coupler": [2, 5, 9]})
    top, notch, brake, speed, route = _axes(fig)[:5]          # the route under them (its grade on a twin axis)
    assert route.get_ylabel() == "curvature\n1000/R [1/km]"
    assert [t for t in notch.get_yticks() if t == int(t)] == list(notch.get_yticks())     # an integer notch
    couplers = [ln for ln in top.get_lines() if ln.get_label().startswith("coupler")]
    assert [ln.get_label() for ln in couplers] == ["coupler 2", "coupler 5", "coupler 9"]
    for ln, k in zip(couplers, (2, 5, 9)):
        np.testing.assert_allclose(ln.get_ydata(), ds.coupler_force.sel(coupler=k).values / 1e3, rtol=1e-12)
        np.testing.assert_array_equal(ln.get_xdata(), ds.time.values)
    assert top.get_ylabel() == "in-train force [kN] (+ draft)"
    assert notch.get_ylabel() == "applied notch" and brake.get_ylabel() == "brake command"
    assert speed.get_ylabel() == "speed [km/h] (head)" and route.get_xlabel() == "simulated time [s]"
    np.testing.assert_allclose(speed.get_lines()[0].get_ydata(), ds.speed.sel(vehicle=1).values * 3.6, rtol=1e-12)
    # against distance: the head's position in km
    [fig] = run_figures(ds, None, ["force_time"], x="distance", select={"coupler": [3]})
    [ax] = [a for a in _axes(fig) if a.get_xlabel()]
    assert ax.get_xlabel() == "distance: position [km]"
    np.testing.assert_allclose(_axes(fig)[0].get_lines()[0].get_xdata(), ds.position.sel(vehicle=1).values / 1e3)


def test_force_time_by_default_shows_the_peak_couplers_and_the_locomotive_neighbours(demo):
    _store, ds = demo
    ks, text = default_couplers(ds)
    kd, kb = int(ds.max_draft_force_coupler), int(ds.max_buff_force_coupler)
    assert ks[0] == kd and kb in ks and 1 in ks          # coupler 1 is right behind the locomotive
    assert "peak draft" in text[kd] and "behind loco 1" in text[1]
    [fig] = run_figures(ds, None, ["force_time"])
    labels = [ln.get_label() for ln in _axes(fig)[0].get_lines() if ln.get_label().startswith("coupler")]
    assert labels == [text[k] for k in ks]


def test_force_time_marks_the_envelope_peaks_that_fall_between_samples(demo):
    """The peak draft and buff forces are tracked at every step, the lines only at the output samples: each
    peak is marked at its time and value, no sample of its coupler goes beyond it, and a figure of other
    couplers has no marker."""
    _store, ds = demo
    [fig] = run_figures(ds, None, ["force_time"])
    marks = {ln.get_label().split()[1]: ln for ln in _axes(fig)[0].get_lines() if ln.get_label().startswith("peak ")}
    # the demo's start in notch 8 has draft only (its peak buff force is 0: nothing to mark)
    assert set(marks) == {n for n in ("draft", "buff") if float(ds[f"max_{n}_force"]) > 0} and "draft" in marks
    for name, sign in (("draft", 1.0), ("buff", -1.0)):
        peak, k = float(ds[f"max_{name}_force"]), int(ds[f"max_{name}_force_coupler"])
        if name not in marks:
            continue
        assert marks[name].get_xdata()[0] == pytest.approx(float(ds[f"time_of_max_{name}_force"]), rel=1e-12)
        assert marks[name].get_ydata()[0] == pytest.approx(sign * peak / 1e3, rel=1e-12)
        assert f"coupler {k})" in marks[name].get_label()
        assert float((sign * ds.coupler_force.sel(coupler=k)).max()) <= peak * (1 + 1e-9)
    others = [k for k in ds.coupler.values.tolist() if k not in (int(ds.max_draft_force_coupler),
                                                                 int(ds.max_buff_force_coupler))][:2]
    [fig] = run_figures(ds, None, ["force_time"], select={"coupler": others})
    assert not [ln for ln in _axes(fig)[0].get_lines() if ln.get_label().startswith("peak ")]


def test_force_heatmap_is_time_by_coupler_in_kN(demo):
    _store, ds = demo
    [fig] = run_figures(ds, None, ["force_heatmap"])
    ax = _axes(fig)[0]
    [im] = ax.get_images()
    z = im.get_array()
    assert z.shape == (ds.sizes["coupler"], ds.sizes["time"])
    np.testing.assert_allclose(z, ds.coupler_force.values.T / 1e3, rtol=1e-12)
    assert fig.axes[-1].get_ylabel() == "in-train force [kN] (+ draft, − buff)"
    assert ax.get_xlabel() == "simulated time [s]"


def test_plot_command_and_its_errors(demo, tmp_path):
    store, _ds = demo
    runner = CliRunner()
    r = runner.invoke(_app(), ["plot", str(store), "-o", str(tmp_path / "f"), "-f", "force_time",
                               "--select", "coupler=1,2", "--t-max", "30"])
    assert r.exit_code == 0, r.output
    assert [p.name for p in (tmp_path / "f").iterdir()] == ["force_time.png"]
    r = runner.invoke(_app(), ["plot", str(store), "--figure", "nope"])
    assert r.exit_code == 2 and "allowed: force_envelope, force_time, force_heatmap, friction" in " ".join(
        r.output.split())
    r = runner.invoke(_app(), ["plot", str(store), "--select", "coupler=42", "-o", str(tmp_path / "g")])
    assert r.exit_code == 2 and "coupler [42] not in this dataset; allowed: 1..9" in " ".join(r.output.split())
    r = runner.invoke(_app(), ["plot", str(store), "-f", "friction"])
    assert r.exit_code == 2 and "needs data this dataset does not have" in " ".join(r.output.split())
    r = runner.invoke(_app(), ["plot", str(store), "--list"])
    assert r.exit_code == 0 and "force_envelope" in r.output and "(needs data" in r.output
    # hpcrail report on a run store: its metrics and figures (not "not an hpcrail sweep store")
    r = runner.invoke(_app(), ["report", str(store), "-o", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    assert "peak draft force" in r.output and len(list((tmp_path / "rep").iterdir())) == 4


def test_vertical_run_figures(tmp_path, configs_dir_module):
    sc = hpcrail.load(configs_dir_module / "vertical/full_vehicle_track.yaml", simulation__duration_s=6.0)
    ds = hpcrail.simulate(sc)
    figs = ds.hpcrail.plot_run()
    acc, comfort = figs
    floor, bounce, pitch = _axes(acc)
    assert floor.get_ylabel() == "floor acceleration [m/s²]" and bounce.get_ylabel() == "bounce acceleration [m/s²]"
    assert pitch.get_ylabel() == "pitch acceleration [rad/s²]"
    assert [ln.get_label() for ln in floor.get_lines()] == list(ds.floor_point.values)
    np.testing.assert_allclose(floor.get_lines()[1].get_ydata(), ds.floor_acceleration.isel(floor_point=1).values)
    assert "wheelset_1" not in [ln.get_label() for ln in bounce.get_lines()]   # suspended bodies by default
    axes = _axes(comfort)
    assert [ax.get_ylabel() for ax in axes] == ["Sperling W_z", "Wb r.m.s. acceleration [m/s²]",
                                                "N_MV vertical term", "peak |acceleration| [m/s²]"]
    heights = [b.get_height() for b in axes[0].patches]
    np.testing.assert_allclose(heights, ds.sperling_wz.values)
    paths = ds.hpcrail.plot_run(tmp_path, figures=["ride_comfort"])
    assert [p.name for p in paths] == ["ride_comfort.png"]


def test_planar_train_run_figures(configs_dir_module):
    ds = hpcrail.simulate(configs_dir_module / "couplers/two_car_loaded.yaml", simulation__duration_s=0.5)
    names = [f.name for f in __import__("hpcrail.analysis.figures", fromlist=["x"]).available(ds)]
    assert names == ["force_envelope", "force_time", "force_heatmap", "coupler_displacements"]
    [fig] = run_figures(ds, None, ["coupler_displacements"])
    slider, knuckle, shank = _axes(fig)
    assert slider.get_ylabel() == "slider displacement [mm]" and shank.get_ylabel() == "shank angle [rad]"
    ln = slider.get_lines()[0]
    assert ln.get_label() == "coupler 1, leading end"
    np.testing.assert_allclose(ln.get_ydata(), ds.slider_displacement.sel(coupler=1, coupler_end="leading").values
                               * 1e3)


def test_a_member_whose_configuration_cannot_be_rebuilt_is_drawn_with_a_note(capsys, tmp_path):
    """``plot --scenario``: a sweep member whose configuration cannot be rebuilt from the store keeps its data
    and says on stderr that its figures go without the route and the limits (no silent drop, no traceback)."""
    import xarray as xr

    from hpcrail.commands.plot import member_dataset

    ds = xr.Dataset({"x": ("scenario", [1.0, 2.0])}, attrs={"base_config_yaml": "a: [unclosed", "sweep_name": "s"})
    sub = member_dataset(ds, 1, tmp_path / "s.zarr")
    assert float(sub.x) == 2.0 and "config_yaml" not in sub.attrs and sub.attrs["scenario_name"] == "s scenario 1"
    err = " ".join(capsys.readouterr().err.split())
    assert "the configuration of scenario 1 could not be rebuilt" in err and "without the route and the limits" in err
