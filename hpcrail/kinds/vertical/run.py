"""Running a ``vertical`` scenario: solver dispatch, run, outputs as plain arrays, and
:func:`run_realisations` (one compiled model over many track-irregularity seeds).

Solvers (``integrator.method``):

* ``recurrence`` — Yu et al. 2023 eq (12), implicit Euler with (I − Δt A) factorised once (first order);
* ``exact`` — exact discretisation of the linear model by the matrix exponential (``hold: foh`` or
  ``zoh``; linear models only);
* any registered integrator (``rk4``, ``dopri5``/``ode45`` …) on the state-space ODE form, in which
  the massless damper nodes are first-order states.  The index-1 DAE form with a singular diagonal
  mass matrix (:func:`hpcrail.models.vertical.build.dae_form` +
  :func:`hpcrail.models.vertical.kernel.vertical_dae_rhs`) is the hook for implicit DAE methods.

The ride-comfort metrics are computed from the run's own samples (``output.interval_s``), so a sweep's
coarser series grid is a selection of those samples (:func:`~hpcrail.results.sampling.sample_indices`),
never a resampled run.
"""
from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import os

import numpy as np
import xarray as xr

from hpcrail.integrators import Problem, integrate
from hpcrail.integrators.contract import Solution
from hpcrail.integrators.statespace import discretise, implicit_euler_matrix, run_lti, run_recurrence
from hpcrail.kinds.vertical.build import build_profile, build_vertical
from hpcrail.kinds.vertical.outputs import VERTICAL_METRICS
from hpcrail.kinds.vertical.schema import VerticalScenario
from hpcrail.models.vertical.assembly import SERIES_DAMPER
from hpcrail.models.vertical.build import VerticalModel, initial_accumulator, with_profile
from hpcrail.models.vertical.kernel import vertical_inputs, vertical_observe, vertical_outputs, vertical_rhs
from hpcrail.results.outputs import RunInfo, RunResult
from hpcrail.results.ride_comfort import ride_metrics
from hpcrail.results.sampling import sample_times, select_samples


@dataclasses.dataclass
class SolverSetup:
    """Matrices of the fixed-step state-space solvers (computed once per model and step)."""

    method: str
    h: float
    mats: tuple


def solver_setup(model: VerticalModel, it) -> SolverSetup | None:
    """Discretise (``exact``) or factorise (``recurrence``) once; ``None`` for registry integrators."""
    if it.method == "exact":
        return SolverSetup("exact", it.step_s, discretise(model.ss.A, model.ss.B_w, it.step_s, it.hold))
    if it.method == "recurrence":
        return SolverSetup("recurrence", it.step_s, (implicit_euler_matrix(model.ss.A, it.step_s),))
    return None


def solve(model: VerticalModel, it, duration_s: float, interval_s: float, progress=None, params=None,
          setup: SolverSetup | None = None, n_chunks: int = 50) -> Solution:
    """Integrate the model with the solver of the ``integrator`` block ``it``.

    Returns a :class:`~hpcrail.integrators.contract.Solution` of dynamic states sampled every
    ``interval_s``.  ``params`` overrides the model's parameters (another track realisation);
    ``setup`` reuses matrices from :func:`solver_setup`.  Raises ``ValueError`` if a fixed-step
    solver's step does not divide ``duration_s`` and ``interval_s``.
    """
    p = params if params is not None else model.params
    acc0 = initial_accumulator(p)
    if it.method in ("exact", "recurrence"):
        setup = setup or solver_setup(model, it)
        h = setup.h
        nsteps = int(round(duration_s / h))
        stride = int(round(interval_s / h))
        for name, val, k in (("duration_s", duration_s, nsteps), ("interval_s", interval_s, stride)):
            if k < 1 or abs(val - k * h) > 1e-9 * max(1.0, val):
                raise ValueError(f"{name} = {val} s is not a whole multiple of the step {h} s")
        if setup.method == "exact":
            Phi, G0, G1 = setup.mats
            return run_lti(Phi, G0, G1, vertical_inputs, vertical_observe, p, model.y0, h=h, nsteps=nsteps,
                           stride=stride, acc0=acc0, progress=progress, n_chunks=n_chunks,
                           method_name=f"exact ({it.hold})")
        return run_recurrence(setup.mats[0], vertical_rhs, vertical_observe, p, model.y0, h=h, nsteps=nsteps,
                              stride=stride, acc0=acc0, progress=progress, n_chunks=n_chunks)
    prob = Problem(vertical_rhs, vertical_observe, p, model.y0, acc0=acc0)
    t_out = sample_times(0.0, duration_s, interval_s)
    return integrate(prob, it.method, t_out, duration_s, progress=progress, n_chunks=n_chunks,
                     **it.kwargs())


