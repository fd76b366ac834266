"""The example scenarios, sweep jobs and Slurm templates shipped with hpcrail (``configs/``, ``jobs/``,
``slurm/``).

In a source checkout (``pip install -e .``) they are the repository's own directories; a built wheel
carries copies under ``hpcrail/examples/`` (``setup.py`` puts them there), so ``hpcrail examples --copy
DIR`` gives a user of an installed wheel the files every README command refers to.
"""
from __future__ import annotations

import shutil
from pathlib import Path

#: the example directories, relative to the repository root (and to ``hpcrail/examples`` in a wheel)
EXAMPLE_DIRS = ("configs", "jobs", "slurm")


def examples_root() -> Path:
    """The directory holding ``configs/``, ``jobs/`` and ``slurm/``: ``hpcrail/examples`` of an installed
    wheel, else the source checkout holding the package.  Raises ``FileNotFoundError`` when neither has
    them (a wheel built without ``setup.py``)."""
    pkg = Path(__file__).resolve().parents[1]
    for root in (pkg / "examples", pkg.parent):
        if all((root / d).is_dir() for d in EXAMPLE_DIRS):
            return root
    raise FileNotFoundError(f"no example files next to {pkg} (expected {', '.join(EXAMPLE_DIRS)} in "
                            f"{pkg / 'examples'} or {pkg.parent})")


def example_files() -> list[Path]:
    """Every example file, relative to :func:`examples_root` (sorted)."""
    root = examples_root()
    out = []
    for d in EXAMPLE_DIRS:
        out += [p.relative_to(root) for p in sorted((root / d).rglob("*"))
                if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(".pyc")]
    return out


def shipped_scenarios() -> list[Path]:
    """The shipped scenario files (absolute paths, sorted by folder): the YAML files directly in a folder of
    ``configs/`` whose top level has a ``simulation`` block (component files — vehicles, connections, routes,
    profiles — and contact-table configurations are not scenarios)."""
    import yaml

    out = []
    for f in sorted((examples_root() / "configs").glob("*/*.y*ml")):
        try:
            tree = yaml.safe_load(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            continue
        if isinstance(tree, dict) and isinstance(tree.get("simulation"), dict):
            out.append(f)
    return out


def copy_examples(dest: str | Path, overwrite: bool = False) -> list[Path]:
    """Copy ``configs/``, ``jobs/`` and ``slurm/`` into ``dest`` (created); returns the directories written.
    Raises ``FileExistsError`` naming the first one that exists unless ``overwrite``."""
    root = examples_root()
    dest = Path(dest)
    if not overwrite:
        for d in EXAMPLE_DIRS:
            if (dest / d).exists():
                raise FileExistsError(f"{dest / d} exists; pass --overwrite to replace the example files there")
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for d in EXAMPLE_DIRS:
        shutil.copytree(root / d, dest / d, dirs_exist_ok=overwrite,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        out.append(dest / d)
    return out


__all__ = ["examples_root", "example_files", "shipped_scenarios", "copy_examples", "EXAMPLE_DIRS"]
