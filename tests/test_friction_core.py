"""Static friction forces and stick/slip mode selection of Oprea 2018 §4 against brute force.

* the O(N) rigid-cluster solution equals the literal generalised inverse
  T_s = (W̃ᵀM⁻¹W̃)⁺W̃ᵀM⁻¹h̃ (Oprea 2018 eq 16, hpcrail sign) for random masses, forces and stick sets;
* the §4.1 selection (with the consistency check of released connections) equals the unique
  consistent mode set found by enumerating all 3^m stick / slip+ / slip− assignments, and the
  solution of the box-constrained QP (Gauss's acceleration energy over admissible friction forces)
  solved by scipy on larger systems;
* Table 1 at t = 0: only connection 1 breaks away (the literal all-at-once release of §4.1 would
  also release connection 2, which then decelerates against its own friction).
"""
import itertools

import numpy as np
import pytest
from scipy.optimize import lsq_linear

from hpcrail.models.couplers.dry_friction import (
    MODE_BREAK_NEG, MODE_BREAK_POS, MODE_OFF, MODE_STICK, SELECT_FAILED, constraint_matrix, delassus,
    rigid_clusters, select_contacts, static_friction_gi,
)


def _random_system(rng, n):
    m = rng.uniform(20e3, 130e3, n)
    h = rng.normal(0.0, 40e3, n)
    return m, h


@pytest.mark.parametrize("seed", range(20))
def test_rigid_clusters_equal_generalised_inverse(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 14))
    m, h = _random_system(rng, n)
    stick = rng.random(n - 1) < 0.6
    mode = np.where(stick, MODE_STICK, MODE_OFF).astype(np.int64)
    a = h / m
    T = np.zeros(n - 1)
    rigid_clusters(mode, m, a, T)
    T_gi = static_friction_gi(m, h, stick)
    assert np.allclose(T[stick], T_gi[stick], rtol=1e-10, atol=1e-6 * np.abs(h).max())
    # the constrained accelerations: sticking connections have zero relative acceleration and
    # M a = h − W T (hpcrail sign: connection k acts −T on vehicle k, +T on vehicle k+1)
    W = constraint_matrix(n)
    Tfull = np.where(stick, T_gi, 0.0)
    a_ref = (h - W @ Tfull) / m
    assert np.allclose(a, a_ref, rtol=1e-10, atol=1e-12)
    assert np.allclose((W.T @ a)[stick], 0.0, atol=1e-12)


def _consistent(cand_idx, modes, m, a0, lim, tol=1e-9):
    """Forces and accelerations of one candidate assignment, or None if it is not consistent."""
    n = m.size
    mode = np.full(n - 1, MODE_OFF, np.int64)
    mode[cand_idx] = modes
    a = a0.copy()
    T = np.zeros(n - 1)
    for k in cand_idx:
        if mode[k] != MODE_STICK:
            tk = lim[k] if mode[k] > 0 else -lim[k]
            T[k] = tk
            a[k] -= tk / m[k]
            a[k + 1] += tk / m[k + 1]
    rigid_clusters(mode, m, a, T)
    for k in cand_idx:
        if mode[k] == MODE_STICK and abs(T[k]) > lim[k] * (1 + tol):
            return None
        if mode[k] != MODE_STICK:
            d = 1.0 if mode[k] > 0 else -1.0
            if d * (a[k] - a[k + 1]) < -tol * np.abs(a0).max():
                return None
    return mode, T, a


