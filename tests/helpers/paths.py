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


#: tests grouped by the kernels they compile, for those not marked otherwise: ``(group, test of the node id)``.
#: From an empty numba cache both xdist workers compiled these kernels, each for its own tests (measured with
#: tests/helpers/compile_profile.py, stop 36): the planar train's right-hand side (planar_eval, 49 s on each
#: worker), the partitioned LTD kernels with BDF (~30 s), the multirate BDF on the test problems (~19 s).
KERNEL_GROUPS = (
    ("planar_train", lambda nodeid: "planar_train" in nodeid or "[couplers/" in nodeid),
    ("ltd_bdf2", lambda nodeid: "mrbdf2" in nodeid),
    ("partition", lambda nodeid: nodeid.startswith("tests/test_partition.py") or "_blocks.yaml]" in nodeid),
    # the shipped pneumatic trip runs in two passes (kinds/ltd/two_pass.py): its two kernels took 192 s to compile
    # from an empty cache (stop 45); the brake tests (test_brakes.py, group "brakes") compile them too
    ("brakes", lambda nodeid: "[trains/train4_pneumatic.yaml]" in nodeid),
)


def kernel_group(nodeid: str) -> str | None:
    """The group of :data:`KERNEL_GROUPS` a test belongs to, or None."""
    for name, match in KERNEL_GROUPS:
        if match(nodeid):
            return name
    return None
