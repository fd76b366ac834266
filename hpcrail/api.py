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
from typing import Iterable, Mapping


import hpcrail.analysis.accessor  # noqa: E402,F401  (registers ds.hpcrail on every dataset the API returns)
from hpcrail.simulate import load, revalidate, simulate  # noqa: E402  (the API's load and simulate)


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


def study_scenario(store: str | Path, which: str | int):
    """The validated scenario of one member of a study (``which``: its scenario id, a unique id prefix, or its
    index), exactly as the sweep ran it (its hash is the stored ``scenario_id``); ``hpcrail.simulate`` of it
    gives every output.  Raises :class:`hpcrail.sweep.members.MemberError` (a ``ValueError``) for an unknown or
    invalid member."""
    from hpcrail.sweep.members import member

    return member(store, which).scenario


def rerun(store: str | Path, which: str | int, output: str | Path | None = None, *, overwrite: bool = False,
          progress: bool = False):
    """Run one member of a study again with every output of its kind (see :func:`study_scenario`); returns the
    run dataset and, with ``output``, writes it as a run store (``overwrite`` as ``hpcrail run``)."""
    from hpcrail.results.store import write_dataset
    from hpcrail.sweep.members import member

    m = member(store, which)
    ds = simulate(m.scenario, progress=progress)
    ds.attrs.update(study_store=str(Path(store).resolve()), study_scenario=int(m.index), study_scenario_id=m.id)
    if output is not None:
        write_dataset(ds, output, overwrite=overwrite)
    return ds


def export(store: str | Path, to: str, output: str | Path | None = None, *, select: Mapping | None = None,
           variables: Iterable[str] | None = None) -> list[Path]:
    """Export a run or study store to ``to`` = ``"csv"`` (a directory of tables, ``name [units]`` headers),
    ``"netcdf"`` or ``"mat"`` (see :mod:`hpcrail.analysis.export`); ``select``: ``{"coupler": slice(1, 20),
    "slack_mm": [0, 10]}`` (labels, inclusive ranges, swept-parameter values); ``variables``: names to keep.
    Returns the files written.  Raises ``ValueError`` for an unknown format, selection or variable."""
    import xarray as xr

    from hpcrail.analysis.export import default_output, export as write

    ds = xr.open_zarr(store, consolidated=True)
    return write(ds, to, output or default_output(store, to), dict(select or {}),
                 list(variables) if variables else None)


def examples_dir() -> Path:
    """The directory holding the shipped ``configs/``, ``jobs/`` and ``slurm/`` (``hpcrail examples``)."""
    from hpcrail.config.examples import examples_root

    return examples_root()


__all__ = ["load", "simulate", "sweep", "open_run", "open_sweep", "examples_dir", "revalidate", "study_scenario",
           "rerun", "export"]
