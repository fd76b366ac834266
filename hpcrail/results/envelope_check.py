"""Checked envelopes: the accuracy of a train run's largest in-train force peaks, measured after the run.

An adaptive integrator controls a local error norm, not the quantity users read: a method that damps the
coupler oscillation numerically (BDF2 on a lightly damped train) returns envelopes several per cent low while
every step passed its error test.  After a run, :func:`check_envelopes` therefore

1. picks the ``k`` largest draft peaks and the ``k`` largest buff peaks of the per-coupler envelopes (over every
   accepted step) that reach 1 % of the run's largest force, each at a distinct time: a coupler's peak whose time lies in the window of a larger peak
   already picked belongs to the same event and is skipped (the per-coupler times of the extremes come from the
   observer, :mod:`hpcrail.models.couplers.envelope`);
2. integrates the problem again with a reference setting — for a run of the BDF family variable-order BDF
   (orders 1-5) at rtol/100 and atol/100, otherwise the run's own method at those tolerances (fixed-step
   methods: a quarter of the step), or RK4 at a fixed step — over each window ``[t_peak − lead_s, t_peak +
   lag_s]`` from the run's stored state at the last sample before it (``span: window``; overlapping windows
   once), or over the whole run from its initial state up to the last peak's window end (``span: run``), or
   (``span: auto``, the default) over the windows, followed by a memory test that falls back to the whole run;
3. reports, per peak, the run's value, the reference's extreme of that coupler over the window (or the run) and
   the relative difference |F_run − F_ref| / |F_ref|; a peak above ``warn_above`` (1 %) makes the run warn.

A window measures only the error the run makes inside it, from the same state: the error carried into the window
is common to both and not seen.  On a lightly damped train that is most of it (the coupler oscillation excited
by a notch change rings for tens of seconds, and the method's numerical damping and phase error of that ringing
decide the later peaks): on configs/trains/linear30.yaml with bdf2 rtol 5e-5 the 3 s windows reported 0.07-0.29 %
where the peaks were 1.1-3.0 % off; ``span: run`` reports them to within 0.2 percentage points
(tests/test_envelope_check.py), at the cost of a run at the reference setting: 3.0-3.4× a BDF2 run of trains 2
and 4.  ``span: auto`` re-integrates the worst peak once more from twice as far back (6 s): error carried into
the windows shows as a difference that grows with the window (linear30, bdf2 5e-5: 0.29 % → 0.61 %), and then
the whole run is checked; where the train forgets its past within seconds (the hysteretic draft gears of trains
2 and 4: changes ≤ 0.04 percentage points) the windows stand, at 5-10 % of the run's CPU
(benchmarks/results/envelope_check.md).  A short run, where the windows and the memory test would integrate
half of the run or more, is checked over the whole run directly.  The test assumes that an error carried over tens of seconds also
grows from 3 s to 6 s windows; a train whose error builds up only over longer times needs ``span: run``.
Source of the procedure: hpcrail issue 26 (envelopes whose accuracy is checked); the reference settings follow
the accuracy studies of docs/performance.md.

Generic: any kind whose observer keeps the coupler envelopes of :mod:`hpcrail.models.couplers.envelope`
(the LTD consist, the consist of a mixed train) declares :func:`check_outputs` and calls :func:`check_envelopes`.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from hpcrail.results.outputs import Dim, Output

CHECK_DIM = Dim("checked_peak", "checked in-train force peak (draft peaks first, then buff peaks)")
#: RK4 step of the ``reference: rk4`` setting when none is given [s] (the draft-gear bars need 0.5 ms)
RK4_REFERENCE_STEP_S = 5e-4
#: kernels of the BDF family (bdf, bdf2, ndf, mrbdf2): ``reference: auto`` checks them with variable-order BDF
BDF_FAMILY_KERNELS = ("bdf", "mrbdf")
#: ``span: auto`` keeps the windows when the worst peak's difference, re-integrated from twice as far back,
#: changes by at most ``AUTO_CHANGE · warn_above`` and grows by at most ``AUTO_GROWTH`` × itself +
#: ``AUTO_FLOOR · warn_above``.  Measured (benchmarks/envelope_check.py, docs/performance.md): on trains 2 and 4
#: (hysteretic draft gears) the differences change by ≤ 0.04 percentage points from 3 s to 6 s windows; on the
#: lightly damped linear30 with bdf2 rtol 5e-5 the worst grows 0.29 % → 0.61 % (whole run: 3.0 %)
AUTO_CHANGE = 0.1
#: peaks smaller than this fraction of the run's largest in-train force (either sign) are not checked: their
#: relative difference says nothing (a short consist that never pulls has draft "peaks" of a few newtons)
PEAK_FLOOR = 0.01
AUTO_GROWTH = 1.5
AUTO_FLOOR = 0.05
#: ``span: auto`` integrates the whole run directly when its windows and memory test would cover at least this
#: fraction of it (a short run: the whole run costs about as much and also sees the error carried into the
#: peaks; the 25 s emergency stop of train4_emergency.yaml, the 20 s mixed trains)
AUTO_SHORT = 0.5
_NAN = "NaN when the run has fewer distinct peaks than output.envelope_check.peaks"


def check_outputs(when, when_text: str) -> tuple:
    """Output declarations of the check, conditional on ``when(scenario)`` (the kind's
    ``output.envelope_check.enabled``)."""
    kn = dict(display_units="kN", display_scale=1e-3)
    d = ("checked_peak",)

    def o(name, dims, units, long_name, description, role, **kw):
        return Output(name, dims, units, long_name, description, role, when=when, when_text=when_text, **kw)

    return (
        o("envelope_check_error", (), "1", "checked peaks: largest relative difference", "Largest relative "
          "difference |F_run - F_ref| / |F_ref| of the checked draft and buff peaks against their reference "
          "re-integration.", "metric", limit=0.01, limit_source="envelope check (output.envelope_check.warn_above)",
          missing="NaN when no peak could be checked"),
        o("envelope_check_reference", (), "", "reference of the envelope check", "Integrator setting of the "
          "reference re-integrations.", "run", dtype="str"),
        o("checked_peak_coupler", d, "1", "coupler of the checked peak", "Coupler number of the checked peak (0 "
          "when no peak).", "element", dtype="int64"),
        o("checked_peak_time", d, "s", "time of the checked peak", "Time of the peak in the run (first accepted "
          "step where it occurs).", "element", missing=_NAN),
        o("checked_peak_force", d, "N", "checked peak force (run)", "The run's peak in-train force of that "
          "coupler over every accepted step (+ draft, - buff).", "element", missing=_NAN, **kn),
        o("checked_peak_reference", d, "N", "checked peak force (reference)", "The reference's peak force of that "
          "coupler over the re-integrated window (+ draft, - buff).", "element", missing=_NAN, **kn),
        o("checked_peak_error", d, "1", "relative difference of the checked peak", "Relative difference |F_run - "
          "F_ref| / |F_ref| of the peak.", "element", missing=_NAN),
        o("checked_peak_window", d, "s", "start of the checked window", "Start of the re-integrated window (the "
          "run's stored sample it starts from).", "element", missing=_NAN),
    )


CHECK_NAMES = ("envelope_check_error", "envelope_check_reference", "checked_peak_coupler",
               "checked_peak_time", "checked_peak_force", "checked_peak_reference", "checked_peak_error",
               "checked_peak_window")
#: what ``hpcrail run`` prints in the summary table (the peaks have their own table)
CHECK_SUMMARY = ("envelope_check_error",)


@dataclasses.dataclass
class Peak:
    """One checked peak: ``sign`` +1 draft, −1 buff; ``coupler`` 0-based; ``t`` [s]; ``force`` [N] (signed)."""

    sign: int
    coupler: int
    t: float
    force: float


def select_peaks(fmax: np.ndarray, fmin: np.ndarray, tmax: np.ndarray, tmin: np.ndarray, k: int,
                 lead_s: float, lag_s: float, floor: float = 0.0) -> list[Peak]:
    """The ``k`` largest draft peaks then the ``k`` largest buff peaks at distinct times.

    ``fmax``/``fmin`` float64[M] per-coupler extreme forces [N] (+ draft), ``tmax``/``tmin`` their times [s].
    A coupler's peak is skipped when its time lies within ``[t − lead_s, t + lag_s]`` of a larger peak of the same
    sign already picked (the same event), or when its magnitude is below ``floor`` [N] (a consist that never
    pulls has no draft peak to check)."""
    out: list[Peak] = []
    for sign, f, tt in ((1, fmax, tmax), (-1, fmin, tmin)):
        val = sign * np.asarray(f, float)
        ok = np.isfinite(val) & np.isfinite(tt) & (val > 0.0) & (val >= floor)
        order = np.argsort(-np.where(ok, val, -np.inf), kind="stable")
        picked: list[Peak] = []
        for c in order:
            if not ok[c] or len(picked) >= k:
                break
            t = float(tt[c])
            if any(p.t - lead_s <= t <= p.t + lag_s or t - lead_s <= p.t <= t + lag_s for p in picked):
                continue
            picked.append(Peak(sign, int(c), t, float(f[c])))
        out += picked
    return out


def merged_windows(peaks: list[Peak], lead_s: float, lag_s: float, t0: float, t_end: float) -> list[list]:
    """``[[start, end, [peak indices]], ...]``: the peaks' windows clipped to [t0, t_end], overlapping ones merged,
    in time order."""
    w = sorted(([max(t0, p.t - lead_s), min(t_end, p.t + lag_s), [i]] for i, p in enumerate(peaks)),
               key=lambda x: x[0])
    out: list[list] = []
    for a, b, ids in w:
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
            out[-1][2] += ids
        else:
            out.append([a, b, list(ids)])
    return out


def reference_setting(method: str, kwargs: dict, cfg) -> tuple[str, dict, str]:
    """``(method, integrate keyword arguments, label)`` of the reference (see :class:`~hpcrail.config.
    envelope_check.EnvelopeCheck`); ``kwargs`` the run's (``Integrator.kwargs()``)."""
    from hpcrail.config.integrator import method_spec

    if cfg.reference == "rk4":
        h = float(cfg.reference_step_s or RK4_REFERENCE_STEP_S)
        return "rk4", dict(step=h), f"rk4 step {h * 1e3:g} ms"
    spec = method_spec(method)
    kw = dict(kwargs)
    if cfg.reference == "auto" and spec.kernel.split(":")[-1] in BDF_FAMILY_KERNELS:
        # the BDF family's reference: variable-order BDF (orders 1-5) at the tightened tolerances — another
        # method than a BDF2 run (it does not share BDF2's numerical damping of the coupler oscillation) and
        # far cheaper than BDF2 at rtol/100 (docs/performance.md, benchmarks/envelope_check.py)
        kw["options"] = {k: v for k, v in (kw.get("options") or {}).items() if k not in ("max_order", "ndf",
                                                                                       "refine_fraction")}
        spec = method_spec("bdf")
    if spec.adaptive:
        kw["rtol"] = kw.get("rtol", 1e-6) / cfg.tighten
        kw["atol"] = kw.get("atol", 1e-6) / cfg.tighten
        kw["max_steps"] = 10 ** 9
        return spec.name, kw, f"{spec.name} rtol {kw['rtol']:.3g} atol {kw['atol']:.3g}"
    kw["step"] = kw["step"] / 4.0
    kw["max_steps"] = 10 ** 9
    return spec.name, kw, f"{spec.name} step {kw['step'] * 1e3:g} ms"


