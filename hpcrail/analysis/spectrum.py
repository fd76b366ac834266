"""Amplitude spectra (FFT) of result variables, e.g. the 2.8 Hz train mode in a coupler force or the
coupler modes in an EOC acceleration (Massa et al. 2012 §9.2, Figs 10-11; Brigham, *The Fast Fourier
Transform*, 1974)."""
from __future__ import annotations

import numpy as np
import xarray as xr


def amplitude_spectrum(da: xr.DataArray, dim: str = "time", *, t_start: float | None = None,
                       t_end: float | None = None, detrend: str | None = "linear",
                       window: str | None = "hann") -> xr.DataArray:
    """Single-sided amplitude spectrum of ``da`` along ``dim`` (uniformly sampled, e.g. ``time`` [s]).

    Returns a DataArray with dimension ``frequency`` [Hz] (replacing ``dim``, other dimensions kept)
    whose values are sinusoid amplitudes in the units of ``da``: a component A·sin(2π f t) shows a
    peak of height ≈ A at f (window gain corrected; the peak spreads over neighbouring bins).

    ``t_start``/``t_end`` select a window of ``dim`` (e.g. skip a start transient); ``detrend``:
    'linear', 'mean' or None; ``window``: 'hann' or None (rectangular).
    Raises ``ValueError`` for non-uniform sampling, fewer than 8 samples or non-finite values.
    """
    x = da
    if t_start is not None or t_end is not None:
        x = x.sel({dim: slice(t_start, t_end)})
    t = np.asarray(x[dim].values, float)
    if t.size < 8:
        raise ValueError(f"need at least 8 samples along {dim!r}, got {t.size}")
    dt = np.diff(t)
    step = float(np.median(dt))
    if not np.allclose(dt, step, rtol=1e-6, atol=1e-9 * max(1.0, abs(t[-1]))):
        # the last sample of a run may be closer (the end time is always sampled): drop it
        if np.allclose(dt[:-1], step, rtol=1e-6) and dt[-1] < step:
            x = x.isel({dim: slice(0, -1)})
            t = t[:-1]
        else:
            raise ValueError(f"{dim!r} is not uniformly sampled (steps {dt.min():.6g}..{dt.max():.6g})")
    x = x.transpose(..., dim)
    v = np.asarray(x.values, float)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{da.name or 'variable'} has non-finite values in the selected window")
    n = v.shape[-1]
    if detrend == "linear":
        tt = (t - t.mean()) / max(t.std(), 1e-300)
        a = v.mean(axis=-1, keepdims=True)
        b = (v * tt).mean(axis=-1, keepdims=True) / (tt * tt).mean()
        v = v - a - b * tt
    elif detrend == "mean":
        v = v - v.mean(axis=-1, keepdims=True)
    elif detrend is not None:
        raise ValueError(f"detrend must be 'linear', 'mean' or None, got {detrend!r}")
    if window == "hann":
        w = np.hanning(n)
    elif window is None:
        w = np.ones(n)
    else:
        raise ValueError(f"window must be 'hann' or None, got {window!r}")
    spec = np.fft.rfft(v * w, axis=-1)
    amp = 2.0 * np.abs(spec) / w.sum()
    amp[..., 0] /= 2.0
    freq = np.fft.rfftfreq(n, d=step)
    dims = [d for d in x.dims if d != dim] + ["frequency"]
    coords = {d: x[d] for d in x.dims if d != dim and d in x.coords}
    coords["frequency"] = ("frequency", freq, {"units": "Hz", "long_name": "frequency"})
    out = xr.DataArray(amp, dims=dims, coords=coords, name=f"{da.name or 'variable'}_amplitude")
    out.attrs = {"units": da.attrs.get("units", ""),
                 "long_name": f"amplitude spectrum of {da.attrs.get('long_name', da.name or 'variable')}",
                 "window": str(window), "detrend": str(detrend)}
    return out


def peak_frequencies(spec: xr.DataArray, n: int = 3, min_frequency: float = 0.0) -> list[tuple[float, float]]:
    """The ``n`` largest local maxima ``(frequency [Hz], amplitude)`` of a 1-D amplitude spectrum
    above ``min_frequency``, refined by parabolic interpolation of the log amplitude; sorted by
    decreasing amplitude.  Raises ``ValueError`` for a spectrum with other dimensions."""
    if spec.ndim != 1:
        raise ValueError(f"select one spectrum first (dims {spec.dims})")
    f = spec["frequency"].values
    a = np.asarray(spec.values, float)
    peaks = []
    for i in range(1, a.size - 1):
        if f[i] < min_frequency or not (a[i] > a[i - 1] and a[i] >= a[i + 1]):
            continue
        la, lb, lc = np.log(np.maximum([a[i - 1], a[i], a[i + 1]], 1e-300))
        den = la - 2 * lb + lc
        d = 0.5 * (la - lc) / den if den != 0 else 0.0
        peaks.append((float(f[i] + d * (f[1] - f[0])), float(a[i])))
    peaks.sort(key=lambda p: -p[1])
    return peaks[:n]
