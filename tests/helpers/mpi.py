"""MPI test helpers: whether MPI can run here, and ``hpcrail`` runs in fresh processes (under ``mpiexec``)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import xarray as xr


def _mpi_missing():
    """Why MPI cannot run here (a sentence), or None."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install -e .[mpi])"
    if shutil.which("mpiexec") is None:
        return "mpiexec is not on PATH (pip install -e .[mpi] provides MPICH's)"
    return None


if os.environ.get("CI") == "true" and _mpi_missing() is not None:  # CI installs the mpi extra: never skip there
    raise RuntimeError(f"MPI tests cannot run in CI: {_mpi_missing()}")
needs_mpi = pytest.mark.skipif(_mpi_missing() is not None, reason=str(_mpi_missing()))


def hpcrail_cli(args, cwd, n=None):
    """Run ``hpcrail args`` in a fresh process in ``cwd`` (under ``mpiexec -n n`` if ``n``); asserts exit 0."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(cwd)] + sys.path))
    cmd = [sys.executable, "-c", "from hpcrail.cli import main; main()", *args]
    if n:
        cmd = ["mpiexec", "-n", str(n), *cmd]
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def mpi_pair(cfg, over, tmp_path, cwd, against="off"):
    """``(a, b)``: the datasets of ``hpcrail run cfg --partition against`` and of ``mpiexec -n 2 hpcrail run cfg
    --partition mpi`` with the overrides ``over`` (only rank 0 writes and reports)."""
    sets = [a for o in over for a in ("--set", o)]
    hpcrail_cli(["run", str(cfg), "-q", "--partition", against, "-o", str(tmp_path / "a.zarr"), *sets], cwd)
    r = hpcrail_cli(["run", str(cfg), "-q", "--partition", "mpi", "-o", str(tmp_path / "mpi.zarr"), *sets], cwd, n=2)
    assert r.stdout.count("wrote") == 1
    return xr.open_zarr(tmp_path / "a.zarr"), xr.open_zarr(tmp_path / "mpi.zarr")