def _auto_cover(live: list, cfg, t0: float, t_end: float) -> float:
    """Simulated time that ``span: auto`` would integrate in its windows and its memory test (``2·lead_s +
    lag_s``), as a fraction of the whole-run reference's span ``[t0, last peak + lag_s]``."""
    span = min(t_end, max(p.t for p in live) + cfg.lag_s) - t0
    wins = sum(b - a for a, b, _ids in merged_windows(live, cfg.lead_s, cfg.lag_s, t0, t_end))
    return (wins + 2.0 * cfg.lead_s + cfg.lag_s) / span if span > 0.0 else 1.0


def _start_state(problem, sol, ws: float):
    """``(t, y)``: the run's last finite sample at or before ``ws`` (else the initial state)."""
    t = np.asarray(sol.t, float)
    y = np.asarray(sol.y)
    idx = np.nonzero(t <= ws + 1e-12)[0]
    for i in idx[::-1]:
        if np.all(np.isfinite(y[i])):
            return float(t[i]), np.array(y[i], float)
    return float(problem.t0), np.array(problem.y0, float)


def check_envelopes(problem, sol, method: str, kwargs: dict, cfg, n_couplers: int, *, acc_slice=slice(None),
                    peaks: list | None = None):
    """Check the run's largest peaks (module docstring).

    ``problem``: the run's monolithic :class:`~hpcrail.integrators.Problem` (serial; its ``acc0`` a fresh
    accumulator); ``sol``: its :class:`~hpcrail.integrators.Solution` (samples ``t``/``y``, accumulator ``acc``);
    ``method``/``kwargs``: the run's integrator (name and ``Integrator.kwargs()``); ``cfg``: an
    :class:`~hpcrail.config.envelope_check.EnvelopeCheck`; ``n_couplers`` M; ``acc_slice`` the coupler-envelope
    part of the accumulator (a mixed train's LTD part); ``peaks`` the :class:`Peak` s to check instead of those
    :func:`select_peaks` picks (at most ``cfg.peaks`` of each sign; used by benchmarks/envelope_check.py).

    Returns ``(values, warnings, cpu)``: the outputs of :func:`check_outputs` (arrays of ``2·cfg.peaks`` peaks, NaN
    padded), warnings (one sentence each) and the thread CPU time of the reference integrations [s].  Raises
    nothing for a failed reference: its peaks stay NaN with a warning.
    """
    from hpcrail.integrators import integrate
    from hpcrail.models.couplers.envelope import coupler_envelopes, coupler_peak_times

    M = n_couplers
    K = 2 * cfg.peaks
    acc = np.asarray(sol.acc)[acc_slice]
    fmax, fmin, _emax, _emin = coupler_envelopes(acc, M)
    tmax, tmin = coupler_peak_times(acc, M)
    if peaks is None:
        big = np.concatenate([np.abs(fmax), np.abs(fmin)])
        big = float(np.max(big[np.isfinite(big)], initial=0.0))
        peaks = select_peaks(fmax, fmin, tmax, tmin, cfg.peaks, cfg.lead_s, cfg.lag_s, PEAK_FLOOR * big)
    draft = [p for p in peaks if p.sign > 0]
    buff = [p for p in peaks if p.sign < 0]
    slots = draft + [None] * (cfg.peaks - len(draft)) + buff + [None] * (cfg.peaks - len(buff))
    rmethod, rkw, label = reference_setting(method, kwargs, cfg)
    vals = {"checked_peak_coupler": np.zeros(K, np.int64), "checked_peak_time": np.full(K, np.nan),
            "checked_peak_force": np.full(K, np.nan), "checked_peak_reference": np.full(K, np.nan),
            "checked_peak_error": np.full(K, np.nan), "checked_peak_window": np.full(K, np.nan)}
    warnings: list[str] = []
    live = [p for p in slots if p is not None]
    t0, t_end = float(problem.t0), float(sol.t_reached)

    def reference(a: float, b: float, ids: list, whole: bool) -> tuple[dict, list]:
        """Reference extremes of the peaks ``ids`` (indices into ``live``) over ``[a, b]`` (from the initial
        state when ``whole``, else from the run's stored sample at or before ``a``): ``({i: (ts, r)}, failures)``."""
        ts, ys = (t0, np.array(problem.y0, float)) if whole else _start_state(problem, sol, a)
        if b <= ts:
            return {}, []
        prob = dataclasses.replace(problem, y0=ys, t0=ts, acc0=np.array(problem.acc0, float))
        ref = integrate(prob, rmethod, np.array([b]), b, **rkw)
        rf = coupler_envelopes(np.asarray(ref.acc)[acc_slice], M)
        out, bad = {}, []
        for i in ids:
            p = live[i]
            r = float(rf[0][p.coupler] if p.sign > 0 else rf[1][p.coupler])
            if not ref.success or not np.isfinite(r) or r * p.sign <= 0.0:
                bad.append(f"envelope check: the reference re-integration of [{ts:.6g}, {b:.6g}] s ({label}) "
                           f"{'failed: ' + ref.message if not ref.success else 'found no peak there'}")
                out[i] = (ts, float("nan"))
            else:
                out[i] = (ts, r)
        return out, bad

    def span_run() -> tuple[dict, list]:
        # one reference from the initial state to the last peak's window end: each checked coupler's extreme
        # there (a later extreme of the reference would be another event than the run's peak)
        b = min(t_end, max(p.t for p in live) + cfg.lag_s)
        return reference(t0, b, list(range(len(live))), True)

    def span_windows(lead: float, ids: list) -> tuple[dict, list]:
        got, bad = {}, []
        for a, b, w_ids in merged_windows([live[i] for i in ids], lead, cfg.lag_s, t0, t_end):
            g, f = reference(a, b, [ids[k] for k in w_ids], False)
            got.update(g)
            bad += f
        return got, bad

    def rel(i: int, got: dict) -> float:
        r = got.get(i, (0.0, float("nan")))[1]
        return abs(live[i].force - r) / abs(r) if np.isfinite(r) else float("nan")

    c0 = time.thread_time()
    note = ""
    if not live:
        got, bad = {}, []
    elif cfg.span == "run":
        got, bad = span_run()
    elif cfg.span == "auto" and (covered := _auto_cover(live, cfg, t0, t_end)) >= AUTO_SHORT:
        # a short run: the windows and the memory test would integrate most of it anyway
        got, bad = span_run()
        note = f"; whole run (the windows would integrate {100 * covered:.0f} % of it)"
    else:
        got, bad = span_windows(cfg.lead_s, list(range(len(live))))
        note = f"; windows from {cfg.lead_s:g} s before each peak"
        if cfg.span == "auto":
            # the memory test: the worst peak again from twice as far back.  Error the run carried into the
            # windows shows as a difference that grows with the window; when it does, the whole run is checked
            errs = [rel(i, got) for i in range(len(live))]
            if bad or not np.all(np.isfinite(errs)):
                got, bad = span_run()
                note = "; whole run (a window's reference failed)"
            else:
                j = int(np.argmax(errs))
                e1 = errs[j]
                g2, f2 = span_windows(2.0 * cfg.lead_s, [j])
                e2 = rel(j, g2)
                lim = AUTO_CHANGE * cfg.warn_above
                if not f2 and e2 == e2 and abs(e2 - e1) <= lim and e2 <= AUTO_GROWTH * e1 + AUTO_FLOOR * cfg.warn_above:
                    note += (f" (the worst peak from {2 * cfg.lead_s:g} s: {100 * e2:.3g} % against {100 * e1:.3g} %: "
                             "no error carried in)")
                else:
                    got, bad = span_run()
                    note = (f"; whole run (the worst peak's difference changed from {100 * e1:.3g} % to {100 * e2:.3g} "
                            f"% when its window started {cfg.lead_s:g} s earlier: the windows depend on the error "
                            "carried into them)")
    warnings += bad
    for i, (ts, r) in got.items():
        p = live[i]
        j = slots.index(p)
        vals["checked_peak_coupler"][j] = p.coupler + 1
        vals["checked_peak_time"][j] = p.t
        vals["checked_peak_force"][j] = p.force
        vals["checked_peak_window"][j] = ts
        if np.isfinite(r):
            vals["checked_peak_reference"][j] = r
            vals["checked_peak_error"][j] = abs(p.force - r) / abs(r)
    cpu = time.thread_time() - c0
    err = vals["checked_peak_error"]
    worst = float(np.nanmax(err)) if np.any(np.isfinite(err)) else float("nan")
    if worst == worst and worst > cfg.warn_above:
        j = int(np.nanargmax(err))
        kind = "draft" if j < cfg.peaks else "buff"
        warnings.append(f"envelope check: the {kind} peak of coupler {int(vals['checked_peak_coupler'][j])} at "
                        f"t = {vals['checked_peak_time'][j]:.6g} s differs by {100 * worst:.2g} % from its reference "
                        f"({label}); tighten the integrator (rtol) or choose another method (docs/performance.md)")
    vals.update(envelope_check_error=worst, envelope_check_reference=label + note)
    return vals, warnings, float(cpu)


