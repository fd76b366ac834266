"""The sparse linear algebra of the implicit methods: pattern analysis (band widths, border, RCM,
finite-difference column groups) and the bordered-band LU against dense numpy solves."""
import numpy as np
import pytest

from hpcrail.integrators import testproblems as tp
from hpcrail.integrators.linalg import (
    JacobianPattern, analyse, band_index, bordered_lu, build_spec, fd_values, form_matrix, lin_size,
    matvec_state_order, scatter_values, solve_state_order,
)


def dense_of(pattern, vals):
    A = np.zeros((pattern.n, pattern.n))
    ok = (pattern.rows >= 0) & (pattern.cols >= 0)
    np.add.at(A, (pattern.rows[ok], pattern.cols[ok]), vals[ok])
    return A


def random_pattern(n, ml, mu, border, rng, extra=0):
    """Band pattern plus dense rows/columns for the border states and a few far entries."""
    rows, cols = [], []
    for i in range(n):
        for j in range(max(0, i - ml), min(n, i + mu + 1)):
            rows.append(i)
            cols.append(j)
    for b in border:
        for j in range(n):
            rows += [b, j]
            cols += [j, b]
    for _ in range(extra):
        rows.append(int(rng.integers(n)))
        cols.append(int(rng.integers(n)))
    return np.array(rows), np.array(cols)


def solve_with_layout(pattern, vals, c, mass, b, dtype=float):
    lay = analyse(pattern)
    spec = build_spec(lay, pattern, True, False)
    J = np.zeros(lin_size(spec))
    scatter_values(vals, spec, J)
    LU = np.zeros(J.size, dtype)
    form_matrix(J, LU, c, mass, spec)
    piv = np.zeros(pattern.n, np.int64)
    assert bordered_lu(LU, spec, piv, np.zeros(pattern.n, dtype))
    x = b.astype(dtype).copy()
    solve_state_order(LU, spec, piv, x, np.zeros(pattern.n, dtype))
    return x, lay, spec, J


@pytest.mark.parametrize("dtype,c", [(float, 3.0), (complex, 2.0 - 1.5j)])
@pytest.mark.parametrize("n,ml,mu,border,order", [
    (40, 2, 2, [], "natural"),          # a chain
    (40, 3, 1, [39, 17], "natural"),    # chain with two global states (border)
    (60, 1, 2, [5], "rcm"),             # reordered
    (12, 11, 11, [], "dense"),          # dense
])
def test_bordered_band_solve_matches_dense(n, ml, mu, border, order, dtype, c):
    rng = np.random.default_rng(n + ml)
    rows, cols = random_pattern(n, ml, mu, border, rng)
    pat = JacobianPattern.sparse(n, rows, cols, border=border if order != "dense" else None, ordering=order)
    vals = rng.standard_normal(rows.size)
    mass = rng.uniform(0.5, 2.0, n)
    mass[::7] = 0.0  # algebraic states: c·M − J stays regular through J
    b = rng.standard_normal(n)
    x, lay, spec, J = solve_with_layout(pat, vals, c, mass, b, dtype)
    A = c * np.diag(mass) - dense_of(pat, vals)
    np.testing.assert_allclose(x, np.linalg.solve(A, b.astype(dtype)), rtol=1e-9, atol=1e-9)
    # the stored Jacobian reproduces J·x
    out = np.zeros(n)
    v = rng.standard_normal(n)
    matvec_state_order(J, spec, v, out)
    np.testing.assert_allclose(out, dense_of(pat, vals) @ v, rtol=1e-12, atol=1e-12)
    if order == "dense":
        assert lay.nb == n and lay.nc == 0
    else:
        assert lay.nb == len(border)


