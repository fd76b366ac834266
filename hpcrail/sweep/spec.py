"""Sweep specification (YAML) and its deterministic expansion into scenarios.

A sweep varies fields of a base scenario — the dotted paths of ``hpcrail run --set`` — and keeps,
per scenario, the outputs its model kind declares (:mod:`hpcrail.results.outputs`): metrics, scalars,
run statistics and per-element results always, optionally the envelopes (per-element extremes over
every step) and decimated time series of the kind::

    # what question this study answers (comment)
    base: ../configs/trains/train2.yaml          # scenario file, relative to this file
    set: {simulation.duration_s: 600}            # fixed overrides of the base (optional)
    parameters:
      connection_types.autocoupler.slack_mm: {values: [0, 10, 20]}
      vehicle_types.wagon.mass_t: {linspace: [80, 120, 5]}
      integrator.rtol: {logspace: [-8, -4, 5]}    # exponents: 1e-8 ... 1e-4
      integrator.method: {registered: integrators}
    design: grid        # grid | zip | random | lhs | sobol | saltelli
    samples: 1024       # random / lhs / sobol; saltelli: base samples N (N (D + 2) scenarios)
    seed: 1
    outputs: {envelopes: true, series: {interval_s: 5.0, variables: [coupler_force]}}
    batch_size: auto    # scenarios per task (= zarr chunk along ``scenario``)
    budget: {wall_time_s: 3600, max_steps: null}   # per scenario; beyond: recorded as a failure

Discrete sources: ``values`` (a list; strings ending in ``.yaml`` are component files, resolved
relative to the spec), ``linspace: [start, stop, num]``, ``logspace: [start_exp, stop_exp, num]``,
``range: [start, stop(, step)]`` (integers, stop excluded), ``registered: integrators`` (every
integrator in the registry).  Random designs also accept the distributions ``uniform: [low, high]``,
``loguniform: [low, high]``, ``normal: [mean, sd]``, ``lognormal: [mu, sigma]`` (of ln x); a
discrete source is then sampled uniformly over its values.  ``lhs`` and ``sobol`` use
``scipy.stats.qmc`` (scrambled, seeded) and map the unit hypercube through the inverse CDFs.
``saltelli`` is the design of variance-based sensitivity analysis (Sobol' indices, Saltelli 2002;
Saltelli et al. 2010): SALib's Saltelli/Sobol' sampler over the unit hypercube, ``samples`` = N base
samples (a power of 2), N·(D + 2) scenarios for D parameters (N·(2D + 2) with ``second_order: true``),
in SALib's order, mapped through the inverse CDFs; ``hpcrail report`` and ``ds.hpcrail.sobol()``
compute the first-order and total indices with SALib.

Expansion is deterministic: the same spec (and base files) gives the same scenarios in the same
order and the same scenario ids — :func:`hpcrail.config.config_hash` of each scenario's canonical
config, the hash ``hpcrail validate`` prints for it.
"""
from __future__ import annotations

import dataclasses
import difflib
import hashlib
import itertools
import json
import keyword
import math
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import numpy as np
from pydantic import Field, field_validator, model_serializer, model_validator

from hpcrail import kinds
from hpcrail.config import ConfigError, ConfigIssue, Document, Strict, load_document
from hpcrail.config.base import MAX_DURATION_S, MAX_SAMPLES
from hpcrail.config.errors import ConfigValueError, content_summary
from hpcrail.config.loading import (
    _display, _fix_numbers, canonical_dict, config_hash, describe_type, field_at, field_extra, override_issue,
    parse_override, read_yaml, scenario_folder, set_path, validate,
)
from hpcrail.kinds import validate_document
from hpcrail.results.outputs import RUN_NAMES
from hpcrail.results.saltelli import saltelli_block, saltelli_problem, saltelli_unit  # noqa: F401  (re-exported)
from hpcrail.sweep.makeup import FEATURES, LOCO, MakeupSpec

DESIGNS = ("grid", "zip", "random", "lhs", "sobol", "saltelli", "makeup")
#: designs whose points are drawn from the parameters' distributions (a make-up design draws its other
#: parameters as the random design does)
SAMPLED = ("random", "lhs", "sobol", "saltelli", "makeup")
DISCRETE = ("values", "linspace", "logspace", "range", "registered")
DISTRIBUTIONS = ("uniform", "loguniform", "normal", "lognormal")
SOURCES = DISCRETE + DISTRIBUTIONS

#: most levels of one parameter and most scenarios of a sweep (expansion validates every scenario)
MAX_LEVELS = 1_000_000
MAX_SCENARIOS = 1_000_000
#: most samples of a random, lhs or sobol design
MAX_SAMPLES_DESIGN = 2 ** 20


def non_finite_at(v: Any, loc: tuple = ()) -> tuple | None:
    """The location of the first NaN or ±inf inside ``v`` (numbers, lists, mappings), or None."""
    if isinstance(v, float) and not math.isfinite(v):
        return loc
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            hit = non_finite_at(x, loc + (i,))
            if hit is not None:
                return hit
    elif isinstance(v, dict):
        for k, x in v.items():
            hit = non_finite_at(x, loc + (k,))
            if hit is not None:
                return hit
    return None


#: names a parameter coordinate may never take: the sweep store's own dimensions, coordinates and run
#: variables, and keywords of ``Dataset.sel`` (``ds.sel(method=...)`` could not select a coordinate
#: named ``method``); the outputs and dimensions of the scenario's kind are added per sweep
RESERVED = ({"scenario", "scenario_id", "time", "done"} | set(RUN_NAMES)
            | {"method", "tolerance", "drop", "indexers"})


def kind_reserved(kind) -> set:
    """:data:`RESERVED` plus the dimensions, output names and static coordinates a kind can put in a store."""
    return RESERVED | {d.name for d in kind.dims} | {o.name for o in kind.outputs} | _KIND_COORDS.get(kind.name, set())


#: static coordinate names by kind (filled from the scenarios' shapes during an expansion)
_KIND_COORDS: dict = {}


