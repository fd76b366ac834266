"""Running a mixed-train scenario: one integrator over the LTD states of the consist and the detailed vehicles'
states (:mod:`hpcrail.models.mixed`), the LTD part monolithic or in hidden-vehicle blocks on threads; outputs
of the consist (every-step envelopes and metrics) and of each detailed vehicle (the ``railway_vehicle``
kind's outputs computed with the consist's forces, and its couplers).
Source: Bosso et al. 2024 (paper 000) §2 and Figure 1; Yu et al. 2022 (paper 004); EN 14363:2016 §7.
"""
from __future__ import annotations

import dataclasses

import numba
import numpy as np

from hpcrail.integrators import Problem, integrate
from hpcrail.kinds.ltd.outputs import coupler_envelope_values, train_metrics
from hpcrail.kinds.ltd.result import vehicle_positions
from hpcrail.kinds.mixed_train.build import MixedModel, build_mixed
from hpcrail.kinds.mixed_train.outputs import CONSIST_NAMES, SERIES_NAMES
from hpcrail.kinds.mixed_train.schema import MixedTrainScenario
from hpcrail.kinds.railway_vehicle.run import railway_vehicle_result
from hpcrail.models.couplers.envelope import ACC_OFFROUTE, ACC_T_BUFF, ACC_T_DRAFT, ACC_VMAX, coupler_envelopes
from hpcrail.models.mixed.kernel import (
    CD_F_FRONT, CD_F_REAR, CD_FY_FRONT, CD_FY_REAR, CD_ALPHA_FRONT, CD_ALPHA_REAR, N_CD, mixed_observe, mixed_outputs,
    mixed_rhs,
)
from hpcrail.models.vehicle.kernel import diag_size
from hpcrail.partition.backend import Capabilities
from hpcrail.results.outputs import RunInfo, RunResult
from hpcrail.results.sampling import sample_indices, sample_times, select_samples


#: what the mixed train's run path offers: hidden-vehicle blocks on threads with shared state (the wagon's and
#: the coupling's states are not split into blocks; MPI ranks and distributed state are not built)
CAPABILITIES = Capabilities(threads=True)


def backend_of(sc: MixedTrainScenario, n_threads: int | None = None) -> str:
    """``off`` or ``threads`` (:func:`hpcrail.partition.backend.choose`; ``auto``: threads when more than one
    thread is available and the consist has at least ``partition.auto_min_vehicles`` vehicles)."""
    from hpcrail.partition.backend import choose

    return choose(CAPABILITIES, sc.partition, len(sc.vehicle_type_names()), sc.integrator.method,
                  threads=n_threads).name


