"""Bitwise determinism across execution paths, for every registered kind (issue 18, item 2).

The same scenario gives identical bits (every output but the timings) as a single run, in a batch of
1 or of 64, on 1 or 2 dask workers, in worker threads or worker processes (which inherit one BLAS
thread from dask), with 1 or 2 BLAS threads and 1 or 2 numba threads — for the kind's own method and
for other integrators by name.  Kinds and methods are picked generically: every kind in the registry
is covered by a scenario file of that kind under ``configs/`` (a new kind is covered as soon as it
ships one), and every method is named, never tied to step counts.
"""
from __future__ import annotations

import numpy as np
import pytest
import xarray as xr
from helpers.paths import mixed_grouped
from test_kinds import ROOT, scenario_files
from threadpoolctl import threadpool_limits

from hpcrail import kinds
from hpcrail.config import ConfigError
from hpcrail.kinds import load_scenario
from hpcrail.simulate import run_batch, run_scenario

DURATION = 1.0
#: the small scenario of each kind (others: the first scenario file of the kind)
PREFERRED = {"ltd": "trains/demo.yaml", "planar_train": "couplers/two_car_loaded.yaml",
             "vertical": "vertical/full_vehicle_track.yaml", "mixed_train": "mixed/short_consist_curve.yaml"}
#: integrators tried by name on every kind (those the kind accepts), besides the scenario's own
METHODS = ("rk4", "dopri5", "trbdf2")
TIMING = ("wall_time", "compile_time")


def _kind_files() -> dict:
    out: dict = {}
    for p in scenario_files():
        sc, _ = load_scenario(p)
        out.setdefault(kinds.of(sc).name, []).append(p)
    return out


FILES = _kind_files()


def base_file(kind: str):
    pref = PREFERRED.get(kind)
    return ROOT / "configs" / pref if pref and (ROOT / "configs" / pref) in FILES[kind] else FILES[kind][0]


def scenario(kind: str, method: str | None = None, extra=()):
    over = [f"simulation.duration_s={DURATION}", *extra]
    if method is not None:
        over.append(f"integrator.method={method}")
    return load_scenario(base_file(kind), over)[0]


def methods(kind: str) -> list:
    """The scenario's own method (None) and every method of :data:`METHODS` the kind accepts."""
    out = [None]
    for m in METHODS:
        try:
            scenario(kind, m)
        except ConfigError:
            try:   # a fixed-step method needs a step
                scenario(kind, m, ["integrator.step_s=0.001"])
            except ConfigError:
                continue
            out.append((m, "integrator.step_s=0.001"))
            continue
        out.append((m, None))
    return out


def variant(kind, m, k: int):
    """Scenario ``k`` of a family (durations differ slightly, so that batches hold distinct runs)."""
    name, step = m if m else (None, None)
    extra = [step] if step else []
    if k:
        extra.append(f"simulation.duration_s={round(DURATION - 0.01 * k, 2)}")
    return scenario(kind, name, extra)


def comparable(ds: xr.Dataset) -> xr.Dataset:
    ds = ds.drop_vars([v for v in TIMING if v in ds]).load()
    ds.attrs = {}
    return ds


def _run_summary(ds: xr.Dataset) -> str:
    return ", ".join(f"{k} {ds[k].values}" for k in ("status", "nsteps", "nfev") if k in ds)


def assert_same_bits(a: xr.Dataset, b: xr.Dataset, where: str) -> None:
    """Every variable (timings aside) in the same bits; a failure lists every differing variable with its
    shapes, the number of differing values and the largest difference, and both runs' status and step
    counts (a single name said too little to find the cause of a difference seen once under load)."""
    a, b = comparable(a), comparable(b)
    assert sorted(a.variables) == sorted(b.variables), where
    bad = []
    for name in a.variables:
        x, y = np.asarray(a[name].values), np.asarray(b[name].values)
        if x.dtype.kind == "f":
            if x.shape != y.shape:
                bad.append(f"{name}: shapes {x.shape} vs {y.shape}")
            elif x.tobytes() != y.tobytes():
                ne = ~((x == y) | (np.isnan(x) & np.isnan(y)))
                d = np.abs(x - y)[ne]
                bad.append(f"{name}: {int(ne.sum())} of {x.size} values differ, max |diff| "
                           f"{np.nanmax(d) if np.isfinite(d).any() else d.max():.3g} (relative "
                           f"{np.nanmax(d / np.maximum(np.abs(x[ne]), 1e-300)) if np.isfinite(d).any() else 'n/a'})")
        elif not np.array_equal(x, y):
            bad.append(f"{name}: {x!r} vs {y!r}"[:200])
    assert not bad, (f"{where}: {len(bad)} variables differ in their bits (runs: {_run_summary(a)} | "
                     f"{_run_summary(b)}):\n  " + "\n  ".join(bad))


