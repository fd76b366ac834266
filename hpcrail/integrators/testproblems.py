"""Standard test problems for the integrators (tests and benchmarks), as module-level numba
functions with one parameter type (:class:`TestParams`) so that each method compiles once for all
of them and numba's disk cache is reused.

==================  ==============================================================================
problem             equations
==================  ==============================================================================
oscillator          y1' = y2, y2' = −ω² y1 (+ g for a falling ball); exact cos/sin solution
robertson           Robertson's chemical kinetics (HNW II §IV.1 eq 1.4), ODE or index-1 DAE
                    (y3 = 1 − y1 − y2 as an algebraic equation, mass diag(1, 1, 0))
van der Pol         y1' = y2, y2' = μ(1 − y1²) y2 − y1, μ = 1e3 (MATLAB ``vdp1000``)
linear chain        N masses m joined by springs k and dampers c, first mass pulled by F:
                    x_i' = v_i, m v_i' = k(x_{i−1} − 2x_i + x_{i+1}) + c(v_{i−1} − 2v_i + v_{i+1})
                    (free ends), block-tridiagonal, stiff for large c/m; exact by expm
==================  ==============================================================================

``TestParams.p`` holds the scalars of each problem (documented per function).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from hpcrail._numba import JIT
from hpcrail.integrators.collectives import barrier
from hpcrail.integrators.contract import Events, Problem
from hpcrail.integrators.linalg import JacobianPattern, band_index


class TestParams(NamedTuple):
    """Scalars ``p`` (float64[k]) of a test problem."""

    p: np.ndarray


def params(*values) -> TestParams:
    return TestParams(np.ascontiguousarray(values, dtype=np.float64))


@njit(**JIT)
def null_observe(t, y, p, acc):
    """Counts observer calls in ``acc[0]`` and tracks max(y[0]) in ``acc[1]``."""
    acc[0] += 1.0
    if y[0] > acc[1]:
        acc[1] = y[0]


# ---- oscillator / falling ball: p = [omega, g] -------------------------------------------------
@njit(**JIT)
def oscillator_rhs(t, y, p, dydt):
    w = p.p[0]
    dydt[0] = y[1]
    dydt[1] = -w * w * y[0] - p.p[1]


@njit(**JIT)
def oscillator_jac(t, y, p, vals):
    """Dense 2 × 2 pattern, row-major."""
    w = p.p[0]
    vals[0] = 0.0
    vals[1] = 1.0
    vals[2] = -w * w
    vals[3] = 0.0


@njit(**JIT)
def height_event(t, y, p, g):
    """g0 = y1 (ground contact of the falling ball), g1 = y2 (apex)."""
    g[0] = y[0]
    g[1] = y[1]


def oscillator(omega: float = 1.0, y0=(1.0, 0.0), with_jac: bool = True) -> Problem:
    """Harmonic oscillator; exact y1 = y1(0) cos ωt + y2(0)/ω sin ωt."""
    return Problem(oscillator_rhs, null_observe, params(omega, 0.0), np.array(y0, float),
                   jac=oscillator_jac if with_jac else None, jac_pattern=JacobianPattern.dense(2),
                   acc0=np.array([0.0, -np.inf]))


def oscillator_exact(t, omega=1.0, y0=(1.0, 0.0)):
    t = np.asarray(t, float)
    a, b = y0
    return np.stack([a * np.cos(omega * t) + b / omega * np.sin(omega * t),
                     -a * omega * np.sin(omega * t) + b * np.cos(omega * t)], axis=-1)


def falling_ball(h0: float = 10.0, v0: float = 3.0, g: float = 9.81, terminal: bool = True) -> Problem:
    """y1 height [m], y2 vertical speed [m/s]; events: ground (terminal, downward) and apex."""
    return Problem(oscillator_rhs, null_observe, params(0.0, g), np.array([h0, v0]),
                   jac=oscillator_jac, jac_pattern=JacobianPattern.dense(2),
                   events=Events(height_event, direction=[-1, -1], terminal=[terminal, False]),
                   acc0=np.array([0.0, -np.inf]))


# ---- Robertson: p = [k1, k2, k3, dae] ----------------------------------------------------------
@njit(**JIT)
def robertson_rhs(t, y, p, dydt):
    k1, k2, k3 = p.p[0], p.p[1], p.p[2]
    r1 = k1 * y[0]
    r2 = k2 * y[1] * y[2]
    r3 = k3 * y[1] * y[1]
    dydt[0] = -r1 + r2
    dydt[1] = r1 - r2 - r3
    if p.p[3] != 0.0:
        dydt[2] = y[0] + y[1] + y[2] - 1.0
    else:
        dydt[2] = r3


@njit(**JIT)
def robertson_jac(t, y, p, vals):
    """Dense 3 × 3, row-major."""
    k1, k2, k3 = p.p[0], p.p[1], p.p[2]
    vals[0] = -k1
    vals[1] = k2 * y[2]
    vals[2] = k2 * y[1]
    vals[3] = k1
    vals[4] = -k2 * y[2] - 2.0 * k3 * y[1]
    vals[5] = -k2 * y[1]
    if p.p[3] != 0.0:
        vals[6] = 1.0
        vals[7] = 1.0
        vals[8] = 1.0
    else:
        vals[6] = 0.0
        vals[7] = 2.0 * k3 * y[1]
        vals[8] = 0.0


def robertson(dae: bool = False, with_jac: bool = True) -> Problem:
    """Robertson (1966) kinetics, y(0) = (1, 0, 0), k = (0.04, 1e4, 3e7); atol scaled 1e-4 on y2."""
    return Problem(robertson_rhs, null_observe, params(0.04, 1e4, 3e7, 1.0 if dae else 0.0), np.array([1.0, 0, 0]),
                   atol_scale=np.array([1.0, 1e-4, 1.0]), jac=robertson_jac if with_jac else None,
                   jac_pattern=JacobianPattern.dense(3), mass=np.array([1.0, 1.0, 0.0]) if dae else None,
                   acc0=np.array([0.0, -np.inf]))


# ---- van der Pol: p = [mu] ---------------------------------------------------------------------
@njit(**JIT)
def vdp_rhs(t, y, p, dydt):
    mu = p.p[0]
    dydt[0] = y[1]
    dydt[1] = mu * (1.0 - y[0] * y[0]) * y[1] - y[0]


@njit(**JIT)
def vdp_jac(t, y, p, vals):
    mu = p.p[0]
    vals[0] = 0.0
    vals[1] = 1.0
    vals[2] = -2.0 * mu * y[0] * y[1] - 1.0
    vals[3] = mu * (1.0 - y[0] * y[0])


def van_der_pol(mu: float = 1e3, with_jac: bool = True) -> Problem:
    """y(0) = (2, 0) (MATLAB vdp1000 over [0, 3000])."""
    return Problem(vdp_rhs, null_observe, params(mu), np.array([2.0, 0.0]), jac=vdp_jac if with_jac else None,
                   jac_pattern=JacobianPattern.dense(2), acc0=np.array([0.0, -np.inf]))


# ---- linear chain: p = [N, k, c, m, F] ---------------------------------------------------------
@njit(**JIT)
def chain_rhs(t, y, p, dydt):
    _chain_masses(y, p, dydt, 0, int(p.p[0]))


@njit(inline="always", **JIT)
def _chain_masses(y, p, dydt, i0, i1):
    """Rates of the masses ``i0 <= i < i1`` of the linear chain."""
    N = int(p.p[0])
    k, c, m, F = p.p[1], p.p[2], p.p[3], p.p[4]
    inv_m = 1.0 / m
    for i in range(i0, i1):
        x = y[2 * i]
        v = y[2 * i + 1]
        fx = 0.0
        if i > 0:
            fx += k * (y[2 * i - 2] - x) + c * (y[2 * i - 1] - v)
        if i < N - 1:
            fx += k * (y[2 * i + 2] - x) + c * (y[2 * i + 3] - v)
        if i == 0:
            fx += F
        dydt[2 * i] = v
        dydt[2 * i + 1] = fx * inv_m


@njit(**JIT)
def chain_jac(t, y, p, vals):
    """Block-tridiagonal pattern (block 2 → band lower = upper = 3), values by
    :func:`~hpcrail.integrators.linalg.band_index`."""
    for q in range(vals.size):
        vals[q] = 0.0
    _chain_jac_rows(p, vals, 0, int(p.p[0]))


@njit(inline="always", **JIT)
def _chain_jac_rows(p, vals, i0, i1):
    """Jacobian values of the rows of masses ``i0 <= i < i1`` (slots ``[14·i0, 14·i1)``)."""
    N = int(p.p[0])
    k, c, m = p.p[1], p.p[2], p.p[3]
    w = 7  # lower + upper + 1
    for i in range(i0, i1):
        r = 2 * i
        vals[r * w + (r + 1) - r + 3] = 1.0
        r = 2 * i + 1
        nk = 0.0
        if i > 0:
            vals[r * w + (2 * i - 2) - r + 3] = k / m
            vals[r * w + (2 * i - 1) - r + 3] = c / m
            nk += 1.0
        if i < N - 1:
            vals[r * w + (2 * i + 2) - r + 3] = k / m
            vals[r * w + (2 * i + 3) - r + 3] = c / m
            nk += 1.0
        vals[r * w + (2 * i) - r + 3] = -nk * k / m
        vals[r * w + 3] = -nk * c / m


def linear_chain(N: int = 20, k: float = 1e6, c: float = 1e5, m: float = 1e3, F: float = 1e4,
                 with_jac: bool = True) -> Problem:
    """A stiff chain (damping rates c/m up to 4e2 /s for the defaults); states [x_i, v_i]."""
    assert band_index(1, 0, 3, 3) == 1 * 7 + 0 - 1 + 3
    return Problem(chain_rhs, null_observe, params(N, k, c, m, F), np.zeros(2 * N),
                   jac=chain_jac if with_jac else None, jac_pattern=JacobianPattern.block_tridiagonal(N, 2),
                   acc0=np.array([0.0, -np.inf]))


def chain_matrix(N, k, c, m, F):
    """(A, b) of the linear chain y' = A y + b."""
    A = np.zeros((2 * N, 2 * N))
    b = np.zeros(2 * N)
    for i in range(N):
        A[2 * i, 2 * i + 1] = 1.0
        for j in (i - 1, i + 1):
            if 0 <= j < N:
                A[2 * i + 1, 2 * j] += k / m
                A[2 * i + 1, 2 * j + 1] += c / m
                A[2 * i + 1, 2 * i] -= k / m
                A[2 * i + 1, 2 * i + 1] -= c / m
    b[1] = F / m
    return A, b


