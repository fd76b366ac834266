"""``hpcrail lcf``: the endurable longitudinal compressive force of a wagon (EN 15839 approach) from a mixed-train
propelling rig (``configs/mixed/lcf_s_curve.yaml``) run at increasing buff forces
(:mod:`hpcrail.kinds.mixed_train.lcf`, reached through the kind registry's tools)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from hpcrail.cli import EXIT_CONFIG, app, config_error_exit, console, err_console, print_json
from hpcrail.config import ConfigError


def parse_forces(text: str) -> list[float]:
    """``100:600:50`` (start:stop:step, stop included) or ``100,200,350`` [kN] → increasing positive forces;
    raises ValueError with what is allowed."""
    import numpy as np

    try:
        if ":" in text:
            a, b, c = (float(x) for x in text.split(":"))
            if c <= 0 or b < a:
                raise ValueError
            vals = [float(x) for x in np.round(np.arange(a, b + 0.5 * c, c), 6)]
        else:
            vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--forces {text!r}: give start:stop:step (kN, e.g. 100:600:50) or a list 100,200,300") \
            from None
    if not vals or any(v <= 0 for v in vals) or any(b <= a for a, b in zip(vals, vals[1:])) or len(vals) > 200:
        raise ValueError(f"--forces {text!r}: 1 to 200 increasing forces > 0 kN")
    return vals


@app.command("lcf")
def lcf(scenario: Path = typer.Argument(..., help="propelling rig: a mixed-train YAML (configs/mixed/lcf_s_curve.yaml)"),
        forces: str = typer.Option("100:600:50", "--forces", help="buff forces [kN]: start:stop:step or a list a,b,c"),
        set_: List[str] = typer.Option([], "--set", help="override a field of the rig: dotted.path=value"),
        output: Optional[Path] = typer.Option(None, "-o", "--output", help="output directory (default: NAME_lcf/)"),
        y_q_limit: float = typer.Option(1.2, "--y-q-limit", help="(Y/Q) 2 m limit (ASSUMED 1.2 for R = 150 m)"),
        dq_q_limit: float = typer.Option(0.6, "--dq-q-limit", help="wheel unloading limit (UIC 530-2: 0.6)"),
        coupler_yaw_deg: float = typer.Option(15.0, "--coupler-yaw-deg", help="free swing of the coupler [deg]"),
        drag: str = typer.Option("drag", "--drag-type", help="vehicle type whose running resistance sets the force"),
        pusher: str = typer.Option("pusher", "--pusher-type", help="locomotive type that pushes"),
        json_: bool = typer.Option(False, "--json", help="print the levels and the result as JSON")):
    """Push the rig's detailed wagon through its S-curve at each buff force and report the largest force at which
    (Y/Q) 2 m, dQ/Q and the coupler yaw stay within their limits (EN 15839 / UIC 530-2 approach), with the
    quasi-static model's prediction beside it; writes lcf.png, lcf.csv and report.md."""
    import csv

    from rich.table import Table

    from hpcrail.kinds import load_scenario, tool

    rig = tool("lcf")     # the mixed train's LCF rig (hpcrail.kinds.mixed_train.lcf), through the kind registry
    Criteria, endurable, lcf_figure = rig.Criteria, rig.endurable, rig.lcf_figure
    level_overrides, quasi_static_endurable, run_levels = (rig.level_overrides, rig.quasi_static_endurable,
                                                           rig.run_levels)

    try:
        levels_kN = parse_forces(forces)
    except ValueError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    try:
        sc, _ = load_scenario(scenario, set_)
    except ConfigError as exc:
        config_error_exit(exc)
    if getattr(sc, "model", "") != "mixed_train":
        err_console.print(f"[bold red]error:[/] {scenario}: the rig must be a mixed_train scenario (a detailed wagon "
                          f"in a consist), not {getattr(sc, 'model', '?')!r}", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    try:
        for f in (levels_kN[0], levels_kN[-1]):
            load_scenario(scenario, list(set_) + level_overrides(sc, f, drag, pusher))
    except (ValueError, ConfigError) as exc:
        msg = "; ".join(str(i) for i in exc.issues) if isinstance(exc, ConfigError) else str(exc)
        err_console.print(f"[bold red]error:[/] {msg}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    crit = Criteria(y_over_q=y_q_limit, wheel_unloading=dq_q_limit, coupler_yaw_deg=coupler_yaw_deg)
    out = output or Path(f"{sc.name}_lcf")
    say = (lambda t: None) if json_ else (lambda t: err_console.print(t, highlight=False, soft_wrap=True))
    say(f"{sc.name}: {len(levels_kN)} buff-force levels, {levels_kN[0]:g}-{levels_kN[-1]:g} kN "
        f"({sc.simulation.duration_s:g} s each)")
    levels = run_levels(scenario, levels_kN, set_, crit, drag, pusher, say)
    result = endurable(levels)
    result["quasi_static_kN"] = quasi_static_endurable(levels, crit)
    out.mkdir(parents=True, exist_ok=True)
    fig = lcf_figure(levels, result, crit, out, f"{sc.name}: endurable longitudinal compressive force (EN 15839 "
                     "approach)")
    with open(out / "lcf.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["force_kN", "status", "buff_at_max_y_over_q_kN", "y_over_q_2m", "wheel_unloading_2m", "coupler_yaw_deg",
                    "qs_y_over_q", "qs_wheel_unloading", "verdict"])
        for lev in levels:
            w.writerow([lev.force_kN, lev.status, lev.peak_buff_kN, lev.y_over_q, lev.wheel_unloading,
                        lev.coupler_yaw_deg, lev.qs_y_over_q, lev.qs_wheel_unloading, lev.verdict])
    e = result["endurable_kN"]
    lines = [f"# {sc.name}: endurable longitudinal compressive force", "",
             f"Rig `{scenario}`; limits (Y/Q) 2 m {crit.y_over_q:g}, dQ/Q {crit.wheel_unloading:g}, coupler yaw "
             f"{crit.coupler_yaw_deg:g} deg.", "",
             f"**Endurable force: {e:.0f} kN**" + ("" if result["bounded"] else " (no level failed: a lower bound)")
             + (f", governed by {result['governing']}" if result["governing"] else "")
             + f" (last passing level {result['last_pass_kN']:g} kN, first failing {result['first_fail_kN']:g} kN); "
             f"the quasi-static model gives {result['quasi_static_kN']:.0f} kN.",
             "", "| force [kN] | buff at max Y/Q [kN] | (Y/Q) 2 m | dQ/Q | coupler yaw [deg] | QS Y/Q | QS dQ/Q | verdict |",
             "|---:|---:|---:|---:|---:|---:|---:|---|"]
    lines += [f"| {lev.force_kN:g} | {lev.peak_buff_kN:.1f} | {lev.y_over_q:.3f} | {lev.wheel_unloading:.3f} | "
              f"{lev.coupler_yaw_deg:.2f} | {lev.qs_y_over_q:.3f} | {lev.qs_wheel_unloading:.3f} | {lev.verdict} |"
              for lev in levels]
    (out / "report.md").write_text("\n".join(lines) + "\n")
    if json_:
        print_json({"scenario": sc.name, "criteria": {"y_over_q": crit.y_over_q, "wheel_unloading":
                    crit.wheel_unloading, "coupler_yaw_deg": crit.coupler_yaw_deg}, "levels":
                    [lev.as_dict() for lev in levels], "result": result,
                    "files": [str(fig), str(out / "lcf.csv"), str(out / "report.md")]})
        return
    t = Table(title=f"{sc.name}: buff force, the detailed wagon's criteria and the quasi-static model's")
    for col in ("set [kN]", "at max Y/Q [kN]", f"(Y/Q)2m, lim {crit.y_over_q:g}", f"dQ/Q, lim {crit.wheel_unloading:g}",
                f"yaw [deg], lim {crit.coupler_yaw_deg:g}", "QS Y/Q", "QS dQ/Q", "verdict"):
        t.add_column(col, justify="left" if col == "verdict" else "right")
    for lev in levels:
        v = {"PASS": "[green]PASS[/]", "EXCEEDED": "[bold red]EXCEEDED[/]"}.get(lev.verdict, lev.verdict)
        t.add_row(f"{lev.force_kN:g}", f"{lev.peak_buff_kN:.1f}", f"{lev.y_over_q:.3f}", f"{lev.wheel_unloading:.3f}",
                  f"{lev.coupler_yaw_deg:.2f}", f"{lev.qs_y_over_q:.3f}", f"{lev.qs_wheel_unloading:.3f}", v)
    console.print(t)
    console.print(lines[4].replace("**", ""), highlight=False, soft_wrap=True)
    console.print(f"wrote {fig}, {out / 'lcf.csv'}, {out / 'report.md'}", highlight=False, soft_wrap=True)
