"""Model kind ``ltd`` (the default): longitudinal train dynamics of a consist on a route.

One coordinate per vehicle, connection laws from the coupler-law table
(:mod:`hpcrail.kinds.ltd.couplers`: hysteretic draft gears, rigid bars, linear connections,
dry-friction draft gears, noninertial couplers), traction/dynamic brake per notch, running
resistance, grade and curvature, empirical or pneumatic air brake (brake pipe as 1-D compressible
flow, valve table :mod:`hpcrail.kinds.ltd.brakes`), distributed power; optional hidden-vehicle partition
and dry-friction layer.  Sources: Bosso et al. 2024 eqs (1)-(7); Oprea 2018; Massa et al. 2012.

Package layout: ``schema`` (YAML), ``couplers`` (law table), ``brakes`` (valve table and brake blocks),
``outputs`` and ``brake_outputs`` (declarations, shape), ``build`` and ``brake_build`` (scenario → model),
``run`` (run paths, batch hooks, outputs), ``result`` and ``brake_result``, ``friction_layer``,
``partitioned``, ``figures`` and ``brake_figures``.  Only ``schema``, ``couplers``, ``brakes`` and the
output declarations are imported here.
"""
from __future__ import annotations

from hpcrail.kinds.descriptor import Batch, Figure, ModelKind, lazy
from hpcrail.kinds.ltd.outputs import CHECK_DIM, COUPLER, LTD_OUTPUTS, MODE_CHANGE, SUMMARY, VEHICLE
from hpcrail.kinds.ltd.schema import Scenario, check_scenario


def _has_friction_results(ds) -> bool:
    return "relative_velocity" in ds


def _has_brake_pipe(ds) -> bool:
    return "brake_pipe_pressure" in ds


_FIG = "hpcrail.kinds.ltd.figures"
_BFIG = "hpcrail.kinds.ltd.brake_figures"
#: run figures of the train kinds (the planar train reuses the first three)
#: the sweep-report figures of the train kinds (ltd, planar_train, mixed_train)
TRAIN_REPORT_FIGURES = (
    Figure("envelopes", "per-coupler envelopes along the train, one line per level of a swept parameter and per "
           "connection type, locomotives and detailed vehicles marked", lazy(f"{_FIG}:study_envelopes"),
           lazy(f"{_FIG}:has_study_envelopes")),
)

TRAIN_FIGURES = (
    Figure("force_envelope", "in-train force envelope along the train: max draft and max buff per coupler over "
           "every step [kN], locomotives marked", lazy(f"{_FIG}:force_envelope"), lazy(f"{_FIG}:has_envelopes")),
    Figure("force_time", "in-train force against time (or distance) at the peak couplers and next to each "
           "locomotive, with notch, brake and speed below", lazy(f"{_FIG}:force_time"),
           lazy(f"{_FIG}:has_coupler_force")),
    Figure("force_heatmap", "in-train force over time x coupler", lazy(f"{_FIG}:force_heatmap"),
           lazy(f"{_FIG}:has_coupler_force")),
)


KIND = ModelKind(
    name="ltd",
    description="Longitudinal train dynamics of a consist on a route (one coordinate per vehicle).",
    title="longitudinal train dynamics",
    source="hpcrail LTD model, Bosso et al. 2024 eqs (1)-(7); dry-friction draft gears Oprea 2018; noninertial "
           "couplers Massa et al. 2012",
    sign_convention="forces and deflections + draft (tension), - buff (compression)",
    schema=Scenario,
    checks=check_scenario,
    build=lazy("hpcrail.kinds.ltd.build:build_ltd"),
    run=lazy("hpcrail.kinds.ltd.run:run"),
    batch=Batch(prepare=lazy("hpcrail.kinds.ltd.run:prepare"), finish=lazy("hpcrail.kinds.ltd.run:finish"),
                eligible=lazy("hpcrail.kinds.ltd.run:eligible")),
    dims=(VEHICLE, COUPLER, MODE_CHANGE, CHECK_DIM),
    shape=lazy("hpcrail.kinds.ltd.outputs:shape"),
    outputs=LTD_OUTPUTS,
    linearisation=None,
    run_figures=TRAIN_FIGURES + (
        Figure("friction", "relative velocities, relative displacements and one connection's force (Oprea 2018 "
               "Figs 3-5)", lazy(f"{_FIG}:friction_figures"), _has_friction_results),
        Figure("brake_pressures", "brake-pipe and brake-cylinder pressure against time at chosen vehicles "
               "(pneumatic brake)", lazy(f"{_BFIG}:brake_pressures"), _has_brake_pipe),
        Figure("brake_pipe_heatmap", "brake-pipe pressure over time x vehicle with the front's arrival (pneumatic "
               "brake)", lazy(f"{_BFIG}:brake_pipe_heatmap"), _has_brake_pipe),
        Figure("running_safety", "quasi-static running safety of every vehicle: its maxima over their limits "
               "along the train, locomotives and flags marked, the verdict",
               lazy("hpcrail.kinds.ltd.safety_figures:running_safety"),
               lazy("hpcrail.kinds.ltd.safety_figures:has_running_safety")),),
    report_figures=TRAIN_REPORT_FIGURES,
    summary=SUMMARY,
    summary_title="benchmark metrics (Bosso et al. 2024, Tables 1-2)",
)

__all__ = ["KIND", "TRAIN_FIGURES", "TRAIN_REPORT_FIGURES"]