def blas_threads() -> int:
    """The BLAS thread count of this process (the smallest over the loaded BLAS libraries)."""
    from threadpoolctl import threadpool_info

    return min([i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"] or [1])


KINDS = sorted(kinds.names())
CASES = [(k, m) for k in KINDS for m in methods(k)]


def case_id(c):
    k, m = c
    return f"{k}-{m[0] if m else 'own'}"


def test_every_kind_is_covered():
    assert set(FILES) == set(KINDS), "a registered kind has no scenario file under configs/"
    for k in KINDS:
        assert len(methods(k)) >= 2, k


@pytest.mark.parametrize("case", mixed_grouped(CASES, lambda c: c[0] == "mixed_train"), ids=case_id)
def test_single_run_equals_batch_of_1_and_batch_of_4(case):
    kind, m = case
    sc = variant(kind, m, 0)
    single = run_scenario(sc)
    assert str(single.status.values) == "completed", str(single.message.values)
    (one,) = run_batch([sc])
    assert_same_bits(single, one, f"{case_id(case)} batch of 1")
    four = run_batch([variant(kind, m, k) for k in (3, 0, 1, 2)])
    assert_same_bits(single, four[1], f"{case_id(case)} batch of 4")


@pytest.mark.parametrize("kind", mixed_grouped(KINDS, lambda k: k == "mixed_train"))
def test_batch_of_64_on_one_or_two_numba_threads_equals_single_runs(kind):
    scs = [variant(kind, None, k) for k in range(64)]
    b1 = run_batch(scs, mode="prange", threads=1)
    b2 = run_batch(scs, mode="prange", threads=2)
    for k in (0, 17, 63):
        ref = run_scenario(scs[k])
        assert_same_bits(ref, b1[k], f"{kind}: item {k} of 64")
        assert_same_bits(ref, b2[k], f"{kind}: item {k} of 64, 2 numba threads")
    assert not comparable(b1[0]).identical(comparable(b1[63]))   # the batch holds distinct runs


@pytest.mark.parametrize("kind", mixed_grouped(KINDS, lambda k: k == "mixed_train"))
def test_one_or_two_blas_threads_give_the_same_bits(kind):
    """Set-up paths that call BLAS/LAPACK (model build, discretisation, track synthesis) do not depend
    on the BLAS thread count (a dask worker inherits 1, the driver has one per core)."""
    sc = variant(kind, None, 0)
    with threadpool_limits(limits=1):
        a = run_scenario(sc)
    with threadpool_limits(limits=2):
        b = run_scenario(sc)
    assert_same_bits(a, b, f"{kind}: 1 vs 2 BLAS threads")


@pytest.fixture(scope="module")
def clusters():
    """Two dask clusters: 2 worker processes, and 1 process with 2 worker threads."""
    from distributed import Client, LocalCluster

    procs = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=50)
    threads = LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0",
                           silence_logs=50)
    # not the default client: dask's global scheduler setting is left alone for the tests after these
    cp, ct = Client(procs, set_as_default=False), Client(threads, set_as_default=False)
    yield cp, ct
    for c in (cp, ct, procs, threads):
        c.close()


def _run_on(client, scs, batch: int) -> list:
    futs = [client.submit(run_batch, scs[i:i + batch], pure=False) for i in range(0, len(scs), batch)]
    return [ds for f in futs for ds in f.result()]


