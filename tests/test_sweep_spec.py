"""Sweep spec: expansion counts and order, determinism, seeds, sampling properties, ids, errors."""
from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
from helpers.sweep import DEMO, ROOT, write_spec

from hpcrail.config import ConfigError, config_hash, load_document
from hpcrail.kinds import load_scenario
from hpcrail.integrators import registry
from hpcrail.sweep.spec import _levels, design_values, expand, load_spec, overlay_document

SLACK = "connection_types.autocoupler.slack_mm"
MASS = "vehicle_types.wagon.mass_t"
RTOL = "integrator.rtol"


def _values(spec_path):
    """Design values of a spec without validating every scenario (fast, for statistics)."""
    spec, _doc, _text = load_spec(spec_path)
    return design_values(spec, [_levels(ps) for ps in spec.parameters.values()])


def test_grid_is_the_cartesian_product_in_spec_order(tmp_path):
    spec = write_spec(tmp_path / "g.yaml", {SLACK: {"values": [0, 10, 20]}, MASS: {"linspace": [80, 120, 5]},
                                            RTOL: {"logspace": [-8, -4, 3]}})
    exp = expand(spec)
    assert exp.size == 3 * 5 * 3
    assert [p.name for p in exp.parameters] == ["slack_mm", "mass_t", "rtol"]
    assert exp.parameters[1].levels == [80.0, 90.0, 100.0, 110.0, 120.0]
    assert exp.parameters[2].levels == [1e-8, 1e-6, 1e-4]          # read as written, no 9.999e-07
    expected = list(itertools.product([0, 10, 20], [80.0, 90.0, 100.0, 110.0, 120.0], [1e-8, 1e-6, 1e-4]))
    assert [p.values for p in exp.points] == expected               # first parameter varies slowest
    assert exp.points[4].overrides == {SLACK: 0, MASS: 90.0, RTOL: 1e-6}


def test_zip_pairs_lists_and_range_and_registered(tmp_path):
    spec = write_spec(tmp_path / "z.yaml", {SLACK: {"range": [0, 30, 10]}, "integrator.method": {"values": ["rk4", "dopri5", "rk4"]}},
                      design="zip")
    exp = expand(spec)
    assert [p.values for p in exp.points] == [(0, "rk4"), (10, "dopri5"), (20, "rk4")]
    spec = write_spec(tmp_path / "r.yaml", {"integrator.method": {"registered": "integrators"}})
    exp = expand(spec)
    assert [p.values[0] for p in exp.points] == registry.method_names(include_aliases=False)


def test_expansion_is_deterministic_and_ids_are_the_validate_hash(tmp_path):
    spec = write_spec(tmp_path / "d.yaml", {SLACK: {"values": [0, 15]}, MASS: {"uniform": [80, 120]}},
                      design="lhs", extra={"samples": 6, "seed": 3})
    a, b = expand(spec), expand(spec)
    assert [p.id for p in a.points] == [p.id for p in b.points]
    assert [p.values for p in a.points] == [p.values for p in b.points]
    assert a.fingerprint() == b.fingerprint()
    assert len({p.id for p in a.points}) == a.size
    # the id of a scenario is the hash `hpcrail validate` prints for the same overrides
    p = a.points[4]
    sc, _ = load_scenario(DEMO, ["simulation.duration_s=2.0"] + [f"{k}={v!r}" for k, v in p.overrides.items()])
    assert p.id == config_hash(sc)


@pytest.mark.parametrize("design", ["random", "lhs", "sobol"])
def test_seeds_reproduce_and_differ(tmp_path, design):
    params = {MASS: {"uniform": [80, 120]}, SLACK: {"values": [0, 10, 20, 30]}}
    s1 = write_spec(tmp_path / "a.yaml", params, design=design, extra={"samples": 16, "seed": 1})
    s2 = write_spec(tmp_path / "b.yaml", params, design=design, extra={"samples": 16, "seed": 2})
    v1 = [p.values for p in expand(s1).points]
    assert v1 == [p.values for p in expand(s1).points]
    assert v1 != [p.values for p in expand(s2).points]
    masses = np.array([v[0] for v in v1])
    assert len(v1) == 16 and np.all((masses >= 80) & (masses < 120))
    assert {v[1] for v in v1} <= {0, 10, 20, 30}


