"""Parameters are runtime data: changing values, table sizes, train length or switching the air brake
never triggers a new compilation (one specialisation per model type and method)."""
from hpcrail.kinds import load_scenario
from hpcrail.integrators import driver
from hpcrail.models.ltd.kernel import ltd_observe_tables, ltd_rhs_tables
from hpcrail.simulate import run_scenario


def test_changing_parameters_does_not_recompile(configs_dir):
    variants = [[], ["vehicle_types.wagon.mass_t=60", "consist.1.count=20"], ["air_brake.enabled=false",
                "driver.commands.4.brake=0"], ["connection_types.autocoupler.draft.deflection_mm=[0, 5, 50, 90]",
                "connection_types.autocoupler.draft.loading_kN=[0, 10, 400, 2000]"], ["output.energy=false"]]
    sigs = None
    for v in variants:
        sc, _ = load_scenario(configs_dir / "trains/demo.yaml", ["simulation.duration_s=5"] + v)
        ds = run_scenario(sc)
        assert str(ds.status.values) == "completed"
        now = (len(ltd_rhs_tables.signatures), len(ltd_observe_tables.signatures),   # table-law trains
               sorted((k, len(d.signatures)) for k, d in driver._CLONES.items()))
        if sigs is None:
            sigs = now
        assert now == sigs, v
    assert sigs[0] == 1 and sigs[1] == 1


def _outputs_signatures_after(configs_dir, scenario, dispatcher, overrides=()):
    sc, _ = load_scenario(configs_dir / scenario, ["simulation.duration_s=0.05", *overrides])
    ds = run_scenario(sc)
    assert str(ds.status.values) == "completed"
    return list(dispatcher.signatures)


def test_precompiled_outputs_kernels_are_the_ones_called(configs_dir):
    """The outputs kernels a first run compiles while the compile helper compiles the integrator
    (``Problem.precompile``) have exactly the types of their call after the integration: one specialisation."""
    from hpcrail.models.planar_train.kernel import planar_outputs
    from hpcrail.models.vehicle.kernel import vehicle_outputs

    sigs = _outputs_signatures_after(configs_dir, "couplers/two_car_loaded.yaml", planar_outputs)
    assert len(sigs) == 1, sigs
    sigs = _outputs_signatures_after(configs_dir, "wheelrail/single_wheelset_R300.yaml", vehicle_outputs)
    assert len(sigs) == 1, sigs
