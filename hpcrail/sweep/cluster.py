"""Where sweep tasks run: an embedded dask ``LocalCluster`` or an existing scheduler.

All cluster creation goes through :func:`make_client` so that further back ends (``slurm`` with
dask-jobqueue) are one more branch here, and ``hpcrail sweep`` stays the single entry point.
"""
from __future__ import annotations

import contextlib
import logging
import os

CLUSTERS = ("local",)


def default_workers(threads: int = 1) -> int:
    """Worker processes of the embedded cluster: one per core / ``threads`` (numba threads per task)."""
    return max(1, (os.cpu_count() or 1) // max(1, threads))


def make_client(*, scheduler: str | None = None, scheduler_file: str | None = None, cluster: str = "local",
                workers: int | None = None, threads: int = 1, dashboard_address: str | None = ":8787",
                memory_limit: str | float | None = "auto") -> tuple:
    """Return ``(client, close)``.

    ``scheduler`` (address) or ``scheduler_file`` joins an existing cluster (``close`` then only
    disconnects); otherwise an embedded ``LocalCluster`` of ``workers`` single-threaded worker
    processes (default: all cores) is started with its dashboard at ``dashboard_address``
    (``":0"`` = any free port).  Raises ``ValueError`` for an unknown ``cluster`` kind or both
    ``scheduler`` and ``scheduler_file``.
    """
    from distributed import Client, LocalCluster

    if scheduler and scheduler_file:
        raise ValueError("give either --scheduler or --scheduler-file, not both")
    if scheduler or scheduler_file:
        client = Client(address=scheduler, scheduler_file=scheduler_file)
        return client, client.close
    if cluster not in CLUSTERS:
        raise ValueError(f"unknown cluster {cluster!r}; allowed: {', '.join(CLUSTERS)}")
    n = workers or default_workers(threads)
    lc = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=dashboard_address,
                      memory_limit=memory_limit, silence_logs=logging.ERROR)
    client = Client(lc)

    def close():
        with contextlib.suppress(Exception):
            client.close()
        with contextlib.suppress(Exception):
            lc.close()

    return client, close


def total_threads(client) -> int:
    """Worker threads currently in the cluster (at least 1)."""
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # noqa: BLE001
        return 1


__all__ = ["make_client", "default_workers", "total_threads", "CLUSTERS"]
