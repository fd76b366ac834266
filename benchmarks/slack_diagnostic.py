"""Where the steps of an LTD run go: which connection kinks are crossed at accepted and rejected steps (issue 26 item 1).

A diagnostic run, no change to the model or the integrators: the train's rhs/jac/observe are wrapped
(params become ``(p, diag...)``) so that

* ``observe`` (called after every accepted step) records t and, against the previous accepted state,
  how many connections crossed a kink of their law: a **slack edge** (engaged <-> inside the slack,
  connections with clearance), the **zero crossing** of a slackless connection (draft <-> buff curve),
  an edge of the **transition band** |ė| = v_ε (only while engaged) and a **table breakpoint**;
* ``rhs`` records the time of every evaluation and the same counts of its state against the last
  accepted state.  An evaluation time that never became an accepted step end is a rejected attempt;
  its counts are the largest over its Newton iterates.

Usage: ``python benchmarks/slack_diagnostic.py [--train train4] [--vehicles 1000] [--duration 600]
[--method bdf2 --rtol 5e-5]``; prints a table (and writes ``--out`` if given).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from partition import consist_overrides  # noqa: E402

from hpcrail.integrators import Problem, integrate  # noqa: E402
from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.kinds.ltd.problem import ltd_problem  # noqa: E402

TRAINS = ROOT / "configs" / "trains"
NK = 4   # slack edge, zero crossing, band edge, table breakpoint


@njit(cache=False)
def _codes(y, p, zone, band, brk):
    """Kink region of every table connection: side (−1 buff engaged, 0 inside the slack, +1 draft engaged),
    band (−1, 0, +1 for ė·/v_ε < −1, inside, > 1) and table interval index."""
    B = p.block
    N = p.n_veh
    for k in range(N - 1):
        ct = p.conn_type[k]
        if ct >= p.n_table_types:
            zone[k] = 0
            band[k] = 0
            brk[k] = 0
            continue
        e = y[B * (k + 1)]
        de = y[B * k + 1] - y[B * (k + 1) + 1]
        gd = p.conn_rowpar[2 * ct, 0]
        gb = p.conn_rowpar[2 * ct + 1, 0]
        if e >= 0.0:
            x = e - gd
            z = 1 if x > 0.0 else 0
            inv_dx = p.conn_rowpar[2 * ct, 2]
        else:
            x = -e - gb
            z = -1 if x > 0.0 else 0
            inv_dx = p.conn_rowpar[2 * ct + 1, 2]
        zone[k] = z
        s = de * p.conn_typepar[ct, 0]
        band[k] = 1 if s > 1.0 else (-1 if s < -1.0 else 0)
        brk[k] = int(x * inv_dx) if x > 0.0 else -1


@njit(cache=False)
def _count(p, zone0, band0, brk0, zone1, band1, brk1, out):
    for i in range(NK):
        out[i] = 0.0
    for k in range(zone0.size):
        ct = p.conn_type[k]
        if ct >= p.n_table_types:
            continue
        slack = p.conn_rowpar[2 * ct, 0] > 0.0 or p.conn_rowpar[2 * ct + 1, 0] > 0.0
        if zone0[k] != zone1[k]:
            if slack and (zone0[k] == 0 or zone1[k] == 0):
                out[0] += 1.0
            else:
                out[1] += 1.0
        engaged = zone0[k] != 0 or zone1[k] != 0 or not slack
        if engaged and band0[k] != band1[k]:
            out[2] += 1.0
        if zone0[k] == zone1[k] and zone0[k] != 0 and brk0[k] != brk1[k]:
            out[3] += 1.0


def wrap(k):
    rhs0, jac0, obs0 = k.rhs, k.jac, k.observe

    @njit(cache=False)
    def rhs(t, y, P, dydt):
        p, d, zone, band, brk, zw, bw, kw, tmp = P[0], P[1], P[2], P[3], P[4], P[5], P[6], P[7], P[8]
        rhs0(t, y, p, dydt)
        i = int(d[0, 0]) + 1
        if i < d.shape[0]:
            _codes(y, p, zw, bw, kw)
            _count(p, zone, band, brk, zw, bw, kw, tmp)
            d[i, 0] = t
            for j in range(NK):
                d[i, 1 + j] = tmp[j]
            d[0, 0] = i

    @njit(cache=False)
    def jac(t, y, P, vals):
        jac0(t, y, P[0], vals)

    @njit(cache=False)
    def observe(t, y, P, acc):
        p, zone, band, brk, zw, bw, kw, tmp = P[0], P[2], P[3], P[4], P[5], P[6], P[7], P[8]
        obs0(t, y, p, acc)
        a = P[9]
        i = int(a[0, 0]) + 1
        _codes(y, p, zw, bw, kw)
        _count(p, zone, band, brk, zw, bw, kw, tmp)
        if i < a.shape[0]:
            a[i, 0] = t
            for j in range(NK):
                a[i, 1 + j] = tmp[j]
            a[0, 0] = i
        Y = P[10]
        m = int(Y[0, 0]) + 1
        if m < Y.shape[0] and t <= Y[0, 1]:
            Y[m, 0] = t
            for q in range(y.size):
                Y[m, 1 + q] = y[q]
            Y[0, 0] = m
        for k in range(zone.size):
            zone[k] = zw[k]
            band[k] = bw[k]
            brk[k] = kw[k]

    return rhs, jac, observe


def diagnose(sc, method: str, rtol: float, T: float, atol: float, window: float = 30.0) -> dict:
    model, prob = ltd_problem(sc)
    p = model.params
    M = p.n_veh - 1
    rhs, jac, observe = wrap(type("K", (), dict(rhs=prob.rhs, jac=prob.jac, observe=prob.observe)))
    d = np.zeros((3_000_000, 1 + NK))
    a = np.zeros((600_000, 1 + NK))
    iz = lambda: np.zeros(M, np.int64)  # noqa: E731
    Y = np.zeros((min(40_000, max(2, int(2e8 / 8 / (prob.y0.size + 1)))), prob.y0.size + 1))
    Y[0, 1] = window
    P = (p, d, iz(), iz(), iz(), iz(), iz(), iz(), np.zeros(NK), a, Y)
    _codes(prob.y0, p, P[2], P[3], P[4])
    dprob = Problem(rhs, observe, P, prob.y0, t0=0.0, atol_scale=prob.atol_scale, acc0=prob.acc0, jac=jac,
                    jac_pattern=prob.jac_pattern, rtol_scale=prob.rtol_scale)
    c0 = time.thread_time()
    sol = integrate(dprob, method, np.array([0.0, T]), T, rtol=rtol, atol=atol,
                    step=sc.integrator.step_s)
    cpu = time.thread_time() - c0
    na, nd = int(a[0, 0]), int(d[0, 0])
    acc_t = a[1:na + 1, 0]
    acc_c = a[1:na + 1, 1:]
    rt = d[1:nd + 1, 0]
    rc = d[1:nd + 1, 1:]
    accepted = set(acc_t.tolist())
    # rejected attempts: evaluation times that never became an accepted step end (consecutive runs grouped)
    rej = []
    i = 0
    while i < nd:
        j = i
        while j + 1 < nd and rt[j + 1] == rt[i]:
            j += 1
        if rt[i] not in accepted and rt[i] > 0.0:
            rej.append((rt[i], rc[i:j + 1].max(axis=0)))
        i = j + 1
    # attempts right after the initial-step probe are counted too (a handful)
    rej_c = np.array([c for _, c in rej]) if rej else np.zeros((0, NK))
    h = np.diff(acc_t)
    dom = dominant(p, Y, atol * prob.atol_scale, rtol * prob.rtol_scale)
    return dict(dom=dom, window=window, sol=sol, cpu=cpu, acc_c=acc_c[1:], acc_t=acc_t, h=h, rej_t=np.array([t for t, _ in rej]),
                rej_c=rej_c, n_conn=M, slack_conn=int(sum(1 for k in range(M) if p.conn_type[k] < p.n_table_types
                                                        and p.conn_rowpar[2 * p.conn_type[k], 0] > 0)))


def dominant(p, Y, atol, rtol) -> dict:
    """Which state limits the step: the BDF2 error estimate (y_{n+1} − quadratic extrapolation through the
    last three accepted states)/3, weighted as the error test weights it, at every accepted step of the stored
    window; counts of the largest component by kind (vehicle speed, connection extension) and, for a speed,
    the state of the connections at that vehicle (inside the slack / engaged, in / out of the transition band)."""
    import collections

    m = int(Y[0, 0])
    T, S = Y[1:m + 1, 0], Y[1:m + 1, 1:]
    B = p.block
    kinds = collections.Counter()
    where = collections.Counter()
    shares = []
    for i in range(2, len(T) - 1):
        t0, t1, t2, t3 = T[i - 2], T[i - 1], T[i], T[i + 1]
        L0 = (t3 - t1) * (t3 - t2) / ((t0 - t1) * (t0 - t2))
        L1 = (t3 - t0) * (t3 - t2) / ((t1 - t0) * (t1 - t2))
        L2 = (t3 - t0) * (t3 - t1) / ((t2 - t0) * (t2 - t1))
        e = (S[i + 1] - (L0 * S[i - 2] + L1 * S[i - 1] + L2 * S[i])) / 3.0 / (atol + rtol * np.abs(S[i]))
        tot = float(np.sum(e[:B * p.n_veh] ** 2))
        if tot == 0.0:
            continue
        j = int(np.argmax(np.abs(e[:B * p.n_veh])))
        shares.append(e[j] ** 2 / tot)
        veh, comp = divmod(j, B)
        kind = "speed" if comp == 1 else ("extension" if comp == 0 and veh > 0 else "other")
        kinds[kind] += 1
        for k in ((veh - 1, veh) if comp == 1 else (veh - 1,)):
            if k < 0 or k >= p.n_veh - 1 or p.conn_type[k] >= p.n_table_types:
                continue
            ct = int(p.conn_type[k])
            ee = S[i + 1, B * (k + 1)]
            de = S[i + 1, B * k + 1] - S[i + 1, B * (k + 1) + 1]
            gap = p.conn_rowpar[2 * ct, 0] if ee >= 0 else p.conn_rowpar[2 * ct + 1, 0]
            slack = p.conn_rowpar[2 * ct, 0] > 0
            st = ("slack connection" if slack else "slackless connection") + (
                ", inside the slack" if abs(ee) <= gap and slack else
                (", engaged, in the band" if abs(de * p.conn_typepar[ct, 0]) < 1 else ", engaged, out of the band"))
            where[st] += 1
    return dict(kinds=kinds, where=where, share=float(np.median(shares)) if shares else float("nan"),
                steps=max(0, len(T) - 3))


def summary(name: str, r: dict) -> list[str]:
    st = r["sol"].stats
    ac, rc = r["acc_c"], r["rej_c"]
    lines = [f"### {name}: {r['n_conn']} connections ({r['slack_conn']} with slack)", "",
             f"steps {st['steps']:,}, rejected {st['rejected']:,} (attempts found by the diagnostic: {len(rc):,}), "
             f"Newton failures {st['newton_failures']:,}, LUs {st['nlu']:,}, RHS {st['nfev']:,}, CPU {r['cpu']:.2f} s "
             "(diagnostic run, wrapped functions)", "",
             "| steps with ≥ 1 crossing of | accepted steps | share | crossings | rejected attempts | share |",
             "|---|---|---|---|---|---|"]
    names = ["slack edge", "zero crossing (slackless)", "transition-band edge (engaged)", "table breakpoint"]
    for i, nm in enumerate(names):
        na = int((ac[:, i] > 0).sum())
        nr = int((rc[:, i] > 0).sum()) if len(rc) else 0
        lines.append(f"| {nm} | {na:,} | {100 * na / max(1, len(ac)):.1f} % | {int(ac[:, i].sum()):,} | {nr:,} | "
                     f"{100 * nr / max(1, len(rc)):.1f} % |")
    anyk = ac[:, :3].sum(axis=1) > 0
    anyr = rc[:, :3].sum(axis=1) > 0 if len(rc) else np.zeros(0, bool)
    anyk4 = ac.sum(axis=1) > 0
    anyr4 = rc.sum(axis=1) > 0 if len(rc) else np.zeros(0, bool)
    lines.append(f"| any of the first three | {int(anyk.sum()):,} | {100 * anyk.mean():.1f} % | — | "
                 f"{int(anyr.sum()):,} | {100 * anyr.mean() if len(rc) else 0:.1f} % |")
    lines.append(f"| any kink | {int(anyk4.sum()):,} | {100 * anyk4.mean():.1f} % | — | "
                 f"{int(anyr4.sum()):,} | {100 * anyr4.mean() if len(rc) else 0:.1f} % |")
    # small steps: the step sizes of steps with and without a crossing
    h = r["h"]
    lines += ["", f"median step: with a slack-edge crossing {np.median(h[ac[:, 0] > 0]) * 1e3 if (ac[:, 0] > 0).any() else float('nan'):.2f} ms, "
              f"with any kink {np.median(h[anyk]) * 1e3 if anyk.any() else float('nan'):.2f} ms, "
              f"without {np.median(h[~anyk4]) * 1e3 if (~anyk4).any() else float('nan'):.2f} ms; "
              f"distinct slack-edge crossings {int(ac[:, 0].sum()):,} in {r['acc_t'][-1]:.0f} s", ""]
    d = r["dom"]
    tot = max(1, sum(d["kinds"].values()))
    nw = max(1, sum(d["where"].values()))
    lines += [f"Step-limiting state over the first {min(r['window'], r['acc_t'][-1]):g} s ({d['steps']:,} accepted steps; the largest "
              f"weighted component of the BDF2 error estimate carries a median {100 * d['share']:.0f} % of its square "
              "sum): " + ", ".join(f"{k} {100 * v / tot:.1f} %" for k, v in d["kinds"].most_common()) + "; the "
              "connections at that vehicle: " + ", ".join(f"{k} {100 * v / nw:.1f} %" for k, v in
                                                         d["where"].most_common()), ""]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--train", default="train4")
    ap.add_argument("--vehicles", type=int, default=0, help="train 4 re-made as N vehicles (benchmarks/partition.py)")
    ap.add_argument("--duration", type=float, default=0.0)
    ap.add_argument("--method", default="bdf2")
    ap.add_argument("--rtol", type=float, default=5e-5)
    ap.add_argument("--atol", type=float, default=0.0, help="default: the scenario's")
    ap.add_argument("--window", type=float, default=30.0, help="seconds from the start whose accepted states are "
                    "stored for the step-limiting-state analysis")
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    ov = consist_overrides(args.vehicles) if args.vehicles else []
    if args.duration:
        ov.append(f"simulation.duration_s={args.duration}")
    sc, _ = load_scenario(TRAINS / f"{args.train}.yaml", ov + args.set)
    T = sc.simulation.duration_s
    atol = args.atol if args.atol > 0 else sc.integrator.atol
    r = diagnose(sc, args.method, args.rtol, T, atol, args.window)
    name = f"{args.train}{' ' + str(args.vehicles) + ' vehicles' if args.vehicles else ''}, {T:g} s, " \
           f"{args.method} rtol {args.rtol:g} atol {atol:g} {' '.join(args.set)}"
    emit(summary(name, r) + [f"load {os.getloadavg()[0]:.1f}", ""], args.out)


def emit(lines: list[str], out: str) -> None:
    """Print ``lines`` and append them to the file ``out`` (if given)."""
    print("\n".join(lines))
    if out:
        with open(out, "a") as fh:
            fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
