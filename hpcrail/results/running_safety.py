"""Running-safety assessment quantities of EN 14363 from simulated wheel/rail forces (any kind with wheels:
``railway_vehicle`` and the detailed vehicles of a ``mixed_train``).

EN 14363:2016 ("Railway applications — Testing and simulation for the acceptance of running
characteristics of railway vehicles"), §7 (on-track tests and their simulation): the running-safety
assessment quantities are the track shifting force ΣY of each wheelset, the derailment quotient Y/Q of each
wheel and (for the twist tests of §6.1) the wheel unloading ΔQ/Q.  The forces are low-pass filtered and
evaluated as **sliding means over 2 m of track** (step 0.5 m); the limits are

* (ΣY_2m)_lim = α (10 kN + P0/3), P0 the static vertical wheelset force [kN], α = 1 for locomotives and
  passenger vehicles, 0.85 for freight wagons (Prud'homme's criterion as adopted by the standard);
* (Y/Q_2m)_lim = 0.8 on curves of radius ≥ 250 m;
* (ΔQ/Q)_lim = 0.6.

The standard's statistical treatment of measured sections (percentiles per section) is not applied: a
simulation gives the maximum of the sliding means over the run, with where (wheel, track position) and
when it occurs.  The clause numbers and values above are quoted from the standard as summarised in the
literature (Iwnicki (ed.), Handbook of Railway Vehicle Dynamics, 2nd ed. 2019); the standard itself was not
available to the author: check the edition that applies before using the limits for acceptance.
"""
from __future__ import annotations

import dataclasses

import numpy as np


def prudhomme_limit(P0_N, alpha: float = 0.85):
    """(ΣY)_lim = α (10 kN + P0/3) [N] for the static wheelset load ``P0_N`` [N] (scalar or array)."""
    return alpha * (10e3 + np.asarray(P0_N, float) / 3.0)


def lowpass(x: np.ndarray, dt: float, cutoff_hz: float) -> np.ndarray:
    """Zero-phase 4th-order Butterworth low-pass of the samples ``x`` (float64[k, ...], along axis 0) taken
    every ``dt`` [s]; unchanged when ``cutoff_hz`` <= 0, at or above the Nyquist frequency, or when there
    are too few samples for the filter's padding."""
    x = np.asarray(x, float)
    if cutoff_hz <= 0 or dt <= 0 or cutoff_hz >= 0.5 / dt:
        return x.copy()
    from scipy.signal import butter, sosfiltfilt

    sos = butter(4, cutoff_hz, fs=1.0 / dt, output="sos")
    if x.shape[0] <= 3 * (2 * sos.shape[0] + 1):
        return x.copy()
    return sosfiltfilt(sos, x, axis=0)


def sliding_mean(position: np.ndarray, x: np.ndarray, window_m: float = 2.0, step_m: float = 0.5):
    """Sliding means over ``window_m`` of track, every ``step_m``, of samples ``x`` (float64[k, ...]) taken at
    the increasing track positions ``position`` (float64[k] [m]); each window mean is the trapezoidal
    integral over the window divided by its length (exact for any sampling).

    Returns ``(centres float64[m], means float64[m, ...])``; m = 0 when the samples cover less than one
    window.  Raises ValueError for non-increasing positions."""
    s = np.asarray(position, float)
    x = np.asarray(x, float)
    if s.size < 2 or s[-1] - s[0] < window_m:
        return np.zeros(0), np.zeros((0,) + x.shape[1:])
    if np.any(np.diff(s) <= 0):
        raise ValueError("sliding_mean: track positions must increase")
    # cumulative trapezoidal integral, interpolated at the window ends
    seg = 0.5 * (x[1:] + x[:-1]) * np.diff(s).reshape((-1,) + (1,) * (x.ndim - 1))
    cum = np.concatenate([np.zeros((1,) + x.shape[1:]), np.cumsum(seg, axis=0)])
    starts = np.arange(s[0], s[-1] - window_m + 1e-9, step_m)
    ends = starts + window_m
    flat = cum.reshape(cum.shape[0], -1)
    xf = x.reshape(x.shape[0], -1)

    def integral_at(p):
        i = np.clip(np.searchsorted(s, p, side="right") - 1, 0, s.size - 2)
        u = p - s[i]
        h = s[i + 1] - s[i]
        slope = (xf[i + 1] - xf[i]) / h[:, None]
        return flat[i] + u[:, None] * (xf[i] + 0.5 * slope * u[:, None])

    means = (integral_at(ends) - integral_at(starts)) / window_m
    return starts + 0.5 * window_m, means.reshape((starts.size,) + x.shape[1:])