def chain_exact(t, N, k, c, m, F, y0=None):
    """Exact solution of the linear chain at times ``t`` (float64[k, 2N]) via the augmented
    matrix exponential."""
    from scipy.linalg import expm

    A, b = chain_matrix(N, k, c, m, F)
    n = 2 * N
    Aug = np.zeros((n + 1, n + 1))
    Aug[:n, :n] = A
    Aug[:n, n] = b
    z0 = np.zeros(n + 1)
    z0[:n] = 0.0 if y0 is None else y0
    z0[n] = 1.0
    return np.array([(expm(Aug * ti) @ z0)[:n] for ti in np.atleast_1d(t)])


# ---- failure cases: p = [k] -------------------------------------------------------------------
@njit(**JIT)
def blowup_rhs(t, y, p, dydt):
    """y' = k y²: y(0) = 1 blows up at t = 1/k."""
    dydt[0] = p.p[0] * y[0] * y[0]


@njit(**JIT)
def blowup_jac(t, y, p, vals):
    vals[0] = 2.0 * p.p[0] * y[0]


def blowup(k: float = 1.0) -> Problem:
    return Problem(blowup_rhs, null_observe, params(k), np.array([1.0]), jac=blowup_jac,
                   jac_pattern=JacobianPattern.dense(1), acc0=np.array([0.0, -np.inf]))


