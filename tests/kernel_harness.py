"""A compiled kernel against its torch form (shared by the kernel tests)."""

from __future__ import annotations

from collections.abc import Callable

import torch

RTOL = {torch.float64: 1e-12, torch.float32: 2e-6}


def run(operation: Callable, form: str, tensors, grad) -> list[torch.Tensor]:
    """The value of ``operation(*tensors, form=form)`` and every input's gradient for ``grad``."""
    tensors = [t.clone().requires_grad_() for t in tensors]
    y = operation(*tensors, form=form)
    y.backward(grad)
    return [y.detach()] + [t.grad for t in tensors]


def assert_forms_agree(operation: Callable, tensors, grad) -> None:
    """Compiled = torch form, value and gradients, each within ``RTOL`` of its scale: the same
    sums over the terms' magnitudes (the torch form on |inputs| and |grad|)."""
    rtol = RTOL[grad.dtype]
    scales = run(operation, "torch", [t.abs() for t in tensors], grad.abs())
    for compiled, torch_form, scale in zip(run(operation, "compiled", tensors, grad),
                                           run(operation, "torch", tensors, grad), scales):
        assert compiled.shape == torch_form.shape
        error = (compiled - torch_form).abs().max()
        assert error <= rtol * scale.max(), float(error)
