"""Every snippet of README.md, docs/*.md and jobs/README.md runs (issue 16).

Each fenced block declares its language: ``bash`` and ``python`` blocks are executed, ``yaml`` blocks are
validated as what the comment before them says (``<!-- docs-test: sweep-spec in jobs/ -->``, ``slurm-site``,
``scenario-fragment <base scenario>``), ``text`` blocks (trees, synopses, signatures) are not code.  A block
whose comment says ``needs slurm`` or ``needs mpi`` is checked for syntax only: every ``hpcrail`` command in
it is parsed with the CLI's own options (an unknown option or a bad value fails), nothing is submitted.

Each document runs top to bottom, as a reader would, in a fresh directory holding copies of ``configs/``,
``jobs/`` and ``slurm/`` (what ``hpcrail examples --copy`` gives) in which the scenarios are shortened
(``simulation.duration_s`` at most 4 s) and the studies reduced (the first three levels of each
parameter, 4 samples, 1 s per scenario) so that the whole file runs in about a minute; ``hpcrail sweep``
runs ``--inline`` (the dask path has its own tests).  ``pip install`` and ``python -m pytest`` lines are
the reader's set-up and the suite itself: they are not re-run.  Every Python block runs in a fresh interpreter
(what a reader's new notebook has: nothing imported by the commands before it).
"""
from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from hpcrail import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "jobs" / "README.md"]
LANGUAGES = ("bash", "python", "yaml", "text")
MARKER = re.compile(r"<!--\s*docs-test:\s*(.*?)\s*-->")
MAX_DURATION = 4.0
SWEEP_DURATION = 1.0


@dataclasses.dataclass
class Block:
    lang: str
    code: str
    marker: str
    line: int


