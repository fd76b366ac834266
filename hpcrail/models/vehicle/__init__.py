"""Multibody railway vehicle on track (Yu et al. 2022, paper 004): rigid bodies in track-frame coordinates,
embedded KEC/LUT wheel/rail contact constraints, Polach creep forces, suspension elements (springs, dampers
with a series stiffness, bumpstop tables) — the numba model of the ``railway_vehicle`` kind and of the
detailed vehicles of a mixed train.

Modules: :mod:`.build` (parameters, state layout, static preloads, initial state), :mod:`.kernel` (the
right-hand side, observer and per-sample outputs), :mod:`.track` (alignment table and irregularity splines).

Formulation
-----------
* **Coordinates** (paper 004 eqs 1-3): every body has a track frame at its arc length s_b = s + x_b
  (x_b its fixed longitudinal offset from the car-body centre); a car body or bogie frame has the relative
  coordinates (y, z, φ, θ, ψ) in that frame with small relative rotations (eq 9); a wheelset has only
  (y, ψ) and its spin ω.  The forward motion s is one degree of freedom, prescribed (v̇ = 0: the holonomic
  constant-speed constraint) or free (driven by axle torques, contact and external forces).  Frame
  (transport and Coriolis) accelerations of the moving track frame are applied as inertia terms, so the
  mass matrix is block-diagonal per body and the linear algebra stays per body (a 3 × 3 solve per wheelset).
* **Contact constraints: embedding (coordinate partitioning), no drift.**  The contact kernels give
  z = Z(y, p) and φ = Φ(y, p) of each wheelset as functions of its lateral shift y and the four rail
  irregularities p, with ∂(z, φ)/∂(y, p) and the convective terms, so z̈ = Z_y ÿ + Z_p p̈ + ṗᵀZ_pp ṗ.
  z and φ are not states: the position-level constraint holds exactly at every evaluation and nothing can
  drift (tested: the recorded ż integrates to z; the KEC Newton solve converges to 1e-13 m).  The normal
  forces are the reactions that enforce z̈, φ̈ together with ÿ (one 3 × 3 solve in (ÿ, N_left, N_right)):
  KEC (eqs 22-26) along the real contact normals of its tread and flange records, split at the regularised
  tread/flange transition; LUT (eqs 16-19) along the constraint gradient, plus the Hertzian flange penalty
  K_hertz δ^1.5 + D δ̇ δ (eqs 20-21) as an applied force.  Consequence (tested without creep forces): the
  LUT's reactions are ideal (T + m g z conserved to 1e-6); the KEC's are conservative but not with the
  potential m g z(y) (4.6 % of the oscillation energy on S1002/UIC60), because its normals come from the
  real profiles and z(y) from the knife-edge equivalent profile.
* **Pure right-hand side.**  Paper 004 uses the previous step's normal forces for the creep forces and
  warm-starts its Newton solves; here the right-hand side is a pure function of (t, y, params): the KEC
  solve starts cold (centred knife edges) on every call, and the normal forces and Polach creep forces are
  made consistent within the evaluation by a fixed point (normal forces → creep forces → accelerations and
  normal forces; relative tolerance ``fp_tol`` = 1e-10: 7 iterations on average, at most 11-14, on the
  Manchester runs), so adaptive and implicit integrators, batches and workers see the same function.
* **Suspension** (eqs 27-31): each element joins a point of two bodies (or of a body and the track) along
  an axis of the master body's track frame; laws: linear spring + damper, damper with a series stiffness
  (the damper stroke is a first-order state: a massless node, as the vertical kind's, Yu et al. 2023
  eq 16), a bumpstop table (PCHIP); shear stiffnesses are translational springs (axes x, y), bending
  stiffnesses rotational ones (axes rx, ry, rz).  Static preloads
  put the vehicle in equilibrium on a perfect tangent track at rest.

Mixed-train interface
---------------------
:func:`.kernel.vehicle_eval` ``(t, y, off, P, f_ext, dydt, work, diag)`` evaluates one vehicle on the slice
``y[off:off + P.n_state]`` of a larger state vector and writes only that slice of ``dydt``: a long LTD
consist can embed detailed vehicles and integrate everything with one integrator.  ``f_ext`` (float64[k])
carries the coupler forces — (F_x, F_y, F_z) at the front and at the rear coupler point of the car body in
its track frame [N] (k >= 6) — then one applied axle torque per wheelset [N m] (k >= 6 + n_ws), then a
longitudinal force at the car body's centre of gravity [N] (k >= 7 + n_ws: running resistance, grade); k = 0
means none.  With ``longitudinal: free`` the car body's forward motion (and the bogies and wheelsets
following it) is a free degree of freedom driven by these forces; the return value is the vehicle's total
longitudinal force along its reference track frame (with a prescribed speed: the constraint force).
``work`` is a per-call scratch array (float64[P.n_work]); ``diag`` (float64[0] in the integrator) receives
the per-sample outputs.  The EN 14363 post-processing is :mod:`hpcrail.results.running_safety`.
"""
