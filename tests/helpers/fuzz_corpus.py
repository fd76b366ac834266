"""The fuzz corpus of issue 18: seeded mutations of the shipped scenario configs, bad ``--set``
overrides and mutated sweep specs, each of which must be refused with a clear configuration error
(exit code 2: file, field, value and allowed values; no traceback, no hang, nothing accepted).

Generated deterministically (``random.Random(SEED)``), so a failing case has a stable id.  Every
mutation is invalid by construction: non-finite numbers (NaN, ±inf), magnitudes no model can mean
(±1e300), booleans and text where a number belongs, unknown names for enumerations and references,
missing required fields, wrong container types, sizes that would allocate without bound, and a few
hand-picked physical nonsense values that used to hang or crash a run (an infinite wagon mass, a
1e-300 m track section, ``davis.c = 1e30`` …).

:func:`classify` runs one case in-process (the same calls the CLI makes) and returns its outcome:
``clean`` (a ConfigError whose issues name the file, the field, the value and what is allowed),
``unclear`` (a ConfigError missing one of them), ``traceback`` (any other exception), ``accepted``
or ``timeout``.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import random
import signal
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
SEED = 18

#: shipped scenarios mutated in their resolved form (the mutated value keeps the file it came from)
SCENARIOS = [
    "configs/trains/demo.yaml", "configs/trains/train2.yaml", "configs/trains/train4.yaml",
    "configs/trains/noninertial_curve_100.yaml", "configs/friction/startup_6.yaml",
    "configs/friction/mixed_consist.yaml", "configs/couplers/two_car_loaded.yaml",
    "configs/couplers/curved_track.yaml", "configs/vertical/quarter_vehicle.yaml",
    "configs/vertical/full_vehicle_track.yaml", "configs/vertical/full_vehicle.yaml",
    # mixed trains (issue 31 item 6): the LTD consist, its detailed railway vehicles, contact and track
    "configs/mixed/short_consist_curve.yaml", "configs/mixed/train4_empty_wagon.yaml",
]
#: shipped sweep specs
SPECS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "jobs").glob("*.yaml"))

PER_SCENARIO = 36      #: sampled value mutations per scenario file
PER_SPEC = 14          #: sampled mutations per sweep spec

NUMERIC_MUTATIONS = {
    "nan": math.nan, "inf": math.inf, "-inf": -math.inf, "huge": 1e300, "-huge": -1e300,
    "bool": True, "text": "twelve",
}
#: keys whose string values are names from a fixed set (enumerations) or references to other entries
ENUM_KEYS = {"kind", "method", "basis", "model", "treatment", "law", "hold", "spectrum", "regularisation",
             "kinetic_law", "stick_velocity", "backend", "initial_state", "jacobian", "type", "default", "pairs",
             "internal", "top", "bottom", "point"}

#: hand-picked physical nonsense (file, dotted path, value) that hung, crashed or "completed" before
TARGETED = [
    ("configs/trains/demo.yaml", "vehicle_types.wagon.mass_t", math.inf),
    ("configs/trains/demo.yaml", "vehicle_types.wagon.mass_t", 1e30),
    ("configs/trains/demo.yaml", "vehicle_types.wagon.davis.c", 1e30),
    ("configs/trains/demo.yaml", "vehicle_types.loco.traction.curves.3.traction_notch_8_kN", 1e9),
    ("configs/trains/demo.yaml", "simulation.duration_s", 1e300),
    ("configs/trains/demo.yaml", "simulation.duration_s", math.inf),
    ("configs/trains/demo.yaml", "simulation.initial_notch", math.nan),
    ("configs/trains/demo.yaml", "route.sections.0.end_km", math.nan),
    ("configs/trains/demo.yaml", "route.sections.1.radius_m", math.nan),
    ("configs/trains/demo.yaml", "route.sections.1.radius_m", 1e300),
    ("configs/trains/demo.yaml", "route.sections.0.end_km", 1e-300),
    ("configs/trains/demo.yaml", "output.interval_s", 1e-300),
    ("configs/trains/demo.yaml", "integrator.step_s", 1e-300),
    ("configs/trains/demo.yaml", "integrator.rtol", 1e-300),
    ("configs/trains/demo.yaml", "consist.1.count", 10 ** 12),
    ("configs/trains/demo.yaml", "connection_types.autocoupler.draft.loading_kN.10", 1e12),
    ("configs/trains/demo.yaml", "friction.max_mode_changes", 10 ** 15),
    ("configs/friction/startup_6.yaml", "connection_types.friction_gear.static_friction_kN", math.nan),
    ("configs/friction/startup_6.yaml", "connection_types.friction_gear.static_friction_kN", math.inf),
    ("configs/friction/startup_6.yaml", "friction.stick_band_mps", math.inf),
    ("configs/couplers/curved_track.yaml", "track.sections.0.length_m", 1e-300),
    ("configs/couplers/curved_track.yaml", "coupler.knuckle.stiffness_N_per_m", math.nan),
    ("configs/couplers/curved_track.yaml", "coupler.draft_gear.stiffness_N_per_m", math.inf),
    ("configs/couplers/curved_track.yaml", "car_types.freight.mass_kg", math.inf),
    ("configs/couplers/curved_track.yaml", "simulation.duration_s", 1e300),
    ("configs/vertical/quarter_vehicle.yaml", "vehicle.body_types.car_body.mass_kg", math.inf),
    ("configs/vertical/quarter_vehicle.yaml", "simulation.duration_s", 1e12),
    ("configs/vertical/full_vehicle_track.yaml", "track.irregularity.spacing_m", 1e-300),
    ("configs/vertical/full_vehicle_track.yaml", "track.irregularity.length_m", 1e300),
    ("configs/vertical/full_vehicle_track.yaml", "track.irregularity.seed", 10 ** 30),
    # mixed trains: physical ranges of the kind's own fields and its cross-field rules (issue 31 item 5)
    ("configs/mixed/short_consist_curve.yaml", "simulation.duration_s", 1e9),
    ("configs/mixed/short_consist_curve.yaml", "front_start_m", 1e5),          # beyond the end of the track
    ("configs/mixed/short_consist_curve.yaml", "front_start_m", 10.0),         # the wagon before its start
    ("configs/mixed/short_consist_curve.yaml", "detailed.0.position", 99),     # outside the consist
    ("configs/mixed/short_consist_curve.yaml", "detailed.0.position", 1),      # the locomotive
    ("configs/mixed/short_consist_curve.yaml", "detailed.0.position", 10 ** 12),
    ("configs/mixed/short_consist_curve.yaml", "detailed.0.pivot_inset_m", 1e3),
    ("configs/mixed/short_consist_curve.yaml", "grade_permille", 1e3),
    ("configs/mixed/short_consist_curve.yaml", "simulation.initial_speed_kmh", 0.0),
    ("configs/mixed/short_consist_curve.yaml", "output.interval_s", 1e-9),
    ("configs/mixed/short_consist_curve.yaml", "output.reference_coupler", 10 ** 12),
    ("configs/mixed/short_consist_curve.yaml", "output.steady_window_m", 1e9),
    ("configs/mixed/short_consist_curve.yaml", "integrator.method", "cvode"),  # SUNDIALS: not for mixed trains
    ("configs/mixed/short_consist_curve.yaml", "integrator.step_s", 1e-300),
    ("configs/mixed/short_consist_curve.yaml", "partition.backend", "mpi"),
    ("configs/mixed/short_consist_curve.yaml", "partition.boundary_vehicles", [1, 6]),   # without the detailed one
    ("configs/mixed/short_consist_curve.yaml", "route", {"sections": []}),
    ("configs/mixed/train4_empty_wagon.yaml", "simulation.duration_s", math.inf),
    ("configs/mixed/train4_empty_wagon.yaml", "track.sections.0.length_m", 1e-300),
    ("configs/mixed/train4_empty_wagon.yaml", "output.interval_s", 1e-6),     # 1e8 samples of the wagon
]

#: bad ``--set`` overrides: (file, override text)
SET_OVERRIDES = [(f, s) for f in ("configs/trains/demo.yaml", "configs/couplers/two_car_loaded.yaml",
                                   "configs/vertical/quarter_vehicle.yaml") for s in (
    "simulation.duration_s=.nan", "simulation.duration_s=.inf", "simulation.duration_s=-.inf",
    "simulation.duration_s=1e300", "simulation.duration_s=yes", "simulation.duration_s=on",
    "simulation.duration_s=[1, 2]", "simulation.duration_s={a: 1}", "simulation.duration_s=ten",
    "simulation.duration_s=", "simulation=3", "integrator.method=heun", "integrator.rtol=.nan",
    "integrator.atol=-.inf", "integrator.max_steps=1.5", "integrator.max_steps=1e30", "integrator.step_s=true",
    "output.interval_s=.nan", "output.interval_s=1e-300", "nonexistent.key=1", "simulation.duration_s.x=1",
    "consist.99.count=1", "simulation..duration_s=1", "=3", "simulation.duration_s", "model=steam",
    "name=has space",
)]

PER_SPEC_TARGETED = [
    ("jobs/sobol_train_makeup.yaml", "parameters.vehicle_types.wagon.mass_t.uniform", [0, math.inf]),
    ("jobs/sobol_train_makeup.yaml", "parameters.vehicle_types.wagon.mass_t.uniform", [math.nan, 1]),
    ("jobs/sobol_train_makeup.yaml", "samples", 2 ** 40),
    ("jobs/sobol_train_makeup.yaml", "seed", 10 ** 30),
    ("jobs/coupler_stiffness_slack.yaml", "parameters.connection_types.autocoupler.slack_mm.linspace", [0, 45, 1e12]),
    ("jobs/coupler_stiffness_slack.yaml", "parameters.connection_types.autocoupler.slack_mm.linspace",
     [0, math.nan, 10]),
    ("jobs/coupler_stiffness_slack.yaml", "batch_size", 0),
    ("jobs/coupler_stiffness_slack.yaml", "batch_size", math.nan),
    ("jobs/integrator_tolerance.yaml", "parameters.integrator.rtol.logspace", [-9, 400, 7]),
    ("jobs/integrator_tolerance.yaml", "set.simulation.duration_s", math.nan),
    ("jobs/vertical_speed_track.yaml", "parameters.track.irregularity.seed.range", [0, 10 ** 15]),
    ("jobs/vertical_speed_track.yaml", "parameters.simulation.speed_kmh.values", [120, math.nan]),
    ("jobs/vertical_speed_track.yaml", "parameters.simulation.speed_kmh.values", [math.inf]),
    ("jobs/integrators_train2.yaml", "parameters.integrator.rtol.logspace", [-7, -4, 10 ** 9]),
    ("jobs/friction_regularisation.yaml", "outputs", {"envelopes": True, "series": {"interval_s": 1e-300}}),
    # the mixed-train study
    ("jobs/lcf_running_safety.yaml", "parameters.detailed.0.position.values", [122, 10 ** 12]),
    ("jobs/lcf_running_safety.yaml", "parameters.track.sections.2.radius_m.values", [300.0, math.nan]),
    ("jobs/lcf_running_safety.yaml", "parameters.detailed.0.vehicle.body_types.car_body.mass_kg.values",
     [-1.0, 12000.0]),
    ("jobs/lcf_running_safety.yaml", "set.simulation.duration_s", 1e9),
    ("jobs/lcf_running_safety.yaml", "set.front_start_m", 1e12),
    ("jobs/lcf_running_safety.yaml", "outputs", {"envelopes": True, "series": {"interval_s": 1e-9}}),
    ("jobs/lcf_running_safety.yaml", "outputs", {"series": {"interval_s": 0.5, "variables": ["no_such_series"]}}),
]


@dataclasses.dataclass
class Case:
    """One fuzz case: ``kind`` ("scenario", "set" or "spec"), the shipped file, the mutated location
    (dotted path, or the override text) and the value."""

    kind: str
    file: str
    path: str
    value: Any = None
    mutation: str = ""

    @property
    def id(self) -> str:
        v = self.mutation or repr(self.value)
        return f"{self.kind}:{Path(self.file).stem}:{self.path}={v}"[:160]


def _leaves(node, loc=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, loc + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, loc + (i,))
    else:
        yield loc, node


def _numeric(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _load(path: str):
    from hpcrail.config.loading import load_document

    return load_document(ROOT / path)


def scenario_cases(rng: random.Random) -> list[Case]:
    out = []
    for f in SCENARIOS:
        doc = _load(f)
        pool = []
        for loc, v in _leaves(doc.tree):
            path = ".".join(map(str, loc))
            if _numeric(v):
                pool += [Case("scenario", f, path, val, m) for m, val in NUMERIC_MUTATIONS.items()]
            elif isinstance(v, str) and loc and loc[-1] in ENUM_KEYS:
                pool.append(Case("scenario", f, path, "no_such_name", "unknown name"))
            elif isinstance(v, bool):
                pool.append(Case("scenario", f, path, 7.5, "number for a boolean"))
        rng.shuffle(pool)
        out += pool[:PER_SCENARIO]
        # structural mutations: a required block removed, a mapping replaced by a list and by a number
        for key in list(doc.tree)[:3]:
            if key in ("name", "description", "model"):
                continue
            out.append(Case("scenario", f, key, [1, 2], "list for a mapping"))
            out.append(Case("scenario", f, key, None, "removed"))
    out += [Case("scenario", f, p, v, "targeted") for f, p, v in TARGETED]
    mixed = "configs/mixed/short_consist_curve.yaml"   # the track reversed: the wagon starts in the canted curve
    out.append(Case("scenario", mixed, "track.sections", list(reversed(_load(mixed).tree["track"]["sections"])),
                    "reversed track"))
    return out


def set_cases() -> list[Case]:
    return [Case("set", f, s, None, "override") for f, s in SET_OVERRIDES]


def spec_cases(rng: random.Random) -> list[Case]:
    out = []
    for f in SPECS:
        tree = yaml.safe_load((ROOT / f).read_text())
        pool = []
        for loc, v in _leaves(tree):
            path = ".".join(map(str, loc))
            if path == "base":
                pool.append(Case("spec", f, path, "../configs/no_such_file.yaml", "missing base"))
            elif _numeric(v):
                pool += [Case("spec", f, path, val, m) for m, val in NUMERIC_MUTATIONS.items()
                         if m in ("nan", "inf", "-inf", "huge", "bool", "text")]
            elif isinstance(v, str) and loc[-1] in ("design", "registered"):
                pool.append(Case("spec", f, path, "no_such_name", "unknown name"))
        for p in tree.get("parameters", {}):
            pool.append(Case("spec", f, f"parameters.{p}", {"linspace": [0, 1]}, "short linspace"))
            pool.append(Case("spec", f, f"parameters.{p}", {"uniform": [0, 1], "values": [1]}, "two sources"))
            pool.append(Case("spec", f, f"parameters.no_such.field_{len(pool)}", {"values": [1, 2]}, "unknown path"))
        pool.append(Case("spec", f, "design", "lattice", "unknown design"))
        pool.append(Case("spec", f, "colour", "red", "unknown key"))
        rng.shuffle(pool)
        out += pool[:PER_SPEC]
    out += [Case("spec", f, p, v, "targeted") for f, p, v in PER_SPEC_TARGETED]
    return out


def corpus() -> list[Case]:
    """Every case, in a fixed order (seeded)."""
    rng = random.Random(SEED)
    return scenario_cases(rng) + set_cases() + spec_cases(rng)


# ------------------------------------------------------------------------------------------------
# applying and classifying
# ------------------------------------------------------------------------------------------------
def _parts(path: str) -> list:
    return [int(p) if p.lstrip("-").isdigit() else p for p in path.split(".")]


def _set(tree, parts, value):
    node = tree
    for p in parts[:-1]:
        if isinstance(node, dict) and p not in node:
            node[p] = {}
        node = node[p]
    if value is None and isinstance(node, dict):
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


class Timeout(Exception):
    pass


def _alarm(_signum, _frame):
    raise Timeout()


def _absolute_file_values(node, here: Path) -> None:
    """Relative paths of existing files among a spec's parameter values made absolute (in place)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if isinstance(v, str) and not Path(v).is_absolute() and v.endswith((".yaml", ".yml", ".csv")) \
                    and (here / v).is_file():
                node[k] = str(here / v)
            else:
                _absolute_file_values(v, here)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            if isinstance(v, str) and not Path(v).is_absolute() and v.endswith((".yaml", ".yml", ".csv")) \
                    and (here / v).is_file():
                node[i] = str(here / v)
            else:
                _absolute_file_values(v, here)


