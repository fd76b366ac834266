"""Partitioned linear algebra of the distributed-state (SPMD) implicit methods: the iteration matrix
c·M − J of a banded problem whose states are split into contiguous blocks owned by different workers,
factorised and solved block by block (SPIKE) with one exchange between the workers per factorisation and
per solve.

States ``[0, nc)`` form the banded *core* (lower/upper bandwidths ml, mu, natural order), split into
blocks ``[r_b, r_{b+1})`` (``own`` of :mod:`hpcrail.integrators.collectives`); states ``[nc, n)`` are *global*
(replicated on every worker: a train's applied notch and work integrals).  With A the core block,
B the core rows' dependence on the global states and D the global block ::

        [ A  B ] [x_c]   [f_c]
        [ 0  D ] [x_g] = [f_g]

(the global rows' dependence on the core, C, is left out of the iteration matrix: the Newton
iteration stays convergent with an approximate Jacobian and the train models have C = 0 unless a
schedule is distance-based), x_g = D⁻¹ f_g on every worker, then A x_c = f_c − B x_g by SPIKE
(Polizzi & Sameh 2006): with A_b the diagonal blocks (band LU with partial pivoting, LAPACK
``dgbtf2``), U_b its coupling to the first mu states of block b+1 and L_b to the last ml states of
block b−1, the spikes V_b = A_b⁻¹U_b, W_b = A_b⁻¹L_b and g_b = A_b⁻¹f_b give ::

    x_b = g_b − V_b top_{b+1} − W_b bot_{b−1},   top_b = x_b[:mu],  bot_b = x_b[−ml:]

and the top/bottom rows of these equations form a reduced system of P·(ml+mu) unknowns.  Each worker
factorises its own blocks and spikes and writes its rows of the reduced system into the exchange
buffer; after the exchange every worker factorises the (small, dense) reduced system itself, so all
workers hold bitwise the same reduced factors.  A solve costs one band solve per block, one exchange
of 2·(ml+mu) numbers per block, a dense reduced solve and ml+mu vector updates per block.

Storage of one factorised iteration matrix (float64, flat, :func:`spmd_lin_size`):

=================  ======================================================
offset             block
=================  ======================================================
0                  band of A (``linalg`` layout: ``[c*w + ml+mu + r−c]``)
nc·w               Bᵀ (ng × nc): ``[g*nc + r]`` = B[r, g]
+ng·nc             D (ng × ng), after factorisation its LU
+ng²               spikes: ``[k*nc + r]``, k < mu: V, k ≥ mu: W
+(ml+mu)·nc        reduced system (R × R, R = P·(ml+mu)), after factorisation its LU
=================  ======================================================

Sources: Polizzi & Sameh, Parallel Computing 32 (2006) 177-194 (SPIKE); Golub & Van Loan,
*Matrix Computations* (4th ed.) §4.3; Anderson et al., *LAPACK Users' Guide* (``dgbtrf``).
"""
from __future__ import annotations

import dataclasses

import numpy as np
from numba import njit, uint64

from hpcrail._numba import JIT, JIT_NRT_FREE
from hpcrail.integrators.collectives import OW_BHI, OW_BLO, OW_BOUNDS, OW_P, OW_SHI, OW_SLO, next_buffer
from hpcrail.integrators.contract import ST_NJEV, ST_NLU
from hpcrail.integrators.linalg import band_lu, band_solve, dense_lu, dense_solve

# ---- layout of the int64 ``sspec`` array --------------------------------------------------------
SS_N, SS_NC, SS_NG, SS_ML, SS_MU, SS_NNZ, SS_TAIL, SS_P, SS_HAS_JAC, SS_OFF_DEST = range(10)
SS_HEADER = 12

# the int64 ``own`` array of a worker (its blocks, the global states, its Jacobian slots): :mod:`.collectives`


def spmd_lin_size_py(nc: int, ng: int, ml: int, mu: int, P: int) -> int:
    w = 2 * ml + mu + 1
    R = P * (ml + mu)
    return nc * w + ng * nc + ng * ng + (ml + mu) * nc + R * R


@njit(inline="always", **JIT)
def spmd_lin_size(sspec):
    nc = sspec[SS_NC]
    ng = sspec[SS_NG]
    ml = sspec[SS_ML]
    mu = sspec[SS_MU]
    R = sspec[SS_P] * (ml + mu)
    return nc * (2 * ml + mu + 1) + ng * nc + ng * ng + (ml + mu) * nc + R * R


