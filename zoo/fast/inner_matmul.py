"""Matrix products over many small matrices stored with the batch axis innermost.

``inner_matmul(a, b)`` multiplies a (…, i, j, N) by b (…, j, k, N) into (…, i, k, N): N matrix
products at once as one multiply-and-sum vectorised over N (:mod:`.fwp_rank_one` has N = B·H
matrices of h × h). The backward is the same product on transposed operands, ā = c̄ bᵀ and
b̄ = aᵀ c̄; autograd's own backward of the broadcast product reduces over broadcast axes, which
is many times slower on CPU for these shapes.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable


def inner_matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a (…, i, j, N) @ b (…, j, k, N) -> (…, i, k, N)."""
    return _InnerMatmul.apply(a, b)


def _product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.unsqueeze(-2) * b.unsqueeze(-4)).sum(-3)


class _InnerMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _product(a, b)

    @staticmethod
    @once_differentiable
    def backward(ctx, c_bar):
        a, b = ctx.saved_tensors
        return (_product(c_bar, b.transpose(-2, -3)) if ctx.needs_input_grad[0] else None,
                _product(a.transpose(-2, -3), c_bar) if ctx.needs_input_grad[1] else None)
