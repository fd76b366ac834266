"""Model kind ``railway_vehicle``: a multibody railway vehicle (single wheelset, the Manchester wagon, any
bodies and suspension elements) running on track with curves, cant and irregularities, with KEC or LUT
wheel/rail contact, Polach creep forces, steady-curving values and EN 14363 running-safety quantities.
Source: Yu et al. 2022 (paper 004).

Package layout: ``schema`` (YAML), ``outputs`` (declarations, shape), ``build`` (scenario → model),
``run`` (integration, outputs), ``figures``.  The numba model is :mod:`hpcrail.models.vehicle`; the
running-safety post-processing is :mod:`hpcrail.results.running_safety`.
"""
from __future__ import annotations

from hpcrail.kinds.descriptor import NOT_BATCHABLE, Figure, ModelKind, lazy
from hpcrail.kinds.railway_vehicle.outputs import BODY, RAILWAY_VEHICLE_OUTPUTS, SUMMARY, WHEEL, WHEELSET
from hpcrail.kinds.railway_vehicle.schema import RailwayVehicleScenario, check_railway_vehicle

KIND = ModelKind(
    name="railway_vehicle",
    description="Multibody railway vehicle on track with KEC or LUT wheel/rail contact and EN 14363 running safety.",
    title="railway vehicle dynamics",
    source="Yu, Aceituno, Kurvinen, Matikainen, Korkealaakso, Rouvinen, Jiang, Escalona, Mikkola 2022 (paper 004) "
           "eqs 1-33; Manchester benchmark vehicle 1 (Iwnicki 1998); Polach 1999; EN 14363:2016",
    sign_convention="track frame X forward, Y left, Z up; lateral displacement + left, yaw + nose left, roll + left "
                    "side up; wheel forces on the rail: Q + down, Y + towards the field side, sum Y + left",
    schema=RailwayVehicleScenario,
    checks=check_railway_vehicle,
    build=lazy("hpcrail.kinds.railway_vehicle.build:build_railway_vehicle"),
    run=lazy("hpcrail.kinds.railway_vehicle.run:run"),
    batch=NOT_BATCHABLE,
    dims=(BODY, WHEELSET, WHEEL),
    shape=lazy("hpcrail.kinds.railway_vehicle.outputs:shape"),
    outputs=RAILWAY_VEHICLE_OUTPUTS,
    linearisation=None,
    run_figures=(
        Figure("curving", "lateral displacement and yaw of every body along the track",
               lazy("hpcrail.kinds.railway_vehicle.figures:curving_figure"),
               lazy("hpcrail.kinds.railway_vehicle.figures:has_series")),
        Figure("wheel_forces", "Q, Y, Y/Q and flange contact per wheel along the track",
               lazy("hpcrail.kinds.railway_vehicle.figures:wheel_forces_figure"),
               lazy("hpcrail.kinds.railway_vehicle.figures:has_series")),
    ),
    report_figures=(),
    summary=SUMMARY,
    summary_title="steady curving and EN 14363 running safety",
)

__all__ = ["KIND"]
