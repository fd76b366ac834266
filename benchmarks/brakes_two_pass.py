"""Two passes for the pneumatic trip (issue 24): the brake system alone, then the motion alone — measured.

With a time-based schedule the pneumatic brake's states do not depend on the vehicles' motion (the brake pipe,
valves, reservoirs and cylinders see the driver's commands, the radio/ECP/EOT delays and the separation time,
never a speed or a position: ``models/brakes/kernel.py``), and the motion sees the brake only through each
vehicle's cylinder and independent-brake pressures (``block_force``).  The system is block triangular, so it can
be integrated exactly in two passes instead of monolithically:

1. **brake pass**: the shipped state vector and Jacobian pattern with the motion's derivatives and Jacobian rows
   set to zero (the vehicles stand where they are; no brake equation reads them), the shipped method and
   tolerances.  Its steps follow the brake's own transients: long while the system is charged and quiet.  After
   every accepted step it records, per vehicle, the two states the motion reads and their time derivatives.
2. **motion pass**: only the motion states (2 per vehicle and the notch/energy tail: train 4's 491 instead of
   3651), the shipped right-hand side and Jacobian of the motion evaluated on a full state whose two brake
   states per vehicle are the brake pass's cubic Hermite interpolant at t; same method and tolerances.

The integrators' error norm is a root mean square over the states: in the monolithic run the 3160 quiet-ish
brake states dilute the motion's error by √(3651/492) = 2.72, so the motion pass at the same rtol/atol is
held ~2.7× tighter; ``--motion-tol-factor 1 2.72`` measures both (one row each).

This script is a prototype (the two passes are benchmark code, not a run path of hpcrail): it measures what the
two passes cost and how far their coupler envelopes are from the rtol 1e-7 monolithic reference, next to the
shipped monolithic run and train 4.  Thread CPU time of the integration (compilation excluded: one warm-up run
of each pass first), medians of ``--repeats``; one core.

Usage:  python benchmarks/brakes_two_pass.py [--repeats 3] [--duration 3863] [--motion-tol-factor 1 2.72]
Writes benchmarks/results/brakes_two_pass.md (and prints it).  Records the load average with every block.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import types
from pathlib import Path

import numpy as np

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from brakes import ROOT, TRAINS, case, envelope_error, reference, run  # noqa: E402
from numba import njit  # noqa: E402

from hpcrail.integrators import Problem, integrate  # noqa: E402
from hpcrail.integrators.linalg import JacobianPattern  # noqa: E402
from hpcrail.models.brakes.kernel import brake_eval_range, brake_jac_range  # noqa: E402
from hpcrail.models.brakes.layout import (  # noqa: E402
    S_ECP, S_ECP_DELAY, S_EOT_DELAY, S_EOT_J, S_OBC, S_OIND, S_SEP_J, S_SEP_T, S_SEP_TOPEN, V_DELAY,
)
from hpcrail.models.ltd.jacobian import _jac_range, _no_noninertial_jac, ltd_jac_tail  # noqa: E402
from hpcrail.models.ltd.kernel import (  # noqa: E402
    _store_totals, driver_command, ltd_eval_range_pneumatic, ltd_observe_tables, schedule_index,
)
from hpcrail.results.sampling import sample_times  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "brakes_two_pass.md"


# ---------------------------------------------------------------------------------------------- brake pass
@njit
def brake_rhs(t, y, P, dydt):
    p, motion, _zero, _d, _obc, _oind = P
    brake_eval_range(t, y, p, dydt, np.int64(0), p.n_veh)
    for i in motion:
        dydt[i] = 0.0


@njit
def brake_jac(t, y, P, vals):
    p, _motion, zero, _d, _obc, _oind = P
    for k in zero:
        vals[k] = 0.0
    brake_jac_range(t, y, p, vals, np.int64(0), p.n_veh)


@njit
def brake_record(t, y, P, acc):
    """acc = [count, capacity, then per record: t, q_bc[N], p_ind[N], dq_bc[N], dp_ind[N]]."""
    p, _motion, _zero, d, obc, oind = P
    N = obc.size
    k = int(acc[0])
    if k < 0:
        return
    if k >= int(acc[1]):
        acc[0] = -1.0          # overflow: the caller re-runs with a larger capacity
        return
    brake_eval_range(t, y, p, d, np.int64(0), p.n_veh)
    o = 2 + k * (1 + 4 * N)
    acc[o] = t
    for j in range(N):
        acc[o + 1 + j] = y[obc[j]]
        acc[o + 1 + N + j] = y[oind[j]]
        acc[o + 1 + 2 * N + j] = d[obc[j]]
        acc[o + 1 + 3 * N + j] = d[oind[j]]
    acc[0] = k + 1.0


# --------------------------------------------------------------------------------------------- motion pass
@njit
def fill(t, ym, P):
    """The full state of the motion pass at t: the motion states, the two brake states per vehicle by cubic
    Hermite interpolation of the brake pass's records (the brake is constant after the last record)."""
    p, motion, yfull, _dfull, _vfull, _sel, obc, oind, tab, cursor = P
    for i in range(motion.size):
        yfull[motion[i]] = ym[i]
    N = obc.size
    K = tab.shape[0]
    k = cursor[0]
    if k > K - 2:
        k = K - 2
    while k > 0 and tab[k, 0] > t:
        k -= 1
    while k < K - 2 and tab[k + 1, 0] <= t:
        k += 1
    cursor[0] = k
    t0 = tab[k, 0]
    t1 = tab[k + 1, 0]
    h = t1 - t0
    s = (t - t0) / h
    if s < 0.0:
        s = 0.0
    if s > 1.0:
        s = 1.0
    h00 = (1.0 + 2.0 * s) * (1.0 - s) ** 2
    h10 = s * (1.0 - s) ** 2
    h01 = s * s * (3.0 - 2.0 * s)
    h11 = s * s * (s - 1.0)
    for j in range(N):
        yfull[obc[j]] = (h00 * tab[k, 1 + j] + h10 * h * tab[k, 1 + 2 * N + j] + h01 * tab[k + 1, 1 + j]
                         + h11 * h * tab[k + 1, 1 + 2 * N + j])
        yfull[oind[j]] = (h00 * tab[k, 1 + N + j] + h10 * h * tab[k, 1 + 3 * N + j] + h01 * tab[k + 1, 1 + N + j]
                          + h11 * h * tab[k + 1, 1 + 3 * N + j])
    return yfull


