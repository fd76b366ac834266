"""Cold start (issue 17 item 5): table-law trains run kernels compiled without the noninertial coupler's
path, bitwise the full kernels' results; a first run compiles the integrator in a helper process whose
result this process then loads from numba's disk cache."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers.paths import CONFIGS

from hpcrail.integrators import driver
from hpcrail.kinds import load_scenario
from hpcrail.kinds.ltd.build import build_ltd
from hpcrail.kinds.ltd.problem import ltd_kernels, outputs_argtypes
from hpcrail.models.ltd.jacobian import ltd_jac, ltd_jacobian_pattern
from hpcrail.models.ltd.kernel import N_REC, ltd_observe, ltd_outputs, ltd_rhs


@pytest.fixture(scope="module")
def train2():
    sc, _ = load_scenario(CONFIGS / "trains/train2.yaml", ["simulation.duration_s=60"])
    return build_ltd(sc)


def _states(model, k=5, seed=3):
    """``k`` states around y0 with deflections spread over slack, transition band and loaded branches."""
    rng = np.random.default_rng(seed)
    p = model.params
    Y = np.repeat(model.y0[None, :], k, axis=0)
    B, N = p.block, p.n_veh
    Y[:, B:B * N:B] += rng.uniform(-0.08, 0.08, size=(k, N - 1))     # deflections [m]
    Y[:, 1:B * N:B] += rng.uniform(0.0, 15.0, size=(k, N))           # speeds [m/s]
    return Y


def test_table_law_kernels_are_the_full_kernels_bitwise(train2):
    p = train2.params
    assert p.n_noninertial == 0
    k = ltd_kernels(p)
    assert k.rhs is not ltd_rhs and k.jac is not ltd_jac          # the variants are what runs
    Y = _states(train2)
    n = Y.shape[1]
    rows, _cols, _border = ltd_jacobian_pattern(p, n)
    for i, y in enumerate(Y):
        t = 30.0 + i
        a, b = np.empty(n), np.empty(n)
        ltd_rhs(t, y, p, a)
        k.rhs(t, y, p, b)
        assert np.array_equal(a, b)
        ja, jb = np.full(rows.size, np.nan), np.full(rows.size, np.nan)
        ltd_jac(t, y, p, ja)
        k.jac(t, y, p, jb)
        assert np.array_equal(ja, jb)
        acc_a, acc_b = train2.acc0.copy(), train2.acc0.copy()
        ltd_observe(t, y, p, acc_a)
        k.observe(t, y, p, acc_b)
        assert np.array_equal(acc_a, acc_b, equal_nan=True)
    ts = np.linspace(30.0, 34.0, Y.shape[0])
    outs = []
    for fn in (ltd_outputs, k.outputs):
        rec = np.full((ts.size, N_REC, p.n_veh), np.nan)
        acc = np.full((ts.size, p.n_veh), np.nan)
        nc, bc = np.full(ts.size, np.nan), np.full(ts.size, np.nan)
        fn(ts, np.ascontiguousarray(Y), p, rec, acc, nc, bc)
        outs.append((rec, acc, nc, bc))
    for x, y in zip(*outs):
        assert np.array_equal(x, y, equal_nan=True)
    # the argument types the driver precompiles are the ones the run calls with
    assert outputs_argtypes(p) in k.outputs.overloads


def test_noninertial_trains_keep_the_full_kernels(configs_dir):
    sc, _ = load_scenario(configs_dir / "trains/noninertial_curve_100.yaml", ["simulation.duration_s=1"])
    model = build_ltd(sc)
    assert model.params.n_noninertial > 0
    k = ltd_kernels(model.params)
    assert (k.rhs, k.jac, k.observe, k.outputs) == (ltd_rhs, ltd_jac, ltd_observe, ltd_outputs)


def test_compile_jobs_setting(monkeypatch):
    monkeypatch.setenv("HPCRAIL_COMPILE_JOBS", "1")
    assert driver.compile_jobs() == 1
    monkeypatch.setenv("HPCRAIL_COMPILE_JOBS", "two")
    with pytest.raises(ValueError, match="HPCRAIL_COMPILE_JOBS"):
        driver.compile_jobs()


def test_helper_process_compiles_into_the_cache_this_process_loads(tmp_path):
    """Fresh cache: the helper compiles RK4 for the LTD parameter type; this (other) process then finds
    it on disk and loads it instead of compiling (no numba compile event for the kernel)."""
    script = textwrap.dedent(f"""
        import numpy as np
        from numba.core import event
        from hpcrail.kinds import load_scenario
        from hpcrail.kinds.ltd.problem import ltd_problem
        from hpcrail.integrators import driver, registry
        sc, _ = load_scenario({str(tmp_path / 'train.yaml')!r}, [])
        model, prob = ltd_problem(sc)
        info = registry.get("rk4")
        argtys = driver.kernel_argtypes(prob.params)
        kernel = driver._kernel_for(info, prob.params)
        assert not driver._on_disk(kernel, argtys)
        helper = driver._start_compile_helper("rk4", prob.params, argtys)
        assert helper is not None
        proc, err = helper
        assert proc.wait() == 0, err.seek(0) or err.read().decode()
        assert driver._on_disk(kernel, argtys)
        compiled = []
        class L(event.Listener):
            def on_start(self, ev):
                compiled.append(ev.data["dispatcher"].py_func.__qualname__)
            def on_end(self, ev):
                pass
        event.register("numba:compile", L())
        kernel.compile(argtys)
        assert not any(q.startswith("rk4") for q in compiled), compiled
        print("LOADED")
    """)
    (tmp_path / "train.yaml").write_text(_tiny_train_yaml())
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), HPCRAIL_COMPILE_JOBS="2")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "LOADED" in out.stdout


def _tiny_train_yaml() -> str:
    import yaml

    from helpers.ltd import scenario_tree

    return yaml.safe_dump(scenario_tree(2, duration=1.0))


def test_warmup_compiles_without_writing(tmp_path, monkeypatch):
    """``hpcrail warmup``: a short run of each scenario (same kernels as the full run), nothing written;
    afterwards the scenario's integrator kernel is on disk; a bad override is a config error naming it."""
    from typer.testing import CliRunner

    from hpcrail import cli
    from hpcrail.commands.warmup import warm_scenarios
    from hpcrail.integrators import registry
    from hpcrail.kinds.ltd.problem import ltd_problem

    cli._load_command_modules()
    monkeypatch.chdir(tmp_path)
    demo = CONFIGS / "trains/demo.yaml"
    r = CliRunner().invoke(cli.app, ["warmup", str(demo), "--duration", "0.2"])
    assert r.exit_code == 0, r.output
    assert "demo.yaml: kernels ready in" in r.output and "completed 0.2 s run" in r.output
    assert list(tmp_path.iterdir()) == []
    sc, _ = load_scenario(demo, [])
    _model, prob = ltd_problem(sc)
    info = registry.get(sc.integrator.method)
    if info.kernel is not None:
        assert driver._on_disk(driver._kernel_for(info, prob.params), driver.kernel_argtypes(prob.params))
    bad = CliRunner().invoke(cli.app, ["warmup", str(demo), "--set", "simulation.duration_s=-1"])
    assert bad.exit_code == 2 and "duration_s" in bad.output
    with pytest.raises(ValueError, match="positive"):
        warm_scenarios([demo], duration_s=0.0)