@dataclasses.dataclass
class SPMDLayout:
    """Python-side analysis of a Jacobian pattern for the partitioned solver."""

    sspec: np.ndarray   #: int64 spec (``SS_*`` header, then the storage position of every value slot)
    nc: int
    ng: int
    ml: int
    mu: int
    dropped: int        #: pattern entries of global rows in core columns (C, left out)


def analyse_spmd(rows: np.ndarray, cols: np.ndarray, n: int, bounds: np.ndarray, tail: int,
                 has_jac: bool) -> SPMDLayout:
    """Bandwidths and storage positions of a pattern (``rows``/``cols`` int64[nnz], −1 = unused slot)
    for core ``[0, bounds[-1])`` split at ``bounds`` (int64[P+1]) and global states ``[bounds[-1], n)``.
    ``tail``: first value slot every worker fills (global rows; slots before it are filled by the
    worker owning their rows).  Raises ``ValueError`` when a block is narrower than ml + mu or the
    pattern couples non-neighbouring blocks."""
    rows = np.asarray(rows, np.int64)
    cols = np.asarray(cols, np.int64)
    bounds = np.asarray(bounds, np.int64)
    nc = int(bounds[-1])
    ng = n - nc
    P = bounds.size - 1
    ok = (rows >= 0) & (cols >= 0)
    core = ok & (rows < nc) & (cols < nc)
    d = rows[core] - cols[core]
    ml = int(max(0, d.max())) if d.size else 0
    mu = int(max(0, (-d).max())) if d.size else 0
    sizes = np.diff(bounds)
    if np.any(sizes < ml + mu) or np.any(sizes < 1):
        raise ValueError(f"every block needs at least ml + mu = {ml + mu} states; block sizes {sizes.tolist()}")
    w = 2 * ml + mu + 1
    kv = ml + mu
    ob = nc * w
    od = ob + ng * nc
    dest = -np.ones(rows.size, np.int64)
    for k in np.nonzero(ok)[0]:
        r, c = int(rows[k]), int(cols[k])
        if r < nc and c < nc:
            dest[k] = c * w + kv + r - c
        elif r < nc:
            dest[k] = ob + (c - nc) * nc + r
        elif c >= nc:
            dest[k] = od + (r - nc) * ng + (c - nc)
    dropped = int(np.count_nonzero(ok & (rows >= nc) & (cols < nc)))
    head = np.zeros(SS_HEADER, np.int64)
    head[SS_N], head[SS_NC], head[SS_NG], head[SS_ML], head[SS_MU] = n, nc, ng, ml, mu
    head[SS_NNZ], head[SS_TAIL], head[SS_P], head[SS_HAS_JAC] = rows.size, tail, P, int(has_jac)
    head[SS_OFF_DEST] = SS_HEADER
    return SPMDLayout(np.concatenate([head, dest]), nc, ng, ml, mu, dropped)


# ================================================================================================
# numba kernels
# ================================================================================================
@njit(**JIT_NRT_FREE)
def spmd_scatter(vals, sspec, own, J):
    """Jacobian storage ``J`` (this worker's region zeroed) ← the values of this worker's slots
    ``[own[OW_SLO], own[OW_SHI])`` and of the global rows' slots ``[sspec[SS_TAIL], nnz)``."""
    nc = sspec[SS_NC]
    ng = sspec[SS_NG]
    ml = sspec[SS_ML]
    mu = sspec[SS_MU]
    w = 2 * ml + mu + 1
    lo = own[OW_BOUNDS + own[OW_BLO]]
    hi = own[OW_BOUNDS + own[OW_BHI]]
    c0 = max(0, lo - ml - mu)
    c1 = min(nc, hi + ml + mu)
    for k in range(uint64(c0 * w), uint64(c1 * w)):
        J[k] = 0.0
    ob = nc * w
    for g in range(ng):
        for r in range(lo, hi):
            J[ob + g * nc + r] = 0.0
    od = ob + ng * nc
    for k in range(od, od + ng * ng):
        J[k] = 0.0
    od_ = sspec[SS_OFF_DEST]
    for k in range(own[OW_SLO], own[OW_SHI]):
        p = sspec[od_ + k]
        if p >= 0:
            J[p] += vals[k]
    for k in range(sspec[SS_TAIL], sspec[SS_NNZ]):
        p = sspec[od_ + k]
        if p >= 0:
            J[p] += vals[k]


