"""Scenario → numeric mixed train: the LTD model of the consist (:meth:`MixedTrainScenario.ltd_scenario`), one
railway-vehicle model per detailed vehicle placed at its LTD position, and the packed
:class:`~hpcrail.models.mixed.kernel.MixedParams`."""
from __future__ import annotations

import dataclasses

import numpy as np

from hpcrail.kinds.ltd.build import build_ltd
from hpcrail.kinds.ltd.result import vehicle_positions
from hpcrail.kinds.mixed_train.schema import MixedTrainScenario
from hpcrail.kinds.railway_vehicle.build import build_railway_vehicle
from hpcrail.models.ltd.build import LTDModel
from hpcrail.models.mixed.kernel import N_CD, MixedParams
from hpcrail.models.vehicle.build import VehicleModel


#: the 1-DOF neighbours' bogie centres at ±BOGIE_RATIO × their length from their centre (ASSUMED: 0.35, a
#: 16 m wagon with bogie centres 11.2 m apart), for the coupler geometry in curves
BOGIE_RATIO = 0.35


@dataclasses.dataclass
class MixedModel:
    """A built mixed train: the LTD model, the detailed vehicles' models, their scenarios alone, the packed
    parameters, the initial state (LTD states, then one slice per detailed vehicle) and the slices."""

    ltd: LTDModel
    vehicles: list[VehicleModel]
    vehicle_scenarios: list
    params: MixedParams
    y0: np.ndarray
    acc0: np.ndarray
    atol_scale: np.ndarray
    slices: list[tuple[int, int]]
    positions: list[int]
    notes: list

    @property
    def n_ltd(self) -> int:
        return self.ltd.y0.size


def build_mixed(sc: MixedTrainScenario) -> MixedModel:
    """The numeric model of a validated mixed-train scenario.  Raises :class:`~hpcrail.config.errors.ConfigError`
    as the railway-vehicle build does (a vehicle without static equilibrium, an irregularity that cannot be
    synthesised)."""
    ltd_sc = sc.ltd_scenario()
    ltd = build_ltd(ltd_sc)
    p = ltd.params
    s0 = vehicle_positions(ltd, ltd.y0)
    vehicles, scens, slices = [], [], []
    off = ltd.y0.size
    parts = [ltd.y0]
    atol = [ltd.atol_scale]
    acc = [ltd.acc0]
    arm = np.zeros((len(sc.detailed), 4))
    for d, dv in enumerate(sc.detailed):
        j = dv.position - 1
        vsc = sc.vehicle_scenario(d, float(s0[j]))
        vm = build_railway_vehicle(vsc, contact_loc=("detailed", d, "contact", "profiles"))
        vehicles.append(vm)
        scens.append(vsc)
        n = vm.params.n_state
        slices.append((off, off + n))
        off += n
        parts.append(vm.y0)
        atol.append(np.ones(n))
        acc.append(np.zeros(2 * vm.params.n_body))
        # the neighbours' pivots: `pivot_inset_m` inside their coupler faces
        if j > 0:
            arm[d, 0] = p.half_len[j - 1] - dv.pivot_inset_m
            arm[d, 2] = BOGIE_RATIO * 2.0 * p.half_len[j - 1]
        if j < p.n_veh - 1:
            arm[d, 1] = p.half_len[j + 1] - dv.pivot_inset_m
            arm[d, 3] = BOGIE_RATIO * 2.0 * p.half_len[j + 1]
    vps = tuple(vm.params for vm in vehicles)
    nws = max(vp.n_ws for vp in vps)
    nwork = max(vp.n_work for vp in vps)
    params = MixedParams(
        ltd=p, vehs=vps, det_j=np.array([dv.position - 1 for dv in sc.detailed], np.int64),
        det_off=np.array([a for a, _ in slices], np.int64), arm=arm,
        coupling=1 if sc.simulation.in_train_forces else 0, fext=np.zeros((len(vps), 7 + nws)),
        work=np.zeros((len(vps), nwork)), nodiag=np.zeros(0), acc_off=int(ltd.acc0.size))
    notes = list(ltd.notes)
    for d, vm in enumerate(vehicles):
        notes += [f"detailed vehicle {sc.detailed[d].position}: {m}" for m in vm.notes]
    return MixedModel(ltd=ltd, vehicles=vehicles, vehicle_scenarios=scens, params=params,
                      y0=np.concatenate(parts), acc0=np.concatenate(acc), atol_scale=np.concatenate(atol),
                      slices=slices, positions=[dv.position for dv in sc.detailed], notes=notes)


__all__ = ["build_mixed", "MixedModel", "N_CD"]
