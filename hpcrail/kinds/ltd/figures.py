"""Run figures of the train kinds (LTD; the planar train reuses them) and the check of friction
draft-gear runs (Oprea 2018, Figs 3-5).

Every figure function follows the :class:`~hpcrail.kinds.descriptor.Figure` contract
``make(ds, out_dir, **options)`` — PNG paths, or the matplotlib figures with ``out_dir=None`` — with the
shared options of :mod:`hpcrail.results.plotting` (``select={"coupler": [...]}``, ``x="time"|"distance"``,
``t_max``):

* :func:`force_envelope` — ``force_envelope.png``: the in-train force envelope along the train (per-coupler
  maximum draft and maximum buff over every integrator step, kN, against the coupler number), locomotive
  positions marked;
* :func:`force_time` — ``force_time.png``: in-train force against time (or distance) at the couplers of the
  peak draft and peak buff forces and next to each locomotive (or the selected couplers), with the notch,
  the brake command and the head speed below;
* :func:`force_heatmap` — ``force_heatmap.png``: in-train force over time × coupler;
* :func:`coupler_displacements` — ``coupler_displacements.png`` (planar train): slider displacements of both
  ends, knuckle displacement and shank angles of the selected couplers;
* :func:`friction_figures` writes, from a result dataset with dry-friction connections,

  - ``relative_velocity.png`` — connection extension rates v_k − v_{k+1} (Oprea 2018 Fig 3: zero while
    sticking),
  - ``relative_displacement.png`` — connection deflections (Fig 4: constant while sticking, the
    stationary values decreasing from the head to the tail),
  - ``coupler_<k>_force.png`` — in-train force of connection k, its friction and spring-damper parts
    (Fig 5: k = 4; gaps where the friction force changes sign);

:func:`stationary_check` compares the end of a run with the rigid-train solution (every
connection sticks, a = ΣF/ΣM, connection k carries the force needed to accelerate the vehicles
behind it).
"""
from __future__ import annotations

import numpy as np
import xarray as xr

from hpcrail.results.plotting import finish, heatmap, new_figure, pick_elements, series_lines, time_window, title, \
    x_axis
from hpcrail.results.units import display_units, label, pretty_units, to_display

#: at most this many couplers in the force-time figure by default
MAX_COUPLERS = 8


def locomotives(ds: xr.Dataset) -> list[int]:
    """Vehicle numbers (1 = head) of the locomotives: the ``vehicle_kind`` coordinate; for stores written
    before it existed, the kinds of the vehicle types in ``config_yaml``; [] when neither says."""
    if "vehicle" not in ds.coords:
        return []
    if "vehicle_kind" in ds.coords:
        kinds_ = np.asarray(ds["vehicle_kind"].values).astype(str)
        return [int(v) for v, k in zip(ds["vehicle"].values, kinds_) if k == "locomotive"]
    try:
        import yaml

        types = yaml.safe_load(ds.attrs["config_yaml"])
        table = types.get("vehicle_types") or types.get("car_types") or {}
        names = np.asarray(ds["vehicle_type"].values).astype(str)
        return [int(v) for v, n in zip(ds["vehicle"].values, names)
                if isinstance(table.get(n), dict) and table[n].get("kind") == "locomotive"]
    except Exception:  # noqa: BLE001 - no configuration to read: no markers
        return []


def _mark_locomotives(ax, ds, axis: str = "x", offset: float = -0.5) -> None:
    """Dashed lines at the locomotives' positions on a coupler axis (vehicle v sits between couplers v-1
    and v, i.e. at v - 0.5), labelled once."""
    locos = locomotives(ds)
    for i, v in enumerate(locos):
        kw = dict(color="0.35", lw=0.8, ls="--", zorder=0, label="locomotive" if i == 0 else None)
        (ax.axvline if axis == "x" else ax.axhline)(v + offset, **kw)


def _has(*names):
    return lambda ds: all(n in ds for n in names)


