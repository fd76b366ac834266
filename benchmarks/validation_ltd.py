"""Compare the benchmark-like trains 2 and 4 with Bosso et al. 2024 Tables 1-2 (LTDPoliTo).

Runs configs/trains/train2.yaml and train4.yaml as shipped (wagon pairs on slackless drawbars with draft
gears) and again with the rigid 80 MN/m bars of configs/connections/drawbar.yaml (the reconstruction before
issue 18), and writes benchmarks/results/validation_ltd.md (the tables quoted in docs/validation.md).
Usage:  python benchmarks/validation_ltd.py
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hpcrail.kinds import load_scenario  # noqa: E402
from hpcrail.simulate import run_scenario  # noqa: E402

# Bosso et al. 2024, Tables 1-2, LTDPoliTo row (also shared/data/ltd/known_results.csv)
PAPER = {
    "train2": dict(max_speed=89.44, mean_speed=64.56, draft=(772, 54), buff=(407, 54), mean_draft=459,
                   mean_buff=264, defl=(89.3, 48.0), ref=61),
    "train4": dict(max_speed=81.81, mean_speed=45.00, draft=(1309, 123), buff=(866, 122), mean_draft=946,
                   mean_buff=501, defl=(161.7, 96.2), ref=146),
}


RIGID_BARS = ROOT / "configs/connections/drawbar.yaml"


def rigid_bar_override() -> list:
    """``--set`` of the rigid bars (the component file as an inline mapping)."""
    import yaml

    bar = yaml.safe_load(RIGID_BARS.read_text())
    return [f"connection_types.drawbar={yaml.safe_dump(bar, default_flow_style=True, width=10 ** 6).strip()}"]


def main():
    shipped = table([])
    rigid = table(rigid_bar_override())
    out = shipped + ["", "With the rigid 80 MN/m bars (configs/connections/drawbar.yaml) instead:", ""] + rigid
    path = ROOT / "benchmarks/results/validation_ltd.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
    print("\n".join(out))


def table(overrides: list) -> list:
    out = ["| quantity | train 2 paper | train 2 hpcrail | train 4 paper | train 4 hpcrail |", "|---|---|---|---|---|"]
    res = {}
    for name in ("train2", "train4"):
        sc, _ = load_scenario(ROOT / f"configs/trains/{name}.yaml", overrides)
        ds = run_scenario(sc)
        ref = PAPER[name]["ref"]
        nxt = ref + 1
        res[name] = dict(
            max_speed=float(ds.max_speed) * 3.6, mean_speed=float(ds.mean_speed) * 3.6,
            draft=(float(ds.max_draft_force) / 1e3, int(ds.max_draft_force_coupler)),
            buff=(float(ds.max_buff_force) / 1e3, int(ds.max_buff_force_coupler)),
            mean_draft=float(ds.mean_max_draft_force) / 1e3, mean_buff=float(ds.mean_max_buff_force) / 1e3,
            defl=(float(ds.max_draft_deflection) * 1e3, float(ds.max_buff_deflection) * 1e3),
            defl_next=(float(ds.coupler_max_draft_deflection.sel(coupler=nxt)) * 1e3,
                       float(ds.coupler_max_buff_deflection.sel(coupler=nxt)) * 1e3),
            ref_type=str(ds.connection_type.sel(coupler=ref).values),
            next_type=str(ds.connection_type.sel(coupler=nxt).values),
            status=str(ds.status.values), residual=float(ds.energy_balance_residual) / float(ds.traction_work))
    p2, p4, h2, h4 = PAPER["train2"], PAPER["train4"], res["train2"], res["train4"]
    out += [
        f"| max speed [km/h] | {p2['max_speed']} | {h2['max_speed']:.2f} | {p4['max_speed']} | {h4['max_speed']:.2f} |",
        f"| average speed [km/h] | {p2['mean_speed']} | {h2['mean_speed']:.2f} | {p4['mean_speed']} | {h4['mean_speed']:.2f} |",
        f"| largest draft force [kN] @ coupler | {p2['draft'][0]} @{p2['draft'][1]} | {h2['draft'][0]:.0f} @{h2['draft'][1]} "
        f"| {p4['draft'][0]} @{p4['draft'][1]} | {h4['draft'][0]:.0f} @{h4['draft'][1]} |",
        f"| largest buff force [kN] @ coupler | {p2['buff'][0]} @{p2['buff'][1]} | {h2['buff'][0]:.0f} @{h2['buff'][1]} "
        f"| {p4['buff'][0]} @{p4['buff'][1]} | {h4['buff'][0]:.0f} @{h4['buff'][1]} |",
        f"| mean of per-coupler max draft [kN] | {p2['mean_draft']} | {h2['mean_draft']:.0f} | {p4['mean_draft']} | {h4['mean_draft']:.0f} |",
        f"| mean of per-coupler max buff [kN] | {p2['mean_buff']} | {h2['mean_buff']:.0f} | {p4['mean_buff']} | {h4['mean_buff']:.0f} |",
        f"| max draft / buff deflection [mm] at coupler {p2['ref']} / {p4['ref']} | {p2['defl'][0]} / {p2['defl'][1]} "
        f"| {h2['defl'][0]:.1f} / {h2['defl'][1]:.1f} ({h2['ref_type']}) | {p4['defl'][0]} / {p4['defl'][1]} "
        f"| {h4['defl'][0]:.1f} / {h4['defl'][1]:.1f} ({h4['ref_type']}) |",
        f"| same at the next coupler {p2['ref'] + 1} / {p4['ref'] + 1} | – | {h2['defl_next'][0]:.1f} / {h2['defl_next'][1]:.1f} "
        f"({h2['next_type']}) | – | {h4['defl_next'][0]:.1f} / {h4['defl_next'][1]:.1f} ({h4['next_type']}) |",
        "",
        f"Status: train 2 {h2['status']}, train 4 {h4['status']}; energy-balance residual / traction work: "
        f"{h2['residual']:.1e} (train 2), {h4['residual']:.1e} (train 4).",
        "",
        "hpcrail / paper: " + "; ".join(
            f"{n} draft {h['draft'][0] / p['draft'][0]:.2f}, buff {h['buff'][0] / p['buff'][0]:.2f}, mean draft "
            f"{h['mean_draft'] / p['mean_draft']:.2f}, mean buff {h['mean_buff'] / p['mean_buff']:.2f}, deflection "
            f"{h['defl'][0] / p['defl'][0]:.2f} / {h['defl'][1] / p['defl'][1]:.2f}"
            for n, h, p in (("train 2", h2, p2), ("train 4", h4, p4))) + ".",
    ]
    return out


if __name__ == "__main__":
    main()
