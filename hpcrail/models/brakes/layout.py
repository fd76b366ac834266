"""Layout of the pneumatic brake inside the LTD state and parameters (pure Python: no numba).

**State** (vehicle-major, inside the LTD block of B states per vehicle, after the LTD's two states
e_j/s_1 and v_j): the brake block of vehicle j holds ``nl`` states at ``y[B*j + 2 + l]``, l = local index:

==================  ==========================================================================
local index         state
==================  ==========================================================================
2c (c < nc)         brake-pipe pressure of cell c [Pa, absolute] (nc cells per vehicle, head first)
2c + 1              mass flow through face c [kg/s], + towards the tail; face nc−1 is the hose/coupling
                    to the next vehicle's cell 0 (the tail's is the closed angle cock)
2nc                 auxiliary reservoir pressure [Pa abs]
2nc + 1             brake-cylinder air mass as q = m·R·T/V_ref [Pa] (V_ref = volume at block contact):
                    linear in the mass, so the air-mass balance is a linear invariant of the ODE
2nc + 2 + k         valve states (k < nx): UIC distributor: control reservoir, quick-service chamber
                    [Pa abs]; AAR control valve: emergency reservoir, quick-action chamber [Pa abs],
                    service-piston position s, emergency latch e [0..1]
2nc + 2 + nx        equalising reservoir of a driver's brake valve [Pa abs] (control pressure)
2nc + 3 + nx        independent-brake control pressure [Pa abs] (locomotives)
2nc + 4 + nx        air exchanged with the outside [kg]: vented to the atmosphere − drawn from main
                    reservoirs (cumulative), so that Σ air masses + Σ exchanged = initial mass
==================  ==========================================================================

so ``nl = 2nc + nx + 5`` and ``B = nl + 2``.  Every vehicle has the same block (unused states stay
constant).  A hidden-vehicle block owns a contiguous slice; its neighbours exchange the boundary
pipe states only (the coupling face of the vehicle ahead and cell 0 of the vehicle behind).

**Parameters**: float arrays of :class:`~hpcrail.models.ltd.build.LTDParams` named ``pn_*`` (columns
below), filled by :mod:`hpcrail.kinds.ltd.brake_build`.

**Jacobian**: the brake rows' entries follow the LTD entries in the value array; vehicle j's entries
are at ``slot0[j] + smap[mask_j, r, c]`` for local row r and local column c (c = nl: the face nc−1 of
vehicle j−1, c = nl + 1: cell 0 of vehicle j+1); :func:`local_pattern` is the structural pattern of
one vehicle, mirrored entry by entry by the kernel's flows (checked against finite differences by the
tests).  The brake force's dependence on the cylinder state (LTD row v_j, brake column) is left out of
the pattern: the brake states do not depend on the vehicle motion, so the system is block triangular
and Newton converges without that block while the factorisation stays two narrow bands (see
docs/models.md).
"""
from __future__ import annotations

# ---- valve branches ------------------------------------------------------------------------------
K_UIC = 0     #: UIC distributor (control reservoir, quick service, graduated release)
K_AAR = 1     #: AAR control valve (service + emergency portions, direct release)
K_ECP = 2     #: ECP car control device (electric command; the pipe supplies the reservoir)
K_CUT = 3     #: brake cut out (isolating cock closed): the pipe passes through, no valve flows
#: valve states (beyond AR and BC) per branch
N_VALVE_STATES = {K_UIC: 2, K_AAR: 4, K_ECP: 0, K_CUT: 0}

# ---- scalars pn_s --------------------------------------------------------------------------------
(S_RT, S_PATM, S_AREA, S_DIAM, S_LAM, S_BLAS, S_FROUGH, S_FCONST, S_NC, S_CV, S_NX, S_NL, S_OBC, S_OIND,
 S_EOT_J, S_EOT_C, S_EOT_DELAY, S_SEP_J, S_SEP_T, S_SEP_TOPEN, S_SEP_C, S_ECP, S_ECP_DELAY, S_ACC_OFF, S_NLVL,
 S_DLVL, S_FRONT_THR, S_REL_END, S_VSTOP) = range(29)
