"""Helpers shared by the tests (import as ``from helpers.ltd import ...``; ``tests/`` is on ``sys.path`` under
pytest): paths and xdist groups (:mod:`helpers.paths`), LTD scenario builders (:mod:`helpers.ltd`), sweep
specs and result comparisons (:mod:`helpers.sweep`), basic integrator problems (:mod:`helpers.basic_problems`)
and the validation fuzz corpus (:mod:`helpers.fuzz_corpus`).  ``conftest.py`` keeps only fixtures."""
