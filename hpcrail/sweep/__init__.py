"""Sweeps: thousands of scenario variations on dask, one resumable zarr store per study.

``spec`` (YAML spec → deterministic scenarios and ids), ``store`` (the study's zarr layout: the run
schema stacked along ``scenario``), ``worker`` (a task: run a batch, write its chunks, mark it
done), ``runner`` (the driver: resume, bounded submission, progress), ``cluster`` (where tasks run).
"""
from hpcrail.sweep.spec import Expansion, SweepSpec, expand, load_spec

__all__ = ["Expansion", "SweepSpec", "expand", "load_spec"]