N_S = 32
# S_LAM: laminar friction 64·A·μ/D [kg/s per kg/s]: f·G|G| = S_LAM·G below the transition;
# S_BLAS: Blasius 0.3164·(A·μ/D)^0.25: f·G|G| = S_BLAS·|G|^1.75 (smooth turbulent pipe);
# S_FROUGH: fully rough (or constant, S_FCONST = 1) Darcy factor; S_OBC, S_OIND: offsets of the cylinder
# and independent-brake states in the vehicle block (2 + local index)

# ---- per vehicle pn_v ----------------------------------------------------------------------------
(V_VC, V_RTVC, V_AL, V_ALF, V_KLF, V_LEAK, V_KIND, V_MASK, V_SLOT0, V_DBV, V_IND, V_X, V_FM, V_DELAY,
 V_RTVV) = range(15)
N_V = 16
# V_RTVC: R·T/V of a pipe cell; V_RTVV: of the valve's cell (its volume includes the vehicle's branch volume)

# ---- valve parameters pn_vp (conductances C in kg/(s·Pa): choked flow = C·p_up; pressures in Pa) ----
VP_CAR = 0      # auxiliary-reservoir charging
VP_CAPP = 1     # application AR -> BC
VP_CREL = 2     # release BC -> atmosphere
VP_BAND = 3     # proportional band of the relay/application portions [Pa]
VP_ECP_FS = 4   # ECP: full-service cylinder gauge pressure [Pa]
VP_ECP_EM = 5   # ECP: emergency cylinder gauge pressure [Pa]
VP_ECP_BP = 6   # ECP: brake-pipe gauge pressure below which the car applies emergency (backup) [Pa]
# UIC distributor
VP_U_CCR = 8    # control-reservoir charging (release position, both ways)
VP_U_CQI = 9    # quick-service chamber inlet (from the brake pipe)
VP_U_CQO = 10   # quick-service chamber vent
VP_U_RATIO = 11  # cylinder gauge pressure per brake-pipe reduction [-]
VP_U_PMAX = 12  # largest cylinder gauge pressure [Pa]
VP_U_DAPP = 13  # reduction at which the distributor leaves the release position [Pa]
VP_U_QSCUT = 14  # cylinder gauge pressure above which the quick service closes [Pa]
# AAR control valve
VP_A_CER = 8    # emergency-reservoir charging
VP_A_CQA = 9    # quick-action chamber <-> brake pipe (rate sensing choke)
VP_A_CVENT = 10  # emergency vent valve (brake pipe -> atmosphere)
VP_A_CQAV = 11  # quick-action chamber blow-down in emergency
VP_A_CERB = 12  # emergency reservoir -> cylinder in emergency
VP_A_CQS = 13   # quick service (brake pipe -> cylinder)
VP_A_DAPP = 14  # service sensitivity: AR − BP that moves the service piston to application [Pa]
VP_A_DREL = 15  # release sensitivity: BP − AR that moves it to release [Pa]
VP_A_DEM = 16   # emergency sensitivity: QAC − BP that fires the emergency portion [Pa]
VP_A_RESET = 17  # brake-pipe gauge pressure above which the emergency portion resets [Pa]
VP_A_VCLOSE = 18  # QAC gauge pressure below which the vent valve closes [Pa]
VP_A_QSLIM = 19  # quick-service limit: cylinder gauge pressure [Pa]
VP_A_RATE = 20  # service-piston rate [1/s]
VP_A_WLAP = 21  # lap band of the service portion [Pa]
VP_A_RATE_E = 22  # emergency-piston (latch) rate [1/s]
N_VP = 24

# ---- cylinder pn_cp ------------------------------------------------------------------------------
(CP_V0, CP_VF, CP_VC, CP_PS, CP_PC, CP_A2, CP_A3, CP_QS, CP_QC, CP_FK) = range(10)
N_CP = 12

# ---- driver's brake valve and independent brake pn_dp ---------------------------------------------
(DP_PFEED, DP_DFS, DP_RDN, DP_RUP, DP_REM, DP_TAU, DP_PMR, DP_CSUP, DP_CEXH, DP_CEM, DP_BAND, DP_IMAX,
 DP_ITAU) = range(13)
N_DP = 16

# ---- schedule pn_sched (aligned with LTDParams.sched_x) ------------------------------------------
SC_SERVICE, SC_EMERGENCY, SC_INDEPENDENT = range(3)

