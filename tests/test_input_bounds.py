"""Inputs are bounded before anything is allocated or looped over, and no loader echoes a file's
content (issue 31 items 3 and 4).

* YAML: a few hundred bytes of nested aliases ("billion laughs": 9⁹ values) are refused in well under a
  second, as are a recursive anchor (a RecursionError before), more aliases than the budget, nesting
  deeper than the bound and files beyond the size limit — each error names its limit; ``--set`` values
  go through the same loader.
* Every kind: a duration, a sample count or a step count beyond the shared bounds is a validation error
  with the limit (``duration_s: 1e9`` allocated 1.46 TiB in the railway-vehicle kind before).
* No file contents in any error: a path that names the wrong file (``base: /etc/passwd`` in a sweep spec
  echoed its first lines) shows the kind and size of what it found, never the text — for scenarios,
  component files, CSV tables, sweep specs, their base and value files, and the Slurm site settings,
  through the one helper :func:`hpcrail.config.errors.content_summary`.
"""
from __future__ import annotations

import re
import time

import pytest
import yaml
from test_kinds import ROOT, scenario_files
from typer.testing import CliRunner

from hpcrail import kinds
from hpcrail.config import ConfigError
from hpcrail.config.loading import MAX_YAML_ALIASES, MAX_YAML_BYTES, MAX_YAML_DEPTH, MAX_YAML_VALUES, read_yaml
from hpcrail.kinds import load_scenario

DEMO = ROOT / "configs" / "trains" / "demo.yaml"
SECRET = "hunter2-very-secret"
PASSWD = f"root:x:0:0:{SECRET}:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"


def _refused(path, *words) -> str:
    with pytest.raises(ConfigError) as ei:
        read_yaml(path)
    text = str(ei.value)
    for w in words:
        assert w in text, (w, text)
    return text


def test_billion_laughs_recursion_aliases_depth_and_size_are_refused_quickly(tmp_path):
    laughs = tmp_path / "laughs.yaml"
    rows = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        rows.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    laughs.write_text("\n".join(rows) + "\n")
    assert laughs.stat().st_size < 1000
    t0 = time.perf_counter()
    _refused(laughs, "laughs.yaml", f"more than {MAX_YAML_VALUES:,} values")
    assert time.perf_counter() - t0 < 10.0         # refused on the node graph (ms): expanded, minutes
    for text in ("a: &a\n  b: *a\n", "a: &a [1, *a]\n"):
        (tmp_path / "rec.yaml").write_text(text)
        _refused(tmp_path / "rec.yaml", "recursive alias")
    many = tmp_path / "many.yaml"
    many.write_text("x: &x 1\ny: [" + ", ".join(["*x"] * (MAX_YAML_ALIASES + 1)) + "]\n")
    _refused(many, f"more than {MAX_YAML_ALIASES} aliases", f"at most {MAX_YAML_ALIASES}")
    many.write_text("x: &x 1\ny: [" + ", ".join(["*x"] * MAX_YAML_ALIASES) + "]\n")
    assert read_yaml(many)["y"] == [1] * MAX_YAML_ALIASES          # within the budget: read as before
    deep = tmp_path / "deep.yaml"
    deep.write_text("a: " + "[" * (MAX_YAML_DEPTH + 1) + "]" * (MAX_YAML_DEPTH + 1) + "\n")
    _refused(deep, f"at most {MAX_YAML_DEPTH} levels")
    deep.write_text("a: " + "[" * 20000 + "]" * 20000 + "\n")      # beyond Python's own recursion limit
    _refused(deep, "nested too deeply")
    big = tmp_path / "big.yaml"
    with open(big, "wb") as fh:                                    # sparse: refused by its size, never read
        fh.truncate(MAX_YAML_BYTES + 1)
    _refused(big, "too large", f"≤ {MAX_YAML_BYTES / 2 ** 20:g} MiB")
    # the same loader reads --set values
    value = "[" + ", ".join(["*x"] * 3) + "]"
    with pytest.raises(ConfigError) as ei:
        load_scenario(DEMO, ["simulation.duration_s=&x [1, *x]"])
    assert "recursive alias" in str(ei.value) and "--set" in str(ei.value)
    with pytest.raises(ConfigError) as ei:   # an undefined alias stays text: refused by the schema as before
        load_scenario(DEMO, [f"simulation.duration_s={value}"])
    assert "simulation.duration_s" in str(ei.value)


def _files_by_kind() -> dict:
    out: dict = {}
    for p in scenario_files():
        tree = yaml.safe_load(p.read_text())
        out.setdefault(tree.get("model", kinds.DEFAULT_KIND), p)
    return out


