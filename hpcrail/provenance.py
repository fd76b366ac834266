"""Provenance attributes attached to every result (version, git commit, host, software versions,
the command that made it)."""
from __future__ import annotations

import datetime as _dt
import importlib
import json
import os
import platform
import shlex
import socket
import subprocess
import sys
from pathlib import Path

#: libraries whose versions every result records (``<name>_version`` attributes)
LIBRARIES = ("numpy", "scipy", "numba", "xarray", "zarr", "dask", "distributed", "pandas")
#: written into a built wheel by ``setup.py`` (the commit the wheel was built from)
BUILD_INFO = "_build_info.json"


def _git(here: Path) -> tuple[str, bool] | None:
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=5, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=5, check=True).stdout.strip())
        return commit, dirty
    except (OSError, subprocess.SubprocessError):
        return None


def _installed_commit() -> str | None:
    """The commit an installed (non-editable) hpcrail was built from: ``_build_info.json`` written by
    ``setup.py`` into the wheel, else ``direct_url.json`` of a ``pip install git+URL`` (PEP 610)."""
    info = Path(__file__).resolve().parent / BUILD_INFO
    try:
        commit = json.loads(info.read_text()).get("git_commit")
        if commit and commit != "unknown":
            return str(commit)
    except (OSError, ValueError):
        pass
    try:
        from importlib.metadata import PackageNotFoundError, distribution

        text = distribution("hpcrail").read_text("direct_url.json")
    except (ImportError, PackageNotFoundError, OSError):
        return None
    try:
        commit = json.loads(text or "{}").get("vcs_info", {}).get("commit_id")
    except ValueError:
        return None
    return str(commit) if commit else None


def git_info(path: Path | None = None) -> tuple[str, bool]:
    """Return ``(commit, dirty)`` of the git checkout holding hpcrail; for an installed wheel (no
    checkout) the commit recorded in the package metadata (dirty False); ``("unknown", False)`` if
    neither exists."""
    here = Path(path or Path(__file__).resolve().parent)
    found = _git(here)
    if found is not None:
        return found
    commit = _installed_commit()
    return (commit, False) if commit else ("unknown", False)


def command_line(argv: list[str] | None = None) -> str:
    """The command that is running, as a user would type it (``hpcrail run configs/x.yaml --set ...``;
    ``python script.py ...`` for the Python API)."""
    argv = list(sys.argv if argv is None else argv)
    if not argv or not argv[0]:
        return "python (interactive)"
    prog = Path(argv[0]).name
    if prog in ("hpcrail", "__main__.py"):
        return shlex.join(["hpcrail", *argv[1:]])
    if prog.endswith(".py") or prog in ("-c", "-m"):
        return "python " + shlex.join([prog, *argv[1:]])
    return shlex.join([prog, *argv[1:]])


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def history_line(created: str | None = None, argv: list[str] | None = None) -> str:
    """One line of the CF ``history`` attribute: ``<ISO time>: <command line>``."""
    return f"{created or now_iso()}: {command_line(argv)}"


def library_versions() -> dict:
    """``<library>_version`` of every library of :data:`LIBRARIES` (``"not installed"`` if missing)."""
    out = {}
    for name in LIBRARIES:
        try:
            out[f"{name}_version"] = str(importlib.import_module(name).__version__)
        except ImportError:
            out[f"{name}_version"] = "not installed"
    return out


def provenance_attrs() -> dict:
    """Attributes describing the software and machine that produced a result (all strings / ints):
    hpcrail version, git commit (or the commit an installed wheel was built from), host, platform,
    library versions, creation time, user and the CF ``history`` line (time and command line)."""
    from hpcrail._version import __version__

    commit, dirty = git_info()
    created = now_iso()
    a = {
        "hpcrail_version": __version__,
        "git_commit": commit,
        "git_dirty": int(dirty),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python_version": platform.python_version(),
    }
    a.update(library_versions())
    a.update({"created": created, "user": os.environ.get("USER", ""), "history": history_line(created)})
    return a


__all__ = ["git_info", "provenance_attrs", "command_line", "history_line", "library_versions", "now_iso",
           "LIBRARIES"]
