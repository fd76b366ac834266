"""Hidden-vehicle partition of long consists (paper 000 §2, MODELS.md §2).

* :mod:`.layout` — boundary vehicles and blocks of hidden vehicles (automatic or explicit);
* :mod:`.ltd` — the partitioned LTD right-hand side and observer, thread backend (numba prange);
* :mod:`.mpi` — the MPI backend (mpi4py + numba calls of ``MPI_Allgatherv``), imported on demand;
* :mod:`.run` — backend choice and the drivers used by :func:`hpcrail.simulate.run_ltd`.
"""
