"""One member of a study: the full scenario of a sweep store's scenario, rebuilt from the store.

A sweep store keeps what defines each of its scenarios: the canonical base scenario (attribute
``base_config_yaml``: the base after ``set`` and ``--set``), the swept parameters (attribute ``parameters``:
dotted path, coordinate name, type of value) with one value per scenario (their coordinates), and the trees of
the component files given as values (attribute ``sweep_file_values``).  :func:`member` sets the member's
values on the base, validates it and checks that its hash is the stored ``scenario_id`` — the same scenario,
bit for bit, as the sweep ran.  A store written before these attributes existed, or whose base no longer
validates alone, is rebuilt from its spec file instead (when it still exists and gives the same id).

``hpcrail scenario STUDY.zarr ID`` prints the member's YAML, ``hpcrail rerun STUDY.zarr ID -o RUN.zarr`` runs
it with every output of its kind (:func:`hpcrail.api.study_scenario`, :func:`hpcrail.api.rerun`).
"""
from __future__ import annotations

import dataclasses
import difflib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from hpcrail.config import ConfigError, Document, config_hash
from hpcrail.sweep.spec import overlay_document
from hpcrail.sweep.store import as_strings, open_group


class MemberError(ValueError):
    """The scenario cannot be found in the store, or cannot be rebuilt as the sweep ran it."""


@dataclasses.dataclass
class Member:
    """A study member: its index and id in the store, the validated scenario and where it was rebuilt from."""

    store: Path
    index: int
    id: str
    scenario: Any
    values: dict            #: coordinate name -> value of each swept parameter
    status: str
    message: str
    source: str             #: "store" (base and values kept in the store) or the spec file


def _index(ids: np.ndarray, which, store: Path) -> int:
    """The index of ``which`` (a scenario index, an id or an unambiguous id prefix of at least 4 characters)."""
    n = ids.size
    text = str(which).strip()
    if isinstance(which, (int, np.integer)) or (text.isdigit() and len(text) < 16):   # ids are 16 hex digits
        i = int(text)
        if not 0 <= i < n:
            raise MemberError(f"{store} has scenarios 0..{n - 1}, not {i}")
        return i
    hits = np.flatnonzero(ids == text)
    if hits.size == 0 and len(text) >= 4:
        hits = np.flatnonzero(np.char.startswith(ids.astype(str), text))
        if np.unique(ids[hits]).size > 1:
            raise MemberError(f"id prefix {text!r} matches {np.unique(ids[hits]).size} scenarios of {store}: give more "
                              "characters")
    if hits.size == 0:
        near = difflib.get_close_matches(text, [str(x) for x in ids[:100_000]], n=3, cutoff=0.6)
        hint = f" (did you mean {', '.join(near)}?)" if near else ""
        raise MemberError(f"no scenario {text!r} in {store}{hint}: give a scenario index (0..{n - 1}) or a "
                          "scenario_id (`hpcrail status` and ds.scenario_id list them)")
    return int(hits[0])


def _value(raw, param: dict, files: dict):
    """The override value of one parameter from its stored coordinate value."""
    if isinstance(raw, np.generic):
        raw = raw.item()
    kind = param.get("value_type", "")
    if isinstance(raw, float) and math.isnan(raw):
        return None
    if isinstance(raw, str):
        if raw in files:
            return files[raw]
        if kind == "json":
            try:
                return json.loads(raw)
            except ValueError:
                return raw
    return raw


