"""SUNDIALS CVODE (BDF, band linear solver) as an hpcrail integrator, ``method: cvode``.

CVODE is the reference stiff solver a user would otherwise pick.  hpcrail drives it from numba: the
model's ``rhs`` and analytic ``jac`` run inside C callbacks (numba ``cfunc``), the step loop
(``CVode`` in one-step mode, samples by ``CVodeGetDky``, the model's ``observe`` after every
accepted step, exactly like hpcrail's own methods) is an ``@njit`` function calling the library
through ``ctypes`` — no Python on the per-step path.

The library is the SUNDIALS build that the ``scikit-sundae`` wheel bundles (``pip install
'hpcrail[cvode]'``; SUNDIALS 7.x, 32-bit indices); ``HPCRAIL_SUNDIALS_LIBDIR`` may name another
directory holding ``libsundials_{core,nvecserial,sunmatrixband,sunlinsolband,cvode}*.so``
(SUNDIALS ≥ 7).  Without it, :func:`integrate_cvode` raises :class:`CvodeUnavailable`
(a ``RuntimeError`` saying how to install it).

Settings.  BDF with Newton on a band matrix whose bandwidths are those of the Jacobian pattern
outside its *border* (an LTD train: ml = mu = 2; the applied-notch column, which couples every
locomotive, is left out of the band: the Newton matrix is then approximate in one column, which
only affects the rate of convergence).  Error weights ``1/(atol_i + rtol_i·|y_i|)`` with hpcrail's
per-state ``rtol`` (``CVodeWFtolerances``).  Options: ``max_order`` (1-5, default 5),
``stability_limit_detection`` (0/1), ``max_nonlin_iters`` (CVODE's default 3).  A problem without an
analytic Jacobian uses CVODE's difference-quotient band Jacobian.  Not supported (ValueError):
event functions, a mass matrix, ``observe_interval``.

Sources: Hindmarsh et al., "SUNDIALS: Suite of nonlinear and differential/algebraic equation
solvers", ACM TOMS 31 (2005) 363-396; Byrne & Hindmarsh, ACM TOMS 1 (1975) 71-96 (the
variable-coefficient BDF of VODE/CVODE); the CVODE user guide (v7), §2 (Jacobian and LU reuse,
nonlinear convergence test) and §4.5 (optional inputs).
"""
from __future__ import annotations

import ctypes
import importlib.util
import math
import os
import time
import warnings
from pathlib import Path

import numba
import numpy as np
from numba import carray, cfunc, njit, types
from numba.core.errors import NumbaExperimentalFeatureWarning
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic

from hpcrail.integrators.contract import (
    DONE, MAX_STEPS, MODEL_FAILURE, N_STATS, NEWTON_FAILURE, NON_FINITE, STAT_NAMES, STEP_UNDERFLOW, Problem,
    Solution, Status,
)

CV_BDF = 2
CV_ONE_STEP = 2
#: CVODE return flags -> hpcrail statuses
_FLAG_STATUS = {-1: MAX_STEPS, -2: STEP_UNDERFLOW, -3: STEP_UNDERFLOW, -4: NEWTON_FAILURE, -5: NEWTON_FAILURE,
                -6: NEWTON_FAILURE, -8: MODEL_FAILURE, -9: MODEL_FAILURE, -10: NON_FINITE}
_LIB_STEMS = ("core", "nvecserial", "sunmatrixband", "sunlinsolband", "cvode")
_USERDATA_BYTES = 1 << 16


class CvodeUnavailable(RuntimeError):
    """The SUNDIALS CVODE library could not be found or loaded."""


# ---- library -------------------------------------------------------------------------------------
_LIB = None


def _lib_dir() -> Path:
    env = os.environ.get("HPCRAIL_SUNDIALS_LIBDIR")
    if env:
        return Path(env)
    spec = importlib.util.find_spec("sksundae")
    if spec is None or spec.origin is None:
        raise CvodeUnavailable("method 'cvode' needs the SUNDIALS CVODE library: install it with "
                               "`pip install 'hpcrail[cvode]'` (the scikit-sundae wheel bundles SUNDIALS 7), or set "
                               "HPCRAIL_SUNDIALS_LIBDIR to a directory holding libsundials_cvode*.so (SUNDIALS >= 7)")
    return Path(spec.origin).resolve().parent.parent / "scikit_sundae.libs"


