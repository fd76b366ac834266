"""Pneumatic (fluid-dynamic) freight-train brake: brake pipe as 1-D compressible flow, control valves,
reservoirs and cylinders, driver's brake valves, EOT and ECP (issue 24).

``layout`` — parameter and state layout, the structural Jacobian pattern (no numba);
``kernel`` — numba right-hand side, analytic Jacobian, observer and outputs of the brake states.
The scenario → parameters translation is :mod:`hpcrail.kinds.ltd.brake_build`.
"""
