"""Figures of one run (``hpcrail plot``, ``hpcrail run --plot``, ``ds.hpcrail.plot_run()``): the run figures
its model kind declares (:attr:`hpcrail.kinds.descriptor.ModelKind.run_figures`), those whose data the
dataset holds.  Nothing here knows a kind: the kind is the dataset's ``model`` attribute.
"""
from __future__ import annotations

from pathlib import Path

import xarray as xr

from hpcrail import kinds


def kind_of(ds: xr.Dataset):
    """The model kind of a result dataset (its ``model`` attribute; ``ltd`` for stores without one).
    Raises ``ValueError`` for a sweep of several kinds or an unknown kind."""
    name = str(ds.attrs.get("model", kinds.DEFAULT_KIND))
    if "," in name:
        raise ValueError(f"this store holds scenarios of several model kinds ({name}): select one scenario's "
                         "kind first")
    try:
        return kinds.get(name)
    except KeyError as exc:
        raise ValueError(str(exc.args[0])) from None


def available(ds: xr.Dataset) -> list:
    """The run figures of the dataset's kind whose data the dataset has."""
    return [f for f in kind_of(ds).run_figures if f.applies is None or f.applies(ds)]


def run_figures(ds: xr.Dataset, out_dir: str | Path | None, figures: list[str] | None = None, *,
                format: str = "png", dpi: float | None = None, **options) -> list:
    """Draw the run figures of ``ds`` (``figures``: their names; default every figure whose data the dataset
    has) into ``out_dir`` as ``format`` files (png, pdf or svg; raster resolution ``dpi``, default 120) and
    return the paths — or, with ``out_dir=None``, return the matplotlib figures.  ``options`` go to every figure
    (``select={"coupler": [12, 61]}``, ``x="distance"``, ``t_max``; see :mod:`hpcrail.results.plotting`).  A
    figure drawn with less than it can show (a sweep kept fewer series) warns with a
    :class:`~hpcrail.results.plotting.FigureNote` saying what to keep.

    Raises ``ValueError`` naming the allowed figures for an unknown name, one whose data the dataset lacks,
    a kind that declares no run figures, or an unknown format; figure functions raise ``ValueError`` for bad
    options."""
    from hpcrail.results.plotting import save_options

    with save_options(format, dpi):
        return _run_figures(ds, out_dir, figures, **options)


def _run_figures(ds: xr.Dataset, out_dir, figures, **options) -> list:
    kind = kind_of(ds)
    declared = {f.name: f for f in kind.run_figures}
    if not declared:
        raise ValueError(f"model kind {kind.name!r} declares no run figures")
    have = available(ds)
    if figures:
        unknown = [n for n in figures if n not in declared]
        if unknown:
            raise ValueError(f"unknown figure {', '.join(unknown)} for model kind {kind.name!r}; allowed: "
                             f"{', '.join(declared)}")
        missing = [n for n in figures if declared[n] not in have]
        if missing:
            raise ValueError(f"figure {', '.join(missing)} needs data this dataset does not have "
                             f"({'; '.join(declared[n].description for n in missing)}); available: "
                             f"{', '.join(f.name for f in have) or 'none'}")
        chosen = [declared[n] for n in figures]
    else:
        chosen = have
        if not chosen:
            raise ValueError(f"none of the run figures of model kind {kind.name!r} ({', '.join(declared)}) "
                             "applies to this dataset")
    out: list = []
    for f in chosen:
        out += list(f.make(ds, out_dir, **options))
    return out


__all__ = ["run_figures", "available", "kind_of"]