def force_envelope(ds: xr.Dataset, out_dir=None, **_opts):
    """In-train force envelope along the train: per-coupler maximum draft (+) and maximum buff (−) force
    over every integrator step [kN] against the coupler number, locomotives marked (see the module
    docstring).  Raises ``ValueError`` without the envelopes ``coupler_max_draft_force`` and
    ``coupler_max_buff_force``."""
    if not ("coupler_max_draft_force" in ds and "coupler_max_buff_force" in ds):
        raise ValueError("the in-train force envelope needs coupler_max_draft_force and coupler_max_buff_force")
    k = np.asarray(ds["coupler"].values)
    da, db = ds["coupler_max_draft_force"], ds["coupler_max_buff_force"]
    draft = to_display(da.values, da.attrs)
    buff = to_display(db.values, db.attrs)
    fig, ax = new_figure(figsize=(10, 4.8))
    ax.fill_between(k, 0, draft, step="mid", color="tab:red", alpha=0.25, lw=0)
    ax.fill_between(k, 0, -buff, step="mid", color="tab:blue", alpha=0.25, lw=0)
    ax.step(k, draft, where="mid", color="tab:red", lw=1.4, label="max draft")
    ax.step(k, -buff, where="mid", color="tab:blue", lw=1.4, label="max buff")
    ax.axhline(0, color="k", lw=0.6)
    _mark_locomotives(ax, ds)
    units = pretty_units(display_units(da.attrs))
    for vals, sign, name in ((draft, 1, "draft"), (buff, -1, "buff")):
        if np.isfinite(vals).any():
            i = int(np.nanargmax(vals))
            ax.annotate(f"peak {name} {vals[i]:,.0f} {units} at coupler {int(k[i])}", (k[i], sign * vals[i]),
                        xytext=(8, 6 * sign), textcoords="offset points", fontsize=8,
                        va="bottom" if sign > 0 else "top")
    ax.margins(y=0.12)
    ax.set_xlabel(ds["coupler"].attrs.get("long_name", "coupler number"))
    ax.set_ylabel(f"in-train force [{units}] (+ draft, − buff)")
    ax.set_xlim(k[0] - 0.5, k[-1] + 0.5)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(title(ds, "in-train force envelope over every integrator step"), fontsize=10)
    return [finish(fig, out_dir, "force_envelope")]


def default_couplers(ds: xr.Dataset) -> tuple[list[int], dict]:
    """The couplers of :func:`force_time` by default and their legend texts: the couplers of the peak
    draft and peak buff forces, then the couplers just ahead of and behind each locomotive."""
    out: list[int] = []
    text: dict = {}
    M = ds.sizes.get("coupler", 0)

    def add(k, why):
        k = int(k)
        if 1 <= k <= M:
            if k not in out:
                out.append(k)
                text[k] = f"coupler {k} ({why})"
            elif why not in text[k]:
                text[k] = text[k][:-1] + f", {why})"

    for name, why in (("max_draft_force_coupler", "peak draft"), ("max_buff_force_coupler", "peak buff")):
        if name in ds and np.isfinite(float(ds[name])):
            add(int(ds[name]), why)
    for v in locomotives(ds):
        add(v - 1, f"ahead of loco {v}")
        add(v, f"behind loco {v}")
    return out, text