class ParameterSpec(Strict):
    """How one dotted path varies (exactly one source)."""

    values: Optional[list[Any]] = Field(None, min_length=1, max_length=MAX_LEVELS)
    linspace: Optional[list[float]] = None
    logspace: Optional[list[Annotated[float, Field(ge=-300, le=300)]]] = None
    range: Optional[list[int]] = None
    registered: Optional[Literal["integrators"]] = None
    uniform: Optional[list[float]] = None
    loguniform: Optional[list[float]] = None
    normal: Optional[list[float]] = None
    lognormal: Optional[list[float]] = None
    integer: bool = Field(False, description="round sampled values to integers (counts, seeds)")
    name: Optional[str] = Field(None, description="coordinate name in the store (default: from the path)")
    label: Optional[str] = Field(None, min_length=1, max_length=60, description="label in words for tables and "
                                 "plots (default: from the path, e.g. 'wagon mass')")
    labels: Optional[list[Annotated[str, Field(min_length=1, max_length=40)]]] = Field(
        None, description="with values: a short name per value for the store's coordinate, tables and plots (default: "
        "the value itself; a mapping or list value as JSON, a component file by its path)")

    @field_validator("values")
    @classmethod
    def _finite_values(cls, v):
        hit = non_finite_at(v) if v is not None else None
        if hit is not None:
            raise ConfigValueError("NaN and ±inf are not values of any field", field=hit,
                                   allowed="finite numbers, text, booleans, component files")
        return v

    @model_validator(mode="after")
    def _one_source(self):
        given = [s for s in SOURCES if getattr(self, s) is not None]
        if len(given) != 1:
            raise ConfigValueError(f"give exactly one of {', '.join(SOURCES)} (got {', '.join(given) or 'none'})",
                                   allowed="one source: " + ", ".join(SOURCES), value=", ".join(given) or None)
        src = given[0]
        v = getattr(self, src)
        if src in ("linspace", "logspace"):
            if len(v) != 3 or v[2] != int(v[2]) or not 1 <= v[2] <= MAX_LEVELS:
                raise ConfigValueError(f"{src} needs [start, stop, num] with an integer num", field=src,
                                       allowed=f"[start, stop, num] with an integer 1 ≤ num ≤ {MAX_LEVELS}")
        elif src == "range":
            if not 1 <= len(v) <= 3:
                raise ConfigValueError("range needs [stop], [start, stop] or [start, stop, step] (integers)",
                                       field=src, allowed="[stop], [start, stop] or [start, stop, step]")
            if len(v) == 3 and v[2] == 0:
                raise ConfigValueError("range step must not be 0", field=f"{src}.2", allowed="a step ≠ 0")
            n = len(range(*v))
            if n == 0:
                raise ConfigValueError("the range is empty (stop is excluded)", field=src,
                                       allowed="stop > start for a positive step")
            if n > MAX_LEVELS:
                raise ConfigValueError(f"the range has {n} values", field=src, allowed=f"at most {MAX_LEVELS} values")
        elif src in DISTRIBUTIONS:
            if len(v) != 2:
                raise ConfigValueError(f"{src} needs two numbers", field=src, allowed="[a, b]")
            a, b = v
            if src == "uniform" and not a < b:
                raise ConfigValueError("uniform needs low < high", field=src, allowed="[low, high] with low < high")
            if src == "loguniform" and not 0 < a < b:
                raise ConfigValueError("loguniform needs 0 < low < high", field=src,
                                       allowed="[low, high] with 0 < low < high")
            if src in ("normal", "lognormal") and not b > 0:
                raise ConfigValueError(f"{src} needs a positive standard deviation", field=f"{src}.1",
                                       allowed="a standard deviation > 0")
        return self

    @model_validator(mode="after")
    def _labels(self):
        if self.labels is not None:
            if self.values is None:
                raise ConfigValueError("labels name the values: give values", field="labels", allowed="labels with values")
            if len(self.labels) != len(self.values) or len(set(self.labels)) != len(self.labels):
                raise ConfigValueError(f"labels must be {len(self.values)} distinct names (one per value)",
                                       field="labels", allowed=f"{len(self.values)} distinct names")
        return self

    @property
    def source(self) -> str:
        return next(s for s in SOURCES if getattr(self, s) is not None)

    def coordinate_value(self, value) -> Any:
        """The coordinate of a value: its label when the spec names it, else the value (JSON for an object)."""
        if self.labels is not None:
            for v, lab in zip(self.values, self.labels):
                if _label(v) == _label(value):
                    return lab
        return _label(value)


class SeriesOutput(Strict):
    """Decimated time series kept per scenario: outputs of role ``series`` of the base scenario's kind
    (checked against its declarations when the spec is expanded)."""

    interval_s: float = Field(..., ge=1e-6, description="sampling interval of the kept series")
    variables: list[str] = Field(["coupler_force", "speed"], min_length=1)
    select: Optional[dict[str, list[int]]] = Field(None, description="keep the series only for the labels FIRST.."
                                                   "LAST (inclusive) of these dimensions, e.g. {coupler: [120, 128]}: "
                                                   "a mixed train's in-train forces around its detailed wagon; the "
                                                   "store's dimension is then <dim>_kept")

    @field_validator("variables")
    @classmethod
    def _unique(cls, v):
        if len(set(v)) != len(v):
            raise ValueError("series variables listed twice")
        return v

    @field_validator("select")
    @classmethod
    def _ranges(cls, v):
        for dim, r in (v or {}).items():
            if len(r) != 2 or not 1 <= r[0] <= r[1] <= 10 ** 7:
                raise ConfigValueError("a range of labels [FIRST, LAST]", field=dim, value=r,
                                       allowed="[FIRST, LAST] with 1 <= FIRST <= LAST (labels count from 1)")
        return v

    @model_serializer(mode="wrap")
    def _without_empty_select(self, handler):
        # a spec without a selection dumps as before (the stored `outputs` and the study fingerprints of existing
        # stores stay valid)
        d = handler(self)
        if isinstance(d, dict) and d.get("select") is None:
            d.pop("select", None)
        return d


class Outputs(Strict):
    """What is kept per scenario, selected by the role of the kind's declared outputs: metrics, other
    scalars, run statistics and per-element results always; envelopes and series on request."""

    metrics: Literal[True] = True
    envelopes: bool = Field(False, description="per-element extremes over every step (role envelope: e.g. "
                            "per-coupler max draft/buff force and deflection)")
    series: Optional[SeriesOutput] = None


