"""The folded LayerNorm's per-stage scale 1/σ = 1/√(x̄ᵀ Q x̄ + ε), in float64
(:mod:`zoo.fast.fwp.folded_norm`), for the columns x̄_n of X (G, K, N).

Its torch form converts X to float64 and runs a product with Q, a product with X and a sum,
each way (Hebb-CDE: 61,568 columns of 22, about 14 ms a training step on one core); on CPU it
runs compiled (``kernels/norm_scale.cpp``): blocks of columns converted in cache, Q x̄ and the
gradient Q̄ = Σ_n c_n x̄_n x̄_nᵀ with c_n = −s_n³ s̄_n / 2 through the product tiles of
``kernels/product.h`` (X is data on the fast paths; where it needs a gradient, that takes the
torch form).
"""

from __future__ import annotations

import ctypes

import torch
from torch.autograd.function import once_differentiable

from .compiled import (Form, chunks, each_chunk, function, longs, pointers, torch_form_gradient,
                       use_compiled)


def norm_scale(Q: torch.Tensor, X: torch.Tensor, eps: float, form: Form = "auto") -> torch.Tensor:
    """1/√(x̄_nᵀ Q x̄_n + ε) for Q (K, K) float64 and X (G, K, N): (G, N) float64."""
    if use_compiled(form, "norm_scale", X):
        return _NormScale.apply(Q, X, eps)
    wide = X.double()
    return torch.rsqrt((torch.matmul(Q, wide) * wide).sum(1) + eps)


class _NormScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, X, eps):
        Q, X = Q.contiguous(), X.contiguous()
        (G, K, N) = X.shape
        s = Q.new_empty(G, N)
        call = function("norm_scale", "norm_scale", X.dtype)
        each_chunk(chunks(G), lambda _, g0, g1: call(
            *longs(K, N), *pointers(Q), ctypes.c_double(eps), *pointers(X, s), *longs(g0, g1)))
        ctx.save_for_backward(Q, X, s)
        ctx.eps = eps
        return s

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        Q, X, s = ctx.saved_tensors
        (_, K, N), parts, grad = X.shape, chunks(X.shape[0]), grad.contiguous()
        dQ = s.new_empty(len(parts), K, K)
        call = function("norm_scale", "norm_scale_backward", X.dtype)
        each_chunk(parts, lambda index, g0, g1: call(
            *longs(K, N), *pointers(X, s, grad, dQ[index]), *longs(g0, g1)))
        dX = None if not ctx.needs_input_grad[1] else torch_form_gradient(
            lambda Q, X, form: norm_scale(Q, X, ctx.eps, form), [Q, X], 1, grad)
        return dQ.sum(0), dX, None