def layout_of(sc: MixedTrainScenario, n_blocks: int):
    """Hidden-vehicle blocks whose boundary vehicles are the head, the tail, every detailed vehicle and the
    user's ``partition.boundary_vehicles`` (or an even split into ``partition.blocks``/``n_blocks``)."""
    from hpcrail.partition.layout import automatic_boundaries, layout_from_boundaries

    n = len(sc.vehicle_type_names())
    if sc.partition.boundary_vehicles is not None:
        bnd = set(sc.partition.boundary_vehicles)
    else:
        p = sc.partition.blocks or n_blocks
        p = max(1, min(p, (n - 1) // 2))
        bnd = set(automatic_boundaries(n, p))
    bnd |= {1, n} | {d.position for d in sc.detailed}
    return layout_from_boundaries(n, sorted(bnd))


def problem(sc: MixedTrainScenario, model: MixedModel, backend: str = "off"):
    """``(Problem, layout or None)`` of a built mixed train."""
    P = model.params
    if backend == "threads":
        from hpcrail.partition.layout import thread_count
        from hpcrail.partition.ltd import partitioned_params
        from hpcrail.partition.mixed import MixedThreadParams, mixed_observe_threads, mixed_rhs_threads

        lay = layout_of(sc, thread_count(sc.partition.threads))
        TP = MixedThreadParams(mixed=P, part=partitioned_params(P.ltd, lay))
        return Problem(mixed_rhs_threads, mixed_observe_threads, TP, model.y0, acc0=model.acc0,
                       atol_scale=model.atol_scale), lay
    # the per-sample outputs kernel compiles while a first run's compile helper compiles the integrator
    out_types = tuple(numba.typeof(a) for a in (np.zeros(1), np.zeros((1, 1)), P, np.zeros((1, 1, 1)),
                                               np.zeros((1, 1, 1)), np.zeros((1, 1))))
    return Problem(mixed_rhs, mixed_observe, P, model.y0, acc0=model.acc0, atol_scale=model.atol_scale,
                   precompile=((mixed_outputs, out_types),)), None


def solve(sc: MixedTrainScenario, model: MixedModel, progress=None, backend: str | None = None):
    """Integrate a built mixed train, samples every ``output.interval_s``; returns ``(solution, layout)``."""
    backend = backend or backend_of(sc)
    prob, lay = problem(sc, model, backend)
    t_out = sample_times(0.0, sc.simulation.duration_s, sc.output.interval_s)
    before = numba.get_num_threads()
    if backend == "threads":
        from hpcrail.partition.layout import thread_count

        numba.set_num_threads(thread_count(sc.partition.threads))
    try:
        sol = integrate(prob, sc.integrator.method, t_out, sc.simulation.duration_s, progress=progress,
                        **sc.integrator.kwargs())
    finally:
        numba.set_num_threads(before)
    return sol, lay


def run(sc: MixedTrainScenario, *, progress=None, t_out=None, backend: str | None = None) -> RunResult:
    """Simulate a mixed train (failures in the result's status).  ``t_out`` [s]: a subset of the run's samples
    for the series (a sweep's grid; ValueError if a time is not one of them); ``backend``: ``off`` or
    ``threads`` (default: from ``partition``)."""
    model = build_mixed(sc)
    sol, lay = solve(sc, model, progress=progress, backend=backend)
    res = mixed_result(sc, model, sol)
    if lay is not None:
        res.attrs["partition"] = f"threads: {lay.describe()}"
    res.attrs["partition_state"] = "shared" if lay is not None else "serial"
    rows = slice(None)
    if t_out is not None:
        rows = sample_indices(sol.t, t_out, f"mixed-train scenario {sc.name!r}")
        select_samples(res, t_out, [n for n in SERIES_NAMES if n not in CONSIST_NAMES],
                       f"mixed-train scenario {sc.name!r}")
    # the consist's series only at the samples kept (a sweep's coarser grid: never the whole fine grid)
    res.values.update(consist_series(model, sol.t[rows], sol.y[rows]))
    return res


def detailed_records(model: MixedModel, sol) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample coupler records ``C`` float64[k, D, N_CD] and vehicle outputs ``Dg`` float64[k, D, n_diag] of
    the detailed vehicles, evaluated with the consist's forces (NaN rows after a failure)."""
    P = model.params
    Y = np.ascontiguousarray(sol.y)
    k = Y.shape[0]
    nd = max(diag_size(vp) for vp in P.vehs)
    C = np.full((k, len(P.vehs), N_CD), np.nan)
    Dg = np.full((k, len(P.vehs), nd), np.nan)
    dY = np.full_like(Y, np.nan)
    mixed_outputs(sol.t, Y, P, C, Dg, dY)
    return C, Dg


def consist_series(model: MixedModel, t: np.ndarray, Y: np.ndarray) -> dict:
    """The consist's series at the samples: ``coupler_force`` and ``coupler_deflection`` float64[k, N-1] of every
    connection, from the LTD states (the first ``model.n_ltd`` columns of
    ``Y`` float64[k, n]) by the ``ltd`` kind's output kernel — the same connection laws the mixed right-hand side
    evaluates, so the force next to a detailed vehicle is the one its car body feels (NaN rows after a failure)."""
    from hpcrail.models.ltd.kernels import ltd_kernels
    from hpcrail.models.ltd.kernel import N_REC, REC_COUPLER_FORCE, REC_DEFLECTION

    p = model.ltd.params
    N = p.n_veh
    k = t.size
    force = np.full((k, N - 1), np.nan)
    deflection = np.full((k, N - 1), np.nan)
    out = ltd_kernels(p).outputs
    step = 512                           # blocks of samples: the kernel's full record stays small
    for a in range(0, k, step):
        b = min(k, a + step)
        rec = np.full((b - a, N_REC, N), np.nan)
        scratch = np.full((b - a, N), np.nan)
        out(np.ascontiguousarray(t[a:b]), np.ascontiguousarray(Y[a:b, :model.n_ltd]), p, rec, scratch,
            np.full(b - a, np.nan), np.full(b - a, np.nan))
        force[a:b] = rec[:, REC_COUPLER_FORCE, :N - 1]
        deflection[a:b] = rec[:, REC_DEFLECTION, :N - 1]
    return {"coupler_force": force, "coupler_deflection": deflection}


def _at(t: np.ndarray, f: np.ndarray, when: float) -> float:
    """The sampled force ``f`` at the sample nearest ``when`` (NaN if ``when`` is NaN)."""
    if not np.isfinite(when) or t.size == 0:
        return float("nan")
    return float(f[int(np.argmin(np.abs(t - when)))])


def mixed_result(sc: MixedTrainScenario, model: MixedModel, sol) -> RunResult:
    """Outputs of one mixed-train run (see :mod:`hpcrail.kinds.mixed_train.outputs`)."""
    P = model.params
    L = P.ltd
    N, M = L.n_veh, L.n_veh - 1
    t = sol.t
    n_ltd = model.n_ltd
    values: dict = {}
    # --- the consist: every-step envelopes and metrics (the LTD observer)
    acc = sol.acc
    fmax, fmin, emax, emin = coupler_envelopes(acc[:P.acc_off], M)
    values.update(coupler_envelope_values(fmax, fmin, emax, emin))
    dur = sol.t_reached
    s_end = vehicle_positions(model.ltd, sol.y_final[:n_ltd])
    s_start = vehicle_positions(model.ltd, model.y0[:n_ltd])
    mean_speed = float(np.mean(s_end - s_start) / dur) if dur > 0 else 0.0
    metrics = train_metrics(fmax, fmin, emax, emin, acc[ACC_VMAX], mean_speed, sc.output.reference_coupler)
    values.update(metrics)
    values["time_of_max_draft_force"] = float(acc[ACC_T_DRAFT])
    values["time_of_max_buff_force"] = float(acc[ACC_T_BUFF])
    Y = sol.y
    values["notch"] = Y[:, L.i_notch].copy()
    values["head_speed"] = Y[:, 1].copy()
    values.update(consist_series(model, t, Y))
    # --- the detailed vehicles
    C, Dg = detailed_records(model, sol)
    ok = np.all(np.isfinite(Y), axis=1)
    per: list[dict] = []
    warnings = list(model.notes)
    a = P.acc_off
    for d, (vm, vsc) in enumerate(zip(model.vehicles, model.vehicle_scenarios)):
        o0, o1 = model.slices[d]
        nb = vm.params.n_body
        vsol = dataclasses.replace(sol, y=Y[:, o0:o1], acc=acc[a:a + 2 * nb], y_final=sol.y_final[o0:o1])
        a += 2 * nb
        r = railway_vehicle_result(vsc, vm, vsol, D=np.ascontiguousarray(Dg[:, d, :diag_size(vm.params)]))
        v = r.values
        pos = model.positions[d]
        warnings += [f"detailed vehicle {pos}: {w}" for w in r.warnings if w not in vm.notes]
        c = C[:, d]
        j = pos - 1
        none = np.full(t.size, np.nan)
        has_front, has_rear = j > 0, j < N - 1          # a detailed head or tail has one coupler
        ff = c[:, CD_F_FRONT] if has_front else none
        fr = c[:, CD_F_REAR] if has_rear else none
        v["front_coupler_force"] = ff
        v["rear_coupler_force"] = fr
        v["front_coupler_angle"] = c[:, CD_ALPHA_FRONT] if has_front else none
        v["rear_coupler_angle"] = c[:, CD_ALPHA_REAR] if has_rear else none
        fy = (c[:, CD_FY_FRONT] if has_front else 0.0) + (c[:, CD_FY_REAR] if has_rear else 0.0)
        v["coupler_lateral_force"] = np.where(ok, fy, np.nan)
        both = np.vstack([np.nan_to_num(ff[ok], nan=0.0), np.nan_to_num(fr[ok], nan=0.0)])
        f_at = np.nanmean(np.vstack([ff, fr]), axis=0) if t.size else np.zeros(0)
        tt = t[ok]
        if both.size:
            mins = both.min(axis=0)
            i = int(np.argmin(mins))
            v["peak_buff_force_at_vehicle"] = float(max(-mins[i], 0.0))
            v["time_of_peak_buff_force_at_vehicle"] = float(tt[i])
            v["peak_draft_force_at_vehicle"] = float(max(both.max(), 0.0))
        else:
            v["peak_buff_force_at_vehicle"] = v["peak_draft_force_at_vehicle"] = 0.0
            v["time_of_peak_buff_force_at_vehicle"] = float("nan")
        v["in_train_force_at_max_y_over_q"] = _at(t, f_at, v["max_y_over_q_time"])
        v["in_train_force_at_max_sum_y"] = _at(t, f_at, v["max_sum_y_time"])
        v["in_train_force_at_max_wheel_unloading"] = _at(t, f_at, v["max_wheel_unloading_time"])
        per.append(v)
    # stack the per-vehicle values: series (time, detailed_vehicle, ...), the others (detailed_vehicle, ...)
    from hpcrail.kinds.mixed_train.outputs import MIXED_TRAIN_OUTPUTS

    for o in MIXED_TRAIN_OUTPUTS:
        if "detailed_vehicle" not in o.dims:
            continue
        arr = [np.asarray(p[o.name]) for p in per]
        values[o.name] = np.stack(arr, axis=1) if o.role == "series" else np.stack(arr, axis=0)

    def worst(name):
        x = np.asarray(values[name], float)
        return float(np.nanmax(x)) if np.isfinite(x).any() else float("nan")

    values["worst_y_over_q"] = worst("max_y_over_q")
    values["worst_wheel_unloading"] = worst("max_wheel_unloading")
    values["worst_sum_y_ratio"] = worst("sum_y_ratio")
    values["worst_sum_y"] = worst("max_sum_y")
    values["peak_buff_force_at_detailed"] = worst("peak_buff_force_at_vehicle")
    if acc[ACC_OFFROUTE] > 0:
        warnings.append("the front of the train ran beyond the end of the route")
    from hpcrail.results.verdicts import cut_short_warnings

    warnings += [w for w in cut_short_warnings(
        values, ("time_of_max_draft_force", "time_of_max_buff_force", "time_of_peak_buff_force_at_vehicle"),
        float(sol.t_reached), {"time_of_max_draft_force": "the peak draft force",
                               "time_of_max_buff_force": "the peak buff force",
                               "time_of_peak_buff_force_at_vehicle": "the peak buff force at a detailed vehicle"})
        if w not in warnings]
    ens = sc.output.en14363
    attrs = {"detailed_positions": ",".join(str(p) for p in model.positions),
             "in_train_forces": int(sc.simulation.in_train_forces),
             "metrics_title": "running safety under in-train forces (EN 14363) and train metrics",
             "reference_coupler": int(metrics["reference_coupler"])}
    lim = {"limit": float(ens.y_q_limit)}
    return RunResult(run=RunInfo.from_solution(sol), values=values, time=t, attrs=attrs, warnings=warnings,
                     value_attrs={"max_draft_force": {"time_of_max": float(acc[ACC_T_DRAFT])},
                                  "max_buff_force": {"time_of_max": float(acc[ACC_T_BUFF])},
                                  "worst_y_over_q": lim, "max_y_over_q": lim,
                                  "worst_wheel_unloading": {"limit": float(ens.dq_q_limit)},
                                  "max_wheel_unloading": {"limit": float(ens.dq_q_limit)}})


__all__ = ["run", "solve", "problem", "mixed_result", "consist_series", "detailed_records", "layout_of", "backend_of"]
