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
import difflib
import hashlib
import io
import json
import math
import re
import types as _types
import typing
from pathlib import Path
from typing import Any, Iterable

import yaml
from pydantic import BaseModel, ValidationError

from hpcrail.config.errors import (
    _MISSING, WITHHELD, ConfigError, ConfigIssue, ConfigValueError, content_free, content_summary, format_path,
)

#: largest component file (YAML or CSV) read [bytes]: configuration files are small
MAX_FILE_BYTES = 64 * 2 ** 20
#: largest YAML file parsed [bytes] (YAML parses at ~1 MB/s; tables of 100 000 rows belong in CSV files)
MAX_YAML_BYTES = 8 * 2 ** 20
#: most alias uses (``*name``) in one YAML document: hpcrail's configs use none; a few hundred bytes of
#: nested aliases ("billion laughs") would expand to 10⁹ values
MAX_YAML_ALIASES = 100
#: most values (scalars, lists and mappings) of one YAML document once its aliases are expanded
MAX_YAML_VALUES = 2_000_000
#: deepest nesting of lists and mappings in one YAML document
MAX_YAML_DEPTH = 64

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
            x = float(t)
        except ValueError:
            return s
        if not math.isfinite(x) and not re.fullmatch(r"[-+]?\.(nan|NaN|NAN|inf|Inf|INF)", t):
            return s    # the words nan / inf / infinity are text (YAML's non-finite floats are .nan, .inf)
        return x
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
    #: displayed name of every file read from outside the scenario's folder -> where it was included
    outside: dict = dataclasses.field(default_factory=dict)
    #: displayed name of every file read (the root and each component) -> its absolute path
    sources: dict = dataclasses.field(default_factory=dict)
    #: what validation found unusual but allowed (:func:`unusual_values`): one :class:`ConfigIssue` each
    warnings: list = dataclasses.field(default_factory=list)

    def file_for(self, loc: Iterable) -> str:
        """The file holding the value at ``loc`` (longest matching prefix)."""
        loc = tuple(loc)
        for i in range(len(loc), -1, -1):
            f = self.origins.get(loc[:i])
            if f is not None:
                return f
        return self.root_file

    def path_for(self, loc: Iterable) -> Path | None:
        """Absolute path of the file holding the value at ``loc`` (None for ``--set`` values and documents
        not read from a file): data files named there are resolved against its folder."""
        return self.sources.get(self.file_for(loc))


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def near_miss(path: Path, with_score: bool = False):
    """A file or folder that ``path`` (which does not exist) was probably meant to name: the closest name
    (difflib, ratio ≥ 0.7) among the entries of the deepest existing folder on its way, with the rest of the
    path; None if nothing is close.  ``with_score``: ``(guess, ratio)`` (``(None, 0.0)``)."""
    path = Path(path)
    parts = path.parts
    found = (None, 0.0)
    for k in range(len(parts) - 1, 0, -1):
        base = Path(*parts[:k])
        if not base.is_dir():
            continue
        try:
            names = [e.name for e in base.iterdir()]
        except OSError:
            break
        scored = sorted(((difflib.SequenceMatcher(None, parts[k], n).ratio(), n) for n in names), reverse=True)
        if scored and scored[0][0] >= 0.7:
            guess = base.joinpath(scored[0][1], *parts[k + 1:])
            if guess.exists() or k == len(parts) - 1:
                found = (str(guess), scored[0][0])
        break
    return found if with_score else found[0]


def missing_text(shown: str, path: Path, what: str = "no such file", base: Path | None = None) -> str:
    """``"<what>: <resolved path> (did you mean <near miss>?)"`` — the resolved path only when it differs from
    the path as written; the near miss written as the path was (relative to ``base``, default the working
    directory)."""
    import os

    resolved = str(Path(path).resolve())
    text = what + (f": {resolved}" if resolved != shown else "")
    guess = near_miss(Path(path).resolve())
    if guess:
        text += f" (did you mean {os.path.relpath(guess, base or Path.cwd())!r}?)"
    return text


def _read_text(path: Path, what: str, limit: int = MAX_FILE_BYTES) -> str:
    """The text of a configuration file; raises :class:`ConfigError` for a missing, special, huge
    (``limit`` bytes), unreadable or binary file (never a traceback, never a read of ``/dev/zero``)."""
    path = Path(path)
    shown = _display(path)
    try:
        if not path.is_file():
            why = missing_text(shown, path) if not path.exists() else "not a regular file"
            raise ConfigError([ConfigIssue(shown, "(file)", f"cannot read {what}: {why}",
                                           allowed=f"a {what} (regular file)")])
        size = path.stat().st_size
        if size > limit:
            raise ConfigError([ConfigIssue(shown, "(file)", f"{what} too large ({size / 2 ** 20:.1f} MiB)",
                                           allowed=f"≤ {limit / 2 ** 20:g} MiB")])
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError([ConfigIssue(shown, "(file)", f"cannot read {what}: {exc.strerror}",
                                       allowed="a readable file")]) from None
    except UnicodeDecodeError:
        raise ConfigError([ConfigIssue(shown, "(file)", f"cannot read {what}: not UTF-8 text",
                                       allowed="a UTF-8 text file")]) from None


