"""The index-1 DAE path on a real model: Yu et al. 2023's full vertical vehicle with massless damper nodes,
written as M ẏ = F(t, y) with a singular diagonal mass matrix (the node velocities are algebraic),
integrated by the suite's DAE-capable methods and compared with the ODE form (the nodes' velocities
eliminated) integrated tightly."""
import numpy as np
import pytest

from hpcrail.kinds import load_scenario
from hpcrail.integrators import Problem, integrate
from hpcrail.integrators import testproblems as tp
from hpcrail.kinds.vertical.build import build_vertical
from hpcrail.models.vertical.build import dae_form
from hpcrail.models.vertical.kernel import vertical_dae_rhs, vertical_rhs

from helpers.paths import CONFIGS

T = 0.5


@pytest.fixture(scope="module")
def vertical():
    sc = load_scenario(CONFIGS / "vertical" / "full_vehicle.yaml", [f"simulation.duration_s={T}"])[0]
    model = build_vertical(sc)
    t = np.linspace(0.0, T, 11)
    ode = Problem(vertical_rhs, tp.null_observe, model.params, model.y0, acc0=np.array([0.0, -np.inf]))
    ref = integrate(ode, "dopri5", t, T, rtol=1e-11, atol=1e-13)
    assert ref.success
    return model, t, ref


@pytest.mark.parametrize("method,kw,tol", [("radau5", dict(rtol=1e-8, atol=1e-12), 1e-6),
                                           ("bdf", dict(rtol=1e-8, atol=1e-12), 1e-5),
                                           ("trbdf2", dict(rtol=1e-8, atol=1e-12), 2e-4)])
def test_vertical_vehicle_dae_matches_the_ode_form(vertical, method, kw, tol):
    model, t, ref = vertical
    mass, z0 = dae_form(model)
    N, n = model.n_state, model.asm.n
    assert np.count_nonzero(mass == 0.0) == n > 0
    dae = Problem(vertical_dae_rhs, tp.null_observe, model.params, z0, mass=mass, acc0=np.array([0.0, -np.inf]))
    sol = integrate(dae, method, t, T, **kw)
    assert sol.success
    scale = np.abs(ref.y).max(axis=0) + 1e-12
    assert np.max(np.abs(sol.y[:, :N] - ref.y) / scale) < tol
    # the algebraic equations hold along the DAE solution
    r = np.empty(z0.size)
    for k in range(t.size):
        vertical_dae_rhs(t[k], np.ascontiguousarray(sol.y[k]), model.params, r)
        assert np.max(np.abs(r[N:])) < 1e-6 * np.max(np.abs(r[:N]) + 1.0)
