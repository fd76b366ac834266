"""Linearised modes of a model: natural frequencies, damping ratios and mode shapes.

A model is linearised about a state y* (the initial state, or the state reached at a given time) by
central finite differences of its right-hand side, A = ∂f/∂y.  With the states split into positions q
and velocities v (q̇ = A_qv v, v̇ = A_vq q + A_vv v; other states are frozen):

* **undamped modes** — q̈ = S q + D_q q̇ with S = A_qv A_vq and D_q = A_qv A_vv A_qv⁻¹; the eigenvalues of
  S are −ω², the natural frequencies f_n = ω/2π of the undamped problem K φ = ω² M φ (what Massa et al. 2012
  Fig. 9 reports); the modal damping ratio ζ = −ψᵀ D_q φ / (2ω ψᵀφ) uses the left eigenvector ψ
  (exact for proportional damping, a first-order estimate otherwise; ζ > 1 flags an overdamped mode);
* **damped eigenvalues** — the eigenvalues λ of the first-order system: f_n = |λ|/2π,
  ζ = −Re λ/|λ|, damped frequency |Im λ|/2π.

A model kind provides ``linearisation(scenario, at) -> Linearisation`` in its descriptor
(:class:`hpcrail.kinds.descriptor.ModelKind`); ``hpcrail modes`` uses it.  Sources: Genta, *Vibration Dynamics and
Control* (2009) §§1-4 (state-space eigenproblem, modal damping); Massa et al. 2012 §9.2.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from hpcrail.kinds.descriptor import Linearisation  # noqa: F401  (re-exported: the input of modes())

def linearisation_for(sc, at: float = 0.0) -> "Linearisation":
    """The linearisation of a validated scenario at time ``at`` [s] from its kind's descriptor
    (``ModelKind.linearisation``); raises ``KeyError`` naming the kinds that have one if its kind has
    none."""
    from hpcrail import kinds

    kind = kinds.of(sc)
    if kind.linearisation is None:
        have = [k for k in kinds.names() if kinds.get(k).linearisation is not None]
        raise KeyError(f"scenario model {kind.name!r} has no linearisation for modal analysis "
                       f"(available: {', '.join(have) or 'none'})")
    return kind.linearisation(sc, at)


@dataclasses.dataclass
class Mode:
    """One undamped mode: natural frequency [Hz], modal damping ratio, shape in physical coordinates
    (scaled to comparable lengths, largest component +1) and a one-line description."""

    frequency_hz: float
    damping_ratio: float
    shape: np.ndarray
    description: str
    rigid: bool = False


@dataclasses.dataclass
class DampedEigenvalue:
    eigenvalue: complex
    natural_frequency_hz: float
    damped_frequency_hz: float
    damping_ratio: float
    description: str


def jacobian(rhs: Callable, params, t: float, y: np.ndarray, cols: np.ndarray, rel: float = 1e-7) -> np.ndarray:
    """Central-difference Jacobian ∂f/∂y[cols] (float64[n, len(cols)]) of ``rhs`` at (t, y); the step
    of state i is ``rel · max(1, |y_i|)``.  Raises ``FloatingPointError`` if f is not finite there."""
    n = y.size
    f0 = np.empty(n)
    rhs(t, y, params, f0)
    if not np.all(np.isfinite(f0)):
        raise FloatingPointError("the right-hand side is not finite at the linearisation point")
    J = np.empty((n, len(cols)))
    fp = np.empty(n)
    fm = np.empty(n)
    for c, i in enumerate(cols):
        h = rel * max(1.0, abs(y[i]))
        yp = y.copy()
        ym = y.copy()
        yp[i] += h
        ym[i] -= h
        rhs(t, yp, params, fp)
        rhs(t, ym, params, fm)
        J[:, c] = (fp - fm) / (2.0 * h)
    if not np.all(np.isfinite(J)):
        raise FloatingPointError("the right-hand side is not finite near the linearisation point")
    return J


def describe_shape(shape: np.ndarray, names: list[str], threshold: float = 0.3, limit: int = 4) -> str:
    """'car 1 longitudinal +1.00, car 2 longitudinal -0.99' — the largest components (relative to
    the largest, sign = phase)."""
    order = np.argsort(-np.abs(shape))
    parts = []
    for i in order[:limit]:
        if abs(shape[i]) < threshold:
            break
        parts.append(f"{names[i]} {shape[i]:+.2f}")
    return ", ".join(parts)


def _real_shape(v: np.ndarray) -> np.ndarray:
    """Rotate a (possibly complex) vector so its largest component is real positive; real part,
    normalised to max |component| = 1."""
    k = int(np.argmax(np.abs(v)))
    if np.abs(v[k]) == 0:
        return np.zeros(v.size)
    w = v * np.exp(-1j * np.angle(v[k]))
    r = np.real(w)
    return r / np.max(np.abs(r))


def modes(lin: Linearisation, rigid_tol_hz: float = 1e-3) -> tuple[list[Mode], list[DampedEigenvalue]]:
    """Undamped modes (sorted by frequency) and damped eigenvalues (Im ≥ 0, sorted by natural
    frequency) of a linearisation.  Raises ``FloatingPointError`` if the RHS is not finite."""
    pos = np.asarray(lin.pos)
    vel = np.asarray(lin.vel)
    cols = np.concatenate([pos, vel])
    J = jacobian(lin.rhs, lin.params, lin.t, lin.y, cols)
    m = pos.size
    A_qv = J[pos][:, m:]
    A_vq = J[vel][:, :m]
    A_vv = J[vel][:, m:]
    S = A_qv @ A_vq
    Dq = A_qv @ A_vv @ np.linalg.inv(A_qv)
    lam, right = np.linalg.eig(S)
    lam_l, left = np.linalg.eig(S.T)
    # pair left and right eigenvectors by eigenvalue
    T = lin.coord_transform
    sc = lin.coord_scales
    out = []
    used = np.zeros(lam_l.size, bool)
    for i in np.argsort(-np.real(lam)):
        w2 = -np.real(lam[i])
        omega = np.sqrt(max(w2, 0.0))
        f = omega / (2 * np.pi)
        j = int(np.argmin(np.where(used, np.inf, np.abs(lam_l - lam[i]))))
        used[j] = True
        phi = right[:, i]
        psi = left[:, j]
        rigid = f < rigid_tol_hz
        if rigid:
            zeta = float("nan")
        else:
            num = psi @ Dq @ phi
            den = psi @ phi
            zeta = float(np.real(-num / (2.0 * omega * den))) if den != 0 else float("nan")
        shape = _real_shape((T @ phi) * sc)
        desc = describe_shape(shape, lin.coord_names)
        out.append(Mode(frequency_hz=float(0.0 if rigid else f), damping_ratio=zeta, shape=shape,
                        description=("rigid body: " + desc) if rigid else desc, rigid=rigid))
    out.sort(key=lambda md: md.frequency_hz)
    # damped eigenvalues of the first-order system
    Ar = np.block([[J[pos][:, :m], A_qv], [A_vq, A_vv]])
    ev, vec = np.linalg.eig(Ar)
    damped = []
    for i in range(ev.size):
        l = ev[i]
        if l.imag < -1e-9 * max(1.0, abs(l)):
            continue
        a = abs(l)
        shape = _real_shape((T @ vec[:m, i]) * sc)
        damped.append(DampedEigenvalue(eigenvalue=complex(l), natural_frequency_hz=a / (2 * np.pi),
                                       damped_frequency_hz=abs(l.imag) / (2 * np.pi),
                                       damping_ratio=float(-l.real / a) if a > 0 else float("nan"),
                                       description=describe_shape(shape, lin.coord_names)))
    damped.sort(key=lambda d: d.natural_frequency_hz)
    return out, damped


def find_mode(mode_list: list[Mode], coordinate_substring: str, min_hz: float = 0.0) -> Mode:
    """The lowest non-rigid mode above ``min_hz`` whose largest component's name contains
    ``coordinate_substring`` (e.g. 'longitudinal'); raises ``LookupError``."""
    for md in mode_list:
        if md.rigid or md.frequency_hz < min_hz:
            continue
        first = md.description.split(",")[0]
        if coordinate_substring in first:
            return md
    raise LookupError(f"no mode dominated by {coordinate_substring!r} above {min_hz} Hz")
