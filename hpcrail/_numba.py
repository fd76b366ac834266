"""numba set-up shared by every kernel module.

numba's on-disk cache only checks the timestamp of the file that holds the cached function, not of
the kernels it calls from other files.  To make stale caches impossible we point numba at a cache
directory keyed by a hash of the whole hpcrail source tree and the numba version, unless the user
set ``NUMBA_CACHE_DIR`` explicitly.  Import this module before any module defining kernels
(``hpcrail/__init__.py`` does).
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import threading
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


def _tolerant_cache_index() -> None:
    """Treat a cache index that cannot be unpickled as a cache miss instead of an error.

    numba keeps one index per cached function listing every compiled signature, pickled with their
    types.  An integrator compiled for a model whose parameter type lives in a module another process
    cannot import (a user's script, a test module) would otherwise make every later load of that
    index raise ``ModuleNotFoundError``.  hpcrail also gives each (integrator, model type) pair its own
    index (``integrators.driver``), so this fallback only triggers for shared helpers.
    """
    from numba.core import caching

    original = caching.IndexDataCacheFile._load_index
    if getattr(original, "_hpcrail_tolerant", False):
        return

    def _load_index(self):
        try:
            return original(self)
        except (ImportError, AttributeError, EOFError, ValueError, TypeError) as exc:  # unpicklable entry
            caching._cache_log("[cache] unreadable index %r (%s): treated as empty", self._index_path, exc)
            return {}

    _load_index._hpcrail_tolerant = True
    caching.IndexDataCacheFile._load_index = _load_index


def _configure_threads() -> None:
    """OpenMP threads of numba's parallel regions sleep as soon as they are idle (``OMP_WAIT_POLICY=
    PASSIVE``) unless the user chose a policy.  GNU OpenMP's default spins first; on a shared or
    oversubscribed machine the spinning thread steals the core of the thread it waits for and every
    region of the partitioned right-hand side took milliseconds (train of 10 000 vehicles, 2 threads,
    load 5 on 2 cores: 5-6 s instead of 0.38 s; benchmarks/partition.py).  Dedicated HPC nodes may
    prefer ``OMP_WAIT_POLICY=ACTIVE`` (lower wake-up latency).  Must be set before the first region."""
    if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
        os.environ["OMP_WAIT_POLICY"] = "PASSIVE"


_configure_cache()
_configure_threads()
_tolerant_cache_index()

def cache_dir() -> str:
    """numba's cache directory of this hpcrail source (``~/.cache/hpcrail/numba/<hash>``)."""
    return str(numba.config.CACHE_DIR or os.environ.get("NUMBA_CACHE_DIR", ""))


#: seconds between the "still compiling" lines of a :class:`compile_notice`
TICK_S = 10.0
_NOTICES: list = []          # the compile notices in force (innermost last)