@pytest.mark.parametrize("kind", sorted(kinds.names()))
def test_durations_samples_and_steps_beyond_the_bounds_are_refused_for_every_kind(kind):
    f = _files_by_kind()[kind]
    with pytest.raises(ConfigError) as ei:
        load_scenario(f, ["simulation.duration_s=1e9"])
    text = str(ei.value)
    assert "simulation.duration_s" in text and "1000000000.0" in text and re.search(r"≤ 1(e\+0\d|0{5,6})", text), text
    sc, _ = load_scenario(f)
    step = getattr(sc.integrator, "step_s", None) or 1e-3
    with pytest.raises(ConfigError) as ei:   # 1e5 s sampled at every step: 1e8 samples
        load_scenario(f, ["simulation.duration_s=100000", f"output.interval_s={step!r}",
                          "integrator.max_steps=1000000000000"])
    text = str(ei.value)
    assert "output.interval_s" in text and ("samples" in text or "values" in text) and "at most" in text, text


# ---- no file contents in any error -----------------------------------------------------------------
def _no_secret(text: str) -> None:
    assert SECRET not in text and "root:x" not in text and "nologin" not in text, text


def test_no_loader_echoes_a_files_content(tmp_path):
    from hpcrail.slurm.site import load_site_config
    from hpcrail.sweep.spec import expand

    outside = tmp_path / "etc"
    outside.mkdir()
    (outside / "passwd").write_text(PASSWD)                           # text: a YAML scalar
    (outside / "secret.yaml").write_text(f"password: {SECRET}\nmass_t: 80\n")
    study = tmp_path / "home" / "study"
    (study / "jobs").mkdir(parents=True)
    (study / "notes.yaml").write_text(PASSWD)
    (study / "passwd.csv").write_text(PASSWD)
    texts = []

    def refused(fn, *args):
        with pytest.raises(ConfigError) as ei:
            fn(*args)
        texts.append(str(ei.value))
        _no_secret(texts[-1])
        return texts[-1]

    # scenario loader: a file that is not a mapping
    assert "<a text of" in refused(load_scenario, outside / "passwd")
    # component files: a text where a block belongs, a CSV that is not a table of the field
    sc = yaml.safe_load(DEMO.read_text())
    configs = ROOT / "configs"
    sc["vehicle_types"] = {"loco": str(configs / "locomotives/qr_electric_loco.yaml"), "wagon": "notes.yaml"}
    sc["connection_types"] = {k: str(configs / "connections" / v.split("/")[-1]) for k, v in sc["connection_types"].items()}
    sc["driver"]["commands"] = {"csv": "passwd.csv"}
    (study / "sc.yaml").write_text(yaml.safe_dump(sc))
    text = refused(load_scenario, study / "sc.yaml")
    assert "vehicle_types.wagon" in text and "not shown" in text and "driver.commands" in text
    # sweep specs: the spec itself, its base (text and mapping outside the spec's folder), a value file
    (study / "jobs" / "passwd.yaml").write_text(PASSWD)
    assert "a sweep spec must be a mapping" in refused(expand, study / "jobs" / "passwd.yaml")
    spec = study / "jobs" / "s.yaml"
    for base in (outside / "passwd", outside / "secret.yaml"):
        spec.write_text(yaml.safe_dump({"base": str(base), "parameters": {"simulation.duration_s": {"values": [1]}}}))
        refused(expand, spec)
    assert "leads out of the folder" in texts[-1] and "base" in texts[-1]
    spec.write_text(yaml.safe_dump({"base": str(DEMO), "set": {"simulation.duration_s": 2},
                                    "parameters": {"vehicle_types.wagon": {"values": ["../../../etc/secret.yaml"]}}}))
    refused(expand, spec)
    # YAML syntax errors quote no content (PyYAML's own text carries a snippet of the line)
    (study / "bad.yaml").write_text(f"a: 1\nb: '{SECRET}\n  root:x:0:0\n\tc: [\n")
    assert "YAML syntax error" in refused(load_scenario, study / "bad.yaml")
    # the Slurm site settings
    assert "not shown" in refused(load_site_config, outside / "passwd")
    # the command line (the case)
    spec.write_text(yaml.safe_dump({"base": str(outside / "passwd"), "parameters": {"simulation.duration_s":
                                                                                     {"values": [1, 2]}}}))
    from hpcrail.cli import _load_command_modules, app

    _load_command_modules()
    r = CliRunner().invoke(app, ["sweep", str(spec), "--inline", "-o", str(tmp_path / "s.zarr")])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    _no_secret(r.output)
    assert not (tmp_path / "s.zarr").exists()