def _from_store(store: Path, attrs: dict, g, i: int, sid: str):
    import yaml

    from hpcrail.kinds import validate_document

    base_yaml = attrs.get("base_config_yaml") or ""
    if not base_yaml:
        return None, "the store keeps no base scenario"
    params = json.loads(attrs.get("parameters", "[]"))
    files = json.loads(attrs.get("sweep_file_values", "{}") or "{}")
    values, overrides = {}, {}
    for p in params:
        arr = g[p["name"]]
        raw = arr[i]
        if arr.dtype.kind in "OUT":
            raw = str(as_strings(np.atleast_1d(raw))[0])
        values[p["name"]] = raw.item() if isinstance(raw, np.generic) else raw
        overrides[p["path"]] = _value(raw, p, files)
    base = Document(tree=yaml.safe_load(base_yaml), root_file=str(attrs.get("base_file", "<study base>")))
    try:
        sc = validate_document(overlay_document(base, overrides, attrs.get("spec_file", "sweep")))
    except ConfigError as exc:
        return None, "; ".join(str(x) for x in exc.issues)
    except (KeyError, IndexError) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    if config_hash(sc) != sid:
        return None, f"rebuilt from the store it hashes to {config_hash(sc)}, not {sid}"
    return (sc, values), ""


def _from_spec(attrs: dict, i: int, sid: str):
    from hpcrail.kinds import validate_document
    from hpcrail.sweep.spec import expand

    spec_file = Path(attrs.get("spec_file", ""))
    if not spec_file.is_file():
        return None, f"its spec file {spec_file} is gone"
    try:
        exp = expand(spec_file, json.loads(attrs.get("cli_set", "[]")))
    except ConfigError as exc:
        return None, f"its spec file {spec_file} no longer expands: {exc.issues[0]}"
    if exp.size <= i or exp.points[i].id != sid:
        return None, f"its spec file {spec_file} changed (scenario {i} is now another scenario)"
    sc = validate_document(exp.scenario_doc(exp.points[i]))
    return (sc, {p.name: v for p, v in zip(exp.parameters, exp.points[i].values)}), ""


def member(store: str | Path, which: str | int) -> Member:
    """The validated scenario of member ``which`` (index, scenario id or id prefix) of the sweep store
    ``store``, exactly as the sweep ran it (its hash is checked against the stored id).

    Raises :class:`MemberError` for an unknown member, a member whose overrides did not validate (status
    ``invalid``: the message says why) and a store from which the member cannot be rebuilt."""
    store = Path(store)
    try:
        g = open_group(store)
        attrs = dict(g.attrs)
    except Exception as exc:  # noqa: BLE001
        raise MemberError(f"{store} is not a readable zarr store ({type(exc).__name__})") from None
    if "sweep_fingerprint" not in attrs:
        raise MemberError(f"{store} is not an hpcrail sweep store (a run store holds one scenario: its "
                          "attribute config_yaml)")
    ids = as_strings(g["scenario_id"][:]).astype(str)
    i = _index(ids, which, store)
    sid = str(ids[i])
    status = str(as_strings(np.atleast_1d(g["status"][i]))[0])
    message = str(as_strings(np.atleast_1d(g["message"][i]))[0])
    if sid.startswith("x"):
        raise MemberError(f"scenario {i} of {store} is not a valid scenario (status {status}): {message}")
    hit, why = _from_store(store, attrs, g, i, sid)
    source = "store"
    if hit is None:
        hit, why2 = _from_spec(attrs, i, sid)
        source = str(attrs.get("spec_file"))
        if hit is None:
            raise MemberError(f"cannot rebuild scenario {i} ({sid}) of {store}: {why}; and {why2}")
    sc, values = hit
    return Member(store=store, index=i, id=sid, scenario=sc, values=values, status=status, message=message,
                  source=source)


def member_yaml(m: Member) -> str:
    """The member's canonical YAML with a comment header (loadable: ``hpcrail run`` takes it)."""
    from hpcrail.config.loading import canonical_yaml

    vals = ", ".join(f"{k}={v}" for k, v in m.values.items())
    head = (f"# scenario {m.index} of the study {m.store} (id {m.id}; {vals}); status in the study: {m.status}\n"
            f"# rebuilt from the {'store' if m.source == 'store' else 'spec file ' + m.source}; "
            f"`hpcrail rerun {m.store} {m.id} -o RUN.zarr` runs it with every output\n")
    return head + canonical_yaml(m.scenario)


__all__ = ["Member", "MemberError", "member", "member_yaml"]
