"""A SIGINT or SIGTERM at any moment of a command's life ends it with exit code 130 and one
"interrupted (SIGNAL)" line — during start-up (imports of typer, numba and the command's modules, the
loading of the scenario), inside the command's work and after it — never with the signal's default
action (exit status -15, issue 31 item 8) or a traceback.  The moments are measured from the installation
of the entry point's handlers (seen in ``/proc/PID/status``): before it, in the interpreter's own start,
no Python code can catch a signal."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from helpers.sweep import DEMO, ROOT, wait_for_handler

ENV = dict(os.environ, PYTHONPATH=str(ROOT))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_at_any_moment_of_start_up_exits_130_with_its_message(tmp_path, sig):
    outcomes = []
    for k, delay in enumerate((0.0, 0.03, 0.1, 0.3, 0.8, 1.6)):
        out = tmp_path / f"run{k}.zarr"
        cmd = [sys.executable, "-m", "hpcrail", "run", str(DEMO), "--set", "simulation.duration_s=60", "-q",
               "-o", str(out)]
        proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp_path)
        assert wait_for_handler(proc), proc.communicate(timeout=60)[0].decode()
        time.sleep(delay)
        proc.send_signal(sig)
        text = proc.communicate(timeout=120)[0].decode()
        outcomes.append((delay, proc.returncode, text.strip().splitlines()[-1:] if text.strip() else []))
        assert "Traceback" not in text, text
        if proc.returncode == 0:   # finished before the signal: only possible for the late moments
            assert delay >= 0.8 and out.exists(), outcomes
            continue
        assert proc.returncode == 130, outcomes
        assert f"interrupted ({sig.name})" in text, text
        assert not out.exists(), f"a store was written although the run was interrupted at {delay} s"
    # the early moments stop during start-up (imports take a second or more), before the run: the entry
    # point's handler answers there, not the run's block (which installs its own only when it starts)
    assert all(rc == 130 for d, rc, _ in outcomes if d <= 0.3), outcomes
    assert all(f"interrupted ({sig.name}): stopped (no store was being written)" in " ".join(last)
               for d, _, last in outcomes if d <= 0.03), outcomes
