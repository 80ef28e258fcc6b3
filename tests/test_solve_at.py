"""Solving only to the output times a body reads gives the same numbers as solving on the whole
grid and gathering (fixed-grid steps come from the whole grid): exactly with backprop through
the solver; with the continuous adjoint the forward values are equal and the gradients agree
to the adjoint's discretisation error (its backward pass restarts from the stored forward state
at fewer times), and ``outputs: grid`` keeps the authors' dense outputs."""

from __future__ import annotations

import pytest
import torch

from zoo.build_context import Integrator
from zoo.backprop.adjoint import AdjointConfig
from zoo.backprop.direct import DirectConfig
from zoo.controls.natural_cubic import NaturalCubicConfig
from zoo.fields.initial import solve_at
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


def test_adjoint_with_needed_outputs_agrees_to_discretisation_error():
    full, part = full_and_part("rk4", AdjointConfig(outputs="needed"))
    assert (part - full).norm() / full.norm() < 1e-3
