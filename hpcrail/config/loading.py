"""YAML loading with component files, CSV tables and ``--set`` overrides; canonical form and hash.

Rules (documented in docs/configuration.md):

* A string value ending in ``.yaml``/``.yml`` is replaced by the content of that file, resolved
  relative to the file that contains the string (one wagon type reused by several trains).
* A mapping ``{csv: PATH}`` is replaced by the CSV table as a list of records (one mapping per
  row, numbers converted, lines starting with ``#`` are comments: keep the data's source there).
* ``--set dotted.path=value`` overrides any field after the files are resolved; the value is parsed
  as YAML (``--set integrator.method=dopri5``, ``--set consist.2.count=60``).  Sweeps vary the same
  paths.
* The canonical form of a validated config is its full JSON dump (defaults included, keys
  sorted); its SHA-256 identifies a scenario (resume, provenance).
"""
from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
from pathlib import Path
from typing import Any, Iterable

import yaml
from pydantic import BaseModel, ValidationError

from hpcrail.config.errors import ConfigError, ConfigIssue, format_path

_INCLUDE_SUFFIXES = (".yaml", ".yml")


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys (a silent override is a classic config bug)."""


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _num(s: str):
    """Parse a YAML/CSV scalar, accepting ``1e7`` as a float (YAML 1.1 would keep it a string)."""
    if isinstance(s, str):
        t = s.strip()
        if t == "":
            return None
        try:
            return int(t)
        except ValueError:
            pass
        try:
            return float(t)
        except ValueError:
            return s
    return s


def _fix_numbers(obj):
    if isinstance(obj, dict):
        return {k: _fix_numbers(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_fix_numbers(v) for v in obj]
    if isinstance(obj, str):
        v = _num(obj)
        return v if isinstance(v, (int, float)) else obj
    return obj


@dataclasses.dataclass
class Document:
    """A configuration tree with the file each part came from (for error messages)."""

    tree: Any
    root_file: str
    origins: dict = dataclasses.field(default_factory=dict)  # loc tuple -> file name

    def file_for(self, loc: Iterable) -> str:
        """The file holding the value at ``loc`` (longest matching prefix)."""
        loc = tuple(loc)
        for i in range(len(loc), -1, -1):
            f = self.origins.get(loc[:i])
            if f is not None:
                return f
        return self.root_file


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def read_yaml(path: Path) -> Any:
    """Parse one YAML file; raises :class:`ConfigError` naming the file and line on syntax errors."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ConfigError([ConfigIssue(_display(Path(path)), "(file)", f"cannot read file: {exc.strerror}")])
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(file)"
        msg = getattr(exc, "problem", None) or str(exc)
        raise ConfigError([ConfigIssue(_display(Path(path)), where, f"YAML syntax error: {msg}")])
    return _fix_numbers(data)


def read_csv_records(path: Path) -> list[dict]:
    """Read a CSV table (``#`` comment lines allowed) as a list of records with numeric values."""
    lines = [ln for ln in Path(path).read_text().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    return [{k.strip(): _num(v) for k, v in r.items() if k is not None and k.strip()} for r in rows]


def load_document(path: str | Path) -> Document:
    """Load a YAML config, resolving component files and CSV tables recursively.

    Raises :class:`ConfigError` (missing file, YAML syntax, include cycle) naming the file.
    """
    path = Path(path)
    doc = Document(tree=None, root_file=_display(path))
    issues: list[ConfigIssue] = []

    def resolve(node, here: Path, loc: tuple, stack: tuple):
        if isinstance(node, dict):
            if set(node) == {"csv"} and isinstance(node["csv"], str):
                p = (here.parent / node["csv"]).resolve()
                if not p.is_file():
                    issues.append(ConfigIssue(_display(here), format_path(loc + ("csv",)),
                                              "CSV file not found", node["csv"]))
                    return []
                doc.origins[loc] = _display(p)
                return read_csv_records(p)
            return {k: resolve(v, here, loc + (k,), stack) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v, here, loc + (i,), stack) for i, v in enumerate(node)]
        if isinstance(node, str) and node.lower().endswith(_INCLUDE_SUFFIXES):
            p = (here.parent / node).resolve()
            if not p.is_file():
                issues.append(ConfigIssue(_display(here), format_path(loc), "component file not found", node))
                return None
            if p in stack:
                issues.append(ConfigIssue(_display(here), format_path(loc), "include cycle", node))
                return None
            doc.origins[loc] = _display(p)
            return resolve(read_yaml(p), p, loc, stack + (p,))
        return node

    root = read_yaml(path)
    if not isinstance(root, dict):
        raise ConfigError([ConfigIssue(doc.root_file, "(top level)", "a configuration must be a mapping", root)])
    doc.tree = resolve(root, path.resolve(), (), (path.resolve(),))
    if issues:
        raise ConfigError(issues)
    return doc


