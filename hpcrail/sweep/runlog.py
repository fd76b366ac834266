"""What happened to a sweep run besides its scenarios: workers lost, workers that joined (restarted or
replaced), tasks restarted on another worker after a loss, task attempts that raised and were retried.

The driver keeps one :class:`RunLog` per run.  It listens to the dask scheduler's events (topic ``all``:
``remove-worker`` with the tasks that were processing there, ``add-worker``) and to the sweep tasks' own
events (topic :data:`TOPIC`, logged by :func:`log_task_event` on the worker before a failed attempt
re-raises), says each one as it happens (the progress line shows the totals), and writes the run file
``.STORE.run.json`` beside the store (state, driver pid and host, counts and the last events) so that
``hpcrail status`` shows them during the run and after it (a store's metadata never changes during a run, see
:mod:`hpcrail.sweep.store`).
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import threading
import time
from pathlib import Path
from typing import Callable

def run_file(store: str | Path) -> Path:
    """The run file of ``store``: ``.NAME.run.json`` beside it (next to its lock ``.NAME.lock``; not inside,
    where zarr would take it for a foreign object)."""
    store = Path(store)
    return store.with_name(f".{store.name}.run.json")
#: dask event topic of the sweep tasks' own events
TOPIC = "hpcrail_sweep"
#: events kept in the run file
MAX_EVENTS = 50


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def log_task_event(msg: dict) -> None:
    """Send ``msg`` to the driver from inside a dask task (nothing outside a worker)."""
    try:
        from distributed import get_worker

        w = get_worker()
        w.log_event(TOPIC, {"key": str(w.get_current_task()), "worker": w.address, **msg})
    except Exception:  # noqa: BLE001 - inline, or no worker: nothing to tell
        pass


def read_run_file(store: str | Path) -> dict | None:
    """The run file of ``store`` (None if absent or unreadable); ``alive`` tells whether a ``running``
    run's driver process still exists (same host only; None when it cannot be told)."""
    p = run_file(store)
    try:
        info = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict):
        return None
    alive = None
    if info.get("state") == "running" and info.get("host") == socket.gethostname():
        try:
            os.kill(int(info.get("pid", -1)), 0)
            alive = True
        except (ProcessLookupError, ValueError):
            alive = False
        except PermissionError:
            alive = True
    info["alive"] = alive
    return info


def cluster_summary(info: dict) -> str:
    """One line about the cluster events of a run ("" when nothing happened)."""
    counts = [(int(info.get("workers_lost", 0)), "worker", "lost"),
              (int(info.get("workers_retired", 0)), "worker", "retired"),
              (int(info.get("workers_joined", 0)), "worker", "joined (restarted or replaced)"),
              (int(info.get("tasks_restarted", 0)), "task", "restarted on another worker"),
              (int(info.get("task_retries", 0)), "task attempt", "failed and retried"),
              (len(info.get("failed_tasks", []) or []), "task", "failed after their retries")]
    return ", ".join(f"{n} {what}{'s' if n != 1 else ''} {how}" for n, what, how in counts if n)


