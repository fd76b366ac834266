"""Data files named by a configuration (measured profiles, point lists, device exports): one rule for every
kind and every depth of component files.

A schema declares such a field with :data:`DataFilePath` (``file: Optional[DataFilePath] = None``).  While a
document is validated (:func:`hpcrail.config.loading.validate`), every value of such a field is

* **resolved against the file that names it** — the component YAML that holds the entry (``doc.file_for``),
  the working directory for ``--set`` values — so ``hpcrail validate`` and ``hpcrail run`` read the same
  file wherever they are started;
* **read once and hashed** (SHA-256 of its bytes, at most :data:`MAX_DATA_FILE_BYTES`): the value becomes a
  :class:`DataFile`, a ``str`` (the name as written) that also carries the absolute path and the digest;
* part of the **scenario id**: :func:`hpcrail.config.loading.config_hash` hashes the digest in place of the
  name, so editing a profile gives another id (a resumed sweep refuses to mix) while moving a checkout does
  not;
* **canonical as an absolute path** (``canonical_yaml`` re-validates anywhere on the same file system), and
  **stored in the provenance** of every result (:func:`input_files_record`: path, digest, size and the text).

Reading a :class:`DataFile` at build time (:meth:`DataFile.read_text`) checks the digest again: a file edited
between validation and the run (a long sweep) is refused instead of silently mixed.  Errors are
:class:`~hpcrail.config.errors.ConfigError` issues naming the file that names the entry, the field, the value
and what is allowed; file contents are never shown.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import types as _types
import typing
from pathlib import Path
from typing import Annotated, Any, Iterator

from pydantic import BaseModel, PlainSerializer, PlainValidator

from hpcrail.config.errors import ConfigError, ConfigIssue, ConfigValueError, format_path

#: largest data file read [bytes] (a measured profile is a few kB to a few hundred kB)
MAX_DATA_FILE_BYTES = 8 * 2 ** 20
#: data files up to this size [bytes] are stored with their text in a result's provenance
MAX_PROVENANCE_TEXT_BYTES = 2 * 2 ** 20


@dataclasses.dataclass(frozen=True)
class DataFileMarker:
    """Annotation metadata marking a ``str`` field as the name of a data file (see the module docstring);
    ``what`` names the kind of file in error messages."""

    what: str = "data file"


class DataFile(str):
    """A data file named by a configuration: the ``str`` value is the name as written; ``path`` the absolute
    resolved path (None until resolved), ``sha256`` the hex digest of its bytes and ``size`` their number
    when it was validated."""

    path: Path | None
    sha256: str | None
    size: int
    #: why the file could not be resolved at validation (reported there already), else None
    error: str | None

    def __new__(cls, name: str, path: str | Path | None = None, sha256: str | None = None, size: int = 0,
                error: str | None = None):
        obj = super().__new__(cls, name)
        obj.path = None if path is None else Path(path)
        obj.sha256 = sha256
        obj.size = int(size)
        obj.error = error
        return obj

    def __reduce__(self):   # pickled to sweep workers with its resolution
        return (DataFile, (str(self), None if self.path is None else str(self.path), self.sha256, self.size))

    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    @property
    def resolved(self) -> bool:
        return self.path is not None and self.sha256 is not None

    def read_bytes(self, field: str = "(file)", where: str = "(scenario)") -> bytes:
        """The file's bytes, checked against the digest taken at validation.

        Raises :class:`ConfigError` (``where``: the configuration file, ``field``: the dotted field) when the
        file is gone, unreadable, too large or was changed since the scenario was validated."""
        p = self.path if self.path is not None else Path(str(self)).resolve()
        data = _read_bounded(p, where, field, str(self))
        if self.sha256 is not None and hashlib.sha256(data).hexdigest() != self.sha256:
            raise ConfigError([ConfigIssue(where, field, "the file changed after the scenario was validated (its "
                                           "contents are part of the scenario id)", str(p),
                                           allowed="validate and run the scenario again with the new file")])
        return data

    def read_text(self, field: str = "(file)", where: str = "(scenario)") -> str:
        """The file as UTF-8 text (see :meth:`read_bytes`); raises :class:`ConfigError` for binary files."""
        try:
            return self.read_bytes(field, where).decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError([ConfigIssue(where, field, "not a UTF-8 text file", str(self),
                                           allowed="a text file of numbers")]) from None


def _coerce(v: Any) -> DataFile:
    if isinstance(v, DataFile):
        return v
    if isinstance(v, Path):
        v = str(v)
    if isinstance(v, str):
        if not v.strip() or "\x00" in v:
            raise ConfigValueError("an empty or invalid file name", allowed="a file name, relative to the file "
                                   "naming it")
        return DataFile(v)
    raise ConfigValueError("a file name is text", allowed="a file name, relative to the file naming it")


def _serialise(v: Any, info) -> str:
    ctx = info.context if info is not None and isinstance(info.context, dict) else {}
    if isinstance(v, DataFile):
        if ctx.get("hash_files") and v.sha256 is not None:
            return "sha256:" + v.sha256
        if v.path is not None:
            return str(v.path)
    return str(v)


#: the annotation of a data-file field: ``file: Optional[DataFilePath] = None``
DataFilePath = Annotated[str, DataFileMarker(), PlainValidator(_coerce),
                         PlainSerializer(_serialise, return_type=str)]


def data_file_path(what: str):
    """A :data:`DataFilePath` whose errors call the file ``what`` (e.g. "profile file")."""
    return Annotated[str, DataFileMarker(what), PlainValidator(_coerce),
                     PlainSerializer(_serialise, return_type=str)]


# ------------------------------------------------------------------------------------------ schema walk

def _marker_of(ann: Any, meta: list = ()) -> DataFileMarker | None:
    for m in meta:
        if isinstance(m, DataFileMarker):
            return m
    for _ in range(8):
        origin = typing.get_origin(ann)
        if origin is typing.Annotated:
            args = typing.get_args(ann)
            for m in args[1:]:
                if isinstance(m, DataFileMarker):
                    return m
            ann = args[0]
            continue
        if origin in (typing.Union, _types.UnionType):
            for a in typing.get_args(ann):
                m = _marker_of(a)
                if m is not None:
                    return m
        return None
    return None


_HAS: dict = {}


def _mentions_data_files(ann: Any, seen: frozenset = frozenset()) -> bool:
    """Whether a schema type contains a data-file field anywhere (cached per model class)."""
    if _marker_of(ann) is not None:
        return True
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        if ann in _HAS:
            return _HAS[ann]
        if ann in seen:
            return False
        res = any(_mentions_data_files(f.annotation, seen | {ann}) or
                  any(isinstance(m, DataFileMarker) for m in f.metadata) for f in ann.model_fields.values())
        _HAS[ann] = res
        return res
    return any(_mentions_data_files(a, seen) for a in typing.get_args(ann) if not isinstance(a, (str, int, float)))


def _string_leaves(node: Any, loc: tuple = ()) -> Iterator[tuple[tuple, Any]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _string_leaves(v, loc + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _string_leaves(v, loc + (i,))
    elif isinstance(node, str):
        yield loc, node


def _set(tree: Any, loc: tuple, value: Any) -> None:
    node = tree
    for part in loc[:-1]:
        node = node[part]
    node[loc[-1]] = value


def _read_bounded(p: Path, where: str, field: str, name: str) -> bytes:
    allowed = "a regular file, relative to the file naming it"
    try:
        if not p.exists():
            raise ConfigError([ConfigIssue(where, field, "file not found", name, allowed=allowed)])
        if not p.is_file():
            raise ConfigError([ConfigIssue(where, field, "not a regular file", name, allowed=allowed)])
        size = p.stat().st_size
        if size > MAX_DATA_FILE_BYTES:
            raise ConfigError([ConfigIssue(where, field, f"file too large ({size / 2 ** 20:.1f} MiB)", name,
                                           allowed=f"≤ {MAX_DATA_FILE_BYTES // 2 ** 20} MiB")])
        with open(p, "rb") as fh:
            data = fh.read(MAX_DATA_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError([ConfigIssue(where, field, f"cannot read the file ({exc.strerror})", name,
                                       allowed="a readable file")]) from None
    if len(data) > MAX_DATA_FILE_BYTES:
        raise ConfigError([ConfigIssue(where, field, "file too large", name,
                                       allowed=f"≤ {MAX_DATA_FILE_BYTES // 2 ** 20} MiB")])
    return data


def resolve_data_files(model_cls: type[BaseModel], doc, field_at) -> list[ConfigIssue]:
    """Resolve every data-file value of ``doc.tree`` (the schema ``model_cls`` says which fields name files)
    against the file that names it, hash its contents and put a :class:`DataFile` in its place.  Returns the
    problems found (missing, special, unreadable or too large files), one issue each; the values stay
    unresolved there.  A value that is already a resolved :class:`DataFile` (a sweep scenario validated again
    on a worker) is read again and must have the same digest.  ``field_at(model_cls, tree, loc)`` gives the
    schema's ``(annotation, metadata)`` at a place (:func:`hpcrail.config.loading.field_at`; passed in, so that
    this module does not import the loader)."""
    if not _mentions_data_files(model_cls) or not isinstance(doc.tree, (dict, list)):
        return []
    issues: list[ConfigIssue] = []
    for loc, value in list(_string_leaves(doc.tree)):
        hit = field_at(model_cls, doc.tree, loc)
        if hit is None:
            continue
        marker = _marker_of(*hit)
        if marker is None:
            continue
        where = doc.file_for(loc)
        field = format_path(loc)
        name = str(value)
        if isinstance(value, DataFile) and value.path is not None:
            p = value.path
        else:
            p = Path(name).expanduser()
            if not p.is_absolute():
                base = doc.path_for(loc) if hasattr(doc, "path_for") else None
                p = (base.parent if base is not None else Path.cwd()) / p
            p = p.resolve()
        try:
            data = _read_bounded(p, where, field, name)
        except ConfigError as exc:
            for i in exc.issues:
                i.message = f"{marker.what}: {i.message}"
            issues += exc.issues
            _set(doc.tree, loc, DataFile(name, error=exc.issues[0].message))
            continue
        digest = hashlib.sha256(data).hexdigest()
        if isinstance(value, DataFile) and value.sha256 is not None and value.sha256 != digest:
            issues.append(ConfigIssue(where, field, f"{marker.what} changed since the scenario was first validated "
                                      "(its contents are part of the scenario id)", name,
                                      allowed="the unchanged file, or a new sweep/run"))
            continue
        _set(doc.tree, loc, DataFile(name, p, digest, len(data)))
    return issues


# ------------------------------------------------------------------------------------------ provenance

def data_files(model: Any, loc: tuple = ()) -> Iterator[tuple[str, DataFile]]:
    """``(dotted path, DataFile)`` of every data-file value inside a validated model."""
    if isinstance(model, DataFile):
        yield format_path(loc), model
    elif isinstance(model, BaseModel):
        for name in type(model).model_fields:
            yield from data_files(getattr(model, name), loc + (name,))
    elif isinstance(model, dict):
        for k, v in model.items():
            yield from data_files(v, loc + (k,))
    elif isinstance(model, (list, tuple)):
        for i, v in enumerate(model):
            yield from data_files(v, loc + (i,))


def input_files_record(model: Any) -> str:
    """JSON list of the data files of a validated scenario for a result's provenance: field, name as
    written, absolute path, SHA-256, size and (text files up to :data:`MAX_PROVENANCE_TEXT_BYTES`) the text
    itself, so that a result can be re-run when the file is gone.  ``"[]"`` without data files."""
    out = []
    for field, f in data_files(model):
        rec = {"field": field, "name": str(f), "path": None if f.path is None else str(f.path), "sha256": f.sha256,
               "bytes": f.size}
        if f.path is not None and f.size <= MAX_PROVENANCE_TEXT_BYTES:
            try:
                data = f.path.read_bytes()
                if f.sha256 is None or hashlib.sha256(data).hexdigest() == f.sha256:
                    rec["text"] = data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                pass
        out.append(rec)
    return json.dumps(out, ensure_ascii=False)


__all__ = ["DataFile", "DataFileMarker", "DataFilePath", "data_file_path", "resolve_data_files", "data_files",
           "input_files_record", "MAX_DATA_FILE_BYTES"]
