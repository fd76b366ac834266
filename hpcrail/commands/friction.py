"""``hpcrail friction-report``: figures like Oprea 2018 Figs 3-5 and a short report of a friction run (the
LTD kind's ``friction`` run figure)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hpcrail.cli import EXIT_CONFIG, app, console, err_console


@app.command("friction-report")
def friction_report(store: Path = typer.Argument(..., help="result store (zarr) of a run with friction draft gears"),
                    output: Optional[Path] = typer.Option(None, "-o", "--output", help="output directory "
                                                          "(default: STORE name + '_report')"),
                    coupler: int = typer.Option(4, "--coupler",
                                                help="connection of the force figure (Oprea 2018 Fig 5: 4)"),
                    t_max: Optional[float] = typer.Option(None, "--t-max", help="end of the time axis [s]")):
    """Write relative velocities, relative displacements and one connection force as PNG (Oprea 2018
    Figs 3-5), and report.md: stick/slip events and the check of the final stationary phase."""
    import numpy as np
    import xarray as xr

    from hpcrail.kinds.ltd.figures import friction_figures, stationary_check

    if not store.exists():
        err_console.print(f"[bold red]error:[/] {store}: no such result store", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    ds = xr.open_zarr(store)
    if "relative_velocity" not in ds:
        err_console.print(f"[bold red]error:[/] {store}: not a run with friction draft gears "
                          "(no 'relative_velocity' variable)", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    M = ds.sizes["coupler"]
    if not 1 <= coupler <= M:
        err_console.print(f"[bold red]error:[/] --coupler {coupler} out of range; allowed: 1..{M}", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    out = output or store.with_name(store.name.removesuffix(".zarr") + "_report")
    paths = friction_figures(ds, out, coupler=coupler, t_max=t_max)
    chk = stationary_check(ds)
    lines = [f"# {ds.attrs.get('scenario_name', store.name)}: dry-friction draft gears",
             "", f"treatment: {ds.attrs.get('friction_treatment')}, stick band η = "
             f"{ds.attrs.get('friction_stick_band_mps'):g} m/s, integrator {ds.attrs.get('integrator')}, "
             f"status {ds['status'].values}, {int(ds['nsteps'])} steps, {int(ds['nfev'])} RHS evaluations, "
             f"{int(ds['n_events'])} events, wall {float(ds['wall_time']):.3f} s", ""]
    if "mode_change_time" in ds and ds.sizes.get("mode_change", 0):
        names = {0: "free", 1: "stick", 2: "slip +", -2: "slip -", 3: "break-away +", -3: "break-away -"}
        lines += ["## Mode changes", "", "| t [s] | connection | new mode |", "|---|---|---|"]
        for t, k, mo in zip(ds["mode_change_time"].values, ds["mode_change_coupler"].values,
                            ds["mode_change_mode"].values):
            lines.append(f"| {t:.6f} | {int(k)} | {names.get(int(mo), int(mo))} |")
        lines.append("")
    lines += ["## Final state vs the rigid train", "",
              f"every friction connection sticks: {chk['all_stick']}; acceleration of the vehicles "
              f"{np.min(chk['accel']):.6g}..{np.max(chk['accel']):.6g} m/s², rigid train ΣF/ΣM = "
              f"{chk['accel_rigid']:.6g} m/s²", "",
              "| connection | force [kN] | rigid-train force [kN] | final deflection [mm] | stick phases | "
              "stick time [s] |", "|---|---|---|---|---|---|"]
    for k in range(M):
        lines.append(f"| {k + 1} | {chk['force'][k] / 1e3:.4f} | {chk['force_rigid'][k] / 1e3:.4f} | "
                     f"{float(ds['final_deflection'][k]) * 1e3:.4f} | {float(ds['stick_phases'][k]):.0f} | "
                     f"{float(ds['stick_time'][k]):.3f} |")
    lines += ["", f"friction work {float(ds['friction_work']):.6g} J"]
    if "energy_balance_residual" in ds:
        lines.append(f"; energy balance residual {float(ds['energy_balance_residual']):.3g} J")
    lines += ["", "Figures: " + ", ".join(p.name for p in paths), ""]
    (out / "report.md").write_text("\n".join(lines))
    for p in paths + [out / "report.md"]:
        console.print(f"wrote {p}", highlight=False)
