"""Configuration errors: one clear line per problem, naming the file, the field, the value and what
is allowed.  The CLI prints them and exits with code 2 (never a traceback)."""
from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable

_MISSING = object()


class Withheld(str):
    """What an error shows instead of a value it must not echo (printed as it is, not quoted)."""


#: a value from a file outside the scenario's folder is shown only if it is a number, a boolean or null
WITHHELD = Withheld("<value not shown: its file is outside the scenario's folder>")


def content_summary(value: Any) -> Any:
    """What an error may show of ``value`` when it is the content of a whole file (a document that is not a
    mapping, a component file where a block belongs): numbers, booleans and null as they are, anything else
    as its kind and size only (``<a text of 3 lines, not shown>``) — never the file's content.

    The one helper of every loader (scenarios, component files, CSV tables, sweep specs, site settings):
    a path that names the wrong file (``base: /etc/passwd``) must not print what the file holds."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        n = value.count("\n") + 1
        what = f"a text of {n} lines" if n > 1 else f"a text of {len(value)} characters"
    elif isinstance(value, (list, tuple)):
        what = f"a list of {len(value)} entries"
    elif isinstance(value, dict):
        what = f"a mapping of {len(value)} keys"
    else:
        what = f"a {type(value).__name__}"
    return Withheld(f"<{what}, not shown>")


#: a quoted fragment an error message may keep: a name (identifier-like), a token name (``<block end>``) or
#: a few characters of punctuation or an escape (``','``, ``'\\t'``)
_SHOWN_FRAGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,40}|<[a-z ]{1,30}>|[^A-Za-z0-9\s]{1,3}|\\[a-z0-9]{1,4}")


def content_free(text: str) -> str:
    """``text`` (a parser's message about a file) with every quoted fragment that could be the file's content
    replaced by ``…``: names, token names and punctuation stay (``expected ',' or ']'``, ``duplicate key
    'mass_t'``), anything else goes (a line of ``/etc/passwd`` quoted by a parser)."""
    def keep(m):
        inner = m.group(2)
        return m.group(0) if _SHOWN_FRAGMENT.fullmatch(inner) else f"{m.group(1)}…{m.group(1)}"

    return re.sub(r"(['\"])(.*?)\1", keep, text, flags=re.S)


def format_path(loc) -> str:
    """Dotted path for a location tuple: ``("consist", 1, "count")`` → ``consist.1.count``."""
    return ".".join(str(p) for p in loc) if loc else "(top level)"


class ConfigValueError(ValueError):
    """A validator's refusal that says what is allowed.

    Raised inside pydantic validators (pydantic reports it as a ``value_error``); the configuration
    machinery turns ``allowed`` into the issue's "allowed" part.  ``field``: from a model-level
    validator, the field (a key of the model, a dotted sub-path of it, or a tuple of keys and indices when a
    key holds dots) the problem is about: the
    issue is then located at that field and shows its value; ``value``: the offending value when it
    is not the one found at the location (e.g. one entry of a table after a transformation).
    """

    def __init__(self, message: str, *, allowed: str | None = None, field: str | tuple | None = None,
                 value: Any = _MISSING):
        super().__init__(message)
        self.allowed = allowed
        self.field = field
        self.value = value


@dataclasses.dataclass
class ConfigIssue:
    """One problem in a configuration.

    ``file`` is the YAML/CSV file that holds the offending value (or the top-level file),
    ``path`` the dotted field path (the same syntax as ``--set``), ``message`` what is wrong,
    ``value`` the offending value and ``allowed`` what would be accepted.
    """

    file: str
    path: str
    message: str
    value: Any = _MISSING
    allowed: str | None = None

    def __str__(self) -> str:
        s = f"{self.file}: {self.path}: {self.message}"
        if self.value is not _MISSING:
            v = self.value if isinstance(self.value, Withheld) else repr(self.value)
            if len(v) > 120:
                v = v[:117] + "..."
            s += f" (got {v})"
        if self.allowed:
            s += f"; allowed: {self.allowed}"
        return s


class ConfigError(Exception):
    """Raised with every problem found in a configuration (``issues``), not only the first."""

    def __init__(self, issues: list[ConfigIssue]):
        self.issues = list(issues)
        super().__init__("\n".join(str(i) for i in self.issues))

    def __str__(self) -> str:
        n = len(self.issues)
        head = f"{n} problem{'s' if n != 1 else ''} in the configuration:"
        return head + "\n" + "\n".join("  - " + str(i) for i in self.issues)


class ConfigWarning(UserWarning):
    """A value the schema allows but that lies far outside its field's usual range (a value typed in another
    unit, e.g. metres into a millimetre field): one :class:`ConfigIssue` line."""


class ConfigAssignmentError(ConfigError, ValueError):
    """A value assigned in Python that the schema refuses (``sc.integrator.rtol = -1``): the same one line per
    problem as a file's — the class and field, the message, the value and what is allowed — instead of
    pydantic's text.  A ``ValueError`` (as pydantic's ``ValidationError`` is)."""

    def __str__(self) -> str:
        return "\n".join(str(i) for i in self.issues)


def issue_collector(doc) -> tuple[list[ConfigIssue], Callable[..., None]]:
    """``(issues, add)`` for a model kind's cross-field check.

    ``add(loc, message, value=None, allowed=None, *, has_value=True)`` appends a :class:`ConfigIssue` at the
    dotted path of ``loc`` (a tuple of keys and list indices, e.g. ``("consist", 2, "type")``), located in the
    file that holds that value (``doc.file_for(loc)``: a component file or the scenario); ``has_value=False``
    for a problem that has no single offending value.  Raises nothing; the caller raises
    :class:`ConfigError` with ``issues``.
    """
    issues: list[ConfigIssue] = []

    def add(loc, msg, value=None, allowed=None, *, has_value=True):
        i = ConfigIssue(doc.file_for(loc), ".".join(map(str, loc)), msg, allowed=allowed)
        if has_value:
            i.value = value
        issues.append(i)

    return issues, add