class YAMLRefused(ValueError):
    """A YAML document refused before it is built: aliases, size or nesting beyond the bounds
    (``allowed`` says them)."""

    def __init__(self, message: str, allowed: str):
        super().__init__(message)
        self.allowed = allowed


def _yaml_bounds(root) -> None:
    """Check a composed YAML node graph before it is built into Python objects: no recursive alias (a
    node inside itself), at most :data:`MAX_YAML_ALIASES` alias uses, :data:`MAX_YAML_VALUES` values once
    the aliases are expanded and :data:`MAX_YAML_DEPTH` levels of nesting.  Iterative (a deep document
    cannot exhaust Python's stack) and linear in the size of the file.  Raises :class:`YAMLRefused`."""
    size: dict = {}       # id(node) -> values once expanded (1 for a scalar)
    state: dict = {}      # id(node) -> 1 while its children are visited, 2 when done
    aliases = 0
    stack = [(root, 1, False)]
    while stack:
        node, depth, finished = stack.pop()
        k = id(node)
        kids = ([c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else
                list(node.value) if isinstance(node, yaml.SequenceNode) else [])
        if finished:
            size[k] = 1 + sum(size[id(c)] for c in kids)
            state[k] = 2
            if size[k] > MAX_YAML_VALUES:
                raise YAMLRefused(f"the document expands to more than {MAX_YAML_VALUES:,} values (its aliases "
                                  "repeat nested content)", f"at most {MAX_YAML_VALUES:,} values once aliases are "
                                  "expanded")
            continue
        seen = state.get(k)
        if seen == 2:      # a second use of a finished node: an alias
            aliases += 1
            if aliases > MAX_YAML_ALIASES:
                raise YAMLRefused(f"more than {MAX_YAML_ALIASES} aliases (*name)", f"at most {MAX_YAML_ALIASES} "
                                  "aliases per document")
            continue
        if seen == 1:      # the node is one of its own ancestors
            raise YAMLRefused("a recursive alias (an anchored node contains itself)", "aliases to nodes that do "
                              "not contain them")
        if depth > MAX_YAML_DEPTH:
            raise YAMLRefused(f"lists and mappings nested more than {MAX_YAML_DEPTH} levels deep",
                              f"at most {MAX_YAML_DEPTH} levels")
        state[k] = 1
        stack.append((node, depth, True))
        stack.extend((c, depth + 1, False) for c in reversed(kids))


def load_yaml_text(text: str) -> Any:
    """Parse one YAML document (duplicate keys refused, ``1e7`` read as a number) within the bounds of
    :func:`_yaml_bounds`, checked on the parsed node graph before any Python object is built.  Raises
    ``yaml.YAMLError`` (syntax) or :class:`YAMLRefused` (bounds)."""
    loader = _UniqueKeyLoader(text)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:
            raise YAMLRefused("lists and mappings nested too deeply to parse", f"at most {MAX_YAML_DEPTH} "
                              "levels") from None
        if node is None:
            return None
        _yaml_bounds(node)
        data = loader.construct_document(node)
    finally:
        loader.dispose()
    return _fix_numbers(data)


def yaml_error_issue(shown: str, exc: Exception) -> ConfigIssue:
    """The issue of a YAML file that cannot be parsed (``yaml.YAMLError``) or is refused
    (:class:`YAMLRefused`): its line and column and what is wrong, never a fragment of its content
    (:func:`~hpcrail.config.errors.content_free`; PyYAML's own text quotes the offending line)."""
    if isinstance(exc, YAMLRefused):
        return ConfigIssue(shown, "(file)", f"YAML refused: {exc}", allowed=exc.allowed)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(file)"
    msg = getattr(exc, "problem", None) or "not valid YAML"
    return ConfigIssue(shown, where, f"YAML syntax error: {content_free(msg)}", allowed="valid YAML")


def read_yaml(path: Path) -> Any:
    """Parse one YAML file (at most :data:`MAX_YAML_BYTES`, bounded aliases and nesting:
    :func:`load_yaml_text`); raises :class:`ConfigError` naming the file and line, never quoting it."""
    text = _read_text(path, "YAML file", MAX_YAML_BYTES)
    try:
        return load_yaml_text(text)
    except (yaml.YAMLError, YAMLRefused) as exc:
        raise ConfigError([yaml_error_issue(_display(Path(path)), exc)]) from None


def read_csv_records(path: Path) -> list[dict]:
    """Read a CSV table (``#`` comment lines allowed) as a list of records with numeric values.
    Raises :class:`ConfigError` for a file that cannot be read as CSV text."""
    text = _read_text(path, "CSV file")
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    try:
        rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    except csv.Error as exc:
        raise ConfigError([ConfigIssue(_display(Path(path)), "(file)", f"CSV syntax error: {exc}",
                                       allowed="comma-separated values with a header line")]) from None
    return [{k.strip(): _num(v) if isinstance(v, str) else v for k, v in r.items() if k is not None and k.strip()}
            for r in rows]


def scenario_folder(path: str | Path) -> Path:
    """The folder of the scenario whose top-level file is ``path``: its directory and the directory
    above it (the layout ``configs/trains/x.yaml`` with ``../vehicles/y.yaml``), unless that is the
    filesystem root or the home directory.  Values read from files outside it are never echoed in
    error messages (a component path may point anywhere, e.g. at a credentials file)."""
    d = Path(path).resolve().parent
    up = d.parent
    if up == Path(up.anchor) or up == Path.home().resolve():
        return d
    return up


def _inside(p: Path, folder: Path) -> bool:
    try:
        p.relative_to(folder)
        return True
    except ValueError:
        return False


def load_document(path: str | Path, folder: str | Path | None = None, named_by: str | None = None) -> Document:
    """Load a YAML config, resolving component files and CSV tables recursively.

    ``folder``: the folder whose files' values errors may show (default: the scenario's own,
    :func:`scenario_folder`); a sweep passes its spec's, so that a base scenario or a component file
    outside it (``base: /etc/…``) is never echoed; ``named_by`` says where the path was given.
    Raises :class:`ConfigError` (missing file, YAML syntax, include cycle) naming the file.
    """
    path = Path(path)
    doc = Document(tree=None, root_file=_display(path))
    issues: list[ConfigIssue] = []
    folder = Path(folder).resolve() if folder is not None else scenario_folder(path)
    if not _inside(path.resolve(), folder):
        doc.outside[doc.root_file] = f"{named_by or _display(path)} leads out of the folder {_display(folder)}"

    def note_outside(p: Path, here: Path, loc: tuple, text: str) -> None:
        if not _inside(p, folder):
            doc.outside.setdefault(_display(p), f"{_display(here)}: {format_path(loc)} = {text!r} leads out of "
                                               f"the scenario's folder {_display(folder)}")

    def not_found(text: str, p: Path, here: Path, missing: str, special: str) -> str:
        """Why ``p`` (written ``text`` in ``here``) cannot be read: its resolved path and a near miss, only for
        files inside the scenario's folder (paths read from outside files are not echoed)."""
        if p.exists():
            return special
        return missing_text(text, p, missing, here.parent) if _inside(here, folder) else missing

    def resolve(node, here: Path, loc: tuple, stack: tuple):
        if isinstance(node, dict):
            if set(node) == {"csv"} and isinstance(node["csv"], str):
                p = (here.parent / node["csv"]).resolve()
                if not p.is_file():
                    issues.append(ConfigIssue(_display(here), format_path(loc + ("csv",)),
                                              not_found(node["csv"], p, here, "CSV file not found",
                                                        "not a regular file"),
                                              node["csv"], allowed="a CSV file, relative to the file naming it"))
                    return []
                doc.origins[loc] = _display(p)
                note_outside(p, here, loc + ("csv",), node["csv"])
                try:
                    return read_csv_records(p)
                except ConfigError as exc:
                    issues.extend(exc.issues)
                    return []
            return {k: resolve(v, here, loc + (k,), stack) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v, here, loc + (i,), stack) for i, v in enumerate(node)]
        if isinstance(node, str) and node.lower().endswith(_INCLUDE_SUFFIXES):
            p = (here.parent / node).resolve()
            if not p.is_file():
                issues.append(ConfigIssue(_display(here), format_path(loc),
                                          not_found(node, p, here, "component file not found",
                                                    "component is not a regular file"), node,
                                          allowed="a YAML file, relative to the file naming it"))
                return None
            if p in stack:
                issues.append(ConfigIssue(_display(here), format_path(loc), "include cycle", node,
                                          allowed="a component file that does not include itself"))
                return None
            doc.origins[loc] = _display(p)
            doc.sources[_display(p)] = p
            note_outside(p, here, loc, node)
            try:
                sub = read_yaml(p)
            except ConfigError as exc:
                issues.extend(exc.issues)
                return None
            return resolve(sub, p, loc, stack + (p,))
        return node

    root = read_yaml(path)
    if not isinstance(root, dict):
        raise ConfigError([ConfigIssue(doc.root_file, "(top level)", "a configuration must be a mapping",
                                       content_summary(root), allowed="a YAML mapping of the scenario's blocks")])
    doc.sources[doc.root_file] = path.resolve()
    doc.tree = resolve(root, path.resolve(), (), (path.resolve(),))
    if issues:
        raise ConfigError(issues)
    return doc


