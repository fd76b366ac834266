"""Generic configuration machinery: YAML loading with component files and CSV tables, ``--set``
overrides, validation that names the file, field, value and what is allowed, the canonical form and
hash, the one strict base model, and the integration-method catalogue.

Scenario schemas belong to their model kind (``hpcrail.kinds.<kind>.schema``); loading a scenario of
any kind is :func:`hpcrail.kinds.load_scenario`.  This package imports no model, partition or kind.
"""
from __future__ import annotations

from hpcrail.config.base import Strict
from hpcrail.config.errors import ConfigError, ConfigIssue
from hpcrail.config.loading import (
    Document, apply_overrides, canonical_dict, canonical_yaml, config_hash, load_document, validate,
)

__all__ = ["ConfigError", "ConfigIssue", "Document", "Strict", "load_document", "apply_overrides", "validate",
           "canonical_dict", "canonical_yaml", "config_hash"]
