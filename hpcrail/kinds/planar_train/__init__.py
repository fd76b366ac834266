"""Model kind ``planar_train``: planar car bodies (longitudinal, lateral, yaw) joined by couplers with
kinematic degrees of freedom, inertial or noninertial (Massa et al. 2012 §6-§9), on a track with
curves, spirals and superelevation.

Package layout: ``schema`` (YAML), ``outputs`` (declarations, shape), ``build`` (scenario → model),
``run`` (run, outputs, linearisation for ``hpcrail modes``).  The numba model is
:mod:`hpcrail.models.planar_train`.
"""
from __future__ import annotations

from hpcrail.kinds.descriptor import NOT_BATCHABLE, Figure, ModelKind, lazy
from hpcrail.kinds.ltd import TRAIN_FIGURES, TRAIN_REPORT_FIGURES
from hpcrail.kinds.planar_train.outputs import COUPLER, COUPLER_END, PLANAR_OUTPUTS, SUMMARY, VEHICLE
from hpcrail.kinds.planar_train.schema import PlanarTrainScenario, check_planar_train

KIND = ModelKind(
    name="planar_train",
    description="Planar train of car bodies joined by inertial or noninertial couplers with kinematic degrees of "
                "freedom.",
    title="planar train",
    source="hpcrail planar train, Massa et al. 2012 eqs 24-45",
    sign_convention="forces and deflections + draft (tension), - buff (compression); lateral + left",
    schema=PlanarTrainScenario,
    checks=check_planar_train,
    build=lazy("hpcrail.kinds.planar_train.build:build_planar"),
    run=lazy("hpcrail.kinds.planar_train.run:run"),
    batch=NOT_BATCHABLE,
    dims=(VEHICLE, COUPLER, COUPLER_END),
    shape=lazy("hpcrail.kinds.planar_train.outputs:shape"),
    outputs=PLANAR_OUTPUTS,
    linearisation=lazy("hpcrail.kinds.planar_train.run:planar_linearisation"),
    run_figures=TRAIN_FIGURES + (
        Figure("coupler_displacements", "slider displacements of both ends, knuckle displacement and shank angles "
               "of the peak couplers", lazy("hpcrail.kinds.ltd.figures:coupler_displacements"),
               lazy("hpcrail.kinds.ltd.figures:has_slider_displacement")),),
    report_figures=TRAIN_REPORT_FIGURES,
    summary=SUMMARY,
    summary_title="train metrics (Bosso et al. 2024, Tables 1-2) over every step",
)

__all__ = ["KIND"]
