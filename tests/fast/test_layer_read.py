"""The Hebb read through its keys' and values' layers (zoo/fast/fwp/layer_read.py): compiled = torch
form, value and gradients, over block edges and thread splits; gradients against finite
differences."""

from __future__ import annotations

import pytest
import torch
from kernel_harness import assert_forms_agree

from zoo.kernels.compiled import kernel
from zoo.fast.fwp.layer_read import layer_read

pytestmark = pytest.mark.skipif(kernel("layer_read") is None,
                                reason="no C++ compiler: the compiled read cannot be built")


def inputs(dtype, gen, batch=5, heads=3, h=4, K=7, Kv=5, stages=37):
    shapes = ((heads * (h + 1), K), (heads * (h + 1),), (batch, K, stages), (batch, stages),
              (batch, stages), (batch, heads, Kv), (batch, heads), (batch, Kv, stages))
    A, bias, x, s, c, f, e, v = (torch.randn(*shape, dtype=dtype, generator=gen)
                                 for shape in shapes)
    return [A, bias, x, s.abs() + 0.5, f, e, v], c.abs()  # c (the grid's weights): no gradient


def read(c):
    return lambda A, bias, x, s, f, e, v, form="auto": layer_read(A, bias, x, s, c, f, e, v,
                                                                  form=form)


@pytest.mark.parametrize("stages", [37, 128, 300])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_compiled_equals_the_torch_form(dtype, threads, stages, torch_threads):
    torch_threads(threads)
    gen = torch.Generator().manual_seed(stages)
    tensors, c = inputs(dtype, gen, stages=stages)
    grad = torch.randn(5, 3, 4, dtype=dtype, generator=gen)
    assert_forms_agree(read(c), tensors, grad)


def test_gradients_match_finite_differences():
    tensors, c = inputs(torch.float64, torch.Generator().manual_seed(1), batch=2, heads=2, h=3,
                        K=3, Kv=2, stages=5)
    tensors = [t.requires_grad_() for t in tensors]
    assert torch.autograd.gradcheck(lambda *x: read(c)(*x, form="compiled"), tensors)
