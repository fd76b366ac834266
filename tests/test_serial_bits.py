"""Serial results keep their exact bits (issue 25: one integrator kernel per method over blocks).

The references in ``tests/data/serial_bits.json`` were recorded with main's code *before* the integrators
were rewritten to run on lists of blocks through the vector layer (commit 75f87e3, the two-copies era):
for every method of the catalogue a SHA-256 fingerprint of the samples, the final state and the
observer's accumulator (and the event records) on three small problems (van der Pol μ = 10 with an
observation interval, a falling ball with a terminal and a non-terminal event, a linear chain with a
finite-difference Jacobian for the implicit methods) together with the exact step statistics; and for
the LTD kind the fingerprint of every numeric output of four serial runs, with the step count: train 4's
full 3 863 s trip with BDF2 (the hot path of the "1.57x CVODE" figure: 32 261 steps), train 4 with RK4 for
2 s, the demo train with the air brake under DOPRI5 and TR-BDF2.

A serial run is one block ``[0, n)`` with no-op reductions: nothing in its arithmetic may change.  The
fingerprints are bitwise properties of this platform's float64 arithmetic (x86-64, numba without
fastmath); a method added to the catalogue after the refactor gets its reference when it lands (mrbdf2:
recorded at its merge, 2026-11-27, so later changes of its kernel or of the shared integrator code are caught);
one without a reference is skipped here (its correctness is tested in test_integrator_suite.py).
"""
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from hpcrail.config.integrator import METHODS
from hpcrail.integrators import integrate
from hpcrail.integrators import testproblems as tp

REF = json.loads((Path(__file__).parent / "data" / "serial_bits.json").read_text())


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())
    return h.hexdigest()[:20]


def ds_digest(ds, names=None) -> str:
    """Fingerprint of every numeric output of a run (wall and compile times left out), or of the outputs
    ``names`` (those the run had when the reference was recorded: outputs added since do not count)."""
    h = hashlib.sha256()
    for v in sorted(ds.data_vars) if names is None else sorted(names):
        if v in ("wall_time", "compile_time") or ds[v].dtype.kind not in "fiu":
            continue
        h.update(v.encode())
        h.update(np.ascontiguousarray(ds[v].values.astype(np.float64)).tobytes())
    return h.hexdigest()[:20]


def _stats(s):
    return [s.stats[k] for k in sorted(s.stats)]


def _runs(name):
    spec = METHODS[name]
    kw = {} if spec.adaptive else {"step": 0.01}
    t = np.linspace(0, 4.0, 9)
    s = integrate(tp.van_der_pol(10.0), name, t, 4.0, rtol=1e-6, atol=1e-8, observe_interval=0.05, **kw)
    yield f"{name}/vdp", [digest(s.y, s.y_final, s.acc), _stats(s), s.status.name]
    t = np.linspace(0, 3.0, 7)
    s = integrate(tp.falling_ball(), name, t, 3.0, rtol=1e-7, atol=1e-9, **kw)
    yield f"{name}/ball", [digest(s.y, s.y_final, s.event_t, s.event_y), _stats(s), s.status.name]
    if spec.implicit:
        t = np.linspace(0, 0.5, 6)
        kw2 = {} if spec.adaptive else {"step": 1e-3}
        s = integrate(tp.linear_chain(N=10), name, t, 0.5, rtol=1e-6, atol=1e-9, jacobian="finite_difference", **kw2)
        yield f"{name}/chain_fd", [digest(s.y, s.y_final), _stats(s), s.status.name]


@pytest.mark.parametrize("name", [m for m, s in METHODS.items() if not s.external])
def test_every_method_keeps_its_serial_bits(name):
    if f"{name}/vdp" not in REF:
        pytest.skip(f"{name} was added after the references were recorded")
    for key, got in _runs(name):
        assert got == REF[key], key


TRAINS = {
    "train4/bdf2": ("trains/train4.yaml", ["partition.backend=off"]),
    "train4_blocks/rk4_2s": ("trains/train4_blocks.yaml", ["simulation.duration_s=2", "output.interval_s=0.25",
                                                           "partition.backend=off"]),
    "demo/dopri5_brake": ("trains/demo.yaml", ["integrator.method=dopri5", "integrator.rtol=1e-6",
                                               "integrator.atol=1e-6", "driver.commands.0.brake=0.8",
                                               "simulation.duration_s=20", "partition.backend=off"]),
    "demo/trbdf2_brake": ("trains/demo.yaml", ["integrator.method=trbdf2", "driver.commands.0.brake=0.8",
                                               "simulation.duration_s=20", "partition.backend=off"]),
}


@pytest.mark.parametrize("key", list(TRAINS))
def test_ltd_runs_keep_their_serial_bits(configs_dir, key):
    """Train 4's full trip with BDF2 keeps its 32 261 steps and bitwise the same outputs, and so do the
    shorter RK4, DOPRI5 and TR-BDF2 runs."""
    from hpcrail.kinds import load_scenario
    from hpcrail.simulate import run_scenario

    cfg, over = TRAINS[key]
    ds = run_scenario(load_scenario(configs_dir / cfg, over)[0])
    assert str(ds.status.values) == "completed"
    assert [ds_digest(ds, REF["outputs"][key]), int(ds.nsteps)] == REF[key], key
    if key == "train4/bdf2":
        assert int(ds.nsteps) == 32_261