def run(sc: VerticalScenario, *, progress=None, t_out=None) -> RunResult:
    """Simulate a vertical scenario (failures in the result's status).  The series are sampled every
    ``output.interval_s``; ``t_out`` [s] selects a subset of those samples (a sweep's series grid;
    ``ValueError`` if a time is not one of them)."""
    model = build_vertical(sc)
    sol = solve(model, sc.integrator, sc.simulation.duration_s, sc.output.interval_s, progress=progress)
    res = vertical_result(sc, model, sol)
    if t_out is not None:
        series = ("bounce", "pitch", "bounce_velocity", "bounce_acceleration", "pitch_acceleration",
                  "floor_displacement", "floor_acceleration", "element_force", "damper_stroke", "wheel_load",
                  "rail_irregularity")
        select_samples(res, t_out, series, f"vertical scenario {sc.name!r}")
    return res


def vertical_result(sc, model: VerticalModel, sol: Solution) -> RunResult:
    """Outputs of one vertical run from the sampled dynamic states ``sol.y`` (float64[k, N]) and the
    every-step envelopes ``sol.acc``."""
    asm, p = model.asm, model.params
    t = sol.t
    Y = np.ascontiguousarray(sol.y)
    k = t.size
    sv, ss, sq = asm.slices()
    E, W, F = len(asm.elements), asm.wheel_x.size, len(asm.floor_names)
    B = len(asm.body_names)
    so = sampled_outputs(model, t, Y)
    body_acc, el_force, wheel, rail, fp_acc = (so[key] for key in ("body_acc", "element_force", "wheel_load", "rail",
                                                                    "floor_acc"))
    q = Y[:, sq]
    v = Y[:, sv]

    def per_body(arr, pitch: bool):
        out = np.full((k, B), np.nan)
        idx = asm.body_pitch if pitch else asm.body_bounce
        for b, i in enumerate(idx):
            if i >= 0:
                out[:, b] = arr[:, i]
        return out

    fp_disp = np.zeros((k, F))
    for f, terms in enumerate(asm.floor_terms):
        for i, c in terms:
            fp_disp[:, f] += c * q[:, i]
    stroke = np.full((k, E), np.nan)
    for e, el in enumerate(asm.elements):
        if el.kind == SERIES_DAMPER:
            stroke[:, e] = Y[:, ss.start + el.node]
    values = {"bounce": per_body(q, False), "pitch": per_body(q, True), "bounce_velocity": per_body(v, False),
              "bounce_acceleration": per_body(body_acc, False), "pitch_acceleration": per_body(body_acc, True),
              "floor_displacement": fp_disp, "floor_acceleration": fp_acc, "element_force": el_force,
              "damper_stroke": stroke, "wheel_load": wheel, "rail_irregularity": rail}
    # static state
    static_b = np.full(B, np.nan)
    for b, i in enumerate(asm.body_bounce):
        static_b[b] = model.x_static[sq][i]
    values["static_bounce"] = static_b
    values["element_static_force"] = p.el_F0.copy()
    values["wheel_static_load"] = static_wheel_loads(model)
    # envelopes over every step
    acc = sol.acc
    values["element_max_force"] = np.array(acc[p.o_elmax:p.o_elmax + E], float)
    values["element_min_force"] = np.array(acc[p.o_elmin:p.o_elmin + E], float)
    values["wheel_max_load"] = np.array(acc[p.o_wmax:p.o_wmax + W], float)
    values["wheel_min_load"] = np.array(acc[p.o_wmin:p.o_wmin + W], float)
    # ride comfort per floor point (from the sampled floor accelerations) and scalar metrics
    dt = float(t[1] - t[0]) if k > 1 else float("nan")
    floor_vals, metrics = run_metrics(sc, model, sol, fp_acc)
    values.update({name: np.asarray(arr, float) for name, arr in floor_vals.items()})
    values.update(metrics)
    warnings = list(model.notes)
    if W and np.isfinite(metrics["min_wheel_load"]) and metrics["min_wheel_load"] < 0:
        warnings.append(f"a wheel load fell below zero ({metrics['min_wheel_load'] / 1e3:.3g} kN): the wheel would "
                        "lose contact (the linear contact is bilateral; use law: hertz)")
    if dt > 0.005 + 1e-12:
        warnings.append(f"output.interval_s = {dt:g} s: the comfort weightings are truncated at the Nyquist "
                        f"frequency {0.5 / dt:.0f} Hz (EN 12299 band limit 100 Hz needs ≤ 5 ms)")
    if sc.simulation.duration_s < sc.output.comfort_window_s:
        warnings.append("the run is shorter than one comfort window: wb_p95 and n_mv_z are NaN")
    irr = sc.track.irregularity
    attrs = {"speed_mps": float(p.speed),
             "track_irregularity": irr.kind if irr.kind != "psd" else f"psd {irr.spectrum} seed {irr.seed} ({irr.method})",
             "state_names": ",".join(asm.state_names()),
             "metrics_title": "ride comfort and wheel/rail force metrics"}
    return RunResult(run=RunInfo.from_solution(sol), values=values, time=t, attrs=attrs, warnings=warnings)