def add_check(res, problem, sol, method: str, kwargs: dict, cfg, n_couplers: int, *, acc_slice=slice(None)) -> None:
    """Add the check of a finished run to its :class:`~hpcrail.results.outputs.RunResult` ``res`` (in place):
    the outputs of :func:`check_outputs` (NaN peaks when the run failed), its warnings, the run's own threshold
    as the metric's limit, and the check's thread CPU time [s] as the attribute ``envelope_check_cpu_s`` (an
    attribute, not an output: a timing differs between identical runs).  Arguments as :func:`check_envelopes`."""
    if sol.success:
        vals, warns, cpu = check_envelopes(problem, sol, method, kwargs, cfg, n_couplers, acc_slice=acc_slice)
    else:
        K = 2 * cfg.peaks
        vals = dict(envelope_check_error=float("nan"), envelope_check_reference="",
                    checked_peak_coupler=np.zeros(K, np.int64),
                    **{n: np.full(K, np.nan) for n in CHECK_NAMES[3:]})
        warns, cpu = [], 0.0
    res.values.update(vals)
    res.warnings += warns
    res.value_attrs.update(check_value_attrs(cfg))
    res.attrs["envelope_check_cpu_s"] = cpu


def check_value_attrs(cfg) -> dict:
    """Per-run attributes of the check's outputs (the run's own warning threshold as the metric's limit)."""
    return {"envelope_check_error": {"limit": float(cfg.warn_above),
                                     "limit_source": "envelope check (output.envelope_check.warn_above)"}}


__all__ = ["CHECK_DIM", "CHECK_NAMES", "CHECK_SUMMARY", "Peak", "check_outputs", "select_peaks", "merged_windows",
           "reference_setting", "check_envelopes", "add_check", "check_value_attrs", "RK4_REFERENCE_STEP_S"]
