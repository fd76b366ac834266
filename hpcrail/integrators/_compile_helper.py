"""Helper process of a first run: compiles one integrator kernel into numba's disk cache.

:func:`hpcrail.integrators.driver.compiled_kernel` starts it with ``(method, parameter class, argument
types)`` pickled on stdin, then compiles the model's functions in its own process; when both are done
it loads the kernel from the cache.  On two CPUs the first run's compilation before the first step
then takes the longer of the two instead of their sum (issue 17 item 5).  The cache directory comes
from the environment (``NUMBA_CACHE_DIR``, set by :mod:`hpcrail._numba` in the parent).
"""
from __future__ import annotations

import pickle
import sys


def main() -> int:
    method, cls, argtys = pickle.loads(sys.stdin.buffer.read())
    from hpcrail.integrators import registry
    from hpcrail.integrators.driver import _kernel_for_type

    _kernel_for_type(registry.get(method), cls).compile(argtys)
    return 0


if __name__ == "__main__":
    sys.exit(main())