def run_case(case: Case, tmp: Path):
    """Run ``case`` in-process: returns what the CLI command would validate (raises on refusal)."""
    from hpcrail.kinds import load_scenario, validate_document
    from hpcrail.sweep.spec import expand

    if case.kind == "scenario":
        doc = _load(case.file)
        doc.tree = copy.deepcopy(doc.tree)
        _set(doc.tree, _parts(case.path), case.value)
        return validate_document(doc)
    if case.kind == "set":
        return load_scenario(ROOT / case.file, [case.path])
    tree = yaml.safe_load((ROOT / case.file).read_text())
    here = (ROOT / case.file).parent
    tree["base"] = str(here / tree["base"])
    _absolute_file_values(tree.get("parameters"), here)     # the spec is written elsewhere: file values stay valid
    parts = case.path.split(".")
    if parts[0] == "parameters" and len(parts) > 1:   # parameter keys are dotted paths themselves
        rest = ".".join(parts[1:])
        key = next((k for k in sorted(tree["parameters"], key=len, reverse=True)
                    if rest == k or rest.startswith(k + ".")), rest)
        tail = rest[len(key) + 1:] if rest != key else ""
        if tail:
            node = tree["parameters"][key]
            _set(node, _parts(tail), case.value)
        else:
            tree["parameters"][key] = case.value
    elif parts[0] == "set" and len(parts) > 1:
        tree.setdefault("set", {})[".".join(parts[1:])] = case.value
    else:
        _set(tree, _parts(case.path), case.value)
    spec = tmp / f"{Path(case.file).stem}.yaml"
    spec.write_text(yaml.safe_dump(tree, sort_keys=False, allow_unicode=True))
    return expand(spec)


