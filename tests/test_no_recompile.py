"""Parameters are runtime data: changing values, table sizes, train length or switching the air brake
never triggers a new compilation (one specialisation per model type and method)."""
import numpy as np

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
    return list(dispatcher.signatures), ds


def test_precompiled_outputs_kernels_are_the_ones_called(configs_dir):
    """The outputs kernels a first run compiles while the compile helper compiles the integrator
    (``Problem.precompile``) have exactly the types of their call after the integration: one specialisation
    (issue 30: fewer specialisations on a first run)."""
    from hpcrail.models.planar_train.kernel import planar_outputs
    from hpcrail.models.vehicle.kernel import vehicle_outputs

    sigs, _ds = _outputs_signatures_after(configs_dir, "couplers/two_car_loaded.yaml", planar_outputs)
    assert len(sigs) == 1, sigs
    # the static wheel loads of the build go through the same outputs kernel (no kernel of their own): one
    # specialisation, and the loads carry the wheelset's weight (1813 kg, g = 9.81) equally on both wheels
    sigs, ds = _outputs_signatures_after(configs_dir, "wheelrail/single_wheelset_R300.yaml", vehicle_outputs)
    assert len(sigs) == 1, sigs
    q0 = ds.static_wheel_load.values
    np.testing.assert_allclose(q0.sum(), 1813 * 9.81, rtol=1e-9)
    np.testing.assert_allclose(q0[0], q0[1], rtol=1e-9)


def test_explicit_methods_never_compile_the_jacobian(configs_dir, tmp_path):
    """A first run with an explicit method (the demo's RK4) neither compiles nor loads the model's Jacobian (the
    kernel never calls it): in a fresh process the LTD Jacobian has no specialisation after the run; an implicit
    method has it.  Same results: the Jacobian is not an input of explicit methods."""
    import json
    import subprocess
    import sys

    from conftest import ROOT

    code = ("import sys, json\n"
            "from hpcrail.kinds import load_scenario\nfrom hpcrail.simulate import run_scenario\n"
            "from hpcrail.models.ltd.jacobian import ltd_jac_tables\n"
            "sc, _ = load_scenario(sys.argv[1], ['simulation.duration_s=1', 'integrator.method=' + sys.argv[2]])\n"
            "ds = run_scenario(sc)\n"
            "print(json.dumps([str(ds.status.values), len(ltd_jac_tables.signatures)]))\n")
    out = {}
    for method in ("rk4", "bdf2"):
        r = subprocess.run([sys.executable, "-c", code, str(configs_dir / "trains/demo.yaml"), method],
                           capture_output=True, text=True, cwd=tmp_path, timeout=900,
                           env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
        assert r.returncode == 0, r.stderr[-2000:]
        out[method] = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == {"rk4": ["completed", 0], "bdf2": ["completed", 1]}