# ---- observer accumulator (offset pn_s[S_ACC_OFF]) -----------------------------------------------
(A_TAPP, A_TREL, A_TPREV, A_TSTOP, A_SAPP, A_SSTOP, A_BUFF, A_BUFF_K, A_BUFF_T, A_SPREV, A_STARTED, A_MOVING) = range(12)
N_A = 16
(B_PBPREV, B_PBREF, B_TFRONT, B_BCPREV, B_BCMAX, B_TRELEND, B_LVLNEXT) = range(7)
N_B = 7
#: cylinder pressure levels recorded per vehicle (their crossing times give the 95 % application time)
N_LEVELS = 64


def local_indices(nc: int, nx: int) -> dict:
    """Local indices of the brake block (see the module docstring)."""
    return dict(cell=lambda c: 2 * c, face=lambda c: 2 * c + 1, ar=2 * nc, bc=2 * nc + 1,
                x=lambda k: 2 * nc + 2 + k, eq=2 * nc + 2 + nx, ind=2 * nc + 3 + nx, acc=2 * nc + 4 + nx,
                nl=2 * nc + nx + 5)


def block_size(nc: int, nx: int) -> int:
    """States per vehicle B of a pneumatic LTD model (2 LTD states + the brake block)."""
    return 2 * nc + nx + 7


def reduced_pattern(nc: int, nx: int) -> list[tuple[int, int]]:
    """The entries the integrators use by default (``air_brake.pneumatic.jacobian: reduced``): the brake pipe
    (every cell's and face's row in full: the acoustic chain) and the diagonal of every other brake state.
    The valves' couplings to the pipe and to each other are left to the Newton iteration (they are slow
    against the pipe, or fast only inside themselves: their own diagonal), and so are the exchange states'
    rows: the factorisation is then one band of half-width 2 (the motion's), not 5-7; the air-mass balance
    closes to the Newton tolerance instead of to rounding (``jacobian: full`` closes it exactly)."""
    li = local_indices(nc, nx)
    nl = li["nl"]
    out: set[tuple[int, int]] = set()
    for c in range(nc):
        cell, face = li["cell"](c), li["face"](c)
        prev_face = li["face"](c - 1) if c > 0 else nl
        nxt = li["cell"](c + 1) if c < nc - 1 else nl + 1
        out.update({(cell, face), (cell, prev_face), (cell, cell), (face, cell), (face, nxt), (face, face)})
    for r in range(2 * nc, nl):
        if r != li["acc"]:
            out.add((r, r))
    return sorted(out)