def blocks(path: Path) -> list[Block]:
    out, lines = [], path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^```(\S*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        prev = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        mk = MARKER.search(prev)
        out.append(Block(lang, "\n".join(lines[start + 1:j]), mk.group(1) if mk else "", start + 1))
        i = j + 1
    return out


# ------------------------------------------------------------------------------------------------
# the reader's directory
# ------------------------------------------------------------------------------------------------
def _shorten_scenarios(root: Path) -> None:
    for f in root.rglob("*.yaml"):
        tree = yaml.safe_load(f.read_text())
        sim = tree.get("simulation") if isinstance(tree, dict) else None
        if isinstance(sim, dict) and isinstance(sim.get("duration_s"), (int, float)):
            sim["duration_s"] = min(float(sim["duration_s"]), MAX_DURATION)
            f.write_text(yaml.safe_dump(tree, sort_keys=False))


def _reduce_job(f: Path) -> None:
    """The first three levels of every parameter (zip: of every list), 4 samples, 1 s per scenario."""
    from hpcrail.sweep.spec import ParameterSpec, _levels

    spec = yaml.safe_load(f.read_text())
    for path, ps in spec["parameters"].items():
        p = ParameterSpec.model_validate(ps)
        levels = _levels(p)
        if levels is not None:
            keep = {k: v for k, v in ps.items() if k in ("name", "label")}
            spec["parameters"][path] = {"values": levels[:3], **keep}
    if "samples" in spec:
        spec["samples"] = 4
    spec.setdefault("set", {})["simulation.duration_s"] = SWEEP_DURATION
    spec.pop("batch_size", None)
    f.write_text(yaml.safe_dump(spec, sort_keys=False))


def reader_directory(tmp: Path) -> Path:
    for d in ("configs", "jobs", "slurm"):
        shutil.copytree(ROOT / d, tmp / d, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _shorten_scenarios(tmp / "configs")
    for job in (tmp / "jobs").glob("*.yaml"):
        _reduce_job(job)
    return tmp


# ------------------------------------------------------------------------------------------------
# commands
# ------------------------------------------------------------------------------------------------
def _app():
    cli._load_command_modules()
    return cli.app


def commands(code: str) -> list[list[str]]:
    """The simple commands of a bash block: lines joined at trailing backslashes, comments dropped, split
    at ``&&``.  Pipes, redirections and other shell syntax are not used in the docs (and fail here)."""
    text = re.sub(r"\\\n", " ", code)
    out = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        cmd: list[str] = []
        for w in words + ["&&"]:
            if w == "&&":
                if cmd:
                    out.append(cmd)
                cmd = []
            elif w in ("|", "||", ";", ">", "<", "2>", "&"):
                raise AssertionError(f"shell syntax {w!r} in a documented command: {line!r}")
            else:
                cmd.append(w)
    return out


def check_syntax(args: list[str]) -> None:
    """Parse ``hpcrail ARGS`` with the CLI's options and types (nothing runs)."""
    import typer

    def rest_of(ctx):       # the arguments after the group's own options (click 8.2 keeps them private)
        return [*(getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", [])), *ctx.args]

    group = typer.main.get_command(_app())
    ctx = group.make_context("hpcrail", list(args), resilient_parsing=False)
    name, cmd, rest = group.resolve_command(ctx, rest_of(ctx))
    while hasattr(cmd, "resolve_command"):       # a group, e.g. hpcrail slurm submit
        sub = cmd.make_context(name, rest, parent=ctx)
        name, cmd, rest = cmd.resolve_command(sub, rest_of(sub))
        ctx = sub
    cmd.make_context(name, rest, parent=ctx)


def run_hpcrail(args: list[str]) -> str:
    args = list(args)
    if args and args[0] == "sweep" and not ({"--cluster", "--scheduler", "--scheduler-file", "--inline"} & set(args)):
        args.append("--inline")
    r = CliRunner().invoke(_app(), args, catch_exceptions=False)
    assert r.exit_code == 0, f"hpcrail {shlex.join(args)} exited with {r.exit_code}:\n{r.output}"
    return r.output


def run_bash(block: Block) -> None:
    needs = re.findall(r"\b(slurm|mpi)\b", block.marker.split("needs", 1)[1]) if "needs" in block.marker else []
    for cmd in commands(block.code):
        if cmd[0] == "pip" or cmd[:3] == ["python", "-m", "pytest"]:
            continue                                  # the reader's set-up; the test suite itself
        if cmd[0] == "mpiexec":
            assert "mpi" in needs, f"line {block.line}: an MPI command in a block not marked 'needs mpi'"
            k = cmd.index("hpcrail")
            check_syntax(cmd[k + 1:])
            continue
        assert cmd[0] == "hpcrail", f"line {block.line}: the docs test does not know how to run {cmd!r}"
        if "--cluster" in cmd and cmd[cmd.index("--cluster") + 1] == "slurm":
            assert "slurm" in needs, f"line {block.line}: a Slurm command in a block not marked 'needs slurm'"
        if needs:
            check_syntax(cmd[1:])
        else:
            run_hpcrail(cmd[1:])


def run_python(block: Block, where: str) -> None:
    """Run a Python block in a fresh interpreter (as a reader pastes it into a new notebook: nothing imported
    by the commands before it), in the current directory, with this checkout first on the path."""
    import subprocess
    import sys

    compile(block.code, f"{where}:{block.line}", "exec")     # a syntax error names the document and line
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    r = subprocess.run([sys.executable, "-c", block.code], cwd=os.getcwd(), env=env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, f"{where}, line {block.line}: the Python block failed in a fresh interpreter:\n" \
                              f"{r.stderr[-4000:]}"


def check_yaml(block: Block, where: Path) -> None:
    from hpcrail.config.loading import load_document
    from hpcrail.kinds import load_scenario, validate_document
    from hpcrail.slurm.site import load_site_config
    from hpcrail.sweep.spec import _unknown_path_issue, load_spec

    tree = yaml.safe_load(block.code)
    what = block.marker.split()
    assert what, f"line {block.line}: say what the yaml block is (<!-- docs-test: sweep-spec in jobs/ -->, ...)"
    if what[0] == "sweep-spec":
        f = where / (what[2] if len(what) > 2 else ".") / "_documented_spec.yaml"
        f.write_text(block.code)
        spec, sdoc, _text = load_spec(f)
        base, _doc = load_scenario(f.parent / spec.base)
        from hpcrail.config.loading import canonical_dict

        canon = canonical_dict(base)
        for p, ps in spec.parameters.items():
            issue = _unknown_path_issue(str(f), "parameters", p, canon)
            assert issue is None, str(issue)
            for v in ps.values or []:
                if isinstance(v, str) and v.endswith(".yaml"):
                    assert (f.parent / v).is_file(), f"component file {v} of {p} does not exist"
    elif what[0] == "slurm-site":
        f = where / "_site.yaml"
        f.write_text(block.code)
        load_site_config(f)
    elif what[0] == "scenario-fragment":
        doc = load_document(where / what[1])
        doc.tree.update(tree)
        validate_document(doc)
    else:
        raise AssertionError(f"line {block.line}: unknown yaml block kind {what[0]!r}")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_snippets_run(doc, tmp_path, monkeypatch):
    found = blocks(doc)
    bad = [b.line for b in found if b.lang not in LANGUAGES]
    assert not bad, f"{doc.name}: code blocks without a language (one of {LANGUAGES}) at lines {bad}"
    where = reader_directory(tmp_path)
    monkeypatch.chdir(where)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    for b in found:
        if b.lang == "bash":
            run_bash(b)
        elif b.lang == "python":
            run_python(b, doc.name)
        elif b.lang == "yaml":
            check_yaml(b, where)


def test_the_harness_fails_on_bad_commands():
    """A mistyped option, an unknown command or a Slurm command outside a marked block fails the test."""
    with pytest.raises(Exception, match="No such option: --partition"):
        check_syntax(["sweep", "jobs/x.yaml", "--partition", "compute"])     # renamed --slurm-partition
    with pytest.raises(Exception, match="No such command"):
        check_syntax(["plott", "a.zarr"])
    check_syntax(["slurm", "submit", "--sbatch=--ntasks=4", "slurm/partitioned_run.sbatch", "x.yaml"])
    with pytest.raises(AssertionError, match="does not know how to run"):
        run_bash(Block("bash", "ls -l", "", 1))
    with pytest.raises(AssertionError, match="not marked 'needs slurm'"):
        run_bash(Block("bash", "hpcrail sweep jobs/a.yaml --cluster slurm", "", 1))
    with pytest.raises(AssertionError, match="shell syntax"):
        commands("hpcrail run a.yaml | tee log")
    # a Python block runs in a fresh interpreter: it cannot lean on what an earlier block (or the harness) imported
    with pytest.raises(AssertionError, match="fresh interpreter"):
        run_python(Block("python", "np.zeros(1)", "", 1), "x.md")
    assert commands("hpcrail run a.yaml \\\n  --set x=1 && hpcrail plot a.zarr  # note") == \
        [["hpcrail", "run", "a.yaml", "--set", "x=1"], ["hpcrail", "plot", "a.zarr"]]


def test_reduced_jobs_keep_their_parameters(tmp_path):
    where = reader_directory(tmp_path)
    for job in sorted((ROOT / "jobs").glob("*.yaml")):
        full, small = yaml.safe_load(job.read_text()), yaml.safe_load((where / "jobs" / job.name).read_text())
        assert list(full["parameters"]) == list(small["parameters"])
        assert small["set"]["simulation.duration_s"] == SWEEP_DURATION
    train4 = yaml.safe_load((where / "configs/trains/train4.yaml").read_text())
    assert train4["simulation"]["duration_s"] == MAX_DURATION
    assert os.path.exists(where / "slurm" / "partitioned_run.sbatch") and np.isfinite(MAX_DURATION)