def _find(d: Path, stem: str) -> Path:
    hits = sorted(d.glob(f"libsundials_{stem}-*.so*")) + sorted(d.glob(f"libsundials_{stem}.so*"))
    if not hits:
        raise CvodeUnavailable(f"method 'cvode': no libsundials_{stem} library in {d}")
    return hits[0]


class _Lib:
    """ctypes prototypes of the SUNDIALS functions used (pointers passed as uint64 from numba)."""

    def __init__(self, d: Path):
        libs = {}
        for stem in _LIB_STEMS:
            try:
                libs[stem] = ctypes.CDLL(str(_find(d, stem)), mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                raise CvodeUnavailable(f"method 'cvode': cannot load libsundials_{stem} from {d}: {exc}") from None
        self.path = str(d)
        u64, i32, dbl, lng = ctypes.c_uint64, ctypes.c_int, ctypes.c_double, ctypes.c_long
        vp, pd = ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)

        def fn(lib, name, res, *args):
            f = getattr(libs[lib], name)
            return ctypes.CFUNCTYPE(res, *args)(ctypes.cast(f, ctypes.c_void_p).value)

        self.SUNContext_Create = fn("core", "SUNContext_Create", i32, i32, u64)
        self.SUNContext_Free = fn("core", "SUNContext_Free", i32, u64)
        self.N_VNew_Serial = fn("nvecserial", "N_VNew_Serial", u64, i32, u64)
        self.N_VDestroy = fn("core", "N_VDestroy", None, u64)
        self.N_VGetArrayPointer = fn("core", "N_VGetArrayPointer", pd, vp)       # in callbacks (voidptr)
        self.N_VGetArrayPointer_u = fn("core", "N_VGetArrayPointer", u64, u64)
        self.SUNBandMatrix = fn("sunmatrixband", "SUNBandMatrix", u64, i32, i32, i32, u64)
        self.SUNBandMatrix_Data = fn("sunmatrixband", "SUNBandMatrix_Data", pd, vp)
        self.SUNBandMatrix_LDim = fn("sunmatrixband", "SUNBandMatrix_LDim", i32, u64)
        self.SUNBandMatrix_StoredUpperBandwidth = fn("sunmatrixband", "SUNBandMatrix_StoredUpperBandwidth", i32, u64)
        self.SUNMatDestroy = fn("core", "SUNMatDestroy", None, u64)
        self.SUNLinSol_Band = fn("sunlinsolband", "SUNLinSol_Band", u64, u64, u64, u64)
        self.SUNLinSolFree = fn("core", "SUNLinSolFree", i32, u64)
        self.CVodeCreate = fn("cvode", "CVodeCreate", u64, i32, u64)
        self.CVodeInit = fn("cvode", "CVodeInit", i32, u64, u64, dbl, u64)
        self.CVodeWFtolerances = fn("cvode", "CVodeWFtolerances", i32, u64, u64)
        self.CVodeSetUserData = fn("cvode", "CVodeSetUserData", i32, u64, u64)
        self.CVodeSetMaxOrd = fn("cvode", "CVodeSetMaxOrd", i32, u64, i32)
        self.CVodeSetMaxNumSteps = fn("cvode", "CVodeSetMaxNumSteps", i32, u64, lng)
        self.CVodeSetInitStep = fn("cvode", "CVodeSetInitStep", i32, u64, dbl)
        self.CVodeSetMaxStep = fn("cvode", "CVodeSetMaxStep", i32, u64, dbl)
        self.CVodeSetMinStep = fn("cvode", "CVodeSetMinStep", i32, u64, dbl)
        self.CVodeSetStopTime = fn("cvode", "CVodeSetStopTime", i32, u64, dbl)
        self.CVodeSetStabLimDet = fn("cvode", "CVodeSetStabLimDet", i32, u64, i32)
        self.CVodeSetMaxNonlinIters = fn("cvode", "CVodeSetMaxNonlinIters", i32, u64, i32)
        self.CVodeSetLinearSolver = fn("cvode", "CVodeSetLinearSolver", i32, u64, u64, u64)
        self.CVodeSetJacFn = fn("cvode", "CVodeSetJacFn", i32, u64, u64)
        self.CVode = fn("cvode", "CVode", i32, u64, dbl, u64, u64, i32)
        self.CVodeGetDky = fn("cvode", "CVodeGetDky", i32, u64, dbl, i32, u64)
        self.CVodeFree = fn("cvode", "CVodeFree", None, u64)
        self.counters = {name: fn("cvode", name, i32, u64, ctypes.POINTER(lng)) for name in (
            "CVodeGetNumSteps", "CVodeGetNumRhsEvals", "CVodeGetNumLinSolvSetups", "CVodeGetNumErrTestFails",
            "CVodeGetNumNonlinSolvIters", "CVodeGetNumNonlinSolvConvFails", "CVodeGetNumJacEvals",
            "CVodeGetNumLinRhsEvals")}


