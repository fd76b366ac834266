"""One rule for every file an input names (issue 31 item 1, hpcrail.config.files): a data file — here a measured
wheel profile named by a profile pair that a railway-vehicle scenario includes from another folder — is resolved
against the file that names it, whatever the working directory (validate = run); its contents are part of the
scenario id (an edited profile is another scenario, a moved checkout is not) and of the provenance; a resumed
sweep refuses to mix results of two profiles; a file changed after validation is refused at build time."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from hpcrail.config import ConfigError, canonical_yaml, config_hash
from hpcrail.config.files import DataFile, input_files_record
from hpcrail.kinds import load_scenario
from hpcrail.models.wheelrail import profiles as pr
from hpcrail.models.wheelrail.config import build_profiles

ROOT = Path(__file__).resolve().parents[1]


def _s1002_text(scale=1.0):
    s = np.arange(-70.0, 60.0001, 0.25)
    return "# units: mm\n# kind: wheel\nlateral radius_offset\n" + "\n".join(
        f"{a:.4f} {b * scale:.9f}" for a, b in zip(s, pr.s1002_F(s))) + "\n"


@pytest.fixture
def study(tmp_path):
    """study/pairs/pair.yaml names wheel.txt next to it; study/scenarios/sc.yaml includes ../pairs/pair.yaml."""
    pairs = tmp_path / "study" / "pairs"
    scen = tmp_path / "study" / "scenarios"
    pairs.mkdir(parents=True)
    scen.mkdir()
    (pairs / "wheel.txt").write_text(_s1002_text())
    pair = yaml.safe_load((ROOT / "configs/wheelrail/s1002_uic60.yaml").read_text())
    pair["wheel"] = {"file": "wheel.txt", "flange_back_mm": -70}
    (pairs / "pair.yaml").write_text(yaml.safe_dump(pair))
    sc = yaml.safe_load((ROOT / "configs/wheelrail/single_wheelset_R300.yaml").read_text())
    sc["vehicle"] = str(ROOT / "configs/wheelrail/vehicles/single_wheelset.yaml")
    sc["contact"]["profiles"] = "../pairs/pair.yaml"
    (scen / "sc.yaml").write_text(yaml.safe_dump(sc))
    return tmp_path / "study"


def test_profile_file_resolves_against_the_yaml_naming_it(study, tmp_path, monkeypatch):
    """From a working directory holding another wheel.txt, the scenario still reads pairs/wheel.txt (the run
    used to open the one in the working directory, with the same id); the file path is absolute in the canonical
    form, which validates again to the same id."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "wheel.txt").write_text(_s1002_text(1.01))
    monkeypatch.chdir(other)
    sc, doc = load_scenario(study / "scenarios" / "sc.yaml")
    f = sc.contact.profiles.wheel.file
    assert isinstance(f, DataFile) and f.path == (study / "pairs" / "wheel.txt").resolve()
    ps = build_profiles(sc.contact.profiles)
    ref = pr.s1002_profile()
    u = np.linspace(-0.05, 0.05, 101)
    assert np.max(np.abs(ps.wheel(u) - ref(u))) < 1e-5       # the pair's file, not the 1 % larger one here
    text = canonical_yaml(sc)
    assert str(f.path) in text
    again = tmp_path / "canonical.yaml"
    again.write_text(text)
    sc2, _ = load_scenario(again)
    assert config_hash(sc2) == config_hash(sc)


def test_profile_contents_are_part_of_the_scenario_id(study, tmp_path):
    """Editing the profile changes config_hash; copying the whole study elsewhere does not (the digest of the
    contents is hashed, not the path); the provenance record holds path, digest and the text."""
    p = study / "scenarios" / "sc.yaml"
    h0 = config_hash(load_scenario(p)[0])
    moved = tmp_path / "moved"
    shutil.copytree(study, moved)
    assert config_hash(load_scenario(moved / "scenarios" / "sc.yaml")[0]) == h0
    wheel = study / "pairs" / "wheel.txt"
    wheel.write_text(wheel.read_text().replace("0.000000000\n", "0.000001000\n", 1))
    sc1, _ = load_scenario(p)
    assert config_hash(sc1) != h0
    rec = json.loads(input_files_record(sc1))
    assert [r["field"] for r in rec] == ["contact.profiles.wheel.file"]
    assert rec[0]["text"] == wheel.read_text() and len(rec[0]["sha256"]) == 64 and rec[0]["name"] == "wheel.txt"