@njit(**JIT)
def relay_rhs(t, y, p, dydt):
    """y' = −k sign(y): reaches 0 at t = y(0)/k, where no implicit step has a solution (the
    implicit Euler equation y1 + h k sign(y1) = y0 has none for 0 < y0 < h k)."""
    if y[0] > 0.0:
        dydt[0] = -p.p[0]
    elif y[0] < 0.0:
        dydt[0] = p.p[0]
    else:
        dydt[0] = 0.0


def relay(k: float = 1.0, y0: float = 1.0) -> Problem:
    return Problem(relay_rhs, null_observe, params(k), np.array([y0]), acc0=np.array([0.0, -np.inf]))


# ---- the linear chain with its states in a random order: p = [N, k, c, m, F, perm...] ---------
@njit(**JIT)
def scrambled_chain_rhs(t, y, p, dydt):
    """:func:`chain_rhs` on states stored in the order ``perm`` (state q holds chain state perm[q]):
    not banded in its own order — the generic sparse path (reverse Cuthill-McKee) must find the band."""
    n = y.size
    ychain = np.empty(n)
    fchain = np.empty(n)
    for q in range(n):
        ychain[int(p.p[5 + q])] = y[q]
    chain_rhs(t, ychain, p, fchain)
    for q in range(n):
        dydt[q] = fchain[int(p.p[5 + q])]


