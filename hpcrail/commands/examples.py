"""``hpcrail examples``: where the shipped scenarios, sweep jobs and Slurm templates are, and a copy of
them into a working directory (so that the README's commands work after ``pip install hpcrail``)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from hpcrail.cli import EXIT_CONFIG, app, console, err_console


@app.command()
def examples(copy: Optional[Path] = typer.Option(None, "--copy", help="copy configs/, jobs/ and slurm/ into DIR"),
             overwrite: bool = typer.Option(False, "--overwrite", help="with --copy: replace existing example "
                                            "directories in DIR"),
             list_: bool = typer.Option(False, "--list", help="list every example file")):
    """The example scenarios (configs/), sweep jobs (jobs/) and Slurm templates (slurm/) shipped with
    hpcrail: where they are, or a copy into a working directory (--copy DIR)."""
    from hpcrail.config.examples import copy_examples, example_files, examples_root

    try:
        root = examples_root()
    except FileNotFoundError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(EXIT_CONFIG)
    if copy is not None:
        try:
            dirs = copy_examples(copy, overwrite=overwrite)
        except FileExistsError as exc:
            err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(EXIT_CONFIG)
        console.print(f"copied {', '.join(d.name + '/' for d in dirs)} to {copy}; then: cd {copy} && hpcrail run "
                      "configs/trains/demo.yaml --plot", highlight=False, soft_wrap=True)
        return
    files = example_files()
    if list_:
        for f in files:
            console.print(str(f), highlight=False, markup=False)
        return
    console.print(f"example files in {root}: {len(files)} ("
                  + ", ".join(f"{d}/ {sum(1 for f in files if f.parts[0] == d)}" for d in ("configs", "jobs", "slurm"))
                  + "); `hpcrail examples --copy DIR` copies them", highlight=False, soft_wrap=True)