def test_pivoting_handles_zero_diagonal():
    """A band matrix whose leading entries vanish needs row interchanges within the band."""
    n = 30
    pat = JacobianPattern.banded(n, 2, 2)
    rng = np.random.default_rng(1)
    vals = rng.standard_normal(pat.nnz)
    for i in range(n):
        vals[band_index(i, i, 2, 2)] = 0.0     # c·M − J has diagonal c·m_i − J_ii = 0 with c = 0
    mass = np.ones(n)
    b = rng.standard_normal(n)
    x, *_ = solve_with_layout(pat, vals, 0.0, mass, b)
    np.testing.assert_allclose(dense_of(pat, -vals) @ x, b, rtol=1e-9, atol=1e-9)


def test_analyse_band_widths_and_reordering():
    # natural chain order
    lay = analyse(JacobianPattern.block_tridiagonal(50, 2))
    assert (lay.ml, lay.mu, lay.nb) == (3, 3, 0)
    # a randomly permuted tridiagonal matrix is found banded again by reverse Cuthill-McKee
    n = 200
    rng = np.random.default_rng(3)
    perm = rng.permutation(n)
    i = np.arange(n)
    rows = np.concatenate([i, i[1:], i[:-1]])
    cols = np.concatenate([i, i[:-1], i[1:]])
    pat = JacobianPattern.sparse(n, perm[rows], perm[cols], ordering="auto")
    lay = analyse(pat)
    assert lay.ml + lay.mu <= 4 and lay.nb == 0
    # a dense row/column is detected and bordered automatically
    rows2 = np.concatenate([rows, np.full(n, 7), np.arange(n)])
    cols2 = np.concatenate([cols, np.arange(n), np.full(n, 7)])
    lay = analyse(JacobianPattern.sparse(n, rows2, cols2, border=None))
    assert lay.nb == 1 and lay.perm[-1] == 7 and lay.ml + lay.mu <= 4


def test_fd_groups_are_structurally_orthogonal_and_exact_on_a_linear_chain():
    """Curtis-Powell-Reid groups: the chain Jacobian from 7 RHS calls equals the analytic one."""
    prob = tp.linear_chain(N=30)
    pat = prob.jac_pattern
    lay = analyse(pat)
    spec = build_spec(lay, pat, False, True)
    assert lay.ngroups == 7                 # band width 7, not n = 60 columns
    ok = pat.rows >= 0
    M = np.zeros((pat.n, pat.n), int)
    np.add.at(M, (pat.rows[ok], pat.cols[ok]), 1)
    for g in range(lay.ngroups):
        members = lay.gcol[lay.gptr[g]:lay.gptr[g + 1]]
        assert M[:, members].sum(axis=1).max() <= 1   # no row sees two columns of a group
    y = np.random.default_rng(5).standard_normal(pat.n)
    f0 = np.empty(pat.n)
    prob.rhs(0.0, y, prob.params, f0)
    vals_fd = np.zeros(pat.nnz)
    nf = fd_values(prob.rhs, prob.params, 0.0, y, f0, spec, vals_fd, np.empty(pat.n), np.empty(pat.n))
    assert nf == 7
    vals = np.zeros(pat.nnz)
    prob.jac(0.0, y, prob.params, vals)
    np.testing.assert_allclose(dense_of(pat, vals_fd), dense_of(pat, vals), rtol=1e-6, atol=1e-3)


