"""Hidden-vehicle partition (Bosso et al. 2024 §2): layouts, exact action/reaction at block ends, and
equivalence of the monolithic model with blocks on threads and MPI ranks (Bosso et al. 2024 Tables 1-2
compared formulations the same way; issue targets: <= 1e-10 relative on states with fixed-step
methods, <= 0.1 % on every metric with adaptive ones)."""

import numpy as np
import pytest
import xarray as xr

from hpcrail.config import ConfigError
from hpcrail.kinds import load_scenario
from hpcrail.kinds.ltd.build import build_ltd
from hpcrail.models.ltd.kernel import ltd_rhs
from hpcrail.partition.layout import automatic_boundaries, layout_from_blocks, rank_blocks, scenario_layout
from hpcrail.partition.ltd import ltd_rhs_serial_ranges, ltd_rhs_threads, partitioned_params
from hpcrail.kinds.ltd.outputs import TRAIN_METRICS

METRICS = [o.name for o in TRAIN_METRICS]
from hpcrail.simulate import run_scenario
from helpers.mpi import hpcrail_cli as _hpcrail, mpi_pair, needs_mpi  # noqa: F401
from helpers.ltd import assert_outputs_bitwise, constant_loco, flat_route, frictionless_wagon, make_scenario, scenario_tree

STATE_VARS = ("speed", "coupler_deflection", "coupler_force", "position", "notch")


def _max_rel(a, b, name):
    x, y = a[name].values, b[name].values
    scale = np.nanmax(np.abs(x))
    return np.nanmax(np.abs(x - y)) / scale if scale > 0 else np.nanmax(np.abs(x - y))


# ---- layouts ------------------------------------------------------------------------------------
def test_paper_layouts(configs_dir):
    """Bosso et al. 2024 §2: train 4 = 3 locomotives + wagons 1, 61, 122, 182 from the tail as boundary bodies
    and 4 blocks of 59 wagons; train 2 = 4 locomotives + both tail wagons, 2 blocks of 49."""
    for name, n, sizes, kinds in (("train4_blocks", 243, [59] * 4, "wagon"), ("train2_blocks", 104, [49] * 2, "wagon")):
        sc, _ = load_scenario(configs_dir / f"trains/{name}.yaml")
        types = sc.vehicle_type_names()
        lay = scenario_layout(sc.partition, len(types), 2)
        assert len(types) == n
        assert [z - a for a, z in lay.blocks] == sizes
        assert all(types[j] == kinds for a, z in lay.blocks for j in range(a, z))
        locos = [j for j, t in enumerate(types) if t == "loco"]
        assert set(locos) <= set(lay.boundary)
        assert n - 1 in lay.boundary  # the tail wagon
    sc, _ = load_scenario(configs_dir / "trains/train4_blocks.yaml")
    tail_numbered = sorted(243 - b for b in scenario_layout(sc.partition, 243, 2).boundary if b not in (0, 1, 122))
    assert tail_numbered == [1, 61, 122, 182]


@pytest.mark.parametrize("n, p", [(243, 2), (243, 4), (100_000, 2), (5, 2), (11, 3)])
def test_automatic_layout_is_balanced_and_covers_the_train(n, p):
    lay = layout_from_blocks(n, p)
    sizes = [z - a for a, z in lay.blocks]
    assert lay.n_blocks == p and max(sizes) - min(sizes) <= 1
    assert len(lay.boundary) == p + 1 and lay.boundary[0] == 0 and lay.boundary[-1] == n - 1
    starts = lay.range_starts()
    assert starts[0] == 0 and starts[-1] == n and np.all(np.diff(starts) > 0)
    assert automatic_boundaries(n, p)[0] == 1


def test_rank_blocks_and_errors():
    assert rank_blocks(4, 2) == [(0, 2), (2, 4)]
    assert rank_blocks(3, 3) == [(0, 1), (1, 2), (2, 3)]
    with pytest.raises(ValueError, match="3 MPI ranks but only 2 blocks"):
        rank_blocks(2, 3)