def scrambled_chain(N: int = 20, seed: int = 0, k: float = 1e6, c: float = 1e5, m: float = 1e3, F: float = 1e4):
    """(problem, perm): the chain with a random state order and its sparsity pattern (no Jacobian
    function: finite differences over column groups)."""
    rng = np.random.default_rng(seed)
    n = 2 * N
    perm = rng.permutation(n)
    A, _ = chain_matrix(N, k, c, m, F)
    inv = np.empty(n, np.int64)
    inv[perm] = np.arange(n)
    r, cidx = np.nonzero(A + np.eye(n))
    pattern = JacobianPattern.sparse(n, inv[r], inv[cidx], ordering="auto")
    prob = Problem(scrambled_chain_rhs, null_observe, params(N, k, c, m, F, *perm), np.zeros(n),
                   jac_pattern=pattern, acc0=np.array([0.0, -np.inf]))
    return prob, perm


# ---- the linear chain on blocks (distributed state): p = [N, k, c, m, F, w, W, P, bounds (P+1)] ----------
# Every worker's ``TestParams.p`` is a view into one buffer: H header numbers per worker, then a region shared
# by all workers (4 exchange numbers per block and the barrier, an int64 view).  One parameter type for all the
# test problems: the integrators compiled for the suite serve the blocked runs too.
_BC_N, _BC_W, _BC_NW, _BC_P, _BC_BOUNDS = 0, 5, 6, 7, 8


@njit(**JIT)
def _bchain_parts(p):
    """``(w, W, P, own block range [b_lo, b_hi), exchange rows, barrier)`` of a blocked chain's parameters."""
    q = p.p
    w = int(q[_BC_W])
    W = int(q[_BC_NW])
    P = int(q[_BC_P])
    H = _BC_BOUNDS + P + 1 + 2
    sh = q[(W - w) * H:]
    xs = sh[:4 * P]
    bar = sh[4 * P:4 * P + 24].view(np.int64)
    b_lo = int(q[_BC_BOUNDS + P + 1])
    b_hi = int(q[_BC_BOUNDS + P + 2])
    return P, b_lo, b_hi, W, xs, bar


