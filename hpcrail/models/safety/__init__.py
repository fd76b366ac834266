"""Running safety of every vehicle of a consist from its in-train forces: the quasi-static lateral/vertical wheel
force model (:mod:`.quasi_static`: coupler angles from the route geometry, bogie lateral forces, steady-state
curving of each bogie, wheel unloading, Y/Q per wheel and truck side, ΣY against Prud'homme, jack-knife and
stringline flags).  Plain numpy/scipy (no numba): it post-processes sampled in-train forces.  The model kind
that declares its outputs is :mod:`hpcrail.kinds.ltd` (:mod:`hpcrail.kinds.ltd.safety`)."""
