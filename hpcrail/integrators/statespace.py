"""Fixed-step solvers for state-space systems ẏ = f(t, y) with a known Jacobian J (= A for linear
time-invariant systems ẏ = A y + B w(t)): Yu et al. 2023's implicit-Euler recurrence and the exact
discretisation by the matrix exponential.  Like every integrator they know nothing about vehicles:
the model supplies numba functions with the contract signature ``g(t, y, params, out)`` —
``rhs`` (f), ``inputs`` (w(t)) and ``observe`` — and the matrices.

Recurrence (Yu et al. 2023 eqs (8)-(12))::

    Ẋ_k = (I − Δt A)⁻¹ (A X_{k−1} + B U_k),      X_k = X_{k−1} + Δt Ẋ_k

i.e. implicit (backward) Euler, solved exactly for a linear system with the matrix factorised once.
It is **first-order accurate** (global error O(Δt); Yu et al. 2023 eq (15) states the local truncation
error O(Δt²)).  :func:`recurrence_march` evaluates A X_{k−1} + B U_k as f(t_k, X_{k−1}) and
multiplies by the precomputed P = (I − Δt J)⁻¹, which is eq (12) exactly for linear models and a
linearly implicit Euler (W-method, still first order) with a frozen Jacobian for nonlinear ones (the
paper's "incremental form" without refactorising).

Exact discretisation (linear time-invariant systems)::

    y_{k+1} = Φ y_k + Γ₀ w_k + Γ₁ w_{k+1},      Φ = e^{AΔt}

with Γ from the block matrix exponential (Van Loan 1978): ZOH (input held at w_k over the step:
Γ₀ = ∫₀^Δt e^{As} ds B, Γ₁ = 0) or FOH (input linear between w_k and w_{k+1}).  The result is
exact — to round-off — for inputs that are piecewise constant (ZOH) or piecewise linear (FOH) on
the step grid; for smooth inputs FOH is second order, ZOH first order.

Both solvers write the state every ``stride`` steps, call ``observe`` after every step, count
statistics in the contract's ``stats`` layout and return the contract's status codes.
"""
from __future__ import annotations

import math
import time
import types as types_ns
from typing import Callable

import numba
import numpy as np
from numba import njit, types
from scipy.linalg import expm, lu_factor, lu_solve

from hpcrail._numba import JIT_NRT_FREE, one_blas_thread
from hpcrail.integrators.contract import (
    DONE, N_STATS, NON_FINITE, RUNNING, ST_NFEV, ST_STEPS, STAT_NAMES, Solution, Status,
)
from hpcrail.integrators.driver import _kernel_for, model_function_type


# ------------------------------------------------------------------------------------------------
# matrices
# ------------------------------------------------------------------------------------------------
def implicit_euler_matrix(J: np.ndarray, h: float) -> np.ndarray:
    """P = (I − h J)⁻¹ float64[N, N] (LU factorisation once, Yu et al. 2023 eq (11)); on one BLAS
    thread, so that the bits do not depend on the process's BLAS thread count."""
    N = J.shape[0]
    with one_blas_thread():
        lu = lu_factor(np.eye(N) - h * J)
        return np.ascontiguousarray(lu_solve(lu, np.eye(N)))


