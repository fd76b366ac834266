"""Clean stops on Ctrl-C (SIGINT) and SIGTERM for the command line.

Python turns SIGINT into ``KeyboardInterrupt`` between bytecodes; raised while numba compiles (inside
an llvmlite ctypes callback) it is printed as "Exception ignored …" and lost, and the run carried on
and wrote its store.  Inside :func:`handling_interrupts` the first SIGINT or SIGTERM is *recorded*
(:func:`requested`) and raised as :class:`Interrupted`; code between safe points calls :func:`check`
(the progress callbacks of the drivers), so an interrupt swallowed by a callback still stops the work
at the next safe point, and a command never writes results after one.  A second signal exits at once
(code 130) — nothing is half-written then, since stores are written to a temporary name and renamed.

:func:`ignoring_interrupts` lets child processes (the dask workers of an embedded cluster) start with
SIGINT ignored: Ctrl-C in a terminal goes to the whole process group, and the driver, not every
worker, decides how to stop.

:func:`install_entry_handlers` is the first thing the command line does (``hpcrail`` and ``python -m
hpcrail``, before typer, numba or the command's imports): a SIGINT or SIGTERM that arrives while the
command starts (or after its work is done, or during a command without a block of its own) prints
"interrupted (SIGTERM) …" and exits at once with code 130 — before a command's own block, nothing has
been written.  Only a signal during the interpreter's own start, before any hpcrail code runs (a few
tens of milliseconds), still ends the process by the signal's default action.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

#: exit code of a command stopped by an interrupt (128 + SIGINT)
EXIT_INTERRUPTED = 130

_STATE: dict = {"signal": None, "active": False, "entry": False}


class Interrupted(KeyboardInterrupt):
    """The command was asked to stop (``signal``: ``"SIGINT"`` or ``"SIGTERM"``)."""

    def __init__(self, signame: str = "SIGINT"):
        super().__init__(signame)
        self.signal = signame


def requested() -> str | None:
    """Name of the signal that asked the command to stop, or None."""
    return _STATE["signal"]


def check() -> None:
    """Raise :class:`Interrupted` if a stop was requested (a safe point)."""
    if _STATE["signal"] is not None:
        raise Interrupted(_STATE["signal"])


def _handler(signum, _frame):
    name = signal.Signals(signum).name
    if _STATE["signal"] is not None:      # the second one: stop at once
        try:
            sys.stderr.write(f"\n{name} again: stopping now\n")
            sys.stderr.flush()
        finally:
            os._exit(EXIT_INTERRUPTED)
    _STATE["signal"] = name
    raise Interrupted(name)


def _entry_handler(signum, _frame):
    """Outside a command's own :func:`handling_interrupts` block: stop now, with the documented code
    and message (nothing is being written there: the command has not started its work, or has
    finished it, or writes nothing that a re-run would not write again)."""
    name = signal.Signals(signum).name
    try:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a stream interrupted mid-write: the message still goes out
                pass
        os.write(2, f"interrupted ({name}): stopped (no store was being written); run the same command "
                    "again\n".encode())
    finally:
        os._exit(EXIT_INTERRUPTED)


def install_entry_handlers() -> None:
    """Install the command line's SIGINT/SIGTERM handlers for the whole process (main thread only;
    idempotent): a signal outside a command's :func:`handling_interrupts` block exits at once with
    :data:`EXIT_INTERRUPTED` and an "interrupted (SIGNAL)" line.  Called first by the entry points,
    never by the library (a notebook keeps its own Ctrl-C)."""
    if threading.current_thread() is not threading.main_thread() or _STATE["entry"]:
        return
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, _entry_handler)
    _STATE["entry"] = True


def leave_command(code: int) -> None:
    """In the command-line process (:func:`install_entry_handlers` ran): flush the streams and exit at once with
    ``code``, without the interpreter's finalisation.  A command calls it after it has reported an interrupt and
    cleaned up what it was writing: a SIGINT that arrived while numba compiled (inside an LLVM callback) can leave
    the compiler in a state whose finalisers crash — the suite once saw ``hpcrail run`` print its "interrupted"
    line and then die of SIGSEGV (exit −11 instead of 130).  Elsewhere (a library or an in-process test) it
    returns, and the caller raises its usual exit."""
    if not _STATE["entry"]:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a stream already closed: the exit code still tells
            pass
    os._exit(code)


@contextlib.contextmanager
def handling_interrupts():
    """Record SIGINT/SIGTERM and raise :class:`Interrupted` inside the block (main thread only; a
    no-op elsewhere).  Restores the previous handlers and clears the record on exit."""
    if threading.current_thread() is not threading.main_thread() or _STATE["active"]:
        yield
        return
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    old_hook = sys.unraisablehook

    def hook(unraisable):   # an interrupt lost in a ctypes callback (numba compiling): recorded, not printed
        if not isinstance(unraisable.exc_value, Interrupted):
            old_hook(unraisable)

    _STATE.update(signal=None, active=True)
    sys.unraisablehook = hook
    for s in old:
        signal.signal(s, _handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        sys.unraisablehook = old_hook
        _STATE.update(signal=None, active=False)


@contextlib.contextmanager
def ignoring_interrupts():
    """SIGINT ignored inside the block (main thread only): processes started here inherit it (an
    ignored signal stays ignored across ``exec``, and Python then installs no handler for it)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
        check()


__all__ = ["Interrupted", "EXIT_INTERRUPTED", "requested", "check", "handling_interrupts", "ignoring_interrupts",
           "leave_command",
           "install_entry_handlers"]