@njit
def motion_rhs(t, ym, P, dm):
    p, motion, _yfull, dfull, _vfull, _sel, _obc, _oind, _tab, _cursor = P
    y = fill(t, ym, P)
    notch, cmd_notch, cmd_brake = driver_command(t, y, p, dfull)
    w_t, w_r, w_b, w_c = ltd_eval_range_pneumatic(t, y, p, dfull, p.no_record, False, np.int64(0), p.n_veh, y[0],
                                                  notch, cmd_brake)
    _store_totals(p, dfull, p.no_record, False, w_t, w_r, w_b, w_c, cmd_notch, cmd_brake)
    for i in range(motion.size):
        dm[i] = dfull[motion[i]]


@njit
def motion_jac(t, ym, P, vals):
    p, _motion, _yfull, _dfull, vfull, sel, _obc, _oind, _tab, _cursor = P
    y = fill(t, ym, P)
    ic = schedule_index(p, t, y)     # the motion's rows of ltd_jac_pneumatic (its brake rows left out)
    _jac_range(t, y, p, vfull, np.int64(0), p.n_veh, y[0], y[p.i_notch], p.sched_brake[ic], _no_noninertial_jac,
               True)
    ltd_jac_tail(t, y, p, vfull)
    for k in range(sel.size):
        vals[k] = vfull[sel[k]]


@njit
def motion_observe(t, ym, P, acc):
    p = P[0]
    ltd_observe_tables(t, fill(t, ym, P), p, acc)


# ------------------------------------------------------------------------------------------------- set-up
def layout(prob, p):
    n = prob.y0.size
    B, N = p.block, p.n_veh
    motion = np.sort(np.concatenate([B * np.arange(N), B * np.arange(N) + 1, np.arange(B * N, n)])).astype(np.int64)
    obc = (B * np.arange(N) + int(p.pn_s[S_OBC])).astype(np.int64)
    oind = (B * np.arange(N) + int(p.pn_s[S_OIND])).astype(np.int64)
    return motion, obc, oind


def brake_breakpoints(p, T):
    """Times at which a brake input changes: each change of the brake command (service, emergency, independent)
    followed after every device's delay (a remote brake valve's radio delay, ECP, EOT), and the separation.
    A multistep method that has grown its step in the quiet charged state must not step over them."""
    s, x, sch = p.pn_s, p.sched_x, p.pn_sched
    delays = {0.0} | {float(d) for d in p.pn_v[:, V_DELAY]}
    if s[S_ECP] != 0.0:
        delays.add(float(s[S_ECP_DELAY]))
    if s[S_EOT_J] >= 0.0:
        delays.add(float(s[S_EOT_DELAY]))
    bps = set()
    for k in range(1, x.size):
        if np.any(sch[k] != sch[k - 1]):
            bps |= {float(x[k]) + d for d in delays}
    if s[S_SEP_J] >= 0.0:
        bps |= {float(s[S_SEP_T]), float(s[S_SEP_T] + s[S_SEP_TOPEN])}
    return np.array(sorted(b for b in bps if 0.0 < b < T))