def parse_override(text: str) -> tuple[list, Any]:
    """Split ``a.b.0.c=value`` into its path parts and the YAML-parsed value."""
    if "=" not in text:
        raise ConfigValueError("--set expects dotted.path=value (no '=' found)", allowed="dotted.path=value")
    key, raw = text.split("=", 1)
    key = key.strip()
    if not key or any(not part for part in key.split(".")):
        raise ConfigValueError("--set has an empty path component", allowed="dotted.path=value, e.g. "
                               "simulation.duration_s=60")
    try:
        value = load_yaml_text(raw) if raw.strip() else None
    except yaml.YAMLError:
        value = raw
    except YAMLRefused as exc:
        raise ConfigValueError(f"--set value refused: {exc}", allowed=exc.allowed) from None
    return key.split("."), value


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
                raise KeyError(f"{'.'.join(map(str, parts[:i]))} is a list: use an index, not {part!r}",
                               f"indices 0..{len(node) - 1}")
            if not -len(node) <= idx < len(node):
                raise IndexError(f"{'.'.join(map(str, parts[:i]))} has {len(node)} entries, no index {idx}",
                                 f"indices 0..{len(node) - 1}")
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
            raise KeyError(f"{'.'.join(map(str, parts[:i]))} is a value ({node!r}), it has no field {part!r}",
                           f"{'.'.join(map(str, parts[:i]))}=value")


