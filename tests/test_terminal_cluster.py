"""What the terminal shows and what the cluster exposes (issue 16): ``--version``, ``--json`` of ``run``,
``status`` and ``report``, one status line without "completed — completed", labelled elapsed/remaining
times and never "nan", the compile notice exactly when numba compiles, consistent option names; the dask
dashboard listening on the loopback interface only, tornado/bokeh noise kept off the terminal, task keys
carrying the study's name with every batch submitted, the site's dask-jobqueue configuration reaching
the Slurm job script; the examples shipped in a built wheel."""
from __future__ import annotations

import io
import json
import logging
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from helpers.sweep import DEMO, ROOT, write_spec
from typer.testing import CliRunner

from hpcrail import cli


def _app():
    cli._load_command_modules()
    return cli.app


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    from hpcrail.sweep.runner import run_sweep

    d = tmp_path_factory.mktemp("term")
    # the second scenario fails: 7 wagons cannot form the demo's wagon pairs (a cross-field rule of the consist)
    spec = write_spec(d / "t.yaml", {"connection_types.autocoupler.slack_mm": {"values": [0, 10, 20]},
                                     "consist.1.count": {"values": [8, 7, 8]}}, design="zip")
    run_sweep(spec, d / "t.zarr", inline=True, progress=False, say=lambda *_: None)
    return d / "t.zarr"


def test_version():
    r = CliRunner().invoke(_app(), ["--version"])
    assert r.exit_code == 0 and r.output.startswith("hpcrail 0.1.0")