@pytest.mark.parametrize("kind", mixed_grouped(KINDS, lambda k: k == "mixed_train"))
def test_worker_processes_and_threads_1_or_2_workers_give_single_run_bits(kind, clusters):
    cp, ct = clusters
    scs = [variant(kind, None, k) for k in range(4)]
    refs = [run_scenario(sc) for sc in scs]
    threads_before = blas_threads()
    # a worker process lost under load (the nanny restarts it) would leave one: wait for both, rather than
    # count them after the runs (that count was flaky on a loaded machine and proved nothing about the runs)
    cp.wait_for_workers(2, timeout=300)
    for label, client, batch in (("2 processes", cp, 1), ("2 processes, batches of 2", cp, 2),
                                 ("2 threads", ct, 1), ("1 process", cp, 4)):
        got = _run_on(client, scs, batch)
        for k, (r, g) in enumerate(zip(refs, got)):
            assert_same_bits(r, g, f"{kind}: scenario {k} on {label}")
    # the runs in this process's worker threads left its BLAS thread count as it was (a per-thread limit of
    # the process-wide count, restored by whichever thread ended first, left it at 1 for good)
    assert blas_threads() == threads_before


def test_one_blas_thread_holds_for_every_thread_inside_it():
    """:func:`hpcrail._numba.one_blas_thread` in concurrent threads (dask worker threads, realisation
    threads): the BLAS thread count is a setting of the whole process, so a thread whose block ends must not
    restore it while another thread's block still runs.  Forced interleaving (A enters, B tries to enter, A
    leaves, B computes): with a per-block ``threadpool_limits`` B ran on the restored count — on every
    machine, loaded or not."""
    import threading
    import time

    from hpcrail._numba import one_blas_thread

    np.linalg.solve(np.eye(3), np.ones(3))   # BLAS loaded
    before = blas_threads()
    if before < 2:
        pytest.skip("BLAS runs one thread here")
    a_in, a_out = threading.Event(), threading.Event()
    seen = {}

    def first():
        with one_blas_thread():
            a_in.set()
            seen["a"] = blas_threads()
            time.sleep(0.3)                   # B tries to enter meanwhile
        a_out.set()

    def second():
        a_in.wait(10)
        with one_blas_thread():
            a_out.wait(10)                    # A's block has ended
            seen["b"] = blas_threads()

    ts = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(30)
    assert seen == {"a": 1, "b": 1}, f"BLAS threads inside the blocks: {seen} (one block ended, the other lost its limit)"
    assert blas_threads() == before, "the BLAS thread count was not restored after the last block"


def _fixed_step_methods() -> list:
    """The explicit fixed-step methods of the registry (by name).  The implicit ones are not bitwise
    equal partitioned: the blocks' finite-difference Jacobian takes other evaluations (``nfev``
    differs), so Newton's iterates differ in the last bits (tests/test_partition.py bounds them)."""
    from hpcrail.config.integrator import method_names, method_spec

    return [m for m in method_names() if m == method_spec(m).name and not method_spec(m).adaptive
            and not method_spec(m).implicit]


@pytest.mark.parametrize("method", _fixed_step_methods())
def test_partitioned_with_a_fixed_step_equals_monolithic(method):
    """Hidden-vehicle blocks on threads (LTD, the kind with a partition backend) with a fixed step:
    states, forces, envelopes and metrics in the same bits as the monolithic run, except the four
    power integrals, summed per block then across blocks (another order: they agree to rounding)."""
    over = [f"simulation.duration_s={DURATION}", "output.interval_s=0.25", f"integrator.method={method}",
            "integrator.step_s=0.002"]
    f = ROOT / "configs" / "trains" / "train4_blocks.yaml"
    a = run_scenario(load_scenario(f, over + ["partition.backend=off"])[0])
    b = run_scenario(load_scenario(f, over + ["partition.backend=threads"])[0])
    assert "threads:" in b.attrs["partition"] and str(a.status.values) == "completed"
    power = {"traction_work", "resistance_work", "brake_work", "coupler_work", "energy_balance_residual"}
    a, b = comparable(a), comparable(b)
    assert sorted(a.variables) == sorted(b.variables)
    for name in a.variables:
        x, y = np.asarray(a[name].values), np.asarray(b[name].values)
        if name in power:
            np.testing.assert_allclose(y, x, rtol=1e-13, atol=1e-9 * max(1.0, abs(float(a.traction_work))),
                                       err_msg=name)
        elif x.dtype.kind == "f":
            assert x.tobytes() == y.tobytes(), f"{method}: {name} differs partitioned vs monolithic"
        else:
            np.testing.assert_array_equal(x, y, err_msg=name)