def force_time(ds: xr.Dataset, out_dir=None, *, select: dict | None = None, x: str = "time",
               t_max: float | None = None, **_opts):
    """In-train force against time (``x="distance"``: the head's position) at the selected couplers
    (``select={"coupler": [...]}``; default :func:`default_couplers`, at most :data:`MAX_COUPLERS`), one
    line per coupler, with the applied and commanded notch, the brake command and the speed of the head
    vehicle in panels below (those the dataset has).  Raises ``ValueError`` without ``coupler_force`` or
    for couplers that do not exist."""
    if "coupler_force" not in ds:
        raise ValueError("force against time needs the series coupler_force")
    sel = time_window(ds, t_max)
    requested = (select or {}).get("coupler")
    default, text = default_couplers(sel)
    ks = pick_elements(sel, "coupler", requested, default, MAX_COUPLERS)
    xv, xl = x_axis(sel, x, element={"vehicle": 1} if "vehicle" in sel.dims else None)
    panels = [p for p in (("notch", "notch_command"), ("brake_command",), ("speed",)) if p[0] in sel]
    fig, axes = new_figure(1 + len(panels), 1, figsize=(10, 4.2 + 1.5 * len(panels)), sharex=True,
                           gridspec_kw={"height_ratios": [3] + [1] * len(panels)}, squeeze=False)
    axes = axes[:, 0]
    ax = axes[0]
    series_lines(ax, sel, "coupler_force", "coupler", ks, xv, legend=text, lw=1.0)
    ax.axhline(0, color="k", lw=0.5)
    ax.set_ylabel(label(sel["coupler_force"].attrs, "coupler_force") + " (+ draft)")
    ax.legend(fontsize=7, ncol=2 if len(ks) > 4 else 1, loc="best")
    ax.grid(alpha=0.3)
    ax.set_title(title(ds, "in-train force at the selected couplers" if requested else
                       "in-train force at the peak couplers and next to the locomotives"), fontsize=10)
    for axp, names in zip(axes[1:], panels):
        for n, style in zip(names, ("-", "--")):
            if n in sel:
                da = sel[n]
                y = da.sel(vehicle=1).values if "vehicle" in da.dims else da.values
                axp.plot(xv, to_display(y, da.attrs), style, lw=1.0, label=da.attrs.get("long_name", n))
        first = sel[names[0]]
        axp.set_ylabel(label(first.attrs, names[0]) + (" (head)" if "vehicle" in first.dims else ""), fontsize=8)
        if len(names) > 1 and names[1] in sel:
            axp.legend(fontsize=7, loc="best")
        if names[0] == "brake_command":   # a fraction of full service (an emergency shows above 1)
            axp.set_ylim(-0.05, max(1.05, float(np.nanmax(to_display(sel[names[0]].values, sel[names[0]].attrs)))
                                    + 0.05 if np.isfinite(sel[names[0]].values).any() else 1.05))
        axp.grid(alpha=0.3)
    axes[-1].set_xlabel(xl)
    return [finish(fig, out_dir, "force_time")]


def force_heatmap(ds: xr.Dataset, out_dir=None, *, x: str = "time", t_max: float | None = None, **_opts):
    """In-train force over time (or distance) × coupler as an image, draft red, buff blue, the
    locomotives' positions marked.  Raises ``ValueError`` without ``coupler_force``."""
    if "coupler_force" not in ds:
        raise ValueError("the force heatmap needs the series coupler_force")
    sel = time_window(ds, t_max)
    xv, xl = x_axis(sel, x, element={"vehicle": 1} if "vehicle" in sel.dims else None)
    fig, ax = new_figure(figsize=(10, 5.2))
    heatmap(ax, sel, "coupler_force", "coupler", xv, xl,
            colorbar_label=label(sel["coupler_force"].attrs, "coupler_force") + " (+ draft, − buff)")
    _mark_locomotives(ax, sel, axis="y")
    if locomotives(sel):
        ax.legend(fontsize=7, loc="upper right")
    ax.set_title(title(ds, "in-train force over time and coupler"), fontsize=10)
    return [finish(fig, out_dir, "force_heatmap")]