@njit(**JIT_NRT_FREE)
def spmd_form(J, LU, c, mass, sspec, own):
    """``LU ← c·M − J`` on this worker's region (band columns around its blocks, its rows of B, D)."""
    nc = sspec[SS_NC]
    ng = sspec[SS_NG]
    ml = sspec[SS_ML]
    mu = sspec[SS_MU]
    w = 2 * ml + mu + 1
    kv = ml + mu
    lo = own[OW_BOUNDS + own[OW_BLO]]
    hi = own[OW_BOUNDS + own[OW_BHI]]
    c0 = max(0, lo - ml - mu)
    c1 = min(nc, hi + ml + mu)
    for k in range(uint64(c0 * w), uint64(c1 * w)):
        LU[k] = -J[k]
    for p in range(uint64(lo), uint64(hi)):
        LU[p * uint64(w) + uint64(kv)] += c * mass[p]
    ob = nc * w
    for g in range(ng):
        for r in range(lo, hi):
            LU[ob + g * nc + r] = -J[ob + g * nc + r]
    od = ob + ng * nc
    for a in range(ng):
        for b in range(ng):
            LU[od + a * ng + b] = -J[od + a * ng + b]
        LU[od + a * ng + a] += c * mass[nc + a]


@njit(**JIT_NRT_FREE)
def _spikes(LU, sspec, own, piv, b, v):
    """Spikes V_b (mu columns) and W_b (ml columns) of block b from the formed coupling entries and
    the factors of A_b; ``v`` work of length ≥ the block size."""
    nc = sspec[SS_NC]
    ml = sspec[SS_ML]
    mu = sspec[SS_MU]
    P = own[OW_P]
    w = 2 * ml + mu + 1
    kv = ml + mu
    osp = nc * w + sspec[SS_NG] * nc + sspec[SS_NG] * sspec[SS_NG]
    r0 = own[OW_BOUNDS + b]
    r1 = own[OW_BOUNDS + b + 1]
    nb = r1 - r0
    a = LU[r0 * w:r1 * w]
    pv = piv[r0:r1]
    for k in range(mu):          # V: coupling to column r1 + k (rows r ≥ r1 + k − mu)
        col = r1 + k
        for i in range(nb):
            v[i] = 0.0
        if b < P - 1:
            for r in range(max(r0, col - mu), r1):
                v[r - r0] = LU[col * w + kv + r - col]
            band_solve(a, nb, ml, mu, pv, v[:nb])
        for i in range(nb):
            LU[osp + k * nc + r0 + i] = v[i]
    for k in range(ml):          # W: coupling to column r0 − ml + k (rows r ≤ col + ml)
        col = r0 - ml + k
        for i in range(nb):
            v[i] = 0.0
        if b > 0:
            for r in range(r0, min(r1, col + ml + 1)):
                v[r - r0] = LU[col * w + kv + r - col]
            band_solve(a, nb, ml, mu, pv, v[:nb])
        for i in range(nb):
            LU[osp + (mu + k) * nc + r0 + i] = v[i]


