"""The fixed grid, stage times and output interpolation are torchdiffeq's own."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch
import torchdiffeq

from zoo.fast.solve.grid import FixedGrid
from zoo.fast.solve.tableau import TABLEAUX, integrate
from zoo.solvers.torchdiffeq_solver import TorchdiffeqConfig


class Recorder(torch.nn.Module):
    """dy/dt = A y + sin(t), recording the times it is called at."""

    def __init__(self):
        super().__init__()
        self.a = torch.tensor([[-0.3, 1.0], [-1.0, -0.2]], dtype=torch.float64)
        self.times: list[float] = []

    def forward(self, t, y):
        self.times.append(float(t))
        return y @ self.a.T + torch.sin(t)


@pytest.mark.parametrize("step", [1.0, 0.4, 0.3])
@pytest.mark.parametrize("method", sorted(TABLEAUX))
def test_grid_matches_torchdiffeq(method, step):
    t = torch.tensor([0.0, 1.0, 2.5, 3.0, 4.7], dtype=torch.float64)
    y0 = torch.tensor([[1.0, -0.5], [0.2, 0.3]], dtype=torch.float64)
    func = Recorder()
    reference = torchdiffeq.odeint(func, y0, t, method=method, options={"step_size": step})
    integrator = SimpleNamespace(solver=TorchdiffeqConfig(method=method, step_size=step), nfe=0)
    grid = FixedGrid.plan(integrator, t)
    stage_times = grid.stage_times(torch.float64)
    assert stage_times.tolist() == func.times  # bit for bit, in order
    distinct, index = grid.distinct_stages(torch.float64)
    assert distinct[index.flatten()].tolist() == func.times
    assert len(set(distinct.tolist())) == len(distinct)
    assert len(distinct) == (3 * grid.steps + 1 if method == "rk4" else len(func.times))
    assert integrator.nfe == len(func.times)
    stages = grid.tableau.stages
    states = integrate(grid.tableau, lambda n, s, y: func(stage_times[n * stages + s], y), y0,
                       grid.dt)
    torch.testing.assert_close(grid.outputs(states), reference, rtol=1e-12, atol=1e-12)
    rows = torch.tensor([4, 2])
    torch.testing.assert_close(grid.outputs(states, rows), reference[rows, torch.arange(2)])
    weights = grid.increment_weights(torch.arange(len(t)))
    increments = torch.stack(states).diff(dim=0)
    torch.testing.assert_close(y0 + torch.einsum("tn,nbc->tbc", weights, increments), reference)


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_outputs_on_grid_points_read_those_states_alone(method):
    """Output times on the grid: only their own states are kept (an adjoint's forward forms
    no other), and the result is still torchdiffeq's."""
    t = torch.tensor([0.0, 1.0, 2.0, 3.0, 5.0], dtype=torch.float64)
    y0 = torch.tensor([[1.0, -0.5], [0.2, 0.3]], dtype=torch.float64)
    func = Recorder()
    reference = torchdiffeq.odeint(func, y0, t, method=method, options={"step_size": 0.5})
    integrator = SimpleNamespace(solver=TorchdiffeqConfig(method=method, step_size=0.5), nfe=0)
    grid = FixedGrid.plan(integrator, t)
    assert grid.points_read() == [0, 2, 4, 6, 10]
    stage_times, stages = grid.stage_times(torch.float64), grid.tableau.stages
    states = integrate(grid.tableau, lambda n, s, y: func(stage_times[n * stages + s], y), y0,
                       grid.dt)
    kept = [y if k in grid.points_read() else None for k, y in enumerate(states)]
    torch.testing.assert_close(grid.outputs(kept), reference, rtol=1e-12, atol=1e-12)
    rows = torch.tensor([4, 0])
    torch.testing.assert_close(grid.outputs(kept, rows), reference[rows, torch.arange(2)])
