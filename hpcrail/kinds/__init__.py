"""Model kinds: one package per kind, registered by one :class:`~hpcrail.kinds.descriptor.ModelKind`.

The registry maps the ``model:`` value of a scenario to the module defining the kind's ``KIND``; the
module is imported when the kind is first needed, and its descriptor is checked then (a missing or
invalid obligation raises :class:`~hpcrail.kinds.descriptor.KindError` naming it).  A kind's package
imports only its schema and output declarations at module level, so loading and validating a
scenario never imports numba or the integrators.

>>> from hpcrail.kinds import load_scenario, get
>>> sc, doc = load_scenario("configs/trains/demo.yaml", ["simulation.duration_s=60"])
>>> get(sc.model).outputs_for(sc)          # what a run of it stores
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Iterable

from hpcrail.config.errors import ConfigError, ConfigIssue
from hpcrail.config.loading import Document, apply_overrides, load_document, validate
from hpcrail.kinds.descriptor import NOT_BATCHABLE, Batch, Figure, KindError, ModelKind, lazy

#: the kind of a scenario without a ``model:`` key
DEFAULT_KIND = "ltd"

#: kind name -> module defining ``KIND`` (one line per kind)
_MODULES: dict[str, str] = {
    "ltd": "hpcrail.kinds.ltd",
    "planar_train": "hpcrail.kinds.planar_train",
    "vertical": "hpcrail.kinds.vertical",
    "railway_vehicle": "hpcrail.kinds.railway_vehicle",
    "mixed_train": "hpcrail.kinds.mixed_train",
}
_LOADED: dict[str, ModelKind] = {}


def register(name: str, module: str) -> None:
    """Register the kind ``name`` defined by ``module`` (its ``KIND``), e.g. a kind outside hpcrail."""
    if not name.isidentifier():
        raise KindError(f"a model kind's name must be an identifier, got {name!r}")
    _MODULES[name] = module
    _LOADED.pop(name, None)


def names() -> list[str]:
    """Names of the registered kinds (sorted)."""
    return sorted(_MODULES)


def get(name: str) -> ModelKind:
    """The descriptor of kind ``name`` (its module imported and checked on first use).

    Raises ``KeyError`` naming the registered kinds for an unknown name, :class:`KindError` when the
    module does not define a valid ``KIND`` for that name."""
    kind = _LOADED.get(name)
    if kind is not None:
        return kind
    if name not in _MODULES:
        raise KeyError(f"unknown model kind {name!r}; registered: {', '.join(names())}")
    module = importlib.import_module(_MODULES[name])
    kind = getattr(module, "KIND", None)
    if not isinstance(kind, ModelKind):
        raise KindError(f"module {_MODULES[name]} registered for kind {name!r} defines no KIND = ModelKind(...)")
    if kind.name != name:
        raise KindError(f"module {_MODULES[name]} is registered as kind {name!r} but its KIND is {kind.name!r}")
    _LOADED[name] = kind
    return kind


def kind_name(scenario) -> str:
    return getattr(scenario, "model", DEFAULT_KIND)


def of(scenario) -> ModelKind:
    """The descriptor of a validated scenario's kind."""
    return get(kind_name(scenario))


def validate_document(doc: Document):
    """Validate a loaded document against the schema of its ``model:`` kind (default ``ltd``).

    Raises :class:`~hpcrail.config.ConfigError` with every problem (file, field, value, allowed)."""
    tree = doc.tree
    name = tree.get("model", DEFAULT_KIND) if isinstance(tree, dict) else DEFAULT_KIND
    if not isinstance(name, str) or name not in _MODULES:
        raise ConfigError([ConfigIssue(doc.file_for(("model",)), "model", "unknown scenario model", name,
                                       ", ".join(names()))])
    kind = get(name)
    try:
        return validate(kind.schema, doc, kind.checks)
    except ConfigError as exc:
        _kind_methods(kind, exc.issues)
        raise


def _kind_methods(kind: ModelKind, issues: list) -> None:
    """An unknown ``integrator.method`` lists the methods the kind runs with (a kind's schema may narrow the
    catalogue with ``integrator_methods()``: a mixed train takes explicit methods only)."""
    narrow = getattr(kind.schema, "integrator_methods", None)
    if narrow is None:
        return
    import difflib

    allowed = narrow()
    for i in issues:
        if i.path == "integrator.method" and i.message.startswith("unknown integrator"):
            i.allowed = ", ".join(allowed)
            head = i.message.split(" (did you mean")[0]
            close = difflib.get_close_matches(str(i.value).lower(), allowed, n=1, cutoff=0.6) \
                if isinstance(i.value, str) else []
            i.message = head + (f" (did you mean {close[0]!r}?)" if close else "")


def load_scenario(path: str | Path, overrides: Iterable[str] = ()):
    """Load, override and validate a scenario file.

    Returns ``(scenario, document)``.  Raises :class:`~hpcrail.config.ConfigError` listing every
    problem (file, dotted field, value, allowed values), bad ``--set`` paths included.
    """
    doc = load_document(path)
    issues = []
    try:
        apply_overrides(doc, overrides)
    except ConfigError as exc:  # report bad --set paths together with the schema's findings
        issues += exc.issues
    try:
        sc = validate_document(doc)
    except ConfigError as exc:
        raise ConfigError(issues + exc.issues) from None
    if issues:
        raise ConfigError(issues)
    return sc, doc


__all__ = ["DEFAULT_KIND", "ModelKind", "Batch", "NOT_BATCHABLE", "Figure", "KindError", "lazy", "register",
           "names", "get", "of", "kind_name", "validate_document", "load_scenario"]
