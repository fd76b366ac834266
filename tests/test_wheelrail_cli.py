"""``hpcrail contact``: tables, figures and report for the shipped S1002/UIC60 pair; the flange-contact
shift and the equivalent conicity at 3 mm with their data sources, cross-checked against the second S1002
data set (CONTACT's Manchester-benchmark points); configuration errors exit with code 2."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from hpcrail.cli import _load_command_modules, app
from hpcrail.models.wheelrail.config import build_profiles, load_profile_pair
from hpcrail.models.wheelrail.conicity import equivalent_conicity, rolling_radius_difference
from hpcrail.models.wheelrail.geometry import ContactSolver

ROOT = Path(__file__).resolve().parents[1]
PAIR = ROOT / "configs" / "wheelrail" / "s1002_uic60.yaml"

_load_command_modules()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp("contact_out")
    env = {"HPCRAIL_CACHE": str(tmp_path_factory.getbasetemp() / "hpcrail_cache")}
    res = CliRunner().invoke(app, ["contact", str(PAIR), "-o", str(out)], env=env)
    return res, out


def test_contact_command_writes_tables_figures_report(run):
    res, out = run
    assert res.exit_code == 0, res.output
    for name in ("lut.zarr", "kec.zarr", "contact_points.png", "rolling_radius_difference.png",
                 "kec_profile.png", "lut.png", "conicity.png", "report.md"):
        assert (out / name).exists(), name
    rep = (out / "report.md").read_text()
    assert "UIC60 canted 1:40" in rep and "LB-140-Area" in rep and "S1002 analytical sections" in rep
    assert "track gauge 1435.00 mm" in rep and "flange-back spacing 1360.00 mm" in rep
    assert "equivalent conicity at 3 mm" in res.output


def test_flange_contact_and_conicity_of_the_standard_pair(run):
    """S1002 / UIC60 1:40, gauge 1435 mm, flange backs 1360 mm (the Manchester contact benchmark set-up):
    the flange (70° face) first touches at |y| = 6.25 mm, between the nominal flangeway clearance
    (1435 - 1360 - 2·32.5)/2 = 5 mm and the 10 mm where it would reach the rail's gauge corner through
    the 1:40 tilt; the EN 15302 equivalent conicity at 3 mm from the Klingel integration and from the
    harmonic linearisation agree within 2 %.  The same numbers from the second S1002 data set (CONTACT's
    points instead of the analytical sections) agree within 0.02 mm and 2 %."""
    res, out = run
    import xarray as xr

    lut = xr.open_zarr(out / "lut.zarr", consolidated=True)
    yf = lut.attrs["y_flange"]
    assert 5e-3 < yf < 7e-3
    rep = (out / "report.md").read_text()
    row = [ln for ln in rep.splitlines() if ln.startswith("| 3.0 |")][0].split("|")
    kl, hm = float(row[2]), float(row[3])
    assert kl == pytest.approx(hm, rel=0.02)
    assert 0.1 < kl < 0.3
    # second data set
    cfg, doc = load_profile_pair(PAIR, ["wheel.builtin=s1002_mbench_points"])
    solver = ContactSolver(*build_profiles(cfg, doc))
    ys = np.arange(-12.0, 12.0 + 1e-9, 0.01) * 1e-3
    dr, X = rolling_radius_difference(solver, ys)
    assert equivalent_conicity(ys, dr, [3e-3])[0] == pytest.approx(kl, rel=0.02)
    from hpcrail.models.wheelrail.lut import tread_flange_split
    assert tread_flange_split(solver)["y_flange"] == pytest.approx(yf, abs=2e-5)


def test_contact_command_config_error_exits_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(PAIR.read_text().replace("gauge_mm: 1435", "gauge_mm: 1435\n  L_r_m: 0.76"))
    res = CliRunner().invoke(app, ["contact", str(bad), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "exactly one of gauge_mm and L_r_m" in res.output


def test_contact_command_refuses_an_existing_file_and_a_broken_profile(tmp_path):
    """``-o`` naming an existing file, and a profile file with a fold, exit with code 2 and a message
    naming the path or the file field — no traceback."""
    f = tmp_path / "taken"
    f.write_text("x")
    res = CliRunner().invoke(app, ["contact", str(PAIR), "-o", str(f)])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "taken" in res.output
    pts = tmp_path / "wheel.txt"
    y = np.linspace(-60.0, 60.0, 121)
    z = 0.001 * y ** 2
    y[60], y[61] = y[61], y[60]                     # a fold: the profile goes back on itself
    pts.write_text("# units: mm\n" + "\n".join(f"{a} {b}" for a, b in zip(y, z)) + "\n")
    bad = tmp_path / "pair.yaml"
    bad.write_text(PAIR.read_text().replace("builtin: s1002", f"file: {pts.name}", 1))
    res = CliRunner().invoke(app, ["contact", str(bad), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and "wheel.file" in res.output