@dataclasses.dataclass
class Extreme:
    """The largest value of a sliding-mean quantity: its value, the element (wheel/wheelset) index, the
    track position [m] and the time [s] of the window centre (NaN/-1 when there is no window)."""

    value: float
    index: int
    position: float
    time: float


def _extreme(centres_by_elem, means, times_by_elem) -> Extreme:
    if means.size == 0:
        return Extreme(float("nan"), -1, float("nan"), float("nan"))
    k, e = np.unravel_index(int(np.nanargmax(means)), means.shape)
    return Extreme(float(means[k, e]), int(e), float(centres_by_elem[k, e]), float(times_by_elem[k, e]))


def running_safety(t: np.ndarray, position: np.ndarray, Q: np.ndarray, Y: np.ndarray, sumY: np.ndarray,
                   Q0: np.ndarray, wheel_of: np.ndarray, *, window_m: float = 2.0, step_m: float = 0.5,
                   lowpass_hz: float = 20.0, alpha: float = 0.85) -> dict:
    """EN 14363 running-safety quantities of one run.

    ``t`` float64[k] [s]; ``position`` float64[k, W]: track position of each wheelset [m] (increasing);
    ``Q``, ``Y`` float64[k, 2W] vertical and lateral wheel forces on the rail [N] (Y + towards the field
    side); ``sumY`` float64[k, W] track shifting force [N]; ``Q0`` float64[2W] static wheel loads [N];
    ``wheel_of`` int64[2W] the wheelset of each wheel.  Samples must be finite (a failed run's NaN tail is
    cut by the caller).

    Returns a dict: ``y_over_q``, ``wheel_unloading`` float64[k, 2W] (instantaneous), per wheel
    ``max_y_over_q_2m`` and ``max_wheel_unloading_2m`` float64[2W], per wheelset ``max_sum_y_2m`` and
    ``sum_y_limit`` float64[W], and :class:`Extreme` ``y_over_q``, ``sum_y_ratio`` (|ΣY_2m|/limit, index =
    wheelset), ``sum_y`` (|ΣY_2m| [N]) and ``unloading``."""
    t = np.asarray(t, float)
    Q = np.asarray(Q, float)
    Y = np.asarray(Y, float)
    sumY = np.asarray(sumY, float)
    Q0 = np.asarray(Q0, float)
    W = sumY.shape[1]
    dt = float(np.median(np.diff(t))) if t.size > 1 else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        yq = np.where(Q > 0, Y / Q, np.nan)
        unl = (Q0[None, :] - Q) / Q0[None, :]
    Qf = lowpass(Q, dt, lowpass_hz)
    Yf = lowpass(Y, dt, lowpass_hz)
    Sf = lowpass(sumY, dt, lowpass_hz)
    with np.errstate(divide="ignore", invalid="ignore"):
        yqf = np.where(Qf > 0, Yf / Qf, 0.0)
    P0 = np.array([Q0[wheel_of == w].sum() for w in range(W)])
    lim = prudhomme_limit(P0, alpha)
    per_w = {}
    for w in range(W):
        wh = np.where(wheel_of == w)[0]
        c, m_yq = sliding_mean(position[:, w], yqf[:, wh], window_m, step_m)
        _, m_q = sliding_mean(position[:, w], Qf[:, wh], window_m, step_m)
        _, m_s = sliding_mean(position[:, w], Sf[:, w], window_m, step_m)
        tc = np.interp(c, position[:, w], t) if c.size else c
        per_w[w] = (wh, c, tc, m_yq, m_q, m_s)
    nwh = Q.shape[1]
    max_yq = np.full(nwh, np.nan)
    max_unl = np.full(nwh, np.nan)
    max_s = np.full(W, np.nan)
    best = {"y_over_q": Extreme(np.nan, -1, np.nan, np.nan), "unloading": Extreme(np.nan, -1, np.nan, np.nan),
            "sum_y_ratio": Extreme(np.nan, -1, np.nan, np.nan), "sum_y": Extreme(np.nan, -1, np.nan, np.nan)}

    def better(key, ex):
        cur = best[key]
        if np.isfinite(ex.value) and (not np.isfinite(cur.value) or ex.value > cur.value):
            best[key] = ex

    for w, (wh, c, tc, m_yq, m_q, m_s) in per_w.items():
        if c.size == 0:
            continue
        for j, k in enumerate(wh):
            i = int(np.argmax(m_yq[:, j]))
            max_yq[k] = m_yq[i, j]
            better("y_over_q", Extreme(float(m_yq[i, j]), int(k), float(c[i]), float(tc[i])))
            u = (Q0[k] - m_q[:, j]) / Q0[k]
            i = int(np.argmax(u))
            max_unl[k] = u[i]
            better("unloading", Extreme(float(u[i]), int(k), float(c[i]), float(tc[i])))
        a = np.abs(m_s)
        i = int(np.argmax(a))
        max_s[w] = a[i]
        better("sum_y", Extreme(float(a[i]), w, float(c[i]), float(tc[i])))
        better("sum_y_ratio", Extreme(float(a[i] / lim[w]), w, float(c[i]), float(tc[i])))
    return {"y_over_q": yq, "wheel_unloading": unl, "max_y_over_q_2m": max_yq, "max_wheel_unloading_2m": max_unl,
            "max_sum_y_2m": max_s, "sum_y_limit": lim, **{f"extreme_{k}": v for k, v in best.items()}}