@njit(**JIT)
def spmd_factorise(sync, vb, J, LU, c, mass, sspec, own, piv, tmp, stats):
    """Factorise c·M − J (collective: one exchange of the reduced-system rows through the reduction hook
    ``sync`` and the rows of ``vb``, :mod:`~hpcrail.integrators.collectives`), ``tmp`` work of length n.  Returns False if any
    block, the reduced system or D is singular to working precision (the same answer on every worker)."""
    nc = sspec[SS_NC]
    ng = sspec[SS_NG]
    ml = sspec[SS_ML]
    mu = sspec[SS_MU]
    P = own[OW_P]
    m = ml + mu
    R = P * m
    w = 2 * ml + mu + 1
    osp = nc * w + ng * nc + ng * ng
    ored = osp + m * nc
    spmd_form(J, LU, c, mass, sspec, own)
    stats[ST_NLU] += 1
    buf, KR = next_buffer(vb)
    for b in range(own[OW_BLO], own[OW_BHI]):
        r0 = own[OW_BOUNDS + b]
        r1 = own[OW_BOUNDS + b + 1]
        ok = band_lu(LU[r0 * w:r1 * w], r1 - r0, ml, mu, piv[r0:r1])
        _spikes(LU, sspec, own, piv, b, tmp)
        nb = r1 - r0
        q = b * KR
        buf[q] = 1.0 if ok else 0.0
        for i in range(m):     # reduced rows: top_b (local rows 0..mu−1), bot_b (local rows nb−ml..nb−1)
            r = r0 + i if i < mu else r0 + nb - ml + (i - mu)
            for k in range(m):
                buf[q + 1 + i * m + k] = LU[osp + k * nc + r]
    sync(buf, vb)
    ok = True
    S = LU[ored:ored + R * R]
    for i in range(R * R):
        S[i] = 0.0
    for b in range(P):
        q = b * KR
        if buf[q] == 0.0:
            ok = False
        for i in range(m):
            row = b * m + i
            S[row * R + row] = 1.0
            for k in range(m):
                val = buf[q + 1 + i * m + k]
                if k < mu:
                    if b < P - 1:
                        S[row * R + (b + 1) * m + k] += val           # top_{b+1}[k]
                elif b > 0:
                    S[row * R + (b - 1) * m + mu + (k - mu)] += val   # bot_{b−1}[k − mu]
    if not dense_lu(S, R, piv[nc + ng:nc + ng + R]):
        ok = False
    if ng > 0:
        od = nc * w + ng * nc
        if not dense_lu(LU[od:od + ng * ng], ng, piv[nc:nc + ng]):
            ok = False
    return ok


@njit(**JIT)
def spmd_solve(sync, vb, LU, sspec, own, piv, x):
    """Solve (c·M − J) x = b in place with the factors of :func:`spmd_factorise` (collective: one
    exchange).  ``x``: this worker's rows and the global rows are read and written."""
    nc = sspec[SS_NC]
    ng = sspec[SS_NG]
    ml = sspec[SS_ML]
    mu = sspec[SS_MU]
    P = own[OW_P]
    m = ml + mu
    R = P * m
    w = 2 * ml + mu + 1
    ob = nc * w
    od = ob + ng * nc
    osp = od + ng * ng
    ored = osp + m * nc
    lo = own[OW_BOUNDS + own[OW_BLO]]
    hi = own[OW_BOUNDS + own[OW_BHI]]
    if ng > 0:
        dense_solve(LU[od:od + ng * ng], ng, piv[nc:nc + ng], x[nc:nc + ng])
        for g in range(ng):
            xg = x[nc + g]
            if xg != 0.0:
                bg = LU[ob + g * nc:ob + (g + 1) * nc]
                for r in range(uint64(lo), uint64(hi)):
                    x[r] -= bg[r] * xg
    buf, KR = next_buffer(vb)
    for b in range(own[OW_BLO], own[OW_BHI]):
        r0 = own[OW_BOUNDS + b]
        r1 = own[OW_BOUNDS + b + 1]
        nb = r1 - r0
        band_solve(LU[r0 * w:r1 * w], nb, ml, mu, piv[r0:r1], x[r0:r1])
        q = b * KR
        for i in range(m):
            buf[q + i] = x[r0 + i] if i < mu else x[r0 + nb - ml + (i - mu)]
    sync(buf, vb)
    u = np.empty(R)
    for b in range(P):
        for i in range(m):
            u[b * m + i] = buf[b * KR + i]
    dense_solve(LU[ored:ored + R * R], R, piv[nc + ng:nc + ng + R], u)
    for b in range(own[OW_BLO], own[OW_BHI]):
        r0 = own[OW_BOUNDS + b]
        r1 = own[OW_BOUNDS + b + 1]
        if b < P - 1:
            for k in range(mu):
                tk = u[(b + 1) * m + k]
                if tk != 0.0:
                    sp = LU[osp + k * nc:osp + (k + 1) * nc]
                    for r in range(uint64(r0), uint64(r1)):
                        x[r] -= sp[r] * tk
        if b > 0:
            for k in range(ml):
                bk = u[(b - 1) * m + mu + k]
                if bk != 0.0:
                    sp = LU[osp + (mu + k) * nc:osp + (mu + k + 1) * nc]
                    for r in range(uint64(r0), uint64(r1)):
                        x[r] -= sp[r] * bk


@njit(**JIT)
def spmd_jacobian(jac, params, t, y, sspec, own, J, vals, stats):
    """Evaluate the model's Jacobian (collective) and scatter this worker's values into ``J``."""
    jac(t, y, params, vals)
    spmd_scatter(vals, sspec, own, J)
    stats[ST_NJEV] += 1