@pytest.mark.parametrize("seed", range(40))
def test_mode_selection_equals_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 7))
    m, h = _random_system(rng, n)
    cand = (rng.random(n - 1) < 0.8).astype(np.int64)
    if not cand.any():
        cand[0] = 1
    lim = rng.uniform(5e3, 60e3, n - 1)
    # non-candidates slide with a known force, included in a0
    fixed = np.where(cand == 0, rng.choice([-1.0, 1.0], n - 1) * lim, 0.0)
    hh = h.copy()
    hh[:-1] -= fixed
    hh[1:] += fixed
    a0 = hh / m
    idx = np.flatnonzero(cand)
    found = []
    for combo in itertools.product((MODE_STICK, MODE_BREAK_POS, MODE_BREAK_NEG), repeat=idx.size):
        r = _consistent(idx, np.array(combo), m, a0, lim)
        if r is not None:
            found.append(r)
    assert len(found) >= 1
    # uniqueness up to ties: all consistent sets give the same forces
    for r in found[1:]:
        assert np.allclose(r[1][idx], found[0][1][idx], rtol=1e-7, atol=1e-6)
    mode = np.where(cand == 1, MODE_STICK, MODE_OFF).astype(np.int64)   # provisional: all stick (§4.1)
    a = np.zeros(n)
    T = np.zeros(n - 1)
    it = select_contacts(cand, mode, lim, m, a0, a, T, 1e-9, 1e-9 * np.abs(a0).max(), 200)
    assert it != SELECT_FAILED
    assert np.allclose(T[idx], found[0][1][idx], rtol=1e-7, atol=1e-6)
    assert np.allclose(a, found[0][2], rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("seed,n", [(0, 100), (1, 100), (2, 100), (3, 100), (4, 300)])
def test_mode_selection_equals_box_qp(seed, n):
    """Hundreds of vehicles: the selection minimises Gauss's acceleration energy
    ½ TᵀAT − ë₀ᵀT over |T| ≤ T_sMax (A = WᵀM⁻¹W), solved independently by scipy (BVLS)."""
    rng = np.random.default_rng(1000 + seed)
    m, h = _random_system(rng, n)
    lim = rng.uniform(5e3, 60e3, n - 1)
    cand = np.ones(n - 1, np.int64)
    a0 = h / m
    A = delassus(m)
    e0 = constraint_matrix(n).T @ a0          # relative accelerations without friction
    R = np.linalg.cholesky(A).T               # A = RᵀR;  ½TᵀAT − e0ᵀT = ½|RT − c|² + const, Rᵀc = e0
    c = np.linalg.solve(R.T, e0)
    qp = lsq_linear(R, c, bounds=(-lim, lim), method="bvls", tol=1e-14)
    mode = np.full(n - 1, MODE_STICK, np.int64)
    a = np.zeros(n)
    T = np.zeros(n - 1)
    it = select_contacts(cand, mode, lim, m, a0, a, T, 1e-9, 1e-12, 10 * n + 50)
    assert it != SELECT_FAILED
    assert np.allclose(T, qp.x, rtol=1e-6, atol=1e-6 * lim.max())
    # sliding connections sit at their limit and accelerate along their direction
    sl = mode != MODE_STICK
    assert np.allclose(np.abs(T[sl]), lim[sl])
    d = np.sign(T[sl])
    assert np.all(d * (a[:-1] - a[1:])[sl] >= -1e-9)
    assert sl.any() and (~sl).any()


def test_table1_initial_modes():
    """Oprea 2018 Table 1 at t = 0 (F = 10 kN on vehicle 1 of 6 x 25 t, T_sMax = 5 kN): with all
    connections sticking they would carry F(6−k)/6 = 8.33, 6.67, 5, 3.33, 1.67 kN (the GI formula);
    the consistent set releases connection 1 only: vehicle 1 accelerates at (10−5)/25 = 0.2 m/s²,
    vehicles 2-6 at 5/125 = 0.04 m/s², and connections 2-5 carry 4, 3, 2, 1 kN."""
    n = 6
    m = np.full(n, 25e3)
    h = np.zeros(n)
    h[0] = 10e3
    T_all = static_friction_gi(m, h, np.ones(n - 1, bool))
    assert np.allclose(T_all, 10e3 * (n - np.arange(1, n)) / n)
    cand = np.ones(n - 1, np.int64)
    mode = np.full(n - 1, MODE_STICK, np.int64)
    a = np.zeros(n)
    T = np.zeros(n - 1)
    select_contacts(cand, mode, np.full(n - 1, 5e3), m, h / m, a, T, 1e-9, 1e-12, 100)
    assert list(mode) == [MODE_BREAK_POS] + [MODE_STICK] * 4
    assert np.allclose(T, [5e3, 4e3, 3e3, 2e3, 1e3])
    assert np.allclose(a, [0.2] + [0.04] * 5)
    # the literal all-at-once release (connections 1 and 2) is not consistent: connection 2 would
    # slide in draft while its extension rate decreases (a_2 − a_3 = 0 − 0.05 < 0)
    lit = np.array([MODE_BREAK_POS, MODE_BREAK_POS, MODE_STICK, MODE_STICK, MODE_STICK])
    a_lit = h / m
    T_lit = np.zeros(n - 1)
    for k in (0, 1):
        a_lit[k] -= 5e3 / m[k]
        a_lit[k + 1] += 5e3 / m[k + 1]
    rigid_clusters(lit, m, a_lit, T_lit)
    assert a_lit[1] - a_lit[2] < 0