def library() -> _Lib:
    """The loaded SUNDIALS library (raises :class:`CvodeUnavailable` if it cannot be found)."""
    global _LIB
    if _LIB is None:
        _LIB = _Lib(_lib_dir())
    return _LIB


def available() -> bool:
    """True if ``method: cvode`` can run here."""
    try:
        library()
        return True
    except CvodeUnavailable:
        return False


# ---- user data: any numba value stored in / loaded from raw memory ------------------------------
@intrinsic
def _store_value(typingctx, addr, val):
    """Store the numba value ``val`` at the address ``addr`` (uint64): no reference is taken, the
    caller keeps the arrays alive while C code may load it back."""
    def codegen(context, builder, sig, args):
        ptr = builder.inttoptr(args[0], context.get_value_type(sig.args[1]).as_pointer())
        builder.store(args[1], ptr)
        return context.get_dummy_value()
    return types.void(addr, val), codegen


@intrinsic
def _load_value(typingctx, ptr, ty):
    """Load a value of type ``ty`` (a TypeRef) stored by :func:`_store_value` at ``ptr`` (voidptr)."""
    vt = ty.instance_type

    def codegen(context, builder, sig, args):
        p = builder.bitcast(args[0], context.get_value_type(vt).as_pointer())
        return impl_ret_borrowed(context, builder, vt, builder.load(p))
    return vt(ptr, ty), codegen


def _value_size(vt) -> int:
    from numba.core.registry import cpu_target

    ctx = cpu_target.target_context
    return ctx.get_abi_sizeof(ctx.get_value_type(vt))


# ---- callbacks, compiled once per parameter type (per process) -----------------------------------
_CALLBACKS: dict = {}


def _callbacks(ud_type, lib: _Lib):
    """C callbacks (rhs, Jacobian, error weights) for a user-data tuple type ``ud_type``."""
    key = ud_type
    hit = _CALLBACKS.get(key)
    if hit is not None:
        return hit
    tref = types.TypeRef(ud_type)
    getp = lib.N_VGetArrayPointer
    bdata = lib.SUNBandMatrix_Data
    vp = types.voidptr
    opts = dict(nopython=True, boundscheck=False)

    @cfunc(types.intc(types.double, vp, vp, vp), **opts)
    def c_rhs(t, yv, fv, ud):
        rhs, _jac, params, atol, _rt, _vals, _dest, _hj = _load_value(ud, tref)
        n = atol.size
        y = carray(getp(yv), n)
        f = carray(getp(fv), n)
        rhs(t, y, params, f)
        s = 0.0
        for i in range(n):
            s += f[i] * 0.0
        return 0 if s == 0.0 else 1    # recoverable: CVODE retries with a smaller step

    @cfunc(types.intc(types.double, vp, vp, vp, vp, vp, vp, vp), **opts)
    def c_jac(t, yv, fyv, Jm, ud, t1, t2, t3):
        _rhs, jac, params, atol, _rt, vals, dest, _hj = _load_value(ud, tref)
        n = atol.size
        y = carray(getp(yv), n)
        jac(t, y, params, vals)
        nd = dest[0]
        a = carray(bdata(Jm), nd)
        for k in range(nd):
            a[k] = 0.0
        for k in range(vals.size):
            d = dest[k + 1]
            if d >= 0:
                a[d] += vals[k]
        return 0

    @cfunc(types.intc(vp, vp, vp), **opts)
    def c_ewt(yv, wv, ud):
        _rhs, _jac, _params, atol, rtolv, _vals, _dest, _hj = _load_value(ud, tref)
        n = atol.size
        y = carray(getp(yv), n)
        w = carray(getp(wv), n)
        for i in range(n):
            s = atol[i] + rtolv[i] * abs(y[i])
            if not s > 0.0:
                return -1
            w[i] = 1.0 / s
        return 0

    hit = (c_rhs, c_jac, c_ewt)
    _CALLBACKS[key] = hit
    return hit