class RunLog:
    """Cluster events of one sweep run (see the module docstring).  Thread-safe: the scheduler's events
    arrive on the client's event-loop thread."""

    def __init__(self, store: Path, say: Callable = print, prefix: str = ""):
        self.store = Path(store)
        self.say = say
        self.prefix = prefix          #: task keys of this study start with it (other clients' tasks are ignored)
        self.lock = threading.Lock()
        self.workers_lost = 0
        self.workers_retired = 0
        self.workers_joined = 0
        self.tasks_restarted = 0
        self.task_retries = 0
        self.attempt_failures: dict = {}
        self.failed_tasks: list = []
        self.events: list = []
        self.workers = 0
        self.started = _now()
        self.state = "running"
        self.listening = False
        self._last_write = 0.0
        self.on_change: Callable | None = None     #: called after each event (the progress line redraws)

    # -- the file --------------------------------------------------------------------------------
    def as_dict(self) -> dict:
        return {"state": self.state, "pid": os.getpid(), "host": socket.gethostname(), "started": self.started,
                "updated": _now(), "workers": self.workers, "workers_lost": self.workers_lost,
                "workers_retired": self.workers_retired, "workers_joined": self.workers_joined,
                "tasks_restarted": self.tasks_restarted, "task_retries": self.task_retries,
                "failed_tasks": list(self.failed_tasks), "events": self.events[-MAX_EVENTS:]}

    def write(self, force: bool = True) -> None:
        """Write the run file (atomically: a temporary file renamed; at most once a second unless ``force``)."""
        now = time.monotonic()
        if not force and now - self._last_write < 1.0:
            return
        self._last_write = now
        path = run_file(self.store)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps(self.as_dict(), indent=1))
            os.replace(tmp, path)
        except OSError:
            tmp.unlink(missing_ok=True)

    def finish(self, state: str) -> None:
        self.state = state
        self.write()

    def summary(self) -> str:
        return cluster_summary(self.as_dict())

    def _event(self, text: str) -> None:
        self.events.append(f"{_now()} {text}")
        self.say(text)
        self.write(force=False)
        if self.on_change is not None:
            try:
                self.on_change()
            except Exception:  # noqa: BLE001 - a progress redraw never stops the sweep
                pass

    # -- dask --------------------------------------------------------------------------------------
    def _ours(self, keys) -> list:
        return [k for k in keys if str(k).startswith(self.prefix)] if self.prefix else list(keys)

    def scheduler_event(self, event) -> None:
        """Handler of the scheduler's topic ``all``: ``(timestamp, msg)``."""
        msg = event[1] if isinstance(event, (tuple, list)) and len(event) == 2 else event
        if not isinstance(msg, dict) or not self.listening:
            return
        action = msg.get("action")
        with self.lock:
            if action == "remove-worker":
                self.workers = max(0, self.workers - 1)
                keys = self._ours(msg.get("processing-tasks") or [])
                self.tasks_restarted += len(keys)
                again = (f"; {len(keys)} of its tasks restarted on the other workers (nothing is lost: a batch "
                         "is done only once written)") if keys else ""
                if msg.get("expected"):
                    self.workers_retired += 1
                    self._event(f"worker {msg.get('worker', '?')} retired{again}")
                else:
                    self.workers_lost += 1
                    self._event(f"warning: worker {msg.get('worker', '?')} lost (died or unreachable){again}")
            elif action == "add-worker":
                self.workers += 1
                self.workers_joined += 1
                self._event(f"worker {msg.get('worker', '?')} joined ({self.workers} workers)")

    def task_event(self, event) -> None:
        """Handler of :data:`TOPIC`: a task attempt that raised (dask retries it unless it was the last)."""
        msg = event[1] if isinstance(event, (tuple, list)) and len(event) == 2 else event
        if not isinstance(msg, dict) or not self.listening:
            return
        with self.lock:
            if msg.get("action") == "attempt-failed":
                key = str(msg.get("key", "?"))
                self.attempt_failures[key] = self.attempt_failures.get(key, 0) + 1
                self.task_retries += 1
                self._event(f"warning: task {key} (scenarios {msg.get('start')}..{msg.get('stop', 0) - 1}) failed on "
                            f"{msg.get('worker', '?')}: {msg.get('error', '')}; dask retries it")

    def task_failed(self, key: str, text: str) -> None:
        """A task that failed after its retries (its last attempt is not a retry)."""
        with self.lock:
            self.failed_tasks.append(key)
            if self.attempt_failures.get(key):
                self.task_retries = max(0, self.task_retries - 1)
            self._event(text)

    def listen(self, client) -> None:
        """Subscribe to the scheduler's and the tasks' events of ``client``'s cluster."""
        try:
            self.workers = len(client.scheduler_info().get("workers", {}))
        except Exception:  # noqa: BLE001
            self.workers = 0
        for topic, handler in (("all", self.scheduler_event), (TOPIC, self.task_event)):
            try:
                client.subscribe_topic(topic, handler)
            except Exception:  # noqa: BLE001 - an old scheduler: the progress line then shows only scenarios
                pass
        self.listening = True

    def stop(self, client) -> None:
        """Stop listening (before the cluster is closed: its workers leaving are not events of the run)."""
        self.listening = False
        for topic in ("all", TOPIC):
            try:
                client.unsubscribe_topic(topic)
            except Exception:  # noqa: BLE001
                pass


__all__ = ["RunLog", "run_file", "TOPIC", "log_task_event", "read_run_file", "cluster_summary"]