def test_run_json_and_the_status_line(tmp_path):
    runner = CliRunner()
    r = runner.invoke(_app(), ["run", str(DEMO), "--set", "simulation.duration_s=2", "-o", str(tmp_path / "a.zarr"),
                               "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["status"] == "completed" and out["store"] == str(tmp_path / "a.zarr")
    m = out["metrics"]["max_draft_force"]
    assert m["units"] == "N" and m["display_units"] == "kN" and m["display_value"] == pytest.approx(m["value"] / 1e3)
    assert m["long_name"] == "peak draft force" and out["metrics"]["max_draft_force_coupler"]["value"] >= 1
    r = runner.invoke(_app(), ["run", str(DEMO), "--set", "simulation.duration_s=2", "-o", str(tmp_path / "b.zarr"),
                               "-q"])
    assert r.exit_code == 0 and "status: completed;" in r.output and "completed — completed" not in r.output


def test_status_and_report_json(small_sweep, tmp_path):
    runner = CliRunner()
    r = runner.invoke(_app(), ["status", str(small_sweep), "--json"])
    st = json.loads(r.stdout)
    assert st["total"] == 3 and st["failed"] == 1 and st["by_status"] == {"completed": 2, "invalid": 1}
    assert st["messages"][0]["count"] == 1 and "consist.1.count" in st["messages"][0]["message"]
    r = runner.invoke(_app(), ["report", str(small_sweep), "-o", str(tmp_path / "rep"), "--json"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    row = next(x for x in rep["summary"] if x["metric"] == "max_draft_force")
    assert row["unit"] == "kN" and row["count"] == 2 and rep["sobol"] is None
    assert str(tmp_path / "rep" / "failures.png") in rep["figures"]


def test_progress_lines_are_labelled_and_never_nan(monkeypatch):
    from hpcrail import simulate

    buf = io.StringIO()
    from rich.console import Console

    monkeypatch.setattr(simulate, "_stderr", lambda: Console(file=buf, width=200))
    monkeypatch.setattr(sys, "stderr", io.StringIO())         # not a terminal: plain lines
    cb, close = simulate.progress_printer("demo")
    for t in (0.0, 30.0, 60.0, 90.0):
        cb(t, 100.0, {"steps": int(t * 10)})
    close()
    text = buf.getvalue()
    assert "nan" not in text.lower() and "ETA" not in text
    lines = text.strip().splitlines()
    assert "elapsed" in lines[0] and "remaining" not in lines[0]       # no rate yet: no remaining time
    assert all("elapsed" in ln and "remaining" in ln for ln in lines[1:])


def test_sweep_progress_has_no_nan(capsys):
    from hpcrail.sweep.runner import _Progress

    p = _Progress(4, "study", stream=sys.stderr)
    p.update(0, 0)
    p.update(2, 1)
    p.close()
    err = capsys.readouterr().err
    assert "nan" not in err and "ETA" not in err and "remaining" in err and "1 failed" in err


def test_compile_notice_only_when_numba_compiles():
    import numba

    from hpcrail._numba import cache_dir, compile_notice

    said = []

    @numba.njit
    def add_one(x):
        return x + 1

    with compile_notice(said.append):
        add_one(1)                              # compiles
        add_one(2)                              # compiled: no second notice
    assert said[0] == (f"compiling numba kernels (first run after installing or changing hpcrail; cached in "
                       f"{cache_dir()}, later runs load them; `hpcrail warmup --all` compiles ahead)")
    assert len(said) == 2 and said[1].startswith("compiled numba kernels for ")   # the total, once done
    said.clear()
    with compile_notice(said.append):
        add_one(3)
    assert said == []


def test_option_names_are_consistent():
    runner = CliRunner()
    r = runner.invoke(_app(), ["friction-report", "--help"])
    assert "--output" in r.output and "--out " not in r.output
    r = runner.invoke(_app(), ["sweep", "x.yaml", "--partition", "compute"])
    assert r.exit_code == 2 and "--slurm-partition" in r.output      # click's "did you mean"
    r = runner.invoke(_app(), ["sweep", "--help"])
    assert "--slurm-partition" in r.output and "127.0.0.1:8787" in r.output


# ---------------------------------------------------------------------------------------------
# dashboard, task keys, Slurm configuration
# ---------------------------------------------------------------------------------------------
def test_dashboard_listens_on_loopback_only():
    from urllib.parse import urlparse

    from hpcrail.sweep.cluster import DEFAULT_DASHBOARD, make_client

    assert DEFAULT_DASHBOARD.startswith("127.0.0.1:")
    client, close = make_client(workers=1)                       # the defaults of hpcrail sweep
    try:
        server = client.cluster.scheduler.http_server
        hosts = {s.getsockname()[0] for s in server._sockets.values()}
        assert hosts == {"127.0.0.1"}, hosts
        assert urlparse(client.dashboard_link).hostname == "127.0.0.1"
        for name in ("tornado.application", "tornado.general", "bokeh"):
            assert not logging.getLogger(name).isEnabledFor(logging.ERROR), name
    finally:
        close()


def test_task_keys_carry_the_study_name_and_every_batch_is_submitted(tmp_path):
    import numpy as np
    from dask.utils import key_split

    from hpcrail.sweep.runner import MAX_SUBMITTED, make_tasks, submit_limit
    from hpcrail.sweep.spec import expand
    from hpcrail.sweep.store import make_layout

    spec = write_spec(tmp_path / "my-study.yaml", {"vehicle_types.wagon.mass_t": {"values": [80, 90, 100]}})
    exp = expand(spec)
    tasks = make_tasks(exp, make_layout(exp, 1), tmp_path / "s.zarr", np.ones(3, bool))
    assert [key_split(k) for k, _t in tasks] == ["hpcrail_my_study"] * 3
    assert submit_limit(len(tasks)) == 3 and submit_limit(10 ** 6) == MAX_SUBMITTED and submit_limit(50, 7) == 7


def test_slurm_honours_the_sites_jobqueue_configuration(tmp_path):
    pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is not installed (pip install -e .[slurm])")
    import dask

    from hpcrail.sweep.cluster import SlurmOptions, _slurm_cluster

    (tmp_path / "jobqueue.yaml").write_text(
        "jobqueue:\n  slurm:\n    cores: 16\n    memory: 64GB\n    walltime: '04:00:00'\n    account: siteacct\n"
        "    job-extra-directives: ['--exclusive']\n")
    empty_site = tmp_path / "site.yaml"
    empty_site.write_text("{}\n")
    site = tmp_path / "site2.yaml"
    site.write_text("sbatch: ['--constraint=cpu']\npartition: short\n")
    cfg = dask.config.collect(paths=[str(tmp_path)], env={})           # the site's file, merged over the defaults
    with dask.config.set({f"jobqueue.slurm.{k}": v for k, v in cfg["jobqueue"]["slurm"].items()}):
        scripts = []
        for opts in (SlurmOptions(site=str(empty_site)), SlurmOptions(site=str(site), cores=4, walltime="01:00:00")):
            cluster, note = _slurm_cluster(opts, "127.0.0.1:0")
            try:
                scripts.append((cluster.job_script(), note))
            finally:
                cluster.close()
    js, note = scripts[0]                           # nothing on the command line or in the site file
    for want in ("#SBATCH --cpus-per-task=16", "#SBATCH --mem=60G", "#SBATCH -t 04:00:00", "#SBATCH -A siteacct",
                 "#SBATCH --exclusive", "--lifetime 13500s", "--lifetime-stagger 300s"):
        assert want in js, (want, js)
    assert "16 cores" in note and "walltime 04:00:00" in note
    js, _note = scripts[1]                          # command line over site file over configuration
    for want in ("#SBATCH --cpus-per-task=4", "#SBATCH -t 01:00:00", "#SBATCH -p short", "#SBATCH --exclusive",
                 "#SBATCH --constraint=cpu", "#SBATCH --mem=60G"):
        assert want in js, (want, js)


# ---------------------------------------------------------------------------------------------
# the wheel
# ---------------------------------------------------------------------------------------------
def _source_copy(dest: Path) -> Path:
    """The files git tracks (and new, not ignored ones) copied to ``dest``: what a clean clone builds."""
    try:
        files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"], capture_output=True,
                               text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        files = [str(p.relative_to(ROOT)) for d in ("hpcrail", "configs", "jobs", "slurm") for p in (ROOT / d).rglob("*")
                 if p.is_file()] + ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md"]
    for f in files:
        src = ROOT / f
        if src.is_file() and not f.startswith(("tests/", "benchmarks/", "docs/")):
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)
    return dest


def test_the_wheel_ships_the_examples_and_its_commit(tmp_path):
    src = _source_copy(tmp_path / "src")
    # a checkout with a user's untracked study: it stays out of the wheel (only what git tracks ships)
    git = lambda *a: subprocess.run(["git", "-C", str(src), *a], capture_output=True, text=True, check=True)  # noqa: E731
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "snapshot")
    (src / "jobs" / "my_untracked_study.yaml").write_text("base: x.yaml\n")
    commit = "0123456789abcdef0123456789abcdef01234567"
    env = dict(os.environ, HPCRAIL_GIT_COMMIT=commit, PIP_DISABLE_PIP_VERSION_CHECK="1")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(tmp_path / "dist")], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    [whl] = list((tmp_path / "dist").glob("hpcrail-*.whl"))
    with zipfile.ZipFile(whl) as z:
        names = set(z.namelist())
        z.extractall(tmp_path / "site")
    for f in ("hpcrail/examples/configs/trains/train4.yaml", "hpcrail/examples/jobs/sobol_train_makeup.yaml",
              "hpcrail/examples/slurm/partitioned_run.sbatch", "hpcrail/_build_info.json"):
        assert f in names, f
    assert "hpcrail/examples/jobs/my_untracked_study.yaml" not in names
    # the installed package (no checkout): examples from the wheel, commit from its metadata
    env = dict(os.environ, PYTHONPATH=str(tmp_path / "site"))
    run = lambda *a: subprocess.run([sys.executable, "-m", "hpcrail", *a], capture_output=True, text=True,
                                    env=env, cwd=tmp_path, timeout=120)
    r = run("--version")
    assert r.returncode == 0 and f"git {commit[:10]}" in r.stdout, r.stdout + r.stderr
    r = run("examples", "--copy", "work")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "work" / "configs" / "trains" / "train4.yaml").is_file()
    assert (tmp_path / "work" / "jobs" / "sobol_train_makeup.yaml").is_file()
    assert str(tmp_path / "site" / "hpcrail" / "examples") in run("examples").stdout.replace("\n", "")
