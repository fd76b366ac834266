"""hpcrail — railway train dynamics at HPC scale.

One package per model kind (``hpcrail.kinds``: LTD, planar train, vertical vehicle) behind one
descriptor; shared physics and numba kernels in ``hpcrail.models``; model-agnostic integrators in
``hpcrail.integrators``; generic results, sweeps, analysis and CLI read only the descriptors.  See
docs/architecture.md.  Importing the package does not import numba: every kernel module imports
:mod:`hpcrail._numba` (numba cache directory and threading set-up) before defining kernels.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
