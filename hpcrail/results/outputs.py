"""Output declarations: what a model kind stores, as data.

Every variable of a run dataset and of a sweep store is *declared* by its model kind (one
:class:`Output` per variable: name, dimensions, CF units, a short ``long_name`` label, a one-sentence
``description``, display units, a role and an optional condition on the scenario).  The one dataset
builder (:func:`hpcrail.results.dataset.build_dataset`) makes the run dataset from the declarations and
refuses a run that produced an undeclared output or missed a declared one; the sweep store
(:mod:`hpcrail.sweep.store`) makes its variables from the same declarations.  So "declared" and
"stored" cannot drift.

Roles (what a generic layer does with an output):

==========  =======================================================================================
role        meaning and use
==========  =======================================================================================
metric      headline scalar result: every sweep stores it, ``hpcrail run`` prints it, reports plot it
scalar      other scalar result (energy balance, time of a maximum, ...): every sweep stores it
run         run status and statistics (integrator and model solver counts): every sweep stores it
element     result per element (vehicle, coupler, floor point, ...): every sweep stores it
envelope    per-element extreme over every integrator step: sweeps store it with ``outputs.envelopes``
series      time series (first dimension ``time``): sweeps store those listed in ``outputs.series``
log         event log along its own dimension (variable length): run datasets only
==========  =======================================================================================

This module is pure data (no numpy, xarray or numba at import): validating a scenario imports the
kinds' declarations.
"""
from __future__ import annotations

import dataclasses
import keyword
import math
import re
from typing import Any, Callable

#: role -> one-line meaning (see the module docstring)
ROLES: dict[str, str] = {
    "metric": "headline scalar result (stored by every sweep, printed by hpcrail run, plotted by reports)",
    "scalar": "other scalar result (stored by every sweep)",
    "run": "run status and statistics (stored by every sweep)",
    "element": "result per element (stored by every sweep)",
    "envelope": "per-element extreme over every integrator step (sweeps: outputs.envelopes)",
    "series": "time series (sweeps: outputs.series.variables)",
    "log": "event log along its own dimension (run datasets only)",
}
#: roles every sweep stores
SWEEP_ROLES = ("metric", "scalar", "run", "element")
DTYPES = ("float64", "int64", "int8", "str")
#: dimension names a kind may not declare (the sweep store's own, and the generic time axis)
RESERVED_DIMS = ("scenario", "time")
_UNITS = re.compile(r"^[A-Za-z0-9 .*/^()+\-]*$")


class OutputError(ValueError):
    """A run's outputs do not match its kind's declarations (missing, undeclared, wrong shape, or
    non-finite in a completed run); the message names the kind and the output."""


@dataclasses.dataclass(frozen=True)
class Dim:
    """A dimension of a kind's outputs other than ``time``.

    ``labels``: ``"index"`` — the coordinate is 1, 2, … n (vehicles head first, couplers); ``"names"``
    — the coordinate holds names from the scenario (bodies, floor points); ``"none"`` — no
    coordinate (event logs).
    """

    name: str
    long_name: str
    labels: str = "index"

    def __post_init__(self):
        if not self.name.isidentifier() or self.name in RESERVED_DIMS:
            raise ValueError(f"dimension name {self.name!r} is not an identifier or is reserved ({RESERVED_DIMS})")
        if self.labels not in ("index", "names", "none"):
            raise ValueError(f"dimension {self.name!r}: labels must be 'index', 'names' or 'none', got {self.labels!r}")


