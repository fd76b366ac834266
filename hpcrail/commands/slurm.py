"""``hpcrail slurm submit TEMPLATE [ARGS]``: submit a job template with the user's site settings.

The templates in ``slurm/`` hold no site settings; this command inserts the account, partition,
modules and environment activation of ``~/.config/hpcrail/slurm.yaml`` (:mod:`hpcrail.slurm.site`)
and calls ``sbatch``.
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import List, Optional

import typer

from hpcrail.cli import EXIT_CONFIG, app, config_error_exit, console, err_console
from hpcrail.config import ConfigError

slurm_app = typer.Typer(no_args_is_help=True, help="Slurm deployment: submit job templates with your site settings.")
app.add_typer(slurm_app, name="slurm")


@slurm_app.command("submit", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def submit(template: Path = typer.Argument(..., help="job template, e.g. slurm/partitioned_run.sbatch"),
           args: Optional[List[str]] = typer.Argument(None, help="arguments of the job script"),
           sbatch_opt: List[str] = typer.Option([], "--sbatch", help="extra sbatch option, e.g. --sbatch=--ntasks=4"),
           site: Optional[Path] = typer.Option(None, "--site", help="site settings file (default: "
                                               "~/.config/hpcrail/slurm.yaml or $HPCRAIL_SLURM_CONFIG)"),
           wait: bool = typer.Option(False, "--wait", help="wait for the job to end (sbatch --wait)"),
           dry_run: bool = typer.Option(False, "--dry-run", help="print the rendered job script only")):
    """Render TEMPLATE with the site settings and submit it with sbatch; prints the job id."""
    from hpcrail.slurm.site import load_site_config, render_job_script

    try:
        cfg = load_site_config(site)
    except ConfigError as exc:
        config_error_exit(exc)
    if not template.exists():
        err_console.print(f"[bold red]error:[/] {template}: no such job template", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    try:
        script = render_job_script(template.read_text(), cfg)
    except ValueError as exc:
        err_console.print(f"[bold red]error:[/] {template}: {exc}", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    if dry_run:
        typer.echo(script, nl=False)
        return
    if shutil.which("sbatch") is None:
        err_console.print("[bold red]error:[/] sbatch is not on PATH (not on a Slurm login node?)", highlight=False)
        raise typer.Exit(EXIT_CONFIG)
    with tempfile.NamedTemporaryFile("w", suffix=".sbatch", prefix=f"{template.stem}-", delete=False) as fh:
        fh.write(script)
        job_file = fh.name
    cmd = ["sbatch", "--parsable", *(["--wait"] if wait else []), *sbatch_opt, job_file, *(args or [])]
    r = subprocess.run(cmd, capture_output=True, text=True)
    Path(job_file).unlink(missing_ok=True)
    if r.returncode != 0 and not (wait and r.stdout.strip()):
        err_console.print(f"[bold red]error:[/] sbatch failed: {r.stderr.strip()}", highlight=False)
        raise typer.Exit(r.returncode or 1)
    job = r.stdout.strip().split(";")[0]
    console.print(f"submitted job {job}" + (f" (exit code {r.returncode})" if wait else ""), highlight=False)
    if wait and r.returncode != 0:
        raise typer.Exit(r.returncode)