# ------------------------------------------------------------------------------------------------
# from a result dataset (figures)
# ------------------------------------------------------------------------------------------------
def _increasing(s: np.ndarray) -> np.ndarray:
    """Indices of the samples where the track position ``s`` advances (a stopped vehicle repeats positions)."""
    keep = np.isfinite(s)
    run_max = np.maximum.accumulate(np.where(keep, s, -np.inf))
    first = np.r_[True, run_max[1:] > run_max[:-1]]
    return np.flatnonzero(keep & first)


def two_metre_means(sub, en: dict) -> dict:
    """EN 14363 sliding means of one vehicle's series (``sub``: dims ``time`` and ``wheel``/``wheelset``), as
    :func:`hpcrail.results.running_safety.running_safety` forms them: forces low-passed (``en["lowpass_hz"]``,
    default 20 Hz), then means over ``en["window_m"]`` (2 m) of track every ``en["step_m"]`` (0.5 m) along the
    leading wheelset's position ``distance`` (every wheelset passes the same windows, shifted by a constant).
    Y/Q from the filtered Y and Q when the dataset has them, else from its Y/Q series; ΔQ/Q from the mean of
    Q and the static wheel loads, else from its series (linear in Q: the same mean).

    Returns ``{"s": window centres float64[m] [m], "y_over_q": float64[m, wheels], "wheel_unloading": ...,
    "sum_y": float64[m, wheelsets] [N]}`` (the quantities the dataset allows); {} without ``distance``."""
    if "distance" not in sub:
        return {}
    s = np.asarray(sub["distance"].values, float)
    idx = _increasing(s)
    if idx.size < 3:
        return {}
    s = s[idx]
    t = np.asarray(sub["time"].values, float)[idx]
    dt = float(np.median(np.diff(t)))
    win, step, hz = float(en.get("window_m", 2.0)), float(en.get("step_m", 0.5)), float(en.get("lowpass_hz", 20.0))

    def series(name):
        return np.nan_to_num(np.asarray(sub[name].transpose("time", ...).values, float)[idx])

    out: dict = {}
    if "wheel_load" in sub and "lateral_force" in sub:
        qf, yf = lowpass(series("wheel_load"), dt, hz), lowpass(series("lateral_force"), dt, hz)
        with np.errstate(divide="ignore", invalid="ignore"):
            yq = np.where(qf > 0, yf / qf, 0.0)
        out["s"], out["y_over_q"] = sliding_mean(s, yq, win, step)
    elif "y_over_q" in sub:
        out["s"], out["y_over_q"] = sliding_mean(s, lowpass(series("y_over_q"), dt, hz), win, step)
    if "wheel_load" in sub and "static_wheel_load" in sub:     # (Q0 - Q)/Q0 of the mean Q, as the standard
        q0 = np.asarray(sub["static_wheel_load"].values, float)
        out["s"], mq = sliding_mean(s, lowpass(series("wheel_load"), dt, hz), win, step)
        out["wheel_unloading"] = (q0[None, :] - mq) / q0[None, :]
    elif "wheel_unloading" in sub:
        out["s"], out["wheel_unloading"] = sliding_mean(s, lowpass(series("wheel_unloading"), dt, hz), win, step)
    if "sum_y" in sub:
        out["s"], out["sum_y"] = sliding_mean(s, lowpass(series("sum_y"), dt, hz), win, step)
    return out if "s" in out and out["s"].size else {}


def en14363_settings(ds) -> dict:
    """The scenario's ``output.en14363`` settings (window, step, low-pass, limits) as stored; {} if none."""
    from hpcrail.results.plotting import config_of

    out = config_of(ds).get("output")
    en = out.get("en14363") if isinstance(out, dict) else None
    return en if isinstance(en, dict) else {}


__all__ = ["prudhomme_limit", "lowpass", "sliding_mean", "running_safety", "Extreme", "two_metre_means",
           "en14363_settings"]
