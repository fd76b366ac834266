"""Run figures of the LTD kind and the check of friction draft-gear runs (Oprea 2018, Figs 3-5).

:func:`friction_figures` writes, from a result dataset with dry-friction connections,

* ``relative_velocity.png`` — connection extension rates v_k − v_{k+1} (Oprea 2018 Fig 3: zero while
  sticking),
* ``relative_displacement.png`` — connection deflections (Fig 4: constant while sticking, the
  stationary values decreasing from the head to the tail),
* ``coupler_<k>_force.png`` — in-train force of connection k, its friction and spring-damper parts
  (Fig 5: k = 4; gaps where the friction force changes sign);

:func:`stationary_check` compares the end of a run with the rigid-train solution (every
connection sticks, a = ΣF/ΣM, connection k carries the force needed to accelerate the vehicles
behind it).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import xarray as xr


def _colours(n):
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("viridis" if n > 10 else "tab10")
    return [cmap(i / max(n - 1, 1)) if n > 10 else cmap(i) for i in range(n)]


def friction_figures(ds: xr.Dataset, out_dir: str | Path, coupler: int = 4, max_lines: int = 12,
                     t_max: float | None = None) -> list[Path]:
    """Write the three figures as PNG into ``out_dir``; returns their paths.

    ``coupler``: 1-based connection for the force figure (Oprea 2018 Fig 5 shows the 4th);
    ``max_lines``: at most this many connections per figure (evenly spread over a long train);
    ``t_max``: end of the time axis [s] (default: the whole run).

    Raises ``ValueError`` if the dataset has no friction variables or ``coupler`` is out of range.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if "relative_velocity" not in ds:
        raise ValueError("the dataset has no friction draft-gear results (no 'relative_velocity' variable)")
    M = ds.sizes["coupler"]
    if not 1 <= coupler <= M:
        raise ValueError(f"coupler {coupler} out of range 1..{M}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sel = ds if t_max is None else ds.sel(time=slice(None, t_max))
    t = sel["time"].values
    ks = np.unique(np.linspace(1, M, min(M, max_lines)).round().astype(int))
    cols = _colours(len(ks))
    name = ds.attrs.get("scenario_name", "")
    treat = ds.attrs.get("friction_treatment", "").replace("_", "-")
    paths = []
    for var, ylabel, fname, scale, title in (
            ("relative_velocity", "relative velocity v_k − v_k+1 [m/s]", "relative_velocity.png", 1.0,
             "relative velocities (Oprea 2018 Fig 3)"),
            ("coupler_deflection", "relative displacement (deflection) [mm]", "relative_displacement.png", 1e3,
             "relative displacements (Oprea 2018 Fig 4)")):
        fig, ax = plt.subplots(figsize=(8, 4.5))
        for c, k in zip(cols, ks):
            ax.plot(t, sel[var].sel(coupler=k).values * scale, color=c, lw=1.2, label=f"{k}: vehicles {k}-{k + 1}")
        ax.set_xlabel("time [s]")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{name}: {title}, {treat}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, ncol=2 if len(ks) > 6 else 1)
        fig.tight_layout()
        p = out / fname
        fig.savefig(p, dpi=130)
        plt.close(fig)
        paths.append(p)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    f = sel["coupler_force"].sel(coupler=coupler).values * 1e-3
    tf = sel["friction_force"].sel(coupler=coupler).values * 1e-3
    ax.plot(t, f, color="k", lw=1.4, label="in-train force (spring + damper + friction)")
    ax.plot(t, f - tf, color="tab:blue", lw=1.0, ls="--", label="spring + damper part")
    ax.plot(t, tf, color="tab:red", lw=1.0, ls=":", label="friction part")
    ax.set_xlabel("time [s]")
    ax.set_ylabel(f"connection {coupler} force [kN] (+ draft)")
    ax.set_title(f"{name}: force of connection {coupler} (Oprea 2018 Fig 5), {treat}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    p = out / f"coupler_{coupler}_force.png"
    fig.savefig(p, dpi=130)
    plt.close(fig)
    paths.append(p)
    return paths


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