@pytest.mark.parametrize("overrides, field, words", [
    (["partition.boundary_vehicles=[1, 2, 300]"], "partition.boundary_vehicles", "out of range"),
    (["partition.boundary_vehicles=[1, 62, 2]"], "partition.boundary_vehicles", "strictly increasing"),
    (["partition.blocks=3"], "partition.blocks", "give 4 blocks"),
    (["partition.boundary_vehicles=null", "partition.blocks=200"], "partition.blocks", "need at least 401 vehicles"),
])
def test_bad_partition_names_file_field_value(configs_dir, overrides, field, words):
    with pytest.raises(ConfigError) as ei:
        load_scenario(configs_dir / "trains/train4_blocks.yaml", overrides)
    msgs = [str(i) for i in ei.value.issues]
    assert any(field in m and words in m for m in msgs), msgs


def test_yaml_off_means_backend_off(configs_dir):
    sc, _ = load_scenario(configs_dir / "trains/train4_blocks.yaml", ["partition.backend=off"])
    assert sc.partition.backend == "off"


# ---- one evaluation -----------------------------------------------------------------------------
def _random_state(model, rng, scale_e=0.02):
    p = model.params
    y = model.y0.copy()
    B, N = p.block, p.n_veh
    y[1:B * N:B] = 10.0 + rng.normal(0, 0.3, N)
    y[B:B * N:B] = rng.normal(0, scale_e, N - 1)
    if B == 4:
        y[2:B * N:B] = rng.uniform(0, 1, N)
        y[3:B * N:B] = rng.uniform(0, 1, N)
    y[p.i_notch] = 3.5
    return y


def test_blocked_rhs_equals_monolithic_and_action_equals_reaction(configs_dir):
    """One evaluation on a perturbed state of train 4 (graded, curved route; air brake on): every
    partition gives the monolithic derivative (positions from the block scan agree to rounding), and
    on a frictionless level train the coupler forces cancel in Σ m_j a_j to rounding — the two end
    forces of every block are the forces on the neighbouring boundary vehicles (action = reaction)."""
    sc, _ = load_scenario(configs_dir / "trains/train4.yaml", ["air_brake.enabled=true",
                                                                "vehicle_types.loco.brake.shoe_force_kN=100",
                                                                "vehicle_types.wagon.brake.shoe_force_kN=80",
                                                                "route.start_m=30000"])
    model = build_ltd(sc)
    rng = np.random.default_rng(1)
    y = _random_state(model, rng)
    ref = np.empty_like(y)
    ltd_rhs(0.0, y, model.params, ref)
    for p_blocks in (1, 2, 4, 7):
        lay = layout_from_blocks(model.n_vehicles, p_blocks)
        pp = partitioned_params(model.params, lay)
        for f in (ltd_rhs_serial_ranges, ltd_rhs_threads):
            d = np.full_like(y, np.nan)
            f(0.0, y, pp, d)
            np.testing.assert_allclose(d, ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max())
    # frictionless, level, no traction: internal forces only
    n = 40
    tree = scenario_tree(n - 1, loco=constant_loco(force_kN=0.0), wagon=frictionless_wagon(),
                         connection={"kind": "linear", "stiffness_MN_per_m": 50.0, "damping_kNs_per_m": 300.0,
                                     "slack_mm": 10.0}, route=flat_route())
    m = build_ltd(make_scenario(tree))
    y = _random_state(m, rng)
    B, N = m.params.block, m.params.n_veh
    mass = 1.0 / m.params.inv_mass_eff
    for p_blocks in (3, 5):
        pp = partitioned_params(m.params, layout_from_blocks(N, p_blocks))
        d = np.empty_like(y)
        ltd_rhs_threads(0.0, y, pp, d)
        f_int = mass * d[1:B * N:B]
        assert np.abs(f_int).max() > 1e5  # the couplers are loaded...
        assert abs(f_int.sum()) < 1e-9 * np.abs(f_int).max() * N  # ...and cancel exactly across blocks