@pytest.mark.parametrize("dtype,c", [(float, 3.0), (complex, 2.0 - 1.5j)])
def test_local_blocks_eliminated_into_the_band_match_dense(dtype, c):
    """A chain (band 2, one global state in the border) with three dense local blocks, each reading a few chain
    states near its place and read by one chain row (a mixed train's wagons): the solve, the stored J·x and the
    band widths (the fill stays inside the band) agree with dense algebra."""
    rng = np.random.default_rng(7)
    nchain, glob = 60, 60
    blocks = [np.arange(61, 61 + 9), np.arange(70, 70 + 5), np.arange(75, 75 + 12)]
    n = 75 + 12
    rows, cols = random_pattern(nchain, 2, 2, [], rng)
    rows, cols = list(rows), list(cols)
    for j in range(nchain):                              # the global state: read by every chain row
        rows += [j, glob]
        cols += [glob, j]
    rows.append(glob)
    cols.append(glob)
    for b, at in zip(blocks, (10, 31, 58)):
        K = [k for k in range(at - 2, at + 3) if 0 <= k < nchain]
        for r in b:
            for q in list(b) + K:
                rows.append(r)
                cols.append(q)
        for q in b:
            rows.append(at)
            cols.append(q)
    pat = JacobianPattern.sparse(n, np.array(rows), np.array(cols), border=[glob], ordering="natural")
    pat = pat.with_blocks(blocks)
    vals = rng.standard_normal(pat.nnz)
    mass = rng.uniform(0.5, 2.0, n)
    mass[::11] = 0.0
    b = rng.standard_normal(n)
    x, lay, spec, J = solve_with_layout(pat, vals, c, mass, b, dtype)
    A = c * np.diag(mass) - dense_of(pat, vals)
    np.testing.assert_allclose(x, np.linalg.solve(A, b.astype(dtype)), rtol=1e-9, atol=1e-9)
    assert (lay.ml, lay.mu, lay.nb) == (2, 2, 1)         # no fill outside the chain's band
    out = np.zeros(n)
    v = rng.standard_normal(n)
    matvec_state_order(J, spec, v, out)
    np.testing.assert_allclose(out, dense_of(pat, vals) @ v, rtol=1e-12, atol=1e-12)
    # an entry joining two blocks is refused
    with pytest.raises(ValueError, match="two local blocks"):
        analyse(JacobianPattern.sparse(n, np.array(rows + [61]), np.array(cols + [70])).with_blocks(blocks))


@pytest.mark.parametrize("dtype,c", [(float, 3.0), (complex, 2.0 - 1.5j)])
@pytest.mark.parametrize("border", [[], [7]])
def test_decoupled_states_leave_the_band_with_the_same_bits(monkeypatch, dtype, c, border):
    """States whose rows and columns hold only the diagonal (a pneumatic brake's reservoirs and pistons under
    ``jacobian: reduced``) go after the coupled core states and skip the band LU and solves: the solution
    equals numpy's dense solve, and it is bitwise the one of the plain band layout (the band did the same
    arithmetic with zero multipliers), interleaved with coupled chains as a brake's states are."""
    from hpcrail.integrators import linalg

    rng = np.random.default_rng(5)
    n = 150
    coupled = np.array([i for i in range(n) if i % 3 != 2])     # every third state decoupled: 50 of 150
    rows, cols = [], []
    for k, i in enumerate(coupled):                               # a chain over the coupled states
        for j in coupled[max(0, k - 2):k + 3]:
            rows.append(i)
            cols.append(j)
    for i in range(2, n, 3):                                      # the decoupled ones: diagonal only
        rows.append(i)
        cols.append(i)
    for b in border:                                              # a global state read by every coupled row
        for j in coupled:
            rows += [b, int(j)]
            cols += [int(j), b]
    rows, cols = np.array(rows), np.array(cols)
    pat = JacobianPattern.sparse(n, rows, cols, border=np.array(border, np.int64) if border else None,
                                 ordering="natural")
    vals = rng.standard_normal(rows.size)
    mass = rng.uniform(0.5, 2.0, n)
    b = rng.standard_normal(n)
    x, lay, spec, _J = solve_with_layout(pat, vals, c, mass, b, dtype)
    assert lay.nd == 50 and lay.ml == 2 and lay.mu == 2
    assert np.all(np.isin(lay.perm[lay.nc - lay.nd:lay.nc], np.arange(2, n, 3)))
    A = c * np.diag(mass) - dense_of(pat, vals)
    np.testing.assert_allclose(x, np.linalg.solve(A, b.astype(dtype)), rtol=1e-10, atol=1e-10)
    monkeypatch.setattr(linalg, "DECOUPLED_MIN", 10 ** 9)         # the plain band layout
    x0, lay0, _s, _J0 = solve_with_layout(pat, vals, c, mass, b, dtype)
    assert lay0.nd == 0 and lay0.ml + lay0.mu >= lay.ml + lay.mu
    assert np.array_equal(x, x0)