def brake_pass(sc, prob, capacity, **kw):
    """Pass 1, integrated from one brake breakpoint to the next (each a restart of the method).  Returns
    ``(CPU, samples every 10 s, stats, records)``."""
    p = prob.params
    assert p.basis == 0, "two passes need a time-based schedule (a distance-based one couples brake and motion)"
    motion, obc, oind = layout(prob, p)
    pat = prob.jac_pattern
    zero = np.flatnonzero(np.isin(pat.rows, motion)).astype(np.int64)
    P = (p, motion, zero, np.zeros_like(prob.y0), obc, oind)
    N = obc.size
    acc = np.zeros(2 + capacity * (1 + 4 * N))
    acc[1] = capacity
    T = sc.simulation.duration_s
    edges = np.concatenate([[0.0], brake_breakpoints(p, T), [T]])
    t_out = sample_times(0.0, T, 10.0)
    y, Y, stats = prob.y0.copy(), np.empty((t_out.size, prob.y0.size)), {}
    opts = dict(sc.integrator.kwargs(), **kw)
    c0 = time.thread_time()
    for a, b in zip(edges[:-1], edges[1:]):
        sel = (t_out > a) & (t_out <= b) if a > 0.0 else (t_out <= b)
        pb = Problem(brake_rhs, brake_record, P, y, t0=float(a), atol_scale=prob.atol_scale, acc0=acc, jac=brake_jac,
                     jac_pattern=pat, rtol_scale=prob.rtol_scale)
        sol = integrate(pb, sc.integrator.method, t_out[sel], float(b), **opts)
        assert sol.success, sol.message
        Y[sel] = sol.y
        y, acc = sol.y_final, sol.acc
        for key in ("steps", "rejected", "nlu", "nfev", "njev", "newton_iterations"):
            stats[key] = stats.get(key, 0) + sol.stats[key]
    c = time.thread_time() - c0
    k = int(acc[0])
    if k < 0:
        return brake_pass(sc, prob, capacity * 2, **kw)
    tab = acc[2:2 + k * (1 + 4 * N)].reshape(k, 1 + 4 * N).copy()
    # records at equal times (each segment's first observation repeats the previous one's last): keep the last
    keep = np.append(np.diff(tab[:, 0]) > 0.0, True)
    return c, types.SimpleNamespace(y=Y, stats=stats, segments=edges.size - 1), tab[keep]


def motion_problem(prob, tab):
    p = prob.params
    motion, obc, oind = layout(prob, p)
    pat = prob.jac_pattern
    inv = -np.ones(prob.y0.size, dtype=np.int64)
    inv[motion] = np.arange(motion.size)
    sel = np.flatnonzero((inv[pat.rows] >= 0) & (inv[pat.cols] >= 0)).astype(np.int64)
    lost = np.flatnonzero((inv[pat.rows] >= 0) & (inv[pat.cols] < 0))
    assert lost.size == 0, "a motion row depends on a brake state: not block triangular"
    border = inv[np.asarray(pat.border, dtype=np.int64)] if pat.border is not None else None
    mpat = JacobianPattern.sparse(motion.size, inv[pat.rows[sel]], inv[pat.cols[sel]], border=border)
    P = (p, motion, prob.y0.copy(), np.zeros_like(prob.y0), np.zeros(pat.nnz), sel, obc, oind, tab,
         np.zeros(1, dtype=np.int64))
    return Problem(motion_rhs, motion_observe, P, prob.y0[motion].copy(), atol_scale=prob.atol_scale[motion],
                   acc0=prob.acc0.copy(), jac=motion_jac, jac_pattern=mpat, rtol_scale=prob.rtol_scale[motion])