class compile_notice:
    """Context manager that says when numba compiles and for how long: ``say(text)`` once when a kernel
    starts compiling (a cold start: the first run after installing or changing hpcrail; never on a run that
    loads every kernel from the disk cache), then ``say("… still compiling: 40 s so far")`` every ``tick_s``
    seconds while compilation goes on (on a loaded machine a first run can compile for minutes), and a last
    line with the total when the block ends.  Compilation is seen through numba's event API
    (``numba:compile``, this process) and :func:`compiling_elsewhere` (a helper process compiling for this
    run, e.g. the integrator of a first run: :mod:`hpcrail.integrators.driver`).

    ``seconds``: wall time during which compilation was in progress (0.0 when nothing compiled)."""

    def __init__(self, say, text: str | None = None, tick_s: float | None = None):
        self.say = say
        self.text = text or (f"compiling numba kernels (first run after installing or changing hpcrail; cached in "
                             f"{cache_dir()}, later runs load them; `hpcrail warmup --all` compiles ahead)")
        self.tick_s = TICK_S if tick_s is None else float(tick_s)
        self.fired = False
        self.seconds = 0.0
        self._listener = None
        self._depth = 0
        self._since = 0.0          # start of the current compiling stretch
        self._first = 0.0          # when the notice fired
        self._lock = None
        self._stop = None
        self._ticker = None

    # -- compiling stretches (numba events in this process, helpers elsewhere) -------------------
    def _begin(self) -> None:
        import time

        with self._lock:
            self._depth += 1
            if self._depth > 1:
                return
            self._since = time.perf_counter()
            first = not self.fired
            self.fired = True
            if first:
                self._first = self._since
        if first:
            self.say(self.text)
            if self.tick_s > 0:
                self._start_ticker()

    def _end(self) -> None:
        import time

        with self._lock:
            self._depth = max(0, self._depth - 1)
            if self._depth == 0:
                self.seconds += time.perf_counter() - self._since

    def compiling(self) -> bool:
        """True while a kernel compiles (here or in a helper process)."""
        return self._depth > 0

    def _start_ticker(self) -> None:
        import threading
        import time

        def tick():
            while not self._stop.wait(self.tick_s):
                if self.compiling():
                    self.say(f"… still compiling: {time.perf_counter() - self._first:.0f} s so far")

        self._ticker = threading.Thread(target=tick, name="hpcrail-compile-notice", daemon=True)
        self._ticker.start()

    def __enter__(self):
        import threading

        from numba.core import event

        notice = self
        self._lock = threading.Lock()
        self._stop = threading.Event()

        class _Listener(event.Listener):
            def on_start(self, ev):
                notice._begin()

            def on_end(self, ev):
                notice._end()

        self._listener = _Listener()
        event.register("numba:compile", self._listener)
        _NOTICES.append(self)
        return self

    def __exit__(self, *exc):
        from numba.core import event

        event.unregister("numba:compile", self._listener)
        if self in _NOTICES:
            _NOTICES.remove(self)
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=1.0)
        if self._depth:          # left while compiling (an error): close the stretch
            self._depth = 1
            self._end()
        if self.fired and exc[0] is None:
            self.say(f"compiled numba kernels for {self.seconds:.0f} s (cached: later runs load them)")
        return False


class compiling_elsewhere:
    """Context manager marking a stretch during which another process compiles for this one (the compile
    helper of a first run): every :class:`compile_notice` in force says so and counts its time."""

    def __enter__(self):
        self._notices = list(_NOTICES)
        for n in self._notices:
            n._begin()
        return self

    def __exit__(self, *exc):
        for n in self._notices:
            n._end()
        return False


#: one thread of the process at a time runs its set-up linear algebra on one BLAS thread
_ONE_BLAS_LOCK = threading.RLock()


@contextlib.contextmanager
def one_blas_thread():
    """Context manager running BLAS/LAPACK (numpy, scipy) on one thread.

    Dense linear algebra on the small matrices of a model's set-up (a 26×26 matrix exponential, LU of
    an iteration matrix, a static equilibrium) can give results that differ in the last bits with the BLAS
    thread count (OpenBLAS splits larger products between its threads).  The thread count is inherited
    from the environment (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, set for instance by dask for its
    workers), so the same scenario would give different bits in a worker process and in its parent; on
    one thread the results are bitwise independent of where they run (and as fast for such sizes).

    The limit is a setting of the whole process, and threadpoolctl (≥ 3.6) lets one thread at a time set
    it: the blocks of concurrent threads (dask worker threads, ``run_realisations`` threads) take turns
    through a process-wide lock.  Before, each block set and restored the limit on its own: a block that
    ended restored the count while another thread's block still ran (its linear algebra then ran on the
    restored count), and a thread's limit was silently ignored while another thread held the control.
    Blocks are short (set-up only); a thread that holds threadpoolctl's control outside these blocks (a
    user's own ``with threadpool_limits(...)``) keeps its own count for them.
    """
    from threadpoolctl import threadpool_limits

    with _ONE_BLAS_LOCK, threadpool_limits(limits=1, user_api="blas"):
        yield


#: keyword arguments every hpcrail kernel is compiled with
JIT = dict(cache=True, nogil=True, fastmath=False, error_model="numpy", boundscheck=False)

#: for hot kernels that never allocate: no reference counting (PERFORMANCE_NOTES: 35-50x on array helpers)
JIT_NRT_FREE = dict(JIT, _nrt=False)