def component_override(doc: Document, loc: tuple, value: Any, source: str = "--set") -> Any:
    """The value an override puts at ``loc``: a string naming a YAML file (``vehicle=vehicles/other.yaml``) is
    replaced by that component, as in a file — resolved relative to the file that names the field (where the
    same text would be written), else to the working directory — with its own components and CSV tables
    (their files recorded in ``doc.origins``); any other value as it is.  Raises ``ValueError`` naming the paths
    tried (and a near miss) for a file that does not exist, :class:`ConfigError` for one that cannot be read."""
    if not (isinstance(value, str) and value.lower().endswith(_INCLUDE_SUFFIXES)):
        return value
    naming = doc.file_for(loc[:-1]) if loc else doc.root_file
    bases = [Path(naming).parent] if naming not in ("--set", "overrides") else []
    bases.append(Path.cwd())
    for base in bases:
        p = (base / value).resolve()
        if p.is_file():
            sub = load_document(p)
            for k, f in sub.origins.items():
                doc.origins[tuple(loc) + k] = f
            doc.origins[tuple(loc)] = _display(p)
            return sub.tree
    import os

    bases = list(dict.fromkeys(bases))
    tried = [(b / value).resolve() for b in bases]
    text = f"component file not found: {' nor '.join(map(str, tried))}"
    (guess, score), base = max(((near_miss(t, with_score=True), b) for t, b in zip(tried, bases)),
                               key=lambda x: x[0][1])
    if guess:
        text += f" (did you mean {os.path.relpath(guess, base.resolve())!r}?)"
    raise ValueError(text, "a YAML file, relative to the file naming the field or the working directory")


def apply_overrides(doc: Document, overrides: Iterable[str]) -> None:
    """Apply ``--set`` overrides in order; all bad ones are reported together.  A value naming a YAML file is
    that component (:func:`component_override`), as in the scenario file."""
    issues = []
    for text in overrides or ():
        try:
            parts, value = parse_override(text)
            loc = tuple(int(p) if p.isdigit() else p for p in parts)
            new = next((i for i in range(1, len(loc) + 1) if doc_node(doc.tree, loc[:i], _ABSENT) is _ABSENT), len(loc))
            resolved = component_override(doc, loc, value)
            set_path(doc.tree, parts, resolved)
            if resolved is value:    # a component keeps its file as the origin of its values
                doc.origins[loc[:new]] = "--set"   # the shortest part the override created (or the value replaced)
        except (ValueError, KeyError, IndexError) as exc:
            issues.append(override_issue("--set", text, exc))
        except ConfigError as exc:     # the component named by the override cannot be read
            issues.extend(exc.issues)
    if issues:
        raise ConfigError(issues)


def override_issue(file: str, text: str, exc: Exception) -> ConfigIssue:
    """The issue of an override ``text`` (``path=value``) that cannot be applied."""
    msg = str(exc.args[0]) if exc.args else str(exc)
    allowed = getattr(exc, "allowed", None) or (str(exc.args[1]) if len(exc.args) > 1 else None)
    path = text.split("=", 1)[0].strip() if "=" in text else text
    return ConfigIssue(file, path or "(empty path)", msg, text, allowed or "dotted.path=value with an existing path")


