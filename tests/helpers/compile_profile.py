"""Where the suite's numba compilation goes: an opt-in pytest plugin and its summary.

The suite's time from an empty numba cache is mostly compilation (docs/performance.md, "Cold start").  With
``HPCRAIL_COMPILE_PROFILE=DIR python -m pytest -p helpers.compile_profile ...`` every worker records, from numba's
``numba:compile`` events, the exclusive compile time of each function (its own time, callees compiled inside it
subtracted) and the compile time each test triggered (outermost compilations), and writes
``DIR/compile_<pid>.json`` at the end of its session.  ``python tests/helpers/compile_profile.py DIR`` prints the
functions and tests that compile longest, summed over the workers.  Run it from an empty cache
(``NUMBA_CACHE_DIR`` pointing at a fresh directory) to see what CI compiles.
"""
from __future__ import annotations

import collections
import json
import os
import sys
import threading
import time

_local = threading.local()
EXCLUSIVE: dict = collections.defaultdict(float)
COUNT: collections.Counter = collections.Counter()
PER_TEST: dict = collections.defaultdict(float)
_CURRENT = {"test": "(collection)"}


def _listener():
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev):
            stack = getattr(_local, "stack", None)
            if stack is None:
                stack = _local.stack = []
            stack.append([time.perf_counter(), 0.0])

        def on_end(self, ev):
            stack = _local.stack
            t0, inner = stack.pop()
            incl = time.perf_counter() - t0
            fn = getattr(ev.data.get("dispatcher"), "py_func", None)
            key = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
            EXCLUSIVE[key] += incl - inner
            COUNT[key] += 1
            if stack:
                stack[-1][1] += incl
            else:
                PER_TEST[_CURRENT["test"]] += incl

    return Listener()


def pytest_configure(config):
    if os.environ.get("HPCRAIL_COMPILE_PROFILE"):
        from numba.core import event

        event.register("numba:compile", _listener())


def pytest_runtest_logstart(nodeid, location):
    _CURRENT["test"] = nodeid


def pytest_sessionfinish(session):
    out = os.environ.get("HPCRAIL_COMPILE_PROFILE")
    if out:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"compile_{os.getpid()}.json"), "w") as f:
            json.dump({"exclusive": EXCLUSIVE, "count": COUNT, "per_test": PER_TEST}, f)


def summary(directory: str, most: int = 30) -> str:
    exclusive: dict = collections.defaultdict(float)
    count: collections.Counter = collections.Counter()
    per_test: dict = collections.defaultdict(float)
    for name in sorted(os.listdir(directory)):
        if name.startswith("compile_") and name.endswith(".json"):
            with open(os.path.join(directory, name)) as f:
                d = json.load(f)
            for k, v in d["exclusive"].items():
                exclusive[k] += v
            count.update(d["count"])
            for k, v in d["per_test"].items():
                per_test[k] += v
    lines = [f"compilation: {sum(exclusive.values()):.0f} s in {sum(count.values())} compilations", "",
             "functions (exclusive seconds, compilations):"]
    lines += [f"{v:8.1f} {count[k]:5d}  {k}" for k, v in sorted(exclusive.items(), key=lambda kv: -kv[1])[:most]]
    lines += ["", "tests (seconds of compilation they triggered):"]
    lines += [f"{v:8.1f}  {k}" for k, v in sorted(per_test.items(), key=lambda kv: -kv[1])[:most]]
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30))
