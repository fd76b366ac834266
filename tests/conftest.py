"""Shared fixtures: paths to the repository's configs and a scratch directory; the process environment
restored after every test."""
import os
from pathlib import Path

import pytest

from helpers.paths import CONFIGS, MIXED_GROUP, ROOT, kernel_group, mixed_grouped  # noqa: F401 (the helpers live in tests/helpers)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Put the tests that compile the same kernels on one xdist worker (``--dist loadgroup``; before xdist's own
    hook, which reads the marks): :data:`helpers.paths.KERNEL_GROUPS`, for tests without an ``xdist_group``."""
    for item in items:
        if next(item.iter_markers("xdist_group"), None) is not None:
            continue
        group = kernel_group(item.nodeid)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


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

