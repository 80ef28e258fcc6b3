"""GRU-ODE fast path = generic path: the lean loop, and the hand-written adjoint steps."""

from __future__ import annotations

import pytest
import torch
from fast_harness import METHODS, assert_fast_equals_generic

from zoo.backprop.adjoint import AdjointConfig
from zoo.build_context import Integrator
from zoo.controls.natural_cubic import NaturalCubicConfig
from zoo.fast.solve.adjoint import FieldSteps, adjoint_solve
from zoo.fast.solved.gru_ode import GRUODESteps
from zoo.fields.gru_ode import GRUODECell, gru_ode_derivative
from zoo.solvers.torchdiffeq_solver import TorchdiffeqConfig

FIELD = {"kind": "gru_ode", "hidden": 6}


@pytest.mark.parametrize("method", METHODS)
def test_fast_equals_generic(method):
    assert_fast_equals_generic(FIELD, method)


def test_per_step_and_float32():
    assert_fast_equals_generic(FIELD, "rk4", per_step=True)
    assert_fast_equals_generic(FIELD, "rk4", dtype=torch.float32)


@pytest.mark.parametrize("method", METHODS)
def test_adjoint_steps_equal_autograd_where_the_clamp_acts(method):
    """The hand-written GRU-ODE adjoint steps against the same field's steps under autograd,
    from states with |h| > 1 in places (the clamp's gradient) and a control whose time channel
    is not 1 (dX₀/dt scales the cell): outputs, ∂L/∂y0 (both x̃ and h) and every weight."""
    torch.manual_seed(0)
    channels, hidden = 3, 5
    cell = GRUODECell(channels, hidden).double()
    times = torch.arange(8, dtype=torch.float64) * 0.5
    control = NaturalCubicConfig()
    path = control.path(times, control.prepare(times, torch.randn(4, 8, channels,
                                                                   dtype=torch.float64)))
    y0 = (2 * torch.randn(4, channels + hidden, dtype=torch.float64)).requires_grad_()
    assert (y0[:, channels:].abs() > 1).any() and (y0[:, channels:].abs() < 1).any()
    params = tuple(cell.parameters())
    integrator = Integrator(TorchdiffeqConfig(method=method, step_size=0.3), AdjointConfig())
    t = times[[0, 3, 7]]
    weights = torch.randn(3, 4, channels + hidden, dtype=torch.float64)
    results = []
    for steps in (GRUODESteps(cell, channels),
                  FieldSteps(lambda y, dx: gru_ode_derivative(cell, channels, y, dx))):
        ys = adjoint_solve(integrator, t, y0, lambda s: (path.derivative(s),), steps, params)
        results.append((ys, torch.autograd.grad((ys * weights).sum(), (y0, *params))))
    (ours, our_grads), (theirs, their_grads) = results
    torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
    for a, b in zip(our_grads, their_grads):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
