"""Hidden-vehicle partition of a consist (Bosso et al. 2024 §2, MODELS.md §2): boundary vehicles and blocks.

Bosso et al. 2024 models a long train in a multibody code as a few ordinary bodies (*boundary vehicles*:
the locomotives, some wagons) and user force elements that each own the longitudinal states of a
*block of hidden vehicles* between two boundary vehicles and return the two in-train forces at the
block's ends ("trailing forces").  hpcrail uses the same decomposition to evaluate the LTD
right-hand side in parallel: every block, together with the boundary vehicles just ahead of it, is
one contiguous *vehicle range* evaluated by :func:`hpcrail.models.ltd.kernel.ltd_eval_range`.

Vehicle numbers in configs are 1-based (1 = head); everything here is 0-based.
"""
from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass(frozen=True)
class Layout:
    """A partition of ``n_vehicles`` vehicles.

    ``boundary``: 0-based boundary vehicles (sorted); ``blocks``: hidden-vehicle blocks as 0-based
    half-open ranges ``(first, end)``, head to tail.
    """

    n_vehicles: int
    boundary: tuple[int, ...]
    blocks: tuple[tuple[int, int], ...]

    @property
    def n_blocks(self) -> int:
        return len(self.blocks)

    def range_starts(self) -> np.ndarray:
        """int64[P+1]: vehicle range b is ``[starts[b], starts[b+1])`` — block b preceded by the boundary
        vehicles between block b−1 and block b (range 0 starts at the head, the last range ends at the
        tail and so also holds the boundary vehicles behind the last block)."""
        starts = [0] + [z for (_a, z) in self.blocks[:-1]] + [self.n_vehicles]
        return np.asarray(starts, dtype=np.int64)

    def describe(self) -> str:
        """One line: ``4 blocks of 59, 59, 59, 59 hidden vehicles; boundary vehicles 1, 2, 62, ...``."""
        sizes = ", ".join(str(z - a) for a, z in self.blocks)
        bnd = ", ".join(str(b + 1) for b in self.boundary)
        return f"{self.n_blocks} block{'s' if self.n_blocks != 1 else ''} of {sizes} hidden vehicles; " \
               f"boundary vehicles {bnd or '(none)'}"


def automatic_boundaries(n_vehicles: int, n_blocks: int) -> list[int]:
    """1-based boundary vehicles for ``n_blocks`` blocks of (nearly) equal size: the head, the tail and
    one vehicle between consecutive blocks.  Needs ``n_vehicles >= 2 n_blocks + 1``."""
    hidden = n_vehicles - (n_blocks + 1)
    if n_blocks < 1 or hidden < n_blocks:
        raise ValueError(f"{n_blocks} blocks need at least {2 * n_blocks + 1} vehicles, the consist has {n_vehicles}")
    q, r = divmod(hidden, n_blocks)
    bnd = [0]
    pos = 0
    for b in range(n_blocks):
        pos += 1 + q + (1 if b < r else 0)
        bnd.append(pos)
    return [b + 1 for b in bnd]


def layout_from_boundaries(n_vehicles: int, boundary_1based: list[int]) -> Layout:
    """Blocks = the maximal runs of non-boundary vehicles.  Raises ``ValueError`` for numbers out of
    range, unsorted/duplicate numbers or a partition without any hidden vehicle."""
    b = list(boundary_1based)
    if any(not 1 <= v <= n_vehicles for v in b):
        raise ValueError(f"boundary vehicles must be within 1..{n_vehicles}")
    if any(y <= x for x, y in zip(b, b[1:])):
        raise ValueError("boundary vehicles must be strictly increasing")
    zb = [v - 1 for v in b]
    is_b = np.zeros(n_vehicles, bool)
    is_b[zb] = True
    blocks = []
    j = 0
    while j < n_vehicles:
        if is_b[j]:
            j += 1
            continue
        a = j
        while j < n_vehicles and not is_b[j]:
            j += 1
        blocks.append((a, j))
    if not blocks:
        raise ValueError("every vehicle is a boundary vehicle: no block of hidden vehicles is left")
    return Layout(n_vehicles, tuple(zb), tuple(blocks))


def layout_from_blocks(n_vehicles: int, n_blocks: int) -> Layout:
    """Automatic layout of ``n_blocks`` equal blocks (see :func:`automatic_boundaries`)."""
    return layout_from_boundaries(n_vehicles, automatic_boundaries(n_vehicles, n_blocks))


def partition_issues(spec, n_vehicles: int) -> list[tuple]:
    """Problems of a ``partition:`` block (:class:`hpcrail.kinds.ltd.schema.PartitionSpec`) for a consist
    of ``n_vehicles``: a list of ``(location tuple, message, value, allowed)``."""
    issues = []
    if spec.boundary_vehicles is not None:
        b = spec.boundary_vehicles
        bad = [v for v in b if not 1 <= v <= n_vehicles]
        if bad:
            issues.append((("boundary_vehicles",), "boundary vehicle number out of range", bad, f"1..{n_vehicles}"))
        elif any(y <= x for x, y in zip(b, b[1:])):
            issues.append((("boundary_vehicles",), "boundary vehicles must be strictly increasing (no duplicates)",
                           b, None))
        else:
            try:
                lay = layout_from_boundaries(n_vehicles, b)
            except ValueError as exc:
                issues.append((("boundary_vehicles",), str(exc), b, None))
            else:
                if spec.blocks is not None and spec.blocks != lay.n_blocks:
                    issues.append((("blocks",), f"the boundary vehicles give {lay.n_blocks} blocks of hidden vehicles "
                                   f"({lay.describe()})", spec.blocks, str(lay.n_blocks)))
    elif spec.blocks is not None and n_vehicles < 2 * spec.blocks + 1:
        issues.append((("blocks",), f"{spec.blocks} blocks need at least {2 * spec.blocks + 1} vehicles "
                       f"(a boundary vehicle between blocks and at both ends); the consist has {n_vehicles}",
                       spec.blocks, f"1..{max(1, (n_vehicles - 1) // 2)}"))
    return issues


def scenario_layout(spec, n_vehicles: int, default_blocks: int) -> Layout:
    """The layout a scenario asks for; ``default_blocks`` (threads or MPI ranks) when it gives neither
    ``blocks`` nor ``boundary_vehicles`` (reduced so that every block keeps a hidden vehicle)."""
    if spec.boundary_vehicles is not None:
        return layout_from_boundaries(n_vehicles, spec.boundary_vehicles)
    p = spec.blocks if spec.blocks is not None else max(1, min(default_blocks, (n_vehicles - 1) // 2))
    return layout_from_blocks(n_vehicles, p)


def rank_blocks(n_blocks: int, n_ranks: int) -> list[tuple[int, int]]:
    """Contiguous groups of blocks per MPI rank: rank r evaluates blocks ``[lo, hi)``.  Raises
    ``ValueError`` when there are more ranks than blocks."""
    if n_ranks > n_blocks:
        raise ValueError(f"{n_ranks} MPI ranks but only {n_blocks} blocks of hidden vehicles: give "
                         f"partition.blocks >= {n_ranks} or start fewer ranks")
    return [(r * n_blocks // n_ranks, (r + 1) * n_blocks // n_ranks) for r in range(n_ranks)]


def thread_count(requested: int | None) -> int:
    """Threads for the thread backend: ``requested`` capped at numba's pool size (NUMBA_NUM_THREADS)."""
    from hpcrail import _numba  # noqa: F401  (threading set-up before numba reads its configuration)
    import numba

    pool = numba.config.NUMBA_NUM_THREADS
    return max(1, min(requested or pool, pool))
