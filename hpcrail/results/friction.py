"""Result dataset of an LTD run with dry-friction draft gears (paper 003).

The shared LTD schema (:func:`hpcrail.results.ltd.ltd_dataset`) with the friction force included in
``coupler_force``, ``acceleration``, the envelopes, the metrics and the energy balance
(``coupler_work`` includes the friction work), plus the friction variables of
:mod:`hpcrail.results.dataset` (``friction_force``, ``relative_velocity``, ``friction_mode``,
per-coupler ``stick_phases``/``stick_time``/``final_deflection``, ``friction_work``, ``n_events``
and the ``mode_change`` log).
"""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.config.scenario import Scenario
from hpcrail.integrators.contract import Solution
from hpcrail.models.couplers.friction import MODE_STICK
from hpcrail.models.friction.build import (
    FACC_COUNT, FACC_ENTRY, FACC_INBAND, FACC_TIME, TREAT_EVENT_DRIVEN, FrictionModel,
)
from hpcrail.models.friction.kernel import JUMP_LOG_FULL, JUMP_SELECT_FAILED, friction_outputs
from hpcrail.results.dataset import (
    ENERGY, FRICTION_COUPLER, FRICTION_SCALARS, MODE_CHANGES, RUN_SCALARS, SERIES, scalar,
)
from hpcrail.results.ltd import ltd_dataset


def modes_at(model: FrictionModel, t: np.ndarray) -> np.ndarray:
    """Mode of every connection at the times ``t`` (int64[k, M]) replayed from the mode-change log
    (a sample at an event time gets the mode chosen at that event)."""
    p = model.params
    L = min(int(p.log_n[0]), p.log_t.size)
    lt, lk, lm = p.log_t[:L], p.log_k[:L], p.log_m[:L]
    modes = np.empty((t.size, p.mode.size), np.int64)
    cur = model.mode0.copy()
    i = 0
    for s, ts in enumerate(t):
        while i < L and lt[i] <= ts:
            cur[lk[i]] = lm[i]
            i += 1
        modes[s] = cur
    return modes


def stick_statistics(model: FrictionModel, acc: np.ndarray, t_end: float) -> tuple[np.ndarray, np.ndarray]:
    """Per-coupler number of stick phases and stick time [s] from the observer, closing the phases
    still open at ``t_end``."""
    p = model.params
    M = p.mode.size
    o = p.acc_off

    def block(b):
        return acc[o + 1 + (b - 1) * M:o + 1 + b * M]

    count = block(FACC_COUNT).copy()
    time = block(FACC_TIME).copy()
    open_ = block(FACC_INBAND) != 0
    dur = t_end - block(FACC_ENTRY)
    close = open_ & (dur >= p.min_stick)
    count[close] += 1
    time[close] += dur[close]
    on = p.fr_on == 1
    count[~on] = np.nan
    time[~on] = np.nan
    return count, time


