"""Never destroy what is not ours, clean errors on bad disks, interrupts and concurrency (issue 18,
items 3 and 4): ``--overwrite`` only replaces an hpcrail run store, a failed write leaves no
half-written store and an existing one intact, the sweep lock refuses a second sweep, a sweep that
fails before any scenario leaves nothing behind, corrupted chunks are reported and recomputed, and
Ctrl-C stops run and sweep with one line and exit code 130."""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import xarray as xr
from helpers.sweep import DEMO, ROOT, assert_same_results, write_spec
from typer.testing import CliRunner

from hpcrail import interrupt
from hpcrail.cli import EXIT_CONFIG, _load_command_modules, app
from hpcrail.results.store import (
    OutputPathError, StoreExistsError, StoreWriteError, check_output, store_kind, write_dataset,
)
from hpcrail.sweep.runner import SweepLockedError, run_sweep, sweep_lock
from hpcrail.sweep.store import corrupt_summary, read_state

_load_command_modules()   # `sweep` and `status` are registered by hpcrail.commands.sweep

SLACK = "connection_types.autocoupler.slack_mm"
MASS = "vehicle_types.wagon.mass_t"


def quiet(*_a, **_k):
    pass


def small_ds(value: float) -> xr.Dataset:
    """A result-like dataset (the attribute that marks an hpcrail run store)."""
    return xr.Dataset({"v": ("time", np.full(40, value))}, coords={"time": np.arange(40.0)},
                      attrs={"hpcrail_schema_version": "2"})


def leftovers(folder) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_overwrite_replaces_only_an_hpcrail_run_store(tmp_path):
    run_store = write_dataset(small_ds(1.0), tmp_path / "r.zarr")
    assert store_kind(run_store) == "run"
    with pytest.raises(StoreExistsError, match="--overwrite"):
        write_dataset(small_ds(2.0), run_store)
    write_dataset(small_ds(2.0), run_store, overwrite=True)
    assert float(xr.open_zarr(run_store).v[0]) == 2.0

    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "a.jpg").write_bytes(b"\xff\xd8")
    sweep = tmp_path / "s.zarr"
    sweep.mkdir()
    (sweep / ".zattrs").write_text(json.dumps({"sweep_fingerprint": "x", "hpcrail_schema_version": "2"}))
    link = tmp_path / "link.zarr"
    link.symlink_to(run_store)
    for path, what in ((a_file, "a file"), (foreign, "not an hpcrail store"), (sweep, "a sweep store"),
                       (link, "a symbolic link")):
        with pytest.raises(OutputPathError, match=what):
            write_dataset(small_ds(3.0), path, overwrite=True)
    assert a_file.read_text() == "keep me" and (foreign / "a.jpg").read_bytes() == b"\xff\xd8"
    assert (sweep / ".zattrs").exists() and float(xr.open_zarr(run_store).v[0]) == 2.0
    assert leftovers(tmp_path) == []


def test_an_unwritable_folder_is_refused_before_anything_is_computed(tmp_path):
    a_file = tmp_path / "f"
    a_file.write_text("x")
    with pytest.raises(OutputPathError, match="cannot write to"):
        check_output(a_file / "out.zarr")         # its folder is a file


def test_a_store_is_never_written_inside_another_store(tmp_path):
    """``run -o store.zarr/inner.zarr`` wrote a store inside a store (issue 31 item 7): a stray group of the
    outer store, lost when it is rewritten.  Refused before anything is computed, at any depth, also for a
    sweep store's folder and for zarr stores that are not hpcrail's."""
    outer = write_dataset(small_ds(1.0), tmp_path / "r.zarr")
    for path in (outer / "inner.zarr", outer / "v" / "deeper" / "x.zarr"):
        with pytest.raises(OutputPathError, match="inside the zarr store"):
            check_output(path)
        with pytest.raises(OutputPathError, match="inside the zarr store"):
            write_dataset(small_ds(2.0), path)
    from hpcrail.results.store import check_writable

    with pytest.raises(OutputPathError, match="inside the zarr store"):   # a sweep checks its store's folder
        check_writable(outer)
    assert sorted(p.name for p in outer.iterdir() if p.name.endswith(".zarr")) == []
    write_dataset(small_ds(2.0), tmp_path / "next_to_it.zarr")            # beside a store: as before


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS])
def test_a_failed_write_leaves_no_half_store_and_the_old_store_intact(tmp_path, monkeypatch, code):
    store = write_dataset(small_ds(1.0), tmp_path / "r.zarr")
    before = sorted(str(p.relative_to(store)) for p in store.rglob("*"))
    real = xr.Dataset.to_zarr

    def failing(self, path, *a, **k):   # half of the store written, then the disk is full
        real(self, path, *a, **k)
        shutil.rmtree(os.path.join(path, "v"))
        raise OSError(code, os.strerror(code), str(path))

    monkeypatch.setattr(xr.Dataset, "to_zarr", failing)
    with pytest.raises(StoreWriteError, match="existing store is unchanged") as ei:
        write_dataset(small_ds(2.0), store, overwrite=True)
    assert os.strerror(code) in str(ei.value)
    with pytest.raises(StoreWriteError, match="nothing was written"):
        write_dataset(small_ds(2.0), tmp_path / "new.zarr")
    monkeypatch.undo()
    assert float(xr.open_zarr(store).v[0]) == 1.0
    assert sorted(str(p.relative_to(store)) for p in store.rglob("*")) == before
    assert not (tmp_path / "new.zarr").exists() and leftovers(tmp_path) == []


