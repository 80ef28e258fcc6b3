"""Σ_u V_u c_u and ⟨V_u, q⟩ (zoo/fast/fwp/stage_sums.py): compiled = torch form, values and
gradients; gradients against finite differences."""

from __future__ import annotations

import pytest
import torch

from zoo.kernels.compiled import kernel
from zoo.fast.fwp.stage_sums import stage_dot, stage_sum

pytestmark = pytest.mark.skipif(kernel("stage_sums") is None,
                                reason="no C++ compiler: the compiled sums cannot be built")
RTOL = {torch.float64: 1e-12, torch.float32: 2e-6}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=str)
@pytest.mark.parametrize("operation", [stage_sum, stage_dot], ids=["sum", "dot"])
def test_compiled_equals_the_torch_form(operation, dtype, threads, torch_threads):
    torch.manual_seed(0)
    V = torch.randn(9, 5, 3, 7, dtype=dtype)
    weights = torch.randn(9, 3, 7, dtype=dtype) if operation is stage_sum else \
        torch.randn(5, 3, 7, dtype=dtype)
    grad = None
    results = {}
    torch_threads(threads)
    for form in ("compiled", "torch"):
        inputs = [V.clone().requires_grad_(), weights.clone().requires_grad_()]
        y = operation(*inputs, form=form)
        grad = torch.randn(y.shape, dtype=dtype, generator=torch.Generator().manual_seed(1))
        y.backward(grad)
        results[form] = [y.detach()] + [x.grad for x in inputs]
    for compiled, torch_form in zip(results["compiled"], results["torch"]):
        assert compiled.shape == torch_form.shape
        assert (compiled - torch_form).abs().max() <= RTOL[dtype] * torch_form.abs().max()


def test_gradients_match_finite_differences():
    torch.manual_seed(0)
    V = torch.randn(4, 3, 5, dtype=torch.float64, requires_grad=True)
    c = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    q = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda V, c: stage_sum(V, c, form="compiled"), (V, c))
    assert torch.autograd.gradcheck(lambda V, q: stage_dot(V, q, form="compiled"), (V, q))
