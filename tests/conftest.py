"""Shared fixtures: paths to the repository's configs and a scratch directory; the process environment
restored after every test."""
import os
from pathlib import Path

import pytest

from helpers.paths import CONFIGS, MIXED_GROUP, ROOT, mixed_grouped  # noqa: F401 (the helpers live in tests/helpers)


@pytest.fixture
def configs_dir() -> Path:
    return CONFIGS


@pytest.fixture
def repo_root() -> Path:
    return ROOT


#: variables dask's Nanny writes into ``os.environ`` of the process that starts a LocalCluster
#: (``distributed.nanny.pre-spawn-environ``), never restored by dask
_NANNY_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_")


@pytest.fixture(autouse=True)
def _restore_nanny_environment():
    """A test that started a dask cluster leaves OMP_NUM_THREADS=1 behind; the tests after it in the same
    process then depended on the order (the Slurm test cluster sized its node with ``nproc``, which
    honours OMP_NUM_THREADS, got 1 CPU and a 2-task job waited forever)."""
    before = {k: os.environ.get(k) for k in _NANNY_ENV}
    yield
    for k, v in before.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v

