"""Fuzz corpus of the wheel/rail inputs (issue 31 item 6): seeded mutations of the railway-vehicle scenarios and
profile pairs of ``configs/wheelrail/`` and of the profile data files, plus the campaign's hand-picked cases —
every one refused as a clean configuration error (file, field, value, allowed; exit code 2 from the CLI), no
traceback, no hang (30 s per case), nothing accepted.

Run in-process on what the CLI does before any simulation: load and validate the scenario or pair, then fit
its profiles and check that the wheelset fits the track (``build_profiles``: no contact tables).  The mutation
machinery and the classification are those of :mod:`helpers.fuzz_corpus` (issue 18)."""
from __future__ import annotations

import copy
import math
import random
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers.fuzz_corpus import NUMERIC_MUTATIONS, ROOT, _leaves, _numeric, _parts, _set
from helpers.fuzz_corpus import classify as _classify

SEED = 31
SCENARIOS = ["configs/wheelrail/manchester_R500.yaml", "configs/wheelrail/single_wheelset_R300.yaml",
             "configs/wheelrail/manchester_R500_irregular.yaml"]
PAIRS = ["configs/wheelrail/s1002_uic60.yaml", "configs/wheelrail/worn_pair.yaml"]
PER_FILE = 18
#: the reliability campaign's wheel/rail findings (issue 31 items 2, 3, 4, 6): (file, dotted path, value)
TARGETED = [
    ("configs/wheelrail/s1002_uic60.yaml", "material.E_Pa", math.inf),
    ("configs/wheelrail/s1002_uic60.yaml", "placement.flange_back_spacing_mm", 1430),
    ("configs/wheelrail/s1002_uic60.yaml", "placement.flange_back_spacing_mm", 2000),
    ("configs/wheelrail/s1002_uic60.yaml", "placement.gauge_mm", 1000),
    ("configs/wheelrail/s1002_uic60.yaml", "placement.gauge_mm", 2400),
    ("configs/wheelrail/s1002_uic60.yaml", "placement.cant", 0.19),
    ("configs/wheelrail/s1002_uic60.yaml", "rail.gauge_depth_mm", 1e4),
    ("configs/wheelrail/s1002_uic60.yaml", "kec.s_step_mm", 1e-5),
    ("configs/wheelrail/s1002_uic60.yaml", "kec.s_min_mm", 1e-300),
    ("configs/wheelrail/s1002_uic60.yaml", "lut.y_step_mm", 1e-6),
    ("configs/wheelrail/s1002_uic60.yaml", "conicity.amplitudes_mm", [math.nan]),
    ("configs/wheelrail/s1002_uic60.yaml", "conicity.amplitudes_mm", [-3]),
    ("configs/wheelrail/worn_pair.yaml", "wheel.units", "m"),
    ("configs/wheelrail/worn_pair.yaml", "wheel.columns", [1, 0]),
    ("configs/wheelrail/worn_pair.yaml", "wheel.lateral_positive", "gauge"),
    ("configs/wheelrail/worn_pair.yaml", "wheel.vertical_positive", "up"),
    ("configs/wheelrail/worn_pair.yaml", "wheel.file", "profiles/worn_rail_left.prr"),
    ("configs/wheelrail/worn_pair.yaml", "rail.file", "profiles/worn_wheel_left.txt"),
    ("configs/wheelrail/worn_pair.yaml", "wheel.file", "/etc/passwd"),
    ("configs/wheelrail/worn_pair.yaml", "wheel_right.lateral_positive", "field"),
    ("configs/wheelrail/manchester_R500.yaml", "simulation.start_m", 1e9),
    ("configs/wheelrail/manchester_R500.yaml", "simulation.speed_mps", 1e4),
    ("configs/wheelrail/manchester_R500.yaml", "simulation.gravity_mps2", 1e6),
    ("configs/wheelrail/manchester_R500.yaml", "track.sections.2.cant_mm", 800),
    ("configs/wheelrail/manchester_R500.yaml", "vehicle.bodies.3.x_m", 1e6),
    ("configs/wheelrail/manchester_R500.yaml", "vehicle.bodies.4.x_m", 10.78),
    ("configs/wheelrail/manchester_R500.yaml", "vehicle.bodies.0.z_m", -5.0),
    ("configs/wheelrail/manchester_R500.yaml", "vehicle.elements.0.at_m.0", -1e12),
    ("configs/wheelrail/manchester_R500.yaml", "contact.profiles.material.E_Pa", math.inf),
    ("configs/wheelrail/manchester_R500_irregular.yaml", "track.irregularity.components",
     ["alignment", "alignment", "vertical"]),
]
#: invalid profile data files: (name, function of the original text -> mutated text)
def _lines(text):
    return text.splitlines()


def _data_lines(text):
    return [i for i, ln in enumerate(_lines(text)) if ln.strip() and ln.lstrip()[0] in "-+0123456789"]


