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

from hpcrail.config.errors import _MISSING, ConfigError, ConfigIssue
from hpcrail.config.loading import _ABSENT, Document, apply_overrides, doc_node, finish_issues, load_document, validate
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


def tool(name: str):
    """The module of the kind-specific tool ``name`` (declared in a kind's ``ModelKind.tools``, e.g. ``"lcf"``:
    the mixed train's longitudinal-compressive-force rig), imported on first use.

    Raises ``KeyError`` naming the tools every registered kind declares for an unknown name."""
    found = {}
    for k in names():
        found.update({t: mod for t, mod in dict(get(k).tools).items()})
    if name not in found:
        raise KeyError(f"unknown tool {name!r}; declared by the registered kinds: {', '.join(sorted(found)) or 'none'}")
    return importlib.import_module(found[name])


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
        sc = validate(kind.schema, doc, kind.checks)
    except ConfigError as exc:
        _kind_methods(kind, exc.issues)
        raise
    issues = size_issues(kind, sc, doc)
    if issues:
        raise ConfigError(finish_issues(doc, issues, kind.schema))
    return sc


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


def size_issues(kind: ModelKind, sc, doc: Document) -> list[ConfigIssue]:
    """The bounds every kind shares, checked on a validated scenario before anything is allocated (its own
    checks come first and say more): ``simulation.duration_s`` ≤ :data:`~hpcrail.config.base.MAX_DURATION_S`;
    the samples of ``output.interval_s`` ≤ :data:`~hpcrail.config.base.MAX_SAMPLES`, the values of its largest
    time series (the declared outputs with a ``time`` dimension, sized by the kind's ``shape``) ≤
    :data:`~hpcrail.config.base.MAX_SERIES_VALUES` and of all of them ≤
    :data:`~hpcrail.config.base.MAX_RUN_VALUES`; a fixed step's step count ≤ ``integrator.max_steps``.
    Reads the fields every kind names so (``simulation.duration_s``, ``output.interval_s``,
    ``integrator.method``/``step_s``/``max_steps``); a kind without one of them skips that bound."""
    import math

    from hpcrail.config.base import MAX_DURATION_S, MAX_RUN_VALUES, MAX_SAMPLES, MAX_SERIES_VALUES
    from hpcrail.config.errors import issue_collector

    issues, add = issue_collector(doc)
    duration = getattr(getattr(sc, "simulation", None), "duration_s", None)
    if not isinstance(duration, (int, float)) or isinstance(duration, bool):
        return issues
    if duration > MAX_DURATION_S:
        add(("simulation", "duration_s"), "longer than any run hpcrail allocates (11.6 days of simulated time)",
            duration, f"≤ {MAX_DURATION_S:g} s")
        return issues
    interval = getattr(getattr(sc, "output", None), "interval_s", None)
    if isinstance(interval, (int, float)) and interval > 0:
        n = duration / interval + 1.0
        sizes = kind.shape(sc).sizes
        widths = [math.prod(int(sizes.get(d, 1)) for d in o.dims if d != "time")
                  for o in kind.outputs_for(sc) if "time" in o.dims]
        if n > MAX_SAMPLES:
            add(("output", "interval_s"), f"{n:.3g} samples of the series (duration / interval)", interval,
                f"≥ {duration / MAX_SAMPLES:.3g} s for this duration (at most {MAX_SAMPLES:.0e} samples)")
        elif widths and n * max(widths) > MAX_SERIES_VALUES:
            add(("output", "interval_s"), f"{n:.3g} samples of {max(widths)} values: {n * max(widths):.3g} values "
                "in one series", interval, f"≥ {duration * max(widths) / MAX_SERIES_VALUES:.3g} s for this duration "
                f"(at most {MAX_SERIES_VALUES:.0e} values per series)")
        elif n * sum(widths) > MAX_RUN_VALUES:
            add(("output", "interval_s"), f"{n:.3g} samples of {sum(widths)} values: {n * sum(widths):.3g} values "
                "in the series of the run", interval, f"≥ {duration * sum(widths) / MAX_RUN_VALUES:.3g} s for this "
                f"duration (at most {MAX_RUN_VALUES:.0e} values in a run's series)")
    it = getattr(sc, "integrator", None)
    step, max_steps = getattr(it, "step_s", None), getattr(it, "max_steps", None)
    if isinstance(step, (int, float)) and step > 0 and isinstance(max_steps, int):
        from hpcrail.config.integrator import method_spec

        try:
            adaptive = method_spec(it.method).adaptive
        except (KeyError, ValueError):   # a kind's own solver (e.g. the vertical kind's exact discretisation)
            adaptive = False
        if not adaptive and duration / step > max_steps:
            add(("integrator", "step_s"), f"the run needs {duration / step:.3g} steps of {step:g} s, more than "
                f"integrator.max_steps = {max_steps}", step, f"≥ {duration / max_steps:.3g} s, or a larger "
                "integrator.max_steps")
    return issues


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


#: the file a model's build names when it does not know which file holds the field
PLACEHOLDER_FILES = ("", "(scenario)", "(config)")


def locate_issues(exc: ConfigError, doc: Document) -> ConfigError:
    """``exc`` (raised while building or running the model of ``doc``'s scenario) with every issue located
    like a validation error: the file that holds the field (a build knows the field's path, not the file),
    the value found there and, where the build gave none, the allowed values of the field from the kind's
    schema; values from files outside the scenario's folder withheld.  Issues already located are kept."""
    tree = doc.tree
    name = tree.get("model", DEFAULT_KIND) if isinstance(tree, dict) else DEFAULT_KIND
    schema = get(name).schema if isinstance(name, str) and name in _MODULES else None
    out = []
    for i in exc.issues:
        i = ConfigIssue(i.file, i.path, i.message, i.value, i.allowed)
        if i.file in PLACEHOLDER_FILES and i.path and not i.path.startswith("("):
            loc = tuple(int(p) if p.lstrip("-").isdigit() else p for p in i.path.split("."))
            node = doc_node(tree, loc, _ABSENT)
            if node is not _ABSENT:
                i.file = doc.file_for(loc)
                if i.value is _MISSING and (node is None or isinstance(node, (bool, int, float, str))):
                    i.value = node
            else:
                i.file = doc.root_file
        out.append(i)
    return ConfigError(finish_issues(doc, out, schema))


__all__ = ["DEFAULT_KIND", "PLACEHOLDER_FILES", "locate_issues", "size_issues", "ModelKind", "Batch", "NOT_BATCHABLE", "Figure", "KindError", "lazy", "register",
           "names", "get", "of", "kind_name", "validate_document", "load_scenario"]
