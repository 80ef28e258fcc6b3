"""The compiled sweep (zoo/kernels/src/sweep.cpp) = the torch form: both outputs and every
gradient, float64 and float32, one or two threads, forward and reverse, disjoint and shared
stages, several batch axes and lane counts around the kernel's block of 64."""

from __future__ import annotations

import pytest
import torch

from zoo.kernels.compiled import kernel
from zoo.fast.fwp.delta_sweep import sweep

pytestmark = pytest.mark.skipif(kernel("sweep") is None,
                                reason="no C++ compiler: the compiled sweep cannot be built")

#: float32: both forms run the same multiply-adds per lane, summed in another order
RTOL = {torch.float64: 1e-12, torch.float32: 2e-6}


def _run(inputs, stride, reverse, form):
    inputs = [x.clone().requires_grad_() for x in inputs]
    x, f = sweep(*inputs[:2], stride, *inputs[2:], reverse=reverse, form=form)
    generator = torch.Generator().manual_seed(1)
    weights = [torch.randn(t.shape, dtype=t.dtype, generator=generator) for t in (x, f)]
    ((x * weights[0]).sum() + (f * weights[1]).sum()).backward()
    return [x.detach(), f.detach()] + [t.grad for t in inputs]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("S, stride, batch", [(4, 3, (9, 11)), (2, 2, (130,)), (3, 3, (64,))],
                         ids=["rk4-shared", "midpoint-disjoint", "one-block"])
def test_compiled_sweep_equals_the_torch_form(S, stride, batch, reverse, dtype, threads,
                                              torch_threads):
    torch.manual_seed(S)
    h, M = 5, 7
    inputs = [0.3 * torch.randn(h, *batch, dtype=dtype),
              0.3 * torch.randn((M - 1) * stride + S, h, *batch, dtype=dtype),
              torch.randn(M, S, S, *batch, dtype=dtype), torch.randn(M, S, *batch, dtype=dtype)]
    torch_threads(threads)
    compiled = _run(inputs, stride, reverse, "compiled")
    torch_form = _run(inputs, stride, reverse, "torch")
    for index, (a, b) in enumerate(zip(compiled, torch_form)):
        assert a.shape == b.shape
        error = (a - b).abs().max()
        assert error <= RTOL[dtype] * b.abs().max(), (index, float(error))


def test_auto_runs_compiled_on_cpu():
    h, M, S = 2, 3, 2
    x, _ = sweep(torch.randn(h, 4, requires_grad=True), torch.randn(M * S, h, 4), S,
                 torch.randn(M, S, S, 4))
    assert type(x.grad_fn).__name__ == "_CompiledSweepBackward"
