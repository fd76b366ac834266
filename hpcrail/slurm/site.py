"""Site settings for Slurm (account, partition, modules, environment activation) in a user config
file, never in the job templates.

The file is ``$HPCRAIL_SLURM_CONFIG`` or ``~/.config/hpcrail/slurm.yaml`` (``$XDG_CONFIG_HOME``
honoured); every field is optional::

    account: proj123            # sbatch --account
    partition: compute          # sbatch --partition
    qos: normal
    cores: 8                    # cores per dask worker job (hpcrail sweep --cluster slurm)
    memory: 16GB                # memory per worker job
    walltime: "02:00:00"        # (cores/memory/walltime not set here: dask-jobqueue's configuration, e.g.
                                #  ~/.config/dask/jobqueue.yaml jobqueue.slurm.*, then its defaults)
    processes: 8                # dask worker processes per job (default: one per core)
    interface: ib0              # network interface of the workers (multi-node clusters)
    local_directory: /tmp       # worker scratch
    modules: [mpich/4.2]        # -> "module load mpich/4.2" in every job script
    prologue:                   # shell lines run first in every job script
      - source ~/venvs/hpcrail/bin/activate
    sbatch: ["--constraint=cpu"]  # further #SBATCH directives

Command-line options of ``hpcrail sweep --cluster slurm`` override the file, and the file overrides the
site's dask-jobqueue configuration (``jobqueue.slurm`` in dask's config files), which supplies whatever
neither sets; the ``sbatch`` directives, ``prologue`` lines and worker arguments are added to the
configuration's ``job-extra-directives``, ``job-script-prologue`` and ``worker-extra-args``.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hpcrail.config.errors import ConfigError, ConfigIssue, content_summary
from hpcrail.config.loading import read_yaml


class SiteConfig(BaseModel):
    """Slurm site settings (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    account: Optional[str] = None
    partition: Optional[str] = None
    qos: Optional[str] = None
    cores: Optional[int] = Field(None, ge=1)
    memory: Optional[str] = None
    walltime: Optional[str] = None
    processes: Optional[int] = Field(None, ge=1)
    interface: Optional[str] = None
    local_directory: Optional[str] = None
    modules: list[str] = []
    prologue: list[str] = []
    sbatch: list[str] = []

    def directives(self) -> list[str]:
        """``#SBATCH`` lines for account, partition, qos and the extra directives."""
        out = []
        for opt in ("account", "partition", "qos"):
            v = getattr(self, opt)
            if v:
                out.append(f"#SBATCH --{opt}={v}")
        out += [f"#SBATCH {d}" for d in self.sbatch]
        return out

    def prologue_lines(self) -> list[str]:
        """Shell lines every job runs first: ``module load`` lines, then the user's prologue."""
        return [f"module load {m}" for m in self.modules] + list(self.prologue)


def site_config_path() -> Path:
    env = os.environ.get("HPCRAIL_SLURM_CONFIG")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_CONFIG_HOME", Path.home() / ".config"))
    return base / "hpcrail" / "slurm.yaml"


def load_site_config(path: str | Path | None = None) -> SiteConfig:
    """Read the site settings (defaults when the file does not exist).  Raises :class:`ConfigError`
    naming the file, the field and the value for a bad file."""
    p = Path(path) if path else site_config_path()
    if not p.exists():
        return SiteConfig()
    data = read_yaml(p) or {}   # bounded, and its errors never quote the file
    if not isinstance(data, dict):
        raise ConfigError([ConfigIssue(str(p), "(top level)", "expected a mapping of settings", content_summary(data),
                                       allowed="a YAML mapping of the settings")])
    try:
        return SiteConfig.model_validate(data)
    except ValidationError as exc:
        issues = []
        for e in exc.errors():
            loc = ".".join(str(x) for x in e["loc"]) or "(top level)"
            msg = "unknown setting" if e["type"] == "extra_forbidden" else e["msg"]
            allowed = ", ".join(SiteConfig.model_fields) if e["type"] == "extra_forbidden" else None
            issues.append(ConfigIssue(str(p), loc, msg, e.get("input"), allowed))
        raise ConfigError(issues) from None


PROLOGUE_MARKER = "# @HPCRAIL_PROLOGUE@"


def render_job_script(template: str, site: SiteConfig) -> str:
    """Insert the site's ``#SBATCH`` directives and prologue at the template's marker line
    (``# @HPCRAIL_PROLOGUE@``, placed after the template's own directives).  Raises ``ValueError``
    when the marker is missing."""
    if PROLOGUE_MARKER not in template:
        raise ValueError(f"the job template has no {PROLOGUE_MARKER!r} line")
    block = site.directives() + ["# site prologue (hpcrail slurm.yaml)"] + site.prologue_lines()
    return template.replace(PROLOGUE_MARKER, "\n".join(block), 1)