def pydantic_issues(doc: Document, exc: ValidationError, model_cls: type[BaseModel] | None = None) -> list[ConfigIssue]:
    """Turn pydantic's errors into :class:`ConfigIssue` lines (file, path, value, allowed).

    ``allowed`` comes from the refusal itself (a :class:`ConfigValueError`, a literal's values, a
    model's keys) or else from the schema of the field (``model_cls``): its type and range."""
    out = []
    for err in exc.errors(include_url=False):
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "tagged-"))))
        typ = err["type"]
        msg = err["msg"]
        ctx = err.get("ctx") or {}
        error = ctx.get("error") if typ == "value_error" else None
        sub = ()
        if isinstance(error, ConfigValueError) and error.field:
            sub = error.field if isinstance(error.field, tuple) else \
                tuple(int(p) if p.isdigit() else p for p in error.field.split("."))
        loc = _drop_union_tags(doc.tree, loc + sub)
        value = err.get("input")
        allowed = None
        has_value = typ != "missing"
        if typ == "extra_forbidden":
            parent = _fields_at(model_cls, doc.tree, loc[:-1]) if model_cls is not None else []
            key = loc[-1]
            msg = f"unknown key {key!r}"
            if parent:
                close = difflib.get_close_matches(str(key), parent, n=1, cutoff=0.6)
                if close:
                    msg += f" (did you mean {close[0]!r}?)"
            allowed = ", ".join(parent) if parent else None
        elif typ in ("literal_error", "enum"):
            allowed = ctx.get("expected")
            msg = "value not allowed"
            if isinstance(value, str) and allowed:
                names = re.findall(r"'([^']*)'", allowed)
                close = difflib.get_close_matches(value, names, n=1, cutoff=0.6)
                if close:
                    msg += f" (did you mean {close[0]!r}?)"
        elif typ == "union_tag_invalid":
            allowed = ctx.get("expected_tags")
            msg = f"unknown kind {ctx.get('tag')!r}"
            value = ctx.get("tag", value)
            loc = loc + ("kind",) if isinstance(doc_node(doc.tree, loc), dict) else loc
        elif typ == "value_error":
            msg = msg.removeprefix("Value error, ")
            if isinstance(error, ConfigValueError):
                allowed = error.allowed
                if sub:
                    value = doc_node(doc.tree, loc, default=_ABSENT)
                    has_value = value is not _ABSENT
                if error.value is not _MISSING:
                    value, has_value = error.value, True
        if allowed is None and model_cls is not None:
            allowed = describe_field(model_cls, doc.tree, loc, typ)
        issue = ConfigIssue(doc.file_for(loc), format_path(loc), msg, allowed=allowed)
        if has_value:
            issue.value = value
        if any(o.path == issue.path and o.message.startswith("Input should") and msg.startswith("Input should")
               for o in out):
            continue   # one line per field for the members of a plain union
        out.append(issue)
    return out


def assignment_issues(model_cls: type[BaseModel], name: str, value: Any, exc: ValidationError) -> list[ConfigIssue]:
    """The issues of a refused assignment ``model.name = value`` (validated by pydantic), in the format of a
    file's: file ``assignment``, path ``<Model>.<field>``, the value and what the field allows."""
    doc = Document(tree={name: value}, root_file="assignment")
    issues = pydantic_issues(doc, exc, model_cls)
    for i in issues:
        i.path = f"{model_cls.__name__}.{i.path}" if i.path != "(top level)" else model_cls.__name__
    return issues


_ABSENT = object()


def doc_node(tree: Any, loc: Iterable, default: Any = None) -> Any:
    """The value of ``tree`` at ``loc`` (``default`` if the path does not exist)."""
    node = tree
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node):
            node = node[part]
        else:
            return default
    return node


def _drop_union_tags(tree: Any, loc: tuple) -> tuple:
    """Remove the parts pydantic inserts into the location of a union member: the tag of a
    discriminated union (``track.irregularity.psd.spectrum`` → ``track.irregularity.spectrum``) — a
    part inside the location that the document's mapping does not have — and the member type of a
    plain union (``driver.commands.3.brake.float`` → ``driver.commands.3.brake``) — parts below a
    scalar of the document."""
    out = []
    node: Any = tree
    for k, part in enumerate(loc):
        last = k == len(loc) - 1
        if isinstance(node, dict) and part not in node and not last:
            continue
        if k > 0 and not isinstance(node, (dict, list)):
            break
        out.append(part)
        if isinstance(node, dict):
            node = node.get(part, _ABSENT)
        elif isinstance(node, list) and isinstance(part, int) and -len(node) <= part < len(node):
            node = node[part]
        else:
            node = _ABSENT
    return tuple(out)


