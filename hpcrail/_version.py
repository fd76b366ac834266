"""The package version, in a module of its own so that any layer can read it without importing the package
root (whose lazy attributes reach the Python API, :mod:`hpcrail.api`, the top layer)."""

__version__ = "0.1.0"