def sampled_outputs(model: VerticalModel, t: np.ndarray, Y: np.ndarray, params=None) -> dict:
    """Accelerations, forces and rail inputs at the samples: dict of float64 arrays ``body_acc``
    [k, m], ``element_force`` [k, E], ``wheel_load`` [k, W], ``rail`` [k, W], ``floor_acc`` [k, F]."""
    asm = model.asm
    p = params if params is not None else model.params
    k = t.size
    E, W, F = len(asm.elements), asm.wheel_x.size, len(asm.floor_names)
    out = {"body_acc": np.full((k, asm.m), np.nan), "element_force": np.full((k, E), np.nan),
           "wheel_load": np.full((k, W), np.nan), "rail": np.full((k, W), np.nan),
           "floor_acc": np.full((k, F), np.nan)}
    vertical_outputs(np.ascontiguousarray(t, dtype=float), np.ascontiguousarray(Y), p, out["body_acc"],
                     out["element_force"], out["wheel_load"], out["rail"], out["floor_acc"])
    return out


def static_wheel_loads(model: VerticalModel, params=None) -> np.ndarray:
    """Static wheel/rail force Q0 under each wheel [N] (float64[W])."""
    p = params if params is not None else model.params
    Q0 = np.zeros(model.asm.wheel_x.size)
    for e, el in enumerate(model.asm.elements):
        if el.wheel >= 0 and el.rail_sign < 0:
            Q0[el.wheel] += p.el_F0[e]
    return Q0


def run_metrics(sc, model: VerticalModel, sol: Solution, floor_acc: np.ndarray | None = None, params=None
                ) -> tuple[dict, dict]:
    """Ride comfort per floor point and the scalar metrics of one run
    (:data:`~hpcrail.kinds.vertical.outputs.VERTICAL_METRICS`).

    Returns ``(floor_values, metrics)``: per floor point float64[F] arrays keyed as
    :data:`~hpcrail.kinds.vertical.outputs.FLOOR_METRICS`, and the scalar metrics.  ``floor_acc`` float64[k, F] (computed from
    ``sol`` if not given).
    """
    asm = model.asm
    p = params if params is not None else model.params
    t = sol.t
    k = t.size
    E, W, F = len(asm.elements), asm.wheel_x.size, len(asm.floor_names)
    if floor_acc is None:
        floor_acc = sampled_outputs(model, t, sol.y, p)["floor_acc"]
    acc = sol.acc
    dt = float(t[1] - t[0]) if k > 1 else float("nan")
    ok = sol.status.success and k > 8 and np.all(np.isfinite(floor_acc))
    if ok:
        rm = ride_metrics(floor_acc.T, dt, sc.output.comfort_window_s)
    else:
        rm = {key: np.full(F, np.nan) for key in ("wz", "wb_rms", "wb_p95", "n_mv_z", "rms", "peak")}
    floor_vals = {"sperling_wz": rm["wz"], "wb_rms": rm["wb_rms"], "wb_p95": rm["wb_p95"], "n_mv_z": rm["n_mv_z"],
                  "rms_acceleration": rm["rms"], "max_abs_acceleration": np.array(acc[:F], float)}

    def nanmax(a):
        a = np.asarray(a, float)
        return float(np.nanmax(a)) if a.size and np.any(np.isfinite(a)) else float("nan")

    Q0 = static_wheel_loads(model, p)
    F0 = p.el_F0
    wmin = acc[p.o_wmin:p.o_wmin + W]
    with np.errstate(invalid="ignore", divide="ignore"):
        unload = np.where(Q0 > 0, (Q0 - wmin) / Q0, np.nan)
    dF = np.maximum(np.abs(acc[p.o_elmax:p.o_elmax + E] - F0), np.abs(acc[p.o_elmin:p.o_elmin + E] - F0))
    metrics = {"wz_max": nanmax(rm["wz"]), "wb_rms_max": nanmax(rm["wb_rms"]), "n_mv_z_max": nanmax(rm["n_mv_z"]),
               "max_floor_acceleration": nanmax(acc[:F]), "max_wheel_load": nanmax(acc[p.o_wmax:p.o_wmax + W]),
               "min_wheel_load": -nanmax(-wmin) if W else float("nan"),
               "max_wheel_unloading_ratio": nanmax(unload), "max_element_force_change": nanmax(dF)}
    return floor_vals, metrics


