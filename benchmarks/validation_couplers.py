"""Massa et al. 2012 (Massa et al. 2012) validation numbers: mode frequencies of the 2-car model and the
agreement of the inertial and noninertial coupler models on the four cases.

    python benchmarks/validation_couplers.py      # ~1 min; writes benchmarks/results/validation_couplers.md
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail.analysis.modes import find_mode, linearisation_for, modes  # noqa: E402
from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.simulate import run_scenario  # noqa: E402

CASES = [("2-car loaded", "two_car_loaded.yaml"), ("2-car empty", "two_car_empty.yaml"),
         ("10-car", "ten_car.yaml"), ("curved track", "curved_track.yaml")]
VARS = ["slider_displacement", "shank_angle", "knuckle_displacement", "slider_displacement_rate",
        "coupler_force", "lateral_displacement"]


def main():
    lines = ["# Couplers: validation against Massa et al. 2012", "",
             "Reproduce: `python benchmarks/validation_couplers.py`.", "",
             "## Modes of the loaded 2-car model (Massa et al. 2012 Fig. 9)", "",
             "| mode | paper | noninertial | inertial |", "|---|---:|---:|---:|"]
    fr = {}
    for model in ("noninertial", "inertial"):
        sc, _ = load_scenario(ROOT / "configs/couplers/two_car_loaded.yaml", [f"coupler.model={model}"])
        und, damped = modes(linearisation_for(sc))
        first = [m for m in und if not m.rigid][0]
        coupler = None
        try:
            coupler = find_mode(und, "slider", min_hz=10.0)
        except LookupError:
            pass
        d28 = [d for d in damped if abs(d.natural_frequency_hz - 2.8) < 0.1][0]
        fr[model] = (first, coupler, d28, max(m.frequency_hz for m in und))
    n, i = fr["noninertial"], fr["inertial"]
    lines.append(f"| first (cars against each other) [Hz] | 2.8 | {n[0].frequency_hz:.4f} | {i[0].frequency_hz:.4f} |")
    lines.append(f"| its damping ratio | - | {n[2].damping_ratio:.4f} | {i[2].damping_ratio:.4f} |")
    lines.append(f"| longitudinal coupler mode [Hz] | ~63.26 | absent | {i[1].frequency_hz:.4f} |")
    lines.append(f"| highest mode [Hz] | (shank rotation) | {n[3]:.2f} | {i[3]:.2f} |")
    lines += ["", "## Inertial vs noninertial responses", "",
              "max |noninertial − inertial| over the run, relative to the inertial peak (rates after 0.05 s)", "",
              "| case | " + " | ".join(VARS) + " | steps noninertial / inertial |",
              "|---|" + "---:|" * (len(VARS) + 1)]
    for label, cfg in CASES:
        ds = {}
        for model in ("noninertial", "inertial"):
            sc, _ = load_scenario(ROOT / "configs/couplers" / cfg, [f"coupler.model={model}"])
            ds[model] = run_scenario(sc)
        a, b = ds["noninertial"], ds["inertial"]
        cells = []
        for v in VARS:
            m = a.time.values >= (0.05 if v.endswith("rate") else 0.0)
            x, y = a[v].values[m], b[v].values[m]
            peak = np.nanmax(np.abs(y))
            cells.append("-" if peak == 0 else f"{100 * np.nanmax(np.abs(x - y)) / peak:.2f} %")
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {int(a.nsteps)} / {int(b.nsteps)} |")
        if label == "curved track":
            alpha = [float(np.nanmax(np.abs(d.max_abs_shank_angle.values))) for d in (a, b)]
            lines += ["", f"Curved track: largest |shank angle| over every step {alpha[0]:.3e} rad (noninertial), "
                      f"{alpha[1]:.3e} rad (inertial); it swings only on the spirals."]
    text = "\n".join(lines) + "\n"
    out = ROOT / "benchmarks/results/validation_couplers.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
