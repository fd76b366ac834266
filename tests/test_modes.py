"""Modes and spectra (Massa et al. 2012 §9.2, Fig. 9-10): the 2.8 Hz train mode in both coupler models, the
≈ 63.26 Hz longitudinal coupler mode of the inertial model, springs in series on tangent track."""
import math
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from typer.testing import CliRunner

from hpcrail.analysis.modes import find_mode, linearisation_for, modes
from hpcrail.analysis.spectrum import amplitude_spectrum, peak_frequencies
from hpcrail.kinds import load_scenario
from hpcrail.simulate import run_scenario

COUPLERS = Path(__file__).resolve().parents[1] / "configs" / "couplers"
KB, KRR = 3e7, 5e8
K_SERIES = 1.0 / (2.0 / KB + 1.0 / KRR)     # k_B, k_rr, k_B in series


def modal(name, model, *sets):
    sc, _ = load_scenario(COUPLERS / name, [f"coupler.model={model}", *sets])
    return modes(linearisation_for(sc, 0.0))


@pytest.fixture(scope="module")
def loaded():
    return {m: modal("two_car_loaded.yaml", m) for m in ("noninertial", "inertial")}


@pytest.mark.parametrize("model", ["noninertial", "inertial"])
def test_first_mode_is_the_2_8_hz_train_mode(loaded, model):
    """Massa et al. 2012 Fig. 9: the first mode, 2.8 Hz, is present in both models (cars against each other)."""
    und, _ = loaded[model]
    first = [m for m in und if not m.rigid][0]
    assert first.frequency_hz == pytest.approx(2.8, rel=0.01)
    assert first.description.startswith("car") and "longitudinal" in first.description.split(",")[0]
    assert sum(m.rigid for m in und) == 1      # one rigid-body mode: the train's translation


def test_noninertial_two_car_frequency_is_springs_in_series(loaded):
    """On tangent track the massless coupler is k_B, k_rr, k_B in series: f = √(k (m1+m2)/(m1 m2))/2π
    (2.8045 Hz for two 93.8 t cars) — to the finite-difference accuracy of the linearisation."""
    und, _ = loaded["noninertial"]
    m = 93800.0
    f = math.sqrt(K_SERIES * 2.0 / m) / (2 * math.pi)
    assert find_mode(und, "longitudinal").frequency_hz == pytest.approx(f, rel=1e-6)
    und_e, _ = modal("two_car_empty.yaml", "noninertial")
    f_e = math.sqrt(K_SERIES * 2.0 / 23800.0) / (2 * math.pi)
    assert find_mode(und_e, "longitudinal").frequency_hz == pytest.approx(f_e, rel=1e-6)


def test_inertial_model_has_the_63_hz_coupler_mode(loaded):
    """Massa et al. 2012: ≈ 63.26 Hz, the coupler (slider + shank, 190 kg) moving longitudinally against k_B;
    absent from the noninertial model, whose modes are all car modes below 10 Hz."""
    und, damped = loaded["inertial"]
    md = find_mode(und, "slider", min_hz=10.0)
    assert md.frequency_hz == pytest.approx(63.26, rel=0.01)
    assert md.frequency_hz == pytest.approx(math.sqrt(KB / 190.0) / (2 * math.pi), rel=0.002)
    assert "leading slider" in md.description and "trailing slider" in md.description
    assert md.damping_ratio > 1.0   # c_B = 2.5e5 N s/m overdamps it: real eigenvalues of the damped system
    assert max(m.frequency_hz for m in und) > 150.0     # shank rotation and knuckle modes
    und_ni, _ = loaded["noninertial"]
    assert max(m.frequency_hz for m in und_ni) < 10.0
    # the damped 2.8 Hz pair agrees between the models (damping ratio within a few %, see test_planar_train)
    d_in = [d for d in damped if abs(d.natural_frequency_hz - 2.8) < 0.1]
    d_ni = [d for d in loaded["noninertial"][1] if abs(d.natural_frequency_hz - 2.8) < 0.1]
    assert d_in and d_ni
    assert d_in[0].damping_ratio == pytest.approx(d_ni[0].damping_ratio, rel=0.05)


def test_spectrum_helper_recovers_a_sinusoid():
    t = np.arange(0.0, 20.0, 0.005)
    da = xr.DataArray(3.0 + 0.5 * t + 2.0 * np.sin(2 * np.pi * 7.3 * t) + 0.4 * np.sin(2 * np.pi * 31.0 * t),
                      dims="time", coords={"time": t}, name="x", attrs={"units": "N"})
    spec = amplitude_spectrum(da)
    (f1, a1), (f2, a2) = peak_frequencies(spec, n=2)
    assert f1 == pytest.approx(7.3, abs=0.01) and a1 == pytest.approx(2.0, rel=0.2)
    assert f2 == pytest.approx(31.0, abs=0.01) and a2 == pytest.approx(0.4, rel=0.2)
    assert spec.attrs["units"] == "N" and spec["frequency"].attrs["units"] == "Hz"
    with pytest.raises(ValueError):
        amplitude_spectrum(da.isel(time=[0, 1, 3, 4, 5, 6, 7, 8, 9, 10]))


def test_fft_of_the_coupler_force_shows_the_train_mode(tmp_path):
    """Both models: the in-train force of the 2-car run oscillates at the damped 2.8 Hz frequency
    (the spectra of Massa et al. 2012 Figs 10-11); the run is also written and read back by the CLI."""
    from hpcrail.cli import _load_command_modules, app
    from hpcrail.results.store import write_dataset

    _load_command_modules()
    for model in ("noninertial", "inertial"):
        sc, _ = load_scenario(COUPLERS / "two_car_loaded.yaml", [f"coupler.model={model}",
                                                                 "simulation.duration_s=10"])
        ds = run_scenario(sc)
        spec = amplitude_spectrum(ds.coupler_force.sel(coupler=1), t_start=0.0)
        f, a = peak_frequencies(spec, n=1, min_frequency=0.5)[0]
        assert f == pytest.approx(2.797, rel=0.02)
        store = tmp_path / f"{model}.zarr"
        write_dataset(ds, store)
        res = CliRunner().invoke(app, ["spectrum", str(store), "coupler_force", "--sel", "coupler=1",
                                       "--peaks", "1"])
        assert res.exit_code == 0, res.output
        assert "2.7" in res.output or "2.8" in res.output


def test_modes_command_reports_the_paper_frequencies():
    from hpcrail.cli import _load_command_modules, app

    _load_command_modules()
    res = CliRunner().invoke(app, ["modes", str(COUPLERS / "two_car_loaded.yaml"), "--set", "coupler.model=inertial"])
    assert res.exit_code == 0, res.output
    assert "first mode: 2.80" in res.output
    assert "63.3" in res.output
    res = CliRunner().invoke(app, ["modes", str(COUPLERS / "two_car_loaded.yaml"), "--set", "coupler.model=rigid"])
    assert res.exit_code == 2
