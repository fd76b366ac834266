"""The quasi-static running-safety model against the multibody wagon (issue 28, item 2) →
benchmarks/results/quasi_static_validation.md: eleven cases of the propelling rig configs/mixed/lcf_s_curve.yaml
(steady curves of R = 150, 300, 600 m and the S-curve; buff and draft; the empty and the loaded car body), each the
largest wheel Y/Q and ΔQ/Q of the detailed wagon and of the quasi-static model fed the run's own forces
(:func:`hpcrail.kinds.mixed_train.lcf.compare_with_detailed`).  tests/test_quasi_static_validation.py asserts
four of them.

    python benchmarks/quasi_static_validation.py       # about 11 x 10 s on a quiet core (RK4 0.5 ms)
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RIG = ROOT / "configs/mixed/lcf_s_curve.yaml"
CASES = {
    "R = 150 m, buff 150 kN, empty, 20 km/h": dict(force_kN=150, radius_m=150, speed_kmh=20, duration_s=12),
    "R = 150 m, draft 150 kN, empty, 20 km/h": dict(force_kN=150, mode="draft", radius_m=150, speed_kmh=20,
                                                    duration_s=12),
    "R = 300 m, buff 200 kN, empty, 40 km/h, cant 40 mm": dict(force_kN=200, radius_m=300, cant_mm=40, speed_kmh=40,
                                                               duration_s=9),
    "R = 300 m, draft 200 kN, empty, 40 km/h, cant 40 mm": dict(force_kN=200, mode="draft", radius_m=300, cant_mm=40,
                                                                speed_kmh=40, duration_s=9),
    "R = 300 m, buff 300 kN, loaded, 40 km/h, cant 40 mm": dict(force_kN=300, radius_m=300, cant_mm=40, speed_kmh=40,
                                                                duration_s=9, loaded=True),
    "R = 600 m, buff 200 kN, empty, 60 km/h, cant 60 mm": dict(force_kN=200, radius_m=600, cant_mm=60, speed_kmh=60,
                                                               duration_s=8),
    "R = 600 m, buff 300 kN, loaded, 60 km/h, cant 60 mm": dict(force_kN=300, radius_m=600, cant_mm=60, speed_kmh=60,
                                                                duration_s=8, loaded=True),
    "R = 600 m, draft 300 kN, loaded, 60 km/h, cant 60 mm": dict(force_kN=300, mode="draft", radius_m=600,
                                                                 cant_mm=60, speed_kmh=60, duration_s=8, loaded=True),
    "S-curve 2 x R 150 m, buff 150 kN, empty, 15 km/h": dict(force_kN=150),
    "S-curve 2 x R 150 m, draft 150 kN, empty, 15 km/h": dict(force_kN=150, mode="draft"),
    "S-curve 2 x R 150 m, buff 250 kN, loaded, 15 km/h": dict(force_kN=250, loaded=True),
}


def main() -> None:
    from hpcrail.kinds.mixed_train.lcf import compare_with_detailed, rig_overrides

    rows, loads = [], []
    t0 = time.time()
    for name, case in CASES.items():
        r = compare_with_detailed(RIG, rig_overrides(RIG, **case), steady="radius_m" in case)
        loads.append(os.getloadavg()[0])
        if r["status"] != "completed":
            rows.append(f"| {name} | {r['status']} | | | | | |")
            continue
        (dy, dq), (my, mq) = r["detailed"], r["quasi_static"]
        rows.append(f"| {name} | {dy:.3f} | {my:.3f} | {100 * (my / dy - 1):+.0f} % | {dq:.3f} | {mq:.3f} | "
                    f"{100 * (mq / dq - 1):+.0f} % |")
        print(rows[-1], flush=True)
    lines = ["# Quasi-static running safety against the multibody wagon (issue 28)", "",
             f"`python benchmarks/quasi_static_validation.py`, {time.strftime('%Y-%m-%d %H:%M')}, "
             f"{time.time() - t0:.0f} s wall, load average {sum(loads) / len(loads):.1f}.  Rig "
             "`configs/mixed/lcf_s_curve.yaml` (RK4 0.5 ms); steady curves: means over the last 1.5 s; S-curves: "
             "the largest 2 m sliding means over the passage.", "",
             "| case | Y/Q detailed | Y/Q quasi-static | difference | dQ/Q detailed | dQ/Q quasi-static | difference |",
             "|---|---:|---:|---:|---:|---:|---:|", *rows, ""]
    out = ROOT / "benchmarks/results/quasi_static_validation.md"
    out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
