"""The Hebb-CDE read through its slow net's layers: no key, learning rate or value formed.

With the slow net folded into input space (:mod:`zoo.fast.fwp.folded_norm`), the raw keys and
rates at stage u are one layer of the stage input x_u (K = u + 1 wide) scaled by s_u = 1/σ_u:
[l_u; β_u] = s_u A x_u + b, A of H·(h+1) rows (the H·h keys head-major, then the H rates). The
read of :func:`zoo.fast.fwp.hebb.hebb_read`, per sample and head, is then

    y = Σ_u c_u a_u β_u softmax(l_u)       (c_u the stage's weight),

where a_u = ⟨v_u, q⟩ = f v_u + e comes from the values' inputs v_u with the query folded into
their layer (f = q W_h, e = ⟨q, b_h⟩: :meth:`StageLinear.query_folded
<zoo.fast.fwp.stage_linear.StageLinear.query_folded>`),

and its gradients, with g_u = ⟨p_u, ȳ⟩ and D_u = [w_u p_u ⊙ (ȳ − g_u); c_u a_u g_u],
w_u = c_u a_u β_u:

    Ā = Σ_u D_u (s_u x_u)ᵀ,  b̄ = Σ_u D_u,  s̄_u = ⟨D_u, A x_u⟩,  ā_u = c_u β_u g_u,
    f̄ = Σ_u ā_u v_uᵀ,  ē = Σ_u ā_u.

Its torch form writes the keys and rates of every stage (Hebb-CDE: 61,568 stages × 160) and reads
them back each way; on CPU it runs compiled (``kernels/layer_read.cpp``): per sample, blocks of
stages through both layers, the softmax and the read in cache, the layers recomputed in the
backward pass. The gradient of s comes from the layer's own outputs, so no product forms the
gradient of the inputs x (data on the fast paths; where one needs it, it takes the torch form).
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from ...kernels.compiled import (Form, chunks, each_chunk, function, longs, pointers,
                                 torch_form_gradient, use_compiled)


def layer_read(A: torch.Tensor, bias: torch.Tensor, x: torch.Tensor, s: torch.Tensor,
               c: torch.Tensor, f: torch.Tensor, e: torch.Tensor, v: torch.Tensor,
               form: Form = "auto") -> torch.Tensor:
    """Σ_u c_u a_u β_u softmax(l_u) per sample and head, (B, H, h), for the keys' and rates'
    layer A (H·(h+1), K) and bias (H·(h+1),) on inputs x (B, K, U) scaled by s (B, U), stage
    weights c (B, U) (no gradient) and a_u = f v_u + e from f (B, H, Kv), e (B, H) and the
    values' inputs v (B, Kv, U)."""
    if use_compiled(form, "layer_read", A, bias, x, s, c, f, e, v):
        return _LayerRead.apply(A, bias, x, s, c, f, e, v)
    heads = f.shape[1]
    raw = torch.matmul(A, x) * s[:, None] + bias[:, None]  # (B, H·(h+1), U)
    keys = raw[:, :-heads].unflatten(1, (heads, -1))
    a = torch.bmm(f, v) + e[..., None]
    w = c[:, None] * a * raw[:, -heads:]
    return (torch.softmax(keys, 2) * w[:, :, None]).sum(-1)


class _LayerRead(torch.autograd.Function):
    @staticmethod
    def forward(ctx, *operands):
        operands = [t.contiguous() for t in operands]
        ctx.save_for_backward(*operands)
        A, _, x, _, _, f, _, v = operands
        (B, H, Kv), (K, U) = f.shape, x.shape[1:]
        y = x.new_empty(B, H, A.shape[0] // H - 1)
        call = function("layer_read", "layer_read", x.dtype)
        each_chunk(chunks(B), lambda _, b0, b1: call(
            *longs(H, y.shape[2], K, Kv, U), *pointers(*operands, y), *longs(b0, b1)))
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        operands = ctx.saved_tensors
        A, bias, x, s, _, f, e, v = operands
        grad = grad.contiguous()
        (B, H, Kv), (K, U), h = f.shape, x.shape[1:], grad.shape[2]
        parts = chunks(B)
        dA, dbias = A.new_empty(len(parts), *A.shape), bias.new_empty(len(parts), *bias.shape)
        ds, df, de = torch.empty_like(s), torch.empty_like(f), torch.empty_like(e)
        call = function("layer_read", "layer_read_backward", x.dtype)
        each_chunk(parts, lambda index, b0, b1: call(
            *longs(H, h, K, Kv, U), *pointers(*operands, grad, dA[index], dbias[index], ds, df,
                                              de), *longs(b0, b1)))
        dx, dv = (torch_form_gradient(layer_read, list(operands), i, grad)
                  if ctx.needs_input_grad[i] else None for i in (2, 7))
        return dA.sum(0), dbias.sum(0), dx, ds, None, df, de, dv