def test_cli_run_refuses_to_overwrite_a_foreign_directory_before_simulating(tmp_path):
    foreign = tmp_path / "data"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("years of work")
    r = CliRunner().invoke(app, ["run", str(DEMO), "-o", str(foreign), "--overwrite", "-q"])
    assert r.exit_code == EXIT_CONFIG, r.output
    assert "not an hpcrail store" in r.output and "Traceback" not in r.output
    assert (foreign / "thesis.tex").read_text() == "years of work"


@pytest.fixture(scope="module")
def spec4(tmp_path_factory):
    d = tmp_path_factory.mktemp("safe")
    return write_spec(d / "s4.yaml", {SLACK: {"values": [0, 10, 20, 30]}}, duration=2.0,
                      extra={"batch_size": 2})


@pytest.fixture(scope="module")
def reference4(spec4, tmp_path_factory):
    store = tmp_path_factory.mktemp("ref4") / "ref.zarr"
    run_sweep(spec4, store, inline=True, progress=False, say=quiet)
    return store


def test_a_second_sweep_on_a_locked_store_is_refused_and_touches_nothing(spec4, reference4, tmp_path):
    store = tmp_path / "s.zarr"
    shutil.copytree(reference4, store)
    before = {str(p): p.stat().st_mtime_ns for p in store.rglob("*")}
    # the lock of another process (filelock: an OS lock, so a second holder in any process is refused)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from filelock import FileLock; "
                               f"l = FileLock({str(store.with_name('.s.zarr.lock'))!r}); l.acquire(); "
                               "print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        for new in (False, True):   # not even --new deletes a store in use
            with pytest.raises(SweepLockedError, match="in use by another hpcrail sweep"):
                run_sweep(spec4, store, inline=True, progress=False, say=quiet, new=new)
        r = CliRunner().invoke(app, ["sweep", str(spec4), "-o", str(store), "--inline", "-q"])
        assert r.exit_code == EXIT_CONFIG and "in use by another hpcrail sweep" in r.output, r.output
    finally:
        holder.kill()
        holder.wait()
    assert {str(p): p.stat().st_mtime_ns for p in store.rglob("*")} == before
    with sweep_lock(store):   # released when its holder died
        pass


def test_a_sweep_failing_before_any_scenario_leaves_no_store(spec4, tmp_path):
    store = tmp_path / "never.zarr"
    with pytest.raises(ValueError):
        run_sweep(spec4, store, inline=False, cluster="no-such-cluster", progress=False, say=quiet)
    assert not store.exists()


def test_a_corrupted_chunk_is_reported_and_recomputed_on_resume(spec4, reference4, tmp_path):
    store = tmp_path / "c.zarr"
    shutil.copytree(reference4, store)
    (store / "max_draft_force" / "1").write_bytes(b"garbage, not a compressed chunk")   # scenarios 2-3
    (store / "scenario_id" / "0").write_bytes(b"\x00" * 7)                                # a coordinate
    st = read_state(store)
    assert sorted(st["corrupt"]) == ["max_draft_force", "scenario_id"]
    assert st["done"].tolist() == [True, True, False, False]
    assert "2 unreadable chunk(s)" in corrupt_summary(st) and "(4 scenarios)" in corrupt_summary(st)
    r = CliRunner().invoke(app, ["status", str(store)])
    assert r.exit_code == 0 and "unreadable chunk" in r.output and "Traceback" not in r.output, r.output
    notes = []
    res = run_sweep(spec4, store, inline=True, progress=False, say=notes.append)
    assert res.ran == 2 and any("unreadable chunk" in n for n in notes), notes
    assert_same_results(reference4, store)
    assert not read_state(store)["corrupt"]


def test_report_and_new_on_a_corrupted_store(spec4, reference4, tmp_path):
    store = tmp_path / "c.zarr"
    shutil.copytree(reference4, store)
    (store / "max_draft_force" / "0").write_bytes(b"garbage")
    r = CliRunner().invoke(app, ["report", str(store)])
    assert r.exit_code == EXIT_CONFIG and "unreadable chunk" in r.output and "--new" in r.output, r.output
    assert "Traceback" not in r.output
    r = CliRunner().invoke(app, ["sweep", str(spec4), "-o", str(store), "--new", "--inline", "-q"])
    assert r.exit_code == 0, r.output
    assert_same_results(reference4, store)


