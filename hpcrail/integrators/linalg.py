"""Sparse Jacobians for the implicit methods: declared patterns, their analysis, and numba kernels
for a *bordered banded* LU factorisation with partial pivoting (real or complex).

Every Jacobian the integrators see is described by a :class:`JacobianPattern`: ``nnz`` entries
``(rows[k], cols[k])``.  A model's ``jac(t, y, params, vals)`` writes ``vals[k] = ∂f_rows[k]/∂y_cols[k]``
(float64[nnz], the same numba signature as ``rhs``); without a model Jacobian the integrators
compute ``vals`` by finite differences over structurally orthogonal column groups (Curtis, Powell
& Reid 1974).

Internally the states are permuted so that the matrix is *bordered banded* ::

        [ A  B ]    A: nc × nc banded (lower/upper bandwidths ml, mu)
        [ C  D ]    B, C, D: dense border of nb states (nb = n − nc)

which covers a train chain (block-tridiagonal: banded in the natural vehicle-major order) with a
few global states (an applied notch, work integrals), a generic sparse pattern (reverse
Cuthill-McKee ordering, dense rows/columns moved to the border) and a dense matrix (nc = 0, the
"JAC OFF" case of paper 000 Tables 3-4).  The factorisation is a band LU of A (LAPACK ``dgbtf2``
layout and algorithm, partial pivoting within the band), then the Schur complement
S = D − C A⁻¹ B (dense LU with partial pivoting).  Cost O(nc·ml·(ml+mu) + nb·nc·(2ml+mu) + nb³).

Storage of one bordered-banded matrix (float64 or complex128, flat, length ``lin_size``):

=========  ====================================  ==================================================
offset     block                                 element
=========  ====================================  ==================================================
0          band of A, nc rows of width w         ``[c*w + ml+mu + r-c]`` = A[r, c], w = 2ml+mu+1
                                                 (the first ml entries of a row hold LU fill-in)
nc*w       Bᵀ (nb × nc)                          ``[b*nc + r]`` = B[r, b]   (after LU: A⁻¹B)
+nb*nc     C (nb × nc)                           ``[a*nc + c]`` = C[a, c]
+nb*nc     D (nb × nb)                           ``[a*nb + b]`` = D[a, b]   (after LU: LU of S)
=========  ====================================  ==================================================

**Local blocks** (``JacobianPattern.blocks``; the detailed vehicles of a mixed train, issue 27).  A pattern may
name groups of states whose rows and columns touch the rest of the matrix in a few places only (each group a
dense block D_d: the states of one multibody wagon; its rows read a few states K_d of the rest, a few rows R_d
of the rest read it).  They are eliminated first, block by block, into the bordered-banded matrix of the other
states (the *reduced* matrix, whose analysis includes the fill R_d × K_d)::

        [ M_red  B_d ]      S = M_red − Σ_d B_d D_d⁻¹ C_d     (only the |R_d| × |K_d| entries change)
        [ C_d    D_d ]

so the cost is linear in the number of blocks: per block a dense LU of D_d, |K_d| solves for W_d = D_d⁻¹ C_d and
the |R_d| × |K_d| update; a solve is x_d ← D_d⁻¹ b_d, b_red ← b_red − B_d x_d, the reduced solve, then
x_d ← x_d − W_d x_red[K_d] (block Gaussian elimination / static condensation, Golub & Van Loan §3.2.10; with
the blocks of a mixed train R_d × K_d lies inside the train's band: the band does not widen).  Storage after the
reduced matrix, per block: D_d (m × m, row-major; its LU after factorisation), B_d (|R_d| × m, row-major) and
C_d transposed (|K_d| × m; W_d after factorisation).  Internal order: the reduced states (band core, border),
then the blocks' states block by block.

Sources: Golub & Van Loan, *Matrix Computations* (4th ed.) §4.3 (band LU with pivoting) and §3.2;
Anderson et al., *LAPACK Users' Guide* (``dgbtrf``/``dgbtrs`` storage); Curtis, Powell & Reid,
J. Inst. Maths Applics 13 (1974) 117-119 (column grouping); Cuthill & McKee (1969), George (1971).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT, JIT_NRT_FREE

# ---- layout of the int64 ``spec`` array passed to every method ---------------------------------
SP_N = 0            #: number of states n
SP_HAS_JAC = 1      #: 1: the model's jac fills the values; 0: finite differences
SP_NNZ = 2          #: number of pattern entries (length of the jac value array)
SP_ML = 3           #: lower bandwidth of the core block A (permuted order)
SP_MU = 4           #: upper bandwidth of A
SP_NB = 5           #: border size nb
SP_NC = 6           #: core size nc = n − nb
SP_NGROUPS = 7      #: number of finite-difference column groups
SP_NEV = 8          #: number of event functions
SP_MASS = 9         #: 1 if the (diagonal) mass matrix is not the identity
SP_PERMUTED = 10    #: 1 if the internal order is not the natural order
SP_OFF_PERM = 11    #: offset of perm[n]: internal index -> state index
SP_OFF_IPERM = 12   #: offset of iperm[n]: state index -> internal index
SP_OFF_DEST = 13    #: offset of dest[nnz]: storage position of each value (-1: not stored)
SP_OFF_ROWS = 14    #: offset of rows[nnz] (state indices)
SP_OFF_CPTR = 15    #: offset of the FD column pointer [n+1] into SP_OFF_CVAL
SP_OFF_CVAL = 16    #: offset of the FD value indices, grouped by column
SP_OFF_GPTR = 17    #: offset of the group pointer [ngroups+1] into SP_OFF_GCOL
SP_OFF_GCOL = 18    #: offset of the columns of each group
SP_OFF_EVDIR = 19   #: offset of the event directions (-1, 0, +1) [nev]
SP_OFF_EVTERM = 20  #: offset of the event terminal flags [nev]
SP_PERM_FROM = 21   #: first internal index whose state is not the same index (n if none)
SP_C_ZERO = 22      #: 1 if the pattern has no entry in the border rows' core columns (C = 0 structurally)
SP_NLB = 23         #: number of local blocks (see the module docstring; 0: none)
SP_OFF_LB = 24      #: offset of the local-block records (LB_REC int64 each) in ``spec``
SP_LB_SIZE = 25     #: storage length of the local blocks (after the reduced bordered-band matrix)
SP_ND = 26          #: the last nd core states are decoupled (diagonal-only rows and columns): no band work
SP_HEADER = 28
#: fewest decoupled core states :func:`analyse` moves after the coupled ones (fewer: the plain band)
DECOUPLED_MIN = 32

#: one local-block record: first internal index, size m, |R|, |K|, storage offsets of D, B, Cᵀ, and the offset in
#: ``spec`` of its index arrays (R internal indices [|R|], K internal indices [|K|], fill positions [|R|·|K|])
LB_START, LB_M, LB_NR, LB_NK, LB_OD, LB_OB, LB_OC, LB_OI = range(8)
LB_REC = 8


# ================================================================================================
# patterns (Python)
# ================================================================================================
@dataclasses.dataclass
class JacobianPattern:
    """Sparsity pattern of ∂f/∂y and the order in which a model's ``jac`` writes its values.

    Attributes
    ----------
    n : number of states.
    rows, cols : int64[nnz] state indices of entry k; ``vals[k]`` of ``jac`` is ∂f_rows[k]/∂y_cols[k].
        Entries with a negative row or column are placeholders (ignored); duplicates add up.
    border : state indices forced into the dense border (global states such as a train's applied
        notch or work integrals); ``None`` lets :meth:`analyse` pick dense rows/columns.
    ordering : ``"natural"`` keeps the state order for the banded core (right for chains written
        vehicle-major), ``"rcm"`` uses reverse Cuthill-McKee, ``"auto"`` the smaller bandwidth,
        ``"dense"`` puts every state in the border (dense LU).
    blocks : tuple of int64 arrays: groups of states eliminated first as dense local blocks (module docstring);
        the ordering and border then apply to the other states.  No entry may join two blocks.

    Build it with :meth:`dense`, :meth:`banded`, :meth:`block_tridiagonal` or :meth:`sparse`.
    """

    n: int
    rows: np.ndarray
    cols: np.ndarray
    border: np.ndarray | None = None
    ordering: str = "auto"
    kind: str = "sparse"
    blocks: tuple = ()

    def __post_init__(self):
        self.rows = np.ascontiguousarray(self.rows, dtype=np.int64)
        self.cols = np.ascontiguousarray(self.cols, dtype=np.int64)
        if self.rows.shape != self.cols.shape or self.rows.ndim != 1:
            raise ValueError("rows and cols must be 1-D arrays of the same length")
        if self.rows.size and (self.rows.max() >= self.n or self.cols.max() >= self.n):
            raise ValueError(f"pattern entries must be < n = {self.n}")
        if self.border is not None:
            self.border = np.unique(np.asarray(self.border, dtype=np.int64))
            if self.border.size and (self.border.min() < 0 or self.border.max() >= self.n):
                raise ValueError(f"border indices must lie in [0, {self.n})")
        if self.ordering not in ("natural", "rcm", "auto", "dense"):
            raise ValueError(f"ordering {self.ordering!r}: allowed natural, rcm, auto, dense")
        self.blocks = tuple(np.ascontiguousarray(b, dtype=np.int64) for b in self.blocks)
        if self.blocks:
            seen = np.concatenate(self.blocks)
            if any(b.size == 0 for b in self.blocks) or seen.min() < 0 or seen.max() >= self.n or \
                    np.unique(seen).size != seen.size:
                raise ValueError(f"local blocks must be non-empty, disjoint sets of states in [0, {self.n})")
            if self.border is not None and np.isin(self.border, seen).any():
                raise ValueError("a state cannot be both in the border and in a local block")

    @property
    def nnz(self) -> int:
        return int(self.rows.size)

    # ---- constructors ----------------------------------------------------------------------
    @classmethod
    def dense(cls, n: int) -> "JacobianPattern":
        """Full n × n pattern; ``vals[i*n + j]`` = ∂f_i/∂y_j (row-major); dense LU."""
        i, j = np.divmod(np.arange(n * n, dtype=np.int64), n)
        return cls(n, i, j, border=None, ordering="dense", kind="dense")

    @classmethod
    def banded(cls, n: int, lower: int, upper: int) -> "JacobianPattern":
        """Band pattern; ``vals[band_index(i, j, lower, upper)]`` = ∂f_i/∂y_j for
        ``i − lower ≤ j ≤ i + upper`` (slots outside the matrix are ignored)."""
        w = lower + upper + 1
        k = np.arange(n * w, dtype=np.int64)
        i, d = np.divmod(k, w)
        j = i + d - lower
        ok = (j >= 0) & (j < n)
        return cls(n, np.where(ok, i, -1), np.where(ok, j, -1), border=np.zeros(0, np.int64),
                   ordering="natural", kind="banded")

    @classmethod
    def block_tridiagonal(cls, n_blocks: int, block: int) -> "JacobianPattern":
        """Block-tridiagonal pattern (``n_blocks`` blocks of ``block`` states, block-major):
        stored as the band with lower = upper = 2·block − 1; values as in :meth:`banded`."""
        b = 2 * block - 1
        return cls.banded(n_blocks * block, b, b)

    @classmethod
    def sparse(cls, n: int, rows, cols, border=None, ordering: str = "auto") -> "JacobianPattern":
        """Generic pattern; ``vals[k]`` belongs to ``(rows[k], cols[k])``."""
        return cls(n, rows, cols, border=border, ordering=ordering, kind="sparse")

    def with_ordering(self, ordering: str) -> "JacobianPattern":
        return dataclasses.replace(self, ordering=ordering)

    def with_blocks(self, blocks) -> "JacobianPattern":
        """The same entries with ``blocks`` (int arrays of state indices) eliminated as local blocks."""
        return dataclasses.replace(self, blocks=tuple(blocks))


def band_index(i: int, j: int, lower: int, upper: int) -> int:
    """Position of ∂f_i/∂y_j in the value array of :meth:`JacobianPattern.banded`."""
    return i * (lower + upper + 1) + j - i + lower


def _bandwidths(rows, cols, pos, nc):
    """(ml, mu) of the entries (rows, cols) of the core after the permutation ``pos``."""
    if rows.size == 0:
        return 0, 0
    pr, pc = pos[rows], pos[cols]
    core = (pr < nc) & (pc < nc)
    if not np.any(core):
        return 0, 0
    d = pr[core] - pc[core]
    return int(max(0, d.max())), int(max(0, -d.min()))


def _greedy_groups(n, rows, cols, row_ok, col_ok):
    """Structurally orthogonal column groups (greedy colouring, Curtis-Powell-Reid) of the columns
    ``col_ok`` restricted to the rows ``row_ok``; the other columns get a group each."""
    import scipy.sparse as sp

    keep = row_ok[rows] & col_ok[cols]
    A = sp.csc_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(n, n))
    A.data[:] = 1.0
    # columns conflict when they share a row: greedy colouring in order of decreasing degree
    G = (A.T @ A).tocsr()
    order = np.argsort(-np.diff(A.indptr), kind="stable")
    color = -np.ones(n, np.int64)
    ncol = 0
    mark = np.full(n + 1, -1, np.int64)
    for c in order:
        if not col_ok[c]:
            continue
        nb = G.indices[G.indptr[c]:G.indptr[c + 1]]
        used = color[nb]
        used = used[used >= 0]
        mark[used] = c
        k = 0
        while mark[k] == c:
            k += 1
        color[c] = k
        ncol = max(ncol, k + 1)
    for c in range(n):
        if color[c] < 0:
            color[c] = ncol
            ncol += 1
    return color, ncol


@dataclasses.dataclass
class LinearLayout:
    """Result of :func:`analyse`: the internal order and the bordered-band sizes."""

    n: int
    ml: int
    mu: int
    nb: int
    nc: int
    perm: np.ndarray        #: internal index -> state index
    dest: np.ndarray        #: storage position of each pattern value, -1 if not stored
    ngroups: int
    cptr: np.ndarray
    cval: np.ndarray
    gptr: np.ndarray
    gcol: np.ndarray
    #: local blocks: int64[nlb, LB_REC] records and their index arrays (concatenated; offsets LB_OI relative to it)
    lb: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, LB_REC), np.int64))
    lb_index: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    lb_size: int = 0
    #: the last ``nd`` core states (internal order) are decoupled: their rows and columns hold only the diagonal
    nd: int = 0

    @property
    def size(self) -> int:
        return lin_size_py(self.nc, self.ml, self.mu, self.nb) + self.lb_size


def lin_size_py(nc, ml, mu, nb) -> int:
    """Storage length of a bordered-banded matrix without local blocks (see :func:`spec_lin_size_py`)."""
    return nc * (2 * ml + mu + 1) + 2 * nb * nc + nb * nb


def spec_lin_size_py(spec) -> int:
    """Storage length of one matrix (J or its LU) of a ``spec``, local blocks included."""
    return lin_size_py(int(spec[SP_NC]), int(spec[SP_ML]), int(spec[SP_MU]), int(spec[SP_NB])) + int(spec[SP_LB_SIZE])


def analyse(pattern: JacobianPattern, max_border: int | None = None) -> LinearLayout:
    """Choose the internal order (band core + dense border), the storage map and the
    finite-difference column groups of a pattern.

    Border: the given ``pattern.border``, or (``None``) every state whose row or column holds more
    than ``max(16, 8 × median)`` entries.  Core order: natural or reverse Cuthill-McKee (smaller
    ml+mu for ``"auto"``).  When the band would be wider than a dense LU is worth
    (w > nc/3), everything goes to the border.  Local blocks (``pattern.blocks``): :func:`_analyse_blocks`.
    """
    if pattern.blocks:
        return _analyse_blocks(pattern)
    n = pattern.n
    ok = (pattern.rows >= 0) & (pattern.cols >= 0)
    rows, cols = pattern.rows[ok], pattern.cols[ok]
    if pattern.ordering == "dense" or n <= 8:
        border = np.arange(n, dtype=np.int64)
    elif pattern.border is not None:
        border = pattern.border
    else:
        rc = np.bincount(rows, minlength=n)
        cc = np.bincount(cols, minlength=n)
        lim = max(16, 8 * int(np.median(np.maximum(rc, cc))) if n else 16)
        border = np.flatnonzero((rc > lim) | (cc > lim)).astype(np.int64)
        if max_border is not None and border.size > max_border:
            border = np.arange(n, dtype=np.int64)
    is_border = np.zeros(n, bool)
    is_border[border] = True
    core = np.flatnonzero(~is_border)
    nb = int(border.size)
    nc = n - nb
    # candidate core orders
    orders = []
    if pattern.ordering in ("natural", "auto"):
        orders.append(core)
    if pattern.ordering in ("rcm", "auto") and nc > 2:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import reverse_cuthill_mckee

        cidx = -np.ones(n, np.int64)
        cidx[core] = np.arange(nc)
        m = (~is_border[rows]) & (~is_border[cols])
        A = sp.csr_matrix((np.ones(int(m.sum())), (cidx[rows[m]], cidx[cols[m]])), shape=(nc, nc))
        A = ((A + A.T) != 0).astype(np.float64).tocsr()
        orders.append(core[reverse_cuthill_mckee(A, symmetric_mode=True)])
    best = None
    for order in orders:
        perm = np.concatenate([order, border]).astype(np.int64)
        pos = np.empty(n, np.int64)
        pos[perm] = np.arange(n)
        ml, mu = _bandwidths(rows, cols, pos, nc)
        if best is None or ml + mu < best[1] + best[2]:
            best = (perm, ml, mu)
    if best is None:  # everything in the border
        best = (np.concatenate([core, border]).astype(np.int64), 0, 0)
    perm, ml, mu = best
    nd = 0
    if nc > 0:
        # decoupled states (no off-diagonal entry in their row or column) after the coupled ones, in the same
        # relative order: the band LU and solves then stop before them (their factor is 1/diagonal: the same
        # arithmetic the band would do with zero multipliers); only when there are many (a pneumatic brake's
        # reservoirs and pistons under ``jacobian: reduced``: 60 % of the states)
        off = rows != cols
        deg = np.bincount(rows[off], minlength=n) + np.bincount(cols[off], minlength=n)
        core_order = perm[:nc]
        dec = deg[core_order] == 0
        if int(dec.sum()) >= DECOUPLED_MIN:
            perm = np.concatenate([core_order[~dec], core_order[dec], perm[nc:]]).astype(np.int64)
            nd = int(dec.sum())
            pos = np.empty(n, np.int64)
            pos[perm] = np.arange(n)
            ml, mu = _bandwidths(rows, cols, pos, nc)
    if nc > 0 and (2 * ml + mu + 1) * 3 > nc and nb < n:
        # a band this wide is a dense matrix in disguise
        return analyse(pattern.with_ordering("dense"))
    pos = np.empty(n, np.int64)
    pos[perm] = np.arange(n)
    w = 2 * ml + mu + 1
    dest = -np.ones(pattern.nnz, np.int64)
    kk = np.flatnonzero(ok)
    r, c = pos[pattern.rows[kk]], pos[pattern.cols[kk]]
    d = np.empty(kk.size, np.int64)
    a_ = (r < nc) & (c < nc)
    d[a_] = c[a_] * w + ml + mu + r[a_] - c[a_]
    b_ = (r < nc) & (c >= nc)      # B, stored transposed
    d[b_] = nc * w + (c[b_] - nc) * nc + r[b_]
    c_ = (r >= nc) & (c < nc)      # C
    d[c_] = nc * w + nb * nc + (r[c_] - nc) * nc + c[c_]
    d_ = (r >= nc) & (c >= nc)     # D
    d[d_] = nc * w + 2 * nb * nc + (r[d_] - nc) * nb + (c[d_] - nc)
    dest[kk] = d
    ngroups, cptr, cval, gptr, gcol = _fd_groups(pattern, is_border)
    return LinearLayout(n=n, ml=ml, mu=mu, nb=nb, nc=nc, perm=perm, dest=dest, ngroups=int(ngroups),
                        cptr=cptr, cval=cval, gptr=gptr, gcol=gcol, nd=nd)


def _fd_groups(pattern: JacobianPattern, is_border: np.ndarray):
    """Finite-difference column groups ``(ngroups, cptr, cval, gptr, gcol)``: the columns coloured on the
    non-border rows; border columns alone; border-row entries of core columns cannot be separated -> left out
    (treated as zero)."""
    n = pattern.n
    ok = (pattern.rows >= 0) & (pattern.cols >= 0)
    color, ngroups = _greedy_groups(n, pattern.rows[ok], pattern.cols[ok], ~is_border, ~is_border)
    kk = np.flatnonzero(ok)
    usable = ~(is_border[pattern.rows[kk]] & ~is_border[pattern.cols[kk]]) if kk.size else np.zeros(0, bool)
    kk = kk[usable]
    order = np.argsort(pattern.cols[kk], kind="stable")
    cval = kk[order].astype(np.int64)
    cptr = np.zeros(n + 1, np.int64)
    np.add.at(cptr, pattern.cols[cval] + 1, 1)
    cptr = np.cumsum(cptr)
    gcol = np.argsort(color, kind="stable").astype(np.int64)
    gptr = np.zeros(ngroups + 1, np.int64)
    np.add.at(gptr, color + 1, 1)
    gptr = np.cumsum(gptr)
    return ngroups, cptr, cval, gptr, gcol


def _analyse_blocks(pattern: JacobianPattern) -> LinearLayout:
    """:func:`analyse` of a pattern with local blocks (module docstring): the reduced matrix (the other states,
    with the fill R_d × K_d of every block) is analysed as a bordered band; the blocks follow in the internal
    order.  Raises ``ValueError`` if an entry joins two blocks."""
    n = pattern.n
    bid = -np.ones(n, np.int64)
    for d, b in enumerate(pattern.blocks):
        bid[b] = d
    red = np.flatnonzero(bid < 0)
    n_red = red.size
    ridx = -np.ones(n, np.int64)
    ridx[red] = np.arange(n_red)
    ok = (pattern.rows >= 0) & (pattern.cols >= 0)
    kk = np.flatnonzero(ok)
    r, c = pattern.rows[kk], pattern.cols[kk]
    rb, cb = bid[r], bid[c]
    if np.any((rb >= 0) & (cb >= 0) & (rb != cb)):
        raise ValueError("a Jacobian entry joins two local blocks: local blocks must only touch the other states")
    Rs, Ks = [], []
    for d in range(len(pattern.blocks)):
        Rs.append(np.unique(r[(rb < 0) & (cb == d)]))
        Ks.append(np.unique(c[(rb == d) & (cb < 0)]))
    both = (rb < 0) & (cb < 0)
    fr = [np.repeat(ridx[R], K.size) for R, K in zip(Rs, Ks)]
    fc = [np.tile(ridx[K], R.size) for R, K in zip(Rs, Ks)]
    nrr = int(both.sum())
    rrows = np.concatenate([ridx[r[both]]] + fr).astype(np.int64)
    rcols = np.concatenate([ridx[c[both]]] + fc).astype(np.int64)
    border = None if pattern.border is None else ridx[pattern.border]
    lay = analyse(JacobianPattern(n_red, rrows, rcols, border=border, ordering=pattern.ordering))
    pos_red = np.empty(n_red, np.int64)
    pos_red[lay.perm] = np.arange(n_red)
    perm = np.concatenate([red[lay.perm]] + list(pattern.blocks)).astype(np.int64)
    pos = np.empty(n, np.int64)
    pos[perm] = np.arange(n)
    L0 = lay.size
    dest = -np.ones(pattern.nnz, np.int64)
    dest[kk[both]] = lay.dest[:nrr]
    recs, idx = [], []
    off = L0
    start = n_red
    fpos = nrr
    for d, b in enumerate(pattern.blocks):
        m, R, K = b.size, Rs[d], Ks[d]
        oD, oB = off, off + m * m
        oC = oB + R.size * m
        local = -np.ones(n, np.int64)
        local[b] = np.arange(m)
        rloc = -np.ones(n, np.int64)
        rloc[R] = np.arange(R.size)
        kloc = -np.ones(n, np.int64)
        kloc[K] = np.arange(K.size)
        sel = (rb == d) & (cb == d)
        dest[kk[sel]] = oD + local[r[sel]] * m + local[c[sel]]
        sel = (rb < 0) & (cb == d)
        dest[kk[sel]] = oB + rloc[r[sel]] * m + local[c[sel]]
        sel = (rb == d) & (cb < 0)
        dest[kk[sel]] = oC + kloc[c[sel]] * m + local[r[sel]]
        fill = lay.dest[fpos:fpos + R.size * K.size]
        fpos += R.size * K.size
        if np.any(fill < 0):
            raise ValueError("internal: a local block's fill has no place in the reduced matrix")
        recs.append([start, m, R.size, K.size, oD, oB, oC, sum(len(a) for a in idx)])
        idx.append(np.concatenate([pos_red[ridx[R]], pos_red[ridx[K]], fill]).astype(np.int64))
        off = oC + K.size * m
        start += m
    # finite-difference groups coloured on every row: a border row of the reduced matrix may read a block's
    # columns (a mixed train's LTD speed row reads its wagon), which the border exemption would drop
    ngroups, cptr, cval, gptr, gcol = _fd_groups(pattern, np.zeros(n, bool))
    return LinearLayout(n=n, ml=lay.ml, mu=lay.mu, nb=lay.nb, nc=lay.nc, perm=perm, dest=dest, ngroups=int(ngroups),
                        cptr=cptr, cval=cval, gptr=gptr, gcol=gcol, lb=np.array(recs, np.int64).reshape(-1, LB_REC),
                        lb_index=np.concatenate(idx) if idx else np.zeros(0, np.int64), lb_size=int(off - L0),
                        nd=lay.nd)


def build_spec(layout: LinearLayout, pattern: JacobianPattern, has_jac: bool, mass_identity: bool,
               ev_direction=(), ev_terminal=()) -> np.ndarray:
    """Pack a layout, the event flags and the mass-matrix flag into the int64 ``spec`` array."""
    n = layout.n
    nnz = pattern.nnz
    nev = len(ev_direction)
    parts = [layout.perm, np.argsort(layout.perm), layout.dest, np.where(pattern.rows >= 0, pattern.rows, 0),
             layout.cptr, layout.cval, layout.gptr, layout.gcol,
             np.asarray(ev_direction, np.int64), np.asarray(ev_terminal, np.int64)]
    head = np.zeros(SP_HEADER, np.int64)
    head[SP_N], head[SP_HAS_JAC], head[SP_NNZ] = n, int(has_jac), nnz
    head[SP_ML], head[SP_MU], head[SP_NB], head[SP_NC] = layout.ml, layout.mu, layout.nb, layout.nc
    head[SP_NGROUPS], head[SP_NEV], head[SP_MASS] = layout.ngroups, nev, int(not mass_identity)
    head[SP_PERMUTED] = int(not np.array_equal(layout.perm, np.arange(n)))
    moved = np.flatnonzero(layout.perm != np.arange(n))
    head[SP_PERM_FROM] = int(moved[0]) if moved.size else n
    w = 2 * layout.ml + layout.mu + 1
    c0 = layout.nc * w + layout.nb * layout.nc
    head[SP_C_ZERO] = int(not np.any((layout.dest >= c0) & (layout.dest < c0 + layout.nb * layout.nc)))
    if layout.lb.shape[0]:
        head[SP_C_ZERO] = 0     # the blocks' fill may reach the border rows' core columns: test at run time
    off = SP_HEADER
    for slot, arr in zip((SP_OFF_PERM, SP_OFF_IPERM, SP_OFF_DEST, SP_OFF_ROWS, SP_OFF_CPTR, SP_OFF_CVAL,
                          SP_OFF_GPTR, SP_OFF_GCOL, SP_OFF_EVDIR, SP_OFF_EVTERM), parts):
        head[slot] = off
        off += len(arr)
    nlb = layout.lb.shape[0]
    head[SP_NLB], head[SP_LB_SIZE] = nlb, layout.lb_size
    head[SP_ND] = layout.nd
    head[SP_OFF_LB] = off
    lb = layout.lb.copy()
    lb[:, LB_OI] += off + nlb * LB_REC       # index arrays follow the records
    parts += [lb.ravel(), layout.lb_index]
    return np.ascontiguousarray(np.concatenate([head] + [np.asarray(p, np.int64) for p in parts]))


def trivial_spec(n: int, ev_direction=(), ev_terminal=()) -> np.ndarray:
    """A ``spec`` for explicit methods (no Jacobian storage), with event flags."""
    lay = LinearLayout(n=n, ml=0, mu=0, nb=0, nc=n, perm=np.arange(n, dtype=np.int64),
                       dest=np.zeros(0, np.int64), ngroups=0, cptr=np.zeros(n + 1, np.int64),
                       cval=np.zeros(0, np.int64), gptr=np.zeros(1, np.int64), gcol=np.zeros(0, np.int64))
    pat = JacobianPattern(n, np.zeros(0, np.int64), np.zeros(0, np.int64), border=np.zeros(0, np.int64))
    return build_spec(lay, pat, False, True, ev_direction, ev_terminal)


# ================================================================================================
# numba kernels
# ================================================================================================
@njit(inline="always", **JIT)
def lin_size(spec):
    """Length of one bordered-banded matrix storage for ``spec``."""
    nc = spec[SP_NC]
    nb = spec[SP_NB]
    return nc * (2 * spec[SP_ML] + spec[SP_MU] + 1) + 2 * nb * nc + nb * nb + spec[SP_LB_SIZE]


@njit(**JIT_NRT_FREE)
def _band_lu_22(a, nc, piv):
    """:func:`band_lu` for ml = mu = 2 with the loops unrolled (same operations, same results)."""
    w = 7
    ju = 0
    ok = True
    for j in range(nc):
        cj = j * w + 4
        rest = nc - 1 - j
        p = 0
        amax = abs(a[cj])
        if rest >= 1:
            v = abs(a[cj + 1])
            if v > amax:
                amax = v
                p = 1
        if rest >= 2:
            v = abs(a[cj + 2])
            if v > amax:
                amax = v
                p = 2
        piv[j] = j + p
        if amax == 0.0:
            ok = False
            continue
        jl = min(j + 2 + p, nc - 1)
        if jl > ju:
            ju = jl
        if p != 0:
            for c in range(j, ju + 1):
                d1 = c * (w - 1) + 4 + j
                tmp = a[d1]
                a[d1] = a[d1 + p]
                a[d1 + p] = tmp
        inv = 1.0 / a[cj]
        a[cj] = inv
        if rest >= 2:
            l1 = a[cj + 1] * inv
            l2 = a[cj + 2] * inv
            a[cj + 1] = l1
            a[cj + 2] = l2
            for c in range(j + 1, ju + 1):
                base = c * (w - 1) + 4 + j
                ajc = a[base]
                a[base + 1] -= l1 * ajc
                a[base + 2] -= l2 * ajc
        elif rest == 1:
            l1 = a[cj + 1] * inv
            a[cj + 1] = l1
            for c in range(j + 1, ju + 1):
                base = c * (w - 1) + 4 + j
                a[base + 1] -= l1 * a[base]
    return ok


@njit(**JIT_NRT_FREE)
def band_lu(a, nc, ml, mu, piv):
    """In-place band LU with partial pivoting of the core block (``dgbtf2``); the diagonal of U is
    stored as its reciprocal (solves multiply).  Returns False when a pivot is exactly zero."""
    if ml == 2 and mu == 2:
        return _band_lu_22(a, nc, piv)
    return _band_lu_gen(a, nc, ml, mu, piv)


@njit(**JIT_NRT_FREE)
def _band_lu_gen(a, nc, ml, mu, piv):
    """:func:`band_lu` for any bandwidths."""
    w = 2 * ml + mu + 1
    kv = ml + mu
    ju = 0
    ok = True
    for j in range(nc):
        cj = j * w + kv
        km = min(ml, nc - 1 - j)
        p = 0
        amax = abs(a[cj])
        for i in range(1, km + 1):
            v = abs(a[cj + i])
            if v > amax:
                amax = v
                p = i
        piv[j] = j + p
        if amax == 0.0:
            ok = False
            continue
        jl = min(j + mu + p, nc - 1)
        if jl > ju:
            ju = jl
        if p != 0:
            for c in range(j, ju + 1):
                d1 = c * w + kv + j - c
                tmp = a[d1]
                a[d1] = a[d1 + p]
                a[d1 + p] = tmp
        inv = 1.0 / a[cj]
        a[cj] = inv
        for i in range(1, km + 1):
            a[cj + i] *= inv
        for c in range(j + 1, ju + 1):
            base = c * w + kv + j - c
            ajc = a[base]
            for i in range(1, km + 1):
                a[base + i] -= a[cj + i] * ajc
    return ok


@njit(**JIT_NRT_FREE)
def _band_solve_22(a, nc, piv, x):
    """:func:`band_solve` for ml = mu = 2 (a train without air brake: 2 states per vehicle) with the
    unknowns of the recurrences held in registers: each row then costs the latency of its
    multiply-adds instead of a store/load round trip through memory (2-3x faster, measured)."""
    w = 7
    kv = 4
    if nc < 6:
        _band_solve_gen(a, nc, 2, 2, piv, x)
        return
    # forward: L with row interchanges; window (x0, x1, x2) = x[j : j+3]
    x0 = x[0]
    x1 = x[1]
    x2 = x[2]
    for j in range(nc):
        p = piv[j] - j
        if p == 1:
            t_ = x0
            x0 = x1
            x1 = t_
        elif p == 2:
            t_ = x0
            x0 = x2
            x2 = t_
        x[j] = x0
        cj = j * w + kv
        if j + 2 < nc:
            x1 -= a[cj + 1] * x0
            x2 -= a[cj + 2] * x0
            x0 = x1
            x1 = x2
            x2 = x[j + 3] if j + 3 < nc else 0.0
        elif j + 1 < nc:
            x1 -= a[cj + 1] * x0
            x0 = x1
    # backward: U (upper bandwidth 4, diagonal stored inverted); window x[j-4 : j] pending updates
    j = nc - 1
    u1 = x[j - 1]
    u2 = x[j - 2]
    u3 = x[j - 3]
    u4 = x[j - 4]
    xj = x[j] * a[j * w + kv]
    x[j] = xj
    while j > 0:
        cj = j * w + kv
        u1 -= a[cj - 1] * xj
        u2 -= a[cj - 2] * xj
        u3 -= a[cj - 3] * xj
        u4 -= a[cj - 4] * xj
        j -= 1
        xj = u1 * a[j * w + kv]
        x[j] = xj
        u1 = u2
        u2 = u3
        u3 = u4
        u4 = x[j - 4] if j >= 4 else 0.0
    return


@njit(**JIT_NRT_FREE)
def band_solve(a, nc, ml, mu, piv, x):
    """Solve A x = b in place with the factors of :func:`band_lu` (``dgbtrs``)."""
    if ml == 2 and mu == 2:
        _band_solve_22(a, nc, piv, x)
    else:
        _band_solve_gen(a, nc, ml, mu, piv, x)


@njit(**JIT_NRT_FREE)
def _band_solve_gen(a, nc, ml, mu, piv, x):
    """:func:`band_solve` for any bandwidths."""
    w = 2 * ml + mu + 1
    kv = ml + mu
    if ml > 0:
        for j in range(nc):
            p = piv[j]
            xj = x[p]
            if p != j:
                x[p] = x[j]
                x[j] = xj
            km = min(ml, nc - 1 - j)
            cj = j * w + kv
            for i in range(1, km + 1):
                x[j + i] -= a[cj + i] * xj
    for j in range(nc - 1, -1, -1):
        cj = j * w + kv
        xj = x[j] * a[cj]
        x[j] = xj
        lm = min(j, kv)
        for i in range(1, lm + 1):
            x[j - i] -= a[cj - i] * xj


@njit(**JIT_NRT_FREE)
def dense_lu(s, m, piv):
    """In-place LU with partial pivoting of the row-major m × m matrix ``s`` (flat)."""
    ok = True
    for k in range(m):
        p = k
        amax = abs(s[k * m + k])
        for i in range(k + 1, m):
            v = abs(s[i * m + k])
            if v > amax:
                amax = v
                p = i
        piv[k] = p
        if amax == 0.0:
            ok = False
            continue
        if p != k:
            for c in range(m):
                tmp = s[k * m + c]
                s[k * m + c] = s[p * m + c]
                s[p * m + c] = tmp
        inv = 1.0 / s[k * m + k]
        for i in range(k + 1, m):
            lik = s[i * m + k] * inv
            s[i * m + k] = lik
            if lik != 0.0:
                for c in range(k + 1, m):
                    s[i * m + c] -= lik * s[k * m + c]
    return ok


@njit(**JIT_NRT_FREE)
def dense_solve(s, m, piv, x):
    """Solve with the factors of :func:`dense_lu`, in place (``x`` of length m)."""
    for k in range(m):
        p = piv[k]
        if p != k:
            tmp = x[k]
            x[k] = x[p]
            x[p] = tmp
    for i in range(m):
        acc = x[i]
        for c in range(i):
            acc -= s[i * m + c] * x[c]
        x[i] = acc
    for i in range(m - 1, -1, -1):
        acc = x[i]
        for c in range(i + 1, m):
            acc -= s[i * m + c] * x[c]
        x[i] = acc / s[i * m + i]


@njit(inline="always", **JIT_NRT_FREE)
def _c_is_zero(a, oc, nb, nc):
    for k in range(oc, oc + nb * nc):
        if a[k] != 0.0:
            return False
    return True


@njit(**JIT_NRT_FREE)
def _eliminate_local_blocks(a, spec, piv):
    """Factorise every local block D_d, W_d = D_d⁻¹ C_d in place of C_dᵀ, and subtract B_d W_d from the reduced
    matrix (module docstring).  False if a block is singular."""
    ok = True
    ob = spec[SP_OFF_LB]
    for d in range(spec[SP_NLB]):
        q = ob + d * LB_REC
        st = spec[q + LB_START]
        m = spec[q + LB_M]
        nr = spec[q + LB_NR]
        nk = spec[q + LB_NK]
        od = spec[q + LB_OD]
        obb = spec[q + LB_OB]
        oc = spec[q + LB_OC]
        oi = spec[q + LB_OI]
        if not dense_lu(a[od:od + m * m], m, piv[st:st + m]):
            ok = False
            continue
        for k in range(nk):
            dense_solve(a[od:od + m * m], m, piv[st:st + m], a[oc + k * m:oc + (k + 1) * m])
        for i in range(nr):
            for k in range(nk):
                acc = a[obb + i * m] * a[oc + k * m]
                for u in range(1, m):
                    acc += a[obb + i * m + u] * a[oc + k * m + u]
                a[spec[oi + nr + nk + i * nk + k]] -= acc
    return ok


@njit(**JIT_NRT_FREE)
def bordered_lu(a, spec, piv, tmp):
    """Factorise a bordered-banded matrix in place (layout in the module docstring), its local blocks first.

    When the border rows do not depend on the core (C = 0: global states driven only by
    themselves, such as a train's applied notch), the matrix is block triangular: S = D and no
    A⁻¹B is formed.  ``piv``: int64[n]; ``tmp``: work vector of length ≥ nc with the dtype of
    ``a``.  Returns False if the matrix is singular to working precision.
    """
    if spec[SP_NLB] > 0:
        okb = _eliminate_local_blocks(a, spec, piv)
        return _reduced_lu(a, spec, piv) and okb
    return _reduced_lu(a, spec, piv)


@njit(**JIT_NRT_FREE)
def core_lu(a, spec, piv):
    """Band LU of the core block (the reduced matrix's ``[0, nc)``), in place: :func:`band_lu` over the
    coupled states, then the reciprocal diagonal of the ``spec[SP_ND]`` decoupled ones after them (what the
    band LU stores for a row and column without off-diagonal entries).  ``a``: the storage of
    :func:`lin_size` (float64 or complex128; its first nc·(2·ml+mu+1) entries, column-major band), ``piv``
    int64[≥ nc] row interchanges.  Returns False when a pivot is exactly zero (no exception).
    Source: LAPACK ``dgbtf2`` (Anderson et al., LAPACK Users' Guide); Golub & Van Loan §4.3."""
    nc = spec[SP_NC]
    nd = spec[SP_ND]
    ml = spec[SP_ML]
    mu = spec[SP_MU]
    w = 2 * ml + mu + 1
    kv = ml + mu
    ncb = nc - nd
    ok = True
    if ncb > 0:
        ok = band_lu(a, ncb, ml, mu, piv)
    for j in range(ncb, nc):
        piv[j] = j
        d = a[j * w + kv]
        if d == 0.0:
            ok = False
            continue
        a[j * w + kv] = 1.0 / d
    return ok


@njit(**JIT_NRT_FREE)
def core_solve(a, spec, piv, x):
    """Solve with the core factors of :func:`core_lu` in place: ``x`` (float64 or complex128, length ≥ nc, the
    internal order) holds the right-hand side's first nc entries and receives the solution there; ``a``,
    ``piv`` as for :func:`core_lu`.  Raises nothing.  Source: LAPACK ``dgbtrs``."""
    nc = spec[SP_NC]
    nd = spec[SP_ND]
    ml = spec[SP_ML]
    mu = spec[SP_MU]
    w = 2 * ml + mu + 1
    kv = ml + mu
    ncb = nc - nd
    if ncb > 0:
        band_solve(a, ncb, ml, mu, piv, x[:ncb])
    for j in range(ncb, nc):
        x[j] = x[j] * a[j * w + kv]


@njit(**JIT_NRT_FREE)
def _reduced_lu(a, spec, piv):
    """:func:`bordered_lu` of the bordered-banded (reduced) matrix."""
    nc = spec[SP_NC]
    nb = spec[SP_NB]
    ml = spec[SP_ML]
    mu = spec[SP_MU]
    w = 2 * ml + mu + 1
    ok = True
    if nc > 0:
        ok = core_lu(a, spec, piv)
    if nb == 0:
        return ok
    ob = nc * w
    oc = ob + nb * nc
    od = oc + nb * nc
    if nc > 0 and spec[SP_C_ZERO] == 0 and not _c_is_zero(a, oc, nb, nc):
        # Z = A^-1 B, column by column (B stored transposed: contiguous columns)
        for b in range(nb):
            core_solve(a, spec, piv, a[ob + b * nc:ob + (b + 1) * nc])
        # S = D - C Z
        for i in range(nb):
            for b in range(nb):
                acc = a[od + i * nb + b]
                for c in range(nc):
                    acc -= a[oc + i * nc + c] * a[ob + b * nc + c]
                a[od + i * nb + b] = acc
    ok2 = dense_lu(a[od:od + nb * nb], nb, piv[nc:nc + nb])
    return ok and ok2


@njit(**JIT_NRT_FREE)
def bordered_solve(a, spec, piv, x):
    """Solve M x = b in place (internal order) with the factors of :func:`bordered_lu`."""
    nlb = spec[SP_NLB]
    if nlb == 0:
        _reduced_solve(a, spec, piv, x)
        return
    ob = spec[SP_OFF_LB]
    for d in range(nlb):     # x_d ← D_d⁻¹ b_d; b_red ← b_red − B_d x_d
        q = ob + d * LB_REC
        st = spec[q + LB_START]
        m = spec[q + LB_M]
        nr = spec[q + LB_NR]
        od = spec[q + LB_OD]
        obb = spec[q + LB_OB]
        oi = spec[q + LB_OI]
        dense_solve(a[od:od + m * m], m, piv[st:st + m], x[st:st + m])
        for i in range(nr):
            acc = a[obb + i * m] * x[st]
            for u in range(1, m):
                acc += a[obb + i * m + u] * x[st + u]
            x[spec[oi + i]] -= acc
    _reduced_solve(a, spec, piv, x)
    for d in range(nlb):     # x_d ← x_d − W_d x_red[K_d]
        q = ob + d * LB_REC
        st = spec[q + LB_START]
        m = spec[q + LB_M]
        nr = spec[q + LB_NR]
        nk = spec[q + LB_NK]
        oc = spec[q + LB_OC]
        oi = spec[q + LB_OI]
        for k in range(nk):
            xk = x[spec[oi + nr + k]]
            if xk != 0.0:
                for u in range(m):
                    x[st + u] -= a[oc + k * m + u] * xk


@njit(**JIT_NRT_FREE)
def _reduced_solve(a, spec, piv, x):
    """:func:`bordered_solve` of the bordered-banded (reduced) matrix on ``x[:nc + nb]``."""
    nc = spec[SP_NC]
    nb = spec[SP_NB]
    ml = spec[SP_ML]
    mu = spec[SP_MU]
    w = 2 * ml + mu + 1
    if nb == 0:
        core_solve(a, spec, piv, x)
        return
    ob = nc * w
    oc = ob + nb * nc
    od = oc + nb * nc
    if nc == 0:
        dense_solve(a[od:od + nb * nb], nb, piv[0:nb], x)
        return
    if spec[SP_C_ZERO] != 0 or _c_is_zero(a, oc, nb, nc):
        # block triangular: the border first, then the core with B·x2 moved to the right-hand side
        dense_solve(a[od:od + nb * nb], nb, piv[nc:nc + nb], x[nc:nc + nb])
        for b in range(nb):
            xb = x[nc + b]
            if xb != 0.0:
                for c in range(nc):
                    x[c] -= a[ob + b * nc + c] * xb
        core_solve(a, spec, piv, x)
        return
    core_solve(a, spec, piv, x)
    for i in range(nb):
        acc = x[nc + i]
        for c in range(nc):
            acc -= a[oc + i * nc + c] * x[c]
        x[nc + i] = acc
    dense_solve(a[od:od + nb * nb], nb, piv[nc:nc + nb], x[nc:nc + nb])
    for b in range(nb):
        xb = x[nc + b]
        if xb != 0.0:
            for c in range(nc):
                x[c] -= a[ob + b * nc + c] * xb


@njit(**JIT_NRT_FREE)
def diag_position(spec, p):
    """Storage position of the diagonal entry of internal index ``p``."""
    nc = spec[SP_NC]
    nb = spec[SP_NB]
    ml = spec[SP_ML]
    mu = spec[SP_MU]
    w = 2 * ml + mu + 1
    if p < nc:
        return p * w + ml + mu
    q = p - nc
    if q < nb:
        return nc * w + 2 * nb * nc + q * nb + q
    ob = spec[SP_OFF_LB]
    for d in range(spec[SP_NLB]):
        r = ob + d * LB_REC
        u = p - spec[r + LB_START]
        if 0 <= u < spec[r + LB_M]:
            return spec[r + LB_OD] + u * spec[r + LB_M] + u
    return -1


@njit(**JIT_NRT_FREE)
def form_matrix(J, out, c, mass, spec):
    """``out = c·M − J`` in storage layout (``c`` real or complex, ``mass`` float64[n] diagonal)."""
    for k in range(out.size):
        out[k] = -J[k]
    nc = spec[SP_NC]
    nb = spec[SP_NB]
    w = 2 * spec[SP_ML] + spec[SP_MU] + 1
    kv = spec[SP_ML] + spec[SP_MU]
    po = spec[SP_OFF_PERM]
    if spec[SP_PERMUTED] == 0:
        for p in range(nc):
            out[p * w + kv] += c * mass[p]
    else:
        for p in range(nc):
            out[p * w + kv] += c * mass[spec[po + p]]
    od = nc * w + 2 * nb * nc
    for q in range(nb):
        out[od + q * nb + q] += c * mass[spec[po + nc + q]]
    ob = spec[SP_OFF_LB]
    for d in range(spec[SP_NLB]):
        r = ob + d * LB_REC
        st = spec[r + LB_START]
        m = spec[r + LB_M]
        o = spec[r + LB_OD]
        for u in range(m):
            out[o + u * m + u] += c * mass[spec[po + st + u]]


@njit(**JIT_NRT_FREE)
def solve_state_order(a, spec, piv, x, tmp):
    """Solve with state-ordered right-hand side ``x`` (in place); ``tmp`` work of length n."""
    n = spec[SP_N]
    if spec[SP_PERMUTED] == 0:
        bordered_solve(a, spec, piv, x)
        return
    po = spec[SP_OFF_PERM]
    p0 = spec[SP_PERM_FROM]
    if p0 == 0:    # every state moves (a reordered band, e.g. the pneumatic brake's): solve in tmp, 2 passes
        for p in range(n):
            tmp[p] = x[spec[po + p]]
        bordered_solve(a, spec, piv, tmp)
        for p in range(n):
            x[spec[po + p]] = tmp[p]
        return
    # the states before SP_PERM_FROM keep their index: only the tail is permuted (in place)
    for p in range(p0, n):
        tmp[p] = x[spec[po + p]]
    for p in range(p0, n):
        x[p] = tmp[p]
    bordered_solve(a, spec, piv, x)
    for p in range(p0, n):
        tmp[p] = x[p]
    for p in range(p0, n):
        x[spec[po + p]] = tmp[p]


@njit(**JIT)
def matvec_state_order(J, spec, x, out):
    """``out = J x`` (state order) from the Jacobian storage ``J`` (unfactorised); used by tests
    and by residual checks."""
    n = spec[SP_N]
    nc = spec[SP_NC]
    nb = spec[SP_NB]
    ml = spec[SP_ML]
    mu = spec[SP_MU]
    w = 2 * ml + mu + 1
    po = spec[SP_OFF_PERM]
    xi = np.empty(n)
    yi = np.zeros(n)
    for p in range(n):
        xi[p] = x[spec[po + p]]
    for c in range(nc):
        for r in range(max(0, c - mu), min(nc, c + ml + 1)):
            yi[r] += J[c * w + ml + mu + r - c] * xi[c]
    ob = nc * w
    oc = ob + nb * nc
    od = oc + nb * nc
    for b in range(nb):
        for r in range(nc):
            yi[r] += J[ob + b * nc + r] * xi[nc + b]
        for c in range(nc):
            yi[nc + b] += J[oc + b * nc + c] * xi[c]
        for c in range(nb):
            yi[nc + b] += J[od + b * nb + c] * xi[nc + c]
    ob = spec[SP_OFF_LB]
    for d in range(spec[SP_NLB]):
        r = ob + d * LB_REC
        st = spec[r + LB_START]
        m = spec[r + LB_M]
        nr = spec[r + LB_NR]
        nk = spec[r + LB_NK]
        oi = spec[r + LB_OI]
        for u in range(m):
            for v in range(m):
                yi[st + u] += J[spec[r + LB_OD] + u * m + v] * xi[st + v]
            for k in range(nk):
                yi[st + u] += J[spec[r + LB_OC] + k * m + u] * xi[spec[oi + nr + k]]
        for i in range(nr):
            for v in range(m):
                yi[spec[oi + i]] += J[spec[r + LB_OB] + i * m + v] * xi[st + v]
    for p in range(n):
        out[spec[po + p]] = yi[p]


@njit(**JIT_NRT_FREE)
def scatter_values(vals, spec, J):
    """Zero the storage ``J`` and add each pattern value at its storage position."""
    for k in range(J.size):
        J[k] = 0.0
    od = spec[SP_OFF_DEST]
    for k in range(spec[SP_NNZ]):
        d = spec[od + k]
        if d >= 0:
            J[d] += vals[k]


@njit(**JIT)
def fd_values(rhs, params, t, y, f0, spec, vals, ytmp, ftmp):
    """Finite-difference pattern values by column groups: one ``rhs`` call per group.

    Increment of column c: δ = sqrt(u·max(1e-5, |y_c|)), u the unit round-off (Hairer & Wanner,
    RADAU5).  Entries of dense border rows in core columns stay zero (see :func:`analyse`).
    Returns the number of ``rhs`` evaluations.
    """
    n = y.size
    for k in range(vals.size):
        vals[k] = 0.0
    ng = spec[SP_NGROUPS]
    gp = spec[SP_OFF_GPTR]
    gc = spec[SP_OFF_GCOL]
    cp = spec[SP_OFF_CPTR]
    cv = spec[SP_OFF_CVAL]
    ro = spec[SP_OFF_ROWS]
    for i in range(n):
        ytmp[i] = y[i]
    for g in range(ng):
        for q in range(spec[gp + g], spec[gp + g + 1]):
            c = spec[gc + q]
            d = math.sqrt(2.220446049250313e-16 * max(1e-5, abs(y[c])))
            ytmp[c] = y[c] + d
        rhs(t, ytmp, params, ftmp)
        for q in range(spec[gp + g], spec[gp + g + 1]):
            c = spec[gc + q]
            d = ytmp[c] - y[c]
            ytmp[c] = y[c]
            inv = 1.0 / d
            for m in range(spec[cp + c], spec[cp + c + 1]):
                k = spec[cv + m]
                r = spec[ro + k]
                vals[k] = (ftmp[r] - f0[r]) * inv
    return ng