# ---- the step loop (numba) ---------------------------------------------------------------------------
_DRIVERS: dict = {}


def _driver(lib: _Lib):
    """``drive(mem, yv, y, dkyv, dky, tret, t_out, Y_out, observe, params, acc, t_final, ud_addr, rhs, jac, atol,
    rtolv, vals, dest, has_jac) -> flag``: stores the user data at ``ud_addr``, then steps to t_final."""
    hit = _DRIVERS.get(lib.path)
    if hit is not None:
        return hit
    cvode = lib.CVode
    getdky = lib.CVodeGetDky

    @njit(nogil=True, boundscheck=False)
    def drive(mem, yv, y, dkyv, dky, tret, t_out, Y_out, observe, params, acc, t_final, ud_addr, rhs, jac, atol,
              rtolv, vals, dest, has_jac):
        # the callbacks' user data: this call's arguments, alive (with their meminfos) until it returns
        _store_value(ud_addr, (rhs, jac, params, atol, rtolv, vals, dest, has_jac))
        n = y.size
        k = 0
        nout = t_out.size
        t = tret[0]
        while k < nout and t_out[k] <= t:
            for i in range(n):
                Y_out[k, i] = y[i]
            k += 1
        taddr = tret.ctypes.data
        flag = 0
        while t < t_final:
            flag = cvode(mem, t_final, yv, taddr, CV_ONE_STEP)
            if flag < 0:
                break
            t = tret[0]
            while k < nout and t_out[k] <= t:
                if t_out[k] >= t:
                    for i in range(n):
                        Y_out[k, i] = y[i]
                else:
                    getdky(mem, t_out[k], 0, dkyv)
                    for i in range(n):
                        Y_out[k, i] = dky[i]
                k += 1
            observe(t, y, params, acc)
        return flag

    _DRIVERS[lib.path] = drive
    return drive


# ---- band layout of a pattern -----------------------------------------------------------------------
def band_of_pattern(pattern, n: int):
    """``(ml, mu)`` of the pattern's entries outside its border (entries in border rows/columns are
    left out of CVODE's band matrix)."""
    if pattern is None:
        return n - 1, n - 1
    ok = (pattern.rows >= 0) & (pattern.cols >= 0)
    if pattern.border is not None and pattern.border.size:
        isb = np.zeros(n, bool)
        isb[pattern.border] = True
        ok &= ~isb[np.maximum(pattern.rows, 0)] & ~isb[np.maximum(pattern.cols, 0)]
    d = pattern.rows[ok] - pattern.cols[ok]
    if d.size == 0:
        return 0, 0
    return int(max(0, d.max())), int(max(0, -d.min()))


def _band_dest(pattern, n, ml, mu, ldim, smu):
    """Position of each pattern value in CVODE's band storage (column-major, ``data[j*ldim + i-j+smu]``),
    −1 outside the band; element 0 holds the storage length."""
    r, c = pattern.rows, pattern.cols
    d = r - c
    ok = (r >= 0) & (c >= 0) & (d <= ml) & (-d <= mu)
    dest = np.where(ok, c * ldim + d + smu, -1).astype(np.int64)
    return np.concatenate([[ldim * n], dest]).astype(np.int64)


