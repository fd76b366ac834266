"""Wheel/rail geometry of the quasi-static model's bogies: the rolling-radius difference Δr(y) and the left wheel's
contact angle tan γ(y) against the wheelset's lateral shift, and the shift at flange contact.

The default pair (every LTD vehicle type unless its ``running_gear`` says otherwise) is S1002 on UIC60 canted
1:40 at standard gauge (flange backs 1360 mm), the pair of ``configs/wheelrail/s1002_uic60.yaml``; its table
``hpcrail/data/safety/s1002_uic60_1in40.csv`` was computed with hpcrail's contact solver by :func:`profile_table`
(``python -m hpcrail.models.safety.profiles configs/wheelrail/s1002_uic60.yaml`` rewrites it; a test checks it
against the solver).
"""
from __future__ import annotations

import functools
from importlib import resources

import numpy as np

DEFAULT = "s1002_uic60_1in40.csv"


def profile_table(profiles_path, step_mm: float = 0.1, span_mm: float = 12.0):
    """``(y [m], Δr [m], tan γ_left, y_flange [m])`` of a profile-pair YAML (hpcrail's contact solver: the rigid
    wheelset solutions on an increasing grid of shifts, :func:`hpcrail.models.wheelrail.conicity.
    rolling_radius_difference`; γ the left wheel's contact angle in the track frame, + towards the track
    centre)."""
    from hpcrail.models.wheelrail.config import load_profile_pair
    from hpcrail.models.wheelrail.conicity import rolling_radius_difference
    from hpcrail.models.wheelrail.tables import contact_tables

    cfg, doc = load_profile_pair(profiles_path)
    tables = contact_tables(cfg, doc)
    solver = tables.solver()
    ys = np.round(np.arange(-span_mm, span_mm + 1e-9, step_mm), 6) * 1e-3
    dr, X = rolling_radius_difference(solver, ys)
    tg = np.tan([solver.quantities(X[i], 1)[2] for i in range(ys.size)])
    return ys, dr, tg, float(tables.lut.attrs["y_flange"])


@functools.lru_cache(maxsize=4)
def builtin(name: str = DEFAULT):
    """The packaged table ``name``: ``(y [m], Δr [m], tan γ_left, y_flange [m])`` as tuples."""
    text = resources.files("hpcrail.data").joinpath("safety", name).read_text()
    yfl = None
    rows = []
    for line in text.splitlines():
        if line.startswith("# y_flange_mm"):
            yfl = float(line.split("=")[1]) * 1e-3
        elif line and not line.startswith("#") and not line.startswith("y_mm"):
            rows.append([float(v) for v in line.split(",")])
    a = np.array(rows)
    return tuple(a[:, 0] * 1e-3), tuple(a[:, 1] * 1e-3), tuple(a[:, 2]), yfl


def write_table(profiles_path, out) -> None:
    """Write :func:`profile_table` of ``profiles_path`` as the packaged CSV ``out``."""
    ys, dr, tg, yfl = profile_table(profiles_path)
    lines = [f"# Wheel/rail geometry for the quasi-static running-safety model (hpcrail.models.safety.profiles): "
             f"{profiles_path}",
             "# computed with hpcrail's contact solver (rolling_radius_difference, side_quantities): Δr = left minus "
             "right rolling radius, tan γ of the left wheel's contact angle (track frame, + towards the track centre)",
             f"# y_flange_mm = {yfl * 1e3:.4f}", "y_mm,dr_mm,tan_gamma_left"]
    lines += [f"{y * 1e3:.2f},{d * 1e3:.6f},{t:.6f}" for y, d, t in zip(ys, dr, tg)]
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":  # pragma: no cover
    import sys
    from pathlib import Path

    write_table(sys.argv[1], Path(__file__).resolve().parents[2] / "data" / "safety" / DEFAULT)
