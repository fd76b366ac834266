"""Provenance attributes attached to every result (version, git commit, host, software versions)."""
from __future__ import annotations

import datetime as _dt
import os
import platform
import socket
import subprocess
from pathlib import Path


def git_info(path: Path | None = None) -> tuple[str, bool]:
    """Return ``(commit, dirty)`` of the git checkout holding hpcrail, or ``("unknown", False)``."""
    here = Path(path or Path(__file__).resolve().parent)
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                                text=True, timeout=5, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=5, check=True).stdout.strip())
        return commit, dirty
    except (OSError, subprocess.SubprocessError):
        return "unknown", False


def provenance_attrs() -> dict:
    """Attributes describing the software and machine that produced a result (all strings / bools)."""
    import numba
    import numpy
    import scipy
    import xarray

    from hpcrail import __version__

    commit, dirty = git_info()
    return {
        "hpcrail_version": __version__,
        "git_commit": commit,
        "git_dirty": int(dirty),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python_version": platform.python_version(),
        "numpy_version": numpy.__version__,
        "scipy_version": scipy.__version__,
        "numba_version": numba.__version__,
        "xarray_version": xarray.__version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "user": os.environ.get("USER", ""),
    }
