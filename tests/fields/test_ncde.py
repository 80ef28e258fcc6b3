"""Kidger's neural CDE with the FinalTanh field (docs/sources.md#ncde-finaltanh)."""

from __future__ import annotations

import pytest
import torch
import torchcde
from field_harness import (adjoint_and_direct_gradients, assert_gradients_close, assert_trains,
                           make_model, tiny_batch)
from torch.nn import functional as F

from zoo.model import count_parameters


@pytest.mark.parametrize("channels, static, hidden, hidden_hidden, n_out, expected", [
    (21, 0, 90, 40, 10, 88_940),  # Speech Commands
    (69, 7, 49, 49, 1, 193_541),  # Sepsis with observational intensity
    (35, 5, 49, 49, 1, 109_729),  # Sepsis without
])
def test_parameter_counts_of_kidgers_configurations(channels, static, hidden, hidden_hidden,
                                                    n_out, expected):
    """4 layers; Sepsis starts from the static network Linear(S→256), ReLU, Linear(256→h)."""
    field = {"kind": "ncde", "hidden": hidden, "hidden_hidden": hidden_hidden, "layers": 4}
    model = make_model(field, channels=channels, static=static, n_out=n_out,
                       initial="static" if static else "first_observation")
    assert count_parameters(model) == expected


def test_field_is_final_tanh_of_a_relu_mlp():
    model = make_model({"kind": "ncde", "hidden": 4, "hidden_hidden": 6, "layers": 3}, channels=3)
    f = model.body.vector_field
    z = torch.randn(2, 4)
    expected = torch.relu(F.linear(z, f.linear_in.weight, f.linear_in.bias))
    for linear in f.linears:
        expected = torch.relu(F.linear(expected, linear.weight, linear.bias))
    expected = torch.tanh(F.linear(expected, f.linear_out.weight, f.linear_out.bias))
    torch.testing.assert_close(f(z), expected.view(2, 4, 3))


class MatrixField(torch.nn.Module):
    """torchcde's form of a CDE field: f(t, z) -> (B, h, u)."""

    def __init__(self, field: torch.nn.Module):
        super().__init__()
        self.field = field

    def forward(self, t: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return self.field(z)


def test_solution_equals_torchcde_cdeint():
    """Same spline, same weights, float64, rk4 with step 0.5: the features are z at each series'
    final index of torchcde's solution."""
    model = make_model({"kind": "ncde", "hidden": 4, "hidden_hidden": 5, "layers": 2},
                       channels=3, step_size=0.5).double()
    batch = tiny_batch(model)
    spline = torchcde.CubicSpline(batch.coeffs, t=batch.times)
    z0 = model.body.initial.net(spline.evaluate(batch.times[0]))
    zs = torchcde.cdeint(X=spline, func=MatrixField(model.body.vector_field), z0=z0,
                         t=batch.times, adjoint=False, method="rk4", options={"step_size": 0.5})
    expected = zs[torch.arange(len(batch.y)), batch.final_index]
    actual = model.body(model.control.path(batch.times, batch.coeffs), batch)
    torch.testing.assert_close(actual, expected, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("per_step", [False, True])
def test_forward_and_backward(per_step):
    model = make_model({"kind": "ncde", "hidden": 4, "hidden_hidden": 4, "layers": 2},
                       channels=3, per_step=per_step).double()
    assert_trains(model, tiny_batch(model))


def test_adjoint_gradients_match_direct():
    """rk4 with step 0.025 on [0, 4], float64: agreement to 2e-6 of each tensor's largest entry."""
    direct, adjoint = adjoint_and_direct_gradients(
        {"kind": "ncde", "hidden": 5, "hidden_hidden": 5, "layers": 2})
    assert_gradients_close(direct, adjoint, rtol=2e-6)
