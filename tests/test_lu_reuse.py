"""Jacobian/LU reuse across steps (CVODE's rules), the shared step-size controller and the
register-window band solve (issue 17)."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from hpcrail.integrators import integrate
from hpcrail.integrators.common import step_factor
from hpcrail.integrators.linalg import _band_lu_22, _band_lu_gen, _band_solve_22, _band_solve_gen, band_lu
from hpcrail.integrators.newton import DGMAX, needs_factorisation
from hpcrail.integrators.testproblems import chain_exact, linear_chain


@njit
def _sf(err, expo, safety, fmin, fmax, rej, h, h_old, err_old, pred):
    return step_factor(err, expo, safety, fmin, fmax, rej, h, h_old, err_old, pred)


def test_step_factor_elementary_predictive_and_limits():
    assert _sf(0.5, 1 / 3, 0.9, 0.2, 5.0, False, 1.0, 0.0, 0.0, False) == pytest.approx(0.9 * 0.5 ** (-1 / 3))
    assert _sf(8.0, 1 / 3, 0.9, 0.2, 5.0, False, 1.0, 0.0, 0.0, False) == pytest.approx(0.45)
    assert _sf(1e-12, 1 / 3, 0.9, 0.2, 5.0, False, 1.0, 0.0, 0.0, False) == 5.0
    assert _sf(1e6, 1 / 3, 0.9, 0.2, 5.0, False, 1.0, 0.0, 0.0, False) == 0.2
    assert _sf(0.01, 1 / 3, 0.9, 0.2, 5.0, True, 1.0, 0.0, 0.0, False) == 1.0      # no growth after a rejection
    assert _sf(np.nan, 1 / 3, 0.9, 0.2, 5.0, False, 1.0, 0.0, 0.0, False) == 0.2
    # Gustafsson: a growing error after a step increase damps the next increase
    e = _sf(0.5, 0.25, 0.9, 0.2, 10.0, False, 1.0, 1.0, 0.1, True)
    assert e == pytest.approx(0.9 * 0.5 ** -0.25 * (0.1 / 0.5) ** 0.25)
    # a shrinking error: the elementary factor (the prediction is capped at 1)
    assert _sf(0.5, 0.25, 0.9, 0.2, 10.0, False, 2.0, 1.0, 0.9, True) == pytest.approx(0.9 * 0.5 ** -0.25)


def test_refactorisation_threshold():
    assert needs_factorisation(1.0, 0.0)
    assert not needs_factorisation(1.0 + 0.99 * DGMAX, 1.0)
    assert needs_factorisation(1.0 + 1.01 * DGMAX, 1.0)
    assert needs_factorisation(1.0 - 1.01 * DGMAX, 1.0)


@pytest.mark.parametrize("nc", [6, 7, 9, 20, 491])
def test_register_window_band_solve_equals_the_generic_one_bitwise(nc):
    rng = np.random.default_rng(nc)
    ml = mu = 2
    w = 2 * ml + mu + 1
    A = np.zeros((nc, nc))
    for i in range(nc):
        for j in range(max(0, i - ml), min(nc, i + mu + 1)):
            A[i, j] = rng.normal()
    a = np.zeros(nc * w)
    for j in range(nc):
        for i in range(max(0, j - mu), min(nc, j + ml + 1)):
            a[j * w + ml + mu + i - j] = A[i, j]
    piv = np.zeros(nc, np.int64)
    assert band_lu(a, nc, ml, mu, piv)
    assert np.any(piv != np.arange(nc))          # row interchanges are exercised
    b = rng.normal(size=nc)
    x1, x2 = b.copy(), b.copy()
    _band_solve_gen(a, nc, ml, mu, piv, x1)
    _band_solve_22(a, nc, piv, x2)
    assert np.array_equal(x1, x2)
    assert np.abs(A @ x2 - b).max() <= 1e-10 * max(1.0, np.abs(x2).max())


@pytest.mark.parametrize("method", ["trbdf2", "esdirk3"])
def test_lu_reuse_keeps_the_solution_and_the_counters_consistent(method):
    """Stiff linear chain: with LU reuse the factorisations are far fewer than the steps, the
    solution stays within the tolerance of the exact one, and it agrees with an (almost) exact
    Newton solve (tolerance 1e-8 of the error unit) to a fraction of the tolerance."""
    N, T = 10, 0.5
    prob = linear_chain(N)
    t = np.linspace(0.0, T, 11)
    exact = chain_exact(t, N, 1e6, 1e5, 1e3, 1e4)
    scale = np.abs(exact).max(axis=0) + 1e-12
    rtol = 1e-5
    a = integrate(prob, method, t, T, rtol=rtol, atol=1e-9)
    b = integrate(prob, method, t, T, rtol=rtol, atol=1e-9, options={"newton_tol": 1e-8})
    assert a.success and b.success
    st = a.stats
    assert st["nlu"] < 0.5 * (st["steps"] + st["rejected"])
    assert 1 <= st["njev"] <= st["nlu"]
    assert st["newton_iterations"] <= st["nfev"]
    assert np.nanmax(np.abs(a.y - exact) / scale) < 50 * rtol
    assert np.nanmax(np.abs(a.y - b.y) / scale) < 10 * rtol
    assert b.stats["newton_iterations"] > st["newton_iterations"]


@pytest.mark.parametrize("nc", [1, 2, 3, 7, 50])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_unrolled_band_lu_equals_the_generic_one_bitwise(nc, dtype):
    rng = np.random.default_rng(nc)
    w = 7
    a = np.zeros(nc * w, dtype)
    for j in range(nc):
        for i in range(max(0, j - 2), min(nc, j + 3)):
            a[j * w + 4 + i - j] = rng.normal() * (1.0 + 0.5j if dtype is np.complex128 else 1.0)
    b = a.copy()
    p1, p2 = np.zeros(nc, np.int64), np.zeros(nc, np.int64)
    assert _band_lu_gen(a, nc, 2, 2, p1) == _band_lu_22(b, nc, p2)
    assert np.array_equal(a, b) and np.array_equal(p1, p2)
