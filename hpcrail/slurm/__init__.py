"""Slurm deployment: user site settings (:mod:`.site`), job-script rendering and submission."""
