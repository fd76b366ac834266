"""Generate the synthetic worn profile pair of ``configs/wheelrail/worn_pair.yaml`` (run from the repository root:
``python configs/wheelrail/profiles/make_worn_pair.py``; the files are committed, this script documents them).

No public measured worn profiles with a licence that allows shipping them were found, so the pair is synthetic,
built from the standard profiles hpcrail ships (S1002: UIC 510-2 / EN 13715 sections; UIC60 1:40: the Manchester
contact benchmark's points, CONTACT, Apache-2.0) with wear shapes typical of freight wheels after ~100 000 km and
of a high rail in a curve (Jendel 2002, "Prediction of wheel profile wear", Wear 253; the shapes, not the numbers,
follow its figures):

* left wheel (``worn_wheel_left.txt``, plain y/z list with header metadata): hollow tread 1.2 mm deep, centred
  2 mm field-side of the taping line, 12 mm wide (Gaussian), and the flange face worn 1.5 mm thinner;
* right wheel (``worn_wheel_right.whl``, MiniProf format): hollow tread 0.6 mm, no flange wear, and a radius
  1 mm smaller (a 2 mm wheel-diameter difference, in the file's header: DiameterTaperline = 918 mm);
* left rail (``worn_rail_left.prr``, SIMPACK format): the gauge corner and face worn 2 mm, the crown 0.8 mm;
* right rail: the new UIC60 1:40 (built-in).

Measurement-like noise of 5 µm RMS (seeded) is added to the files; the pair's YAML smooths with 5 µm.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from hpcrail.models.wheelrail import profiles as pr

OUT = Path(__file__).resolve().parent
RNG = np.random.default_rng(29)


def bump(x, a, b, ramp):
    """Smooth weight: 1 on [a, b], falling to 0 over ``ramp`` on either side (quintic smoothstep)."""
    def s(t):
        t = np.clip(t, 0.0, 1.0)
        return t ** 3 * (10 - 15 * t + 6 * t * t)
    return s((x - (a - ramp)) / ramp) * s(((b + ramp) - x) / ramp)


def worn_wheel(u, hollow, hollow_w, flange_wear):
    """S1002 radius offset F [mm] at u [mm] (field side +) with a hollow tread and a thinner flange face."""
    F = pr.s1002_F(u)
    F = F - hollow * np.exp(-((u - 2.0) / hollow_w) ** 2)
    if flange_wear:
        Fs = pr.s1002_F(np.clip(u + flange_wear, -70.0, 60.0))
        F = F - bump(u, -46.0, -32.0, 4.0) * (F - Fs)
    return F


def main():
    u = np.round(np.arange(-70.0, 60.0001, 0.2), 4)
    Fl = worn_wheel(u, 1.2, 12.0, 1.5) + RNG.normal(0.0, 0.005, u.size)
    hdr = ["# synthetic worn S1002 wheel, left: hollow tread 1.2 mm, flange face 1.5 mm thinner",
           "# source: hpcrail configs/wheelrail/profiles/make_worn_pair.py (from S1002, UIC 510-2 / EN 13715)",
           "# kind: wheel", "# side: left", "# units: mm", "# lateral_positive: field", "# vertical_positive: down",
           "# nominal_radius_mm: 460", "# flange_back_mm: -70", "lateral_mm radius_offset_mm"]
    (OUT / "worn_wheel_left.txt").write_text("\n".join(hdr + [f"{a:.4f} {b:.5f}" for a, b in zip(u, Fl)]) + "\n")
    Fr = worn_wheel(u, 0.6, 12.0, 0.0) + RNG.normal(0.0, 0.005, u.size)
    # MiniProf: keyword header, a blank line, then the points; X towards the flange (gauge side), Y down
    lines = ["Filename=worn_wheel_right.whl", "ProgramName=hpcrail make_worn_pair.py", "MPTypeNo=0",
             f"XYPoints={u.size}", "DiameterTaperline=918.0", "Side=right",
             "Comment=synthetic worn S1002 wheel, right: hollow tread 0.6 mm; radius 459 mm", "ColumnDef=X,Y", ""]
    lines += [f" {-a:.4f}\t{b:.5f}" for a, b in zip(u, Fr)]
    (OUT / "worn_wheel_right.whl").write_text("\r\n".join(lines) + "\r\n")
    # rail: UIC60 1:40 points (field side +, depth down), un-canted to apply the wear in the rail's frame
    raw = pr.read_points(pr.builtin_path("MBench_UIC60_v3_rail_points_mm.csv"))
    p = pr.to_left_form(raw, kind="rail")                       # metres, height up, canted
    q = pr._rotate(p, -1.0 / 40.0)                              # rail frame
    v, g = q[:, 0] * 1e3, q[:, 1] * 1e3
    top = v[np.argmax(g)]
    # crown wear: 0.8 mm over the running surface; gauge side: 2 mm of the corner and face (lateral shift)
    g2 = g - 0.8 * bump(v, top - 20.0, top + 15.0, 8.0)
    side = bump(v, -40.0, top - 18.0, 6.0) * (v < top)
    v2 = v + 2.0 * side
    keep = np.concatenate([[True], np.diff(v2) * np.sign(np.diff(v2).mean()) > 1e-4])
    pts = pr._rotate(np.column_stack([v2[keep], g2[keep]]) * 1e-3, 1.0 / 40.0) * 1e3   # canted again
    pts[:, 1] += RNG.normal(0.0, 0.005, pts.shape[0])
    lines = ["! synthetic worn UIC60 rail canted 1:40, left (high) rail: gauge corner/face 2 mm, crown 0.8 mm",
             "! source: hpcrail configs/wheelrail/profiles/make_worn_pair.py (from CONTACT's MBench_UIC60_v3, "
             "Apache-2.0)", "header.begin", "  version = 1", "  type = 2", "header.end", "spline.begin",
             "  approx.smooth = 0.0", "  comment = 'synthetic worn UIC60 1:40 rail (hpcrail)'", "  units.len.f = 1000.0",
             "  mirror.y = 0", "  mirror.z = 0", "  inversion = 0", "  point.begin"]
    lines += [f"    {a:+.6e}  {-b:+.6e}" for a, b in pts]          # SIMPACK rail: z down (depth)
    lines += ["  point.end", "spline.end"]
    (OUT / "worn_rail_left.prr").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
