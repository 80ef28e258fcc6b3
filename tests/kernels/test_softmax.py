"""Softmax over the rows of (…, c, L) (zoo/kernels/softmax.py): compiled = torch.softmax, values
and gradients, including saturated inputs; gradients against finite differences."""

from __future__ import annotations

import pytest
import torch
from kernel_harness import run

from zoo.kernels.compiled import kernel
from zoo.kernels.softmax import softmax_over_rows

pytestmark = pytest.mark.skipif(kernel("softmax") is None,
                                reason="no C++ compiler: the compiled softmax cannot be built")
RTOL = {torch.float64: 1e-14, torch.float32: 1e-6}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
def test_compiled_equals_torch(dtype, threads, torch_threads):
    torch_threads(threads)
    gen = torch.Generator().manual_seed(0)
    # 300 lanes: more than one pass of the kernel's 256; scale 40 saturates some rows
    x = 40 * torch.randn(3, 5, 4, 300, dtype=dtype, generator=gen)
    grad = torch.randn(x.shape, dtype=dtype, generator=gen)
    for compiled, torch_form in zip(run(softmax_over_rows, "compiled", [x], grad),
                                    run(softmax_over_rows, "torch", [x], grad)):
        assert (compiled - torch_form).abs().max() <= RTOL[dtype] * torch_form.abs().max()


def test_non_contiguous_input_takes_the_torch_form():
    x = torch.randn(2, 7, 4, dtype=torch.float64).mT
    assert torch.equal(softmax_over_rows(x, form="auto"), torch.softmax(x, -2))


def test_gradients_match_finite_differences():
    x = torch.randn(2, 4, 9, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x: softmax_over_rows(x, form="compiled"), (x,))
