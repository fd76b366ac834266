"""Typed configuration: YAML scenarios with component files, ``--set`` overrides, validation that
names the file, field, value and what is allowed, and a canonical hash.

Scenario kinds register here by their ``model:`` key (default ``ltd``) so that ``hpcrail run`` can
load any of them; each kind supplies a pydantic schema and a cross-field check function.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from hpcrail.config.errors import ConfigError, ConfigIssue
from hpcrail.config.loading import (
    Document, apply_overrides, canonical_dict, canonical_yaml, config_hash, load_document, validate,
)

_KINDS: dict[str, tuple[type, Callable | None]] = {}

#: modules whose import registers further scenario kinds (and their runners); one line per feature
_KIND_MODULES: list[str] = ["hpcrail.kinds.vertical", "hpcrail.kinds.planar_train"]


def register_kind(name: str, schema: type, checks: Callable | None = None) -> None:
    """Register a scenario kind selected by the top-level ``model:`` key (the schema must have a
    ``model: Literal[name]`` field so that the canonical form records the kind)."""
    _KINDS[name] = (schema, checks)


def kinds() -> list[str]:
    _ensure_builtin()
    return sorted(_KINDS)


def _ensure_builtin() -> None:
    if "ltd" not in _KINDS:
        import importlib

        from hpcrail.config.scenario import Scenario, check_scenario

        register_kind("ltd", Scenario, check_scenario)
        for mod in _KIND_MODULES:
            importlib.import_module(mod)


def validate_document(doc: Document):
    """Validate a loaded document against the schema of its ``model:`` kind."""
    _ensure_builtin()
    tree = doc.tree
    kind = tree.get("model", "ltd") if isinstance(tree, dict) else "ltd"
    if kind not in _KINDS:
        raise ConfigError([ConfigIssue(doc.file_for(("model",)), "model", "unknown scenario model", kind,
                                       ", ".join(sorted(_KINDS)))])
    schema, checks = _KINDS[kind]
    return validate(schema, doc, checks)


def load_scenario(path: str | Path, overrides: Iterable[str] = ()):
    """Load, override and validate a scenario file.

    Returns ``(scenario, document)``.  Raises :class:`ConfigError` listing every problem (file,
    dotted field, value, allowed values).
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


__all__ = ["ConfigError", "ConfigIssue", "Document", "load_scenario", "load_document", "apply_overrides",
           "validate_document", "canonical_dict", "canonical_yaml", "config_hash", "register_kind", "kinds"]