@njit(**JIT)
def _bchain_exchange(y, p):
    """Export the first and last mass of this worker's blocks, barrier, import the neighbours' into ``y``."""
    P, b_lo, b_hi, W, xs, bar = _bchain_parts(p)
    q = p.p
    for b in range(b_lo, b_hi):
        a = int(q[_BC_BOUNDS + b])
        z = int(q[_BC_BOUNDS + b + 1])
        xs[4 * b] = y[a]
        xs[4 * b + 1] = y[a + 1]
        xs[4 * b + 2] = y[z - 2]
        xs[4 * b + 3] = y[z - 1]
    barrier(bar, W, 4000)
    if b_lo > 0:
        a = int(q[_BC_BOUNDS + b_lo])
        y[a - 2] = xs[4 * (b_lo - 1) + 2]
        y[a - 1] = xs[4 * (b_lo - 1) + 3]
    if b_hi < P:
        z = int(q[_BC_BOUNDS + b_hi])
        y[z] = xs[4 * b_hi]
        y[z + 1] = xs[4 * b_hi + 1]
    return int(q[_BC_BOUNDS + b_lo]) // 2, int(q[_BC_BOUNDS + b_hi]) // 2, bar, W


@njit(**JIT)
def bchain_rhs(t, y, p, dydt):
    """:func:`chain_rhs` on this worker's masses (collective: neighbour exchange through the shared rows);
    the same arithmetic per mass."""
    i0, i1, bar, W = _bchain_exchange(y, p)
    _chain_masses(y, p, dydt, i0, i1)
    barrier(bar, W, 4000)


@njit(**JIT)
def bchain_jac(t, y, p, vals):
    """:func:`chain_jac`'s values in this worker's slots (rows of its masses: slots ``[7·a, 7·z)``)."""
    P, b_lo, b_hi, W, xs, bar = _bchain_parts(p)
    i0 = int(p.p[_BC_BOUNDS + b_lo]) // 2
    i1 = int(p.p[_BC_BOUNDS + b_hi]) // 2
    for q in range(14 * i0, 14 * i1):
        vals[q] = 0.0
    _chain_jac_rows(p, vals, i0, i1)


def blocked_chain(N: int = 12, blocks: int = 3, workers: int = 2, k: float = 1e6, c: float = 1e5, m: float = 1e3,
                  F: float = 1e4) -> Problem:
    """The linear chain split into ``blocks`` blocks of whole masses on ``workers`` threads (distributed state,
    :class:`~hpcrail.integrators.contract.BlockLayout`); exact solution :func:`chain_exact`."""
    from hpcrail.integrators.collectives import BAR_TIMEOUT, BAR_TIMEOUT_S
    from hpcrail.integrators.contract import BlockLayout

    P, W = blocks, workers
    cuts = np.linspace(0, N, P + 1).round().astype(np.int64)
    bounds = 2 * cuts
    grp = np.linspace(0, P, W + 1).round().astype(np.int64)
    H = _BC_BOUNDS + P + 1 + 2
    buf = np.zeros(W * H + 4 * P + 24)
    bar = buf[W * H + 4 * P:].view(np.int64)
    bar[BAR_TIMEOUT] = int(BAR_TIMEOUT_S * 1e9)
    ps = []
    for w in range(W):
        h = buf[w * H:w * H + H]
        h[:5] = N, k, c, m, F
        h[_BC_W], h[_BC_NW], h[_BC_P] = w, W, P
        h[_BC_BOUNDS:_BC_BOUNDS + P + 1] = bounds
        h[_BC_BOUNDS + P + 1], h[_BC_BOUNDS + P + 2] = grp[w], grp[w + 1]
        ps.append(TestParams(buf[w * H:]))
    slots = np.array([[7 * bounds[grp[w]], 7 * bounds[grp[w + 1]]] for w in range(W)], np.int64)
    lay = BlockLayout(bounds, grp, ps, slots=slots, tail=7 * 2 * N, bar=bar)
    return Problem(bchain_rhs, null_observe, ps[0], np.zeros(2 * N), jac=bchain_jac,
                   jac_pattern=JacobianPattern.block_tridiagonal(N, 2), acc0=np.array([0.0, -np.inf]), blocks=lay)
