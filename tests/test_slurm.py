"""Slurm deployment against a real single-node Slurm (tests/slurm/start_slurm.sh): a partitioned MPI run
through sbatch + srun, and site settings rendered into job templates.  Without Slurm (slurmctld,
munged, sbatch) the Slurm tests skip with the reason; CI (.ci/run) installs and starts Slurm."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import xarray as xr

from hpcrail.config import ConfigError
from hpcrail.kinds.ltd.outputs import TRAIN_METRICS

METRICS = [o.name for o in TRAIN_METRICS]
from hpcrail.slurm.site import load_site_config, render_job_script

ROOT = Path(__file__).resolve().parents[1]
START = ROOT / "tests" / "slurm" / "start_slurm.sh"
#: one pytest-xdist worker runs every test of this module (``--dist loadgroup``): the module's Slurm cluster
#: (started here when none runs, on fixed ports) and its two CPUs are shared by its tests, not raced for
pytestmark = pytest.mark.xdist_group("slurm")


def _slurm_missing() -> str | None:
    for exe in ("sbatch", "srun", "sinfo"):
        if shutil.which(exe) is None:
            return f"Slurm client {exe!r} is not installed (tests/slurm/start_slurm.sh --install start)"
    if os.environ.get("SLURM_CONF") and Path(os.environ["SLURM_CONF"]).exists():
        return None
    for exe in ("slurmctld", "slurmd", "munged"):
        if shutil.which(exe) is None:
            return f"no running Slurm (SLURM_CONF unset) and {exe!r} is not installed to start one"
    if os.geteuid() != 0:
        return "no running Slurm (SLURM_CONF unset) and starting slurmd needs root"
    return None


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """SLURM_CONF of a running cluster: the one in the environment (CI starts it), else one started
    here with tests/slurm/start_slurm.sh and stopped (by PID) at the end of the module."""
    reason = _slurm_missing()
    if reason and os.environ.get("CI") == "true":  # .ci/run starts a Slurm: a missing one is a CI failure
        pytest.fail(f"Slurm tests cannot run in CI: {reason}")
    if reason:
        pytest.skip(reason)
    conf = os.environ.get("SLURM_CONF")
    if conf and Path(conf).exists():
        yield conf
        return
    d = tmp_path_factory.mktemp("slurm")
    env = dict(os.environ, HPCRAIL_SLURM_DIR=str(d), HPCRAIL_SLURMCTLD_PORT="16817", HPCRAIL_SLURMD_PORT="16818")
    r = subprocess.run(["bash", str(START), "start"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    os.environ["SLURM_CONF"] = str(d / "slurm.conf")
    try:
        yield os.environ["SLURM_CONF"]
    finally:
        subprocess.run(["bash", str(START), "stop"], env=env, capture_output=True, timeout=60)
        os.environ.pop("SLURM_CONF", None)


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT)] + sys.path))


def _hpcrail(args, cwd, timeout=1500):
    r = subprocess.run([sys.executable, "-c", "from hpcrail.cli import main; main()", *args], cwd=cwd, env=_env(), capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_site_settings_go_into_the_job_script_not_the_template(tmp_path):
    site = tmp_path / "slurm.yaml"
    site.write_text("account: proj42\npartition: short\nmodules: [mpich/4.2]\n"
                    "prologue: ['source ~/venvs/hpcrail/bin/activate']\nsbatch: ['--constraint=cpu']\n")
    cfg = load_site_config(site)
    tpl = (ROOT / "slurm" / "partitioned_run.sbatch").read_text()
    assert "--account" not in tpl and "--partition=" not in tpl  # templates hold no site settings
    out = render_job_script(tpl, cfg)
    lines = out.splitlines()
    first_cmd = next(i for i, ln in enumerate(lines) if ln.strip() and not ln.startswith("#"))
    sbatch = [i for i, ln in enumerate(lines) if ln.startswith("#SBATCH")]
    assert max(sbatch) < first_cmd  # every directive before the first command (sbatch stops reading there)
    for want in ("#SBATCH --account=proj42", "#SBATCH --partition=short", "#SBATCH --constraint=cpu"):
        assert want in lines
    assert lines.index("module load mpich/4.2") < lines.index("source ~/venvs/hpcrail/bin/activate") < \
        next(i for i, ln in enumerate(lines) if ln.startswith("srun"))
    site.write_text("acount: typo\ncores: 0\n")
    with pytest.raises(ConfigError) as ei:
        load_site_config(site)
    msgs = [str(i) for i in ei.value.issues]
    assert any("acount" in m and "unknown setting" in m and str(site) in m for m in msgs), msgs
    assert any("cores" in m for m in msgs), msgs


@pytest.mark.slurm
def test_partitioned_run_through_sbatch_and_srun_equals_local(slurm, tmp_path):
    """slurm/partitioned_run.sbatch (sbatch + srun --mpi=pmi2, 2 ranks) writes the dataset of a local
    serial run: states within 1e-10 relative (RK4, Bosso et al. 2024 train 4 layout)."""
    cfg = str(ROOT / "configs" / "trains" / "train4_blocks.yaml")
    sets = ["--set", "simulation.duration_s=4", "--set", "output.interval_s=0.5"]
    site = tmp_path / "site.yaml"
    site.write_text("prologue: ['export HPCRAIL_SITE_PROLOGUE_RAN=yes', 'echo prologue=$HPCRAIL_SITE_PROLOGUE_RAN']\n")
    _hpcrail(["run", cfg, "-q", "--partition", "off", "-o", str(tmp_path / "local.zarr"), *sets], tmp_path)
    r = _hpcrail(["slurm", "submit", "--site", str(site), "--wait", "--sbatch=--ntasks=2",
                  f"--sbatch=--output={tmp_path / 'job.out'}", str(ROOT / "slurm" / "partitioned_run.sbatch"),
                  cfg, "-o", str(tmp_path / "slurm.zarr"), *sets], tmp_path)
    assert "submitted job" in r.stdout
    log = (tmp_path / "job.out").read_text()
    assert "prologue=yes" in log and "on 2 ranks" in log and log.count("wrote ") == 1, log
    a = xr.open_zarr(tmp_path / "local.zarr")
    b = xr.open_zarr(tmp_path / "slurm.zarr")
    assert "2 MPI ranks" in b.attrs["partition"]
    for v in ("speed", "coupler_force", "coupler_deflection", "notch"):
        x, y = a[v].values, b[v].values
        assert np.nanmax(np.abs(x - y)) <= 1e-10 * np.nanmax(np.abs(x)), v
    for name in METRICS:
        np.testing.assert_allclose(float(b[name]), float(a[name]), rtol=1e-10, err_msg=name)


def test_worker_jobs_carry_site_settings_and_retire_before_the_walltime(tmp_path):
    """The SLURMCluster job script holds the site's account/partition/prologue, the worker lifetime and
    stagger; the default lifetime ends before the walltime."""
    pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is not installed (pip install -e .[slurm])")
    from hpcrail.sweep.cluster import SlurmOptions, _slurm_cluster, default_lifetime, parse_adaptive, walltime_seconds

    for wt in ("00:10:00", "02:00:00", "1-00:00:00"):
        life, stagger = default_lifetime(wt)
        assert int(life[:-1]) + int(stagger[:-1]) < walltime_seconds(wt)
    assert walltime_seconds("1-00:00:00") == 86400 and walltime_seconds("90") == 5400
    assert parse_adaptive("2:10") == (2, 10)
    with pytest.raises(ValueError, match="MIN:MAX"):
        parse_adaptive("ten")
    site = tmp_path / "site.yaml"
    site.write_text("account: proj42\npartition: short\ninterface: lo\nmodules: [mpich]\n"
                    "prologue: ['source ~/venv/bin/activate']\n")
    cluster, note = _slurm_cluster(SlurmOptions(jobs=3, cores=4, memory="8GB", walltime="01:00:00", site=str(site),
                                                lifetime_stagger="2m"), "127.0.0.1:0")
    try:
        js = cluster.job_script()
    finally:
        cluster.close()
    for want in ("#SBATCH -A proj42", "#SBATCH -p short", "#SBATCH -t 01:00:00", "module load mpich",
                 "source ~/venv/bin/activate", "--lifetime", "--lifetime-stagger 2m", "--interface lo"):
        assert want in js, (want, js)
    assert "3 worker jobs of 4 cores" in note


@pytest.mark.slurm
def test_sweep_on_slurm_worker_jobs_survives_a_lost_job_and_equals_local(slurm, tmp_path):
    """``hpcrail sweep --cluster slurm``: dask workers as Slurm jobs (dask-jobqueue SLURMCluster).  Both
    worker jobs end in the middle of the sweep (as at their lifetime or walltime): adapt submits new jobs,
    the sweep completes on them, and the store equals the one computed locally without dask."""
    pytest.importorskip("dask_jobqueue", reason="dask-jobqueue is not installed (pip install -e .[slurm])")
    import threading
    import time

    from helpers.sweep import assert_same_results, write_spec

    from hpcrail.sweep.cluster import SlurmOptions
    from hpcrail.sweep.runner import run_sweep
    from hpcrail.sweep.store import read_state

    spec = write_spec(tmp_path / "spec.yaml", {"connection_types.autocoupler.slack_mm": {"values": [0, 10, 25]},
                                               "vehicle_types.wagon.mass_t": {"linspace": [80, 120, 4]}},
                      duration=300.0, extra={"outputs": {"envelopes": True}})
    quiet = lambda *a, **k: None  # noqa: E731
    run_sweep(spec, tmp_path / "local.zarr", inline=True, progress=False, say=quiet, batch_size=1)
    site = tmp_path / "site.yaml"
    site.write_text("interface: lo\nprologue: ['echo site-prologue-ran']\n")  # loopback only
    logs = tmp_path / "jobs"
    store = tmp_path / "slurm.zarr"
    killed = []

    def kill_one_job_after_first_result():
        deadline = time.time() + 600
        while time.time() < deadline and not killed:
            try:
                if store.exists() and read_state(store)["done"].sum() >= 1:
                    out = subprocess.run(["squeue", "-h", "-n", "hpcrail-sweep", "-t", "R", "-o", "%i"],
                                         capture_output=True, text=True).stdout.split()
                    if out:
                        subprocess.run(["scancel", *out], check=False)
                        killed.extend(out)
                        return
            except Exception:  # noqa: BLE001 - the store may be mid-write
                pass
            time.sleep(0.2)

    th = threading.Thread(target=kill_one_job_after_first_result, daemon=True)
    th.start()
    said = []
    opts = SlurmOptions(jobs=2, cores=1, memory="2GB", walltime="00:10:00", site=str(site), log_directory=str(logs))
    res = run_sweep(spec, store, cluster="slurm", slurm=opts, batch_size=1, progress=False, say=said.append,
                    dashboard_address="127.0.0.1:0", retries=3)
    th.join(timeout=5)
    assert not res.failed_tasks and res.counts["done"] == 12, said
    assert_same_results(tmp_path / "local.zarr", store)
    text = "\n".join(said)
    assert "2 worker jobs of 1 core" in text and "ssh -N -L" in text
    jobs = {p.stem for p in logs.glob("*.err")} | {p.stem for p in logs.glob("*.out")}
    if killed:  # the sweep may (rarely) finish before a job could be cancelled
        assert len(jobs) >= len(killed) + 1, f"new worker jobs replaced the cancelled ones {killed}: {sorted(jobs)}"
    assert any("site-prologue-ran" in p.read_text() for p in logs.glob("*.out"))


@pytest.mark.slurm
def test_sweep_inside_one_allocation_equals_local(slurm, tmp_path):
    """slurm/sweep_allocation.sbatch: scheduler + 2 workers started with srun inside one job, meeting
    through a scheduler file; the store equals the local one."""
    from helpers.sweep import assert_same_results, write_spec

    from hpcrail.sweep.runner import run_sweep

    spec = write_spec(tmp_path / "spec.yaml", {"connection_types.autocoupler.slack_mm": {"values": [0, 10, 25]},
                                               "vehicle_types.wagon.mass_t": {"linspace": [80, 120, 2]}},
                      duration=5.0, extra={"outputs": {"envelopes": True}})
    run_sweep(spec, tmp_path / "local.zarr", inline=True, progress=False, say=lambda *a, **k: None, batch_size=1)
    env = dict(_env(), HPCRAIL_INTERFACE="lo", HPCRAIL_DASHBOARD="127.0.0.1:0")  # loopback only
    r = subprocess.run([sys.executable, "-c", "from hpcrail.cli import main; main()", "slurm", "submit", "--wait",
                        "--sbatch=--ntasks=2", f"--sbatch=--output={tmp_path / 'job.out'}",
                        str(ROOT / "slurm" / "sweep_allocation.sbatch"), str(spec), "-o", str(tmp_path / "alloc.zarr"),
                        "--batch-size", "1"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    log = (tmp_path / "job.out").read_text() if (tmp_path / "job.out").exists() else ""
    assert r.returncode == 0, r.stdout + r.stderr + log
    assert "2 workers on" in log and "6/6 done" in log and "ssh -N -J" in log and "-L 8787:127.0.0.1:8787" in log, log
    assert_same_results(tmp_path / "local.zarr", tmp_path / "alloc.zarr")
