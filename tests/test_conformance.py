"""Conformance of every registered kind with its declarations, on the repository's own files.

* Every scenario under ``configs/`` runs (2 s of simulated time) to a zarr store in which every output
  its kind declares for it is present with its declared dimensions and attributes, and finite unless the
  declaration says where NaN is legitimate.
* Every sweep job under ``jobs/`` runs, reduced to 2 scenarios (the first two levels of each parameter,
  zipped; sampled designs at 2 samples) with envelopes and all of the kind's series kept, to a sweep store
  in which every output the scenarios' kind declares for them is present and finite for every completed
  scenario — and equals, variable by variable, the single runs of the same scenarios.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr
import yaml
from helpers.paths import mixed_grouped
from test_kinds import ROOT, scenario_files

from hpcrail import kinds
from hpcrail.kinds import load_scenario
from hpcrail.results.outputs import SUCCESS
from hpcrail.results.store import write_dataset
from hpcrail.simulate import run_scenario

DURATION = 2.0
SERIES_INTERVAL = 0.5
JOBS = sorted((ROOT / "jobs").glob("*.yaml"))


def check_declared(kind, sc, ds, where: str, store=None) -> None:
    """Every output ``kind`` declares for ``sc`` is in ``ds`` (a run dataset, or one scenario of a sweep
    store with the sweep options ``store``) with its dimensions and units, finite if the run completed
    (unless declared otherwise)."""
    from hpcrail.sweep.store import stored

    completed = str(ds["status"].values) in SUCCESS
    for o in kind.outputs_for(sc):
        if store is not None and not stored(o, store):
            continue
        assert o.name in ds, f"{where}: declared output {o.name!r} missing"
        da = ds[o.name]
        assert da.dims == o.dims, (where, o.name, da.dims)
        assert da.attrs["long_name"].startswith(o.long_name) and da.attrs.get("units", "") == o.units, (where, o.name)
        if completed and not o.missing and o.dtype != "str":
            v = np.asarray(da.values, dtype=float)
            assert np.all(np.isfinite(v)), f"{where}: {o.name} not finite ({np.sum(~np.isfinite(v))} values)"


@pytest.mark.parametrize("path", mixed_grouped(scenario_files(), lambda p: p.parent.name == "mixed"),
                         ids=lambda p: str(p.relative_to(ROOT / "configs")))
def test_every_config_runs_to_a_store_with_its_declared_outputs(path, tmp_path):
    sc, _ = load_scenario(path, [f"simulation.duration_s={DURATION}"])
    kind = kinds.of(sc)
    ds = run_scenario(sc)
    assert str(ds.status.values) in SUCCESS, (path.name, str(ds.message.values))
    store = write_dataset(ds, tmp_path / "run.zarr")
    back = xr.open_zarr(store).load()
    check_declared(kind, sc, back, path.name)
    assert back.attrs["model"] == kind.name and back.attrs["config_hash"]
    undeclared = set(back.data_vars) - {o.name for o in kind.outputs} - {o.name for o in kinds_run_outputs()}
    assert not undeclared, undeclared


def kinds_run_outputs():
    from hpcrail.results.outputs import RUN_OUTPUTS

    return RUN_OUTPUTS


def reduced_job(job, tmp_path):
    """A copy of sweep job ``job`` with two scenarios, 2 s each, envelopes and every series kept."""
    from hpcrail.config.integrator import method_names
    from hpcrail.sweep.spec import SweepSpec

    spec = yaml.safe_load(job.read_text())
    base = (job.parent / spec["base"]).resolve()
    params = {}
    for path, ps in spec["parameters"].items():
        if "values" in ps:
            lv = ps["values"][:2]
        elif "linspace" in ps:
            a, b, n = ps["linspace"]
            lv = [a, b] if n > 1 else [a]
        elif "logspace" in ps:
            a, b, n = ps["logspace"]
            lv = [10.0 ** a, 10.0 ** b] if n > 1 else [10.0 ** a]
        elif "range" in ps:
            lv = list(range(*ps["range"]))[:2]
        elif "registered" in ps:
            lv = method_names(include_aliases=False)[:2]
        else:  # a distribution of a sampled design: its two ends (normal: mean and mean + sd)
            src = next(k for k in ("uniform", "loguniform", "normal", "lognormal") if k in ps)
            a, b = ps[src]
            lv = [a, b] if src in ("uniform", "loguniform") else [a, a + b]
        lv = (lv * 2)[:2]
        # component files are named relative to the job: the reduced copy lives elsewhere
        lv = [str((job.parent / v).resolve()) if isinstance(v, str) and v.endswith((".yaml", ".yml")) else v
              for v in lv]
        params[path] = {"values": lv, **({"name": ps["name"]} if "name" in ps else {})}
    sc, _ = load_scenario(base)
    kind = kinds.of(sc)
    series = [o.name for o in kind.outputs if o.role == "series"]
    red = {"base": str(base), "name": job.stem, "set": {**spec.get("set", {}), "simulation.duration_s": DURATION},
           "parameters": params, "design": "zip", "batch_size": 2,
           "outputs": {"envelopes": True, "series": {"interval_s": SERIES_INTERVAL, "variables": series}}}
    if spec.get("design") == "makeup":       # train make-ups: two drawn make-ups (their other parameters drawn too)
        red.update(design="makeup", samples=2, makeup=spec["makeup"], seed=spec.get("seed", 0),
                   parameters={p: ps for p, ps in spec["parameters"].items()})
    SweepSpec.model_validate(red)
    out = tmp_path / f"{job.stem}.yaml"
    out.write_text(yaml.safe_dump(red, sort_keys=False))
    return out


@pytest.mark.parametrize("job", mixed_grouped(JOBS, lambda p: p.stem == "lcf_running_safety"), ids=lambda p: p.stem)
def test_every_job_sweeps_to_a_store_with_its_declared_outputs_equal_to_single_runs(job, tmp_path):
    from hpcrail.sweep.runner import run_sweep
    from hpcrail.sweep.spec import expand

    spec = reduced_job(job, tmp_path)
    exp = expand(spec)
    assert exp.size == 2
    res = run_sweep(spec, tmp_path / "s.zarr", inline=True, progress=False, say=lambda *_a: None, expansion=exp)
    assert res.counts["done"] == 2
    ds = xr.open_zarr(res.store).load()
    for i, p in enumerate(exp.points):
        assert p.error is None, p.error
        status = str(ds.status.values[i])
        assert status in SUCCESS, (job.stem, i, str(ds.message.values[i]))
        sc = kinds.validate_document(exp.scenario_doc(p))
        kind = kinds.of(sc)
        one = ds.isel(scenario=i)
        check_declared(kind, sc, one.sel(time=one.time[one.time <= sc.simulation.duration_s + 1e-9])
                       if "time" in one.dims else one, f"{job.stem}[{i}]", store=exp.spec.outputs)
        # the single run of the same scenario, sampled at the store's times
        t = ds.time.values[ds.time.values <= sc.simulation.duration_s + 1e-9]
        ref = run_scenario(sc, t_out=t)
        for name in ds.data_vars:
            if name in ("done", "wall_time", "compile_time", "message") or name not in ref:
                continue
            a, b = np.asarray(one[name].values), np.asarray(ref[name].values)
            if a.dtype.kind in "OUS":
                assert str(a) == str(b), (job.stem, i, name)
                continue
            a = a[tuple(slice(0, s) for s in b.shape)] if a.ndim else a
            np.testing.assert_array_equal(a, b, err_msg=f"{job.stem}[{i}] {name}")
        assert one.scenario_id.item() == ref.attrs["config_hash"]
    assert not math.isnan(float(ds.nsteps.values[0]))
