"""The contact geometry of a profile pair as a readable dataset (what ``hpcrail contact`` writes as
``contact_geometry.zarr``): named variables with units and ``long_name`` — Δr(y), contact angles, rolling radii,
contact positions on wheel and rail, the wheelset's height and roll, the contact jumps of each wheel and the EN
15302 equivalent conicity against the amplitude — and its figures (Δr(y), γ(y), contact-point map, conicity).

Conventions (:mod:`hpcrail.models.wheelrail`): y the wheelset's lateral shift from the track centre line,
positive to the left; contact angles positive towards the track centre on both wheels; positions on the profiles
lateral from each profile's origin, positive towards the field side (left-wheel form, the same for both sides).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import xarray as xr

from hpcrail.models.wheelrail.conicity import METHODS, equivalent_conicity, rolling_radius_difference
from hpcrail.models.wheelrail.kec import JUMP_KINDS

SIDES = ("left", "right")


def contact_geometry(solver, ys, amplitudes, name: str = "", description: str = "") -> xr.Dataset:
    """The rigid contact of ``solver`` (:class:`~hpcrail.models.wheelrail.geometry.ContactSolver`) on the
    increasing lateral shifts ``ys`` [m] and the equivalent conicity at ``amplitudes`` [m], as a Dataset of
    named variables (module docstring).  Raises RuntimeError naming the position where no contact exists."""
    ys = np.asarray(ys, float)
    amps = np.asarray(amplitudes, float)
    dr, X = rolling_radius_difference(solver, ys)
    n = ys.size
    r = np.empty((n, 2))
    gam = np.empty((n, 2))
    uw = np.empty((n, 2))
    vr = np.empty((n, 2))
    Yc = np.empty((n, 2))
    Zc = np.empty((n, 2))
    for k, x in enumerate(X):
        for j, side in enumerate((1, -1)):
            c = solver.quantities(x, side)
            r[k, j] = c.rolling_radius
            gam[k, j] = c.gamma
            Yc[k, j] = c.dY + ys[k]
            Zc[k, j] = c.dZ + x[0]
        uw[k] = (x[2], x[4])
        vr[k] = (x[3], x[5])
    jumps = []
    for j, side in enumerate((1, -1)):
        for jp in solver.find_jumps(ys, X, side):
            jumps.append((jp["y"], j, JUMP_KINDS.index(jp["kind"]), jp["u_outer"], jp["u_inner"]))
    jumps.sort()
    conic = np.stack([equivalent_conicity(ys, dr, amps, m) for m in ("en15302", "harmonic")], axis=1)
    mm = dict(display_units="mm", display_scale=1e3)
    ds = xr.Dataset(
        {
            "delta_r": ("y", dr, dict(units="m", long_name="rolling-radius difference Δr = r_left - r_right", **mm)),
            "rolling_radius": (("y", "side"), r, dict(units="m", long_name="rolling radius")),
            "contact_angle": (("y", "side"), gam, dict(units="rad", long_name="contact angle γ (track frame, "
                                                       "positive towards the track centre)")),
            "contact_position_wheel": (("y", "side"), uw, dict(units="m", long_name="contact position on the wheel "
                                                               "profile (from its origin, field side positive)", **mm)),
            "contact_position_rail": (("y", "side"), vr, dict(units="m", long_name="contact position on the rail "
                                                              "profile (from its origin, field side positive)", **mm)),
            "contact_lateral_position": (("y", "side"), Yc, dict(units="m", long_name="lateral position of the "
                                                                 "contact point from the track centre line (+ left)")),
            "contact_height": (("y", "side"), Zc, dict(units="m", long_name="height of the contact point above the "
                                                       "rail profile origins")),
            "wheelset_height": ("y", X[:, 0], dict(units="m", long_name="height of the wheelset centre above the "
                                                   "rail profile origins")),
            "wheelset_roll": ("y", X[:, 1], dict(units="rad", long_name="wheelset roll angle (left side up +)")),
            "jump_y": ("jump", np.array([j[0] for j in jumps], float),
                       dict(units="m", long_name="lateral shift of a contact jump")),
            "jump_side": ("jump", np.array([j[1] for j in jumps], dtype=np.int8),
                          dict(long_name="wheel of the jump", flag_values=[0, 1], flag_meanings="left right")),
            "jump_kind": ("jump", np.array([j[2] for j in jumps], dtype=np.int8),
                          dict(long_name="kind of contact jump", flag_values=[0, 1, 2],
                               flag_meanings="two_point_contact fast_contact_point_sweep fold_of_the_contact_branch")),
            "jump_position_from": ("jump", np.array([j[3] for j in jumps], float),
                                   dict(units="m", long_name="contact position on the wheel before the jump")),
            "jump_position_to": ("jump", np.array([j[4] for j in jumps], float),
                                 dict(units="m", long_name="contact position on the wheel after the jump")),
            "equivalent_conicity": (("amplitude", "conicity_method"), conic,
                                    dict(units="1", long_name="equivalent conicity tan γ_e (EN 15302)")),
        },
        coords={"y": ("y", ys, dict(units="m", long_name="wheelset lateral shift from the track centre line (+ left)",
                                    **mm)),
                "side": ("side", list(SIDES), dict(long_name="wheel and rail side")),
                "amplitude": ("amplitude", amps, dict(units="m", long_name="oscillation amplitude ŷ (half peak-to-peak)",
                                                      **mm)),
                "conicity_method": ("conicity_method", ["en15302", "harmonic"],
                           dict(long_name="equivalent-conicity method: " + "; ".join(
                               f"{k}: {METHODS[k]}" for k in ("en15302", "harmonic"))))},
        attrs={"title": f"hpcrail contact geometry: {name}", "description": description,
               "Conventions": "CF-1.10", "symmetric_pair": int(solver.symmetric),
               "source": "rigid contact, paper 004 eq 12 (Yu et al. 2022); EN 15302:2008+A1:2010"},
    )
    return ds


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figures(geo: xr.Dataset, solver, out: Path, name: str = "") -> list[Path]:
    """Δr(y) and γ(y) (``rolling_radius_difference.png``), the contact-point map of both sides
    (``contact_points.png``) and the equivalent conicity against the amplitude (``conicity.png``)."""
    plt = _plt()
    out = Path(out)
    paths = []
    mm = 1e3
    ys = geo["y"].values
    jy = geo["jump_y"].values
    js = geo["jump_side"].values
    # --- Δr and γ
    fig, ax = plt.subplots(2, 1, figsize=(8.5, 7.5), sharex=True)
    ax[0].plot(ys * mm, geo["delta_r"].values * mm, "k", lw=1.3, label="Δr = r_left - r_right")
    for j, c in ((0, "tab:blue"), (1, "tab:red")):
        sel = js == j
        if np.any(sel):
            ax[0].plot(jy[sel] * mm, np.interp(jy[sel], ys, geo["delta_r"].values) * mm, "v" if j else "^", color=c,
                       ms=6, label=f"contact jump, {SIDES[j]} wheel")
    ax[0].set_ylabel("rolling-radius difference Δr [mm]")
    ax[0].grid(alpha=0.4)
    ax[0].legend(fontsize=8, loc="upper left")
    ax[0].set_title(f"{name}: rigid contact, roll included")
    for j, c in ((0, "tab:blue"), (1, "tab:red")):
        ax[1].plot(ys * mm, np.degrees(geo["contact_angle"].isel(side=j).values), color=c, lw=1.2,
                   label=f"{SIDES[j]} wheel")
    ax[1].set_ylabel("contact angle γ [deg] (towards the track centre)")
    ax[1].set_xlabel("wheelset lateral shift y [mm] (+ left)")
    ax[1].grid(alpha=0.4)
    ax[1].legend(fontsize=8, loc="upper center")
    fig.tight_layout()
    p = out / "rolling_radius_difference.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    # --- contact-point map, both sides (each in its own left-wheel form, field side to the right)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.4), constrained_layout=True)
    cmap = plt.get_cmap("viridis")
    i0 = int(np.argmin(np.abs(ys)))
    sel = np.unique(np.linspace(0, ys.size - 1, 31).astype(int))
    for j, side in enumerate((1, -1)):
        ax = axes[j]
        wheel, rail, P, gp, _ = solver.side(side)
        z0 = float(geo["wheelset_height"].values[i0])
        uw = np.linspace(wheel.u_min, wheel.u_max, 800)
        ax.plot(uw * mm, (z0 - P.r0 - wheel(uw)) * mm, "k", lw=1.2, label="wheel (centred wheelset)")
        vr = np.linspace(rail.u_min, rail.u_max, 800)
        c, s = math.cos(P.cant), math.sin(P.cant)
        off = P.L_r - P.L_w
        ax.plot((off + c * vr - s * rail(vr)) * mm, (s * vr + c * rail(vr)) * mm, color="tab:blue",
                lw=1.2, label=f"rail (inclination {P.cant:.3g} rad)")
        for k in sel:
            col = cmap((ys[k] - ys[0]) / (ys[-1] - ys[0]))
            u = float(geo["contact_position_wheel"].values[k, j])
            v = float(geo["contact_position_rail"].values[k, j])
            zw = (z0 - P.r0 - float(wheel(u))) * mm
            yr_ = (off + c * v - s * float(rail(v))) * mm
            zr_ = (s * v + c * float(rail(v))) * mm
            ax.plot([u * mm, yr_], [zw + 1.0, zr_ - 1.0], color=col, lw=0.8)
            ax.plot(u * mm, zw + 1.0, "o", color=col, ms=3)
            ax.plot(yr_, zr_ - 1.0, "s", color=col, ms=3)
        ax.set_xlim(wheel.u_min * mm - 3, max(wheel.u_max, off + rail.u_max) * mm + 3)
        ax.set_ylim(-32, 8)
        ax.grid(alpha=0.3)
        ax.set_xlabel(f"lateral position from the {SIDES[j]} wheel profile's origin [mm] (field side →)")
        if j == 0:
            ax.set_ylabel("height [mm] (wheel drawn 1 mm up, rail 1 mm down)")
        ax.set_title(f"{SIDES[j]}: {wheel.name} on {rail.name}", fontsize=10)
        ax.legend(fontsize=8, loc="lower left")
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(ys[0] * mm, ys[-1] * mm))
    fig.colorbar(sm, ax=axes, shrink=0.8, label="wheelset lateral shift y [mm] (+ left)")
    fig.suptitle(f"{name}: contact points (o wheel, □ rail)")
    p = out / "contact_points.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    # --- equivalent conicity
    amps = geo["amplitude"].values
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    ax.plot(amps * mm, geo["equivalent_conicity"].sel(conicity_method="en15302").values, "o-",
            label="EN 15302 (integration of the linearised equation)")
    ax.plot(amps * mm, geo["equivalent_conicity"].sel(conicity_method="harmonic").values, "s--",
            label="harmonic linearisation")
    ax.set_xlabel("amplitude ŷ [mm] (half peak-to-peak)")
    ax.set_ylabel("equivalent conicity tan γ_e [-]")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.4)
    ax.legend(fontsize=8)
    ax.set_title(f"{name}: equivalent conicity")
    fig.tight_layout()
    p = out / "conicity.png"
    fig.savefig(p, dpi=110)
    plt.close(fig)
    paths.append(p)
    return paths


__all__ = ["contact_geometry", "figures", "SIDES"]
