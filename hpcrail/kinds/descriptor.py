"""The :class:`ModelKind` descriptor: everything the generic layers (CLI, results, sweep, analysis)
know about a model kind.

A kind is one package ``hpcrail/kinds/<name>/`` whose ``__init__`` defines ``KIND = ModelKind(...)``.
Every field is an obligation with no default, so a kind that forgets one fails when its module is
imported (a ``TypeError`` naming the field); :meth:`ModelKind.__post_init__` then checks what the
fields hold and raises :class:`KindError` naming the kind and the obligation.  Heavy parts (build,
run, batch hooks, linearisation, figures) are given as :func:`lazy` references
(``"hpcrail.kinds.ltd.run:run"``), so importing a kind — what validating a YAML does — imports its
schema and declarations only, never numba or the integrators.
"""
from __future__ import annotations

import dataclasses
import importlib
import typing
from typing import Any, Callable

from pydantic import BaseModel

from hpcrail.results.outputs import RUN_NAMES, Dim, Output


class KindError(TypeError):
    """A model kind's descriptor misses an obligation or holds something invalid."""


class Lazy:
    """A callable imported on its first call: ``Lazy("package.module:function")``."""

    __slots__ = ("ref", "_fn")

    def __init__(self, ref: str):
        module, sep, attr = ref.partition(":")
        if not sep or not module or not attr.replace(".", "_").isidentifier():
            raise KindError(f"lazy reference {ref!r} must read 'package.module:function'")
        self.ref = ref
        self._fn = None

    def resolve(self) -> Callable:
        if self._fn is None:
            module, _, attr = self.ref.partition(":")
            obj: Any = importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
            if not callable(obj):
                raise KindError(f"{self.ref} is not callable")
            self._fn = obj
        return self._fn

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"lazy({self.ref!r})"


def lazy(ref: str) -> Lazy:
    """A reference to ``module:function`` imported when first called (see :class:`Lazy`)."""
    return Lazy(ref)


@dataclasses.dataclass(frozen=True)
class Batch:
    """Batch hooks: many scenarios of the kind through one compiled batch kernel
    (:func:`hpcrail.integrators.batch.integrate_batch`).

    ``prepare(sc, t_out) -> (state, BatchItem)`` (``t_out``: sample times [s], None = the scenario's
    own), ``finish(sc, state, solution) -> RunResult``, ``eligible(sc) -> bool`` (None: every
    scenario; the others run one by one through the kind's ``run``).
    """

    prepare: Callable
    finish: Callable
    eligible: Callable | None


@dataclasses.dataclass
class Linearisation:
    """What a kind's ``linearisation(sc, at)`` returns for a modal analysis (:mod:`hpcrail.analysis.modes`).

    ``rhs(t, y, params, dydt)``; ``pos``/``vel`` int64[m] indices of position and velocity states
    (same length, q̇ depends on v only); ``coord_transform`` float64[m, m] maps position-state
    perturbations to physical coordinates named ``coord_names`` (e.g. car arc lengths from gaps),
    ``coord_scales`` float64[m] converts them to comparable lengths [m] (angles × lever).
    """

    rhs: Callable
    params: Any
    t: float
    y: Any                    #: float64[n] state
    pos: Any                  #: int64[m]
    vel: Any                  #: int64[m]
    coord_names: list
    coord_transform: Any      #: float64[m, m]
    coord_scales: Any         #: float64[m]
    description: str = ""


class _NotBatchable:
    """Marker of a kind whose scenarios run one by one (through ``run``) in a sweep."""

    def __repr__(self) -> str:
        return "NOT_BATCHABLE"


#: ``ModelKind.batch`` of a kind without batch hooks
NOT_BATCHABLE = _NotBatchable()


