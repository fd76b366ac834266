"""Every error while loading or building a model of any kind is a clean exit (issue 31 item 2): the
command line catches a configuration problem found while the model is built (after validation: contact
tables, track irregularities, static equilibrium …) like a validation error — exit code 2, one line per
problem naming the file that holds the field, the field, its value and what is allowed, never a
traceback — and any other exception of a model as one line with exit code 3.  Generic: checked for
every registered kind through its descriptor (the kind's ``run`` replaced by one that fails as a build
does), plus a real build error of the railway-vehicle kind."""
from __future__ import annotations

import dataclasses

import pytest
from test_kinds import ROOT, scenario_files
from typer.testing import CliRunner

from hpcrail import kinds
from hpcrail.config import ConfigError, ConfigIssue


def _cli():
    from hpcrail.cli import _load_command_modules, app

    _load_command_modules()
    return app


def _first_file(kind: str):
    import yaml

    for p in scenario_files():
        tree = yaml.safe_load(p.read_text())
        if tree.get("model", kinds.DEFAULT_KIND) == kind:
            return p
    raise AssertionError(f"no scenario file of kind {kind!r} under configs/")


def _failing_kind(monkeypatch, name: str, exc: Exception):
    def run(sc, *, progress=None, t_out=None):
        raise exc

    def linearisation(sc, at):
        raise exc

    kind = kinds.get(name)
    monkeypatch.setitem(kinds._LOADED, name, dataclasses.replace(kind, run=run, linearisation=linearisation))


@pytest.mark.parametrize("kind", sorted(kinds.names()))
def test_a_build_error_of_every_kind_exits_2_naming_file_field_value_and_allowed(tmp_path, monkeypatch, kind):
    f = _first_file(kind)
    # a build knows the field, not the file that holds it: "(scenario)" is what the kinds' builds say
    _failing_kind(monkeypatch, kind, ConfigError([ConfigIssue("(scenario)", "name",
                                                              "the model cannot be built under this name")]))
    runner = CliRunner()
    app = _cli()
    for args in (["run", str(f), "-o", str(tmp_path / "x.zarr"), "-q"], ["warmup", str(f)],
                 ["modes", str(f)]):
        r = runner.invoke(app, args)
        text = r.output
        assert r.exit_code == 2, (args, r.exit_code, text, r.exception)
        assert "Traceback" not in text and not isinstance(r.exception, ConfigError), text
        line = next(ln for ln in text.splitlines() if ": name: " in ln)
        assert f.name in line and "(scenario)" not in line, line              # the file that holds the field
        assert "the model cannot be built" in line and "(got " in line and "allowed: " in line, line
    assert not (tmp_path / "x.zarr").exists()


@pytest.mark.parametrize("kind", sorted(kinds.names()))
def test_any_other_exception_of_a_model_is_one_line_with_exit_3(tmp_path, monkeypatch, kind):
    f = _first_file(kind)
    _failing_kind(monkeypatch, kind, ZeroDivisionError("float division by zero in the spline set-up"))
    r = CliRunner().invoke(_cli(), ["run", str(f), "-o", str(tmp_path / "x.zarr"), "-q"])
    assert r.exit_code == 3, (r.exit_code, r.output, r.exception)
    assert "Traceback" not in r.output and f"{f}: the model could not be built or run: ZeroDivisionError: " \
        "float division by zero" in " ".join(r.output.split()), r.output
    monkeypatch.setenv("HPCRAIL_TRACEBACK", "1")        # the way to see where a defect is
    r = CliRunner().invoke(_cli(), ["run", str(f), "-o", str(tmp_path / "x.zarr"), "-q"])
    assert isinstance(r.exception, ZeroDivisionError)


def test_a_real_build_error_names_the_file_and_the_field(tmp_path):
    """An irregularity that cannot be synthesised over its length (λ_max 80 m on 10 m of track) is found when
    the railway vehicle is built: a traceback before (issue 31 item 2), now the file and the field."""
    f = ROOT / "configs" / "wheelrail" / "manchester_R500_irregular.yaml"
    r = CliRunner().invoke(_cli(), ["run", str(f), "--set", "track.irregularity.length_m=10", "-o",
                                    str(tmp_path / "x.zarr"), "-q"])
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and "Traceback" not in r.output, (r.output, r.exception)
    assert "manchester_R500_irregular.yaml: track.irregularity: λ_max = 80.0 m exceeds the profile length" in text
    assert "allowed: " in text
