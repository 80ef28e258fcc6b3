"""Solving only to the output times a body reads gives the same numbers as solving on the whole
grid and gathering (fixed-grid steps come from the whole grid): exactly with backprop through
the solver; with the continuous adjoint the forward values are equal, ``outputs: grid`` gives
the gradients of a solve asked for every grid time, and ``outputs: needed`` (the default) those
of the FWP/NCDE authors' request: the start, the batch's distinct final times and the end."""

from __future__ import annotations

import pytest
import torch

from zoo.build_context import Integrator
from zoo.backprop.adjoint import AdjointConfig
from zoo.backprop.direct import DirectConfig
from zoo.controls.natural_cubic import NaturalCubicConfig
from zoo.fields.trajectory import solve_at
from zoo.solvers.torchdiffeq_solver import TorchdiffeqConfig


class Field(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 3).double()

    def forward(self, t, y):
        return torch.tanh(self.linear(y)) * torch.cos(t)


def full_and_part(method, backprop):
    torch.manual_seed(0)
    times = torch.arange(9, dtype=torch.float64)
    values = torch.randn(4, 9, 3, dtype=torch.float64)
    control = NaturalCubicConfig()
    path = control.path(times, control.prepare(times, values))
    rows = torch.tensor([8, 3, 8, 5])
    integrate = Integrator(TorchdiffeqConfig(method=method, step_size=0.5), backprop)
    field, y0 = Field(), torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    full = solve_at(integrate, field, y0, path)[rows, torch.arange(4)]
    grads_full = torch.autograd.grad(full.square().sum(), [y0, *field.parameters()])
    part = solve_at(integrate, field, y0, path, rows)
    grads_part = torch.autograd.grad(part.square().sum(), [y0, *field.parameters()])
    torch.testing.assert_close(part, full, rtol=1e-12, atol=1e-12)
    return torch.cat([g.flatten() for g in grads_full]), torch.cat([g.flatten() for g in
                                                                     grads_part])


@pytest.mark.parametrize("method", ["euler", "midpoint", "rk4"])
@pytest.mark.parametrize("backprop", [DirectConfig(), AdjointConfig(outputs="grid")])
def test_identical_gradients(method, backprop):
    full, part = full_and_part(method, backprop)
    torch.testing.assert_close(part, full, rtol=1e-10, atol=1e-12)


def authors_times(times, final_index):
    """The FWP/NCDE authors' output times (metamodel.py ``NeuralCDE.forward``): t0, the sorted
    distinct final times other than the first and last grid time, then the end."""
    finals = final_index.unique(sorted=True)
    finals = finals[(finals != 0) & (finals != len(times) - 1)]
    return torch.cat([times[:1], times[finals], times[-1:]])


@pytest.mark.parametrize("rows", [[8, 3, 8, 5], [6, 3, 6, 5], [0, 2, 2, 7]])
def test_needed_outputs_give_the_authors_adjoint_gradients(rows):
    import torchdiffeq
    torch.manual_seed(0)
    times = torch.arange(9, dtype=torch.float64)
    control = NaturalCubicConfig()
    path = control.path(times, control.prepare(times, torch.randn(4, 9, 3,
                                                                     dtype=torch.float64)))
    rows = torch.tensor(rows)
    field, y0 = Field(), torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    params = [y0, *field.parameters()]

    def grads(z):
        return torch.cat([g.flatten() for g in torch.autograd.grad(z.square().sum(), params)])

    assert AdjointConfig().outputs == "needed"
    ours = solve_at(Integrator(TorchdiffeqConfig(method="rk4"), AdjointConfig()), field, y0,
                    path, rows)
    t = authors_times(times, rows)
    theirs = torchdiffeq.odeint_adjoint(field, y0, t, method="rk4", options={"step_size": 1.0},
                                        adjoint_params=tuple(field.parameters()))
    theirs = theirs[torch.searchsorted(t, times[rows]), torch.arange(4)]
    torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
    ours_grads = grads(ours)
    torch.testing.assert_close(ours_grads, grads(theirs), rtol=1e-14, atol=1e-14)
    dense = solve_at(Integrator(TorchdiffeqConfig(method="rk4"), AdjointConfig(outputs="grid")),
                     field, y0, path, rows)
    assert (grads(dense) - ours_grads).abs().max() > 1e-8  # the request changes gradients


@pytest.mark.parametrize("method", ["euler", "midpoint", "rk4"])
@pytest.mark.parametrize("backprop", [DirectConfig(), AdjointConfig()])
def test_a_sample_does_not_depend_on_its_batch_off_the_step_lattice(method, backprop):
    """On an irregular grid with the default step (its smallest gap) the last time a batch
    reads is off the step lattice; each sample's value is still its value in the solve over the
    whole grid, whatever the other samples' final times."""
    torch.manual_seed(0)
    times = torch.tensor([0.0, 0.3, 1.0, 1.7, 2.05, 3.0, 3.4], dtype=torch.float64)
    values = torch.randn(2, 7, 3, dtype=torch.float64)
    control = NaturalCubicConfig()
    path = control.path(times, control.prepare(times, values))
    integrate = Integrator(TorchdiffeqConfig(method=method), backprop)
    field, y0 = Field(), torch.randn(2, 3, dtype=torch.float64)
    full = solve_at(integrate, field, y0, path)
    for rows in ([3, 3], [3, 5], [3, 6], [2, 4]):
        part = solve_at(integrate, field, y0, path, torch.tensor(rows))
        torch.testing.assert_close(part, full[rows, torch.arange(2)], rtol=1e-12, atol=1e-12)