def test_jacobian_by_vehicle_ranges_is_the_monolithic_jacobian(configs_dir):
    """The per-block analytic Jacobian of the distributed-state runs (``ltd_jac_range`` per vehicle range, each
    reading the connection ahead and the upstream brake-pipe signal from the state, plus ``ltd_jac_tail``)
    fills the slots of the monolithic ``ltd_jac`` with the same values (air brake on, perturbed state)."""
    from hpcrail.models.ltd.jacobian import ltd_jac, ltd_jac_range, ltd_jac_tail, ltd_jacobian_pattern
    from hpcrail.models.ltd.kernel import schedule_index
    from hpcrail.partition.ltd import range_start_position

    sc, _ = load_scenario(configs_dir / "trains/train4.yaml", ["air_brake.enabled=true", "route.start_m=30000",
                                                                "vehicle_types.wagon.brake.shoe_force_kN=80"])
    model = build_ltd(sc)
    p = model.params
    y = _random_state(model, np.random.default_rng(2))
    rows, _cols, _border = ltd_jacobian_pattern(p, y.size)
    ref = np.full(rows.size, np.nan)
    ltd_jac(0.0, y, p, ref)
    cmd_brake = p.sched_brake[schedule_index(p, 0.0, y)]
    for n_blocks in (2, 5):
        starts = layout_from_blocks(model.n_vehicles, n_blocks).range_starts()
        vals = np.full(rows.size, np.nan)
        for b in range(starts.size - 2, -1, -1):  # any order: each range fills its own slots
            s = range_start_position(y, p, starts, b)
            ltd_jac_range(0.0, y, p, vals, int(starts[b]), int(starts[b + 1]), s, y[p.i_notch], cmd_brake)
        ltd_jac_tail(0.0, y, p, vals)
        assert np.count_nonzero(ref) > 8 * model.n_vehicles
        np.testing.assert_allclose(vals, ref, rtol=1e-13, atol=0.0)


def test_distributed_state_exchange_gives_each_worker_the_monolithic_derivative(configs_dir):
    """Distributed state, one evaluation per worker on a perturbed state of train 4 (air brake on, on the
    climb where positions enter the grade forces): each worker holds only its own states and the global
    ones (every other entry NaN), exchanges (export, then import), and its ranges' derivatives and Jacobian
    slots are bitwise the monolithic ones — for 1, 2 and 3 workers, so the first worker's exported end
    position and a middle worker's exported connection lengths both reproduce the monolithic position chain."""
    from hpcrail.models.ltd.jacobian import ltd_jac, ltd_jacobian_pattern
    from hpcrail.partition.ltd import (spmd_bounds, spmd_eval, spmd_export, spmd_import, spmd_jac_ranges, spmd_slots,
                                       worker_params)

    sc, _ = load_scenario(configs_dir / "trains/train4.yaml", ["air_brake.enabled=true", "route.start_m=30000",
                                                                "vehicle_types.wagon.brake.shoe_force_kN=80"])
    model = build_ltd(sc)
    p = model.params
    y = _random_state(model, np.random.default_rng(3))
    ref = np.empty_like(y)
    ltd_rhs(0.0, y, p, ref)
    rows, _cols, _border = ltd_jacobian_pattern(p, y.size)
    jref = np.full(rows.size, np.nan)
    ltd_jac(0.0, y, p, jref)
    lay = layout_from_blocks(model.n_vehicles, 4)
    bounds = spmd_bounds(p, lay)
    G = p.block * p.n_veh  # the global states (applied notch, work integrals) follow the vehicles' states
    for owner in ([0, 4], [0, 2, 4], [0, 1, 3, 4], [0, 1, 2, 4]):
        owner = np.array(owner, np.int64)
        wps = worker_params(partitioned_params(p, lay), owner)
        slots, tail = spmd_slots(p, lay, owner)
        ys = []
        for w, wp in enumerate(wps):
            lo, hi = bounds[owner[w]], bounds[owner[w + 1]]
            yw = np.full_like(y, np.nan)
            yw[lo:hi] = y[lo:hi]
            yw[G:] = y[G:]
            ys.append(yw)
            spmd_export(yw, wp)
        for w, wp in enumerate(wps):
            lo, hi = bounds[owner[w]], bounds[owner[w + 1]]
            spmd_import(ys[w], wp)
            d = np.full_like(y, np.nan)
            spmd_eval(0.0, ys[w], wp, d)
            assert np.array_equal(d[lo:hi], ref[lo:hi]), (owner, w)
            vals = np.full(rows.size, np.nan)
            spmd_jac_ranges(0.0, ys[w], wp, vals)
            a, z = slots[w]
            assert np.array_equal(vals[a:z], jref[a:z]), (owner, w)
            assert np.array_equal(vals[tail:], jref[tail:]), (owner, w)


