"""Sweeps: thousands of scenario variations on dask, one resumable zarr store per study.

``spec`` (YAML spec → deterministic scenarios and ids), ``store`` (the study's zarr layout: the run
schema stacked along ``scenario``), ``worker`` (a task: run a batch, write its chunks, mark it
done), ``runner`` (the driver: resume, bounded submission, progress), ``cluster`` (where tasks run).

Called, the package is the Python API's ``hpcrail.sweep(spec, store, ...)`` (:func:`hpcrail.api.sweep`:
run or resume, then open the store); the package attribute ``hpcrail.sweep`` is this package once it is
imported, so the call is forwarded.
"""
import importlib
import sys
import types

from hpcrail.sweep.spec import Expansion, SweepSpec, expand, load_spec


class _CallableModule(types.ModuleType):
    def __call__(self, spec, store=None, /, **kw):
        """``hpcrail.sweep(spec, store=None, **options)``: see :func:`hpcrail.api.sweep`."""
        # the API sits above this package (it opens the store with hpcrail.analysis): resolved at call time
        return importlib.import_module("hpcrail.api").sweep(spec, store, **kw)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["Expansion", "SweepSpec", "expand", "load_spec"]
