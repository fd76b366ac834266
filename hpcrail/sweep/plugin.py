"""The dask worker plugin of sweeps (imported only where distributed is: the driver of a dask sweep)."""
from __future__ import annotations

from distributed.diagnostics.plugin import WorkerPlugin


class ImportPlugin(WorkerPlugin):
    """A dask worker plugin importing, once at worker start, every module a sweep task uses (zarr, xarray,
    numba, the kinds): a first import racing between the worker's threads (a task thread and the thread
    deserialising its arguments) can see a partially initialised module (``cannot import name ... from
    partially initialized module 'zarr.core.array'``, issue 30)."""

    name = "hpcrail-imports"

    def setup(self, worker=None):
        import importlib

        for mod in ("zarr", "xarray", "numcodecs", "numba", "hpcrail.sweep.store", "hpcrail.simulate",
                    "hpcrail.integrators.batch", "hpcrail.results.dataset"):
            try:
                importlib.import_module(mod)
            except Exception:  # noqa: BLE001 - the task that needs it reports its own error
                pass
        from hpcrail import kinds

        for name in kinds.names():
            try:
                kinds.get(name)
            except Exception:  # noqa: BLE001
                pass


__all__ = ["ImportPlugin"]
