"""The coupler-envelope observer shared by every train model (LTD, LTD with dry-friction draft gears,
planar train): one accumulator layout and the numba helpers that update it after every accepted
integrator step, so that the metrics of Bosso et al. 2024 (Tables 1-2) are taken over every step,
never only over the sampled output.

Accumulator ``acc`` (float64), M couplers:

========================  =========================================================================
index                     content
========================  =========================================================================
``ACC_VMAX``, ``ACC_VMIN``  largest and smallest vehicle speed [m/s]
``ACC_OFFROUTE``          1 once the train left the defined route/track (its last section was extended)
``ACC_T_DRAFT``           time of the largest draft force [s] (first step where it occurs)
``ACC_T_BUFF``            time of the largest buff force [s]
``ACC_FMAX``, ``ACC_FMIN``  largest and smallest in-train force over all couplers [N] (+ draft)
``ACC_HEAD + b·M + k``    per coupler k: block ``ENV_FMAX`` max force, ``ENV_FMIN`` min force,
                          ``ENV_EMAX`` max extension, ``ENV_EMIN`` min extension [N], [m],
                          ``ENV_TFMAX``/``ENV_TFMIN`` the times of its max/min force [s] (first
                          step where they occur; what the envelope check re-integrates around)
``ACC_HEAD + N_ENV·M …``  model-specific blocks (planar shank angles, friction stick statistics)
========================  =========================================================================
"""
from __future__ import annotations

import numpy as np
from numba import njit

from hpcrail._numba import JIT

ACC_VMAX, ACC_VMIN, ACC_OFFROUTE, ACC_T_DRAFT, ACC_T_BUFF, ACC_FMAX, ACC_FMIN = range(7)
ACC_HEAD = 8
ENV_FMAX, ENV_FMIN, ENV_EMAX, ENV_EMIN, ENV_TFMAX, ENV_TFMIN = range(6)
N_ENV = 6


def envelope_acc0(n_couplers: int, extra: int = 0) -> np.ndarray:
    """Initial accumulator (float64[ACC_HEAD + N_ENV·M + extra]): maxima at −inf, minima at +inf,
    flags and times 0 (the per-coupler times of the extremes NaN until one is recorded), the ``extra``
    model-specific entries 0."""
    M = n_couplers
    acc = np.zeros(ACC_HEAD + N_ENV * M + extra)
    acc[[ACC_VMAX, ACC_FMAX]] = -np.inf
    acc[[ACC_VMIN, ACC_FMIN]] = np.inf
    h = ACC_HEAD
    acc[h + ENV_FMAX * M:h + (ENV_FMAX + 1) * M] = -np.inf
    acc[h + ENV_FMIN * M:h + (ENV_FMIN + 1) * M] = np.inf
    acc[h + ENV_EMAX * M:h + (ENV_EMAX + 1) * M] = -np.inf
    acc[h + ENV_EMIN * M:h + (ENV_EMIN + 1) * M] = np.inf
    acc[h + ENV_TFMAX * M:h + (ENV_TFMIN + 1) * M] = np.nan
    return acc


def coupler_envelopes(acc: np.ndarray, n_couplers: int) -> tuple:
    """``(fmax, fmin, emax, emin)`` float64[M] per-coupler extremes of force [N] and extension [m]."""
    M = n_couplers
    h = ACC_HEAD
    return tuple(np.asarray(acc[h + b * M:h + (b + 1) * M], float) for b in range(ENV_TFMAX))


def coupler_peak_times(acc: np.ndarray, n_couplers: int) -> tuple:
    """``(t_fmax, t_fmin)`` float64[M]: per coupler the time [s] of its largest and of its smallest force (the
    first accepted step where it occurs; NaN if never observed)."""
    M = n_couplers
    h = ACC_HEAD
    return (np.asarray(acc[h + ENV_TFMAX * M:h + (ENV_TFMAX + 1) * M], float),
            np.asarray(acc[h + ENV_TFMIN * M:h + (ENV_TFMIN + 1) * M], float))


@njit(inline="always", **JIT)
def envelope_update(acc, M, k, f, e, t):
    """Fold force ``f`` [N] and extension ``e`` [m] of coupler ``k`` at time ``t`` [s] into its per-coupler
    envelope (with the times of the force extremes)."""
    h = ACC_HEAD
    if f > acc[h + ENV_FMAX * M + k]:
        acc[h + ENV_FMAX * M + k] = f
        acc[h + ENV_TFMAX * M + k] = t
    if f < acc[h + ENV_FMIN * M + k]:
        acc[h + ENV_FMIN * M + k] = f
        acc[h + ENV_TFMIN * M + k] = t
    if e > acc[h + ENV_EMAX * M + k]:
        acc[h + ENV_EMAX * M + k] = e
    if e < acc[h + ENV_EMIN * M + k]:
        acc[h + ENV_EMIN * M + k] = e


@njit(inline="always", **JIT)
def envelope_fold(t, acc, vmax, vmin, fmax, fmin):
    """Fold one step's (or one vehicle range's) extremes into the train-wide entries; ranges folded in
    head-to-tail order give the monolithic result (the time of a maximum is the first step where it
    occurs)."""
    if vmax > acc[ACC_VMAX]:
        acc[ACC_VMAX] = vmax
    if vmin < acc[ACC_VMIN]:
        acc[ACC_VMIN] = vmin
    if fmax > acc[ACC_FMAX]:
        acc[ACC_FMAX] = fmax
        acc[ACC_T_DRAFT] = t
    if fmin < acc[ACC_FMIN]:
        acc[ACC_FMIN] = fmin
        acc[ACC_T_BUFF] = t


__all__ = ["ACC_VMAX", "ACC_VMIN", "ACC_OFFROUTE", "ACC_T_DRAFT", "ACC_T_BUFF", "ACC_FMAX", "ACC_FMIN", "ACC_HEAD",
           "ENV_FMAX", "ENV_FMIN", "ENV_EMAX", "ENV_EMIN", "ENV_TFMAX", "ENV_TFMIN", "N_ENV", "envelope_acc0",
           "coupler_envelopes", "coupler_peak_times",
           "envelope_update", "envelope_fold"]