def local_pattern(kind: int, nc: int, nx: int, cv: int, *, dbv: bool, ind: bool, eot: bool, sep_rear: bool,
                  sep_front: bool) -> list[tuple[int, int]]:
    """Structural entries (local row, local column) of one vehicle's brake rows, sorted.

    Columns ``nl`` and ``nl + 1`` are the neighbours' coupling states (see the module docstring).
    ``kind``: valve branch (``K_*``); ``dbv``: an active driver's brake valve; ``ind``: an independent
    brake; ``eot``: a two-way EOT vents this vehicle's last cell; ``sep_rear``/``sep_front``: the pipe
    parts at this vehicle's rear coupling / at the coupling ahead of it (the previous vehicle's
    separation) vent.  Each flow contributes (its source row, its destination row, the exchange row when
    it enters or leaves the system) × (the states it depends on), exactly as the kernel writes them.
    """
    li = local_indices(nc, nx)
    nl = li["nl"]
    acc = li["acc"]
    v = li["cell"](cv)
    ar, bc = li["ar"], li["bc"]
    x = li["x"]
    out: set[tuple[int, int]] = set()

    def flow(rows, deps):
        for r in rows:
            for c in deps:
                out.add((r, c))

    for c in range(nc):
        cell, face = li["cell"](c), li["face"](c)
        prev_face = li["face"](c - 1) if c > 0 else nl
        out.update({(cell, face), (cell, prev_face), (cell, cell), (acc, cell)})   # fluxes, leakage
        nxt = li["cell"](c + 1) if c < nc - 1 else nl + 1
        out.update({(face, cell), (face, nxt), (face, face)})
    if kind == K_UIC:
        cr, qs = x(0), x(1)
        flow((v, ar), (v, ar))                                  # AR charging (check valve)
        flow((ar, bc), (ar, bc, cr, v))                         # application
        flow((bc, acc), (bc, cr, v))                            # release
        flow((v, cr), (v, cr))                                  # control reservoir (release position)
        flow((v, qs), (v, qs, cr, bc))                          # quick-service inlet
        flow((qs, acc), (qs,))                                  # quick-service vent
    elif kind == K_AAR:
        er, qa, s, e = x(0), x(1), x(2), x(3)
        flow((v, ar), (v, ar, s))                               # AR charging (release position)
        flow((ar, bc), (ar, bc, v, s))                          # service application
        flow((bc, acc), (bc, s))                                # exhaust (direct release)
        flow((v, er), (v, er, e))                               # ER charging
        flow((qa, v), (qa, v))                                  # quick-action chamber
        flow((v, acc), (v, qa, e))                              # emergency vent valve
        flow((qa, acc), (qa, e))                                # QAC blow-down
        flow((er, bc), (er, bc, e))                             # ER <-> cylinder in emergency
        flow((v, bc), (v, bc, s))                               # quick service
        flow((s,), (ar, v, s))                                  # service piston
        flow((e,), (qa, v, e))                                  # emergency latch
    elif kind == K_ECP:
        flow((v, ar), (v, ar))
        flow((ar, bc), (ar, bc, v))
        flow((bc, acc), (bc, v))
    elif kind == K_CUT:
        pass
    else:
        raise ValueError(f"unknown valve branch {kind}")
    if dbv:
        eq = li["eq"]
        out.add((eq, eq))
        flow((v, acc), (v, eq))                                 # relay supply / exhaust, emergency vent
    if ind:
        out.add((li["ind"], li["ind"]))
    last = li["cell"](nc - 1)
    if eot or sep_rear:
        flow((last, acc), (last,))
    if sep_front:
        flow((li["cell"](0), acc), (li["cell"](0),))
    return sorted(out)


def slot_maps(masks: list, nl: int):
    """Slot maps of the vehicles' structural patterns ``masks`` (one sorted entry list per vehicle, from
    :func:`local_pattern`): ``(smap int64[M, nl, nl + 2], mask_id int64[N], counts int64[N])``, M distinct
    patterns, ``smap[m, r, c]`` the entry's position among the vehicle's slots (−1: not in the pattern)."""
    import numpy as np

    ids: dict = {}
    mask_id = np.empty(len(masks), np.int64)
    for j, m in enumerate(masks):
        mask_id[j] = ids.setdefault(tuple(m), len(ids))
    smap = -np.ones((max(len(ids), 1), nl, nl + 2), np.int64)
    for m, i in ids.items():
        for k, (r, c) in enumerate(m):
            smap[i, r, c] = k
    return smap, mask_id, np.array([len(m) for m in masks], np.int64)


def brake_jacobian_pattern(p):
    """``(rows, cols)`` int64 of the brake rows' Jacobian entries of a pneumatic LTD model ``p`` in slot
    order (vehicle j's at ``pn_v[j, V_SLOT0]`` onwards, relative to vehicle 0's first slot); −1 for the
    neighbour columns of the head and tail vehicles, which do not exist."""
    import numpy as np

    N, B = p.n_veh, p.block
    nc, nl = int(p.pn_s[S_NC]), int(p.pn_s[S_NL])
    slot0 = p.pn_v[:, V_SLOT0].astype(np.int64)
    mask = p.pn_v[:, V_MASK].astype(np.int64)
    counts = (p.pn_smap >= 0).sum(axis=(1, 2))
    total = int(slot0[-1] - slot0[0] + counts[mask[-1]])
    rows = -np.ones(total, np.int64)
    cols = -np.ones(total, np.int64)
    for j in range(N):
        r_, c_ = np.nonzero(p.pn_smap[mask[j]] >= 0)
        k = slot0[j] - slot0[0] + p.pn_smap[mask[j]][r_, c_]
        gc = np.where(c_ < nl, B * j + 2 + c_, np.where(c_ == nl, B * (j - 1) + 2 * nc + 1, B * (j + 1) + 2))
        ok = (c_ < nl) | ((c_ == nl) & (j > 0)) | ((c_ == nl + 1) & (j < N - 1))
        rows[k] = np.where(ok, B * j + 2 + r_, -1)
        cols[k] = np.where(ok, gc, -1)
    return rows, cols