def coupler_displacements(ds: xr.Dataset, out_dir=None, *, select: dict | None = None, x: str = "time",
                          t_max: float | None = None, **_opts):
    """Planar couplers: slider displacement of both ends, knuckle displacement and shank angles of the
    selected couplers (default: peak draft and peak buff couplers, at most 4) against time.  Raises
    ``ValueError`` without ``slider_displacement``."""
    if "slider_displacement" not in ds:
        raise ValueError("coupler displacements need the series slider_displacement")
    sel = time_window(ds, t_max)
    default, _text = default_couplers(sel)
    ks = pick_elements(sel, "coupler", (select or {}).get("coupler"), default, 4)
    xv, xl = x_axis(sel, x, element={"vehicle": 1} if "vehicle" in sel.dims else None)
    names = [n for n in ("slider_displacement", "knuckle_displacement", "shank_angle") if n in sel]
    fig, axes = new_figure(len(names), 1, figsize=(10, 2.6 * len(names) + 1), sharex=True, squeeze=False)
    for ax, n in zip(axes[:, 0], names):
        da = sel[n]
        for i, k in enumerate(ks):
            c = f"C{i}"
            if "coupler_end" in da.dims:
                for end, style in zip(np.asarray(sel["coupler_end"].values).astype(str), ("-", "--")):
                    ax.plot(xv, to_display(da.sel(coupler=k, coupler_end=end).values, da.attrs), style, color=c,
                            lw=1.0, label=f"coupler {k}, {end} end")
            else:
                ax.plot(xv, to_display(da.sel(coupler=k).values, da.attrs), color=c, lw=1.0, label=f"coupler {k}")
        ax.set_ylabel(label(da.attrs, n), fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, ncol=2, loc="best")
    axes[-1, 0].set_xlabel(xl)
    axes[0, 0].set_title(title(ds, "coupler displacements"), fontsize=10)
    return [finish(fig, out_dir, "coupler_displacements")]


has_envelopes = _has("coupler_max_draft_force", "coupler_max_buff_force")
has_coupler_force = _has("coupler_force")
has_slider_displacement = _has("slider_displacement")


def _colours(n):
    from matplotlib import colormaps

    cmap = colormaps["viridis" if n > 10 else "tab10"]
    return [cmap(i / max(n - 1, 1)) if n > 10 else cmap(i) for i in range(n)]


