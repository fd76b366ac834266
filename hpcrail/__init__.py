"""hpcrail — railway train dynamics at HPC scale.

Layers (data flows down): ``config`` (typed scenario specs) → ``models`` (spec → arrays, numba kernels)
→ ``integrators`` (numba steppers, model-agnostic) → ``results`` (xarray datasets, metrics, zarr) →
``simulate``/``cli`` (glue).  See docs/architecture.md.
"""
from hpcrail import _numba  # noqa: F401  (sets the numba cache directory before any kernel is compiled)

__version__ = "0.1.0"

__all__ = ["__version__"]
