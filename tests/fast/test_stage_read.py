"""Σ_u r_u ⟨a_u, q⟩ o_u (zoo/fast/fwp/stage_read.py), a or o given as logits or not: compiled =
torch form, values and gradients; gradients against finite differences."""

from __future__ import annotations

import pytest
import torch
from kernel_harness import assert_forms_agree

from zoo.kernels.compiled import kernel
from zoo.fast.fwp.stage_read import stage_read

pytestmark = pytest.mark.skipif(kernel("stage_read") is None,
                                reason="no C++ compiler: the compiled read cannot be built")


def inputs(dtype, gen, rows=6, h=4, c=3, stages=37):
    return [torch.randn(*shape, dtype=dtype, generator=gen)
            for shape in ((rows, h, stages), (rows, c, stages), (rows, stages), (rows, h))]


@pytest.mark.parametrize("softmax_of", [None, "a", "o"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_compiled_equals_the_torch_form(dtype, threads, softmax_of, torch_threads):
    torch_threads(threads)
    gen = torch.Generator().manual_seed(0)
    tensors = inputs(dtype, gen)
    grad = torch.randn(6, 3, dtype=dtype, generator=gen)
    assert_forms_agree(lambda *x, form: stage_read(*x, softmax_of=softmax_of, form=form),
                       tensors, grad)


def test_gradients_match_finite_differences():
    tensors = [t.requires_grad_() for t in inputs(torch.float64, torch.Generator().manual_seed(1),
                                                  rows=2, stages=5)]
    for softmax_of in (None, "a", "o"):
        assert torch.autograd.gradcheck(
            lambda *x: stage_read(*x, softmax_of=softmax_of, form="compiled"),  # noqa: B023
            tensors)