@pytest.mark.parametrize("design", ["lhs", "sobol"])
def test_lhs_and_sobol_are_stratified_in_every_dimension(tmp_path, design):
    """Both designs put exactly one of n points in each of n equal strata of every 1-D projection
    (Latin hypercube by construction; scrambled Sobol' for n = 2^m: a (0, m, 1)-net)."""
    n = 32
    spec = write_spec(tmp_path / "s.yaml", {MASS: {"uniform": [80, 112]}, "integrator.rtol": {"uniform": [0, 1e-3]}},
                      design=design, extra={"samples": n, "seed": 7})
    vals = _values(spec)
    mass = np.array([v[0] for v in vals])
    rtol = np.array([v[1] for v in vals])
    assert np.array_equal(np.sort(np.floor((mass - 80) / 32 * n)), np.arange(n))
    assert np.array_equal(np.sort(np.floor(rtol / 1e-3 * n)), np.arange(n))


def test_distributions_have_their_moments(tmp_path):
    """Sample mean and sd within 5 standard errors (n = 4096 Sobol points through inverse CDFs)."""
    n = 4096
    spec = write_spec(tmp_path / "m.yaml", {MASS: {"normal": [100, 5]}, "integrator.rtol": {"lognormal": [-13, 0.5]}},
                      design="sobol", extra={"samples": n, "seed": 0})
    vals = _values(spec)
    x = np.array([v[0] for v in vals])
    lr = np.log([v[1] for v in vals])
    assert abs(x.mean() - 100) < 5 * 5 / np.sqrt(n) and abs(x.std() - 5) < 5 * 5 / np.sqrt(2 * n)
    assert abs(lr.mean() + 13) < 5 * 0.5 / np.sqrt(n) and abs(lr.std() - 0.5) < 5 * 0.5 / np.sqrt(2 * n)


def test_integer_rounding(tmp_path):
    spec = write_spec(tmp_path / "i.yaml", {"consist.1.count": {"uniform": [2, 12], "integer": True}},
                      design="random", extra={"samples": 10, "seed": 5})
    exp = expand(spec)
    counts = [p.values[0] for p in exp.points]
    assert all(isinstance(c, int) for c in counts)
    # odd counts are invalid for an entry joined in pairs: recorded per scenario, not raised
    for p, c in zip(exp.points, counts):
        assert (p.error is None) == (c % 2 == 0)
        if c % 2:
            assert "even count" in p.error and p.id.startswith("x")
        else:
            assert p.sizes["vehicle"] == 1 + c + 1


def test_invalid_overrides_are_kept_with_their_error(tmp_path):
    """A scenario invalid only through a cross-field rule (an odd count of wagons joined in pairs) is
    kept with its error; the sweep records it as invalid and goes on."""
    spec = write_spec(tmp_path / "bad.yaml", {"consist.1.count": {"values": [8, 7]}})
    exp = expand(spec)
    good, bad = exp.points
    assert good.error is None and not good.id.startswith("x")
    assert bad.error is not None and "consist.1.count" in bad.error and "even count" in bad.error
    assert bad.id.startswith("x") and len(bad.id) == 16


def test_a_value_its_field_refuses_is_a_spec_error(tmp_path):
    """A level that no scenario could take (out of the field's range, NaN, a boolean) is refused before
    anything runs, naming the spec, the parameter, the entry, the value and the field's range."""
    spec = write_spec(tmp_path / "bad.yaml", {SLACK: {"values": [10, -5]}})
    with pytest.raises(ConfigError) as ei:
        expand(spec)
    (issue,) = ei.value.issues
    assert issue.file.endswith("bad.yaml") and issue.path == f"parameters.{SLACK}.values.1"
    assert issue.value == -5 and issue.allowed == "a finite number ≥ 0 and ≤ 500"
    spec = write_spec(tmp_path / "bad.yaml", {MASS: {"uniform": [50, 5000]}}, design="sobol", extra={"samples": 8})
    with pytest.raises(ConfigError, match=r"parameters.vehicle_types.wagon.mass_t.uniform.1: .*≤ 1000"):
        expand(spec)


