"""Repository paths and the xdist group of the mixed-train tests."""
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"

#: tests that run mixed trains share one xdist worker (``--dist loadgroup``): their kernels (the LTD consist,
#: the multibody wagon and their coupling, for each integrator) then compile once instead of on both workers
MIXED_GROUP = pytest.mark.xdist_group("mixed_train")


def mixed_grouped(values, is_mixed):
    """``values`` for ``parametrize``, those for which ``is_mixed(value)`` holds in :data:`MIXED_GROUP`."""
    return [pytest.param(v, marks=MIXED_GROUP) if is_mixed(v) else v for v in values]
