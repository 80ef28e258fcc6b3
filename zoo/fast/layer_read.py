"""The Hebb-CDE read through its keys' layer: the keys and learning rates never formed.

With the slow net folded into input space (:mod:`zoo.fields.fwp.folded_norm`), the raw keys and
rates at stage u are one layer of the stage input x_u (K = u + 1 wide) scaled by s_u = 1/σ_u:
[l_u; β_u] = s_u A x_u + b, A of H·(h+1) rows (the H·h keys head-major, then the H rates). The
read of :func:`zoo.fast.fwp_hebb.hebb_read`, per sample and head, is then

    y = Σ_u c_u a_u β_u softmax(l_u)       (a_u = ⟨v_u, q⟩, c_u the stage's weight),

and its gradients, with g_u = ⟨p_u, ȳ⟩ and D_u = [w_u p_u ⊙ (ȳ − g_u); c_u a_u g_u],
w_u = c_u a_u β_u:

    Ā = Σ_u D_u (s_u x_u)ᵀ,  b̄ = Σ_u D_u,  s̄_u = ⟨D_u, A x_u⟩,  ā_u = c_u β_u g_u.

Its torch form writes the keys and rates of every stage (Hebb-CDE: 61,568 stages × 160) and reads
them back each way; on CPU it runs compiled (``kernels/layer_read.cpp``): per sample, blocks of
stages through the layer, the softmax and the read in cache, the layer recomputed in the
backward pass. The gradient of s comes from the layer's own outputs, so no product forms the
gradient of the inputs x (data on the fast paths; where one needs it, it takes the torch form).
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from .compiled import (Form, chunks, each_chunk, function, longs, pointers, torch_form_gradient,
                       use_compiled)


def layer_read(A: torch.Tensor, bias: torch.Tensor, x: torch.Tensor, s: torch.Tensor,
               c: torch.Tensor, a: torch.Tensor, form: Form = "auto") -> torch.Tensor:
    """Σ_u c_u a_u β_u softmax(l_u) per sample and head, (B, H, h), for the layer A (H·(h+1), K)
    and bias (H·(h+1),), inputs x (B, K, U), scales s (B, U), weights c (B, U) (no gradient)
    and a (B, H, U)."""
    if use_compiled(form, "layer_read", A, bias, x, s, c, a):
        return _LayerRead.apply(A, bias, x, s, c, a)
    heads = a.shape[1]
    raw = torch.matmul(A, x) * s[:, None] + bias[:, None]  # (B, H·(h+1), U)
    keys = raw[:, :-heads].unflatten(1, (heads, -1))
    w = c[:, None] * a * raw[:, -heads:]
    return (torch.softmax(keys, 2) * w[:, :, None]).sum(-1)


class _LayerRead(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, bias, x, s, c, a):
        A, bias, x, s, c, a = (t.contiguous() for t in (A, bias, x, s, c, a))
        ctx.save_for_backward(A, bias, x, s, c, a)
        (B, H, U), K = a.shape, x.shape[1]
        y = a.new_empty(B, H, A.shape[0] // H - 1)
        call = function("layer_read", "layer_read", a.dtype)
        each_chunk(chunks(B), lambda _, b0, b1: call(
            *longs(H, y.shape[2], K, U), *pointers(A, bias, x, s, c, a, y), *longs(b0, b1)))
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        A, bias, x, s, c, a = ctx.saved_tensors
        grad = grad.contiguous()
        (B, H, U), K, h = a.shape, x.shape[1], grad.shape[2]
        parts = chunks(B)
        dA, dbias = A.new_empty(len(parts), *A.shape), bias.new_empty(len(parts), *bias.shape)
        ds, da = torch.empty_like(s), torch.empty_like(a)
        call = function("layer_read", "layer_read_backward", a.dtype)
        each_chunk(parts, lambda index, b0, b1: call(
            *longs(H, h, K, U), *pointers(A, bias, x, s, c, a, grad, dA[index], dbias[index], ds,
                                          da), *longs(b0, b1)))
        dx = None if not ctx.needs_input_grad[2] else torch_form_gradient(
            layer_read, [A, bias, x, s, c, a], 2, grad)
        return dA.sum(0), dbias.sum(0), dx, ds, None, da