def test_overlay_leaves_the_base_untouched():
    doc = load_document(DEMO)
    before = copy.deepcopy(doc.tree)
    new = overlay_document(doc, {SLACK: 33.0, "consist.1.count": 4, "route.sections.0.grade_permille": 1.5})
    assert doc.tree == before
    assert new.tree["connection_types"]["autocoupler"]["slack_mm"] == 33.0
    assert new.tree["consist"][1]["count"] == 4
    assert new.tree["vehicle_types"] is doc.tree["vehicle_types"]        # untouched parts are shared


def test_coordinate_names_stay_unique_and_readable(tmp_path):
    spec = write_spec(tmp_path / "n.yaml", {"connection_types.autocoupler.slack_mm": {"values": [0, 10]},
                                            "connection_types.drawbar.stiffness_MN_per_m": {"values": [60]},
                                            "consist.1.count": {"values": [8]}, "consist.2.count": {"values": [1]},
                                            "integrator.step_s": {"values": [0.002], "name": "dt"}})
    names = [p.name for p in expand(spec).parameters]
    assert names == ["slack_mm", "stiffness_MN_per_m", "consist_1_count", "consist_2_count", "dt"]


def test_component_files_as_values(tmp_path):
    conn = ROOT / "configs" / "connections"
    (tmp_path / "soft.yaml").write_text((conn / "autocoupler_friction_draft_gear.yaml").read_text()
                                        .replace("slack_mm: 10.0", "slack_mm: 25.0"))
    spec = write_spec(tmp_path / "f.yaml", {"connection_types.autocoupler": {
        "values": [str(conn / "autocoupler_friction_draft_gear.yaml"), "soft.yaml"]}})
    exp = expand(spec)
    assert exp.points[1].values == ("soft.yaml",)
    assert exp.points[1].overrides["connection_types.autocoupler"]["slack_mm"] == 25.0
    assert exp.points[0].id != exp.points[1].id and exp.points[0].error is None is exp.points[1].error


@pytest.mark.parametrize("params, extra, where, text", [
    ({SLACK: {"uniform": [0, 10]}}, {}, "parameters.connection_types.autocoupler.slack_mm.uniform",
     "a distribution needs design random"),
    ({SLACK: {"values": [1], "linspace": [0, 1, 2]}}, {}, "parameters.connection_types.autocoupler.slack_mm",
     "exactly one of"),
    ({"connection_types.autocoupler.slak_mm": {"values": [1]}}, {}, "parameters.connection_types.autocoupler.slak_mm",
     "not a field of the base scenario"),
    ({MASS: {"uniform": [80, 120]}}, {"design": "sobol", "samples": 100}, "samples", "power of 2"),
    ({MASS: {"uniform": [80, 120]}}, {"design": "lhs"}, "samples", "needs samples"),
    ({SLACK: {"values": [0, 1]}, MASS: {"values": [80]}}, {"design": "zip"}, "parameters", "equal length"),
    ({SLACK: {"values": [0]}}, {"batch_sise": 3}, "batch_sise", "unknown key"),
    ({SLACK: {"values": [0], "name": "status"}}, {}, "parameters.connection_types.autocoupler.slack_mm.name",
     "reserved"),
])
def test_bad_specs_name_file_field_and_problem(tmp_path, params, extra, where, text):
    spec = write_spec(tmp_path / "bad.yaml", params, extra=extra)
    with pytest.raises(ConfigError) as ei:
        expand(spec)
    msgs = [str(i) for i in ei.value.issues]
    assert any("bad.yaml" in m and where in m and text in m for m in msgs), msgs


def test_a_base_that_does_not_validate_is_an_error(tmp_path):
    spec = write_spec(tmp_path / "b.yaml", {SLACK: {"values": [0]}}, set_={"integrator.method": "euler"})
    with pytest.raises(ConfigError, match="base scenario: unknown integrator 'euler'"):
        expand(spec)


