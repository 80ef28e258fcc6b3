"""Values kept as their layer (zoo/fields/fwp/stage_linear.py): reads through the layer = reads
of the formed values, with gradients."""

from __future__ import annotations

import torch

from zoo.fields.fwp.stage_linear import StageLinear


def test_reads_through_the_layer_equal_reads_of_the_values():
    gen = torch.Generator().manual_seed(0)
    B, U, inputs, heads, c = 3, 11, 5, 2, 4
    weight, bias, z = (torch.randn(*shape, dtype=torch.float64, generator=gen,
                                   requires_grad=True)
                       for shape in ((heads * c, inputs), (heads * c,), (B, U, inputs)))
    q = torch.randn(B, heads, c, dtype=torch.float64, generator=gen)
    w = torch.randn(B, heads, U, dtype=torch.float64, generator=gen)
    values = StageLinear(weight, bias, z, heads)
    formed = values.tensor()  # (B, U, H, c)
    assert formed.shape == (B, U, heads, c)
    assert torch.allclose(formed, (z @ weight.T + bias).unflatten(-1, (heads, c)), atol=1e-12)
    reads = [(values.dot, lambda v: torch.einsum("buhc,bhc->bhu", v, q), q),
             (values.weighted_sum, lambda v: torch.einsum("buhc,bhu->bhc", v, w), w)]
    for read, read_formed, argument in reads:
        through_layer, reference = read(argument), read_formed(values.tensor())
        assert torch.allclose(through_layer, reference, atol=1e-12)
        grads = torch.autograd.grad(through_layer.sin().sum(), (weight, bias, z))
        expected = torch.autograd.grad(reference.sin().sum(), (weight, bias, z))
        for g, e in zip(grads, expected):
            assert torch.allclose(g, e, atol=1e-12)
