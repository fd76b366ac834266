"""Figure conventions (issue 30): every figure each model kind declares — run figures and sweep-report figures — is
drawn from a small synthetic dataset built from the kind's own output declarations (no simulation: no numba), and
matplotlib's layout says whether it keeps the conventions: no legend over data points, no title or axis label off
the figure, every axes labelled, every label of a quantity with units names its display unit in brackets; limits
declared on an output are drawn and labelled; figures from a sweep are labelled by parameter values, never by a
scenario hash; ``--format``/``--dpi`` write the chosen file type."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import xarray as xr

from conftest import CONFIGS
from hpcrail import kinds
from hpcrail.config import canonical_yaml
from hpcrail.kinds import load_scenario
from hpcrail.results.dataset import build_dataset
from hpcrail.results.outputs import RunInfo, RunResult
from hpcrail.results.plotting import FigureNote, layout_problems, save_options
from hpcrail.results.units import display_units, pretty_units

#: one small shipped scenario per kind (shapes only: nothing is simulated)
SCENARIOS = {"ltd": "trains/demo.yaml", "planar_train": "couplers/two_car_loaded.yaml",
             "vertical": "vertical/full_vehicle_track.yaml", "railway_vehicle": "wheelrail/manchester_R500.yaml",
             "mixed_train": "mixed/short_consist_curve.yaml", "ltd_friction": "friction/startup_6.yaml",
             "ltd_pneumatic": "brakes/rack/brake_rack_150.yaml"}
T = np.linspace(0.0, 20.0, 201)
_MAG = {"N": 1e5, "m": 1e-2, "rad": 1e-3, "m s-1": 10.0, "m s-2": 0.5, "rad s-2": 0.1, "s": 5.0, "J": 1e6, "W": 1e6,
        "1": 0.3, "kg": 1e3}


def _value(o, shape_sizes, k: int):
    """Smooth, finite, plausible values of a declared output (positions increase; loads stay positive)."""
    dims = o.dims
    sizes = [len(T) if d == "time" else shape_sizes.get(d, 3) for d in dims]
    if o.dtype == "str":
        return np.full(sizes, "ws1 left") if sizes else "ws1 left"
    if o.dtype in ("int64", "int8"):
        return np.ones(sizes, dtype=int) if sizes else 1
    mag = _MAG.get(o.units, 1.0)
    if not sizes:
        return float(mag * (1.0 + 0.1 * k))
    grid = np.meshgrid(*[np.arange(n, dtype=float) for n in sizes], indexing="ij")
    phase = sum(g * (i + 1) * 0.37 for i, g in enumerate(grid))
    if o.name in ("distance", "position"):
        t = grid[dims.index("time")] if "time" in dims else 0.0
        return 100.0 + 10.0 * T[t.astype(int)] if "time" in dims else 100.0 + phase
    if "time" in dims:
        t = T[grid[dims.index("time")].astype(int)]
        v = mag * (1.2 + np.sin(2 * np.pi * t / 10.0 + phase)) * (1.0 + 0.05 * k)
    else:
        v = mag * (1.0 + 0.3 * np.sin(phase + k))
    return v


def synthetic_run(key: str, k: int = 0) -> xr.Dataset:
    """A run dataset of the kind of ``SCENARIOS[key]``: every declared output with smooth values, built by the
    real dataset builder (attributes, coordinates and configuration as a run has them)."""
    sc, _doc = load_scenario(CONFIGS / SCENARIOS[key])
    kind = kinds.of(sc)
    shape = kind.shape(sc)
    declared = [o for o in kind.outputs if o.applies(sc)]
    values = {o.name: _value(o, shape.sizes, k) for o in declared}
    if "static_wheel_load" in values:   # unloading (Q0 - Q)/Q0 around 0, Y/Q around 0.3
        values["wheel_load"] = 5e4 * (1.0 + 0.2 * np.sin(np.linspace(0, 6, len(T))))[:, None] * np.ones_like(
            values["wheel_load"]) if values["wheel_load"].ndim == 2 else values["wheel_load"]
    info = RunInfo(status="completed", message="completed", method="rk4", stats={"steps": 10}, wall_time=0.1,
                   compile_time=0.0, t_reached=float(T[-1]))
    has_series = any(o.role == "series" for o in declared)
    ds = build_dataset(kind, sc, RunResult(run=info, values=values, time=T if has_series else None),
                       config_yaml=canonical_yaml(sc))
    return ds


def synthetic_study(key: str) -> xr.Dataset:
    """A grid sweep store of 3 x 2 scenarios (brake rate 0.25/0.5/1 per s x stiffness scale 0.5/2), one failed."""
    runs = []
    rates, scales = [0.25, 0.5, 1.0], [0.5, 2.0]
    for i in range(len(rates) * len(scales)):
        runs.append(synthetic_run(key, i))
    st = xr.concat(runs, dim="scenario", data_vars="all", coords="minimal", compat="override",
                   combine_attrs="override")
    n = st.sizes["scenario"]
    st = st.assign_coords(
        scenario=("scenario", np.arange(n)),
        scenario_id=("scenario", np.array([f"{i:016x}" for i in range(n)])),
        notch_rate_per_s=("scenario", np.repeat(rates, 2), {"long_name": "brake application rate", "units": "s-1",
                                                            "sweep_path": "vehicle_types.loco.traction.notch_rate_per_s",
                                                            "sweep_source": "values"}),
        stiffness_scale=("scenario", np.tile(scales, 3), {"long_name": "draft-gear stiffness scale", "units": "1",
                                                          "sweep_path": "connection_types.autocoupler.stiffness_scale",
                                                          "sweep_source": "values"}))
    status = np.array(["completed"] * n, dtype=object)
    status[3] = "max_steps"
    st["status"] = ("scenario", status.astype(str))
    st["message"] = ("scenario", np.where(status == "completed", "completed", "the integrator reached max_steps"))
    st["done"] = ("scenario", np.ones(n, np.int8))
    st.attrs.update(parameters=json.dumps([{"name": "notch_rate_per_s", "path": "x.notch_rate_per_s"},
                                           {"name": "stiffness_scale", "path": "x.stiffness_scale"}]),
                    design="grid", base_config_yaml=st.attrs.get("config_yaml", ""), sweep_name=f"{key}_study")
    return st


def _axes(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]


def check_conventions(fig, ds, where: str) -> None:
    """The layout problems matplotlib finds, axes without labels, labels of quantities with units without them."""
    problems = layout_problems(fig)
    assert not problems, f"{where}: {problems}"
    units = {}
    for name, v in ds.variables.items():
        u = pretty_units(display_units(v.attrs))
        if u and v.attrs.get("long_name"):
            units[v.attrs["long_name"]] = u
    for i, ax in enumerate(_axes(fig)):
        if not (ax.get_lines() or ax.collections or ax.images or ax.patches):
            continue
        ylabel = ax.get_ylabel()
        assert ylabel.strip(), f"{where}: axes {i} has no y label"
        shares_x = [a for a in ax.get_shared_x_axes().get_siblings(ax) if a in fig.axes and a is not ax]
        if not shares_x or all(a.get_position().y0 > ax.get_position().y0 for a in shares_x):
            assert ax.get_xlabel().strip() or ax.get_xticklabels() == [] or any(
                a.get_xlabel() for a in shares_x), f"{where}: axes {i} has no x label"
        for text in (ylabel, ax.get_xlabel()):
            head = text.split(" [")[0].split(" (")[0].strip()
            u = units.get(head)
            if u:
                assert f"[{u}]" in text, f"{where}: the label {text!r} of a quantity in {u} lacks its unit"
    for t in [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]:
        labels = [x.get_text() for x in t.get_texts()]
        assert not any(len(x.strip()) == 16 and all(c in "0123456789abcdef" for c in x.strip()) for x in labels), \
            f"{where}: a legend labels scenarios by hash: {labels}"


RUN_CASES = [(key, f.name) for key in SCENARIOS for f in kinds.get(
    "ltd" if key.startswith("ltd_") else load_scenario(CONFIGS / SCENARIOS[key])[0].model).run_figures]


@pytest.fixture(scope="module")
def runs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {key: synthetic_run(key) for key in SCENARIOS}


@pytest.mark.parametrize("key", list(SCENARIOS))
def test_every_run_figure_keeps_the_conventions(runs, key):
    import matplotlib

    matplotlib.use("Agg")
    from hpcrail.analysis.figures import available, run_figures

    ds = runs[key]
    names = [f.name for f in available(ds)]
    assert names, key
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FigureNote)
            figs = run_figures(ds, None, [name])
        for fig in figs:
            check_conventions(fig, ds, f"{key}: {name}")


def test_running_safety_draws_two_metre_means_against_labelled_limits(runs):
    """The mixed train's running-safety figure: Y/Q and ΔQ/Q panels are 2 m means with the EN 14363 limits
    (0.8, 0.6) drawn as lines and labelled; ΣY against ± the Prud'homme limit of the stored wheelsets; the route
    panel under it."""
    from hpcrail.analysis.figures import run_figures

    ds = runs["mixed_train"]
    [fig] = run_figures(ds, None, ["running_safety"])
    axes = {ax.get_ylabel().split("\n")[0]: ax for ax in _axes(fig)}
    yq, dq = axes["Y/Q 2 m mean"], axes["ΔQ/Q 2 m mean"]
    for ax, lim in ((yq, 0.8), (dq, 0.6)):
        ys = [ln.get_ydata()[0] for ln in ax.get_lines() if len(ln.get_xdata()) == 2 and ln.get_linestyle() == "--"]
        assert lim in ys, (ax.get_ylabel(), ys)
        assert any(t.get_text().startswith(f"limit {lim:g}") for t in ax.texts)
    sy = next(ax for k, ax in axes.items() if k.startswith("ΣY"))
    ys = np.array([ln.get_ydata()[0] for ln in sy.get_lines() if len(ln.get_xdata()) == 2
                   and ln.get_linestyle() in ("--", ":")])
    for lim in ds.sum_y_limit.isel(detailed_vehicle=0).values / 1e3:      # ± each wheelset's limit [kN]
        assert np.isclose(ys, lim, rtol=1e-12).any() and np.isclose(ys, -lim, rtol=1e-12).any(), (lim, ys)
    assert any(k.startswith("curvature") for k in axes), list(axes)
    # the figure's 2 m means are the standard's: their maxima are those of running_safety() (EN 14363 §7) on the
    # same samples to round-off (every wheelset at the leading wheelset's position: the same windows)
    from hpcrail.results.running_safety import running_safety, two_metre_means

    sub = ds.isel(detailed_vehicle=0)
    m = two_metre_means(sub, {})
    nw = sub.sizes["wheelset"]
    s = np.repeat(sub.distance.values[:, None], nw, axis=1)
    rs = running_safety(sub.time.values, s, sub.wheel_load.values, sub.lateral_force.values, sub.sum_y.values,
                        sub.static_wheel_load.values, np.repeat(np.arange(nw), 2))
    assert rs["extreme_y_over_q"].value == pytest.approx(float(np.max(m["y_over_q"])), rel=1e-12)
    assert rs["extreme_unloading"].value == pytest.approx(float(np.max(m["wheel_unloading"])), rel=1e-9)
    assert rs["extreme_sum_y"].value == pytest.approx(float(np.max(np.abs(m["sum_y"]))), rel=1e-12)
    # the 2 m mean of a constant Y/Q series is that constant (the sliding mean of the filtered series)

    sub = ds.isel(detailed_vehicle=0).drop_vars(["wheel_load", "lateral_force"])
    sub["y_over_q"] = sub["y_over_q"] * 0 + 0.42
    m = two_metre_means(sub, {})
    np.testing.assert_allclose(m["y_over_q"], 0.42, rtol=1e-9)
    assert np.all(np.diff(m["s"]) > 0) and m["s"][1] - m["s"][0] == pytest.approx(0.5)


@pytest.mark.parametrize("key", ["ltd", "mixed_train"])
def test_every_report_figure_keeps_the_conventions(key):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    import hpcrail.analysis  # noqa: F401  (ds.hpcrail)
    from hpcrail.analysis import report

    st = synthetic_study(key)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FigureNote)
        rep = report.write_report(st, None, ["max_buff_force", "mean_speed"] + (["worst_y_over_q"] if key ==
                                                                                   "mixed_train" else []))
    made = [(fig.get_label(), fig) for fig in rep.files]
    names = [n for n, _f in made]
    assert "failures" in names and "envelopes" in names
    if key == "mixed_train":
        assert "running_safety_vs_buff" in names
    for name, fig in made:
        assert isinstance(fig, Figure)
        check_conventions(fig, st, f"{key} report: {name}")
    # the swept parameters by their values in a legend or on an axis, never by hash; the geometric levels on a
    # log axis with the levels as ticks
    fig = dict(made)[next(n for n in names if n.startswith("metric_"))]
    ax0 = _axes(fig)[0]
    texts = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    assert any("1/s" in t for t in texts) or "[1/s]" in ax0.get_xlabel()
    rate_ax = next(ax for ax in _axes(fig) if "brake application rate" in ax.get_xlabel())
    assert rate_ax.get_xscale() == "log"
    np.testing.assert_allclose(rate_ax.get_xticks(), [0.25, 0.5, 1.0])
    # the failure map says why
    fail = dict(made)["failures"]
    assert "max_steps (1×): the integrator reached max_steps" in fail.get_supxlabel()


def test_declared_limits_are_drawn_on_study_metrics():
    """A metric declaring a limit (worst Y/Q: 0.8) gets a labelled limit line in its study figure; a limit far
    above the data is named at the edge instead of flattening the data."""
    from matplotlib.figure import Figure

    from hpcrail.results.plotting import limit_in_view, limit_line

    fig = Figure()
    ax = fig.subplots()
    ax.plot([0, 1], [0.45, 0.48])
    line = limit_line(ax, 0.8, "limit 0.8 (EN 14363)", show=limit_in_view([0.45, 0.48], 0.8))
    assert line is not None and line.get_ydata()[0] == 0.8 and ax.texts[-1].get_text() == "limit 0.8 (EN 14363)"
    ax2 = fig.add_subplot(2, 1, 2)
    ax2.plot([0, 1], [0.01, 0.02])
    assert limit_line(ax2, 0.8, "limit 0.8", show=limit_in_view([0.01, 0.02], 0.8)) is None
    assert "off the scale" in ax2.texts[-1].get_text()
    attrs = kinds.get("mixed_train").output("worst_y_over_q").attrs()
    assert attrs["limit"] == 0.8 and attrs["limit_source"].startswith("EN 14363")


@pytest.mark.parametrize("fmt,magic", [("pdf", b"%PDF"), ("svg", b"<?xml"), ("png", b"\x89PNG")])
def test_figure_format_and_dpi(runs, tmp_path, fmt, magic):
    from hpcrail.analysis.figures import run_figures

    [path] = run_figures(runs["ltd"], tmp_path, ["force_envelope"], format=fmt, dpi=50)
    assert path.suffix == f".{fmt}" and path.read_bytes()[:len(magic)] == magic
    if fmt == "png":
        from matplotlib.image import imread

        h, w = imread(path).shape[:2]
        assert (w, h) == (int(11 * 50), int(4.8 * 50))      # figure size 11 x 4.8 in at 50 dpi
    with pytest.raises(ValueError, match="allowed: png, pdf, svg"):
        with save_options("jpeg"):
            pass


def test_plot_of_a_sweep_member_draws_what_was_kept_and_options_never_overwrite(runs, tmp_path):
    """``hpcrail plot STUDY.zarr --scenario K`` on a study that kept only some series (no track position): the
    running-safety figure against time, a note naming the series to add; ``--select``/``--scenario`` write into a
    sub-folder of the default folder (the figures of ``hpcrail run --plot`` stay)."""
    from typer.testing import CliRunner

    from hpcrail import cli

    cli._load_command_modules()
    st = synthetic_study("mixed_train")
    keep = {"front_coupler_force", "rear_coupler_force", "y_over_q", "sum_y"}
    st = st.drop_vars([n for n, v in st.data_vars.items() if "time" in v.dims and n not in keep])
    store = tmp_path / "study.zarr"
    st.to_zarr(store, mode="w", consolidated=True)
    r = CliRunner().invoke(cli.app, ["plot", str(store), "--scenario", "2"])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "note: running_safety: drawn without distance" in out and "outputs.series.variables" in out
    assert sorted(p.name for p in (tmp_path / "study_figures" / "scenario-2").iterdir()) == [
        "force_envelope.png", "running_safety_v4.png"]
    run = tmp_path / "demo.zarr"
    runs["ltd"].to_zarr(run, mode="w", consolidated=True)
    assert CliRunner().invoke(cli.app, ["plot", str(run)]).exit_code == 0
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "demo_figures").glob("*.png")}
    r = CliRunner().invoke(cli.app, ["plot", str(run), "--select", "coupler=1", "--x", "distance", "--format", "svg"])
    assert r.exit_code == 0, r.output
    made = {p.name for p in (tmp_path / "demo_figures" / "coupler-1_x-distance").iterdir()}
    assert {"force_envelope.svg", "force_heatmap.svg", "force_time.svg"} <= made and all(
        n.endswith(".svg") for n in made)
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "demo_figures").glob("*.png")} == before
    r = CliRunner().invoke(cli.app, ["plot", str(run), "--format", "jpeg"])
    assert r.exit_code == 2 and "allowed: png, pdf, svg" in r.output


@pytest.mark.parametrize("lo,hi", [(19_400, 20_243), (0, 12), (-350_000, 410_000)])
def test_integer_ticks_fit_side_by_side(lo, hi):
    """A make-up report's panel of nine (3 × 3, as ``_scatter_metric`` draws them) against an integer
    parameter: the whole-number ticks must not overlap.  With matplotlib's plain ``MaxNLocator(integer=True)``
    the five-digit masses of ``makeup_screening`` overlapped, which the layout check now finds."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.ticker import MaxNLocator

    from hpcrail.results.plotting import integer_ticks, new_figure

    def panel(fit: bool):
        fig, axes = new_figure(3, 3, figsize=(4.6 * 3 + 0.8, 3.7 * 3 + 0.7), squeeze=False)
        for ax in axes.flat:
            sc = ax.scatter(np.linspace(lo, hi, 4), [1.0, 3.0, 2.0, 4.0], c=[1, 2, 3, 4])
            fig.colorbar(sc, ax=ax, pad=0.01)
            ax.set_xlabel("mass behind the first empty car [t]")
            ax.set_ylabel("peak buff force [kN]")
            if fit:
                integer_ticks(ax, "x")
            else:
                ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        return fig

    fig = panel(True)
    assert layout_problems(fig) == []
    ticks = [t for t in fig.axes[0].get_xticks() if lo <= t <= hi]
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks)
    if hi - lo > 10_000:           # the check can fail: the plain locator's labels overlap
        assert any("tick labels" in p for p in layout_problems(panel(False)))