def test_cli_set_changes_the_base_and_the_ids(tmp_path):
    spec = write_spec(tmp_path / "c.yaml", {SLACK: {"values": [0, 10]}})
    a = expand(spec)
    b = expand(spec, ["simulation.duration_s=3"])
    assert all(p.duration == 3.0 for p in b.points)
    assert not {p.id for p in a.points} & {p.id for p in b.points}
    assert a.fingerprint() != b.fingerprint()


def test_batch_size_default(tmp_path):
    spec = write_spec(tmp_path / "b.yaml", {MASS: {"linspace": [80, 120, 100]}})
    exp = expand(spec)
    assert exp.batch_size() == 4                 # ceil(100 / 32)
    assert exp.batch_size(7) == 7


def test_series_must_be_series_of_the_base_scenarios_kind(tmp_path):
    """``outputs.series.variables`` is checked against the series the base scenario's kind declares: the
    error names the file, the field and the kind's own series."""
    spec = write_spec(tmp_path / "s.yaml", {SLACK: {"values": [0, 10]}},
                      extra={"outputs": {"series": {"interval_s": 1.0, "variables": ["coupler_force", "wz_max"]}}})
    with pytest.raises(ConfigError) as ei:
        expand(spec)
    text = str(ei.value)
    assert "outputs.series.variables" in text and "unknown series of model kind 'ltd'" in text and "wz_max" in text
    assert "coupler_force" in text.split("allowed:")[1] and "speed" in text.split("allowed:")[1]
    vertical = ROOT / "configs" / "vertical" / "quarter_vehicle.yaml"
    spec = write_spec(tmp_path / "v.yaml", {"simulation.speed_kmh": {"values": [100, 120]}}, base=vertical,
                      extra={"outputs": {"series": {"interval_s": 0.5, "variables": ["coupler_force"]}}})
    with pytest.raises(ConfigError, match="unknown series of model kind 'vertical'.*floor_acceleration"):
        expand(spec)


def test_duplicate_levels_and_repeated_scenarios_are_warned_about(tmp_path):
    """Duplicate levels ran duplicate scenarios silently (issue 31 item 5): a grid or zip with a repeated level
    warns naming the parameter and the level; levels that differ as written but give the same scenario (an
    integrator and its alias) warn by their scenario ids; sampled designs, which repeat levels by
    construction, and clean grids do not warn (``hpcrail sweep`` prints the warnings before it starts)."""
    exp = expand(write_spec(tmp_path / "d.yaml", {SLACK: {"values": [0, 10, 0, 10.0, 20]}, MASS: {"values": [80, 90]}}))
    assert exp.size == 10 and len(exp.warnings) == 1
    w = exp.warnings[0]
    assert f"parameters.{SLACK}" in w and "levels 0, 10 given more than once" in w and "grid" in w, w
    assert len({p.id for p in exp.points}) == 6                      # 4 of the 10 scenarios repeat others
    exp = expand(write_spec(tmp_path / "a.yaml", {"integrator.method": {"values": ["dopri5", "ode45"]}}))
    assert len(exp.warnings) == 1 and "1 of the 2 scenarios are the same scenario" in exp.warnings[0], exp.warnings
    assert expand(write_spec(tmp_path / "c.yaml", {SLACK: {"values": [0, 10, 20]}})).warnings == []
    sampled = write_spec(tmp_path / "s.yaml", {SLACK: {"values": [0, 10]}, MASS: {"uniform": [80, 90]}},
                         design="random", extra={"samples": 8, "seed": 1})
    assert expand(sampled).warnings == []
    zipped = write_spec(tmp_path / "z.yaml", {SLACK: {"values": [0, 10, 0, 0]}, MASS: {"values": [80, 80, 90, 80]}},
                        design="zip")
    w = expand(zipped).warnings          # a level repeated in one list is no repeat in a zip; row 3 repeats row 0
    assert len(w) == 1 and "zip rows given more than once (rows 0 = 3" in w[0], w
