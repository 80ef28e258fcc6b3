"""tanh for the fast paths: a compiled float32 kernel on CPU (``kernels/tanh.cpp``), else torch.

PyTorch's CPU tanh takes about 2.6 ns per float32 element, six times its sigmoid; the kernel
about 0.6 ns with at most 1.5 ulp of error (PyTorch's: 0.5). The generic paths keep
``torch.tanh``. The kernel runs over the tensor's memory in order, so any dense layout (a
transposed view, say) is taken as it is and the result has the same strides. The backward is
PyTorch's (1 − y²)·ȳ.
"""

from __future__ import annotations

import torch

from .compiled import Form, chunks, each_chunk, function, longs, pointers, use_compiled


def tanh(x: torch.Tensor, form: Form = "auto") -> torch.Tensor:
    """tanh(x): compiled for dense float32 CPU tensors where the kernel builds (``auto``)."""
    dense = _memory_order(x)
    if x.dtype == torch.float32 and dense is not None and use_compiled(form, "tanh", x):
        return _Tanh.apply(x, dense)
    return torch.tanh(x)


def _memory_order(x: torch.Tensor) -> list[int] | None:
    """A permutation of x's axes under which it is contiguous, or None if it has none."""
    order = sorted(range(x.dim()), key=lambda axis: -x.stride(axis))
    return order if x.permute(order).is_contiguous() else None


class _Tanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, order):
        source = x.permute(order)
        y = torch.empty_like(source)
        call = function("tanh", "tanh", x.dtype)
        size = y.numel()
        ranges = chunks(size) if size >= 1 << 16 else [(0, size)]
        each_chunk(ranges, lambda _, i0, i1: call(*pointers(source, y), *longs(i0, i1)))
        y = y.permute(sorted(range(x.dim()), key=order.__getitem__))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y), None