# ---- Python entry point -----------------------------------------------------------------------------
def check_problem(problem: Problem, observe_interval: float = 0.0) -> None:
    """Raise ValueError for what CVODE (as bound here) cannot integrate."""
    if problem.events is not None:
        raise ValueError("method 'cvode' does not support event functions; use an hpcrail method "
                         "(bdf, radau5, trbdf2, ...)")
    if not problem.mass_identity:
        raise ValueError("method 'cvode' integrates ODEs y' = f(t, y) only (no mass matrix); use bdf or radau5 "
                         "for M y' = f")
    if observe_interval:
        raise ValueError("method 'cvode' observes at step ends only: observe_interval must be 0")


def integrate_cvode(problem: Problem, t_out: np.ndarray, t_final: float, *, rtol: float = 1e-6,
                    atol: float = 1e-6, step: float = 0.0, hmin: float = 0.0, hmax: float = 0.0,
                    max_steps: int = 100_000_000, max_order: int = 5, stability_limit_detection: bool = False,
                    max_nonlin_iters: int = 3, jacobian: str = "auto", progress=None,
                    observe_interval: float = 0.0) -> Solution:
    """Integrate ``problem`` from ``problem.t0`` to ``t_final`` [s] with CVODE BDF (band Newton).

    Parameters as :func:`hpcrail.integrators.integrate` (``t_out`` float64[k] sorted sample times [s];
    error weights ``1/(atol·atol_scale_i + rtol·rtol_scale_i·|y_i|)``), plus ``max_order`` (1-5),
    ``stability_limit_detection`` (CVODE's BDF stability-limit detection) and ``max_nonlin_iters``.
    ``jacobian``: ``auto``/``analytic`` (the model's ``jac`` scattered into the band) or
    ``finite_difference`` (CVODE's difference quotients on the band).

    Returns a :class:`Solution` (stats: steps, rejected = error-test + convergence failures, nfev,
    njev, nlu = linear-solver set-ups, newton_iterations, newton_failures).  ``progress`` is called
    once at the end (CVODE runs in one call).

    Raises :class:`CvodeUnavailable` without the library; ValueError for events, a mass matrix,
    ``observe_interval`` > 0 or a bad option.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumbaExperimentalFeatureWarning)
        return _integrate_cvode(problem, t_out, t_final, rtol=rtol, atol=atol, step=step, hmin=hmin, hmax=hmax,
                                max_steps=max_steps, max_order=max_order,
                                stability_limit_detection=stability_limit_detection,
                                max_nonlin_iters=max_nonlin_iters, jacobian=jacobian, progress=progress,
                                observe_interval=observe_interval)


def _integrate_cvode(problem, t_out, t_final, *, rtol, atol, step, hmin, hmax, max_steps, max_order,
                     stability_limit_detection, max_nonlin_iters, jacobian, progress, observe_interval):
    check_problem(problem, observe_interval)
    if not 1 <= int(max_order) <= 5:
        raise ValueError(f"method 'cvode' option max_order = {max_order}; allowed 1-5")
    if jacobian not in ("auto", "analytic", "finite_difference", "dense"):
        raise ValueError(f"jacobian = {jacobian!r}; allowed: auto, analytic, finite_difference, dense")
    if jacobian == "analytic" and problem.jac is None:
        raise ValueError("jacobian = 'analytic' but the problem has no analytic Jacobian")
    lib = library()
    t0 = float(problem.t0)
    t_out = np.ascontiguousarray(t_out, dtype=np.float64)
    n = problem.y0.size
    use_jac = problem.jac is not None and jacobian in ("auto", "analytic")
    ml, mu = band_of_pattern(problem.jac_pattern if jacobian != "dense" else None, n)
    atol_vec = np.ascontiguousarray(atol * problem.atol_scale)
    rtol_vec = np.ascontiguousarray(rtol * problem.rtol_scale)
    acc = problem.acc0.copy()
    Y_out = np.full((t_out.size, n), np.nan)
    from hpcrail.integrators.driver import model_function_type, no_function

    fsig = model_function_type(problem.params).signature
    fns = (problem.rhs, problem.observe, problem.jac, no_function)
    c0 = time.perf_counter()
    for f in fns:
        if f is not None and fsig.args not in f.overloads:
            f.compile(fsig.args)
    jac_fn = problem.jac if use_jac else no_function
    nnz = problem.jac_pattern.nnz if (use_jac and problem.jac_pattern is not None) else 1
    vals = np.zeros(max(nnz, 1))
    dest_dummy = np.zeros(2, np.int64)
    buf = np.zeros(_USERDATA_BYTES // 8, np.uint64)
    ctx = ctypes.c_uint64(0)
    handles = {}
    try:
        if lib.SUNContext_Create(0, ctypes.addressof(ctx)) != 0:
            raise RuntimeError("SUNContext_Create failed")
        handles["ctx"] = ctx.value
        yv = lib.N_VNew_Serial(n, ctx.value)
        dkyv = lib.N_VNew_Serial(n, ctx.value)
        handles["yv"], handles["dkyv"] = yv, dkyv
        y = _as_array(lib.N_VGetArrayPointer_u(yv), n)
        dky = _as_array(lib.N_VGetArrayPointer_u(dkyv), n)
        y[:] = problem.y0
        A = lib.SUNBandMatrix(n, mu, ml, ctx.value)
        handles["A"] = A
        ldim = lib.SUNBandMatrix_LDim(A)
        smu = lib.SUNBandMatrix_StoredUpperBandwidth(A)
        dest = _band_dest(problem.jac_pattern, n, ml, mu, ldim, smu) if use_jac else dest_dummy
        fty = model_function_type(problem.params)
        argtys = (types.uint64, fty, fty, numba.typeof(problem.params), numba.typeof(atol_vec),
                  numba.typeof(rtol_vec), numba.typeof(vals), numba.typeof(dest), types.boolean)
        ud_type = types.Tuple(argtys[1:])
        if _value_size(ud_type) > buf.nbytes:
            raise ValueError("method 'cvode': the model's parameter object is too large for the user-data buffer")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NumbaExperimentalFeatureWarning)
            c_rhs, c_jac, c_ewt = _callbacks(ud_type, lib)
        drive = _driver(lib)
        mem = lib.CVodeCreate(CV_BDF, ctx.value)
        handles["mem"] = mem
        _check(lib.CVodeInit(mem, c_rhs.address, t0, yv), "CVodeInit")
        _check(lib.CVodeSetUserData(mem, buf.ctypes.data), "CVodeSetUserData")
        _check(lib.CVodeWFtolerances(mem, c_ewt.address), "CVodeWFtolerances")
        LS = lib.SUNLinSol_Band(yv, A, ctx.value)
        handles["LS"] = LS
        _check(lib.CVodeSetLinearSolver(mem, LS, A), "CVodeSetLinearSolver")
        if use_jac:
            _check(lib.CVodeSetJacFn(mem, c_jac.address), "CVodeSetJacFn")
        _check(lib.CVodeSetMaxOrd(mem, int(max_order)), "CVodeSetMaxOrd")
        _check(lib.CVodeSetMaxNumSteps(mem, int(min(max_steps, 2**62))), "CVodeSetMaxNumSteps")
        _check(lib.CVodeSetStopTime(mem, float(t_final)), "CVodeSetStopTime")
        _check(lib.CVodeSetStabLimDet(mem, int(bool(stability_limit_detection))), "CVodeSetStabLimDet")
        _check(lib.CVodeSetMaxNonlinIters(mem, int(max_nonlin_iters)), "CVodeSetMaxNonlinIters")
        if step > 0.0:
            _check(lib.CVodeSetInitStep(mem, float(step)), "CVodeSetInitStep")
        if hmax > 0.0:
            _check(lib.CVodeSetMaxStep(mem, float(hmax)), "CVodeSetMaxStep")
        if hmin > 0.0:
            _check(lib.CVodeSetMinStep(mem, float(hmin)), "CVodeSetMinStep")
        tret = np.array([t0])
        problem.observe(t0, y, problem.params, acc)
        dargs = (mem, yv, y, dkyv, dky, tret, t_out, Y_out, problem.observe, problem.params, acc, float(t_final),
                 buf.ctypes.data, problem.rhs, jac_fn, atol_vec, rtol_vec, vals, dest, bool(use_jac))
        dtys = tuple(numba.typeof(a) for a in dargs[:8]) + (fty,) + tuple(numba.typeof(a) for a in dargs[9:12]) \
            + (types.uint64, fty, fty) + argtys[4:]
        cres = drive.overloads.get(dtys)
        if cres is None:
            drive.compile(dtys)
            cres = drive.overloads[dtys]
        ctime = time.perf_counter() - c0
        w0 = time.perf_counter()
        flag = cres.entry_point(*dargs)
        wall = time.perf_counter() - w0
        counts = {}
        for name, f in lib.counters.items():
            v = ctypes.c_long(0)
            f(mem, ctypes.byref(v))
            counts[name] = int(v.value)
        y_final = y.copy()
        t_reached = float(tret[0])
    finally:
        _free(lib, handles)
    stats = dict.fromkeys(STAT_NAMES, 0)
    stats.update(steps=counts["CVodeGetNumSteps"],
                 rejected=counts["CVodeGetNumErrTestFails"] + counts["CVodeGetNumNonlinSolvConvFails"],
                 nfev=counts["CVodeGetNumRhsEvals"] + counts["CVodeGetNumLinRhsEvals"],
                 njev=counts["CVodeGetNumJacEvals"], nlu=counts["CVodeGetNumLinSolvSetups"],
                 newton_iterations=counts["CVodeGetNumNonlinSolvIters"],
                 newton_failures=counts["CVodeGetNumNonlinSolvConvFails"])
    if flag >= 0 and math.isclose(t_reached, t_final, rel_tol=1e-12, abs_tol=1e-12):
        code = DONE
    else:
        code = _FLAG_STATUS.get(int(flag), NEWTON_FAILURE)
    status = Status(code)
    if progress is not None:
        progress(t_reached, float(t_final), stats)
    msg = status.describe(t_reached)
    if code != DONE:
        msg += f" (CVODE flag {int(flag)})"
    return Solution(t=t_out, y=Y_out, status=status, message=msg, t_reached=t_reached, stats=stats, acc=acc,
                    wall_time=wall, compile_time=ctime, method="cvode", y_final=y_final)


def _as_array(addr: int, n: int) -> np.ndarray:
    return np.ctypeslib.as_array(ctypes.cast(addr, ctypes.POINTER(ctypes.c_double)), shape=(n,))


def _check(flag: int, what: str) -> None:
    if flag != 0:
        raise RuntimeError(f"method 'cvode': {what} returned {flag}")


def _free(lib: _Lib, h: dict) -> None:
    if "mem" in h:
        m = ctypes.c_uint64(h["mem"])
        lib.CVodeFree(ctypes.addressof(m))
    if "LS" in h:
        lib.SUNLinSolFree(h["LS"])
    if "A" in h:
        lib.SUNMatDestroy(h["A"])
    for k in ("yv", "dkyv"):
        if k in h:
            lib.N_VDestroy(h[k])
    if "ctx" in h:
        c = ctypes.c_uint64(h["ctx"])
        lib.SUNContext_Free(ctypes.addressof(c))


assert N_STATS == len(STAT_NAMES)


def run_cvode(problem, t_out, t_final, *, options=None, extra_settings=None, **kw):
    """:func:`integrate_cvode` with hpcrail's option names: the ``external`` runner of the catalogue entry
    ``cvode`` (:mod:`hpcrail.config.integrator`), called by :func:`hpcrail.integrators.integrate`.

    ``options``: ``max_order`` (1-5), ``stability_limit_detection`` (0/1), ``max_nonlin_iters``; the other
    keyword arguments are :func:`integrate_cvode`'s.  Raises what :func:`integrate_cvode` raises (a missing
    SUNDIALS library, events, a mass matrix)."""
    opts = dict(options or {})
    kw.pop("n_chunks", None)
    return integrate_cvode(problem, t_out, t_final, max_order=int(opts.get("max_order", 5)),
                           stability_limit_detection=bool(opts.get("stability_limit_detection", 0)),
                           max_nonlin_iters=int(opts.get("max_nonlin_iters", 3)), **kw)
