"""Wheel/rail contact benchmark (issue 13) → benchmarks/results/wheelrail_contact.md.

1. Table build time of the S1002/UIC60 pair (configs/wheelrail/s1002_uic60.yaml), one core, CPU time,
   numba warm: tread/flange split, LUT (paper 004 Table 10 grid, 361 × 11) and KEC (Table 9 grid, 465).
2. On-line cost per wheel per evaluation (numba loops, warm, CPU time, median of interleaved repeats):
   - KEC: the eq-22 Newton solve of the wheelset (warm start from the previous evaluation, as in a time
     integration) with its derivatives and contact records, plus per wheel Hertz + Kalker (fused table),
     creepages and Polach;
   - LUT: the table lookup of the wheelset (z, φ, derivatives, tread and flange records), plus the same
     per-wheel force chain;
   - the pieces separately (geometry only; force chain only; Polach alone);
   - baseline in the same run: solving the real-profile contact (eq 12, 6x6 Newton, warm start) on-line
     instead of using a table.
   The lateral shift follows y(t) = A sin(2π t / 20000 evaluations) (A = 2 mm on the tread, 8 mm into the
   flange), with rail irregularities.

    python benchmarks/wheelrail_contact.py            # full run
    python benchmarks/wheelrail_contact.py --quick    # fewer evaluations and repeats

The machine is shared: the load average is printed next to every number.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail._numba import JIT, JIT_NRT_FREE  # noqa: E402
from hpcrail.models.wheelrail import creep as C  # noqa: E402
from hpcrail.models.wheelrail import hertz as H  # noqa: E402
from hpcrail.models.wheelrail import kec as K  # noqa: E402
from hpcrail.models.wheelrail import layout as L  # noqa: E402
from hpcrail.models.wheelrail import lut as LU  # noqa: E402
from hpcrail.models.wheelrail.config import build_profiles, load_profile_pair  # noqa: E402
from hpcrail.models.wheelrail.geometry import ContactSolver, newton12  # noqa: E402
from hpcrail.models.wheelrail.tables import _build, contact_tables  # noqa: E402

CONFIG = ROOT / "configs" / "wheelrail" / "s1002_uic60.yaml"
OUT = ROOT / "benchmarks" / "results" / "wheelrail_contact.md"


def load() -> str:
    return "load average %.2f %.2f %.2f" % os.getloadavg()


@njit(**JIT_NRT_FREE)
def wheel_forces(out, base, sigma, HK, Pp, N, V, vx, vy, vz, wx, wy, wz):
    a, b, c11, c22, c23 = H.hertz_kalker(HK, out[base + L.C_A], out[base + L.C_B], N)
    xx, xy, sp = C.creepages(V, vx, vy, vz, wx, wy, wz, out[base + L.C_DY], out[base + L.C_DZ],
                             out[base + L.C_GAMMA], sigma)
    fx, fy, mz = C.polach(Pp, N, a, b, c11, c22, c23, xx, xy, sp, V)
    return fx + fy + mz


@njit(**JIT_NRT_FREE)
def kec_step(Kp, HK, Pp, y, irr, rates, x, out, Nrec, F):
    """One evaluation as a multibody right-hand side would do it: KEC solve, normal force shares, creep
    forces of every loaded contact record."""
    K.kec_wheelset(Kp, y, irr, rates, x, out)
    for k in range(4):
        Nrec[k] = 5e4 * out[L.CONTACT0 + k * L.N_REC + L.C_W]
    C.contact_creep_forces(HK, Pp, out, Nrec, 20.0, 20.0, rates[0], 0.0, 0.0, 20.0 / 0.457, 0.0, F)
    return out[L.Z] + F[0, 0] + F[2, 1]


@njit(**JIT_NRT_FREE)
def loop_kec(Kp, HK, Pp, ys, irr, rates, x, out, Nrec, F):
    acc = 0.0
    for i in range(ys.shape[0]):
        rates[0] = 0.0 if i == 0 else (ys[i] - ys[i - 1]) * 1e3
        acc += kec_step(Kp, HK, Pp, ys[i], irr, rates, x, out, Nrec, F)
    return acc


@njit(**JIT_NRT_FREE)
def loop_kec_geometry(Kp, ys, irr, rates, x, out):
    acc = 0.0
    for i in range(ys.shape[0]):
        rates[0] = 0.0 if i == 0 else (ys[i] - ys[i - 1]) * 1e3
        K.kec_wheelset(Kp, ys[i], irr, rates, x, out)
        acc += out[L.Z]
    return acc


@njit(**JIT_NRT_FREE)
def lut_step(T, HK, Pp, y, irr, rates, zphi, out, Nrec, F):
    """One evaluation: LUT lookup, flange penalty (eq 20), creep forces of every loaded contact record."""
    LU.lut_wheelset(T, y, irr, rates, zphi, out)
    Nrec[0] = 5e4
    Nrec[2] = 5e4
    Nrec[1] = C.flange_penalty(out, L.L_SECONDARY, 1e10, 1e8, out[L.L_SECONDARY + L.C_DDY] * rates[0])
    Nrec[3] = C.flange_penalty(out, L.R_SECONDARY, 1e10, 1e8, out[L.R_SECONDARY + L.C_DDY] * rates[0])
    C.contact_creep_forces(HK, Pp, out, Nrec, 20.0, 20.0, rates[0], 0.0, 0.0, 20.0 / 0.457, 0.0, F)
    return out[L.Z] + F[0, 0] + F[2, 1] + F[1, 1]


@njit(**JIT_NRT_FREE)
def loop_lut(T, HK, Pp, ys, irr, rates, zphi, out, Nrec, F):
    acc = 0.0
    for i in range(ys.shape[0]):
        rates[0] = 0.0 if i == 0 else (ys[i] - ys[i - 1]) * 1e3
        acc += lut_step(T, HK, Pp, ys[i], irr, rates, zphi, out, Nrec, F)
    return acc


@njit(**JIT_NRT_FREE)
def loop_lut_geometry(T, ys, irr, rates, zphi, out):
    acc = 0.0
    for i in range(ys.shape[0]):
        rates[0] = 0.0 if i == 0 else (ys[i] - ys[i - 1]) * 1e3
        LU.lut_wheelset(T, ys[i], irr, rates, zphi, out)
        acc += out[L.Z]
    return acc


@njit(**JIT_NRT_FREE)
def loop_forces(HK, Pp, ys, out):
    """The per-wheel force chain alone (two wheels per evaluation, varying curvature sums)."""
    acc = 0.0
    V = 20.0
    for i in range(ys.shape[0]):
        out[L.L_PRIMARY + L.C_A] = 1.0 + 100.0 * ys[i]
        out[L.R_PRIMARY + L.C_A] = 1.0 - 100.0 * ys[i]
        acc += wheel_forces(out, L.L_PRIMARY, 1.0, HK, Pp, 5e4, V, V, ys[i], 0.0, 0.0, V / 0.457, 0.0)
        acc += wheel_forces(out, L.R_PRIMARY, -1.0, HK, Pp, 5e4, V, V, ys[i], 0.0, 0.0, V / 0.457, 0.0)
    return acc


@njit(**JIT_NRT_FREE)
def loop_polach(Pp, ys):
    acc = 0.0
    for i in range(ys.shape[0]):
        fx, fy, mz = C.polach(Pp, 5e4, 6e-3, 4e-3, 4.0, 3.5, 1.5, ys[i] * 0.1, 2e-4, 0.1, 20.0)
        fx2, fy2, mz2 = C.polach(Pp, 5e4, 6e-3, 4e-3, 4.0, 3.5, 1.5, -ys[i] * 0.1, 2e-4, -0.1, 20.0)
        acc += fx + fy + mz + fx2 + fy2 + mz2
    return acc


@njit(**JIT)
def loop_direct(gp, ys, x):
    """Baseline: the real-profile contact (eq 12) solved on-line by Newton from the previous solution."""
    acc = 0.0
    nan = np.nan
    for i in range(ys.shape[0]):
        newton12(gp, gp, ys[i], 0.0, x, 40, nan, nan)
        acc += x[0]
    return acc


def timed(fn, args, n, repeats):
    fn(*args)  # warm
    out = []
    for _ in range(repeats):
        t0 = time.process_time()
        fn(*args)
        out.append((time.process_time() - t0) / n * 1e9)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    n = 50_000 if args.quick else 400_000
    repeats = 3 if args.quick else 7
    builds = 1 if args.quick else 3
    cfg, doc = load_profile_pair(CONFIG)
    lines = ["# Wheel/rail contact benchmark (issue 13)", "",
             f"`python benchmarks/wheelrail_contact.py{' --quick' if args.quick else ''}` on "
             f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared); "
             f"numba warm, CPU time of this process (`time.process_time`).", ""]
    # ---------------------------------------------------------------- 1. table builds
    wheel, rail, placement = build_profiles(cfg, doc)
    solver = ContactSolver(wheel, rail, placement)
    _build(solver, cfg)  # compile / load the numba kernels
    rows = []
    for _ in range(builds):
        l0 = load()
        _, _, _, secs = _build(ContactSolver(wheel, rail, placement), cfg)
        rows.append((secs, l0, load()))
    med = {k: float(np.median([r[0][k] for r in rows])) for k in rows[0][0]}
    lines += ["## Table build (one core, CPU time, median of %d builds)" % builds, "",
              "| step | grid | CPU time [s] |", "|---|---|---|",
              f"| tread/flange split (rigid sweep 0…20 mm at 0.01 mm, jump location) | — | {med['split_cpu_s']:.2f} |",
              f"| LUT: tread contact, flange indentation, derivatives | 361 × 11 (Table 10) | {med['lut_cpu_s']:.2f} |",
              f"| KEC: rigid sweep ±48 mm at 0.01 mm, jumps, 465 nodes, bands | 465 (Table 9) | {med['kec_cpu_s']:.2f} |",
              "", "Loads during the builds: " + "; ".join(f"{a} → {b}" for _, a, b in rows), ""]
    print("\n".join(lines[-10:]))
    # ---------------------------------------------------------------- 2. on-line
    tab = contact_tables(cfg, doc)
    Kp, T = tab.kec_params, tab.lut_params
    HK = H.contact_coef_params(cfg.material.E_Pa, cfg.material.nu)
    Pp = tab.polach_params()
    t = np.arange(n)
    irr = np.array([0.4e-3, -0.3e-3, 0.5e-3, -0.2e-3])
    res = {}
    l_before = load()
    motions = {"1…4 mm (tread, no KEC band)": 2.5e-3 + 1.5e-3 * np.sin(2 * np.pi * t / 20000.0),
               "±2 mm (tread jump band)": 2e-3 * np.sin(2 * np.pi * t / 20000.0),
               "±8 mm (into the flange)": 8e-3 * np.sin(2 * np.pi * t / 20000.0)}
    for amp, ys in motions.items():
        x = np.full(4, np.nan)
        out = np.zeros(L.N_OUT)
        rates = np.zeros(5)
        zphi = np.full(2, np.nan)
        Nrec = np.zeros(4)
        F = np.zeros((4, 8))
        xd, _, _ = solver.solve(float(ys[0]))
        cases = {
            "KEC solve + forces": (loop_kec, (Kp, HK, Pp, ys, irr, rates, x, out, Nrec, F)),
            "LUT lookup + forces": (loop_lut, (T, HK, Pp, ys, irr, rates, zphi, out, Nrec, F)),
            "KEC solve only": (loop_kec_geometry, (Kp, ys, irr, rates, x, out)),
            "LUT lookup only": (loop_lut_geometry, (T, ys, irr, rates, zphi, out)),
            "force chain only (Hertz/Kalker, creepages, Polach)": (loop_forces, (HK, Pp, ys, out)),
            "Polach only": (loop_polach, (Pp, ys)),
            "baseline: eq 12 Newton on-line (real profiles)": (loop_direct, (solver.gp, ys, xd)),
        }
        for name, (fn, a) in cases.items():
            fn(*a)
        samples = {name: [] for name in cases}
        for _ in range(repeats):  # interleaved
            for name, (fn, a) in cases.items():
                samples[name] += timed(fn, a, n, 1)
        for name in cases:
            res[(amp, name)] = float(np.median(samples[name])) / 2.0  # per wheel (two wheels per evaluation)
    l_after = load()
    mk = list(motions)
    lines += ["## On-line cost per wheel per evaluation (numba, warm)", "",
              f"{n:,} evaluations per loop, median of {repeats} interleaved repeats, divided by 2 wheels; "
              f"{l_before} before, {l_after} after.", "",
              "| case | " + " | ".join(f"{m} [ns]" for m in mk) + " | target |", "|---" * (len(mk) + 2) + "|"]
    targets = {"KEC solve + forces": "≤ 200 (KEC + Polach)", "LUT lookup + forces": "≤ 100 (LUT + Polach)"}
    for name in [k[1] for k in res if k[0] == mk[0]]:
        lines.append(f"| {name} | " + " | ".join(f"{res[(m, name)]:.1f}" for m in mk) + f" | {targets.get(name, '')} |")
    base = res[(mk[0], "baseline: eq 12 Newton on-line (real profiles)")]
    lines += ["", f"Speed-up over solving the real-profile contact on-line (1…4 mm): KEC solve "
              f"{base / res[(mk[0], 'KEC solve only')]:.1f}x, LUT lookup {base / res[(mk[0], 'LUT lookup only')]:.1f}x "
              "(the on-line Newton has no global check: it would miss contact jumps, which the tables contain).",
              "", "Forces: `creep.contact_creep_forces` for every contact record that carries load (inside a KEC "
              "regularisation band both the tread-end and the flange-start contact do), each with Hertz "
              "semi-axes and Kalker coefficients from one fused table (one log, one cube root), creepages "
              "(sin/cos of the contact angle) and Polach 1999 with the spin term and spin moment; the LUT loop "
              "adds the flange penalty (eq 20).  'force chain only' is that chain for one record per wheel.", ""]
    print("\n".join(lines[-16:]))
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