def _unwrap(ann: Any) -> tuple[Any, list]:
    """``(annotation, metadata)`` with ``Annotated`` layers removed (their metadata collected)."""
    meta: list = []
    while typing.get_origin(ann) is typing.Annotated:
        args = typing.get_args(ann)
        ann = args[0]
        for m in args[1:]:
            meta.extend(getattr(m, "metadata", None) or [m])
    return ann, meta


def _resolve_model(cls: Any, node: Any) -> Any:
    """Unwrap ``Annotated``/``Optional``/``Union`` to the pydantic model that describes ``node``: for a
    union of models, the member whose ``kind`` literal matches ``node["kind"]`` (else the first)."""
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


def field_at(model_cls: type[BaseModel], tree: Any, loc: tuple) -> tuple[Any, list] | None:
    """``(annotation, metadata)`` of the schema at ``loc`` (a field, a list entry, a mapping value),
    walking ``model_cls`` along the document ``tree``; None where the schema has no such place."""
    ann: Any = model_cls
    meta: list = []
    node = tree
    for part in loc:
        ann, m = _unwrap(ann)
        cls = _resolve_model(ann, node)
        if isinstance(cls, type) and issubclass(cls, BaseModel):
            f = cls.model_fields.get(part) if isinstance(part, str) else None
            if f is None:
                return None
            ann, meta = f.annotation, list(f.metadata)
            node = node.get(part) if isinstance(node, dict) else None
            continue
        ann = cls
        if typing.get_origin(ann) in (typing.Union, _types.UnionType):   # Optional[list[...]] and the like
            inner = [a for a in typing.get_args(ann) if a is not type(None)]
            conts = [a for a in inner if typing.get_origin(_unwrap(a)[0]) in (list, tuple, dict)]
            if conts:
                ann = _unwrap(conts[0])[0]
        origin = typing.get_origin(ann)
        args = typing.get_args(ann)
        if origin in (list, tuple) and args and isinstance(part, int):
            ann, meta = args[0], []
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
        elif origin is dict and len(args) == 2:
            ann, meta = args[1], []
            node = node.get(part) if isinstance(node, dict) else None
        else:
            return None
    ann, m = _unwrap(ann)
    return ann, meta + m


def field_extra(model_cls: type[BaseModel], tree: Any, loc: tuple) -> dict:
    """The ``json_schema_extra`` of the field at ``loc`` (e.g. its ``units`` or ``typical`` range,
    :func:`hpcrail.config.base.typical`); {} where the schema has no such field or it declares none."""
    if not loc:
        return {}
    parent = field_at(model_cls, tree, tuple(loc[:-1]))
    if parent is None:
        return {}
    cls = _resolve_model(parent[0], doc_node(tree, tuple(loc[:-1])))
    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        return {}
    f = cls.model_fields.get(loc[-1]) if isinstance(loc[-1], str) else None
    extra = f.json_schema_extra if f is not None else None
    return dict(extra) if isinstance(extra, dict) else {}


def _fields_at(model_cls: type[BaseModel], tree: Any, loc: tuple) -> list[str]:
    """The field names of the model the schema has at ``loc`` (empty if none)."""
    hit = field_at(model_cls, tree, loc)
    if hit is None:
        return []
    cls = _resolve_model(hit[0], doc_node(tree, loc))
    if isinstance(cls, type) and issubclass(cls, BaseModel):
        return sorted(cls.model_fields)
    return []


#: readable forms of the name patterns used by the schemas
PATTERN_TEXT = {r"^[A-Za-z0-9_.\-]+$": "letters, digits, '_', '.' and '-' (no spaces)",
                r"^[A-Za-z_][A-Za-z0-9_]*$": "an identifier: letters, digits and '_', not starting with a digit"}