# ---- whole runs: threads ------------------------------------------------------------------------
def test_threads_reproduce_monolithic_rk4_train4(configs_dir):
    """Paper layout on threads vs monolithic, RK4 (fixed step): states within 1e-10 relative."""
    over = ["simulation.duration_s=6", "output.interval_s=0.5"]
    a = run_scenario(load_scenario(configs_dir / "trains/train4_blocks.yaml", over + ["partition.backend=off"])[0])
    b = run_scenario(load_scenario(configs_dir / "trains/train4_blocks.yaml", over + ["partition.backend=threads"])[0])
    assert "threads: 4 blocks of 59, 59, 59, 59" in b.attrs["partition"]
    for v in STATE_VARS:
        assert _max_rel(a, b, v) <= 1e-10, v
    for name in METRICS:
        np.testing.assert_allclose(float(b[name]), float(a[name]), rtol=1e-10, err_msg=name)
    assert int(a.nsteps) == int(b.nsteps)


def test_threads_reproduce_monolithic_dopri5_demo_with_air_brake(configs_dir):
    """Adaptive DOPRI5 with the air brake (brake-pipe signal crossing block ends): every metric within
    0.1 % (in practice the step sequences coincide and the results agree to rounding)."""
    over = ["integrator.method=dopri5", "integrator.rtol=1e-6", "integrator.atol=1e-6", "partition.blocks=3",
            "driver.commands.0.brake=0.8", "simulation.duration_s=20"]
    a = run_scenario(load_scenario(configs_dir / "trains/demo.yaml", over + ["partition.backend=off"])[0])
    b = run_scenario(load_scenario(configs_dir / "trains/demo.yaml", over + ["partition.backend=threads"])[0])
    assert float(a.brake_cylinder_pressure.isel(time=-1, vehicle=-1)) > 0  # the signal reached the tail
    for name in METRICS:
        np.testing.assert_allclose(float(b[name]), float(a[name]), rtol=1e-3, err_msg=name)
    for v in STATE_VARS + ("brake_cylinder_pressure",):
        assert _max_rel(a, b, v) <= 1e-8, v


def test_threads_reproduce_monolithic_bdf_demo(configs_dir):
    """An implicit method (variable-order BDF) on blocks: the monolithic run factorises the bordered-band
    Jacobian serially, the partitioned one (distributed state, ``partition.state: auto``) per block with the
    partitioned LU and per-block error norms, so the step sequences agree only to rounding; both are solutions
    to rtol 1e-6 and every metric agrees within 0.1 %."""
    over = ["integrator.method=bdf", "integrator.rtol=1e-6", "integrator.atol=1e-6", "partition.blocks=3",
            "driver.commands.0.brake=0.8", "simulation.duration_s=20"]
    a = run_scenario(load_scenario(configs_dir / "trains/demo.yaml", over + ["partition.backend=off"])[0])
    b = run_scenario(load_scenario(configs_dir / "trains/demo.yaml", over + ["partition.backend=threads"])[0])
    assert str(a.status.values) == str(b.status.values) == "completed"
    assert float(a.max_draft_force) > 1e5
    noise = 1e-6 * float(a.max_draft_force)
    for name in METRICS:
        # a force that is zero in exact arithmetic (no buff in this run) may come out as ~1e-4 N of
        # Newton-tolerance noise: forces are compared to 1e-6 of the largest force (0.1 N here), and the
        # coupler holding such a noise-level maximum is no result
        if name.endswith("_coupler") and float(a[name[:-len("_coupler")]]) <= noise:
            continue
        atol = noise if "force" in name and not name.endswith("_coupler") else 1e-9
        np.testing.assert_allclose(float(b[name]), float(a[name]), rtol=1e-3, atol=atol, err_msg=name)


