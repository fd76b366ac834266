"""Model kind ``vertical``: a pitch-plane vehicle of rigid bodies joined by springs, dampers, dampers with
rubber joints in series (massless nodes) and wheel/rail contacts, over a track irregularity, with ride
comfort (EN 12299, Sperling) and wheel/rail force metrics.  Source: Yu et al. 2023 eqs (1)-(19).

Package layout: ``schema`` (YAML), ``outputs`` (declarations, shape), ``build`` (scenario → model),
``run`` (solvers, run, outputs, many realisations).  The numba model is :mod:`hpcrail.models.vertical`.
"""
from __future__ import annotations

from hpcrail.kinds.descriptor import NOT_BATCHABLE, Figure, ModelKind, lazy
from hpcrail.kinds.vertical.outputs import BODY, ELEMENT, FLOOR_POINT, SUMMARY, VERTICAL_OUTPUTS, WHEEL
from hpcrail.kinds.vertical.schema import VerticalScenario, check_vertical

KIND = ModelKind(
    name="vertical",
    description="Vertical (pitch-plane) vehicle dynamics with massless damper nodes over a track irregularity.",
    title="vertical vehicle dynamics",
    source="hpcrail vertical vehicle model with massless damper nodes, Yu, Song, Zhao, Zhou 2023 eqs (1)-(19); "
           "ride comfort EN 12299 (Wb) and Sperling W_z",
    sign_convention="z + up, pitch + nose up, element forces + compression, wheel loads + on the rail; "
                    "displacements from the static equilibrium",
    schema=VerticalScenario,
    checks=check_vertical,
    build=lazy("hpcrail.kinds.vertical.build:build_vertical"),
    run=lazy("hpcrail.kinds.vertical.run:run"),
    batch=NOT_BATCHABLE,
    dims=(BODY, ELEMENT, WHEEL, FLOOR_POINT),
    shape=lazy("hpcrail.kinds.vertical.outputs:shape"),
    outputs=VERTICAL_OUTPUTS,
    linearisation=None,
    run_figures=(
        Figure("body_accelerations", "floor accelerations and bounce/pitch accelerations of the bodies against time",
               lazy("hpcrail.kinds.vertical.figures:body_accelerations"),
               lazy("hpcrail.kinds.vertical.figures:has_accelerations")),
        Figure("ride_comfort", "ride comfort per floor point: Sperling W_z, EN 12299 Wb r.m.s. and N_MV vertical term",
               lazy("hpcrail.kinds.vertical.figures:ride_comfort"), lazy("hpcrail.kinds.vertical.figures:has_comfort")),
    ),
    report_figures=(),
    summary=SUMMARY,
    summary_title="ride comfort and wheel/rail force metrics",
)

__all__ = ["KIND"]