def _shows_value(issue, case: Case) -> bool:
    from hpcrail.config.errors import _MISSING

    return issue.value is not _MISSING or "missing" in issue.message.lower() or "required" in issue.message.lower()


def issue_problems(issue) -> list[str]:
    """What a configuration issue fails to say (empty when it names file, field, value and allowed)."""
    from hpcrail.config.errors import _MISSING

    bad = []
    if not issue.file:
        bad.append("file")
    if not issue.path or issue.path == "(top level)" and issue.file != "--set":
        bad.append("field")
    missing = issue.value is _MISSING
    if missing and not any(w in issue.message.lower() for w in ("required", "missing")):
        bad.append("value")
    if not issue.allowed:
        bad.append("allowed")
    return bad


def classify(case, tmp: Path, limit_s: int = 30, run=None) -> tuple[str, str]:
    """``(outcome, detail)`` of one case (see the module docstring); ``run(case, tmp)`` applies it
    (default :func:`run_case`; the wheel/rail corpus passes its own)."""
    from hpcrail.config import ConfigError

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(limit_s)
    try:
        (run or run_case)(case, tmp)
    except Timeout:
        return "timeout", f"no answer within {limit_s} s"
    except ConfigError as exc:
        lines = [(str(i), issue_problems(i)) for i in exc.issues]
        bad = [f"{text}  <- missing {', '.join(p)}" for text, p in lines if p]
        if bad or not lines:
            return "unclear", "\n".join(bad) or "no issues"
        return "clean", "\n".join(t for t, _ in lines)
    except Exception as exc:  # noqa: BLE001 - the point: anything else is a traceback for the user
        return "traceback", f"{type(exc).__name__}: {exc}"[:500]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return "accepted", ""


def campaign(tmp: Path, cases: list[Case] | None = None) -> dict:
    """Outcome counts and the non-clean cases of the whole corpus."""
    import collections

    cases = corpus() if cases is None else cases
    counts = collections.Counter()
    bad = []
    for c in cases:
        outcome, detail = classify(c, tmp)
        counts[outcome] += 1
        counts[f"{c.kind}:{outcome}"] += 1
        if outcome != "clean":
            bad.append((c.id, outcome, detail))
    return {"n": len(cases), "counts": dict(counts), "bad": bad}


if __name__ == "__main__":   # python tests/fuzz_corpus.py: the campaign's numbers
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        res = campaign(Path(d))
    print(f"{res['n']} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(res["counts"].items()) if ":" not in k))
    print("by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(res["counts"].items()) if ":" in k))
    for cid, outcome, detail in res["bad"][: int(sys.argv[1]) if len(sys.argv) > 1 else 40]:
        print(f"--- {outcome}: {cid}\n    {detail[:400]}")
