"""Connection force laws as numba kernels: hysteretic draft gears with slack (paper 000 eq 7),
rigid bars and linear spring-dampers (the same law with degenerate tables).

The law of connection k with extension e (+ draft, relative to its free length) and extension rate
ė = v_k − v_{k+1}:

* inside the slack (−g_b ≤ e ≤ g_d) the force is zero;
* beyond it, with x = e − g_d (draft) or x = −e − g_b (buff) the deflection beyond the slack,
  F = ± F_M(x) + F_A(x) · sat(ė / v_ε) + c·ė·min(1, x/x_c)
  with F_M = (F_L + F_U)/2, F_A = (F_L − F_U)/2 of that side (+ draft, − buff).  This is eq (7)
  written once: for |ė| ≥ v_ε it gives the loading curve when the gear is being compressed further
  (Δx·Δv ≥ 0) and the unloading curve otherwise, and the linear blend F_M + |F_A| ė/v_ε in between;
  it is continuous in e and ė.
* beyond the last table point the gear is solid: F_M continues with the end-stop stiffness,
  F_A keeps its last value.
"""
from __future__ import annotations

from numba import njit

from hpcrail._numba import JIT


@njit(inline="always", **JIT)
def connection_force(e, de, ct, gap, dx, inv_dx, npts, fm, fa, kend, inv_veps, cdamp, inv_xc):
    """In-train force [N] (+ draft) of one connection of type ``ct``.

    Parameters: extension ``e`` [m], rate ``de`` [m/s]; per-type arrays as in
    :class:`hpcrail.models.ltd.build.LTDParams` (``gap[C,2]``, ``dx[C,2]`` and its reciprocal,
    ``npts[C,2]``, ``fm/fa[C,2,P]``, ``kend[C]``, ``inv_veps[C]`` = 1/v_ε, ``cdamp[C]``, ``inv_xc[C]`` = 1/ramp length).
    Source: paper 000 eq (7).
    """
    # branch-free side selection: every table starts at zero force, so x clamped at 0 inside the
    # slack gives exactly zero force without a (mispredicted) branch
    draft = e >= 0.0
    side = 0 if draft else 1
    sgn = 1.0 if draft else -1.0
    x = sgn * e - gap[ct, side]
    if x < 0.0:
        x = 0.0
    n = npts[ct, side]
    u = x * inv_dx[ct, side]
    i = int(u)
    if i >= n - 1:
        xm = (n - 1) * dx[ct, side]
        fmv = fm[ct, side, n - 1] + kend[ct] * (x - xm)
        fav = fa[ct, side, n - 1]
    else:
        w = u - i
        fmv = fm[ct, side, i] * (1.0 - w) + fm[ct, side, i + 1] * w
        fav = fa[ct, side, i] * (1.0 - w) + fa[ct, side, i + 1] * w
    s = de * inv_veps[ct]
    if s > 1.0:
        s = 1.0
    elif s < -1.0:
        s = -1.0
    # viscous damping while engaged, ramped in over xc beyond the slack (continuous force)
    r = x * inv_xc[ct]
    if r > 1.0:
        r = 1.0
    return sgn * fmv + fav * s + cdamp[ct] * de * r
