"""Ride comfort of vertical car-body floor accelerations: EN 12299 / ISO 2631 frequency-weighted
r.m.s. values and Sperling's ride index W_z.

Frequency weightings (ISO 2631-1:1997 Annex A; parameters of ISO 8041 Table 3.1 as reproduced in
the Larson Davis HVM200 manual, which also gives the transfer functions; EN 12299:2009 uses W_b for
vertical and W_d for horizontal floor accelerations).  With s = jω, ω_i = 2π f_i::

    band-limiting high pass  H_h = s² / (s² + ω₁ s/Q₁ + ω₁²)
    band-limiting low pass   H_l = ω₂² / (s² + ω₂ s/Q₂ + ω₂²)
    a-v transition           H_t = (1 + s/ω₃) / (1 + s/(Q₄ ω₄) + s²/ω₄²)
    upward step              H_s = (s² + ω₅ s/Q₅ + ω₅²) / (s² + ω₆ s/Q₆ + ω₆²)
    W(s) = K · H_h H_l H_t H_s

=====  ====  ======  ====  ======  ====  ====  ====  ====  ====  ====  =====
name   f1    Q1      f2    Q2      f3    f4    Q4    f5    Q5    f6    Q6    K
=====  ====  ======  ====  ======  ====  ====  ====  ====  ====  ====  =====
Wb     0.4   1/√2    100   1/√2    16    16    0.55  2.5   0.9   4     0.95  1.024
Wc     0.4   1/√2    100   1/√2    8     8     0.63  ∞     –     ∞     –     1
Wd     0.4   1/√2    100   1/√2    2     2     0.63  ∞     –     ∞     –     1
Wk     0.4   1/√2    100   1/√2    12.5  12.5  0.63  2.37  0.91  3.35  0.91  1
=====  ====  ======  ====  ======  ====  ====  ====  ====  ====  ====  =====

Reference values |W(j·100 rad/s)| (f = 15.915 Hz): Wb 0.8126, Wc 0.5145, Wd 0.1261 (ISO 8041
reference-frequency values as listed by ZETLAB) — checked in the tests.

Sperling (ride comfort, "Wz" method, e.g. Forstberg's thesis "Ride comfort and motion sickness in
tilting trains", KTH 2000, and the public ``comfpy`` implementation) with the vertical weighting::

    B_s(f) = 0.588 √[(1.911 f² + (0.25 f²)²) / ((1 − 0.277 f²)² + (1.563 f − 0.0368 f³)²)]
    W_z = [ 2 ∫ B_s(f)² G_a(f) df ]^0.15,       G_a one-sided PSD of a in (cm/s²)²/Hz

so that a sinusoid of amplitude A [cm/s²] at f gives W_z = (A·B_s(f))^0.3, the filter form of
Sperling's 0.896 (A³ F(f)/f)^0.1 (F = 0.325 f² for 0.5-5.9 Hz, 400/f² for 5.9-20 Hz, 1 above).
Scale: 1 just noticeable, 2 clearly noticeable, 2.5 more pronounced but not unpleasant, 3 strong,
irregular but still tolerable, 3.25 very irregular, 3.5 extremely irregular, unpleasant, annoying.

EN 12299 mean comfort, standard method: N_MV = 6 √[(a_XP95^Wd)² + (a_YP95^Wd)² + (a_ZP95^Wb)²],
a_P95 the 95th percentile of consecutive 5-s r.m.s. values of the weighted acceleration.  A
vertical (pitch-plane) model provides the vertical term only: ``n_mv_z`` = 6 a_ZP95^Wb.

Weightings are applied in the frequency domain with the exact analogue response (no bilinear
warping): FFT of the zero-padded record × W(jω), inverse FFT.  Content above the Nyquist frequency of
the sampled record is lost: sample at ≤ 5 ms to keep the 100 Hz band limit.
"""
from __future__ import annotations

import numpy as np

#: ISO 8041 / ISO 2631 weighting parameters: f1, Q1, f2, Q2, f3, f4, Q4, f5, Q5, f6, Q6, K
WEIGHTINGS = {
    "Wb": (0.4, 2 ** -0.5, 100.0, 2 ** -0.5, 16.0, 16.0, 0.55, 2.5, 0.9, 4.0, 0.95, 1.024),
    "Wc": (0.4, 2 ** -0.5, 100.0, 2 ** -0.5, 8.0, 8.0, 0.63, np.inf, 1.0, np.inf, 1.0, 1.0),
    "Wd": (0.4, 2 ** -0.5, 100.0, 2 ** -0.5, 2.0, 2.0, 0.63, np.inf, 1.0, np.inf, 1.0, 1.0),
    "Wk": (0.4, 2 ** -0.5, 100.0, 2 ** -0.5, 12.5, 12.5, 0.63, 2.37, 0.91, 3.35, 0.91, 1.0),
}