def recurrence_lti(A: np.ndarray, B: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The recurrence (12) of a linear system as y_{k+1} = Φ y_k + Γ₀ w_k + Γ₁ w_{k+1}:
    Φ = P, Γ₀ = 0, Γ₁ = h P B with P = (I − h A)⁻¹ (since I + h P A = P)."""
    P = implicit_euler_matrix(A, h)
    return P, np.zeros_like(B), np.ascontiguousarray(h * P @ B)


def discretise(A: np.ndarray, B: np.ndarray, h: float, hold: str = "foh") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact discretisation of ẏ = A y + B w(t) over a step h [s].

    Parameters
    ----------
    A : float64[N, N]; B : float64[N, nw]; hold : ``"zoh"`` or ``"foh"``.

    Returns
    -------
    (Φ, Γ₀, Γ₁): float64[N, N], float64[N, nw], float64[N, nw] with
    y_{k+1} = Φ y_k + Γ₀ w_k + Γ₁ w_{k+1}.

    FOH: with E = expm(h·[[A, B, 0], [0, 0, I], [0, 0, 0]]) (the input w and its slope as extra
    states), E₀₁ = ∫₀^h e^{A(h−τ)} dτ B and E₀₂ = ∫₀^h e^{A(h−τ)} τ dτ B, so that for
    w(t_k + τ) = w_k + τ (w_{k+1} − w_k)/h:  Γ₀ = E₀₁ − E₀₂/h, Γ₁ = E₀₂/h.

    Computed on one BLAS thread: the bits of a matrix exponential depend on the BLAS thread count
    (:func:`hpcrail._numba.one_blas_thread`).  Raises ``ValueError`` for an unknown hold.
    """
    with one_blas_thread():
        return _discretise(A, B, h, hold)


def _discretise(A, B, h, hold):
    N, nw = B.shape
    if hold == "zoh":
        M = np.zeros((N + nw, N + nw))
        M[:N, :N] = A
        M[:N, N:] = B
        E = expm(M * h)
        return np.ascontiguousarray(E[:N, :N]), np.ascontiguousarray(E[:N, N:]), np.zeros((N, nw))
    if hold == "foh":
        M = np.zeros((N + 2 * nw, N + 2 * nw))
        M[:N, :N] = A
        M[:N, N:N + nw] = B
        M[N:N + nw, N + nw:] = np.eye(nw)
        E = expm(M * h)
        E01 = E[:N, N:N + nw]
        E02 = E[:N, N + nw:]
        return (np.ascontiguousarray(E[:N, :N]), np.ascontiguousarray(E01 - E02 / h),
                np.ascontiguousarray(E02 / h))
    raise ValueError(f"unknown hold {hold!r}; allowed: zoh, foh")


# ------------------------------------------------------------------------------------------------
# numba marching kernels
# ------------------------------------------------------------------------------------------------
@njit(**JIT_NRT_FREE)
def lti_march(PhiT, G0T, G1T, cols, inputs, observe, params, y, work, kstep, k_end, t0, h, stride, Y_out, acc, stats):
    """March y_{k+1} = Φ y_k + Γ₀ w_k + Γ₁ w_{k+1} from step ``kstep[0]`` to ``k_end``.

    The matrices are passed **transposed** (C-contiguous Φᵀ float64[N, N], Γ₀ᵀ, Γ₁ᵀ float64[nw, N]).
    ``inputs(t, y, params, w)`` fills w(t) (float64[nw_total]); Γ₀ᵀ, Γ₁ᵀ hold the rows of the input
    columns ``cols`` (int64[nw]) that are not identically zero.  ``work`` float64[nw_total + 2 nw + N]
    (nw_total = length of the vector ``inputs`` writes) is scratch space (the kernel allocates nothing: compiled without reference counting, so passing
    a parameter tuple of many arrays to ``inputs``/``observe`` costs nothing per step).  Samples y
    at steps multiple of ``stride`` into ``Y_out[k // stride]``.  Returns RUNNING or NON_FINITE.
    """
    N = y.size
    nw = cols.size
    nwt = work.size - 2 * nw - N
    wf = work[:nwt]
    w0 = work[nwt:nwt + nw]
    w1 = work[nwt + nw:nwt + 2 * nw]
    yn = work[nwt + 2 * nw:nwt + 2 * nw + N]
    k = kstep[0]
    inputs(t0 + k * h, y, params, wf)
    for j in range(nw):
        w0[j] = wf[cols[j]]
    nout = Y_out.shape[0]
    if k % stride == 0 and k // stride < nout:
        for i in range(N):
            Y_out[k // stride, i] = y[i]
    status = RUNNING
    while k < k_end:
        t1 = t0 + (k + 1) * h
        inputs(t1, y, params, wf)
        for j in range(nw):
            w1[j] = wf[cols[j]]
        # column-oriented products (PhiT = Φᵀ, G0T = Γ₀ᵀ, G1T = Γ₁ᵀ): independent rows vectorise
        for i in range(N):
            yn[i] = 0.0
        for j in range(N):
            yj = y[j]
            for i in range(N):
                yn[i] += PhiT[j, i] * yj
        for j in range(nw):
            a = w0[j]
            b = w1[j]
            for i in range(N):
                yn[i] += G0T[j, i] * a + G1T[j, i] * b
        tot = 0.0
        for i in range(N):
            tot += yn[i]
        if not math.isfinite(tot):
            status = NON_FINITE
            break
        for i in range(N):
            y[i] = yn[i]
        for j in range(nw):
            w0[j] = w1[j]
        k += 1
        stats[ST_STEPS] += 1
        observe(t1, y, params, acc)
        if k % stride == 0 and k // stride < nout:
            for i in range(N):
                Y_out[k // stride, i] = y[i]
    kstep[0] = k
    return status


@njit(**JIT_NRT_FREE)
def recurrence_march(PT, rhs, observe, params, y, work, kstep, k_end, t0, h, stride, Y_out, acc, stats):
    """Yu et al. 2023 eq (12): Ẋ_k = P f(t_k, X_{k−1}), X_k = X_{k−1} + h Ẋ_k with P = (I − h J)⁻¹
    (passed transposed, ``PT`` = Pᵀ C-contiguous), from step ``kstep[0]`` to ``k_end``; one
    right-hand-side evaluation per step.  For a linear model f(t_k, X_{k−1}) = A X_{k−1} + B U_k, so
    this is eq (11)-(12) literally.  ``work`` float64[2N] scratch space."""
    N = y.size
    f = work[:N]
    xd = work[N:2 * N]
    k = kstep[0]
    nout = Y_out.shape[0]
    if k % stride == 0 and k // stride < nout:
        for i in range(N):
            Y_out[k // stride, i] = y[i]
    status = RUNNING
    while k < k_end:
        t1 = t0 + (k + 1) * h
        rhs(t1, y, params, f)
        stats[ST_NFEV] += 1
        for i in range(N):
            xd[i] = 0.0
        for j in range(N):
            fj = f[j]
            for i in range(N):
                xd[i] += PT[j, i] * fj
        tot = 0.0
        for i in range(N):
            tot += xd[i]
        if not math.isfinite(tot):
            status = NON_FINITE
            break
        for i in range(N):
            y[i] += h * xd[i]
        k += 1
        stats[ST_STEPS] += 1
        observe(t1, y, params, acc)
        if k % stride == 0 and k // stride < nout:
            for i in range(N):
                Y_out[k // stride, i] = y[i]
    kstep[0] = k
    return status


# ------------------------------------------------------------------------------------------------
# Python driver
# ------------------------------------------------------------------------------------------------
_COMPILED: dict = {}


def _entry(kernel, params, argtys):
    """Entry point of ``kernel`` compiled for ``argtys``, from a dispatcher private to the parameter
    type (its own numba cache index, see :func:`hpcrail.integrators.driver._kernel_for`)."""
    key = (kernel.__name__, argtys)
    if key not in _COMPILED:
        disp = _kernel_for(types_ns.SimpleNamespace(name=kernel.__name__, kernel=kernel), params)
        cres = disp.overloads.get(argtys)
        if cres is None:
            disp.compile(argtys)
            cres = disp.overloads[argtys]
        _COMPILED[key] = cres.entry_point
    return _COMPILED[key]


def _argtypes(kind: str, params) -> tuple:
    fty = model_function_type(params)
    f1, f2 = types.float64[::1], types.float64[:, ::1]
    i1 = types.int64[::1]
    common = (numba.typeof(params), f1, f1, i1, types.int64, types.float64, types.float64, types.int64, f2, f1, i1)
    if kind == "lti":
        return (f2, f2, f2, i1, fty, fty) + common
    return (f2, fty, fty) + common


def compiled(kind: str, params, functions=()) -> tuple[Callable, float]:
    """``(entry point, seconds compiling/loading)`` of ``lti_march`` (kind ``"lti"``) or
    ``recurrence_march`` (``"recurrence"``) for this parameter type; ``functions`` (the model's
    kernels) are compiled for the contract signature first."""
    t0 = time.perf_counter()
    fsig = model_function_type(params).signature
    for f in functions:
        if fsig.args not in f.overloads:
            f.compile(fsig.args)
    kernel = lti_march if kind == "lti" else recurrence_march
    ep = _entry(kernel, params, _argtypes(kind, params))
    return ep, time.perf_counter() - t0


def _march(kind, mats, funcs, params, y0, t0, h, nsteps, stride, acc0, progress, n_chunks, method_name, nw_total=0):
    if nsteps < 1 or stride < 1:
        raise ValueError(f"need nsteps ≥ 1 and stride ≥ 1, got {nsteps}, {stride}")
    kernel, ctime = compiled(kind, params, funcs)
    y = np.ascontiguousarray(y0, dtype=np.float64).copy()
    nout = nsteps // stride + 1
    Y_out = np.full((nout, y.size), np.nan)
    acc = np.ascontiguousarray(acc0, dtype=np.float64).copy()
    stats = np.zeros(N_STATS, dtype=np.int64)
    kstep = np.zeros(1, dtype=np.int64)
    if kind == "lti":
        # the inputs function writes the full input vector (nw_total entries), the products use cols
        work = np.zeros(max(1, nw_total) + 2 * mats[3].size + y.size)
    else:
        work = np.zeros(2 * y.size)
    obs = funcs[-1]
    obs(t0, y, params, acc)
    ends = np.unique(np.linspace(0, nsteps, max(1, n_chunks) + 1).round().astype(np.int64))[1:]
    code = RUNNING
    w0 = time.perf_counter()
    for ke in ends:
        code = kernel(*mats, *funcs, params, y, work, kstep, int(ke), float(t0), float(h), int(stride), Y_out, acc,
                      stats)
        if progress is not None:
            progress(t0 + kstep[0] * h, t0 + nsteps * h, dict(zip(STAT_NAMES, stats.tolist())))
        if code != RUNNING:
            break
    wall = time.perf_counter() - w0
    if code == RUNNING:
        code = DONE
    status = Status(code)
    t_reached = t0 + kstep[0] * h
    t_out = t0 + h * stride * np.arange(nout)
    return Solution(t=t_out, y=Y_out, status=status, message=status.describe(t_reached), t_reached=t_reached,
                    stats=dict(zip(STAT_NAMES, stats.tolist())), acc=acc, wall_time=wall, compile_time=ctime,
                    method=method_name, y_final=y)


def run_lti(Phi, G0, G1, inputs, observe, params, y0, *, t0: float = 0.0, h: float, nsteps: int, stride: int = 1,
            acc0=None, progress=None, n_chunks: int = 50, method_name: str = "exact") -> Solution:
    """March a discretised LTI system for ``nsteps`` steps of ``h`` [s] (see :func:`lti_march`).

    Returns a :class:`~hpcrail.integrators.contract.Solution` sampled every ``stride`` steps
    (``t`` float64[nsteps//stride + 1], ``y`` float64[k, N]); failures in ``status``.
    Raises ``ValueError`` for nsteps < 1 or stride < 1.
    """
    G0, G1 = np.asarray(G0, dtype=np.float64), np.asarray(G1, dtype=np.float64)
    cols = np.flatnonzero(np.any(G0 != 0, axis=0) | np.any(G1 != 0, axis=0)).astype(np.int64)
    mats = (np.ascontiguousarray(np.asarray(Phi, dtype=np.float64).T), np.ascontiguousarray(G0[:, cols].T),
            np.ascontiguousarray(G1[:, cols].T), np.ascontiguousarray(cols))
    acc0 = np.zeros(1) if acc0 is None else acc0
    return _march("lti", mats, (inputs, observe), params, y0, t0, h, nsteps, stride, acc0, progress, n_chunks,
                  method_name, nw_total=G0.shape[1])


def run_recurrence(P, rhs, observe, params, y0, *, t0: float = 0.0, h: float, nsteps: int, stride: int = 1,
                   acc0=None, progress=None, n_chunks: int = 50, method_name: str = "recurrence") -> Solution:
    """Yu et al. 2023 recurrence (12) with P = (I − h J)⁻¹ (:func:`implicit_euler_matrix`) for ``nsteps``
    steps of ``h`` [s].  Same outputs and errors as :func:`run_lti`."""
    mats = (np.ascontiguousarray(np.asarray(P, dtype=np.float64).T),)
    acc0 = np.zeros(1) if acc0 is None else acc0
    return _march("recurrence", mats, (rhs, observe), params, y0, t0, h, nsteps, stride, acc0, progress, n_chunks,
                  method_name)
