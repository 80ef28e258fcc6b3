"""Jacobian NCDE and matrix NCDE of paper c (docs/sources.md#jac-vector-field, #jac-differences)."""

from __future__ import annotations

import math

import pytest
import torch
from field_harness import (adjoint_and_direct_gradients, assert_gradients_close, assert_trains,
                           make_model, tiny_batch)
from torch.func import jacrev
from torch.nn import functional as F

from zoo.fields.jacobian import JacobianField
from zoo.model import count_parameters


def test_parameter_counts_match_paper_c_table_1():
    """u = 3, hidden 128: Jacobian field 33,408 ("33K"), matrix field 66,048 ("66K"); with the
    128 → 20 head the models have 35,988 and 68,628 ("36K" / "69K" in [JAC-main])."""
    jac = make_model({"kind": "jacobian"}, channels=3, n_out=20)
    mat = make_model({"kind": "matrix_ncde"}, channels=3, n_out=20)
    assert count_parameters(jac.body.vector_field) == 33_408
    assert count_parameters(mat.body.vector_field) == 66_048
    assert count_parameters(jac) == 35_988
    assert count_parameters(mat) == 68_628


def test_defaults_follow_the_authors_code():
    model = make_model({"kind": "jacobian"}, channels=3)
    field = model.body.vector_field
    assert (field.taylor_terms, field.relu_derivative) == (3, "sigmoid")
    assert model.body.features == 128
    assert count_parameters(model.body.initial) == 0  # h(t0) = 0
    for linear in (field.x_in, field.h_in, field.out):
        fan_out, fan_in = linear.weight.shape
        assert linear.weight.abs().max() <= math.sqrt(6 / (fan_in + fan_out))
    assert not field.h_in.bias.any() and not field.out.bias.any()


def surrogate_relu(x: torch.Tensor) -> torch.Tensor:
    """Value ReLU(x), derivative σ(x): ReLU′ replaced as in the authors' code."""
    soft = F.softplus(x)
    return torch.relu(x).detach() + soft - soft.detach()


def rnn_cell(field: JacobianField, relu, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """F(X, h) = tanh(W_out relu(W_x X + W_h h + b0) + b1), written from
    docs/sources.md#jac-vector-field."""
    l1 = field.x_in.weight @ x + field.h_in.weight @ h + field.h_in.bias
    return torch.tanh(field.out.weight @ relu(l1) + field.out.bias)


def taylor_series_of_jacobians(field: JacobianField, relu, x, dx, h) -> torch.Tensor:
    """Σ_{k<terms} J_h^k J_x Ẋ with J_x, J_h from torch.func.jacrev of the cell."""
    j_x = jacrev(lambda x_: rnn_cell(field, relu, x_, h))(x)
    j_h = jacrev(lambda h_: rnn_cell(field, relu, x, h_))(h)
    term = j_x @ dx
    total = term
    for _ in range(field.taylor_terms - 1):
        term = j_h @ term
        total = total + term
    return total


def random_field(terms: int, relu_derivative: str) -> tuple[JacobianField, tuple]:
    torch.manual_seed(0)
    field = JacobianField(3, 6, terms, relu_derivative).double()
    for bias in (field.h_in.bias, field.out.bias):
        torch.nn.init.normal_(bias)
    return field, tuple(torch.randn(n, dtype=torch.float64) for n in (3, 3, 6))


@pytest.mark.parametrize("terms", [2, 3])
@pytest.mark.parametrize("relu_derivative, relu", [("exact", torch.relu),
                                                   ("sigmoid", surrogate_relu)])
def test_field_is_the_taylor_series_of_autograd_jacobians(terms, relu_derivative, relu):
    field, (x, dx, h) = random_field(terms, relu_derivative)
    torch.testing.assert_close(field(x, dx, h), taylor_series_of_jacobians(field, relu, x, dx, h),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("terms", [2, 3])
def test_exact_field_has_the_gradients_of_the_autograd_jacobians(terms):
    """Second derivatives included; (with ``sigmoid`` the code differentiates T through the true
    ReLU, so no single cell reproduces its parameter gradients)."""
    field, (x, dx, h) = random_field(terms, "exact")
    params = list(field.parameters())
    weights = torch.randn(6, dtype=torch.float64)
    expected = taylor_series_of_jacobians(field, torch.relu, x, dx, h)
    torch.testing.assert_close(torch.autograd.grad(field(x, dx, h) @ weights, params),
                               torch.autograd.grad(expected @ weights, params),
                               rtol=1e-10, atol=1e-12)


def test_two_and_three_terms_differ_by_the_second_power_of_j_h():
    torch.manual_seed(1)
    two, three = JacobianField(3, 5, 2, "exact"), JacobianField(3, 5, 3, "exact")
    three.load_state_dict(two.state_dict())
    x, dx, h = torch.randn(4, 3), torch.randn(4, 3), torch.randn(4, 5)
    assert not torch.allclose(two(x, dx, h), three(x, dx, h))


@pytest.mark.parametrize("field", [{"kind": "jacobian", "hidden": 6, "taylor_terms": 2},
                                   {"kind": "matrix_ncde", "hidden": 6}])
@pytest.mark.parametrize("initial", ["zeros", "first_observation"])
def test_forward_and_backward(field, initial):
    model = make_model(field, channels=3, initial=initial).double()
    assert_trains(model, tiny_batch(model))


def test_per_step_features():
    model = make_model({"kind": "jacobian", "hidden": 6}, channels=3, per_step=True).double()
    assert_trains(model, tiny_batch(model))


def test_matrix_field_is_tanh_of_relu_mlp():
    """F(h) = tanh(W₂ ReLU(W₁h + b₁) + b₂) reshaped to (h × u)
    (docs/sources.md#jac-matrix-ncde)."""
    model = make_model({"kind": "matrix_ncde", "hidden": 5}, channels=3)
    f = model.body.vector_field
    h = torch.randn(2, 5)
    expected = torch.tanh(F.linear(torch.relu(F.linear(h, f.linear_in.weight, f.linear_in.bias)),
                                   f.linear_out.weight, f.linear_out.bias)).view(2, 5, 3)
    torch.testing.assert_close(f(h), expected)


@pytest.mark.parametrize("field", [{"kind": "jacobian", "hidden": 5},
                                   {"kind": "matrix_ncde", "hidden": 5}])
def test_adjoint_gradients_match_direct(field):
    """rk4 with step 0.025 on [0, 4], float64: agreement to 2e-6 of each tensor's largest entry."""
    direct, adjoint = adjoint_and_direct_gradients(field, initial="first_observation")
    assert_gradients_close(direct, adjoint, rtol=2e-6)
