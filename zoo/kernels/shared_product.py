"""A batch of products with one shared matrix, out[g] = A X[g] + b 1ᵀ, the fast paths' layer
for many stage inputs at once (:func:`zoo.fast.fwp.layouts.head_linear`).

With X (G, K, N) the last axis is contiguous in both X and out, so each product vectorises
along it; the gradients are again such products, dA = Σ_g Ȳ[g] X[g]ᵀ, db = Σ_g Ȳ[g] 1 and
dX[g] = Aᵀ Ȳ[g]. PyTorch runs these thin shapes (the FWP slow net: K = 22 inputs, hundreds of
outputs, G·N = 61,568 stage inputs) at 10-30 GFLOP/s on one core; on CPU they run compiled
(``kernels/shared_product.cpp``: register tiles along N), 35-45 GFLOP/s there.
"""

from __future__ import annotations

import ctypes

import torch
from torch.autograd.function import once_differentiable

from .compiled import Form, chunks, each_chunk, function, longs, pointers, use_compiled


def shared_product(A: torch.Tensor, bias: torch.Tensor | None, X: torch.Tensor,
                   form: Form = "auto") -> torch.Tensor:
    """A X[g] + bias 1ᵀ for A (M, K), bias (M,) or None and X (G, K, N): (G, M, N)."""
    if use_compiled(form, "shared_product", A, X):
        return _SharedProduct.apply(A, bias, X)
    product = torch.matmul(A, X)
    return product if bias is None else product + bias[:, None]


def _left(A: torch.Tensor, bias: torch.Tensor | None, X: torch.Tensor) -> torch.Tensor:
    (M, K), (G, _, N) = A.shape, X.shape
    A, X = A.contiguous(), X.contiguous()
    bias = None if bias is None else bias.contiguous()
    out = X.new_empty(G, M, N)
    call = function("shared_product", "left", X.dtype)
    b = None if bias is None else ctypes.c_void_p(bias.data_ptr())
    each_chunk(chunks(G), lambda _, g0, g1: call(*longs(M, K, N), *pointers(A), b,
                                                  *pointers(X, out), *longs(g0, g1)))
    return out


class _SharedProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, A, bias, X):
        ctx.save_for_backward(A, X)
        return _left(A, bias, X)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        A, X = ctx.saved_tensors
        grad, X = grad.contiguous(), X.contiguous()
        (G, M, N), K = grad.shape, A.shape[1]
        dA = A.new_empty(M, K)
        dbias = A.new_empty(M) if ctx.needs_input_grad[1] else None
        b = None if dbias is None else ctypes.c_void_p(dbias.data_ptr())
        call = function("shared_product", "grad", A.dtype)
        each_chunk(chunks(M), lambda _, m0, m1: call(*longs(G, M, K, N), *pointers(grad, X, dA),
                                                     b, *longs(m0, m1)))
        dX = _left(A.T, None, grad) if ctx.needs_input_grad[2] else None
        return dA, dbias, dX
