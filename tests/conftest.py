"""Shared fixtures: paths to the repository's configs and a scratch directory; the process environment
restored after every test."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "configs"


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


#: tests that run mixed trains share one xdist worker (``--dist loadgroup``): their kernels (the LTD consist,
#: the multibody wagon and their coupling, for each integrator) then compile once instead of on both workers
MIXED_GROUP = pytest.mark.xdist_group("mixed_train")


def mixed_grouped(values, is_mixed):
    """``values`` for ``parametrize``, those for which ``is_mixed(value)`` holds in :data:`MIXED_GROUP`."""
    return [pytest.param(v, marks=MIXED_GROUP) if is_mixed(v) else v for v in values]