def _nan_row(text):
    ln = _lines(text)
    i = _data_lines(text)[len(_data_lines(text)) // 2]
    ln[i] = "nan nan" if " " in ln[i] else "nan\tnan"
    return "\n".join(ln)


def _scale(text, f):
    out = []
    for ln in _lines(text):
        parts = ln.replace("\t", " ").split()
        try:
            vals = [float(p) for p in parts]
            out.append(" ".join(f"{v * f:.9g}" for v in vals) if vals else ln)
        except ValueError:
            out.append(ln)
    return "\n".join(out)


def _spike(text):
    ln = _lines(text)
    idx = _data_lines(text)
    i = idx[int(len(idx) * 0.6)]
    p = ln[i].replace("\t", " ").split()
    ln[i] = f"{p[0]} {float(p[1]) + 50.0:.6f}"
    return "\n".join(ln)


def _fold(text):
    ln = _lines(text)
    idx = _data_lines(text)
    a, b = idx[int(len(idx) * 0.55)], idx[int(len(idx) * 0.62)]
    ln[a], ln[b] = ln[b], ln[a]
    return "\n".join(ln)


def _gap(text):
    ln = _lines(text)
    idx = _data_lines(text)
    drop = set(idx[int(len(idx) * 0.5):int(len(idx) * 0.6)])
    return "\n".join(x for i, x in enumerate(ln) if i not in drop)


def _swap_cols(text):
    out = []
    for ln in _lines(text):
        p = ln.replace("\t", " ").split()
        out.append(f"{p[1]} {p[0]}" if len(p) == 2 and ln.strip()[0] in "-+0123456789" else ln)
    return "\n".join(out)


DATA_MUTATIONS = {
    "empty": lambda t: "",
    "header only": lambda t: "\n".join(ln for ln in _lines(t) if ln.startswith(("#", "!", "lateral")))[:400],
    "five points": lambda t: "\n".join([ln for ln in _lines(t) if not ln.strip() or ln.lstrip()[0] not in
                                        "-+0123456789"] + [_lines(t)[i] for i in _data_lines(t)[:5]]),
    "NaN row": _nan_row,
    "x 1e6": lambda t: _scale(t, 1e6),
    "x 1e-3": lambda t: _scale(t, 1e-3),
    "50 mm spike": _spike,
    "fold": _fold,
    "gap": _gap,
    "columns swapped": _swap_cols,
    "garbage": lambda t: "\x00\xff binary \x01" * 40,
    "text in the data": lambda t: t.replace(_lines(t)[_data_lines(t)[100]], "12.5 twelve"),
}
DATA_FILES = ["configs/wheelrail/profiles/worn_wheel_left.txt", "configs/wheelrail/profiles/worn_rail_left.prr"]


class Case:
    def __init__(self, kind, file, path, value=None, mutation=""):
        self.kind, self.file, self.path, self.value, self.mutation = kind, file, path, value, mutation

    @property
    def id(self):
        return f"{self.kind}:{Path(self.file).stem}:{self.path}={self.mutation or repr(self.value)}"[:160]


def corpus() -> list[Case]:
    from hpcrail.config.loading import load_document

    rng = random.Random(SEED)
    out = []
    for f in SCENARIOS + PAIRS:
        tree = load_document(ROOT / f).tree
        pool = []
        for loc, v in _leaves(tree):
            path = ".".join(map(str, loc))
            if _numeric(v):
                pool += [Case("file", f, path, val, m) for m, val in NUMERIC_MUTATIONS.items()]
            elif isinstance(v, str) and loc[-1] in ("builtin", "method", "kind", "law", "units", "format", "type"):
                pool.append(Case("file", f, path, "no_such_name", "unknown name"))
        rng.shuffle(pool)
        out += pool[:PER_FILE]
    out += [Case("file", f, p, v, "targeted") for f, p, v in TARGETED]
    out += [Case("data", f, m, None, m) for f in DATA_FILES for m in DATA_MUTATIONS]
    return out


def run_case(case: Case, tmp: Path):
    """What ``hpcrail run``/``hpcrail contact`` do before simulating: load, validate, fit the profiles."""
    from hpcrail.config import load_document, validate
    from hpcrail.kinds import validate_document
    from hpcrail.models.wheelrail.config import ProfilePairConfig, _checks, build_profiles

    if case.kind == "data":
        work = tmp / f"c{abs(hash(case.id)) % 10 ** 8}"
        shutil_copy(ROOT / "configs" / "wheelrail", work)
        target = work / Path(case.file).relative_to("configs/wheelrail")
        target.write_bytes(DATA_MUTATIONS[case.path](target.read_text()).encode("utf-8", "surrogateescape"))
        doc = load_document(work / "worn_pair.yaml")
        return build_profiles(validate(ProfilePairConfig, doc, _checks), doc)
    doc = load_document(ROOT / case.file)
    doc.tree = copy.deepcopy(doc.tree)
    _set(doc.tree, _parts(case.path), case.value)
    if "model" in doc.tree:
        sc = validate_document(doc)
        return build_profiles(sc.contact.profiles, doc, ("contact", "profiles"))
    return build_profiles(validate(ProfilePairConfig, doc, _checks), doc)


def shutil_copy(src: Path, dst: Path) -> None:
    import shutil

    shutil.copytree(src, dst, dirs_exist_ok=True)


def classify(case: Case, tmp: Path, limit_s: int = 30) -> tuple[str, str]:
    """The shared classification (:func:`helpers.fuzz_corpus.classify`) with this corpus's :func:`run_case`."""
    return _classify(case, tmp, limit_s, run=run_case)
    return "accepted", ""


def test_the_wheelrail_fuzz_corpus_is_refused_clearly(tmp_path):
    cases = corpus()
    assert len(cases) >= 140 and len({c.id for c in cases}) > 0.95 * len(cases)
    bad = []
    for c in cases:
        outcome, detail = classify(c, tmp_path)
        if outcome != "clean":
            bad.append(f"{outcome}: {c.id}\n    {detail}")
    assert not bad, f"{len(bad)} of {len(cases)} not clean:\n" + "\n".join(bad[:25])


@pytest.mark.parametrize("case, words", [
    (Case("file", "configs/wheelrail/s1002_uic60.yaml", "placement.flange_back_spacing_mm", 1430),
     ["s1002_uic60.yaml", "placement.flange_back_spacing_mm", "1430", "≤ 1395"]),
    (Case("file", "configs/wheelrail/s1002_uic60.yaml", "kec.s_step_mm", 1e-5), ["kec.s_step_mm", "≥ 0.02"]),
    (Case("file", "configs/wheelrail/s1002_uic60.yaml", "kec.s_min_mm", 1e-300), ["kec.s_min_mm", "≤ -15"]),
    (Case("file", "configs/wheelrail/worn_pair.yaml", "wheel.units", "m"),
     ["worn_pair.yaml", "wheel.units", "the file's header says units: mm"]),
    (Case("file", "configs/wheelrail/worn_pair.yaml", "wheel.lateral_positive", "gauge"),
     ["wheel.lateral_positive", "header says lateral_positive: field"]),
    (Case("file", "configs/wheelrail/worn_pair.yaml", "rail.file", "profiles/worn_wheel_left.txt"),
     ["rail.file", "says it is a wheel profile"]),
    (Case("data", "configs/wheelrail/profiles/worn_wheel_left.txt", "x 1e6", None, "x 1e6"),
     ["worn_wheel_left.txt", "lateral extent", "millimetres read as metres"]),
    (Case("data", "configs/wheelrail/profiles/worn_wheel_left.txt", "NaN row", None, "NaN row"),
     ["worn_wheel_left.txt", "not a finite number"]),
    (Case("data", "configs/wheelrail/profiles/worn_rail_left.prr", "NaN row", None, "NaN row"),
     ["worn_rail_left.prr", "not a finite number"]),
    (Case("data", "configs/wheelrail/profiles/worn_wheel_left.txt", "fold", None, "fold"),
     ["worn_wheel_left.txt", "folds back at lines"]),
    (Case("data", "configs/wheelrail/profiles/worn_wheel_left.txt", "50 mm spike", None, "50 mm spike"),
     ["spike or step"]),
    (Case("data", "configs/wheelrail/profiles/worn_wheel_left.txt", "gap", None, "gap"), ["a gap of", "max_gap_mm"]),
    (Case("file", "configs/wheelrail/manchester_R500.yaml", "vehicle.bodies.4.x_m", 10.78),
     ["vehicle.bodies.4.x_m", "wheelsets 'ws1' and 'ws2' are 0 m apart", "at least 0.5 m apart"]),
    (Case("file", "configs/wheelrail/manchester_R500.yaml", "simulation.start_m", 1e9), ["simulation.start_m", "1e+06"]),
    (Case("file", "configs/wheelrail/manchester_R500.yaml", "simulation.start_m", 600.0),
     ["simulation.start_m", "beyond the end of the track (500 m)"]),
])
def test_examples_say_file_field_and_allowed(tmp_path, case, words):
    outcome, detail = classify(case, tmp_path)
    assert outcome == "clean", detail
    for w in words:
        assert w in detail, (w, detail)


def test_profile_errors_never_echo_file_contents(tmp_path):
    """A wheel file that is /etc/passwd-like text is refused with its name and line numbers, never its text."""
    work = tmp_path / "w"
    shutil_copy(ROOT / "configs" / "wheelrail", work)
    (work / "profiles" / "worn_wheel_left.txt").write_text("root:x:0:0:root:/root:/bin/bash\n" * 20)
    from hpcrail.config import ConfigError, load_document, validate
    from hpcrail.models.wheelrail.config import ProfilePairConfig, _checks, build_profiles

    doc = load_document(work / "worn_pair.yaml")
    with pytest.raises(ConfigError) as ei:
        build_profiles(validate(ProfilePairConfig, doc, _checks), doc)
    assert "root:x" not in str(ei.value) and "/bin/bash" not in str(ei.value)
    np.testing.assert_equal(True, "worn_wheel_left.txt" in str(ei.value))
    assert yaml  # (the corpus writes YAML-free mutations of the data files)
