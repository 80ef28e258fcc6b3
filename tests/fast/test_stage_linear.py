"""Outputs kept as their layer (zoo/fields/fwp/stage_linear.py), scaled per stage or not: reads
through the layer = reads of the formed outputs, with gradients."""

from __future__ import annotations

import torch

from zoo.fast.fwp.stage_linear import StageLinear


def test_reads_through_the_layer_equal_reads_of_the_values():
    gen = torch.Generator().manual_seed(0)
    B, U, inputs, heads, c = 3, 11, 5, 2, 4
    weight, bias, z, scale = (torch.randn(*shape, dtype=torch.float64, generator=gen,
                                          requires_grad=True)
                              for shape in ((heads * c, inputs), (heads * c,), (B, U, inputs),
                                            (B, U)))
    q = torch.randn(B, heads, c, dtype=torch.float64, generator=gen)
    w = torch.randn(B, heads, U, dtype=torch.float64, generator=gen)
    for values, scaled in ((StageLinear(weight, bias, z, heads), z),
                           (StageLinear(weight, bias, z, heads, scale), z * scale[..., None])):
        formed = values.tensor()  # (B, U, H, c)
        assert formed.shape == (B, U, heads, c)
        assert torch.allclose(formed, (scaled @ weight.T + bias).unflatten(-1, (heads, c)),
                              atol=1e-12)
        reads = [(lambda q: _dot(values, q), lambda v: torch.einsum("buhc,bhc->bhu", v, q), q),  # noqa: B023
                 (values.weighted_sum, lambda v: torch.einsum("buhc,bhu->bhc", v, w), w)]
        for read, read_formed, argument in reads:
            through_layer, reference = read(argument), read_formed(values.tensor())
            assert torch.allclose(through_layer, reference, atol=1e-12)
            grads = torch.autograd.grad(through_layer.sin().sum(), (weight, bias, z, scale),
                                        allow_unused=True)
            expected = torch.autograd.grad(reference.sin().sum(), (weight, bias, z, scale),
                                           allow_unused=True)
            for g, e in zip(grads, expected):
                assert (g is None and e is None) or torch.allclose(g, e, atol=1e-12)


def _dot(values: StageLinear, q: torch.Tensor) -> torch.Tensor:
    """⟨v_u, q⟩ from the query folded into the layer."""
    folded, offset = values.query_folded(q)
    return torch.baddbmm(offset[..., None], folded, values.inputs.mT)