def test_a_file_changed_after_validation_is_refused_at_build(study):
    sc, _ = load_scenario(study / "scenarios" / "sc.yaml")
    (study / "pairs" / "wheel.txt").write_text(_s1002_text(1.001))
    with pytest.raises(ConfigError, match="changed after the scenario was validated"):
        build_profiles(sc.contact.profiles)


def test_missing_and_special_profile_files_are_clean_errors(study):
    """A missing profile file names the pair's YAML, the field and the value; /dev/zero is not read."""
    pair = study / "pairs" / "pair.yaml"
    for name, words in (("nope.txt", "file not found"), ("/dev/zero", "not a regular file")):
        d = yaml.safe_load(pair.read_text())
        d["wheel"]["file"] = name
        pair.write_text(yaml.safe_dump(d))
        with pytest.raises(ConfigError) as ei:
            load_scenario(study / "scenarios" / "sc.yaml")
        text = str(ei.value)
        assert "pair.yaml" in text and "contact.profiles.wheel.file" in text and words in text and name in text


def test_a_resumed_sweep_refuses_to_mix_two_profiles(study, tmp_path):
    """The sweep store made with one profile is not resumed after the profile file changed: the scenario ids
    (and the sweep's fingerprint) differ."""
    from hpcrail.sweep.runner import SweepMismatchError, open_or_create
    from hpcrail.sweep.spec import expand

    spec = tmp_path / "sweep.yaml"
    spec.write_text(yaml.safe_dump({"base": str(study / "scenarios" / "sc.yaml"), "name": "profiles",
                                    "parameters": {"simulation.speed_mps": {"values": [8.0, 10.0]}}}))
    store = tmp_path / "s.zarr"
    exp = expand(spec)
    open_or_create(exp, store, say=lambda *_: None)
    open_or_create(expand(spec), store, say=lambda *_: None)          # unchanged: resumes
    wheel = study / "pairs" / "wheel.txt"
    wheel.write_text(wheel.read_text().replace("0.000000000\n", "0.000001000\n", 1))
    exp2 = expand(spec)
    assert [p.id for p in exp2.points] != [p.id for p in exp.points]
    with pytest.raises(SweepMismatchError, match="scenario ids differ"):
        open_or_create(exp2, store, say=lambda *_: None)


def test_data_file_pickles_with_its_resolution(study):
    """Sweep workers receive the document with the resolved data file (path and digest travel with it)."""
    import pickle

    sc, doc = load_scenario(study / "scenarios" / "sc.yaml")
    f = sc.contact.profiles.wheel.file
    g = pickle.loads(pickle.dumps(f))
    assert (str(g), g.path, g.sha256, g.size) == (str(f), f.path, f.sha256, f.size)
    assert os.path.isabs(g.path)


def test_the_shipped_driver_schedules_are_what_their_generator_writes(tmp_path):
    """configs/schedules/*.csv are generated (a rule-based driver on a point mass, documented in the script): the
    script must still run and reproduce every shipped file byte for byte — its import had gone stale once, and the
    pneumatic trip's schedule was once train 4's replayed after an air-brake application it was not made for (the
    train stalled and rolled back)."""
    import importlib.util

    path = ROOT / "configs" / "schedules" / "generate_schedules.py"
    spec = importlib.util.spec_from_file_location("generate_schedules", path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    gen.main(tmp_path)
    written = sorted(p.name for p in tmp_path.glob("*.csv"))
    shipped = sorted(p.name for p in (ROOT / "configs" / "schedules").glob("*.csv"))
    assert written == shipped
    for name in written:
        assert (tmp_path / name).read_bytes() == (ROOT / "configs" / "schedules" / name).read_bytes(), name
