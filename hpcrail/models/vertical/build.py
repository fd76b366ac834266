"""The numeric vertical model: runtime parameters (:class:`VerticalParams`), the Python-side model
(:class:`VerticalModel`), the observe accumulator layout, another track realisation
(:func:`with_profile`) and the index-1 DAE form.  The scenario → model translation (assembly, static
equilibrium, state-space matrices, track input) is :func:`hpcrail.kinds.vertical.build.build_vertical`.

Sources: Yu et al. 2023 eqs (1)-(19) (state-space form with massless damper nodes); track inputs from
:mod:`hpcrail.models.track.irregularity` with the per-wheel delays x_j/V.
"""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from hpcrail.models.track.irregularity import IrregularityProfile
from hpcrail.models.vertical import assembly as asmmod
from hpcrail.models.vertical.assembly import Assembly, StateSpace
from hpcrail.models.vertical.kernel import TRACK_GRID

KMH = 1.0 / 3.6


class VerticalParams(NamedTuple):
    """Runtime parameters of the vertical kernels (SI).  Changing values never recompiles."""

    m: int                      # mass dofs
    n: int                      # massless-node states (series-damper strokes)
    inv_mass: np.ndarray        # [m] 1/mass or 1/inertia
    el_kind: np.ndarray         # [E] int64 element kind
    el_k: np.ndarray            # [E] k, K_H, k_e, or n_w/G^1.5 (Hertz)
    el_c: np.ndarray            # [E] damping [N s/m]
    el_node: np.ndarray         # [E] int64 stroke index (−1)
    el_wheel: np.ndarray        # [E] int64 rail input index (−1)
    el_rsign: np.ndarray        # [E] ∂δ/∂u
    el_nt: np.ndarray           # [E] int64 number of dof terms
    el_dof: np.ndarray          # [E, 4] int64
    el_coef: np.ndarray         # [E, 4] ∂δ/∂q
    el_d0: np.ndarray           # [E] static δ [m]
    el_F0: np.ndarray           # [E] static compression force [N]
    fp_nt: np.ndarray           # [F] int64
    fp_dof: np.ndarray          # [F, 4] int64
    fp_coef: np.ndarray         # [F, 4]
    trk_kind: int
    speed: float                # V [m/s]
    s0: float                   # track position of the vehicle origin at t = 0 [m]
    wheel_x: np.ndarray         # [W] [m]
    h_amp: float
    h_omega_t: float            # [rad/s]
    h_omega_x: float            # [rad/m]
    h_phase: float
    h_xref: float               # x of the leading wheel [m]
    g_x0: float
    g_inv_dx: float
    g_z: np.ndarray             # [G] profile [m]
    g_dz: np.ndarray            # [G] slope [-]
    o_elmax: int                # accumulator offsets
    o_elmin: int
    o_wmax: int
    o_wmin: int
    scratch: np.ndarray         # [m + W] work space of vertical_observe (one per concurrent run)


@dataclasses.dataclass
class VerticalModel:
    """Python-side description of a built vertical model."""

    params: VerticalParams
    asm: Assembly
    gravity: float
    x_static: np.ndarray        #: float64[N] absolute static equilibrium X_s
    ss: StateSpace              #: state space linearised at X_s (exact for linear models)
    y0: np.ndarray              #: float64[N] initial dynamic state
    acc0: np.ndarray
    linear: bool
    profile: IrregularityProfile | None
    notes: list

    @property
    def n_state(self) -> int:
        return self.asm.n_state


def acc_layout(n_fp: int, n_el: int, n_w: int) -> tuple[int, int, int, int, int]:
    """Offsets (elmax, elmin, wmax, wmin, total) of the observe accumulator after F floor points."""
    o1 = n_fp
    o2 = o1 + n_el
    o3 = o2 + n_el
    o4 = o3 + n_w
    return o1, o2, o3, o4, o4 + n_w


def initial_accumulator(p: VerticalParams) -> np.ndarray:
    n_fp, n_el, n_w = p.fp_nt.size, p.el_kind.size, p.wheel_x.size
    *_, total = acc_layout(n_fp, n_el, n_w)
    acc = np.zeros(total)
    acc[p.o_elmax:p.o_elmax + n_el] = -np.inf
    acc[p.o_elmin:p.o_elmin + n_el] = np.inf
    acc[p.o_wmax:p.o_wmax + n_w] = -np.inf
    acc[p.o_wmin:p.o_wmin + n_w] = np.inf
    return acc


def terms_array(term_lists, width=asmmod.N_TERMS):
    k = len(term_lists)
    nt = np.zeros(k, np.int64)
    dof = np.zeros((k, width), np.int64)
    coef = np.zeros((k, width))
    for r, terms in enumerate(term_lists):
        nt[r] = len(terms)
        for c, (d, v) in enumerate(terms):
            dof[r, c], coef[r, c] = d, v
    return nt, dof, coef


def with_profile(model: VerticalModel, prof: IrregularityProfile) -> VerticalParams:
    """Parameters of ``model`` running over another synthesised profile (own scratch space, so that
    concurrent runs never share work arrays)."""
    p = model.params
    return p._replace(g_x0=float(prof.x0), g_inv_dx=1.0 / prof.dx,
                      g_z=np.ascontiguousarray(prof.values["vertical"]),
                      g_dz=np.ascontiguousarray(prof.slopes["vertical"]), trk_kind=TRACK_GRID,
                      scratch=np.zeros_like(p.scratch))


def dae_form(model: VerticalModel) -> tuple[np.ndarray, np.ndarray]:
    """Index-1 DAE form of the model for integrators that accept a singular diagonal mass matrix.

    Returns ``(mass_diagonal, y0)``: float64[2m + 2n] diag(masses, 1 (n), 1 (m), 0 (n)) and the
    consistent initial state [q̇, s, q, ṡ] (ṡ from the algebraic equations).  The right-hand side
    is :func:`hpcrail.models.vertical.kernel.vertical_dae_rhs`.
    """
    from hpcrail.models.vertical.kernel import vertical_rhs

    asm, p = model.asm, model.params
    m, n = asm.m, asm.n
    mass = np.concatenate([asm.mass, np.ones(n), np.ones(m), np.zeros(n)])
    f = np.zeros(asm.n_state)
    vertical_rhs(0.0, model.y0, p, f)
    y0 = np.concatenate([model.y0, f[m:m + n]])
    return mass, y0
