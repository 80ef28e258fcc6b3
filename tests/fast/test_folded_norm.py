"""Linear → LayerNorm → Linear folded into input space = the layers applied in turn."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from zoo.fast.fwp.folded_norm import foldable, folded_layer_norm


def layers(u: int, d: int, out: int, dtype: torch.dtype):
    torch.manual_seed(0)
    inner, norm, outer = nn.Linear(u, d), nn.LayerNorm(d), nn.Linear(d, out)
    with torch.no_grad():  # LayerNorm's affine part away from its (1, 0) initialisation
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.normal_()
    return [m.to(dtype) for m in (inner, norm, outer)]


def inputs(u: int, dtype: torch.dtype) -> torch.Tensor:
    """Speech-like inputs: normalised channels and an unnormalised time channel 0 … 160."""
    x = torch.randn(3, 161, u, dtype=dtype)
    x[..., 0] = torch.arange(161, dtype=dtype)
    return x


def folded(x, inner, norm, outer):
    z, weight, bias = folded_layer_norm(x, inner, norm, outer.weight, outer.bias)
    return nn.functional.linear(z, weight, bias)


@pytest.mark.parametrize(("dtype", "rtol"), [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_folded_equals_layers_with_gradients(dtype, rtol):
    inner, norm, outer = layers(21, 160, 336, dtype)
    x = inputs(21, dtype)
    params = [*inner.parameters(), *norm.parameters(), *outer.parameters()]
    grad = torch.randn(3, 161, 336, dtype=dtype)
    reference = outer(norm(inner(x)))
    result = folded(x, inner, norm, outer)
    assert (result - reference).abs().max() <= rtol * reference.abs().max()
    expected = torch.autograd.grad((reference * grad).sum(), params)
    got = torch.autograd.grad((result * grad).sum(), params)
    for name, g, e in zip(["A", "a", "γ", "β", "W", "b"], got, expected):
        assert (g - e).abs().max() <= 10 * rtol * e.abs().max(), name


def test_input_gradient():
    inner, norm, outer = layers(5, 12, 7, torch.float64)
    x = inputs(5, torch.float64)[:, :4].requires_grad_()
    assert torch.autograd.gradcheck(lambda x: folded(x, inner, norm, outer), (x,))


def test_only_narrow_linear_inputs_fold():
    assert foldable(nn.Linear(21, 128), 128)
    assert not foldable(nn.Linear(128, 128), 128)
    assert not foldable(nn.Identity(), 128)
