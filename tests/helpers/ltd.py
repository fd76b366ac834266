"""Helpers for LTD tests: small scenario trees built in code (no files needed)."""
from __future__ import annotations

import copy

from hpcrail.config.loading import Document, apply_overrides
from hpcrail.kinds import validate_document


def flat_route(length_km=50.0, grade=0.0, radius=0.0):
    return {"start_m": 100.0, "sections": [{"start_km": 0.0, "end_km": length_km, "grade_permille": grade,
                                             "radius_m": radius}]}


def constant_loco(mass_t=100.0, force_kN=100.0, length_m=15.0, rate=1000.0, tau=0.001):
    """A 'locomotive' with speed-independent tractive effort (notch 1) and fast notch response."""
    return {"kind": "locomotive", "mass_t": mass_t, "length_m": length_m, "axles": 4,
            "davis": {"a": 0, "b": 0, "c": 0, "d": 0, "curve": 0},
            "traction": {"curves": {"speed_kmh": [0, 200], "traction_kN": [[force_kN, force_kN]]},
                         "notch_rate_per_s": rate, "notch_time_constant_s": tau}}


def frictionless_wagon(mass_t=100.0, length_m=15.0):
    return {"kind": "wagon", "mass_t": mass_t, "length_m": length_m, "axles": 4,
            "davis": {"a": 0, "b": 0, "c": 0, "d": 0, "curve": 0}}


def scenario_tree(n_wagons=4, *, connection=None, duration=60.0, step=0.001, notch_at=0.0, route=None,
                  loco=None, wagon=None, commands=None, energy=True, interval=0.1):
    tree = {
        "name": "test",
        "vehicle_types": {"loco": loco or constant_loco(), "wagon": wagon or frictionless_wagon()},
        "connection_types": {"link": connection or {"kind": "linear", "stiffness_MN_per_m": 10.0,
                                                    "damping_kNs_per_m": 200.0}},
        "consist": [{"type": "loco"}, {"type": "wagon", "count": n_wagons}],
        "connections": {"default": "link"},
        "route": route or flat_route(),
        "driver": {"basis": "time", "commands": commands or [{"time_s": notch_at, "notch": 1}]},
        "simulation": {"duration_s": duration},
        "integrator": {"method": "rk4", "step_s": step},
        "output": {"interval_s": interval, "energy": energy},
    }
    return tree


def make_scenario(tree, overrides=()):
    doc = Document(tree=copy.deepcopy(tree), root_file="<test>")
    apply_overrides(doc, overrides)
    return validate_document(doc)


def assert_outputs_bitwise(a, b, skip=("wall_time", "compile_time")) -> int:
    """Every floating-point variable of dataset ``a`` (but ``skip``: timings) equals ``b``'s bit for bit (NaN
    where NaN); returns how many were compared."""
    import numpy as np

    n = 0
    for v in a.data_vars:
        if v in skip or a[v].dtype.kind != "f":
            continue
        assert np.array_equal(a[v].values, b[v].values, equal_nan=True), v
        n += 1
    return n