class SweepBudget(Strict):
    """Limits of one scenario of the sweep: a scenario that exceeds them stops and is recorded as a
    failure with its reason (status ``time_budget`` or ``max_steps``), so a sweep never stalls on one
    scenario.  Not part of the scenarios' ids."""

    wall_time_s: Optional[float] = Field(3600.0, ge=0.001, le=MAX_DURATION_S, description="wall time of one "
                                         "scenario's integration [s] (null: no limit)")
    max_steps: Optional[int] = Field(None, ge=1, le=10 ** 12, description="step attempts of one scenario (the "
                                     "smaller of this and its integrator.max_steps; null: its own)")


class SweepSpec(Strict):
    base: str = Field(..., description="base scenario file, relative to the spec")
    name: Optional[str] = Field(None, pattern=r"^[A-Za-z0-9_.\-]+$")
    description: str = ""
    set: dict[str, Any] = Field({}, description="fixed overrides of the base (dotted path: value)")
    parameters: dict[str, ParameterSpec] = Field({}, max_length=100)
    design: Literal["grid", "zip", "random", "lhs", "sobol", "saltelli", "makeup"] = "grid"
    makeup: Optional[MakeupSpec] = Field(None, description="design makeup: the cars, locomotives and rules of the "
                                         "drawn train make-ups (hpcrail.sweep.makeup)")
    samples: Optional[int] = Field(None, ge=1, le=MAX_SAMPLES_DESIGN, description="number of scenarios of "
                                   "random/lhs/sobol designs; base samples N of a saltelli design")
    second_order: bool = Field(False, description="saltelli: also the second-order indices (N (2D + 2) scenarios "
                               "instead of N (D + 2))")
    seed: int = Field(0, ge=0, le=2 ** 63 - 1)
    outputs: Outputs = Outputs()
    batch_size: int | Literal["auto"] = "auto"
    budget: SweepBudget = SweepBudget()

    @field_validator("batch_size")
    @classmethod
    def _bs(cls, v):
        if isinstance(v, int) and not 1 <= v <= 100_000:
            raise ConfigValueError("batch_size out of range", allowed="1 ≤ batch_size ≤ 100000, or 'auto'")
        return v

    @field_validator("set")
    @classmethod
    def _finite_set(cls, v):
        hit = non_finite_at(v)
        if hit is not None:
            raise ConfigValueError("NaN and ±inf are not values of any field", field=hit,
                                   allowed="finite numbers")
        return v


# ------------------------------------------------------------------------------------------------
# expansion
# ------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Parameter:
    """A swept dotted path and its coordinate name (``levels``: discrete values, None if sampled),
    its label in words and its CF units (from the field name's suffix; "" if none)."""

    path: str
    name: str
    spec: ParameterSpec | None
    levels: list | None
    label: str = ""
    units: str = ""
    source: str = ""

    def __post_init__(self):
        if not self.source and self.spec is not None:
            self.source = self.spec.source


@dataclasses.dataclass
class Point:
    """One scenario of the sweep: overrides of the base, id, and what the store needs to know."""

    index: int
    values: tuple                     #: coordinate value per parameter (labels for files/objects)
    overrides: dict                   #: dotted path -> value set in the base tree
    id: str                           #: config_hash of the canonical scenario ("x"-prefixed if invalid)
    error: str | None = None          #: validation error (the scenario is recorded as invalid)
    kind: str = ""                    #: the scenario's model kind
    sizes: dict = dataclasses.field(default_factory=dict)    #: size of every dimension of its outputs
    coords: dict = dataclasses.field(default_factory=dict)   #: static coordinates (kind's shape)
    outputs: frozenset = frozenset()  #: names of the outputs its kind declares for it
    duration: float = 0.0
    methods: str = ""