def _num_text(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _range_text(meta: list) -> str:
    parts = []
    for m in meta:
        for attr, sym in (("gt", ">"), ("ge", "≥"), ("lt", "<"), ("le", "≤")):
            v = getattr(m, attr, None)
            if v is not None:
                parts.append(f"{sym} {_num_text(v)}")
    return " and ".join(parts)


def describe_type(ann: Any, meta: list = (), depth: int = 0) -> str:
    """What values a schema type accepts, in words (``a finite number > 0 and ≤ 1000``)."""
    ann, m2 = _unwrap(ann)
    meta = list(meta) + m2
    origin = typing.get_origin(ann)
    rng = _range_text(meta)
    if ann is float:
        return "a finite number" + (f" {rng}" if rng else "")
    if ann is int:
        return "an integer" + (f" {rng}" if rng else "")
    if ann is bool:
        return "true or false"
    if ann is str:
        pat = next((getattr(x, "pattern", None) for x in meta if getattr(x, "pattern", None)), None)
        if pat:
            return "text of " + PATTERN_TEXT.get(pat, f"the form {pat}")
        return "text"
    if ann is Any:
        return "any value"
    if origin is typing.Literal:
        return "one of " + ", ".join(repr(a) if isinstance(a, str) else str(a) for a in typing.get_args(ann))
    if origin in (typing.Union, _types.UnionType):
        args = typing.get_args(ann)
        inner = [a for a in args if a is not type(None)]
        models = [_unwrap(a)[0] for a in inner if isinstance(_unwrap(a)[0], type) and issubclass(_unwrap(a)[0], BaseModel)]
        if models and len(models) == len(inner):
            kinds = [a for mdl in models for a in typing.get_args(mdl.model_fields["kind"].annotation)] \
                if all("kind" in mdl.model_fields for mdl in models) else []
            if kinds:
                return "a mapping with kind: " + " | ".join(map(str, kinds))
        text = " or ".join(describe_type(a, meta if depth == 0 else (), depth + 1) for a in inner)
        return text + (" (or null)" if len(inner) < len(args) else "")
    if origin in (list, tuple):
        args = typing.get_args(ann)
        n = [f"at least {getattr(x, 'min_length')} entries" for x in meta if getattr(x, "min_length", None)]
        n += [f"at most {getattr(x, 'max_length')} entries" for x in meta if getattr(x, "max_length", None)]
        item = describe_type(args[0], (), depth + 1) if args else "values"
        return f"a list of {item.removeprefix('a ').removeprefix('an ')}" + (f" ({', '.join(n)})" if n else "")
    if origin is dict:
        args = typing.get_args(ann)
        val = describe_type(args[1], (), depth + 1) if len(args) == 2 else "values"
        return f"a mapping of names to {val.removeprefix('a ').removeprefix('an ')}"
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        keys = sorted(ann.model_fields)
        return "a mapping with keys " + ", ".join(keys)
    return getattr(ann, "__name__", str(ann))


def describe_field(model_cls: type[BaseModel], tree: Any, loc: tuple, error_type: str = "") -> str | None:
    """The allowed values of the field at ``loc`` (None if the schema has no field there)."""
    hit = field_at(model_cls, tree, loc)
    if hit is None:
        return None
    ann, meta = hit
    text = describe_type(ann, meta)
    if error_type == "missing":
        text = "required: " + text
    return text


def _guard_outside(doc: Document, issues: list[ConfigIssue]) -> list[ConfigIssue]:
    """Issues about values read from files outside the scenario's folder show numbers only (no text,
    no containers, no unusual key names); one more line per such file says where its path leads out
    of the folder.  Runs of issues that differ only in a list index are collapsed into one line."""
    out = []
    notes = {}
    roots = {format_path(loc) for loc, f in doc.origins.items() if f != "--set"}   # where a file's content sits
    for i in issues:
        where = doc.outside.get(i.file)
        if where is not None:
            if i.value is not _MISSING and not (i.value is None or isinstance(i.value, (int, float, bool))):
                i.value = WITHHELD
            notes[i.file] = where
        elif i.path in roots and i.value is not _MISSING:   # a whole component file's content: never shown
            i.value = content_summary(i.value)
        key = i.path.rsplit(".", 1)[-1]
        if i.message.startswith("unknown key") and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,40}", key):
            i.message = "unknown key (name not shown)"   # not a misspelt field name: a line of some other file
            i.path = i.path.rsplit(".", 1)[0] if "." in i.path else "(top level)"
            if i.value is not _MISSING:
                i.value = content_summary(i.value)
        out.append(i)
    out = _collapse(out)
    for f, where in notes.items():
        out.append(ConfigIssue(f, "(file)", f"values read from this file are not shown: {where}",
                               allowed="component files inside the scenario's folder"))
    return out


def _collapse(issues: list[ConfigIssue], keep: int = 3) -> list[ConfigIssue]:
    """Keep ``keep`` issues of a run that differ only in list indices of the path; the last kept one
    says how many more there are."""
    groups: dict = {}
    for i in issues:
        groups.setdefault((i.file, re.sub(r"\.\d+(?=\.|$)", ".#", i.path), i.message, i.allowed), []).append(i)
    out = []
    for i in issues:
        g = groups[(i.file, re.sub(r"\.\d+(?=\.|$)", ".#", i.path), i.message, i.allowed)]
        k = g.index(i)
        if k < keep:
            if k == keep - 1 and len(g) > keep:
                i.message += f" (and {len(g) - keep} more like it, up to {g[-1].path})"
            out.append(i)
    return out


def finish_issues(doc: Document, issues: list[ConfigIssue], model_cls: type[BaseModel] | None = None) -> list[ConfigIssue]:
    """Complete the issues of a cross-field check: ``allowed`` from the schema where the check gave
    none, values from outside files withheld."""
    if model_cls is not None:
        for i in issues:
            if not i.allowed and i.path not in ("(top level)", ""):
                loc = tuple(int(p) if p.lstrip("-").isdigit() else p for p in i.path.split("."))
                i.allowed = describe_field(model_cls, doc.tree, loc)
    return _guard_outside(doc, issues)


