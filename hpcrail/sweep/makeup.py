"""Train make-up screening: the ``makeup`` sweep design draws admissible make-ups of a consist.

A make-up is the ordered list of the consist's vehicles (TOES-style per-car list: vehicle types, the load being
the type — a loaded and an empty wagon are two types).  The spec's ``makeup:`` block gives the car groups to
arrange, whether cars move in units (wagon pairs on drawbars), the locomotives (at the head, remote/DP units at a
position drawn within a range of the train's length, at the rear) and the marshalling rules every drawn make-up
must obey; the design draws ``samples`` make-ups (uniformly random permutations of the units that obey the
rules, by rejection) and writes each as the scenario's ``consist`` (runs of one type become one entry, a unit
of two cars joined by the ``pairs`` connection)::

    design: makeup
    samples: 1000
    seed: 1
    makeup:
      cars: [{type: loaded, count: 180}, {type: empty, count: 60, empty: true}]
      unit: 2                    # wagon pairs
      pairs: drawbar             # the connection inside a pair
      locomotives: {type: loco, head: 2, remote: [{count: 1, at: [0.4, 0.6]}]}
      rules: {max_empty_block: 20, max_empties_ahead_of_loads: 40}
      rank_by: worst_qs_ratio    # what the report ranks the make-ups by

Every make-up is described by its code (one character per vehicle: ``#`` a locomotive, each car group's
``code``, by default ``E`` for empty groups and ``L`` for the others) and by pattern **features** (numbers the
report regresses the risk on): empties ahead of loads, the longest block of empties, the share of empties in
the front, middle and rear third of the wagons, empties next to a locomotive, the mass behind the first empty
car, the number of empty/loaded transitions and the remote locomotive's position.  These are stored as the
study's coordinates (``sweep_source: makeup``).  Sources for the rules: Canadian TSB R17T0164 (many empties
ahead of loads), TOES/TrAM marshalling checks (Aronian, Wachs, Jamieson), UIC 421 / IRS 40421's relative
approach (Cantone & Karbstein) — see docs/references.md.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np
from pydantic import Field, model_validator

from hpcrail.config.base import Strict
from hpcrail.config.errors import ConfigValueError

#: character of a locomotive in a make-up code
LOCO = "#"
#: the least acceptance rate of the rules before the design gives up (a rule that almost nothing obeys)
MIN_ACCEPTANCE = 1e-4


class CarGroup(Strict):
    """``count`` cars of vehicle type ``type`` (``empty``: counted as empty by the rules and features)."""

    type: str
    count: int = Field(..., ge=1, le=100_000)
    empty: bool = False
    code: Optional[str] = Field(None, min_length=1, max_length=1, description="character in the make-up code "
                                "(default E for empty groups, L for the others)")


class Remote(Strict):
    """``count`` locomotives placed together at a position drawn uniformly in ``at`` = [lo, hi], fractions of
    the wagon units ahead of them (0: behind the head locomotives, 1: at the rear)."""

    count: int = Field(1, ge=1, le=20)
    at: tuple[float, float] = Field(..., description="[lo, hi] fractions of the train (0..1)")

    @model_validator(mode="after")
    def _range(self):
        lo, hi = self.at
        if not 0.0 <= lo <= hi <= 1.0:
            raise ConfigValueError("at must be [lo, hi] with 0 <= lo <= hi <= 1", field="at", value=list(self.at),
                                   allowed="fractions of the train, lo <= hi")
        return self


class Locomotives(Strict):
    type: str = Field(..., description="locomotive vehicle type")
    head: int = Field(1, ge=0, le=20)
    remote: list[Remote] = []
    rear: int = Field(0, ge=0, le=20)

    @model_validator(mode="after")
    def _some(self):
        if self.head + self.rear + sum(r.count for r in self.remote) == 0:
            raise ConfigValueError("a make-up needs at least one locomotive", field="head", allowed="head >= 1, "
                                   "a remote or rear locomotive")
        return self


class Rules(Strict):
    """Marshalling rules every drawn make-up obeys (None: no such rule)."""

    max_empty_block: Optional[int] = Field(None, ge=0, description="longest run of consecutive empty cars")
    max_empties_ahead_of_loads: Optional[int] = Field(None, ge=0, description="empty cars with a loaded car "
                                                      "somewhere behind them")
    max_empties_next_to_locomotives: Optional[int] = Field(None, ge=0, description="empty cars among the "
                                                           "two units next to a locomotive")


class MakeupSpec(Strict):
    """The ``makeup:`` block of a sweep spec (see the module docstring)."""

    path: str = Field("consist", description="dotted path of the scenario's consist list")
    cars: list[CarGroup] = Field(..., min_length=1, max_length=26)
    unit: int = Field(1, ge=1, le=4, description="cars per unit (2: wagon pairs that stay together)")
    pairs: Optional[str] = Field(None, description="connection type inside a unit of two cars")
    locomotives: Locomotives
    rules: Rules = Rules()
    rank_by: str = Field("worst_qs_ratio", description="metric the report ranks the make-ups by (largest first)")

    @model_validator(mode="after")
    def _check(self):
        for i, g in enumerate(self.cars):
            if g.count % self.unit:
                raise ConfigValueError(f"car group {g.type!r} has {g.count} cars, not a multiple of unit "
                                       f"{self.unit}", field=f"cars.{i}.count", value=g.count,
                                       allowed=f"a multiple of {self.unit}")
        if self.pairs is not None and self.unit != 2:
            raise ConfigValueError("pairs joins the two cars of a unit: it needs unit: 2", field="pairs",
                                   allowed="unit: 2, or no pairs")
        codes = [self.code_of(g) for g in self.cars]
        if LOCO in codes:
            raise ConfigValueError(f"{LOCO!r} is the locomotives' code", field="cars", allowed="another character")
        return self

    @staticmethod
    def code_of(g: CarGroup) -> str:
        return g.code or ("E" if g.empty else "L")


#: the pattern features of a make-up: name -> (label, units, description)
FEATURES = {
    "empties_ahead_of_loads": ("empties ahead of loads", "1", "Empty cars with a loaded car somewhere behind them."),
    "longest_empty_block": ("longest block of empties", "1", "Longest run of consecutive empty cars."),
    "empty_share_front": ("share of empties, front third", "1", "Fraction of the first third of the cars that is "
                          "empty."),
    "empty_share_middle": ("share of empties, middle third", "1", "Fraction of the middle third of the cars that is "
                           "empty."),
    "empty_share_rear": ("share of empties, rear third", "1", "Fraction of the last third of the cars that is empty."),
    "empties_next_to_locomotives": ("empties next to locomotives", "1", "Empty cars among the two units on either "
                                    "side of a locomotive."),
    "mass_behind_first_empty": ("mass behind the first empty car", "t", "Mass of the train behind the first empty "
                                "car [t]."),
    "empty_load_transitions": ("empty/loaded transitions", "1", "Number of changes between empty and loaded cars "
                               "along the train."),
    "remote_position": ("remote locomotive position", "1", "Position of the first remote locomotive as a fraction "
                        "of the train's vehicles (NaN without one)."),
}


@dataclasses.dataclass
class Makeup:
    """One drawn make-up: the vehicle types head first, the consist entries, its code and features."""

    types: list
    entries: list
    code: str
    features: dict


def _runs(mask: np.ndarray) -> np.ndarray:
    """Lengths of the runs of True in a boolean array."""
    if not mask.any():
        return np.zeros(0, int)
    d = np.diff(np.concatenate([[0], mask.astype(int), [0]]))
    return np.flatnonzero(d == -1) - np.flatnonzero(d == 1)


def _car_features(empty: np.ndarray, unit: int) -> dict:
    """Rule quantities of a car sequence (True = empty), head first."""
    n = empty.size
    loaded = ~empty
    last_load = np.flatnonzero(loaded)
    ahead = int(np.sum(empty[:last_load[-1]])) if last_load.size else 0
    runs = _runs(empty)
    return {"empties_ahead_of_loads": ahead, "longest_empty_block": int(runs.max()) if runs.size else 0,
            "empty_load_transitions": int(np.sum(empty[1:] != empty[:-1])) if n > 1 else 0}


def draw(spec: MakeupSpec, vehicle_types: dict, samples: int, seed: int) -> list[Makeup]:
    """``samples`` admissible make-ups (uniform random permutations of the units obeying ``spec.rules``, drawn
    with ``numpy.random.default_rng(seed)``: the same spec gives the same make-ups).  ``vehicle_types``: the base
    scenario's vehicle types (mass for the features; unknown types raise).  Raises ``ValueError`` when the
    rules accept fewer than :data:`MIN_ACCEPTANCE` of the draws."""
    for g in spec.cars:
        if g.type not in vehicle_types:
            raise ValueError(f"makeup.cars: unknown vehicle type {g.type!r} (base scenario types: "
                             f"{', '.join(sorted(vehicle_types))})")
    if spec.locomotives.type not in vehicle_types:
        raise ValueError(f"makeup.locomotives.type: unknown vehicle type {spec.locomotives.type!r}")
    rng = np.random.default_rng(seed)
    u = spec.unit
    units = np.concatenate([np.full(g.count // u, i) for i, g in enumerate(spec.cars)])
    n_units = units.size
    is_empty = np.array([g.empty for g in spec.cars])
    codes = [MakeupSpec.code_of(g) for g in spec.cars]
    mass = {t: vt.mass_t for t, vt in vehicle_types.items()}
    loco = spec.locomotives
    r = spec.rules
    out: list[Makeup] = []
    tries = 0
    limit = int(max(1000, samples / MIN_ACCEPTANCE))
    while len(out) < samples:
        tries += 1
        if tries > limit:
            raise ValueError(f"makeup.rules: only {len(out)} of {tries} drawn make-ups obey the rules (acceptance "
                             f"below {MIN_ACCEPTANCE:g}): relax them")
        perm = units[rng.permutation(n_units)]
        remote_at = [int(round(rng.uniform(*rm.at) * n_units)) for rm in loco.remote]
        cars = np.repeat(perm, u)
        empty = is_empty[cars]
        f = _car_features(empty, u)
        if r.max_empty_block is not None and f["longest_empty_block"] > r.max_empty_block:
            continue
        if r.max_empties_ahead_of_loads is not None and f["empties_ahead_of_loads"] > r.max_empties_ahead_of_loads:
            continue
        # vehicles head first: (type, group index or -1 for a locomotive)
        seq = [(loco.type, -1)] * loco.head
        cuts = sorted(zip(remote_at, [rm.count for rm in loco.remote]))
        k = 0
        for i in range(n_units + 1):
            while k < len(cuts) and cuts[k][0] == i:
                seq += [(loco.type, -1)] * cuts[k][1]
                k += 1
            if i < n_units:
                seq += [(spec.cars[perm[i]].type, int(perm[i]))] * u
        seq += [(loco.type, -1)] * loco.rear
        grp = np.array([g for _t, g in seq])
        is_loco = grp < 0
        emp = np.where(is_loco, False, is_empty[np.maximum(grp, 0)])
        # empties among the two units next to a locomotive
        near = np.zeros(grp.size, bool)
        for i in np.flatnonzero(is_loco):
            near[max(0, i - 2 * u):i + 2 * u + 1] = True
        f["empties_next_to_locomotives"] = int(np.sum(near & emp))
        if r.max_empties_next_to_locomotives is not None and \
                f["empties_next_to_locomotives"] > r.max_empties_next_to_locomotives:
            continue
        thirds = np.array_split(empty, 3)
        f["empty_share_front"], f["empty_share_middle"], f["empty_share_rear"] = (
            float(x.mean()) if x.size else 0.0 for x in thirds)
        masses = np.array([mass[t] for t, _g in seq])
        first = np.flatnonzero(emp)
        f["mass_behind_first_empty"] = float(masses[first[0] + 1:].sum()) if first.size else 0.0
        rem = [i for i in range(loco.head, grp.size - loco.rear) if is_loco[i]]
        f["remote_position"] = float(rem[0] / (grp.size - 1)) if rem else float("nan")
        code = "".join(LOCO if g < 0 else codes[g] for g in grp)
        out.append(Makeup(types=[t for t, _g in seq], entries=_entries(seq, spec), code=code, features=f))
    return out


def _entries(seq, spec: MakeupSpec) -> list[dict]:
    """Consist entries of a vehicle sequence: runs of one type, wagon units of two joined by ``pairs``."""
    entries: list[dict] = []
    for t, g in seq:
        if entries and entries[-1]["type"] == t and (entries[-1].get("_g", -1) >= 0) == (g >= 0):
            entries[-1]["count"] += 1
        else:
            entries.append({"type": t, "count": 1, "_g": g})
    for e in entries:
        g = e.pop("_g")
        if g >= 0 and spec.pairs is not None and e["count"] >= 2:
            e["pairs"] = spec.pairs
    return entries


__all__ = ["MakeupSpec", "CarGroup", "Locomotives", "Remote", "Rules", "Makeup", "FEATURES", "draw", "LOCO"]