def parse_override(text: str) -> tuple[list, Any]:
    """Split ``a.b.0.c=value`` into its path parts and the YAML-parsed value."""
    if "=" not in text:
        raise ValueError(f"--set expects dotted.path=value, got {text!r}")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise ValueError(f"--set has an empty path component in {text!r}")
    try:
        value = yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError:
        value = raw
    return key.split("."), _fix_numbers(value)


def set_path(tree: Any, parts: list, value: Any) -> None:
    """Set ``tree[parts...] = value``; list elements are addressed by index.

    Missing mapping keys are created (the schema then rejects unknown fields with a clear
    message); raises ``KeyError``/``IndexError`` with the failing prefix for impossible paths.
    """
    node = tree
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            try:
                idx = int(part)
            except ValueError:
                raise KeyError(f"{'.'.join(map(str, parts[:i]))} is a list: use an index, not {part!r}")
            if not -len(node) <= idx < len(node):
                raise IndexError(f"{'.'.join(map(str, parts[:i]))} has {len(node)} entries, no index {idx}")
            if last:
                node[idx] = value
            else:
                node = node[idx]
        elif isinstance(node, dict):
            if last:
                node[part] = value
            else:
                if node.get(part) is None:
                    node[part] = {}
                node = node[part]
        else:
            raise KeyError(f"{'.'.join(map(str, parts[:i]))} is a value ({node!r}), it has no field {part!r}")


def apply_overrides(doc: Document, overrides: Iterable[str]) -> None:
    """Apply ``--set`` overrides in order; all bad ones are reported together."""
    issues = []
    for text in overrides or ():
        try:
            parts, value = parse_override(text)
            set_path(doc.tree, parts, value)
            doc.origins[tuple(int(p) if p.isdigit() else p for p in parts)] = "--set"
        except (ValueError, KeyError, IndexError) as exc:
            msg = exc.args[0] if exc.args else str(exc)
            issues.append(ConfigIssue("--set", text, str(msg)))
    if issues:
        raise ConfigError(issues)


def pydantic_issues(doc: Document, exc: ValidationError) -> list[ConfigIssue]:
    """Turn pydantic's errors into :class:`ConfigIssue` lines (file, path, value, allowed)."""
    out = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "tagged-"))))
        loc = _drop_union_tags(doc.tree, loc)
        typ = err["type"]
        msg = err["msg"]
        allowed = None
        if typ == "extra_forbidden":
            parent = get_model_fields_at(doc, loc[:-1])
            msg = f"unknown key {loc[-1]!r}"
            allowed = ", ".join(parent) if parent else None
        elif typ in ("literal_error", "enum"):
            allowed = (err.get("ctx") or {}).get("expected")
            msg = "value not allowed"
        elif typ == "value_error":
            msg = msg.removeprefix("Value error, ")
        value = err.get("input")
        issue = ConfigIssue(doc.file_for(loc), format_path(loc), msg, allowed=allowed)
        if typ != "missing":
            issue.value = value
        out.append(issue)
    return out


def _drop_union_tags(tree: Any, loc: tuple) -> tuple:
    """Remove the tag pydantic inserts into the location of a discriminated-union member
    (``track.irregularity.psd.spectrum`` → ``track.irregularity.spectrum``): a part that is not a key
    of the document's mapping there but equals its ``kind`` value."""
    out = []
    node = tree
    for part in loc:
        if isinstance(node, dict) and part not in node and node.get("kind") == part:
            continue
        out.append(part)
        if isinstance(node, dict):
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            node = None
    return tuple(out)


