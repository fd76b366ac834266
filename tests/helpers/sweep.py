"""Helpers shared by the sweep tests: spec files around the demo train, store comparison."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "configs" / "trains" / "demo.yaml"

#: variables that legitimately differ between two runs of the same scenarios
TIMING = ["wall_time", "compile_time"]


def write_spec(path: Path, parameters: dict, *, duration: float = 2.0, design: str = "grid", base: Path = DEMO,
               extra: dict | None = None, set_: dict | None = None) -> Path:
    """A sweep spec over the demo train (short duration) at ``path``."""
    spec = {"base": str(base), "set": {"simulation.duration_s": duration, **(set_ or {})},
            "parameters": parameters, "design": design}
    spec.update(extra or {})
    path.write_text("# test sweep\n" + yaml.safe_dump(spec, sort_keys=False))
    return path


def load_results(store: Path) -> xr.Dataset:
    """The store's content without timings and run attributes, loaded in memory."""
    ds = xr.open_zarr(store, consolidated=True).drop_vars(TIMING).load()
    ds.attrs = {}
    return ds


def assert_same_results(a: Path, b: Path) -> None:
    """Identical stores (every variable and coordinate, NaN == NaN) apart from timings."""
    da, db = load_results(a), load_results(b)
    xr.testing.assert_identical(da, db)
    assert np.asarray(da.done.values).all()


def cli_app():
    """The hpcrail typer app with every command registered (for ``typer.testing.CliRunner``)."""
    from hpcrail import cli

    cli._load_command_modules()
    return cli.app


def catches(pid: int, sig: int) -> bool:
    """Whether process ``pid`` has a handler installed for signal ``sig`` (Linux: ``SigCgt`` of
    ``/proc/PID/status``); False once it has exited."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (int(sig) - 1) & 1)
    return False


def wait_for_handler(proc, timeout: float = 60.0) -> bool:
    """Wait until ``proc`` (a ``subprocess.Popen`` of ``python -m hpcrail``) has run its entry point's
    :func:`hpcrail.interrupt.install_entry_handlers` (SIGINT, then SIGTERM: seen when SIGTERM is caught —
    Python's own SIGINT handler exists from the interpreter's start).  Before it, in the interpreter's own
    start, a signal takes its default action.  False if the process exited first."""
    import signal
    import time

    end = time.time() + timeout
    while time.time() < end and proc.poll() is None:
        if catches(proc.pid, signal.SIGTERM):
            return True
        time.sleep(0.002)
    return False
