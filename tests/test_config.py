"""Scenario configuration: component files, CSV tables, --set overrides, canonical hash, and the
promised error messages (file, field, value, allowed; exit code 2, no traceback)."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hpcrail.config import ConfigError, config_hash
from hpcrail.kinds import load_scenario


def test_train4_layout(configs_dir):
    sc, _ = load_scenario(configs_dir / "trains/train4.yaml")
    v = sc.vehicle_type_names()
    c = sc.connection_type_names()
    assert len(v) == 243 and len(c) == 242
    assert v[:2] == ["loco", "loco"] and v[122] == "loco" and v.count("loco") == 3
    # wagon pairs on drawbars, pairs and locomotives on autocouplers
    assert c[0] == "autocoupler" and c[1] == "autocoupler"         # L-L, L-W
    assert c[2] == "drawbar" and c[3] == "autocoupler" and c[4] == "drawbar"
    assert c[121] == "autocoupler" and c[122] == "autocoupler"     # W-L, L-W at the remote locomotive
    assert c.count("drawbar") == 120
    # the bars: slackless drawbars with the autocoupler's draft gears (the same curves, no clearance)
    bar, auto = sc.connection_types["drawbar"], sc.connection_types["autocoupler"]
    assert bar.kind == auto.kind == "hysteretic" and bar.slack_mm == 0.0 and auto.slack_mm == 10.0
    assert bar.draft == auto.draft and bar.buff == auto.buff
    # the CSV traction table and schedule were read
    tr = sc.vehicle_types["loco"].traction.curves
    assert len(tr.traction_kN) == 8 and tr.traction_kN[7][0] == 525.0
    assert sc.driver.commands[7].signed_notch() == 8


def test_overrides_change_value_and_hash(configs_dir):
    a, _ = load_scenario(configs_dir / "trains/demo.yaml")
    b, _ = load_scenario(configs_dir / "trains/demo.yaml", ["vehicle_types.wagon.mass_t=90",
                                                             "integrator.method=ode45", "consist.1.count=4"])
    assert b.vehicle_types["wagon"].mass_t == 90
    assert b.integrator.method == "dopri5"          # alias resolved in the canonical form
    assert b.consist[1].count == 4
    assert config_hash(a) != config_hash(b)
    a2, _ = load_scenario(configs_dir / "trains/demo.yaml")
    assert config_hash(a) == config_hash(a2)


def _write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text))
    return p


GOOD_COUPLER = """
kind: hysteretic
slack_mm: 10
draft: {deflection_mm: [0, 10, 20], loading_kN: [0, 60, 130], unloading_ratio: 0.3}
"""


def _scenario(tmp: Path, *, wagon_mass="80", coupler=GOOD_COUPLER, method="rk4", extra_key="", at="5000") -> Path:
    _write(tmp, "parts/coupler.yaml", coupler)
    _write(tmp, "parts/wagon.yaml", f"kind: wagon\nmass_t: {wagon_mass}\nlength_m: 15\n")
    return _write(tmp, "sc.yaml", f"""
        name: broken
        {extra_key}
        vehicle_types:
          wagon: parts/wagon.yaml
          loco:
            kind: locomotive
            mass_t: 120
            length_m: 20
            traction: {{curves: {{speed_kmh: [0, 100], traction_kN: [[300, 100]]}}}}
        connection_types: {{cpl: parts/coupler.yaml}}
        consist: [{{type: loco}}, {{type: wagon, count: 3}}]
        connections: {{default: cpl}}
        route: {{sections: [{{start_km: 0, end_km: 4}}], start_m: 100}}
        driver: {{basis: distance, commands: [{{distance_m: 0, notch: 1}}, {{distance_m: {at}, notch: 0}}]}}
        simulation: {{duration_s: 10}}
        integrator: {{method: {method}, step_s: 0.01}}
        """)


def test_valid_component_files(tmp_path):
    sc, doc = load_scenario(_scenario(tmp_path, at="3000"))
    assert sc.vehicle_types["wagon"].mass_t == 80


@pytest.mark.parametrize("kwargs, file, path, words", [
    (dict(wagon_mass="-5"), "wagon.yaml", "vehicle_types.wagon.mass_t", ["greater than 0", "-5"]),
    (dict(coupler=GOOD_COUPLER.replace("[0, 60, 130]", "[0, 130, 60]")), "coupler.yaml",
     "connection_types.cpl", ["non-monotonic"]),
    (dict(coupler=GOOD_COUPLER.replace("[0, 10, 20]", "[0, 20, 10]")), "coupler.yaml",
     "connection_types.cpl", ["strictly increasing"]),
    (dict(method="heun"), "sc.yaml", "integrator.method", ["unknown integrator", "heun", "rk4", "dopri5"]),
    (dict(at="9000"), "sc.yaml", "driver.commands.1.distance_m", ["beyond the end of the route", "9000",
                                                                  "0..4000"]),
    (dict(extra_key="colour: red"), "sc.yaml", "colour", ["unknown key", "consist", "route"]),
])
def test_each_error_names_file_field_value_allowed(tmp_path, kwargs, file, path, words):
    with pytest.raises(ConfigError) as ei:
        load_scenario(_scenario(tmp_path, **kwargs))
    lines = [str(i) for i in ei.value.issues]
    hit = [ln for ln in lines if path in ln]
    assert hit, lines
    assert file in hit[0], hit[0]
    for w in words:
        assert w in hit[0], hit[0]


def test_all_problems_reported_at_once(tmp_path):
    with pytest.raises(ConfigError) as ei:
        load_scenario(_scenario(tmp_path, wagon_mass="-1", method="heun", extra_key="colour: red"))
    assert len(ei.value.issues) == 3


def test_bad_set_path_is_reported(configs_dir):
    with pytest.raises(ConfigError) as ei:
        load_scenario(configs_dir / "trains/demo.yaml", ["consist.9.count=3", "vehicle_types.wagon.colour=red"])
    text = str(ei.value)
    assert "consist has 3 entries" in text and "colour" in text


def test_cli_exit_code_2_and_no_traceback(tmp_path):
    sc = _scenario(tmp_path, wagon_mass="-5", method="heun")
    r = subprocess.run([sys.executable, "-m", "hpcrail.cli", "validate", str(sc)], capture_output=True, text=True)
    assert r.returncode == 2
    out = r.stdout + r.stderr
    assert "Traceback" not in out
    assert "wagon.yaml" in out and "vehicle_types.wagon.mass_t" in out and "integrator.method" in out
    r = subprocess.run([sys.executable, "-m", "hpcrail.cli", "run", str(sc), "--set", "nope=1"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stdout + r.stderr


def test_wheelrail_config_uses_the_shared_strict_base():
    """The wheel/rail profile-pair config refuses what every hpcrail schema refuses, also on assignment: an
    infinite Young's modulus, a boolean as a number, a negative nominal radius (issue 25 item 6)."""
    from hpcrail.config.base import Strict
    from hpcrail.config.errors import ConfigAssignmentError
    from hpcrail.models.wheelrail import config as wr

    assert all(issubclass(c, Strict) for c in (wr.Placement, wr.Material, wr.Friction, wr.ProfilePairConfig))

    m = wr.Material()
    for bad in (float("inf"), True, -1.0):      # refused in hpcrail's one-line form (issue 30), a ValueError
        with pytest.raises(ConfigAssignmentError, match="Material.E_Pa"):
            m.E_Pa = bad
    p = wr.Placement(gauge_mm=1435.0, flange_back_spacing_mm=1360.0)
    with pytest.raises(ConfigAssignmentError):
        p.r0_m = -0.4