def friction_figures(ds: xr.Dataset, out_dir=None, coupler: int = 4, max_lines: int = 12,
                     t_max: float | None = None, report: bool = False, store_name: str = "", **_opts) -> list:
    """Write the three figures as PNG into ``out_dir``; returns their paths (the figures with
    ``out_dir=None``).

    ``coupler``: 1-based connection for the force figure (Oprea 2018 Fig 5 shows the 4th);
    ``max_lines``: at most this many connections per figure (evenly spread over a long train);
    ``t_max``: end of the time axis [s] (default: the whole run).

    Raises ``ValueError`` if the dataset has no friction variables or ``coupler`` is out of range.
    """
    if "relative_velocity" not in ds:
        raise ValueError("the dataset has no friction draft-gear results (no 'relative_velocity' variable)")
    M = ds.sizes["coupler"]
    if not 1 <= coupler <= M:
        raise ValueError(f"coupler {coupler} out of range 1..{M}")
    sel = time_window(ds, t_max)
    t = sel["time"].values
    ks = np.unique(np.linspace(1, M, min(M, max_lines)).round().astype(int))
    cols = _colours(len(ks))
    name = ds.attrs.get("scenario_name", "")
    treat = ds.attrs.get("friction_treatment", "").replace("_", "-")
    out = []
    for var, ylabel, fname, scale, what in (
            ("relative_velocity", "relative velocity v_k − v_k+1 [m/s]", "relative_velocity", 1.0,
             "relative velocities (Oprea 2018 Fig 3)"),
            ("coupler_deflection", "relative displacement (deflection) [mm]", "relative_displacement", 1e3,
             "relative displacements (Oprea 2018 Fig 4)")):
        fig, ax = new_figure(figsize=(8, 4.5))
        for c, k in zip(cols, ks):
            ax.plot(t, sel[var].sel(coupler=k).values * scale, color=c, lw=1.2, label=f"{k}: vehicles {k}-{k + 1}")
        ax.set_xlabel("simulated time [s]")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{name}: {what}, {treat}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, ncol=2 if len(ks) > 6 else 1)
        out.append(finish(fig, out_dir, fname))
    fig, ax = new_figure(figsize=(8, 4.5))
    f = sel["coupler_force"].sel(coupler=coupler).values * 1e-3
    tf = sel["friction_force"].sel(coupler=coupler).values * 1e-3
    ax.plot(t, f, color="k", lw=1.4, label="in-train force (spring + damper + friction)")
    ax.plot(t, f - tf, color="tab:blue", lw=1.0, ls="--", label="spring + damper part")
    ax.plot(t, tf, color="tab:red", lw=1.0, ls=":", label="friction part")
    ax.set_xlabel("simulated time [s]")
    ax.set_ylabel(f"connection {coupler} force [kN] (+ draft)")
    ax.set_title(f"{name}: force of connection {coupler} (Oprea 2018 Fig 5), {treat}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    out.append(finish(fig, out_dir, f"coupler_{coupler}_force"))
    if report and out_dir is not None:   # the hpcrail friction-report command
        out.append(friction_report(ds, out_dir, out, store_name or ds.attrs.get("scenario_name", "")))
    return out


def scenario_of(ds: xr.Dataset):
    """The validated scenario stored in a result dataset (``config_yaml`` attribute)."""
    import yaml

    from hpcrail.config import Document
    from hpcrail.kinds import validate_document

    return validate_document(Document(tree=yaml.safe_load(ds.attrs["config_yaml"]), root_file="<dataset>"))


def stationary_check(ds: xr.Dataset) -> dict:
    """Compare the last sample of a run with the rigid-train solution.

    Returns a dict: ``all_stick`` (every friction connection sticks: mode 1, or inside the band for the
    regularised treatment), ``accel`` float64[N] the vehicles' accelerations [m/s²], ``accel_rigid``
    = Σ applied forces / Σ M (traction, resistance, brake and grade forces; effective masses),
    ``force`` float64[N−1] the connection forces [N] and ``force_rigid`` float64[N−1] the forces that
    accelerate the vehicles behind each connection with ``accel_rigid`` — F·(n−k)/n for n equal
    masses pulled by F at the head (Oprea 2018 §5).
    """
    sc = scenario_of(ds)
    vt = [sc.vehicle_types[n] for n in sc.vehicle_type_names()]
    mass = np.array([v.mass_t * 1e3 * (1.0 + v.rotating_mass_fraction) for v in vt])
    last = ds.isel(time=-1)
    applied = (last["tractive_force"] + last["resistance_force"] + last["brake_force"] + last["grade_force"]).values
    a_rigid = applied.sum() / mass.sum()
    # force in connection k = momentum rate of the vehicles behind it minus their applied forces
    behind = np.cumsum((mass * a_rigid - applied)[::-1])[::-1][1:]
    fric = np.array([sc.connection_types[n].kind == "friction" for n in sc.connection_type_names()])
    mode = last["friction_mode"].values
    return {"all_stick": bool(np.all(mode[fric] == 1)), "accel": last["acceleration"].values,
            "accel_rigid": float(a_rigid), "force": last["coupler_force"].values, "force_rigid": behind,
            "mass": mass}


def friction_report(ds: xr.Dataset, out, paths: list, store_name: str = ""):
    """Write ``report.md`` of a friction run into ``out``: stick/slip mode changes, the final stationary phase
    against the rigid train (:func:`stationary_check`), friction work and the figures ``paths``; returns its
    path."""
    from pathlib import Path

    import numpy as np

    M = ds.sizes["coupler"]
    chk = stationary_check(ds)
    lines = [f"# {ds.attrs.get('scenario_name', store_name)}: dry-friction draft gears",
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
    path = Path(out) / "report.md"
    path.write_text("\n".join(lines))
    return path