# ---- whole runs: distributed state (every thread integrates its own blocks, integrators/distributed.py) -
ENERGY = ("traction_work", "resistance_work", "brake_work", "coupler_work", "energy_balance_residual")


def test_distributed_state_rk4_is_the_monolithic_rk4_bitwise(configs_dir):
    """RK4 (fixed step) with distributed state on 1 and 2 threads does the serial method's arithmetic per state,
    and the second worker starts its position chain from the first worker's exported end position, as the
    monolithic kernel chains them: every state sample and every per-coupler envelope is bitwise the monolithic run's,
    on level tangent track and on a climb (where positions enter the grade forces); the power integrals are
    per-block partial sums added in block order (1e-12 relative), bitwise the same on 1 and 2 threads and, on
    level track, in the shared-state partitioned run."""
    train = configs_dir / "trains/train4_blocks.yaml"
    skip = ("wall_time", "compile_time")
    for track in ([], ["route.start_m=30000"]):  # level tangent track; on the 3.5 per mille climb
        over = ["simulation.duration_s=2", "output.interval_s=0.25"] + track
        a = run_scenario(load_scenario(train, over + ["partition.backend=off"])[0])
        part = {k: run_scenario(load_scenario(train, over + ["partition.backend=threads", f"partition.state={st}",
                                                             f"partition.threads={k[-1]}"])[0])
                for k, st in (("dist1", "distributed"), ("dist2", "distributed"), ("shared2", "shared"))}
        assert "; 2 threads" in part["dist2"].attrs["partition"] and "; 1 threads" in part["dist1"].attrs["partition"]
        assert float(a.max_draft_force) > 1e4
        for k in ("dist1", "dist2"):
            b = part[k]
            assert str(b.status.values) == "completed" and int(b.nsteps) == int(a.nsteps) == 1000
            for v in a.data_vars:
                if v in skip or a[v].dtype.kind != "f":
                    continue
                if v in ENERGY:
                    np.testing.assert_allclose(float(b[v]), float(a[v]), rtol=1e-12, atol=1e-6, err_msg=f"{k}: {v}")
                    assert float(b[v]) == float(part["dist2"][v]), f"{k}: {v}"
                    if not track:  # the shared-state blocks scan positions differently (1e-12 on a climb)
                        assert float(b[v]) == float(part["shared2"][v]), f"{k}: {v}"
                else:
                    assert np.array_equal(a[v].values, b[v].values, equal_nan=True), f"{track} {k}: {v}"


def test_distributed_state_bdf2_agrees_with_monolithic_bdf2_air_brake(configs_dir):
    """BDF2 (adaptive; Newton on the per-block analytic Jacobian with the partitioned LU) with distributed
    state on 2 threads, air brake signal crossing the 3 blocks: the per-coupler draft and buff force
    envelopes agree with the monolithic BDF2 run within 0.5 % of the largest force (the method's accuracy:
    the error norms are per-block sums, so the step sequences agree only to rounding)."""
    over = ["integrator.method=bdf2", "partition.blocks=3", "driver.commands.0.brake=0.8",
            "simulation.duration_s=20", "output.interval_s=1"]
    a = run_scenario(load_scenario(configs_dir / "trains/demo.yaml", over + ["partition.backend=off"])[0])
    b = run_scenario(load_scenario(configs_dir / "trains/demo.yaml", over + [
        "partition.backend=threads", "partition.state=distributed", "partition.threads=2"])[0])
    assert "; 2 threads" in b.attrs["partition"]
    assert str(a.status.values) == str(b.status.values) == "completed"
    assert float(a.brake_cylinder_pressure.isel(time=-1, vehicle=-1)) > 0  # the signal reached the tail
    fmax = max(float(a.max_draft_force), float(a.max_buff_force))
    assert fmax > 1e5
    for v in ("coupler_max_draft_force", "coupler_max_buff_force"):
        err = np.max(np.abs(a[v].values - b[v].values))
        assert err < 5e-3 * fmax, (v, err / fmax)
    assert abs(int(a.nsteps) - int(b.nsteps)) <= 0.05 * int(a.nsteps)