def validate(model_cls: type[BaseModel], doc: Document, checks=None):
    """Validate ``doc.tree`` against ``model_cls``; then run ``checks(model) -> list[ConfigIssue]``
    (cross-field rules).  Data files named by the document are resolved and hashed first
    (:func:`hpcrail.config.files.resolve_data_files`).  Raises :class:`ConfigError` with every issue found.
    Values far outside their field's usual range (:func:`hpcrail.config.base.typical`) are put in
    ``doc.warnings``."""
    from hpcrail.config.files import resolve_data_files

    file_issues = resolve_data_files(model_cls, doc, field_at)
    try:
        model = model_cls.model_validate(doc.tree)
    except ValidationError as exc:
        raise ConfigError(_guard_outside(doc, file_issues + pydantic_issues(doc, exc, model_cls))) from None
    if checks is not None:
        issues = checks(model, doc)
        if issues or file_issues:
            raise ConfigError(_guard_outside(doc, file_issues) + finish_issues(doc, issues, model_cls))
    if file_issues:
        raise ConfigError(_guard_outside(doc, file_issues))
    doc.warnings = _guard_outside(doc, unusual_values(model, doc))
    return model


def unusual_values(model: BaseModel, doc: Document | None = None, loc: tuple = ()) -> list[ConfigIssue]:
    """One issue per value of the validated ``model`` outside its field's usual range (fields declared with
    :func:`hpcrail.config.base.typical`; a list is judged by its largest magnitude), located in the file that
    holds it; [] when every value is usual."""
    out: list[ConfigIssue] = []

    def walk(node, where):
        if isinstance(node, BaseModel):
            for name, f in type(node).model_fields.items():
                value = getattr(node, name, None)
                extra = f.json_schema_extra if isinstance(f.json_schema_extra, dict) else {}
                rng = extra.get("typical")
                if rng is not None:
                    judge(value, where + (name,), rng, bool(extra.get("typical_zero_ok")))
                walk(value, where + (name,))
        elif isinstance(node, (list, tuple)):
            for i, x in enumerate(node):
                if isinstance(x, BaseModel):
                    walk(x, where + (i,))
        elif isinstance(node, dict):
            for k, x in node.items():
                if isinstance(x, BaseModel):
                    walk(x, where + (k,))

    def judge(value, where, rng, zero_ok):
        vals = value if isinstance(value, (list, tuple)) else [value]
        nums = [abs(float(v)) for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not nums:
            return
        m = max(nums)
        lo, hi = rng
        if (zero_ok and m == 0) or lo <= m <= hi:
            return
        leaf = str(where[-1])
        what = "the largest value of this list" if isinstance(value, (list, tuple)) else "this value"
        hint = f" (typed in another unit than {_unit_words(leaf)}?)" if _unit_words(leaf) else ""
        out.append(ConfigIssue(doc.file_for(where) if doc is not None else "(model)", format_path(where),
                               f"unusual: {what} is far {'below' if m < lo else 'above'} the usual {lo:g} … {hi:g}"
                               f"{hint}; check it", value if not isinstance(value, (list, tuple)) else m))

    walk(model, tuple(loc))
    return out


#: unit suffixes of field names, in words (for the hints of :func:`unusual_values`)
_UNIT_WORDS = (("_kNs_per_m", "kN s/m"), ("_MN_per_m", "MN/m"), ("_kN", "kN"), ("_mm", "millimetres"),
               ("_kmh", "km/h"), ("_kg", "kilograms"), ("_t", "tonnes"), ("_m", "metres"))


def _unit_words(field: str) -> str:
    for suf, words in _UNIT_WORDS:
        if field.endswith(suf):
            return words
    return ""


def canonical_dict(model: BaseModel, *, hash_files: bool = False) -> dict:
    """Full JSON-compatible dump (defaults included) used for hashing and provenance.  Data files
    (:mod:`hpcrail.config.files`) appear as their absolute paths, or with ``hash_files`` as
    ``sha256:<digest of their contents>`` (the form :func:`config_hash` hashes)."""
    return json.loads(model.model_dump_json(context={"hash_files": True} if hash_files else None))


def canonical_yaml(model: BaseModel) -> str:
    """The canonical config as YAML (sorted keys): what a result stores to be re-run next year."""
    return yaml.safe_dump(canonical_dict(model), sort_keys=True, default_flow_style=None, width=100)


def config_hash(model_or_dict) -> str:
    """SHA-256 (hex, 16 chars) of the canonical JSON of a validated config; the contents of the data files it
    names enter by their digests (an edited profile is another scenario, a moved checkout is not)."""
    d = canonical_dict(model_or_dict, hash_files=True) if isinstance(model_or_dict, BaseModel) else model_or_dict
    blob = json.dumps(d, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