@dataclasses.dataclass(frozen=True)
class Figure:
    """A figure a kind can draw: ``make(ds, out_dir, **options) -> list[Path]`` writes PNG files;
    ``applies(ds) -> bool`` says whether a dataset has what it needs (None: always)."""

    name: str
    description: str
    make: Callable
    applies: Callable | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class ModelKind:
    """Descriptor of a model kind (see the module docstring and docs/architecture.md).

    Fields
    ------
    name : the ``model:`` value of its scenarios (``ltd`` is the default kind).
    description : one sentence.
    title, source, sign_convention : dataset attributes (``title`` is prefixed with "hpcrail "; ``source``
        names the model's references, authors and year).
    schema : pydantic model of a scenario (``hpcrail.config.base.Strict``) with ``model: Literal[name]``
        and ``name``/``description`` fields.
    checks : ``checks(sc, doc) -> list[ConfigIssue]`` cross-field rules, or None.
    build : ``build(sc) -> model`` (numeric model: parameters NamedTuple, initial state ...).
    run : ``run(sc, *, progress=None, t_out=None) -> RunResult`` (None on MPI ranks other than 0);
        ``t_out`` float64[k] sample times [s] of the series (None: the scenario's own sampling).
    batch : :class:`Batch` or :data:`NOT_BATCHABLE`.
    dims : :class:`~hpcrail.results.outputs.Dim` of every dimension of its outputs other than ``time``.
    shape : ``shape(sc) -> Shape`` sizes of those dimensions and static coordinates (cheap).
    outputs : :class:`~hpcrail.results.outputs.Output` declarations (the generic run outputs are
        added by the builder; a kind declares its own).
    linearisation : ``linearisation(sc, at) -> Linearisation`` for ``hpcrail modes``, or None.
    run_figures : :class:`Figure` of one run's dataset (``hpcrail plot``/reports); may be empty.
    report_figures : :class:`Figure` of a sweep store beyond the generic metric plots; may be empty.
    summary : names of the outputs ``hpcrail run`` prints, in order.
    summary_title : title of that table.
    tools : kind-specific studies a command drives (e.g. the mixed train's LCF rig for ``hpcrail lcf``):
        tool name -> module path, imported on request by :func:`hpcrail.kinds.tool`, so generic commands reach
        them through the registry; may be empty.
    """

    name: str
    description: str
    title: str
    source: str
    sign_convention: str
    schema: type
    checks: Callable | None
    build: Callable
    run: Callable
    batch: Batch | _NotBatchable
    dims: tuple
    shape: Callable
    outputs: tuple
    linearisation: Callable | None
    run_figures: tuple
    report_figures: tuple
    summary: tuple
    summary_title: str
    tools: typing.Mapping[str, str] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        def fail(what: str):
            raise KindError(f"model kind {self.name!r}: {what}")

        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise KindError(f"a model kind's name must be an identifier, got {self.name!r}")
        if not all(isinstance(k, str) and k.isidentifier() and isinstance(v, str) and "." in v
                   for k, v in dict(self.tools).items()):
            fail("tools must map identifiers to module paths ('package.module')")
        for f in ("description", "title", "source", "sign_convention", "summary_title"):
            if not isinstance(getattr(self, f), str) or not getattr(self, f).strip():
                fail(f"{f} must be a non-empty string")
        if not (isinstance(self.schema, type) and issubclass(self.schema, BaseModel)):
            fail("schema must be a pydantic model class")
        fields = self.schema.model_fields
        mf = fields.get("model")
        if mf is None or typing.get_origin(mf.annotation) is not typing.Literal \
                or typing.get_args(mf.annotation) != (self.name,):
            fail(f"schema {self.schema.__name__} needs a field model: Literal[{self.name!r}]")
        for f in ("name", "description"):
            if f not in fields:
                fail(f"schema {self.schema.__name__} needs a field {f!r}")
        for f in ("build", "run", "shape"):
            if not callable(getattr(self, f)):
                fail(f"{f} must be callable (or lazy('module:function'))")
        for f in ("checks", "linearisation"):
            v = getattr(self, f)
            if v is not None and not callable(v):
                fail(f"{f} must be callable or None (explicitly: the kind has none)")
        if isinstance(self.batch, Batch):
            if not (callable(self.batch.prepare) and callable(self.batch.finish)):
                fail("batch.prepare and batch.finish must be callable")
            if self.batch.eligible is not None and not callable(self.batch.eligible):
                fail("batch.eligible must be callable or None")
        elif self.batch is not NOT_BATCHABLE:
            fail("batch must be Batch(prepare, finish, eligible) or NOT_BATCHABLE")
        dims = tuple(self.dims)
        object.__setattr__(self, "dims", dims)
        if not all(isinstance(d, Dim) for d in dims):
            fail("dims must be Dim declarations")
        dim_names = [d.name for d in dims]
        if len(set(dim_names)) != len(dim_names):
            fail(f"dimension declared twice in {dim_names}")
        outs = tuple(self.outputs)
        object.__setattr__(self, "outputs", outs)
        if not outs or not all(isinstance(o, Output) for o in outs):
            fail("outputs must be a non-empty tuple of Output declarations")
        names = [o.name for o in outs]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            fail(f"outputs declared twice: {', '.join(dup)}")
        clash = sorted(set(names) & set(RUN_NAMES))
        if clash:
            fail(f"outputs {', '.join(clash)} are generic run outputs (declared by hpcrail.results.outputs)")
        known = set(dim_names) | {"time"}
        for o in outs:
            bad = [d for d in o.dims if d not in known]
            if bad:
                fail(f"output {o.name!r} uses undeclared dimension(s) {bad} (declare them in dims)")
        for f in ("run_figures", "report_figures"):
            figs = tuple(getattr(self, f))
            object.__setattr__(self, f, figs)
            if not all(isinstance(g, Figure) and callable(g.make) for g in figs):
                fail(f"{f} must be a tuple of Figure declarations")
            fn = [g.name for g in figs]
            if len(set(fn)) != len(fn):
                fail(f"{f}: figure names must be unique")
        summ = tuple(self.summary)
        object.__setattr__(self, "summary", summ)
        unknown = [s for s in summ if s not in names]
        if unknown:
            fail(f"summary names undeclared output(s) {unknown}")

    # ------------------------------------------------------------------------------------------
    def outputs_for(self, scenario) -> tuple:
        """The declarations that exist for ``scenario`` (conditions applied)."""
        return tuple(o for o in self.outputs if o.applies(scenario))

    def output(self, name: str) -> Output:
        """The declaration of output ``name``; raises ``KeyError`` naming the kind's outputs."""
        for o in self.outputs:
            if o.name == name:
                return o
        raise KeyError(f"model kind {self.name!r} declares no output {name!r}; it declares "
                       f"{', '.join(o.name for o in self.outputs)}")

    def batchable(self, scenario) -> bool:
        """True if ``scenario`` goes through the batch hooks."""
        b = self.batch
        return isinstance(b, Batch) and (b.eligible is None or bool(b.eligible(scenario)))

    def lazy_references(self) -> list[Lazy]:
        """Every :class:`Lazy` the descriptor holds (the conformance tests resolve them all)."""
        refs = [self.build, self.run, self.shape, self.checks, self.linearisation]
        if isinstance(self.batch, Batch):
            refs += [self.batch.prepare, self.batch.finish, self.batch.eligible]
        refs += [g.make for g in self.run_figures + self.report_figures]
        refs += [g.applies for g in self.run_figures + self.report_figures]
        return [r for r in refs if isinstance(r, Lazy)]


__all__ = ["ModelKind", "Batch", "NOT_BATCHABLE", "Figure", "Linearisation", "Lazy", "lazy", "KindError"]
