"""numba set-up shared by every kernel module.

numba's on-disk cache only checks the timestamp of the file that holds the cached function, not of
the kernels it calls from other files.  To make stale caches impossible we point numba at a cache
directory keyed by a hash of the whole hpcrail source tree and the numba version, unless the user
set ``NUMBA_CACHE_DIR`` explicitly.  Import this module before any module defining kernels
(``hpcrail/__init__.py`` does).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba

_PKG = Path(__file__).resolve().parent


def source_hash() -> str:
    """Hash of every ``*.py`` file of the installed hpcrail package plus the numba version (hex, 16 chars)."""
    h = hashlib.sha256(numba.__version__.encode())
    for p in sorted(_PKG.rglob("*.py")):
        h.update(str(p.relative_to(_PKG)).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _configure_cache() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hpcrail" / "numba"
    d = base / source_hash()
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:  # read-only home: fall back to numba's default (next to the sources)
        return
    numba.config.CACHE_DIR = str(d)
    os.environ["NUMBA_CACHE_DIR"] = str(d)  # inherited by dask workers and MPI ranks started from here


_configure_cache()

#: keyword arguments every hpcrail kernel is compiled with
JIT = dict(cache=True, nogil=True, fastmath=False, error_model="numpy", boundscheck=False)

#: for hot kernels that never allocate: no reference counting (PERFORMANCE_NOTES: 35-50x on array helpers)
JIT_NRT_FREE = dict(JIT, _nrt=False)
