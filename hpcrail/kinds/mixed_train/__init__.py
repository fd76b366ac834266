"""Model kind ``mixed_train``: detailed multibody railway vehicles (the ``railway_vehicle`` kind's vehicles with
KEC or LUT wheel/rail contact) inside a long LTD consist, one state vector and one integrator, the hidden
vehicles in blocks between the detailed (boundary) vehicles; running safety (EN 14363 Y/Q, ΔQ/Q, ΣY) under
in-train forces.  Source: Bosso et al. 2024 (paper 000) §1-2, Figure 1, eqs 8-11; Yu et al. 2022 (paper 004).

Package layout: ``schema`` (YAML; the derived pure-LTD and vehicle-alone scenarios), ``outputs``
(declarations, shape), ``build``, ``run``, ``figures``.  The numba model is :mod:`hpcrail.models.mixed`; the
threads backend :mod:`hpcrail.partition.mixed`.
"""
from __future__ import annotations

from hpcrail.kinds.descriptor import NOT_BATCHABLE, Figure, ModelKind, lazy
from hpcrail.kinds.ltd import TRAIN_FIGURES, TRAIN_REPORT_FIGURES
from hpcrail.kinds.mixed_train.outputs import DETAILED, MIXED_TRAIN_OUTPUTS, SUMMARY, VEHICLE
from hpcrail.kinds.ltd.outputs import COUPLER
from hpcrail.kinds.railway_vehicle.outputs import BODY, WHEEL, WHEELSET
from hpcrail.kinds.mixed_train.schema import MixedTrainScenario, check_mixed_train

_FIG = "hpcrail.kinds.mixed_train.figures"

KIND = ModelKind(
    name="mixed_train",
    description="Detailed multibody railway vehicles inside a long LTD consist: running safety under in-train "
                "forces.",
    title="mixed train (detailed vehicles in an LTD consist)",
    source="Bosso et al. 2024 (paper 000) §2 and Figure 1 (hidden-vehicle blocks, MB user force); Yu et al. 2022 "
           "(paper 004) eqs 1-33; EN 14363:2016 §7",
    sign_convention="in-train forces + draft, - buff; track frame X forward, Y left, Z up; wheel forces on the "
                    "rail: Q + down, Y + towards the field side",
    schema=MixedTrainScenario,
    checks=check_mixed_train,
    build=lazy("hpcrail.kinds.mixed_train.build:build_mixed"),
    run=lazy("hpcrail.kinds.mixed_train.run:run"),
    batch=NOT_BATCHABLE,
    dims=(VEHICLE, COUPLER, DETAILED, BODY, WHEELSET, WHEEL),
    shape=lazy("hpcrail.kinds.mixed_train.outputs:shape"),
    outputs=MIXED_TRAIN_OUTPUTS,
    linearisation=None,
    run_figures=TRAIN_FIGURES[:1] + (
        Figure("running_safety", "per detailed vehicle: coupler forces, Y/Q, dQ/Q, sum Y and wheelset lateral "
               "displacement along the track", lazy(f"{_FIG}:running_safety_figure"), lazy(f"{_FIG}:has_series")),
    ),
    report_figures=TRAIN_REPORT_FIGURES + (
        Figure("running_safety_vs_buff", "worst Y/Q, dQ/Q and sum Y/limit against the peak buff force at the "
               "detailed vehicle", lazy(f"{_FIG}:running_safety_vs_buff"), lazy(f"{_FIG}:has_study")),
    ),
    summary=SUMMARY,
    summary_title="running safety under in-train forces (EN 14363) and train metrics",
    tools={"lcf": "hpcrail.kinds.mixed_train.lcf"},
)

__all__ = ["KIND"]