def _realisation_results(sc: VerticalScenario, seeds: list, threads: int, keep_series: bool) -> list:
    """Metrics of every seed (one model and discretisation, ``threads`` threads); list of dicts."""
    model = build_vertical(sc)
    setup = solver_setup(model, sc.integrator)

    def one(seed):
        sc_k = sc.model_copy(update={"track": sc.track.model_copy(update={
            "irregularity": sc.track.irregularity.model_copy(update={"seed": seed})})})
        prof = build_profile(sc_k, model.asm.wheel_x)
        p = with_profile(model, prof)
        sol = solve(model, sc.integrator, sc.simulation.duration_s, sc.output.interval_s, params=p, setup=setup,
                    n_chunks=1)
        fa = sampled_outputs(model, sol.t, sol.y, p)["floor_acc"]
        _, metrics = run_metrics(sc_k, model, sol, fa, p)
        out = dict(metrics)
        out["status"] = sol.status.name.lower()
        out["wall_time"] = sol.wall_time
        if keep_series:
            out["floor_acceleration"] = fa
            out["time"] = sol.t
        return out

    if threads <= 1:
        return [one(s) for s in seeds]
    with cf.ThreadPoolExecutor(threads) as ex:
        return list(ex.map(one, seeds))


def _realisation_chunk(sc_json: str, seeds: list, keep_series: bool) -> list:
    """Worker-process entry of :func:`run_realisations` (the scenario travels as JSON)."""
    return _realisation_results(VerticalScenario.model_validate_json(sc_json), seeds, 1, keep_series)


def run_realisations(sc: VerticalScenario, seeds, threads: int | None = None, keep_series: bool = False,
                     processes: int = 0) -> xr.Dataset:
    """Run ``sc`` over one track realisation per seed (``track.irregularity.kind: psd``) with one
    compiled model and discretisation.

    ``threads``: threads in this process (default: all cores); the numba kernels release the GIL,
    the synthesis and the comfort FFTs (about a third of the time) do not.  ``processes`` > 0: that
    many worker processes instead, each running a contiguous chunk of the seeds (no GIL limit; each
    worker loads the compiled kernels from the numba cache once).

    Returns a dataset with dimension ``realisation`` (the seeds) holding the scalar ride metrics of
    :data:`~hpcrail.kinds.vertical.outputs.VERTICAL_METRICS`, ``status`` and ``wall_time`` per realisation
    (and ``floor_acceleration`` (realisation, time, floor_point) if ``keep_series``).  Each
    realisation equals a single run of ``sc`` with ``track.irregularity.seed`` set to its seed.

    Raises ``ValueError`` if the scenario has no PSD irregularity.
    """
    if sc.track.irregularity.kind != "psd":
        raise ValueError("run_realisations needs track.irregularity.kind: psd")
    seeds = [int(s) for s in seeds]
    if processes and processes > 0:
        import multiprocessing as mp

        chunks = [[int(x) for x in c] for c in np.array_split(np.array(seeds, dtype=np.int64), processes) if c.size]
        with cf.ProcessPoolExecutor(len(chunks), mp_context=mp.get_context("spawn")) as ex:
            parts = ex.map(_realisation_chunk, [sc.model_dump_json()] * len(chunks), chunks,
                           [keep_series] * len(chunks))
            results = [r for part in parts for r in part]
    else:
        results = _realisation_results(sc, seeds, threads or os.cpu_count() or 1, keep_series)
    model = build_vertical(sc) if keep_series else None
    data = {}
    for o in VERTICAL_METRICS:
        data[o.name] = ("realisation", np.array([r[o.name] for r in results]), o.attrs())
    data["status"] = ("realisation", np.array([r["status"] for r in results]), {"long_name": "integration status"})
    data["wall_time"] = ("realisation", np.array([r["wall_time"] for r in results]),
                         {"units": "s", "long_name": "wall-clock time of the integration"})
    coords = {"realisation": ("realisation", np.array(seeds), {"long_name": "track irregularity seed"})}
    if keep_series:
        coords["time"] = ("time", results[0]["time"], {"units": "s", "long_name": "simulated time"})
        coords["floor_point"] = ("floor_point", np.asarray(model.asm.floor_names, dtype=str),
                                 {"long_name": "car-body floor point"})
        data["floor_acceleration"] = (("realisation", "time", "floor_point"),
                                      np.stack([r["floor_acceleration"] for r in results]),
                                      {"units": "m s-2", "long_name": "vertical floor acceleration"})
    return xr.Dataset(data, coords=coords, attrs={"scenario_name": sc.name, "model": "vertical"})
