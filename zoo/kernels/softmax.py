"""Softmax over a short axis with a long contiguous axis after it, (…, c, L) over c: the FWP
keys (c = 4 per head) over all stages or lanes at once (:func:`zoo.fields.small_softmax`).

PyTorch's CPU softmax over a non-last axis takes about 1.8 ns per element here forward and 2.7
backward (Hebb-CDE: 7.9 M keys); on CPU it runs compiled (``kernels/softmax.cpp``, the
exponential of ``exp.h``), vectorised along L: y = exp(x − max)/Σ exp(x − max) and
dx = y (dy − Σ_c y dy), as PyTorch computes them.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from .compiled import Form, chunks, each_chunk, function, longs, pointers, use_compiled


def softmax_over_rows(x: torch.Tensor, form: Form = "auto") -> torch.Tensor:
    """Softmax of x (…, c, L) over the axis c."""
    if x.is_contiguous() and x.dim() >= 2 and use_compiled(form, "softmax", x):
        return _Softmax.apply(x)
    return torch.softmax(x, -2)


def _run(entry: str, *tensors: torch.Tensor) -> torch.Tensor:
    c, lanes = tensors[0].shape[-2:]
    outer = tensors[0].numel() // max(c * lanes, 1)
    out = torch.empty_like(tensors[0])
    call = function("softmax", entry, out.dtype)
    each_chunk(chunks(outer), lambda _, o0, o1: call(*longs(c, lanes), *pointers(*tensors, out),
                                                     *longs(o0, o1)))
    return out


class _Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = _run("softmax", x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return _run("softmax_backward", y, grad.contiguous())
