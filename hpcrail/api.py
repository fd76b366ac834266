"""The Python API for notebooks and scripts (re-exported by :mod:`hpcrail`)::

    import hpcrail
    sc = hpcrail.load("configs/trains/train4.yaml", simulation__duration_s=600)   # a validated scenario
    sc.integrator.rtol = 1e-5                       # assignments are validated (bad values raise)
    ds = hpcrail.simulate(sc)                       # xarray Dataset (the dataset of hpcrail run)
    ds.hpcrail.plot_run()                           # its run figures
    st = hpcrail.sweep("jobs/sobol_train_makeup.yaml", inline=True)   # runs (or resumes), opens the store
    st.hpcrail.sobol()                              # Sobol' indices of a saltelli design

The command line and this API share every step: loading and validation (:mod:`hpcrail.kinds`), running
(:mod:`hpcrail.simulate`), the dataset builder, sweeps (:mod:`hpcrail.sweep.runner`) and analysis
(:mod:`hpcrail.analysis`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping


def _override_items(overrides, kw: dict) -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    if overrides is None:
        pass
    elif isinstance(overrides, Mapping):
        items += [(str(k), v) for k, v in overrides.items()]
    elif isinstance(overrides, str):
        raise TypeError("overrides: a mapping {'dotted.path': value} or a list of 'dotted.path=value' strings, "
                        f"not the string {overrides!r}")
    else:
        from hpcrail.config.loading import parse_override

        for text in overrides:
            parts, value = parse_override(str(text))
            items.append((".".join(parts), value))
    items += [(k.replace("__", "."), v) for k, v in kw.items()]
    return items


def load(path: str | Path, overrides: Mapping[str, Any] | Iterable[str] | None = None, /, **kw):
    """Load, override and validate a scenario file of any model kind; returns the validated scenario.

    ``overrides``: ``{"simulation.duration_s": 600}`` or ``["simulation.duration_s=600"]`` (the dotted
    paths of ``hpcrail run --set``); keyword arguments do the same with ``__`` for the dots
    (``simulation__duration_s=600``).  The scenario validates assignments
    (``sc.simulation.duration_s = -1`` raises ``pydantic.ValidationError``); :func:`simulate` validates the
    whole scenario again, cross-field rules included.

    Raises :class:`~hpcrail.config.ConfigError` listing every problem (file, field, value, allowed).
    """
    from hpcrail.config import ConfigError, ConfigIssue
    from hpcrail.config.loading import load_document, set_path
    from hpcrail.kinds import validate_document

    doc = load_document(path)
    issues = []
    try:
        items = _override_items(overrides, kw)
    except ValueError as exc:
        raise ConfigError([ConfigIssue("overrides", "(override)", str(exc))]) from None
    for dotted, value in items:
        parts = dotted.split(".")
        try:
            set_path(doc.tree, parts, value)
            doc.origins[tuple(int(p) if p.isdigit() else p for p in parts)] = "overrides"
        except (KeyError, IndexError) as exc:
            issues.append(ConfigIssue("overrides", dotted, str(exc.args[0] if exc.args else exc)))
    try:
        sc = validate_document(doc)
    except ConfigError as exc:
        raise ConfigError(issues + exc.issues) from None
    if issues:
        raise ConfigError(issues)
    return sc


def revalidate(scenario):
    """The scenario validated again from its canonical form, cross-field rules included (after
    assignments).  Raises :class:`~hpcrail.config.ConfigError`."""
    from hpcrail.config import Document
    from hpcrail.config.loading import canonical_dict
    from hpcrail.kinds import validate_document

    return validate_document(Document(tree=canonical_dict(scenario), root_file="<scenario>"))


def simulate(scenario, /, *, progress: bool = False, **overrides):
    """Run a scenario (validated scenario, or a scenario file path with ``overrides`` as in :func:`load`)
    and return its xarray Dataset — the dataset ``hpcrail run`` writes (failures are in ``status`` and
    ``message``, never exceptions).  ``progress``: print progress lines on stderr.

    Raises :class:`~hpcrail.config.ConfigError` for a scenario that does not validate.
    """
    from hpcrail.config.loading import canonical_yaml
    from hpcrail.simulate import run_scenario

    if isinstance(scenario, (str, Path)):
        sc = load(scenario, **overrides)
    else:
        if overrides:
            raise TypeError("overrides apply to a scenario file; set fields of a loaded scenario by assignment")
        sc = revalidate(scenario)
    cb, close = (None, lambda: None)
    if progress:
        from hpcrail.cli import progress_printer

        cb, close = progress_printer(sc.name)
    try:
        return run_scenario(sc, progress=cb, config_yaml=canonical_yaml(sc))
    finally:
        close()


def sweep(spec: str | Path | Mapping, store: str | Path | None = None, *, set: Iterable[str] = (),
          inline: bool = False, workers: int | None = None, progress: bool = True, quiet: bool = False, **options):
    """Run (or resume) a sweep and open its store (:func:`open_sweep`: parameters as a MultiIndex, metrics
    loaded).  ``spec``: a spec file or a mapping with the same keys (relative paths from the working
    directory); ``store``: default ``NAME.zarr``; ``set``: ``--set`` overrides of the base scenario;
    ``inline``: run in this process without dask; ``workers``: processes of the local dask cluster;
    ``quiet``: no messages; ``options``: the other keywords of :func:`hpcrail.sweep.runner.run_sweep`
    (``batch_size``, ``retry_failed``, ``new``, ``client``, ``scheduler`` ...).

    Raises :class:`~hpcrail.config.ConfigError` for a bad spec and
    :class:`~hpcrail.sweep.runner.SweepMismatchError` when ``store`` holds another study."""
    from hpcrail.analysis import open_sweep
    from hpcrail.sweep.runner import run_sweep

    say = (lambda _s: None) if quiet else print
    res = run_sweep(dict(spec) if isinstance(spec, Mapping) else spec, store, cli_set=list(set), inline=inline,
                    workers=workers, progress=progress and not quiet, say=say, **options)
    return open_sweep(res.store)


def open_run(path: str | Path):
    """Open a run store (lazy; ``ds.hpcrail`` available)."""
    from hpcrail.analysis import open_run as _open

    return _open(path)


def open_sweep(path: str | Path, indexed: bool = True):
    """Open a sweep store (see :func:`hpcrail.analysis.open_sweep`)."""
    from hpcrail.analysis import open_sweep as _open

    return _open(path, indexed=indexed)


def examples_dir() -> Path:
    """The directory holding the shipped ``configs/``, ``jobs/`` and ``slurm/`` (``hpcrail examples``)."""
    from hpcrail.config.examples import examples_root

    return examples_root()


__all__ = ["load", "simulate", "sweep", "open_run", "open_sweep", "examples_dir", "revalidate"]
