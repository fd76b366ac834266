"""Every bad input is a clear error (issue 18): the fuzz corpus of tests/fuzz_corpus.py — seeded
mutations of the shipped scenario configs, bad ``--set`` overrides and mutated sweep specs — is refused
case by case with exit code 2 naming the file, the field, the value and what is allowed; no traceback,
no hang, nothing accepted.  A few cases go through the real command line; values read from files
outside the scenario's folder are never echoed; the canonical config re-runs to the same id."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.fuzz_corpus import ROOT, SCENARIOS, Case, campaign, classify, corpus

from hpcrail.config import ConfigError, canonical_yaml, config_hash
from hpcrail.kinds import load_scenario

ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def test_the_fuzz_corpus_is_refused_clearly_case_by_case(tmp_path):
    cases = corpus()
    kinds = {c.kind for c in cases}
    assert len(cases) >= 300 and kinds == {"scenario", "set", "spec"}
    assert len({c.id for c in cases}) > 0.95 * len(cases)          # distinct mutations, not one case repeated
    res = campaign(tmp_path, cases)
    report = "\n".join(f"{outcome}: {cid}\n    {detail}" for cid, outcome, detail in res["bad"][:20])
    assert res["counts"].get("clean", 0) == len(cases), f"{res['counts']}\n{report}"


@pytest.mark.parametrize("case, words", [
    (Case("scenario", "configs/trains/demo.yaml", "simulation.duration_s", math.inf),
     ["demo.yaml", "simulation.duration_s", "finite", "inf", "≤ 1e+06"]),
    (Case("scenario", "configs/trains/demo.yaml", "vehicle_types.wagon.mass_t", math.nan),
     ["cq_coal_wagon.yaml", "vehicle_types.wagon.mass_t", "nan", "≤ 1000"]),
    (Case("scenario", "configs/trains/demo.yaml", "vehicle_types.loco.traction.curves.3.traction_notch_8_kN", 1e9),
     ["qr_electric_traction_assumed.csv", "curves.3.traction_notch_8_kN", "1000000000.0", "≤ 3000"]),
    (Case("scenario", "configs/trains/demo.yaml", "simulation.initial_notch", math.nan),
     ["simulation.initial_notch", "nan", "≥ -100"]),
    (Case("scenario", "configs/trains/demo.yaml", "integrator.step_s", 1e-300),
     ["integrator.step_s", "1e-300", "≥ 1e-09"]),
    (Case("scenario", "configs/couplers/curved_track.yaml", "track.sections.0.length_m", 1e-300),
     ["curved_track.yaml", "track.sections.0.length_m", "≥ 0.01"]),
    (Case("scenario", "configs/trains/demo.yaml", "air_brake.enabled", 7.5), ["air_brake.enabled", "7.5", "true or false"]),
    (Case("scenario", "configs/trains/demo.yaml", "integrator.method", "dopri"),
     ["unknown integrator 'dopri'", "did you mean 'dopri5'", "trbdf2"]),
    (Case("set", "configs/vertical/quarter_vehicle.yaml", "simulation.duration_s=yes"),
     ["--set", "simulation.duration_s", "boolean", "True", "> 0"]),
    (Case("spec", "jobs/sobol_train_makeup.yaml", "parameters.vehicle_types.wagon.mass_t.uniform", [0, math.inf]),
     ["sobol_train_makeup.yaml", "parameters.vehicle_types.wagon.mass_t.uniform.1", "finite"]),
    (Case("spec", "jobs/coupler_stiffness_slack.yaml", "parameters.connection_types.autocoupler.slack_mm.linspace",
          [0, 45, 1e12]), ["linspace", "1 ≤ num ≤ 1000000"]),
    (Case("spec", "jobs/vertical_speed_track.yaml", "parameters.simulation.speed_kmh.values", [120, 900]),
     ["parameters.simulation.speed_kmh.values.1", "900", "≤ 600"]),
])
def test_examples_name_file_field_value_and_allowed(tmp_path, case, words):
    outcome, detail = classify(case, tmp_path)
    assert outcome == "clean", detail
    for w in words:
        assert w in detail, (w, detail)


def test_unknown_keys_get_a_suggestion(tmp_path):
    with pytest.raises(ConfigError) as ei:
        load_scenario(ROOT / "configs/trains/demo.yaml", ["simulation.duraton_s=60"])
    text = str(ei.value)
    assert "unknown key 'duraton_s' (did you mean 'duration_s'?)" in text and "allowed: duration_s" in text


def test_cli_refuses_bad_numbers_with_exit_2_and_no_traceback(tmp_path):
    """The real command line: run, validate and sweep answer a non-finite or out-of-range value with
    one line per problem and exit code 2, before any simulation or store."""
    demo = ROOT / "configs/trains/demo.yaml"
    for cmd in (["validate", str(demo), "--set", "simulation.duration_s=.inf"],
                ["run", str(demo), "--set", "vehicle_types.wagon.mass_t=.nan", "-o", str(tmp_path / "x.zarr")],
                ["run", str(ROOT / "configs/vertical/quarter_vehicle.yaml"), "--set",
                 "vehicle.body_types.car_body.mass_kg=.inf", "-o", str(tmp_path / "y.zarr")]):
        r = subprocess.run([sys.executable, "-m", "hpcrail", *cmd], capture_output=True, text=True, env=ENV,
                           timeout=120)
        out = r.stdout + r.stderr
        assert r.returncode == 2 and "Traceback" not in out, out
        assert "--set" in out and "allowed:" in out and "finite" in out, out
    assert not (tmp_path / "x.zarr").exists() and not (tmp_path / "y.zarr").exists()
    spec = tmp_path / "inf.yaml"
    spec.write_text(yaml.safe_dump({"base": str(demo), "design": "sobol", "samples": 4,
                                    "parameters": {"vehicle_types.wagon.mass_t": {"uniform": [0, float("inf")]}}}))
    r = subprocess.run([sys.executable, "-m", "hpcrail", "sweep", str(spec), "-o", str(tmp_path / "s.zarr"), "--inline"],
                       capture_output=True, text=True, env=ENV, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 2 and "Traceback" not in out, out
    assert "parameters.vehicle_types.wagon.mass_t.uniform.1" in out and not (tmp_path / "s.zarr").exists()


def test_values_from_files_outside_the_scenario_folder_are_never_echoed(tmp_path):
    """A component path leading to a credentials file (or ``{csv: /etc/passwd}``) is reported with the
    file and the field, never with what was read, and the path that leads out is named."""
    secret = tmp_path / "home" / ".secret.yaml"
    secret.parent.mkdir()
    secret.write_text("user: admin\npassword: hunter2-very-secret\nmass_t: 80\n")
    sc_dir = tmp_path / "projects" / "study" / "scenarios"
    sc_dir.mkdir(parents=True)
    doc = yaml.safe_load((ROOT / "configs/trains/demo.yaml").read_text())
    configs = ROOT / "configs"
    doc["vehicle_types"] = {"loco": str(configs / "locomotives/qr_electric_loco.yaml"), "wagon": "../../../home/.secret.yaml"}
    doc["connection_types"] = {k: str(configs / "connections" / Path(v).name) for k, v in doc["connection_types"].items()}
    passwd = tmp_path / "home" / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
    doc["driver"]["commands"] = {"csv": str(passwd)}
    (sc_dir / "sc.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError) as ei:
        load_scenario(sc_dir / "sc.yaml")
    text = str(ei.value)
    assert "hunter2" not in text and "admin" not in text and "x:0:0" not in text and "nologin" not in text
    assert "vehicle_types.wagon.password: unknown key 'password'" in text
    assert "'../../../home/.secret.yaml' leads out of the scenario's folder" in text
    r = subprocess.run([sys.executable, "-m", "hpcrail", "validate", str(sc_dir / "sc.yaml")], capture_output=True,
                       text=True, env=ENV, timeout=120)
    assert r.returncode == 2 and "hunter2" not in r.stdout + r.stderr and "Traceback" not in r.stderr


def test_special_and_binary_files_are_refused_without_reading_them(tmp_path):
    sc = tmp_path / "sc.yaml"
    doc = yaml.safe_load((ROOT / "configs/trains/demo.yaml").read_text())
    doc["driver"]["commands"] = {"csv": "/dev/zero"}
    doc["vehicle_types"]["wagon"] = "bin.yaml"
    (tmp_path / "bin.yaml").write_bytes(b"\xff\xfe\x00 binary")
    sc.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError) as ei:
        load_scenario(sc)
    text = str(ei.value)
    assert "driver.commands.csv: not a regular file" in text and "not UTF-8 text" in text


@pytest.mark.parametrize("path", SCENARIOS)
def test_the_canonical_config_reruns_to_the_same_id(tmp_path, path):
    """What a result stores (the canonical YAML) validates again to the same scenario id: no value is
    lost on the way (NaN and ±inf, which became null, cannot occur any more)."""
    sc, _ = load_scenario(ROOT / path)
    text = canonical_yaml(sc)
    assert "null" not in [v for line in text.splitlines() for v in line.split(": ")[1:]
                          if line.strip().startswith(("duration_s", "mass"))]
    again = tmp_path / "canonical.yaml"
    again.write_text(text)
    sc2, _ = load_scenario(again)
    assert config_hash(sc2) == config_hash(sc)