def friction_dataset(sc: Scenario, model: FrictionModel, sol: Solution, config_yaml: str | None = None) -> xr.Dataset:
    """Build the dataset of a friction run (``sol.y``: float64[k, n] in the friction model's layout)."""
    p = model.params
    q = p.ltd
    N, B, M = q.n_veh, q.block, q.n_veh - 1
    ds = ltd_dataset(sc, model.ltd, sol, config_yaml=config_yaml)
    if p.fail[0] == JUMP_LOG_FULL:
        ds["message"] = scalar(f"{sol.message}: the log of connection mode changes is full (raise "
                               f"friction.max_mode_changes = {p.log_t.size})", "", RUN_SCALARS["message"][1])
    elif p.fail[0] == JUMP_SELECT_FAILED:
        ds["message"] = scalar(f"{sol.message}: the stick/slip mode selection did not converge",
                               "", RUN_SCALARS["message"][1])
    t = sol.t
    Y = np.ascontiguousarray(sol.y)
    ed = p.treatment == TREAT_EVENT_DRIVEN
    modes = modes_at(model, t) if ed else np.zeros((t.size, M), np.int64)
    T = np.full((t.size, M), np.nan)
    accel = np.full((t.size, N), np.nan)
    friction_outputs(t, Y, p, modes, T, accel)
    dv = Y[:, 1:B * N:B][:, :-1] - Y[:, 1:B * N:B][:, 1:]
    if not ed:
        inband = np.abs(dv) <= p.eta
        modes = np.where(inband, MODE_STICK, 2 * np.sign(dv)).astype(np.int64)
    modes = np.where(p.fr_on[None, :] == 1, modes, 0)
    modes = np.where(np.isfinite(Y[:, :1]), modes, 0)
    ds["coupler_force"] = ds["coupler_force"] + xr.DataArray(T, dims=("time", "coupler"))
    ds["coupler_force"].attrs.update(units="N", long_name=SERIES["coupler_force"][2])
    ds["acceleration"] = (("time", "vehicle"), accel, {"units": "m s-2", "long_name": SERIES["acceleration"][2]})
    for name, arr in (("friction_force", T), ("relative_velocity", dv), ("friction_mode", modes.astype(np.int8))):
        dims, units, long_name = SERIES[name]
        ds[name] = (dims, arr, {"units": units, "long_name": long_name})
    count, stime = stick_statistics(model, sol.acc, sol.t_reached)
    final_e = sol.y_final[B:B * N:B]
    # final in-train force: the last sample if it is the end of the run
    final_f = ds["coupler_force"].values[-1] if t.size and abs(t[-1] - sol.t_reached) < 1e-9 else np.full(M, np.nan)
    for name, arr in (("stick_phases", count), ("stick_time", stime), ("final_deflection", final_e),
                      ("final_coupler_force", final_f)):
        units, long_name = FRICTION_COUPLER[name]
        ds[name] = (("coupler",), np.asarray(arr, float), {"units": units, "long_name": long_name})
    w_f = float(sol.y_final[p.i_work] - model.y0[p.i_work])
    L = min(int(p.log_n[0]), p.log_t.size)
    vals = {"friction_work": w_f, "n_events": int(sol.stats.get("events", 0)), "n_mode_changes": L if ed else 0}
    for name, val in vals.items():
        units, long_name = FRICTION_SCALARS[name]
        ds[name] = scalar(val, units, long_name)
    if q.i_energy >= 0:
        cw = float(ds["coupler_work"]) + w_f
        ds["coupler_work"] = scalar(cw, *ENERGY["coupler_work"])
        res = (float(ds["traction_work"]) - float(ds["resistance_work"]) - float(ds["brake_work"]) - cw
               - float(ds["kinetic_energy_change"]) - float(ds["potential_energy_change"]))
        ds["energy_balance_residual"] = scalar(res, *ENERGY["energy_balance_residual"])
    if ed:
        log = {"mode_change_time": p.log_t[:L].copy(), "mode_change_coupler": p.log_k[:L] + 1,
               "mode_change_mode": p.log_m[:L].copy()}
        for name, arr in log.items():
            units, long_name = MODE_CHANGES[name]
            ds[name] = (("mode_change",), arr, {"units": units, "long_name": long_name})
    fn = sc.friction
    ds.attrs["source"] = (ds.attrs.get("source", "") + "; dry-friction draft gears: Oprea 2018 (paper 003), "
                          f"{fn.treatment.replace('_', '-')} treatment")
    ds.attrs["friction_treatment"] = fn.treatment
    ds.attrs["friction_stick_band_mps"] = float(fn.stick_band_mps)
    if not ed:
        ds.attrs["friction_regularisation"] = f"{fn.regularisation}, width {fn.regularisation_width_mps:g} m/s"
        if any(p.fr_tc[p.fr_on == 1] < p.fr_ts[p.fr_on == 1]) and np.any(p.fr_law[p.fr_on == 1] == 0):
            w = ds.attrs.get("warnings", "")
            ds.attrs["warnings"] = (w + "\n" if w else "") + (
                "regularised friction with a Coulomb kinetic level below the static limit: the regularised law "
                "holds at most the kinetic level (use kinetic_law: stribeck or the event-driven treatment)")
    else:
        ds.attrs["friction_event_trials"] = int(sol.stats.get("event_trials", 0))
    return ds