@dataclasses.dataclass
class Expansion:
    """A loaded, validated and expanded sweep spec."""

    spec: SweepSpec
    spec_file: Path
    spec_text: str
    cli_set: list
    base_doc: Document               #: base scenario tree after ``set`` and ``--set``
    base_hash: str
    parameters: list[Parameter]
    points: list[Point]
    file_values: dict                #: component-file label -> loaded tree
    warnings: list = dataclasses.field(default_factory=list)   #: what the study should know (duplicate levels)

    @property
    def size(self) -> int:
        return len(self.points)

    @property
    def name(self) -> str:
        return self.spec.name or self.spec_file.stem

    def fingerprint(self) -> str:
        """Hash of everything that defines the study's content: scenario ids, parameter paths and
        names, outputs.  Two expansions with the same fingerprint produce the same store."""
        blob = json.dumps({"ids": [p.id for p in self.points],
                           "parameters": [[p.path, p.name] for p in self.parameters],
                           "outputs": self.spec.outputs.model_dump()}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def scenario_doc(self, point: Point) -> Document:
        return overlay_document(self.base_doc, point.overrides, self.spec_file)

    def batch_size(self, override: int | None = None) -> int:
        """Scenarios per task and per zarr chunk: the spec's, or ``auto`` = ceil(S/32) within
        [1, 64] (at least ~32 tasks for load balance and progress, at most 64 scenarios per task)."""
        if override:
            return int(override)
        bs = self.spec.batch_size
        if isinstance(bs, int):
            return bs
        return int(min(64, max(1, math.ceil(self.size / 32))))


#: field-name suffix -> CF/udunits units (hpcrail's naming convention: ``slack_mm``, ``mass_t`` ...);
#: longest suffixes first
_UNIT_SUFFIXES = [("_bar_per_s", "bar s-1"), ("_bar_per_min", "bar min-1"), ("_kN_per_mm", "kN mm-1"),
                  ("_kNs_per_m", "kN s m-1"), ("_Ns_per_m", "N s m-1"), ("_MN_per_m", "MN m-1"), ("_bar", "bar"),
                  ("_l", "L"), ("_C", "degC"),
                  ("_kN_per_m", "kN m-1"), ("_N_per_m", "N m-1"), ("_permille", "1e-3"), ("_percent", "percent"),
                  ("_per_s", "s-1"), ("_kgm2", "kg m2"), ("_kmh", "km h-1"), ("_mps", "m s-1"), ("_kPa", "kPa"),
                  ("_kW", "kW"), ("_kN", "kN"), ("_Hz", "Hz"), ("_mm", "mm"), ("_km", "km"), ("_kg", "kg"),
                  ("_t", "t"), ("_m", "m"), ("_s", "s"), ("_N", "N")]


def parameter_units(path: str) -> str | None:
    """CF/udunits units from the field-name suffix of a dotted path (``slack_mm`` -> ``mm``,
    ``grade_permille`` -> ``1e-3``, ``notch_rate_per_s`` -> ``s-1``), None if the name carries none."""
    leaf = path.rsplit(".", 1)[-1]
    for suf, units in _UNIT_SUFFIXES:
        if leaf.endswith(suf) and len(leaf) > len(suf):
            return units
    return None


def _words(name: str) -> str:
    return name.replace("_", " ").strip()


def parameter_label(path: str, scenario=None) -> str:
    """A label in words for a swept path: the names of the user's entries (dictionary keys such as the
    vehicle or connection type) and of the blocks along the path, then the field name without its unit
    suffix — ``vehicle_types.wagon.mass_t`` -> "wagon mass", ``route.sections.0.grade_permille`` ->
    "route grade", ``connection_types.autocoupler.draft.unloading_ratio`` -> "autocoupler draft unloading
    ratio".  Blocks holding lists or dictionaries (``vehicle_types``, ``sections``) and list indices are
    left out; without ``scenario`` (the validated base) every component but indices is used."""
    from pydantic import BaseModel

    parts = path.split(".")
    leaf = parts[-1]
    for suf, _u in _UNIT_SUFFIXES:
        if leaf.endswith(suf) and len(leaf) > len(suf):
            leaf = leaf[: -len(suf)]
            break
    words = []
    node = scenario
    for part in parts[:-1]:
        if node is None:
            if not part.isdigit():
                words.append(_words(part))
            continue
        if isinstance(node, BaseModel):
            child = getattr(node, part, None)
            if not isinstance(child, (dict, list, tuple)):
                words.append(_words(part))
            node = child
        elif isinstance(node, dict):
            words.append(_words(part))
            node = node.get(part)
        elif isinstance(node, (list, tuple)):
            try:
                node = node[int(part)]
            except (ValueError, IndexError):
                node = None
        else:
            node = None
    words.append(_words(leaf))
    return " ".join(w for w in words if w)[:60]


def _sig(x: float) -> float:
    """Round to 12 significant digits: ``linspace``/``logspace`` values read as written (1e-05)."""
    return float(f"{x:.12g}")


def _levels(ps: ParameterSpec) -> list | None:
    src = ps.source
    v = getattr(ps, src)
    if src == "values":
        return list(v)
    if src == "linspace":
        return [_sig(x) for x in np.linspace(v[0], v[1], int(v[2]))]
    if src == "logspace":
        return [_sig(x) for x in np.logspace(v[0], v[1], int(v[2]))]
    if src == "range":
        return list(range(*v))
    if src == "registered":
        from hpcrail.config.integrator import method_names

        return method_names(include_aliases=False)
    return None


def _coordinate_names(paths: list[str], explicit: list[str | None], reserved: set = RESERVED) -> list[str]:
    """Readable, unique coordinate names: the last path component, extended leftwards until unique
    (``connection_types.autocoupler.slack_mm`` -> ``slack_mm``, or ``autocoupler_slack_mm``) and past
    the names in ``reserved``; a leaf without a unit suffix inside a list entry keeps the list and index
    (``consist.1.count`` -> ``consist_1_count``, ``detailed.0.position`` -> ``detailed_0_position``)."""
    parts = [p.split(".") for p in paths]
    # a leaf without units inside a list entry names the entry too: consist.1.count -> consist_1_count
    # (a coordinate called `count` or `position` says nothing of what is counted or placed)
    k = [3 if len(ps) >= 3 and ps[-2].lstrip("-").isdigit() and parameter_units(p) is None else 1
         for p, ps in zip(paths, parts)]

    def name(i):
        if explicit[i]:
            return explicit[i]
        n = "_".join(parts[i][-k[i]:])
        n = re.sub(r"\W", "_", n)
        while (n[0].isdigit() or n in reserved or keyword.iskeyword(n)) and k[i] < len(parts[i]):
            k[i] += 1
            n = re.sub(r"\W", "_", "_".join(parts[i][-k[i]:]))
        if n[0].isdigit() or n in reserved or keyword.iskeyword(n):
            n = "p_" + n
        return n

    while True:
        names = [name(i) for i in range(len(paths))]
        clash = {n for n in names if names.count(n) > 1}
        grow = [i for i, n in enumerate(names) if n in clash and not explicit[i] and k[i] < len(parts[i])]
        if not grow:
            return names
        for i in grow:
            k[i] += 1


def _copy_along(root, parts: list) -> None:
    """Shallow-copy the containers along ``parts`` so that setting the leaf leaves the shared base
    tree untouched (copy-on-path: an override costs microseconds, not a deep copy)."""
    node = root
    for part in parts[:-1]:
        if isinstance(node, list):
            try:
                key = int(part)
            except ValueError:
                return
            if not -len(node) <= key < len(node):
                return
        elif isinstance(node, dict):
            key = part
            if node.get(key) is None:
                return
        else:
            return
        child = node[key]
        if isinstance(child, dict):
            child = dict(child)
        elif isinstance(child, list):
            child = list(child)
        else:
            return
        node[key] = child
        node = child


def overlay_document(base: Document, overrides: dict, spec_file: Path | str = "sweep") -> Document:
    """A document equal to ``base`` with ``overrides`` (dotted path -> value) set, sharing every
    untouched part of the base tree.  Raises ``KeyError``/``IndexError`` for impossible paths."""
    tree = dict(base.tree)
    origins = dict(base.origins)
    sources = dict(base.sources)   # data files named by a value of the spec resolve against the spec
    sources.setdefault(_display(Path(spec_file)), Path(spec_file).resolve())
    for path, value in overrides.items():
        parts = path.split(".")
        _copy_along(tree, parts)
        set_path(tree, parts, value)
        origins[tuple(int(p) if p.isdigit() else p for p in parts)] = _display(Path(spec_file))
    return Document(tree=tree, root_file=base.root_file, origins=origins, outside=base.outside, sources=sources)


def _label(value) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return json.dumps(value, sort_keys=True)


def _sample_unit(design: str, d: int, n: int, seed: int) -> np.ndarray:
    from scipy.stats import qmc

    rng = np.random.default_rng(seed)
    if design == "lhs":
        return qmc.LatinHypercube(d, rng=rng).random(n)
    if design == "sobol":
        return qmc.Sobol(d, scramble=True, rng=rng).random(n)
    raise ValueError(design)


def _from_unit(ps: ParameterSpec, levels: list | None, u: np.ndarray) -> list:
    """Map uniform samples ``u`` in [0, 1) through the inverse CDF of the parameter's source."""
    from scipy.stats import norm

    src = ps.source
    u = np.clip(u, 0.0, np.nextafter(1.0, 0.0))
    if levels is not None:
        idx = np.minimum((u * len(levels)).astype(np.int64), len(levels) - 1)
        return [levels[i] for i in idx]
    a, b = getattr(ps, src)
    if src == "uniform":
        x = a + (b - a) * u
    elif src == "loguniform":
        x = np.exp(np.log(a) + (np.log(b) - np.log(a)) * u)
    elif src == "normal":
        x = norm.ppf(u, loc=a, scale=b)
    else:
        x = np.exp(norm.ppf(u, loc=a, scale=b))
    return x.tolist()


def _random(ps: ParameterSpec, levels: list | None, rng: np.random.Generator, n: int) -> list:
    src = ps.source
    if levels is not None:
        return [levels[i] for i in rng.integers(0, len(levels), n)]
    a, b = getattr(ps, src)
    if src == "uniform":
        x = rng.uniform(a, b, n)
    elif src == "loguniform":
        x = np.exp(rng.uniform(np.log(a), np.log(b), n))
    elif src == "normal":
        x = rng.normal(a, b, n)
    else:
        x = rng.lognormal(a, b, n)
    return x.tolist()


def design_values(spec: SweepSpec, levels: list[list | None]) -> list[tuple]:
    """The parameter values of every scenario, in order (a list of tuples, one entry per parameter).

    ``grid``: cartesian product, the first parameter varying slowest; ``zip``: the i-th value of
    every list; ``random``: independent draws from ``numpy.random.default_rng(seed)`` parameter by
    parameter; ``lhs``/``sobol``: ``scipy.stats.qmc`` points mapped through inverse CDFs; ``saltelli``:
    :func:`saltelli_unit` points mapped through inverse CDFs.
    """
    pspecs = list(spec.parameters.values())
    if spec.design == "grid":
        return list(itertools.product(*levels))
    if spec.design == "zip":
        return list(zip(*levels))
    n = int(spec.samples)
    if spec.design in ("random", "makeup"):
        rng = np.random.default_rng(spec.seed if spec.design == "random" else spec.seed + 1)
        cols = [_random(ps, lv, rng, n) for ps, lv in zip(pspecs, levels)]
    else:
        u = (saltelli_unit(len(pspecs), n, spec.seed, spec.second_order) if spec.design == "saltelli"
             else _sample_unit(spec.design, len(pspecs), n, spec.seed))
        cols = [_from_unit(ps, lv, u[:, j]) for j, (ps, lv) in enumerate(zip(pspecs, levels))]
    for j, ps in enumerate(pspecs):
        if ps.integer:
            cols[j] = [int(round(x)) if isinstance(x, float) else x for x in cols[j]]
    rows = len(cols[0]) if cols else n        # saltelli: N (D + 2) rows; a make-up design may have no parameter
    return [tuple(c[i] for c in cols) for i in range(rows)]


def _check_spec(spec: SweepSpec, doc: Document, spec_file: Path) -> list[ConfigIssue]:
    issues: list[ConfigIssue] = []
    f = doc.root_file

    def add(path, msg, value=None, allowed=None, has_value=True):
        i = ConfigIssue(f, path, msg, allowed=allowed)
        if has_value:
            i.value = value
        issues.append(i)

    base = (spec_file.parent / spec.base)
    if not base.is_file():
        add("base", "base scenario file not found", spec.base, "a scenario file, relative to the spec")
    sampled = spec.design in SAMPLED
    if spec.design == "makeup" and spec.makeup is None:
        add("makeup", "design makeup needs a makeup block (cars, locomotives, rules)", has_value=False,
            allowed="makeup: {cars: [...], locomotives: {...}}")
    if spec.makeup is not None and spec.design != "makeup":
        add("makeup", f"a makeup block applies to design makeup, not {spec.design!r}", allowed="design: makeup")
    if not spec.parameters and spec.design != "makeup":
        add("parameters", "a sweep needs at least one parameter", has_value=False,
            allowed="parameters: {dotted.path: {values: [...]}} (or design makeup)")
    for path, ps in spec.parameters.items():
        if not path or any(not p for p in path.split(".")):
            add(f"parameters.{path}", "empty component in the dotted path", path, "a dotted path like a --set path")
        if ps.source in DISTRIBUTIONS and not sampled:
            add(f"parameters.{path}.{ps.source}", f"a distribution needs design random, lhs, sobol or saltelli "
                f"(design is {spec.design!r})", getattr(ps, ps.source), "values, linspace, logspace, range, registered")
        if ps.integer and not sampled:
            add(f"parameters.{path}.integer", "integer rounding applies to sampled designs only", True,
                "false with design grid or zip")
        if ps.name is not None:
            if not ps.name.isidentifier() or keyword.iskeyword(ps.name):
                add(f"parameters.{path}.name", "not a valid coordinate name", ps.name, "a Python identifier")
            elif ps.name in RESERVED:
                add(f"parameters.{path}.name", "name reserved by the sweep store", ps.name,
                    "any other identifier")
    explicit = [ps.name for ps in spec.parameters.values() if ps.name]
    if len(set(explicit)) != len(explicit):
        add("parameters", "two parameters have the same name", explicit, "distinct names")
    if sampled:
        if spec.samples is None:
            add("samples", f"design {spec.design!r} needs samples", allowed=f"1..{MAX_SAMPLES_DESIGN}",
                has_value=False)
        elif spec.design in ("sobol", "saltelli") and spec.samples & (spec.samples - 1):
            add("samples", f"a {spec.design} design needs a power of 2 samples (the balance properties of Sobol' "
                "sequences hold only then)",
                spec.samples, f"e.g. {1 << max(1, int(spec.samples).bit_length() - 1)} or "
                f"{1 << int(spec.samples).bit_length()}")
    elif spec.samples is not None:
        add("samples", f"samples applies to random, lhs, sobol and saltelli designs, not {spec.design!r}",
            spec.samples, "no samples with design grid or zip")
    if spec.second_order and spec.design != "saltelli":
        add("second_order", f"second_order applies to the saltelli design, not {spec.design!r}", True,
            "false unless design is saltelli")
    counts = {p: _level_count(ps) for p, ps in spec.parameters.items() if ps.source in DISCRETE}
    if spec.design == "zip":
        if len(set(counts.values())) > 1:
            add("parameters", "zip needs lists of equal length", ", ".join(f"{p}: {n}" for p, n in counts.items()),
                "lists of one length")
    elif spec.design == "grid" and counts:
        total = math.prod(counts.values())
        if total > MAX_SCENARIOS:
            add("parameters", f"the grid has {total:.3g} scenarios", " × ".join(str(n) for n in counts.values()),
                f"at most {MAX_SCENARIOS} scenarios")
    return issues


def _level_count(ps: ParameterSpec) -> int:
    """Number of levels of a discrete source, without computing them."""
    v = getattr(ps, ps.source)
    if ps.source == "values":
        return len(v)
    if ps.source in ("linspace", "logspace"):
        return int(v[2])
    if ps.source == "range":
        return len(range(*v))
    from hpcrail.config.integrator import method_names

    return len(method_names(include_aliases=False))


def spec_source(spec: str | Path | dict) -> tuple[Path, dict | None]:
    """``(spec file, tree)`` of a spec given as a file or as a mapping (Python API): a mapping's relative
    paths (``base``, component files) are relative to the working directory, and its file is the
    virtual ``<name>.yaml`` there (``tree`` None for a file)."""
    if isinstance(spec, dict):
        return Path.cwd() / f"{spec.get('name') or 'sweep'}.yaml", spec
    return Path(spec), None


def load_spec(path: str | Path | dict) -> tuple[SweepSpec, Document, str]:
    """Read and validate a sweep spec (a file, or a mapping: see :func:`spec_source`); returns
    ``(spec, document, text)``.

    Raises :class:`~hpcrail.config.ConfigError` with every problem (file, field, value, allowed).
    """
    import yaml

    path, tree = spec_source(path)
    root = read_yaml(path) if tree is None else _fix_numbers(tree)
    doc = Document(tree=root, root_file=_display(path) if tree is None else "<sweep spec>")
    if not isinstance(root, dict):
        raise ConfigError([ConfigIssue(doc.root_file, "(top level)", "a sweep spec must be a mapping",
                                       content_summary(root), allowed="a YAML mapping with base and parameters")])
    spec = validate(SweepSpec, doc, lambda s, d: _check_spec(s, d, path))
    text = path.read_text() if tree is None else yaml.safe_dump(tree, sort_keys=False)
    return spec, doc, text


def _resolve_value(value, where: Path, cache: dict, folder: Path | None = None):
    """Component files given as values (``../connections/x.yaml``) are loaded like includes,
    relative to the directory ``where``; values of files outside ``folder`` (the spec's) are never shown
    in errors."""
    if isinstance(value, str) and value.lower().endswith((".yaml", ".yml")):
        key = (str(where), value)
        if key not in cache:
            cache[key] = load_document(where / value, folder=folder, named_by=repr(value)).tree
        return cache[key]
    return value


def _issues_text(exc: ConfigError) -> str:
    return "; ".join(str(i) for i in exc.issues)


def _unknown_path_issue(spec_file: str, where: str, path: str, canon: dict) -> ConfigIssue | None:
    parts = path.split(".")
    node: Any = canon
    for i, part in enumerate(parts):
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            here = ".".join(parts[:i]) or "(top level)"
            allowed = None
            if isinstance(node, dict):
                allowed = ", ".join(sorted(map(str, node)))
            elif isinstance(node, list):
                allowed = f"indices 0..{len(node) - 1}"
            close = difflib.get_close_matches(str(part), [str(k) for k in node], n=1, cutoff=0.6) \
                if isinstance(node, dict) else []
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            return ConfigIssue(spec_file, f"{where}.{path}", f"not a field of the base scenario (no {part!r} "
                               f"in {here}){hint}", path, allowed=allowed)
    return None


def level_issues(kind, base: Document, spec_file: str, path: str, ps: ParameterSpec, levels: list | None,
                 where: Path, files: dict, folder: Path | None = None) -> list[ConfigIssue]:
    """Values of a parameter that its field refuses whatever the other fields are (type, finiteness,
    range): each is a spec error naming the value, not an ``invalid`` scenario.  Discrete sources
    check every level (component files resolved), distributions their bounds (``uniform``,
    ``loguniform``: both ends must be allowed)."""
    from pydantic import ValidationError, create_model

    loc = tuple(int(p) if p.lstrip("-").isdigit() else p for p in path.split("."))
    hit = field_at(kind.schema, base.tree, loc)
    if hit is None:
        return []
    ann, meta = hit
    try:
        model = create_model("Level", __base__=Strict, value=(Annotated[tuple([ann] + list(meta))] if meta else ann, ...))
    except Exception:  # noqa: BLE001 - a field type pydantic cannot rebuild alone: the scenarios check it
        return []
    src = ps.source
    if levels is not None:
        checks = [(f"parameters.{path}.{src}" + (f".{i}" if src == "values" else ""), v,
                   _resolve_value(v, where, files, folder)) for i, v in enumerate(levels)]
    elif src in ("uniform", "loguniform"):
        checks = [(f"parameters.{path}.{src}.{i}", v, v) for i, v in enumerate(getattr(ps, src))]
    else:
        return []
    out = []
    allowed = describe_type(ann, meta)
    for where_, shown, value in checks:
        try:
            model.model_validate({"value": value})
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            msg = err["msg"].removeprefix("Value error, ")
            out.append(ConfigIssue(spec_file, where_, f"not a value of {path}: {msg}", shown, allowed))
        except ConfigError as exc:   # a component file that cannot be read
            out += exc.issues
        if len(out) >= 5:
            break
    return out


def _series_issues(spec: SweepSpec, kind, base_sc, spec_file: str) -> list[ConfigIssue]:
    """The kept series must fit: longest duration / interval ≤ :data:`~hpcrail.config.base.MAX_SAMPLES`."""
    dur = float(getattr(getattr(base_sc, "simulation", None), "duration_s", 0.0) or 0.0)
    for path, ps in spec.parameters.items():
        if path == "simulation.duration_s":
            vals = _levels(ps) or list(getattr(ps, ps.source))
            dur = max([dur] + [float(v) for v in vals if isinstance(v, (int, float))])
    iv = spec.outputs.series.interval_s
    n = dur / iv + 1
    if n > MAX_SAMPLES:
        return [ConfigIssue(spec_file, "outputs.series.interval_s", f"the series would hold {n:.3g} samples of "
                            f"{dur:g} s", iv, f"≥ {dur / MAX_SAMPLES:.3g} s (at most {MAX_SAMPLES:.0e} samples)")]
    return []


def expand(path: str | Path, cli_set: list[str] | tuple = ()) -> Expansion:
    """Load ``path`` and expand it: validate the base (with ``set`` and ``cli_set`` overrides),
    every scenario, and compute the scenario ids.

    A scenario whose overrides do not validate is kept with its error (the sweep records it as
    ``invalid`` and goes on); a base that does not validate, an unknown parameter path or a bad
    spec raise :class:`~hpcrail.config.ConfigError`.
    """
    spec_file, _tree = spec_source(path)
    spec, sdoc, text = load_spec(path)
    files: dict = {}
    folder = scenario_folder(spec_file)   # errors never show values of files outside the spec's folder
    base = load_document(spec_file.parent / spec.base, folder=folder, named_by=f"{sdoc.root_file}: base = "
                         f"{spec.base!r}")
    base.sources.setdefault(sdoc.root_file, Path(spec_file).resolve())
    issues = []
    for key, value in spec.set.items():
        try:
            parts = key.split(".")
            _copy_along(base.tree, parts)
            set_path(base.tree, parts, _resolve_value(value, spec_file.parent, files, folder))
            base.origins[tuple(int(p) if p.isdigit() else p for p in parts)] = sdoc.root_file
        except (KeyError, IndexError) as exc:
            issues.append(override_issue(sdoc.root_file, f"set.{key}={value!r}", exc))
    if issues:
        raise ConfigError(issues)
    for text_ in cli_set:
        try:
            parts, value = parse_override(text_)
            _copy_along(base.tree, parts)
            set_path(base.tree, parts, _resolve_value(value, Path.cwd(), files, folder))
            base.origins[tuple(int(p) if p.isdigit() else p for p in parts)] = "--set"
        except (ValueError, KeyError, IndexError) as exc:
            issues.append(override_issue("--set", text_, exc))
    if issues:
        raise ConfigError(issues)
    try:
        base_sc = validate_document(base)
    except ConfigError as exc:
        raise ConfigError([ConfigIssue(i.file, i.path, f"base scenario: {i.message}", i.value, i.allowed)
                           for i in exc.issues]) from None
    canon = canonical_dict(base_sc)
    base_hash = config_hash(canon)
    kind = kinds.of(base_sc)
    _KIND_COORDS.setdefault(kind.name, set()).update(kind.shape(base_sc).coords)
    reserved = kind_reserved(kind)
    for p in spec.parameters:
        issue = _unknown_path_issue(sdoc.root_file, "parameters", p, canon)
        if issue:
            issues.append(issue)
    for path, ps in spec.parameters.items():
        if ps.name is not None and ps.name in reserved:
            issues.append(ConfigIssue(sdoc.root_file, f"parameters.{path}.name", f"name reserved by the store of a "
                                      f"{kind.name!r} sweep", ps.name, "any other identifier"))
    if spec.outputs.series is not None:
        series = [o.name for o in kind.outputs if o.role == "series"]
        bad = [v for v in spec.outputs.series.variables if v not in series]
        if bad:
            issues.append(ConfigIssue(sdoc.root_file, "outputs.series.variables", f"unknown series of model kind "
                                      f"{kind.name!r}", bad, ", ".join(series)))
        dims = {d.name: d for d in kind.dims}
        along = sorted({d for o in kind.outputs if o.role == "series" and o.name in spec.outputs.series.variables
                        for d in o.dims if d != "time" and dims.get(d) is not None and dims[d].labels == "index"})
        for dim in spec.outputs.series.select or {}:
            if dim not in along:
                issues.append(ConfigIssue(sdoc.root_file, f"outputs.series.select.{dim}", "not a numbered dimension "
                                          "of the kept series", dim, ", ".join(along) or "none (keep a series along "
                                          "coupler or vehicle)"))
    if issues:
        raise ConfigError(issues)
    levels = [_levels(ps) for ps in spec.parameters.values()]
    for (path, ps), lv in zip(spec.parameters.items(), levels):
        issues += level_issues(kind, base, sdoc.root_file, path, ps, lv, spec_file.parent, files, folder)
    if spec.outputs.series is not None:
        issues += _series_issues(spec, kind, base_sc, sdoc.root_file)
    if issues:
        raise ConfigError(issues)
    paths = list(spec.parameters)
    names = _coordinate_names(paths, [ps.name for ps in spec.parameters.values()], reserved)
    labels = [ps.label or parameter_label(p, base_sc) for p, ps in spec.parameters.items()]
    for i, lab in enumerate(labels):   # two paths with the same words: the full path tells them apart
        if labels.count(lab) > 1 and not list(spec.parameters.values())[i].label:
            labels[i] = paths[i][:60]
    params = [Parameter(p, n, ps, lv, label=lab, units=parameter_units(p) or field_extra(
                  type(base_sc), base.tree, tuple(int(x) if x.isdigit() else x for x in p.split("."))).get("units", ""))
              for p, n, ps, lv, lab in zip(paths, names, spec.parameters.values(), levels, labels)]
    values = design_values(spec, levels)
    makeups = None
    if spec.design == "makeup":
        makeups, extra = _makeups(spec, base_sc, sdoc.root_file, reserved | set(names))
        params += extra
        values = [v + (m.code,) + tuple(m.features[f] for f in FEATURES) for v, m in zip(values, makeups)]
    points = []
    shared: dict = {}
    for i, vals in enumerate(values):
        overrides = {p: _resolve_value(v, spec_file.parent, files, folder) for p, v in zip(paths, vals)}
        if makeups is not None:
            overrides[spec.makeup.path] = makeups[i].entries
        specs = list(spec.parameters.values())
        coords = tuple(ps.coordinate_value(v) for ps, v in zip(specs, vals)) + tuple(_label(v) for v in vals[len(specs):])
        pt = Point(index=i, values=coords, overrides=overrides, id="")
        try:
            sc = validate_document(overlay_document(base, overrides, spec_file))
        except ConfigError as exc:
            pt.error = _issues_text(exc)
        except (KeyError, IndexError) as exc:
            pt.error = f"{type(exc).__name__}: {exc.args[0] if exc.args else exc}"
        if pt.error is None:
            pt.id = config_hash(sc)
            describe_point(pt, sc, shared)
        else:
            blob = json.dumps({"base": base_hash, "overrides": {p: _label(v) for p, v in zip(paths, vals)}},
                              sort_keys=True, default=str)
            pt.id = "x" + hashlib.sha256(blob.encode()).hexdigest()[:15]
        points.append(pt)
    return Expansion(spec=spec, spec_file=spec_file, spec_text=text, cli_set=list(cli_set), base_doc=base,
                     base_hash=base_hash, parameters=params, points=points, file_values=files,
                     warnings=duplicate_warnings(spec, sdoc.root_file, levels, points))


def _level_key(v) -> str:
    """Equal levels have equal keys (``10`` and ``10.0`` set a field to the same value)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(float(v))
    return json.dumps(v, sort_keys=True, default=str)


def duplicate_warnings(spec: SweepSpec, spec_file: str, levels: list, points: list) -> list[str]:
    """Warnings about scenarios a ``grid``/``zip`` study runs more than once: a level of a grid given twice
    (``values: [10, 20, 10]``, a ``linspace`` whose rounded values repeat), a row of a zip given twice, and
    scenarios with the same id (the same canonical scenario from different levels, e.g. an integrator and
    its alias).  Sampled designs repeat discrete levels by construction and get none."""
    if spec.design not in ("grid", "zip"):
        return []
    out = []
    if spec.design == "grid":
        for (path, _ps), lv in zip(spec.parameters.items(), levels):
            if lv is None:
                continue
            seen: dict = {}
            for v in lv:
                seen.setdefault(_level_key(v), []).append(v)
            dup = [vs[0] for vs in seen.values() if len(vs) > 1]
            if dup:
                shown = ", ".join(repr(_label(v)) for v in dup[:5]) + (" …" if len(dup) > 5 else "")
                out.append(f"{spec_file}: parameters.{path}: level{'s' if len(dup) > 1 else ''} {shown} given more "
                           "than once: the grid runs the same scenarios again (remove the repeated levels)")
    else:
        rows: dict = {}
        for i, row in enumerate(zip(*levels)):
            rows.setdefault(tuple(_level_key(v) for v in row), []).append(i)
        dup = [ix for ix in rows.values() if len(ix) > 1]
        if dup:
            shown = "; ".join(" = ".join(str(i) for i in ix) for ix in dup[:5]) + (" …" if len(dup) > 5 else "")
            out.append(f"{spec_file}: parameters: zip rows given more than once (rows {shown}, counted from 0): "
                       "the zip runs the same scenarios again (remove the repeated rows)")
    ids = [p.id for p in points if p.error is None]
    n_dup = len(ids) - len(set(ids))
    if n_dup and not out:
        out.append(f"{spec_file}: {n_dup} of the {len(points)} scenarios are the same scenario as another one (the "
                   "same scenario id after validation): they are run again")
    return out


def _makeups(spec: SweepSpec, base_sc, spec_file: str, taken: set):
    """The drawn make-ups of a ``makeup`` design and the store coordinates describing them (the make-up code and
    the pattern features of :mod:`hpcrail.sweep.makeup`); raises ConfigError for unknown types or rules that
    admit (almost) nothing."""
    from hpcrail.sweep.makeup import draw

    mk = spec.makeup
    if not isinstance(getattr(base_sc, mk.path.split(".")[0], None), list) and mk.path != "consist":
        raise ConfigError([ConfigIssue(spec_file, "makeup.path", "not a list of the base scenario", mk.path,
                                       "consist")])
    try:
        found = draw(mk, base_sc.vehicle_types, int(spec.samples), spec.seed)
    except ValueError as exc:
        raise ConfigError([ConfigIssue(spec_file, "makeup", str(exc))]) from None
    for name in ("makeup", *FEATURES):
        if name in taken:
            raise ConfigError([ConfigIssue(spec_file, "parameters", f"coordinate name {name!r} is the make-up "
                                           "design's own", name, "another name (parameters.<path>.name)")])
    legend = ", ".join(f"{MakeupSpec.code_of(g)} = {g.type}" for g in mk.cars) + f", {LOCO} = {mk.locomotives.type}"
    extra = [Parameter("makeup.code", "makeup", None, None, label=f"train make-up ({legend})", source="makeup")]
    for f, (label, units, _d) in FEATURES.items():
        extra.append(Parameter(f"makeup.{f}", f, None, None, label=label, units="" if units == "1" else units,
                               source="makeup"))
    return found, extra


def describe_point(pt: Point, sc, shared: dict | None = None) -> None:
    """Fill what the store layout needs from a validated scenario: its kind, the sizes and static
    coordinates of its dimensions, the outputs its kind declares for it, its duration and method;
    ``shared`` interns equal values (10 000 scenarios share a handful)."""
    shared = {} if shared is None else shared
    kind = kinds.of(sc)
    shape = kind.shape(sc)
    pt.kind = kind.name
    sizes = tuple(sorted(shape.sizes.items()))
    pt.sizes = shared.setdefault(("sizes", sizes), dict(sizes))
    coords = {}
    for name, (dim, values, attrs) in shape.coords.items():
        values = shared.setdefault(("values", tuple(values)), tuple(values))
        coords[name] = (dim, values, attrs)
    key = ("coords", tuple((n, c[0], id(c[1])) for n, c in coords.items()))
    pt.coords = shared.setdefault(key, coords)
    outs = frozenset(o.name for o in kind.outputs_for(sc))
    pt.outputs = shared.setdefault(outs, outs)
    sim = getattr(sc, "simulation", None)
    pt.duration = float(getattr(sim, "duration_s", 0.0) or 0.0)
    it = getattr(sc, "integrator", None)
    pt.methods = getattr(it, "method", "") or ""


__all__ = ["SweepSpec", "SweepBudget", "ParameterSpec", "Outputs", "SeriesOutput", "Parameter", "Point", "Expansion",
           "load_spec", "expand", "design_values", "overlay_document", "DESIGNS", "SAMPLED", "parameter_units",
           "parameter_label", "saltelli_unit", "saltelli_problem", "saltelli_block"]