@dataclasses.dataclass(frozen=True)
class Output:
    """Declaration of one output variable.

    ``units`` are CF/udunits strings (``"N"``, ``"m s-1"``, ``"1"`` for dimensionless; ``""`` for text);
    a value in ``display_units`` is ``value * display_scale`` (``N`` → ``kN``: 1e-3).  ``when(scenario)``
    says whether the output exists for a scenario (None: always) and ``when_text`` says it in words.
    ``missing`` says where NaN values are legitimate (e.g. "NaN for bodies without a pitch degree of
    freedom"); an output with an empty ``missing`` must be finite everywhere in a completed run.
    ``limit``: the upper limit of an assessment quantity (same units; a run may state its own in the output's
    ``value_attrs``) and ``limit_source`` what sets it (a standard and its clause): tables, ``--json``,
    reports and figures show the limit, the ratio and a verdict (:mod:`hpcrail.results.verdicts`).
    """

    name: str
    dims: tuple
    units: str
    long_name: str
    description: str
    role: str
    display_units: str | None = None
    display_scale: float = 1.0
    dtype: str = "float64"
    when: Callable[[Any], bool] | None = dataclasses.field(default=None, compare=False)
    when_text: str = ""
    missing: str = ""
    limit: float | None = None
    limit_source: str = ""

    def __post_init__(self):
        where = f"output {self.name!r}"
        if not self.name.isidentifier() or keyword.iskeyword(self.name):
            raise ValueError(f"{where}: the name must be a Python identifier")
        if self.role not in ROLES:
            raise ValueError(f"{where}: role {self.role!r} is not one of {', '.join(ROLES)}")
        if self.dtype not in DTYPES:
            raise ValueError(f"{where}: dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        dims = tuple(self.dims)
        object.__setattr__(self, "dims", dims)
        if not all(isinstance(d, str) and d.isidentifier() for d in dims) or len(set(dims)) != len(dims):
            raise ValueError(f"{where}: dims {dims!r} must be distinct identifiers")
        if "scenario" in dims:
            raise ValueError(f"{where}: 'scenario' is the sweep store's dimension")
        if self.role == "series":
            if not dims or dims[0] != "time":
                raise ValueError(f"{where}: a series has 'time' as its first dimension, got {dims!r}")
        elif "time" in dims:
            raise ValueError(f"{where}: only role 'series' has the 'time' dimension")
        if self.role in ("element", "envelope", "log") and not dims:
            raise ValueError(f"{where}: role {self.role!r} needs an element dimension")
        if self.role == "log" and len(dims) != 1:
            raise ValueError(f"{where}: a log has exactly one dimension (its own)")
        if self.dtype == "str":
            if self.units:
                raise ValueError(f"{where}: a text output has no units")
        elif not self.units or not _UNITS.match(self.units):
            raise ValueError(f"{where}: units {self.units!r} are not a CF/udunits string ('1' if dimensionless)")
        if not self.long_name or len(self.long_name) > 60 or self.long_name.endswith("."):
            raise ValueError(f"{where}: long_name must be a short label (1-60 characters, no full stop), got "
                             f"{self.long_name!r}")
        if not self.description or self.description[0].islower() or not self.description.endswith("."):
            raise ValueError(f"{where}: description must be one sentence (capital letter ... full stop)")
        if not (isinstance(self.display_scale, (int, float)) and math.isfinite(self.display_scale)
                and self.display_scale > 0):
            raise ValueError(f"{where}: display_scale must be a positive number")
        if self.display_units is None:
            object.__setattr__(self, "display_units", self.units)
        if self.when is not None and not callable(self.when):
            raise ValueError(f"{where}: when must be a callable scenario -> bool or None")
        if self.when is not None and not self.when_text:
            raise ValueError(f"{where}: a conditional output needs when_text (the condition in words)")
        if self.limit is not None and (self.dtype == "str" or not math.isfinite(self.limit) or not self.limit_source):
            raise ValueError(f"{where}: a limit is a finite number of a numeric output, with its limit_source")

    # ------------------------------------------------------------------------------------------
    def applies(self, scenario) -> bool:
        """True if the output exists for ``scenario``."""
        return self.when is None or bool(self.when(scenario))

    def attrs(self) -> dict:
        """CF attributes of the variable (``units``, ``long_name``) and hpcrail's (``description``,
        ``role``, ``display_units``, ``display_scale``; ``valid_when`` and ``nan_means`` if set)."""
        a = {"long_name": self.long_name, "description": self.description, "role": self.role}
        if self.units:
            a["units"] = self.units
            a["display_units"] = self.display_units
            a["display_scale"] = float(self.display_scale)
        if self.when_text:
            a["valid_when"] = self.when_text
        if self.missing:
            a["nan_means"] = self.missing
        if self.limit is not None:
            a["limit"] = float(self.limit)
            a["limit_source"] = self.limit_source
        return a

    def with_dim(self, dim: str, *, prefix: str = "", label: str = "") -> "Output":
        """The same output once per element of an extra dimension ``dim`` (placed after ``time`` for a
        series, first otherwise), renamed ``prefix + name`` and labelled ``label + long_name``:
        how a kind reuses another kind's declarations (the LTD outputs of a mixed train plus the
        railway-vehicle outputs of each of its ``detailed_vehicle``)."""
        dims = (("time", dim) + self.dims[1:]) if self.role == "series" else ((dim,) + self.dims)
        return dataclasses.replace(self, name=prefix + self.name, dims=dims,
                                   long_name=(label + self.long_name)[:60])


def with_dim(outputs, dim: str, *, prefix: str = "", label: str = "") -> tuple:
    """:meth:`Output.with_dim` over a whole declaration table."""
    return tuple(o.with_dim(dim, prefix=prefix, label=label) for o in outputs)


def applicable(outputs, scenario) -> tuple:
    """The declarations that exist for ``scenario``."""
    return tuple(o for o in outputs if o.applies(scenario))


def by_role(outputs, *roles: str) -> tuple:
    return tuple(o for o in outputs if o.role in roles)


# ------------------------------------------------------------------------------------------------
# generic run outputs: every kind's dataset has them
# ------------------------------------------------------------------------------------------------
RUN_OUTPUTS: tuple = (
    Output("status", (), "", "integration status", "How the run ended: completed, event_stop, or a failure "
           "(max_steps, step_underflow, non_finite, newton_failure, model_failure, event_failure, time_budget; "
           "in sweeps also invalid and error).", "run",
           dtype="str"),
    Output("message", (), "", "reason of the status", "Why the run ended with its status.", "run", dtype="str"),
    Output("wall_time", (), "s", "wall time", "Wall-clock time of the integration, compilation excluded.", "run"),
    Output("compile_time", (), "s", "compile time", "Time spent compiling or loading compiled kernels.", "run"),
    Output("nsteps", (), "1", "accepted steps", "Number of accepted integrator steps.", "run", dtype="int64"),
    Output("nrejected", (), "1", "rejected steps", "Number of rejected integrator steps.", "run", dtype="int64"),
    Output("nfev", (), "1", "RHS evaluations", "Number of right-hand-side evaluations.", "run", dtype="int64"),
    Output("njev", (), "1", "Jacobian evaluations", "Number of Jacobian evaluations (implicit methods).", "run",
           dtype="int64"),
    Output("nlu", (), "1", "LU factorisations", "Number of LU factorisations of the Newton iteration matrix "
           "(implicit methods).", "run", dtype="int64"),
    Output("newton_iterations", (), "1", "Newton iterations", "Number of Newton iterations of the implicit "
           "integrators.", "run", dtype="int64"),
    Output("t_reached", (), "s", "time reached", "Last simulated time reached by the integrator.", "run"),
)
RUN_NAMES = tuple(o.name for o in RUN_OUTPUTS)
#: statuses of runs that reached their end (``hpcrail.integrators.Status`` names of successes)
SUCCESS = ("completed", "event_stop")


@dataclasses.dataclass
class RunInfo:
    """How a run went: the values of :data:`RUN_OUTPUTS` plus the integrator's name and statistics."""

    status: str
    message: str
    method: str
    stats: dict
    wall_time: float
    compile_time: float
    t_reached: float

    @classmethod
    def from_solution(cls, sol, status: str | None = None, message: str | None = None) -> "RunInfo":
        """From an integrator :class:`~hpcrail.integrators.contract.Solution` (a model-level failure
        may override its status and message)."""
        return cls(status=status or sol.status.name.lower(), message=sol.message if message is None else message,
                   method=sol.method, stats=dict(sol.stats), wall_time=float(sol.wall_time),
                   compile_time=float(sol.compile_time), t_reached=float(sol.t_reached))

    @property
    def success(self) -> bool:
        return self.status in SUCCESS

    def values(self) -> dict:
        s = self.stats
        return {"status": self.status, "message": self.message, "wall_time": self.wall_time,
                "compile_time": self.compile_time, "nsteps": s.get("steps", 0), "nrejected": s.get("rejected", 0),
                "nfev": s.get("nfev", 0), "njev": s.get("njev", 0), "nlu": s.get("nlu", 0),
                "newton_iterations": s.get("newton_iterations", 0), "t_reached": self.t_reached}


@dataclasses.dataclass
class Shape:
    """What a scenario's outputs look like before it runs: the size of every dimension of its kind and
    its static coordinates (``name -> (dim, values, attrs)``: the labels of ``names`` dimensions and
    auxiliary coordinates such as ``vehicle_type``).  Computed from the validated scenario alone
    (cheap: a sweep computes it for every scenario)."""

    sizes: dict
    coords: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class RunResult:
    """What a kind's ``run`` (or batch ``finish``) returns: plain arrays of its declared outputs.

    ``values``: output name -> numpy array (dims as declared) or scalar; ``time``: sample times [s] of
    the series (None without series); ``run``: status and statistics; ``attrs``: kind-specific dataset
    attributes; ``value_attrs``: extra attributes per output (e.g. ``time_of_max``); ``warnings``:
    one sentence each; ``coords``: run-dependent coordinates (rarely needed: static ones come from
    the kind's ``shape``).
    """

    run: RunInfo
    values: dict
    time: Any = None
    attrs: dict = dataclasses.field(default_factory=dict)
    value_attrs: dict = dataclasses.field(default_factory=dict)
    warnings: list = dataclasses.field(default_factory=list)
    coords: dict = dataclasses.field(default_factory=dict)


# ------------------------------------------------------------------------------------------------
# display
# ------------------------------------------------------------------------------------------------
def format_value(value, out: Output) -> str:
    """A value in the output's display units, for terminal tables (integers as integers, otherwise
    four significant digits with thousands separators)."""
    if out.dtype == "str":
        return str(value)
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if out.dtype in ("int64", "int8"):
        return f"{int(v)}" if math.isfinite(v) else "nan"
    if not math.isfinite(v):
        return "nan"
    d = v * out.display_scale + 0.0   # no "-0"
    if abs(d) >= 1e4:
        return f"{d:,.0f}"
    return f"{d:.4g}"


def summary_rows(outputs, ds, names, *, raw: bool = False) -> list[tuple]:
    """``(name, value, display unit, long_name)`` rows of the outputs ``names`` present in ``ds`` (``raw``: each
    row followed by the value in SI units and the variable's attributes, for verdicts)."""
    table = {o.name: o for o in outputs}
    rows = []
    for name in names:
        o = table.get(name)
        if o is None or name not in ds:
            continue
        v = ds[name].values
        a = dict(ds[name].attrs)
        unit = "" if o.display_units == "1" else o.display_units
        if getattr(v, "ndim", 0) == 1:  # one row per element, labelled by the dimension's coordinate
            dim = ds[name].dims[0]
            labels = ds[dim].values if dim in ds.coords else range(1, v.size + 1)
            for lab, x in zip(labels, v):
                row = (f"{name} ({lab})", format_value(x, o), unit, o.long_name)
                rows.append(row + (x, a) if raw else row)
            continue
        x = v.item() if getattr(v, "ndim", 0) == 0 else v
        row = (name, format_value(x, o), unit, o.long_name)
        rows.append(row + (x, a) if raw else row)
    return rows


__all__ = ["ROLES", "SWEEP_ROLES", "Dim", "Output", "OutputError", "RUN_OUTPUTS", "RUN_NAMES", "SUCCESS",
           "RunInfo", "RunResult", "Shape", "with_dim", "applicable", "by_role", "format_value", "summary_rows"]