def timed(fn, repeats):
    fn()     # warm-up (compilation)
    cs, out = [], None
    for _ in range(repeats):
        c, *out = fn()
        cs.append(c)
    return float(np.median(cs)), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--duration", type=float, default=3863.0)
    ap.add_argument("--capacity", type=int, default=2500, help="brake-pass records kept (doubled when exceeded)")
    ap.add_argument("--motion-tol-factor", type=float, nargs="*", default=[1.0],
                    help="the motion pass's rtol and atol times these factors (one row each)")
    a = ap.parse_args()
    load = lambda: " / ".join(f"{x:.2f}" for x in os.getloadavg()[:2])  # noqa: E731
    T = a.duration
    sc, model, prob = case(TRAINS / "train4_pneumatic.yaml", [f"simulation.duration_s={T:g}"])
    sc4, _m4, prob4 = case(TRAINS / "train4.yaml", [f"simulation.duration_s={T:g}"])
    M = model.params.n_veh - 1
    l0 = load()
    ref, how = reference(sc, prob, M)
    print(f"reference (bdf2 rtol 1e-7, monolithic): {how}", flush=True)

    c_mono, (sol_mono,) = timed(lambda: run(sc, prob), a.repeats)
    c_t4, (sol_t4,) = timed(lambda: run(sc4, prob4), a.repeats)
    c_b, (sol_b, tab) = timed(lambda: brake_pass(sc, prob, a.capacity), a.repeats)
    pm = motion_problem(prob, tab)
    motion_runs = []
    for fac in a.motion_tol_factor:
        extra = dict(rtol=sc.integrator.rtol * fac, atol=sc.integrator.atol * fac)
        motion_runs.append((fac,) + timed(lambda: run(sc, pm, **extra), a.repeats))
    l1 = load()

    # the brake states of the brake pass against the monolithic run's, at the samples (10 s)
    motion, obc, oind = layout(prob, model.params)
    brake = np.setdiff1d(np.arange(prob.y0.size), motion)
    press = brake[np.abs(sol_mono.y[:, brake]).max(axis=0) > 1e4]      # the pressure states [Pa] (and q_bc)
    dbrake = float(np.abs(sol_b.y[:, press] - sol_mono.y[:, press]).max())
    e_mono = envelope_error(M, sol_mono.acc, ref)
    st = lambda s: " / ".join(f"{s.stats[k]:,}" for k in ("steps", "rejected", "nlu", "njev", "nfev", "newton_iterations"))  # noqa: E731
    lines = [
        "# Pneumatic trip in two passes: brake system, then motion (issue 24, prototype)", "",
        f"`python benchmarks/brakes_two_pass.py --repeats {a.repeats} --duration {T:g}`; thread CPU of the "
        "integration (compilation excluded), medians; one core; load average (1 / 5 min) "
        f"{l0} → {l1}.  Envelope error: max over couplers of the draft/buff envelope error relative to the largest "
        f"force, against the monolithic run at rtol 1e-7 ({how}).  Shipped settings of each file "
        f"({sc.integrator.method} rtol {sc.integrator.rtol:g} for the pneumatic trip, "
        f"{sc4.integrator.method} rtol {sc4.integrator.rtol:g} for train 4).", "",
        "| run | states | CPU [s] | × train 4 | steps / rejected / LU / Jacobians / RHS / Newton iterations | envelope error |",
        "|---|---|---|---|---|---|",
        f"| train 4 (no air brake) | {prob4.y0.size} | {c_t4:.3f} | 1.00 | {st(sol_t4)} | – |",
        f"| pneumatic, monolithic (shipped) | {prob.y0.size} | {c_mono:.3f} | {c_mono / c_t4:.2f} | {st(sol_mono)} "
        f"| {100 * e_mono:.3f} % |",
        f"| pass 1: brake system | {prob.y0.size} (motion frozen) | {c_b:.3f} | {c_b / c_t4:.2f} | {st(sol_b)} | – |",
    ]
    for fac, c_m, (sol_m,) in motion_runs:
        e_two = envelope_error(M, sol_m.acc, ref)
        tol = f"rtol {sc.integrator.rtol * fac:.3g}, atol {sc.integrator.atol * fac:.3g}"
        lines += [
            f"| pass 2: motion ({tol}) | {pm.y0.size} | {c_m:.3f} | {c_m / c_t4:.2f} | {st(sol_m)} "
            f"| {100 * e_two:.3f} % |",
            f"| **two passes** (motion {tol}) | | **{c_b + c_m:.3f}** | **{(c_b + c_m) / c_t4:.2f}** | "
            f"| **{100 * e_two:.3f} %** |"]
    dmot = motion_runs[0][2][0].y - sol_mono.y[:, motion]
    lines += [
        "",
        f"- Brake pass: {sol_b.segments} segments between brake breakpoints, {tab.shape[0]:,} records "
        f"(4 × {obc.size} values each); its pressure states (pipe cells, reservoirs, "
        f"cylinders) differ from the monolithic run's by at most {dbrake / 1e3:.3g} kPa at the 10 s samples.",
        f"- Motion pass against the monolithic run at the samples: largest speed difference "
        f"{np.abs(dmot[:, 1::2][:, :model.params.n_veh]).max():.3g} m/s.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
