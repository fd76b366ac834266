"""Dry-friction draft gears (Oprea 2018, Oprea 2018): friction laws, static friction forces of sticking
connections by Gauss's principle / the generalised inverse, and the stick/slip mode selection of §4.1.

Conventions (hpcrail, MODELS.md): connection k (0-based here) joins vehicles k and k+1; its extension
e_k and extension rate ė_k = v_k − v_{k+1} are + in draft; its force F_k (+ draft) acts −F_k on
vehicle k and +F_k on vehicle k+1.  The friction force T_k is the dry-friction part of F_k; sliding
friction resists the extension rate, T_k = T_kin(|ė_k|)·sign(ė_k), so the power T_k·ė_k ≥ 0 is
absorbed by the gear.  Oprea 2018 writes M ẍ − W C Wᵀx − f − W T = 0 with W = +1 on the diagonal and
−1 below, i.e. its T is the opposite sign of hpcrail's; every formula below is in hpcrail's sign.

Modes of a friction connection (``MODE_*``):

* ``MODE_OFF``  no friction force: inside the slack (the gear is not engaged) or not a friction
  connection;
* ``MODE_STICK`` the relative acceleration is zero (Karnopp: |ė| < η, ë = 0) and T is the static
  force that achieves it, |T| ≤ T_sMax;
* ``MODE_SLIP_POS`` / ``MODE_SLIP_NEG`` sliding in + / − direction, selected outside the Karnopp
  band: T = ±T_kin(|ė|);
* ``MODE_BREAK_POS`` / ``MODE_BREAK_NEG`` break-away: sliding selected *inside* the band because the
  static force would exceed T_sMax; T = ±T_sMax while |ė| < η (Oprea 2018 §4.1 "T_k(s) =
  −T_sMax sign(ΣF)") and ±T_kin(|ė|) once outside it.

Static friction forces (Oprea 2018 §4, eqs 15-20, and §4.1): with the sliding columns removed from
W (W̃) and the known forces h̃ (everything but the static friction), Gauss's principle gives
T_s = (W̃ᵀM⁻¹W̃)⁺ W̃ᵀM⁻¹h̃ (hpcrail sign; paper: −(…)⁺…).  For a train, W is bidiagonal: the
sticking connections form runs that join consecutive vehicles into rigid sub-trains ("clusters")
and W̃ᵀM⁻¹W̃ is block-tridiagonal with one non-singular block per cluster.  Its generalised inverse
applied to W̃ᵀM⁻¹h̃ is then the explicit O(N) solution of :func:`rigid_clusters` (every member
moves with the cluster's acceleration ΣM a/ΣM; the force in a sticking connection is the momentum
rate of the vehicles ahead of it minus their share).  :func:`static_friction_gi` is the literal
dense formula (reference for the tests, O(N³)).

The mode selection of §4.1 (provisional stick set from the Karnopp band, static forces, release of
the connections whose |T_s| exceeds T_sMax, repeat) is :func:`select_contacts`.  Releasing *all*
violators at once, as §4.1 literally does, can release a connection that would stick once its
neighbour slides (the Table 1 case at t = 0 releases connections 1 and 2, but 2 then decelerates
against its friction); hpcrail therefore also returns a released connection to the stick set when
its relative acceleration opposes its sliding direction and iterates until the whole set is
consistent.  The consistent set is unique: it is the solution of the box-constrained LCP
ë = ë₀ − A T, |T| ≤ T_sMax with A = WᵀM⁻¹W symmetric positive definite (equivalently the
minimum of Gauss's acceleration energy Σ m a² over the admissible friction forces).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from hpcrail._numba import JIT

MODE_OFF = 0
MODE_STICK = 1
MODE_SLIP_POS = 2
MODE_SLIP_NEG = -2
MODE_BREAK_POS = 3
MODE_BREAK_NEG = -3

LAW_COULOMB = 0
LAW_STRIBECK = 1

REG_LINEAR = 0
REG_TANH = 1

#: select_contacts return value when the active-set iteration did not converge
SELECT_FAILED = -1


@njit(inline="always", **JIT)
def kinetic_friction(speed, ts, tc, law, inv_vs, delta):
    """Magnitude [N] of the sliding friction force at relative speed ``speed`` = |ė| [m/s].

    Coulomb (``law`` 0): T_kin = T_c (Oprea 2018 uses T_c = T_sMax).  Stribeck (``law`` 1):
    T_kin = T_c + (T_sMax − T_c)·exp(−(|ė|/v_s)^δ) (``inv_vs`` = 1/v_s), the velocity-dependent
    law family of Oprea 2018 §2.1 (Oprea et al. 2013).
    """
    if law == LAW_STRIBECK:
        return tc + (ts - tc) * math.exp(-((speed * inv_vs) ** delta))
    return tc


@njit(inline="always", **JIT)
def engagement(e, gap_d, gap_b, inv_ramp):
    """Engagement of a friction gear with slack: returns ``(x, r)``.

    ``x`` [m] is the deflection beyond the slack (0 inside it; ``gap_d``/``gap_b`` are the free
    slack on the draft/buff side), ``r`` ∈ [0, 1] the engagement factor that multiplies the friction
    limit: r = min(1, x/x_ramp) with ``inv_ramp`` = 1/x_ramp — the same 1 mm ramp the LTD law uses
    for the damper — and r = 1 everywhere when the connection has no slack (``inv_ramp`` = 0).
    """
    if inv_ramp == 0.0:
        return abs(e), 1.0
    if e >= 0.0:
        x = e - gap_d
    else:
        x = -e - gap_b
    if x <= 0.0:
        return 0.0, 0.0
    r = x * inv_ramp
    if r > 1.0:
        r = 1.0
    return x, r


@njit(inline="always", **JIT)
def regularised_friction(de, r, ts, tc, law, inv_vs, delta, reg_law, inv_w):
    """Smooth (regularised) friction force [N] (+ draft) at extension rate ``de`` [m/s].

    T = r · T_kin(|ė|) · s(ė/w) with s = tanh (``reg_law`` 1) or the linear-in-band saturation
    clamp(ė/w, −1, 1) (``reg_law`` 0), ``inv_w`` = 1/w.  This is the "physical model using smoothened
    laws" that Oprea 2018 (§1, §3.1) compares against: continuous, but stiff for small w (the slope
    T/w acts as a damper of rate T/(w·m) on a vehicle of mass m).
    """
    u = de * inv_w
    if reg_law == REG_TANH:
        s = math.tanh(u)
    else:
        s = u
        if s > 1.0:
            s = 1.0
        elif s < -1.0:
            s = -1.0
    return r * kinetic_friction(abs(de), ts, tc, law, inv_vs, delta) * s


@njit(**JIT)
def rigid_clusters(mode, m, a, T):
    """Static friction forces of the sticking connections and the rigid motion of their clusters.

    ``mode[M]`` (connection modes, ``MODE_STICK`` = sticking), ``m[N]`` vehicle masses [kg],
    ``a[N]`` in/out: accelerations [m/s²] under every known force (h_j/m_j); on return every vehicle
    of a cluster (a maximal run of sticking connections) has the cluster's acceleration
    Σm a/Σm.  ``T[M]`` receives the static friction force [N] (+ draft) of each sticking connection:
    T_k = Σ_{j≤k} m_j a_j − a_c Σ_{j≤k} m_j over the cluster's vehicles ahead of connection k.  This is
    the generalised-inverse solution T_s = (W̃ᵀM⁻¹W̃)⁺W̃ᵀM⁻¹h̃ of Oprea 2018 eq (16) (b = 0) for a
    bidiagonal W, in O(N).
    """
    M = mode.size
    k = 0
    while k < M:
        if mode[k] != MODE_STICK:
            k += 1
            continue
        p = k
        q = k
        while q < M and mode[q] == MODE_STICK:
            q += 1
        # connections p..q-1 stick: vehicles p..q form one rigid cluster
        sm = 0.0
        sh = 0.0
        for j in range(p, q + 1):
            sm += m[j]
            sh += m[j] * a[j]
        ac = sh / sm
        ch = 0.0
        cm = 0.0
        for j in range(p, q):
            ch += m[j] * a[j]
            cm += m[j]
            T[j] = ch - ac * cm
        for j in range(p, q + 1):
            a[j] = ac
        k = q


@njit(**JIT)
def select_contacts(cand, mode, lim, m, a0, a, T, tol_force, tol_acc, max_iter):
    """Consistent stick/slip modes of the connections inside the Karnopp band (Oprea 2018 §4.1).

    Parameters
    ----------
    cand : int64[M], 1 for the candidates (friction connections engaged and inside the band |ė| < η).
    mode : int64[M], in/out.  On entry the initial guess for the candidates (``MODE_STICK``,
        ``MODE_BREAK_POS``/``NEG``: the paper's provisional assignment is "all stick"); non-candidate
        entries are not read.  On return the consistent modes of the candidates.
    lim : float64[M], static limits T_sMax [N] (> 0; 0 makes a candidate slide with zero force).
    m : float64[N] masses [kg]; a0 : float64[N] accelerations under all forces except the candidates'
        friction [m/s²].
    a : float64[N], T : float64[M] (out): accelerations and friction forces of the consistent set.
    tol_force, tol_acc : relative force tolerance (|T| ≤ lim·(1 + tol_force)) and the absolute
        relative-acceleration tolerance [m/s²] of a sliding connection's direction check.
    max_iter : iteration limit.

    Returns the number of iterations, or ``SELECT_FAILED`` if ``max_iter`` was reached.

    Algorithm: the §4.1 loop — static forces of the stick set by :func:`rigid_clusters`, release of
    every connection with |T_s| > T_sMax with T = T_sMax·sign(T_s) — extended with the converse
    check (a sliding candidate whose relative acceleration opposes its direction returns to the
    stick set).  While the number of violations decreases, all are switched at once (block
    pivoting, as the paper); otherwise only the first one (Murty's least-index rule, finite for
    the P-matrix A = WᵀM⁻¹W), which guarantees termination.
    """
    M = cand.size
    N = M + 1
    best = M + 1
    stall = 0
    for it in range(max_iter):
        for j in range(N):
            a[j] = a0[j]
        for k in range(M):
            if cand[k] == 0:
                continue
            if mode[k] != MODE_STICK:
                tk = lim[k] if mode[k] > 0 else -lim[k]
                T[k] = tk
                a[k] -= tk / m[k]
                a[k + 1] += tk / m[k + 1]
        # the stick set of the candidates only: non-candidates never stick here
        k = 0
        while k < M:
            if cand[k] == 0 or mode[k] != MODE_STICK:
                k += 1
                continue
            p = k
            q = k
            while q < M and cand[q] != 0 and mode[q] == MODE_STICK:
                q += 1
            sm = 0.0
            sh = 0.0
            for j in range(p, q + 1):
                sm += m[j]
                sh += m[j] * a[j]
            ac = sh / sm
            ch = 0.0
            cm = 0.0
            for j in range(p, q):
                ch += m[j] * a[j]
                cm += m[j]
                T[j] = ch - ac * cm
            for j in range(p, q + 1):
                a[j] = ac
            k = q
        nbad = 0
        first = -1
        for k in range(M):
            if cand[k] == 0:
                continue
            bad = False
            if mode[k] == MODE_STICK:
                bad = abs(T[k]) > lim[k] * (1.0 + tol_force)
            else:
                d = 1.0 if mode[k] > 0 else -1.0
                bad = d * (a[k] - a[k + 1]) < -tol_acc
            if bad:
                nbad += 1
                if first < 0:
                    first = k
        if nbad == 0:
            return it + 1
        if nbad < best:
            best = nbad
            stall = 0
        else:
            stall += 1
        block = stall < 3
        for k in range(M):
            if cand[k] == 0:
                continue
            if not block and k != first:
                continue
            if mode[k] == MODE_STICK:
                if abs(T[k]) > lim[k] * (1.0 + tol_force):
                    mode[k] = MODE_BREAK_POS if T[k] > 0.0 else MODE_BREAK_NEG
            else:
                d = 1.0 if mode[k] > 0 else -1.0
                if d * (a[k] - a[k + 1]) < -tol_acc:
                    mode[k] = MODE_STICK
    return SELECT_FAILED


# ------------------------------------------------------------------------------------------------
# dense reference formulas (numpy): the literal generalised inverse of Oprea 2018 and the LCP view
# ------------------------------------------------------------------------------------------------
def constraint_matrix(n_vehicles: int) -> np.ndarray:
    """Oprea 2018 eq (3): W (float64[N, N−1]) with +1 on the diagonal and −1 below it; ξ = Wᵀx are the
    connection deflections x_k − x_{k+1} (hpcrail's extensions up to the free length)."""
    W = np.zeros((n_vehicles, n_vehicles - 1))
    i = np.arange(n_vehicles - 1)
    W[i, i] = 1.0
    W[i + 1, i] = -1.0
    return W


def static_friction_gi(mass: np.ndarray, h: np.ndarray, stick: np.ndarray) -> np.ndarray:
    """Static friction forces by the generalised inverse, Oprea 2018 eqs (16)/(20) with b = 0.

    Parameters
    ----------
    mass : float64[N] vehicle masses [kg].
    h : float64[N] known forces [N] on each vehicle: every force except the static friction of the
        sticking connections (sliding friction included, Oprea 2018 §4.1 "h̃ = h + W T_k").
    stick : bool[N−1], the sticking connections (the columns kept in W̃).

    Returns float64[N−1]: T_s (+ draft, hpcrail sign) at the sticking connections, 0 elsewhere.
    T_s = (W̃ᵀM⁻¹W̃)⁺ W̃ᵀM⁻¹h̃ — the paper's −(W̃ᵀM⁻¹W̃)⁺W̃ᵀM⁻¹h̃ with its opposite sign of T.
    Dense and O(N³): a reference for :func:`rigid_clusters`.
    """
    mass = np.asarray(mass, float)
    h = np.asarray(h, float)
    stick = np.asarray(stick, bool)
    W = constraint_matrix(mass.size)[:, stick]
    Minv = np.diag(1.0 / mass)
    T = np.zeros(mass.size - 1)
    if W.shape[1]:
        T[stick] = np.linalg.pinv(W.T @ Minv @ W) @ (W.T @ Minv @ h)
    return T


def delassus(mass: np.ndarray) -> np.ndarray:
    """A = WᵀM⁻¹W (float64[N−1, N−1]), the relative-acceleration response of the connections to
    their friction forces: ë = ë₀ − A T (hpcrail sign).  Symmetric positive definite, tridiagonal."""
    W = constraint_matrix(np.asarray(mass).size)
    return W.T @ np.diag(1.0 / np.asarray(mass, float)) @ W
