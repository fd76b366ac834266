"""State, element and diagnostic layout constants of the railway-vehicle model (shared by
:mod:`.build` and :mod:`.kernel`; a module of its own so that the kernel does not import the set-up code)."""
from __future__ import annotations

# --- body blocks -------------------------------------------------------------------------------
R_Y, R_Z, R_PHI, R_TH, R_PSI = range(5)       #: positions of a rigid body block (velocities at +5)
RIGID_BLOCK = 10
W_Y, W_PSI, W_YD, W_PSID, W_OM = range(5)     #: wheelset block
WHEELSET_BLOCK = 5
S_POS, S_VEL = 0, 1                           #: vehicle longitudinal states
HEAD = 2

KIND_RIGID, KIND_WHEELSET = 0, 1
#: element laws
LAW_SPRING_DAMPER, LAW_SERIES_DAMPER, LAW_BUMPSTOP = 0, 1, 2
LAWS = {"spring_damper": LAW_SPRING_DAMPER, "series_damper": LAW_SERIES_DAMPER, "bumpstop": LAW_BUMPSTOP}
#: element axes: translations along the master track frame's x, y, z; rotations about them
AXES = {"x": 0, "y": 1, "z": 2, "rx": 3, "ry": 4, "rz": 5}
#: contact methods
METHOD_KEC, METHOD_LUT = 0, 1
METHODS = {"kec": METHOD_KEC, "lut": METHOD_LUT}
SPEED_PRESCRIBED, SPEED_FREE = 0, 1
SPIN_FREE, SPIN_ROLLING = 0, 1

# --- per-sample diagnostics (kernel.vehicle_outputs) ----------------------------------------------
#: per body: y, z, φ, θ, ψ (from the reference; wheelsets: z, φ from the constraint), ẏ
D_BODY = 6
#: per wheel
(DW_Q, DW_Y, DW_N, DW_XI_X, DW_XI_Y, DW_SPIN, DW_SW, DW_SR, DW_GAMMA, DW_FLANGE, DW_DELTA, DW_FX, DW_NFLANGE,
 DW_R, DW_TGAMMA) = range(15)
D_WHEEL = 15
#: per wheelset: fixed-point iterations, Newton iterations of the KEC solve, LUT range flag, ΣY, spin ω, and
#: the dependent coordinates z, φ (absolute, track frame) with their rates ż, φ̇ from the embedded constraint
DWS_ITER, DWS_KEC, DWS_CLAMP, DWS_SUMY, DWS_OMEGA, DWS_Z, DWS_PHI, DWS_ZDOT, DWS_PHIDOT = range(9)
D_WS = 9

#: work-array sizes (kernel.py documents the layout)
WORK_BODY = 48
WORK_WS = 112