def weighting(name: str, f) -> np.ndarray:
    """Complex frequency response W(j2πf) of an ISO 2631 / EN 12299 weighting (``Wb``, ``Wc``,
    ``Wd``, ``Wk``) at frequencies ``f`` [Hz] (any shape).  Raises ``KeyError`` for other names."""
    if name not in WEIGHTINGS:
        raise KeyError(f"unknown weighting {name!r}; allowed: {', '.join(WEIGHTINGS)}")
    f1, q1, f2, q2, f3, f4, q4, f5, q5, f6, q6, K = WEIGHTINGS[name]
    s = 2j * np.pi * np.asarray(f, dtype=float)
    w1, w2, w3, w4 = (2 * np.pi * x for x in (f1, f2, f3, f4))
    with np.errstate(divide="ignore", invalid="ignore"):
        hh = s * s / (s * s + w1 * s / q1 + w1 * w1)
    hl = w2 * w2 / (s * s + w2 * s / q2 + w2 * w2)
    ht = (1 + s / w3) / (1 + s / (q4 * w4) + (s / w4) ** 2)
    if np.isfinite(f5):
        w5, w6 = 2 * np.pi * f5, 2 * np.pi * f6
        hs = (s * s + w5 * s / q5 + w5 * w5) / (s * s + w6 * s / q6 + w6 * w6)
    else:
        hs = 1.0
    return K * hh * hl * ht * hs


def sperling_weighting(f) -> np.ndarray:
    """Sperling's vertical comfort weighting B_s(f) (magnitude, f in Hz); horizontal is 1.25 B_s."""
    f = np.asarray(f, dtype=float)
    num = 1.911 * f ** 2 + (0.25 * f ** 2) ** 2
    den = (1 - 0.277 * f ** 2) ** 2 + (1.563 * f - 0.0368 * f ** 3) ** 2
    return 0.588 * np.sqrt(num / den)


def sperling_classic(amplitude_cm_s2, f) -> np.ndarray:
    """Sperling's original single-frequency formula W_z = 0.896 (A³ F(f)/f)^0.1 (vertical F(f))."""
    f = np.asarray(f, float)
    F = np.where(f < 5.9, 0.325 * f ** 2, np.where(f < 20.0, 400.0 / f ** 2, 1.0))
    return 0.896 * (np.asarray(amplitude_cm_s2, float) ** 3 * F / f) ** 0.1


def _spectrum(a: np.ndarray, dt: float):
    """rFFT of the mean-removed, zero-padded records a[..., n] → (X, f, n, nfft)."""
    a = np.asarray(a, float)
    n = a.shape[-1]
    nfft = 1 << int(np.ceil(np.log2(max(2 * n, 2))))
    X = np.fft.rfft(a - a.mean(axis=-1, keepdims=True), nfft, axis=-1)
    f = np.fft.rfftfreq(nfft, dt)
    return X, f, n, nfft


def weighted_signal(a, dt: float, name: str = "Wb") -> np.ndarray:
    """Frequency-weighted acceleration (same shape as ``a``: float64[..., n], m/s²) sampled every
    ``dt`` [s], by the analogue response of :func:`weighting` applied to the zero-padded FFT."""
    X, f, n, nfft = _spectrum(a, dt)
    return np.fft.irfft(X * weighting(name, f), nfft, axis=-1)[..., :n]


def weighted_rms(a, dt: float, name: str = "Wb") -> np.ndarray:
    """r.m.s. of the weighted acceleration over the whole record [m/s²] (float64[...])."""
    aw = weighted_signal(a, dt, name)
    return np.sqrt(np.mean(aw * aw, axis=-1))


def p95_of_window_rms(a, dt: float, window_s: float = 5.0, name: str = "Wb") -> np.ndarray:
    """95th percentile of consecutive ``window_s`` r.m.s. values of the weighted acceleration
    (EN 12299 a_P95) [m/s²]; NaN if the record is shorter than one window."""
    aw = weighted_signal(a, dt, name)
    nw = int(round(window_s / dt))
    n = aw.shape[-1]
    k = n // nw if nw > 0 else 0
    if k < 1:
        return np.full(aw.shape[:-1], np.nan)
    blocks = aw[..., :k * nw].reshape(aw.shape[:-1] + (k, nw))
    rms = np.sqrt(np.mean(blocks * blocks, axis=-1))
    return np.percentile(rms, 95, axis=-1)


def sperling_wz(a, dt: float) -> np.ndarray:
    """Sperling ride index W_z of vertical accelerations a[..., n] [m/s²] sampled every ``dt`` [s]:
    W_z = (2 · 10⁴ · mean((B_s * a)²))^0.15 (10⁴: (m/s²)² → (cm/s²)²), B_s applied as a
    zero-phase magnitude in the frequency domain."""
    X, f, n, nfft = _spectrum(a, dt)
    aw = np.fft.irfft(X * sperling_weighting(f), nfft, axis=-1)[..., :n]
    ms = np.mean(aw * aw, axis=-1)
    return (2.0e4 * ms) ** 0.15


def ride_metrics(a, dt: float, window_s: float = 5.0) -> dict:
    """Vertical ride metrics of floor accelerations a[..., n] [m/s²] (gravity excluded).

    Returns a dict of float64[...] arrays: ``wz`` (Sperling), ``wb_rms`` (EN 12299 W_b r.m.s. over
    the record), ``wb_p95`` (95th percentile of ``window_s`` r.m.s. values), ``n_mv_z`` (6·wb_p95,
    the vertical term of EN 12299's N_MV), ``rms`` (unweighted r.m.s.), ``peak`` (max |a| of the
    samples).
    """
    a = np.asarray(a, float)
    wb_p95 = p95_of_window_rms(a, dt, window_s, "Wb")
    return {"wz": sperling_wz(a, dt), "wb_rms": weighted_rms(a, dt, "Wb"), "wb_p95": wb_p95,
            "n_mv_z": 6.0 * wb_p95, "rms": np.sqrt(np.mean((a - a.mean(axis=-1, keepdims=True)) ** 2, axis=-1)),
            "peak": np.max(np.abs(a), axis=-1)}