_SCHEMA_FIELD_HINTS: dict = {}


def get_model_fields_at(doc: Document, loc: tuple) -> list[str]:
    """Allowed keys at ``loc`` (filled by :func:`validate` from the schema being validated)."""
    return _SCHEMA_FIELD_HINTS.get("fields_at", lambda loc: [])(loc)


def _resolve_model(cls: Any, node: Any) -> Any:
    """Unwrap ``Annotated``/``Optional``/``Union`` to the pydantic model that describes ``node``: for a
    union of models, the member whose ``kind`` literal matches ``node["kind"]`` (else the first)."""
    import types as _types
    import typing

    for _ in range(10):
        origin = typing.get_origin(cls)
        if origin is typing.Annotated:
            cls = typing.get_args(cls)[0]
            continue
        if origin in (typing.Union, _types.UnionType):
            members = [typing.get_args(a)[0] if typing.get_origin(a) is typing.Annotated else a
                       for a in typing.get_args(cls) if a is not type(None)]
            models = [a for a in members if isinstance(a, type) and issubclass(a, BaseModel)]
            if models:
                if isinstance(node, dict) and "kind" in node:
                    for mdl in models:
                        f = mdl.model_fields.get("kind")
                        if f is not None and node["kind"] in typing.get_args(f.annotation):
                            return mdl
                return models[0]
            if len(members) == 1:
                cls = members[0]
                continue
        return cls
    return cls


def _fields_at(model_cls: type[BaseModel], tree: Any, loc: tuple) -> list[str]:
    """Walk the pydantic model along ``loc`` and return the field names of the model found there."""
    import typing

    cls: Any = model_cls
    node = tree
    for part in loc:
        cls = _resolve_model(cls, node)
        if isinstance(cls, type) and issubclass(cls, BaseModel):
            f = cls.model_fields.get(part)
            if f is None:
                return []
            cls = f.annotation
            node = node.get(part) if isinstance(node, dict) else None
            continue
        origin = typing.get_origin(cls)
        args = typing.get_args(cls)
        if origin in (list, tuple) and args:
            cls = args[0]
            node = node[part] if isinstance(node, list) and isinstance(part, int) and part < len(node) else None
        elif origin is dict and len(args) == 2:
            cls = args[1]
            node = node.get(part) if isinstance(node, dict) else None
        else:
            return []
    cls = _resolve_model(cls, node)
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        return sorted(cls.model_fields)
    return []


def validate(model_cls: type[BaseModel], doc: Document, checks=None):
    """Validate ``doc.tree`` against ``model_cls``; then run ``checks(model) -> list[ConfigIssue]``
    (cross-field rules).  Raises :class:`ConfigError` with every issue found."""
    _SCHEMA_FIELD_HINTS["fields_at"] = lambda loc: _fields_at(model_cls, doc.tree, loc)
    try:
        model = model_cls.model_validate(doc.tree)
    except ValidationError as exc:
        raise ConfigError(pydantic_issues(doc, exc)) from None
    finally:
        _SCHEMA_FIELD_HINTS.pop("fields_at", None)
    if checks is not None:
        issues = checks(model, doc)
        if issues:
            raise ConfigError(issues)
    return model


def canonical_dict(model: BaseModel) -> dict:
    """Full JSON-compatible dump (defaults included) used for hashing and provenance."""
    return json.loads(model.model_dump_json())


def canonical_yaml(model: BaseModel) -> str:
    """The canonical config as YAML (sorted keys): what a result stores to be re-run next year."""
    return yaml.safe_dump(canonical_dict(model), sort_keys=True, default_flow_style=None, width=100)


def config_hash(model_or_dict) -> str:
    """SHA-256 (hex, 16 chars) of the canonical JSON of a validated config."""
    d = canonical_dict(model_or_dict) if isinstance(model_or_dict, BaseModel) else model_or_dict
    blob = json.dumps(d, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


