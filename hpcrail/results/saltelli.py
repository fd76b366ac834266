"""The Saltelli scheme of variance-based sensitivity analysis (Sobol' indices; Saltelli 2002, Saltelli et
al. 2010), shared by the sweep (which draws the points, :mod:`hpcrail.sweep.spec`) and the analysis (which
reads them back, :mod:`hpcrail.analysis.sensitivity`): SALib's sampler over the unit hypercube and the
layout of its blocks (Herman & Usher 2017).
"""
from __future__ import annotations

import numpy as np


def saltelli_problem(d: int) -> dict:
    """SALib's problem of a saltelli design with ``d`` parameters: the unit hypercube (every parameter is
    mapped from [0, 1) through its inverse CDF, which leaves the Sobol' indices unchanged)."""
    return {"num_vars": d, "names": [f"u{j}" for j in range(d)], "bounds": [[0.0, 1.0]] * d}


def saltelli_unit(d: int, n: int, seed: int, second_order: bool = False) -> np.ndarray:
    """float64[n·(d+2), d] (``second_order``: n·(2d+2)) points of SALib's Saltelli scheme over the unit
    hypercube (``SALib.sample.sobol.sample``, scrambled Sobol' sequence seeded with ``seed``), in SALib's
    block order — what :func:`SALib.analyze.sobol.analyze` expects (Saltelli 2002; Saltelli et al. 2010)."""
    from SALib.sample import sobol as sobol_sample

    return np.asarray(sobol_sample.sample(saltelli_problem(d), int(n), calc_second_order=bool(second_order),
                                          scramble=True, seed=int(seed)), dtype=float)


def saltelli_block(d: int, second_order: bool = False) -> int:
    """Scenarios per base sample of a saltelli design: d + 2 (2d + 2 with second-order indices)."""
    return 2 * d + 2 if second_order else d + 2


__all__ = ["saltelli_problem", "saltelli_unit", "saltelli_block"]