def test_a_full_disk_during_a_sweep_is_one_line_and_keeps_the_batches_written(spec4, reference4, tmp_path,
                                                                              monkeypatch):
    import hpcrail.sweep.worker as worker

    store = tmp_path / "full.zarr"
    real, calls = worker.write_region, []

    def write_region(path, layout, start, stop, arrays):   # the disk fills up after the first batch
        calls.append(start)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        real(path, layout, start, stop, arrays)

    monkeypatch.setattr(worker, "write_region", write_region)
    r = CliRunner().invoke(app, ["sweep", str(spec4), "-o", str(store), "--inline", "-q"])
    assert r.exit_code == 4, r.output
    assert "cannot write the sweep store" in r.output and os.strerror(errno.ENOSPC) in r.output, r.output
    assert "Traceback" not in r.output and "re-run the same command to resume" in r.output
    assert read_state(store)["done"].tolist() == [True, True, False, False]
    monkeypatch.undo()
    run_sweep(spec4, store, inline=True, progress=False, say=quiet)
    assert_same_results(reference4, store)


def _start(cmd, **env_extra):
    env = dict(os.environ, PYTHONPATH=str(ROOT), **env_extra)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def test_ctrl_c_stops_a_sweep_with_one_line_and_the_resume_completes_it(tmp_path):
    """SIGINT to the process group (a terminal's Ctrl-C): exit 130, "interrupted: N/M done … resume",
    no traceback, no leaked-semaphore warning, no processes left; the same command finishes the store,
    equal to an uninterrupted run."""
    # 60 s per scenario: ~0.4 s each on a warm cache, so the SIGINT sent once 2 are done lands mid-sweep (with 20 s
    # the 18 scenarios took 2.6 s and the sweep had finished before the signal arrived: exit -2, not 130)
    spec = write_spec(tmp_path / "i.yaml", {SLACK: {"linspace": [0, 30, 6]}, MASS: {"values": [80, 100, 120]}},
                      duration=60.0, extra={"batch_size": 2})
    store = tmp_path / "i.zarr"
    cmd = [sys.executable, "-m", "hpcrail", "sweep", str(spec), "-o", str(store), "--workers", "1",
           "--dashboard-address", ":0", "-q"]
    proc = _start(cmd)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        if store.exists() and int(read_state(store)["done"].sum()) >= 2:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == interrupt.EXIT_INTERRUPTED, out
    assert "Traceback" not in out and "leaked" not in out and "Exception ignored" not in out, out
    line = [ln for ln in out.splitlines() if ln.startswith("interrupted")]
    assert len(line) == 1 and "/18 done" in line[0] and "re-run the same command to resume" in line[0], out
    gone = time.time() + 120  # the nanny, its worker and the resource tracker are gone with the driver (early exit)
    while time.time() < gone:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)
    done = int(read_state(store)["done"].sum())
    assert 0 < done < 18 and f"{done}/18 done" in line[0]
    second = subprocess.run(cmd, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                            timeout=600)
    assert second.returncode == 0 and "18/18 done" in second.stdout, second.stdout + second.stderr
    ref = tmp_path / "ref.zarr"
    run_sweep(spec, ref, inline=True, progress=False, say=quiet)
    assert_same_results(ref, store)


def test_ctrl_c_stops_a_run_and_writes_nothing(tmp_path):
    """SIGINT while the run compiles (an empty numba cache: the kernels take longer than 4 s to compile)
    or integrates: exit 130, one line, no store, no temporary files — before, an interrupt during
    compilation was printed as "Exception ignored" and the run went on to write its store."""
    out_store = tmp_path / "out" / "r.zarr"
    out_store.parent.mkdir()
    proc = _start([sys.executable, "-m", "hpcrail", "run", str(DEMO), "-o", str(out_store), "-q",
                   "--set", "simulation.duration_s=3000", "--set", "integrator.method=rk4",
                   "--set", "integrator.step_s=0.0005"], NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    # the moment it compiles: its notice (a fixed 4 s fell in the imports on a loaded machine, before the run's
    # own handling began)
    first = []
    for line in proc.stdout:
        first.append(line)
        if "compiling numba kernels" in line:
            break
    time.sleep(0.5)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:   # ended before its notice: the assertions below show its output
        pass
    out = "".join(first) + proc.communicate(timeout=300)[0]
    assert proc.returncode == interrupt.EXIT_INTERRUPTED, out
    assert out.strip().splitlines()[-1].startswith("interrupted (SIGINT): nothing was written"), out
    assert "Traceback" not in out and "Exception ignored" not in out
    assert not out_store.exists() and os.listdir(out_store.parent) == []


def test_an_interrupt_is_recorded_and_raised_at_the_next_safe_point():
    with interrupt.handling_interrupts():
        with pytest.raises(interrupt.Interrupted):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)
        assert interrupt.requested() == "SIGINT"
        with pytest.raises(interrupt.Interrupted):
            interrupt.check()
    assert interrupt.requested() is None
    interrupt.check()
