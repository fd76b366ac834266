"""Hidden-vehicle partition of long LTD consists (Bosso et al. 2024 §2).

* :mod:`.layout` — boundary vehicles and blocks of hidden vehicles (automatic or explicit), backend
  choice (no numba: validating a scenario uses it);
* :mod:`.ltd` — the partitioned LTD right-hand side and observer, thread backend (numba prange);
* :mod:`.mpi` — the MPI backend (mpi4py + numba calls of ``MPI_Allgatherv``), imported on demand.

The drivers that run a scenario on these kernels are :mod:`hpcrail.kinds.ltd.partitioned`.
"""
