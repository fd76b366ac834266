"""``hpcrail contact PROFILES.yaml``: build (or load from the cache) the wheel/rail contact tables of a profile
pair, store them, and draw the figures an engineer checks first (paper 004 Fig. 1b-style contact-point map,
rolling-radius difference, contact angles, KEC equivalent profile, LUT, equivalent conicity) with a short
report."""
from __future__ import annotations

import math
import time
from pathlib import Path
from typing import List, Optional

import typer

from hpcrail.cli import EXIT_CONFIG, app, config_error_exit, console, err_console
from hpcrail.config import ConfigError

MM = 1e-3


@app.command("contact")
def contact(profiles: Path = typer.Argument(..., help="profile-pair YAML (e.g. configs/wheelrail/s1002_uic60.yaml)"),
            out: Optional[Path] = typer.Option(None, "-o", "--out", help="output directory (default: NAME_contact)"),
            set_: List[str] = typer.Option([], "--set", help="override a field: dotted.path=value (repeatable)"),
            rebuild: bool = typer.Option(False, "--rebuild", help="rebuild the tables even if cached"),
            no_figures: bool = typer.Option(False, "--no-figures", help="tables and report only")):
    """Build the LUT and KEC tables of a wheel/rail profile pair, write them (zarr) with figures and
    report.md (flange-contact shift, contact jumps, equivalent conicity)."""
    import numpy as np

    from hpcrail.models.wheelrail.config import load_profile_pair
    from hpcrail.models.wheelrail.conicity import equivalent_conicity, rolling_radius_difference
    from hpcrail.models.wheelrail.tables import contact_tables, save_tables

    try:
        cfg, doc = load_profile_pair(profiles, set_)
    except ConfigError as exc:
        config_error_exit(exc)
    out = out or Path(f"{cfg.name}_contact")
    t0 = time.perf_counter()
    try:
        tables = contact_tables(cfg, doc, rebuild=rebuild)
    except ConfigError as exc:
        config_error_exit(exc)
    except RuntimeError as exc:
        err_console.print(f"[bold red]error:[/] {profiles}: contact tables could not be built: {exc}",
                          highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    t_tab = time.perf_counter() - t0
    paths = save_tables(tables, out)
    solver = tables.solver()
    ys = np.arange(-15.0, 15.0 + 1e-9, 0.01) * MM
    dr, X = rolling_radius_difference(solver, ys)
    amps = np.array(cfg.conicity.amplitudes_mm) * MM
    conic = {}
    for meth in ("klingel", "harmonic"):
        try:
            conic[meth] = equivalent_conicity(ys, dr, amps, meth)
        except ValueError as exc:
            conic[meth] = np.full(amps.size, np.nan)
            err_console.print(f"[yellow]warning:[/] equivalent conicity ({meth}): {exc}", highlight=False)
    lines = _report(cfg, tables, amps, conic, t_tab, profiles)
    if not no_figures:
        paths += _figures(tables, solver, ys, dr, X, amps, conic, out)
    (out / "report.md").write_text("\n".join(lines) + "\n")
    paths.append(out / "report.md")
    for p in paths:
        console.print(f"wrote {p}", highlight=False)
    lut = tables.lut
    i3 = int(np.argmin(np.abs(amps - 3 * MM))) if amps.size else None
    msg = f"{cfg.name}: flange contact at |y| = {lut.attrs['y_flange'] * 1e3:.3f} mm"
    if i3 is not None and abs(amps[i3] - 3 * MM) < 1e-9:
        msg += f"; equivalent conicity at 3 mm: {conic[cfg.conicity.method][i3]:.4f} ({cfg.conicity.method})"
    console.print(msg, highlight=False)


def _report(cfg, tables, amps, conic, t_tab, profiles):
    P = tables.placement
    lut, kec = tables.lut, tables.kec
    gauge = P.gauge(tables.rail) * 1e3
    b2b = P.flange_back_spacing(tables.wheel) * 1e3
    lines = [f"# Wheel/rail contact tables: {cfg.name}", "", cfg.description, "",
             f"- profile pair file: `{profiles}`; table key `{tables.key}`",
             f"- wheel: {tables.wheel.source} (smoothing spline RMS {tables.wheel.rms * 1e6:.2f} µm)",
             f"- rail: {tables.rail.source} (smoothing spline RMS {tables.rail.rms * 1e6:.2f} µm). Paper 004's "
             "\"LB-140-Area\" rail is not public: every comparison with the paper is against a different rail.",
             f"- placement: L_w = {P.L_w:.5f} m, L_r = {P.L_r:.5f} m, r0 = {P.r0} m, cant = {P.cant:.5f} rad; "
             f"track gauge {gauge:.2f} mm at {cfg.rail.gauge_depth_mm:g} mm below the top of rail, flange-back "
             f"spacing {b2b:.2f} mm",
             f"- tables built in {tables.build_seconds.get('split_cpu_s', float('nan')):.2f} + "
             f"{tables.build_seconds.get('lut_cpu_s', float('nan')):.2f} (LUT) + "
             f"{tables.build_seconds.get('kec_cpu_s', float('nan')):.2f} (KEC) s CPU (this run: {t_tab:.2f} s wall, "
             "cache hit when much smaller)", "",
             "## Flange contact and contact jumps", "",
             f"Tread/flange transition ({lut.attrs['split_kind']}): the flange first touches at |y| = "
             f"{lut.attrs['y_flange'] * 1e3:.4f} mm (wheel contact jumps from {lut.attrs['u_tread'] * 1e3:.2f} to "
             f"{lut.attrs['u_flange'] * 1e3:.2f} mm from the taping line); LUT tread/flange boundary at "
             f"u = {lut.attrs['u_split'] * 1e3:.2f} mm.", "",
             "| jump | y [mm] | s^k [mm] | left wheel contact from → to [mm] | kind |", "|---|---|---|---|---|"]
    for j in range(kec.sizes.get("jump", 0)):
        kind = "two-point contact" if int(kec["jump_kind"][j]) == 0 else "fast (contact point sweeps)"
        lines.append(f"| {j + 1} | {float(kec['jump_y'][j]) * 1e3:.4f} | {float(kec['jump_s_k'][j]) * 1e3:.4f} | "
                     f"{float(kec['jump_u_outer'][j]) * 1e3:.2f} → {float(kec['jump_u_inner'][j]) * 1e3:.2f} | {kind} |")
    lines += ["", "KEC regularisation bands (tread side Δŝ = "
              f"{kec.attrs['tread_band'] * 1e3:g} mm, flange side Δs̄ = {kec.attrs['flange_band'] * 1e3:g} mm, "
              "widened to grid nodes; neighbouring bands share a node): " + ", ".join(
                  f"[{float(lo) * 1e3:.1f}, {float(hi) * 1e3:.1f}] mm" for lo, hi in
                  zip(kec["band_lo"].values, kec["band_hi"].values)), "",
              "## Equivalent conicity (EN 15302)", "",
              "| amplitude [mm] | tan γ_e Klingel | tan γ_e harmonic |", "|---|---|---|"]
    for a, k, h in zip(amps, conic["klingel"], conic["harmonic"]):
        lines.append(f"| {a * 1e3:.1f} | {k:.4f} | {h:.4f} |")
    lines += ["", "Comparison: paper 004 gives no flange-contact shift or conicity for its pair; its steady-curving "
              "front wheelsets sit at y = -8.8 … -9.1 mm (Table 5), near flange contact of the S1002/LB-140-Area "
              "pair, which is not this rail.  No published value for this exact set-up was found (see "
              "docs/models.md).", "",
              "Figures: contact_points.png, rolling_radius_difference.png, kec_profile.png, lut.png, "
              "conicity.png"]
    return lines


def _figures(tables, solver, ys, dr, X, amps, conic, out: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from hpcrail.models.wheelrail.geometry import side_quantities

    P = tables.placement
    w, r = tables.wheel, tables.rail
    paths = []
    mm = 1e3
    # --- contact-point map (paper 004 Fig. 1b): left wheel and rail in the track frame at y = 0
    fig, ax = plt.subplots(2, 1, figsize=(9, 9), gridspec_kw={"height_ratios": [3, 2]})
    uw = np.linspace(w.u_min, w.u_max, 800)
    ax[0].plot((P.L_w + uw) * mm, (-(P.r0 + w(uw)) + X[len(ys) // 2, 0]) * mm, "k", label="wheel (y = 0)")
    vr = np.linspace(r.u_min, r.u_max, 800)
    c, s = math.cos(P.cant), math.sin(P.cant)
    ax[0].plot((P.L_r + c * vr - s * r(vr)) * mm, (s * vr + c * r(vr)) * mm, "tab:blue", label="rail (1:40)")
    sel = np.arange(0, len(ys), 50)
    cmap = plt.get_cmap("viridis")
    for k in sel:
        x = X[k]
        col = cmap((ys[k] - ys[0]) / (ys[-1] - ys[0]))
        uw_c, vr_c = x[2], x[3]
        yw = P.L_w + uw_c
        zw = -(P.r0 + float(w(uw_c))) + X[len(ys) // 2, 0]
        yr = P.L_r + c * vr_c - s * float(r(vr_c))
        zr = s * vr_c + c * float(r(vr_c))
        ax[0].plot([yw * mm, yr * mm], [zw * mm + 0.5, zr * mm - 0.5], color=col, lw=0.8)
        ax[0].plot(yw * mm, zw * mm + 0.5, "o", color=col, ms=3)
        ax[0].plot(yr * mm, zr * mm - 0.5, "s", color=col, ms=3)
    ax[0].set_xlim((P.L_w + w.u_min) * mm - 2, (P.L_r + r.u_max) * mm + 5)
    ax[0].set_ylim(-32, 12)
    ax[0].set_xlabel("lateral position Y, left side [mm]")
    ax[0].set_ylabel("Z [mm] (wheel lifted 0.5 mm, rail lowered 0.5 mm)")
    ax[0].set_title(f"{tables.cfg.name}: contact points for y = {ys[0] * mm:.0f} … {ys[-1] * mm:.0f} mm "
                    "(colour: y; o wheel, □ rail)")
    ax[0].legend(loc="lower right")
    ax[0].set_aspect("equal")
    ax[1].plot(ys * mm, X[:, 2] * mm, label="left wheel s^w (from taping line)")
    ax[1].plot(ys * mm, X[:, 3] * mm, label="left rail s^r")
    ax[1].plot(ys * mm, -X[:, 4] * mm, "--", label="right wheel s^w")
    ax[1].set_xlabel("wheelset lateral shift y [mm] (positive: left)")
    ax[1].set_ylabel("contact position [mm]")
    ax[1].grid(True)
    ax[1].legend(fontsize=8)
    fig.tight_layout()
    p = out / "contact_points.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    # --- rolling-radius difference and contact angles
    gl = np.array([side_quantities(solver.gp, 1.0, x[1], x[2], x[3])[2] for x in X])
    gr = np.array([side_quantities(solver.gp, -1.0, x[1], x[4], x[5])[2] for x in X])
    fig, ax = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    ax[0].plot(ys * mm, dr * mm, "k")
    ax[0].set_ylabel("Δr = r_left - r_right [mm]")
    ax[0].grid(True)
    ax[0].set_title("rolling-radius difference and contact angles (rigid contact, roll included)")
    ax[1].plot(ys * mm, np.degrees(gl), label="left wheel")
    ax[1].plot(ys * mm, np.degrees(gr), label="right wheel")
    ax[1].set_ylabel("contact angle γ [deg] (towards the track centre)")
    ax[1].set_xlabel("wheelset lateral shift y [mm]")
    ax[1].grid(True)
    ax[1].legend()
    fig.tight_layout()
    p = out / "rolling_radius_difference.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    # --- KEC equivalent profile and contact map (paper 004 Figs 8-9)
    kec = tables.kec
    sk = kec["s_k"].values * mm
    fig, ax = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    ax[0].plot(sk, kec["f_rigid"].values * mm, color="0.6", lw=3, label="rigid contact (unregularised)")
    ax[0].plot(sk, kec["f"].values * mm, "k", lw=1, label="regularised f^k")
    for lo, hi in zip(kec["band_lo"].values, kec["band_hi"].values):
        for a_ in ax:
            a_.axvspan(lo * mm, hi * mm, color="tab:orange", alpha=0.2)
    ax[0].set_ylabel("f^k [mm]")
    ax[0].legend()
    ax[0].grid(True)
    ax[0].set_title("KEC equivalent profile of the left wheel (bands: regularised transitions)")
    ax[1].plot(sk, kec["q"].sel(quantity="u").values * mm, ".", ms=2, label="real wheel contact s^w")
    ax[1].plot(sk, kec["q"].sel(quantity="v").values * mm, ".", ms=2, label="real rail contact s^r")
    ax[1].set_xlabel("s^k [mm]")
    ax[1].set_ylabel("real contact position [mm]")
    ax[1].grid(True)
    ax[1].legend()
    fig.tight_layout()
    p = out / "kec_profile.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    # --- LUT: z(y) for the gauge variations (paper 004 Fig. 7a) and the flange indentation
    lut = tables.lut
    fig, ax = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    yl = lut["y"].values * mm
    for xg in lut["xi_g"].values:
        col = lut["V"].sel(xi_g=xg)
        ax[0].plot(yl, (col.sel(quantity="z").values - P.r0) * mm, lw=1, label=f"ξ_g = {xg * mm:+.0f} mm")
        ax[1].plot(yl, col.sel(quantity="delta_l").values * mm, lw=1)
    ax[0].set_ylabel("z_clt - r0 [mm]")
    ax[0].legend(fontsize=7, ncol=2)
    ax[0].grid(True)
    ax[0].set_title("LUT: tread-contact wheelset height and left flange indentation")
    ax[1].set_ylabel("left flange indentation δ [mm]")
    ax[1].set_xlabel("ȳ [mm]")
    ax[1].set_ylim(-8, 8)
    ax[1].axhline(0, color="k", lw=0.5)
    ax[1].grid(True)
    fig.tight_layout()
    p = out / "lut.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    # --- equivalent conicity
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot(amps * mm, conic["klingel"], "o-", label="Klingel integration (EN 15302)")
    ax.plot(amps * mm, conic["harmonic"], "s--", label="harmonic linearisation")
    ax.set_xlabel("amplitude ŷ [mm]")
    ax.set_ylabel("equivalent conicity tan γ_e")
    ax.grid(True)
    ax.legend()
    ax.set_title(f"{tables.cfg.name}: equivalent conicity")
    fig.tight_layout()
    p = out / "conicity.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    return paths