def test_distributed_state_needs_a_method_that_runs_on_blocks(configs_dir):
    """The catalogue says which methods run on blocks; a method that does not (Radau IIA: complex LU) is a
    config error naming the field and the methods that do."""
    from hpcrail.config.integrator import METHODS, block_methods

    no_blocks = [m for m, s in METHODS.items() if not s.blocks and not s.external]
    assert no_blocks == ["radau5"]
    with pytest.raises(ConfigError) as ei:
        load_scenario(configs_dir / "trains/train4_blocks.yaml",
                      ["partition.state=distributed", "integrator.method=radau5"])
    msg = str(ei.value)
    assert "partition.state" in msg and "radau5" in msg and all(m in msg for m in block_methods())


def test_barrier_gives_up_on_a_lost_worker():
    """A thread waiting for a worker that never arrives leaves the barrier after the wait limit with the abort
    flag set; a worker that fails sets the flag so that the others stop waiting, and the error is raised."""
    import threading
    import time
    from types import SimpleNamespace

    from hpcrail.integrators.collectives import BAR_ABORT, barrier, new_barrier, run_workers

    barrier(new_barrier(timeout_s=0.01), 2, 10)   # compiled (or loaded) before the clock starts: under load a
    bar = new_barrier(timeout_s=0.2)              # cold compile alone could take longer than the bound below
    t0 = time.perf_counter()
    barrier(bar, 2, 10)  # the second worker never comes
    assert bar[BAR_ABORT] != 0 and time.perf_counter() - t0 < 30.0

    bar = new_barrier(timeout_s=600.0)
    ws = [dict(params=SimpleNamespace(bar=bar), k=k) for k in range(2)]
    waited = threading.Event()

    def work(d):
        if d["k"] == 1:
            raise ValueError("worker 1 failed")
        barrier(d["params"].bar, 2, 10)
        waited.set()

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="worker 1 failed"):
        run_workers(work, ws, bar)
    assert waited.is_set() and time.perf_counter() - t0 < 30.0


def test_threads_backend_from_the_cli_loads_cached_kernels(repo_root, tmp_path):
    """The threads kernels compiled above are loaded from numba's disk cache by a new process (the
    generated parallel functions must be cacheable) and ``hpcrail run --partition threads`` works."""
    r = _hpcrail(["run", str(repo_root / "configs/trains/train2_blocks.yaml"), "-q", "--set", "simulation.duration_s=1",
                  "--partition", "threads", "-o", str(tmp_path / "t.zarr")], repo_root)
    assert "wrote" in r.stdout
    ds = xr.open_zarr(tmp_path / "t.zarr")
    assert ds.attrs["partition"].startswith("threads: 2 blocks of 49, 49") and str(ds.status.values) == "completed"


def test_auto_backend_picks_serial_below_break_even(configs_dir):
    """One chooser (partition/backend.py): serial below the break-even length or on one thread, threads above
    it; the state is distributed where the kind offers it and the method runs on blocks (the catalogue)."""
    from hpcrail.config.integrator import METHODS
    from hpcrail.kinds.ltd.problem import CAPABILITIES as LTD
    from hpcrail.kinds.mixed_train.run import CAPABILITIES as MIXED
    from hpcrail.partition.backend import choose

    sc, _ = load_scenario(configs_dir / "trains/train4.yaml")
    part = sc.partition
    assert part.backend == "auto"
    assert choose(LTD, part, 243, "bdf2", threads=2).name == "off"
    assert choose(LTD, part, part.auto_min_vehicles, "bdf2", threads=2).name == "threads"
    assert choose(LTD, part, 100_000, "bdf2", threads=1).name == "off"
    for name, spec in METHODS.items():
        b = choose(LTD, part, 100_000, name, threads=2)
        assert b.state == ("distributed" if spec.blocks else "shared"), name
        assert choose(MIXED, part, 100_000, name, threads=2).state == "shared"


# ---- whole runs: MPI ----------------------------------------------------------------------------


