"""hpcrail — railway train dynamics at HPC scale.

One package per model kind (``hpcrail.kinds``: ltd, planar_train, vertical, railway_vehicle, mixed_train)
behind one descriptor; shared physics and numba kernels in ``hpcrail.models`` (ltd, couplers, planar_train,
vertical, track, vehicle, wheelrail, mixed); model-agnostic integrators in ``hpcrail.integrators`` (one kernel
per method, on one block or on blocks over threads and MPI ranks); hidden-vehicle blocks and the choice of
backend in ``hpcrail.partition``; generic results, sweeps, analysis and CLI read only the descriptors.  See
docs/architecture.md.  The Python API: ``hpcrail.load``, ``hpcrail.simulate``, ``hpcrail.sweep``,
``hpcrail.open_run``, ``hpcrail.open_sweep`` (:mod:`hpcrail.api`).  Importing the package does not import numba: every kernel module imports
:mod:`hpcrail._numba` (numba cache directory and threading set-up) before defining kernels.
"""

from hpcrail._version import __version__

#: the Python API (:mod:`hpcrail.api`), imported on first use so that ``import hpcrail`` stays light
_API = ("load", "simulate", "sweep", "open_run", "open_sweep", "examples_dir", "study_scenario", "rerun", "export")


def __getattr__(name):
    if name in _API:
        from hpcrail import api

        return getattr(api, name)
    raise AttributeError(f"module 'hpcrail' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_API))


__all__ = ["__version__", *_API]
