"""Model kinds: every registered descriptor is complete and consistent, a kind that omits an obligation
fails loudly when it is registered, declarations are CF-clean, validating a YAML never imports the
simulation stack, and a run whose outputs drift from its declarations is an error, never a silent NaN."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from hpcrail import kinds
from hpcrail.kinds.descriptor import NOT_BATCHABLE, Batch, KindError, ModelKind, lazy
from hpcrail.results.outputs import RUN_OUTPUTS, SUCCESS, Output, OutputError

ROOT = Path(__file__).resolve().parents[1]


def scenario_files() -> list[Path]:
    """Every scenario YAML under configs/ (files with a ``simulation`` block; components excluded)."""
    import yaml

    out = []
    for p in sorted((ROOT / "configs").rglob("*.yaml")):
        tree = yaml.safe_load(p.read_text())
        if isinstance(tree, dict) and "simulation" in tree and "name" in tree:
            out.append(p)
    return out


def test_the_registered_kinds():
    assert kinds.names() == ["ltd", "mixed_train", "planar_train", "railway_vehicle", "vertical"]
    assert kinds.DEFAULT_KIND == "ltd"
    with pytest.raises(KeyError, match="registered: ltd, mixed_train, planar_train, railway_vehicle, vertical"):
        kinds.get("wheelrail")


@pytest.mark.parametrize("name", kinds.names())
def test_every_obligation_of_every_kind_resolves(name):
    """Lazy references import and are callable; dims cover the outputs; every kind's scenario
    declares the generic fields; batch hooks are complete or explicitly absent."""
    kind = kinds.get(name)
    assert kind.name == name
    for ref in kind.lazy_references():
        assert callable(ref.resolve()), ref
    assert kind.batch is NOT_BATCHABLE or isinstance(kind.batch, Batch)
    names = [o.name for o in kind.outputs]
    assert len(names) == len(set(names)) and not set(names) & {o.name for o in RUN_OUTPUTS}
    assert set(kind.summary) <= set(names)
    assert any(o.role == "metric" for o in kind.outputs)


def test_a_kind_that_omits_an_obligation_fails_at_registration(tmp_path, monkeypatch):
    ltd = kinds.get("ltd")
    fields = {f.name: getattr(ltd, f.name) for f in dataclasses.fields(ModelKind)}
    # every field is an obligation: leaving one out is a TypeError naming it
    for missing in ("linearisation", "batch", "outputs", "checks"):
        kw = dict(fields)
        kw.pop(missing)
        with pytest.raises(TypeError, match=missing):
            ModelKind(**kw)
    # obligations present but invalid: a KindError naming the kind and what is wrong
    bad = [
        (dict(batch=None), "batch must be Batch"),
        (dict(outputs=()), "outputs must be a non-empty tuple"),
        (dict(outputs=ltd.outputs + (ltd.outputs[0],)), "declared twice: position"),
        (dict(outputs=ltd.outputs + (Output("x", ("wheel",), "N", "x", "An x.", "element"),)),
         "undeclared dimension"),
        (dict(outputs=ltd.outputs + (Output("status", (), "", "x", "An x.", "run", dtype="str"),)),
         "generic run outputs"),
        (dict(summary=("nope",)), "summary names undeclared output"),
        (dict(name="vertical"), r"needs a field model: Literal\[\'vertical\'\]"),
        (dict(run=None), "run must be callable"),
        (dict(tools={"lcf": "no_dot"}), "tools must map identifiers to module paths"),
    ]
    for change, message in bad:
        with pytest.raises(KindError, match=message):
            ModelKind(**{**fields, **change})
    # a registered module without a KIND, or with another kind's KIND
    mod = tmp_path / "kind_without_descriptor.py"
    mod.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    kinds.register("broken", "kind_without_descriptor")
    try:
        with pytest.raises(KindError, match="defines no KIND"):
            kinds.get("broken")
    finally:
        kinds._MODULES.pop("broken")
    with pytest.raises(KindError, match="must read 'package.module:function'"):
        lazy("no_colon")
    # kind-specific tools reached through the registry (generic commands import no kind)
    assert kinds.tool("lcf").__name__ == "hpcrail.kinds.mixed_train.lcf"
    with pytest.raises(KeyError, match="unknown tool 'nope'; declared by the registered kinds: lcf"):
        kinds.tool("nope")


def test_output_declarations_are_cf_clean_and_display_units_convert():
    """Every declared unit parses with udunits (cf_units) and ``display_scale`` is the conversion to
    ``display_units``; long names are short labels, descriptions one sentence."""
    cf_units = pytest.importorskip("cf_units")
    for name in kinds.names():
        for o in kinds.get(name).outputs + RUN_OUTPUTS:
            if o.dtype == "str":
                continue
            u = cf_units.Unit(o.units)
            assert not u.is_unknown(), (name, o.name, o.units)
            d = cf_units.Unit(o.display_units)
            assert u.is_convertible(d), (name, o.name)
            assert u.convert(1.0, d) == pytest.approx(o.display_scale, rel=1e-12), (name, o.name)
            assert 0 < len(o.long_name) <= 60 and o.description.endswith(".")


def test_output_declaration_rules():
    with pytest.raises(ValueError, match="first dimension"):
        Output("x", ("vehicle", "time"), "m", "x", "An x.", "series")
    with pytest.raises(ValueError, match="only role 'series'"):
        Output("x", ("time",), "m", "x", "An x.", "metric")
    with pytest.raises(ValueError, match="CF/udunits"):
        Output("x", (), "", "x", "An x.", "metric")
    with pytest.raises(ValueError, match="short label"):
        Output("x", (), "m", "a very long label that goes on and on and is more like a sentence than a label",
               "An x.", "metric")
    with pytest.raises(ValueError, match="when_text"):
        Output("x", (), "m", "x", "An x.", "metric", when=lambda sc: True)
    # composition: a kind reuses another kind's declarations per element of an extra dimension
    ltd = kinds.get("ltd")
    per = ltd.output("coupler_force").with_dim("detailed_vehicle", prefix="wagon_")
    assert per.name == "wagon_coupler_force" and per.dims == ("time", "detailed_vehicle", "coupler")
    assert ltd.output("max_speed").with_dim("detailed_vehicle").dims == ("detailed_vehicle",)


def test_success_statuses_are_the_integrators():
    from hpcrail.integrators.contract import Status

    assert set(SUCCESS) == {s.name.lower() for s in Status if s.success}


def test_validating_any_scenario_imports_no_numba_and_no_integrator(tmp_path):
    """`hpcrail validate` (load + schema + cross-field checks) of every scenario under configs/ and every
    job's base runs without importing numba or hpcrail.integrators (a fresh interpreter)."""
    files = [str(p) for p in scenario_files()]
    assert len(files) >= 15
    code = textwrap.dedent(f"""
        import json, sys
        from hpcrail.kinds import load_scenario
        out = []
        for f in {json.dumps(files)}:
            sc, _ = load_scenario(f)
            heavy = sorted(m for m in sys.modules if m == "numba" or m.startswith("numba.")
                           or m.startswith("hpcrail.integrators") or m.startswith("hpcrail.models.ltd.kernel"))
            out.append((f, sc.model, heavy[:3]))
        print(json.dumps(out))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    res = json.loads(r.stdout)
    assert {m for _f, m, _h in res} == set(kinds.names())
    for f, _m, heavy in res:
        assert heavy == [], (f, heavy)


def test_a_run_that_drifts_from_its_declarations_is_an_error(configs_dir):
    """The one dataset builder refuses a missing, undeclared, misshapen or (in a completed run)
    non-finite output, naming the kind and the output."""
    from hpcrail.kinds import load_scenario
    from hpcrail.kinds.ltd.problem import ltd_problem
    from hpcrail.kinds.ltd.result import ltd_result
    from hpcrail.integrators import integrate
    from hpcrail.results.dataset import build_dataset

    sc, _ = load_scenario(configs_dir / "trains/demo.yaml", ["simulation.duration_s=1", "output.energy=false",
                                                                   "output.running_safety.enabled=false"])
    model, prob = ltd_problem(sc)
    sol = integrate(prob, sc.integrator.method, np.array([0.0, 1.0]), 1.0, **sc.integrator.kwargs())
    kind = kinds.get("ltd")
    good = ltd_result(sc, model, sol)
    build_dataset(kind, sc, good, attrs=False)

    def broken(change):
        res = ltd_result(sc, model, sol)
        change(res.values)
        return res

    cases = [
        (lambda v: v.pop("max_speed"), "did not produce the declared output\\(s\\) max_speed"),
        (lambda v: v.update(extra=1.0), "undeclared output\\(s\\) extra"),
        (lambda v: v.update(speed=v["speed"][:, :3]), "'speed' has 3 entries along 'vehicle'"),
        (lambda v: v.update(max_draft_force=float("nan")), "'max_draft_force' is not finite in a completed run"),
        # the energy balance is declared only with output.energy
        (lambda v: v.update(traction_work=0.0), "undeclared output\\(s\\) traction_work"),
    ]
    for change, message in cases:
        with pytest.raises(OutputError, match=f"kind 'ltd': .*{message}"):
            build_dataset(kind, sc, broken(change))
    # a failed run may hold NaN where a completed one may not
    failed = broken(lambda v: v.update(max_draft_force=float("nan")))
    failed.run = dataclasses.replace(failed.run, status="non_finite")
    assert np.isnan(float(build_dataset(kind, sc, failed)["max_draft_force"]))


def test_in_a_sweep_a_missing_output_is_an_error_naming_kind_and_output(tmp_path, monkeypatch):
    """A kind whose run misses a declared output: the sweep records the scenario as ``error`` with a
    message naming the kind and the output, never a silent NaN (and the other scenarios go on)."""
    import xarray as xr
    from helpers.sweep import write_spec

    import hpcrail.kinds.ltd.run as ltd_run
    from hpcrail.sweep.runner import run_sweep

    original = ltd_run.ltd_result

    def forgetful(sc, model, sol):
        res = original(sc, model, sol)
        if sc.connection_types["autocoupler"].slack_mm > 15:
            res.values.pop("mean_speed")
        return res

    monkeypatch.setattr(ltd_run, "ltd_result", forgetful)
    spec = write_spec(tmp_path / "s.yaml", {"connection_types.autocoupler.slack_mm": {"values": [10, 20]}})
    res = run_sweep(spec, tmp_path / "s.zarr", inline=True, progress=False, say=lambda *_a: None)
    ds = xr.open_zarr(res.store)
    assert ds.status.values.tolist() == ["completed", "error"]
    msg = str(ds.message.values[1])
    assert "kind 'ltd'" in msg and "mean_speed" in msg, msg
    assert np.isfinite(ds.mean_speed.values[0]) and np.isnan(ds.mean_speed.values[1])