@pytest.mark.mpi
@needs_mpi
@pytest.mark.parametrize("config, over, tol_states, tol_metrics", [
    ("train4_blocks", ["simulation.duration_s=6", "output.interval_s=0.5"], 1e-10, 1e-10),
    ("train2_blocks", ["simulation.duration_s=6", "output.interval_s=0.5", "integrator.method=dopri5",
                       "integrator.rtol=1e-7", "integrator.atol=1e-7", "partition.state=shared"], None, 1e-3),
])
def test_mpi_two_ranks_reproduce_serial(repo_root, tmp_path, config, over, tol_states, tol_metrics):
    """``mpiexec -n 2 hpcrail run ... --partition mpi``: rank 0 writes the dataset of a serial run (RK4 with
    distributed state, ``state: auto``; DOPRI5 with shared state: every rank integrates the whole state)."""
    a, b = mpi_pair(repo_root / "configs" / "trains" / f"{config}.yaml", over, tmp_path, repo_root)
    assert "mpi:" in b.attrs["partition"] and "2 MPI ranks" in b.attrs["partition"]
    assert set(a.data_vars) == set(b.data_vars) and dict(a.sizes) == dict(b.sizes)
    for name in METRICS:
        np.testing.assert_allclose(float(b[name]), float(a[name]), rtol=tol_metrics, err_msg=name)
    if tol_states is not None:
        for env in ("coupler_max_draft_force", "coupler_max_buff_force"):
            np.testing.assert_allclose(b[env].values, a[env].values, rtol=tol_metrics, atol=1e-6)
        for v in STATE_VARS:
            assert _max_rel(a, b, v) <= tol_states, v
        assert int(a.nsteps) == int(b.nsteps)


@pytest.mark.mpi
@needs_mpi
@pytest.mark.parametrize("config, over", [
    ("train4_blocks", ["simulation.duration_s=2", "output.interval_s=0.25"]),
    ("demo", ["integrator.method=bdf2", "partition.blocks=3", "driver.commands.0.brake=0.8",
              "simulation.duration_s=10", "output.interval_s=1"]),
])
def test_mpi_distributed_state_is_the_threads_distributed_state(repo_root, tmp_path, config, over):
    """``mpiexec -n 2 ... --partition mpi`` with ``partition.state: distributed``: each rank integrates its own
    blocks with the method's kernel, the reductions and the neighbour exchange go through MPI_Allgatherv, and
    nothing gathers the state per step.  Every reduction adds per-block partial sums in block order, so the
    run is bitwise the distributed-state run on 2 threads (RK4 on train 4; BDF2 with the partitioned LU and the
    air brake signal crossing 3 blocks on the demo train) — every output, step counts included."""
    a, b = mpi_pair(repo_root / "configs" / "trains" / f"{config}.yaml",
                    over + ["partition.state=distributed", "partition.threads=2"], tmp_path, repo_root, against="threads")
    assert "2 MPI ranks" in b.attrs["partition"] and b.attrs["partition_state"] == "distributed"
    assert a.attrs["partition_state"] == "distributed"
    assert str(b.status.values) == "completed" and int(a.nsteps) == int(b.nsteps)
    assert_outputs_bitwise(a, b)


def test_partitioned_backends_refuse_connections_they_do_not_evaluate(configs_dir):
    """Noninertial couplers (Massa et al. 2012) need positions across blocks: backend threads/mpi is a config
    error naming the field and the kinds, and ``auto`` stays monolithic for such a train."""
    from hpcrail.kinds.ltd.couplers import unpartitionable_laws
    from hpcrail.kinds.ltd.problem import choose_backend

    train = configs_dir / "trains" / "noninertial_curve_100.yaml"
    with pytest.raises(ConfigError) as ei:
        load_scenario(train, ["partition.backend=threads"])
    msgs = [str(i) for i in ei.value.issues]
    assert any("partition.backend" in m and "noninertial" in m and "use backend off" in m for m in msgs), msgs
    sc, _ = load_scenario(train, ["partition.auto_min_vehicles=2"])
    assert unpartitionable_laws(sc) == ["noninertial"]
    assert choose_backend(sc, threads=2) == "off"
