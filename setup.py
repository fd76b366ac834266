"""Build hook (everything else is in pyproject.toml): a wheel carries the example scenarios, sweep jobs and
Slurm templates under ``hpcrail/examples/`` (``hpcrail examples --copy DIR``) and the git commit it was
built from (``hpcrail/_build_info.json``, read by ``hpcrail.provenance.git_info`` when there is no checkout;
``HPCRAIL_GIT_COMMIT`` names it when building from a copy without ``.git``).  From a git checkout only the files
git tracks are shipped (an untracked study or result in ``jobs/`` stays out of the wheel).  MANIFEST.in puts
the example directories into the sdist, so a wheel built from the sdist has them too."""
import json
import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
EXAMPLE_DIRS = ("configs", "jobs", "slurm")


def _commit() -> str:
    """The commit being built: $HPCRAIL_GIT_COMMIT (builds from a copy without .git), else git."""
    if os.environ.get("HPCRAIL_GIT_COMMIT"):
        return os.environ["HPCRAIL_GIT_COMMIT"]
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def _tracked(d: str) -> list[str] | None:
    """The files git tracks under ``d`` (relative to the repository), or None outside a git checkout (an sdist:
    every file it holds is an example)."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--", d], capture_output=True, timeout=30,
                             check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [f for f in out.decode().split("\0") if f]


class BuildWithExamples(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):   # an editable install reads the checkout itself
            return
        target = Path(self.build_lib) / "hpcrail"
        for d in EXAMPLE_DIRS:
            if not (ROOT / d).is_dir():
                continue
            tracked = _tracked(d)
            if tracked is None:
                shutil.copytree(ROOT / d, target / "examples" / d, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.zarr"))
                continue
            for f in tracked:     # a checkout: what git tracks, never a user's untracked studies or results
                if (ROOT / f).is_file():
                    (target / "examples" / f).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(ROOT / f, target / "examples" / f)
        (target / "_build_info.json").write_text(json.dumps({"git_commit": _commit()}))


setup(cmdclass={"build_py": BuildWithExamples})
