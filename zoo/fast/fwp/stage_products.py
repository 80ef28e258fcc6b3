"""Inner products of the stage vectors within every step, from the distinct stages.

Step n's stages are the distinct stages n·stride + (0 … S − 1) (:mod:`.stages`), and an
explicit RK step couples its stages through ⟨k_j, k_s⟩ for the pairs (j, s) with a_sj ≠ 0.
Taken from per-step windows, autograd would form the windows' gradient (N, S, h, ·) and sum the
overlapping windows back (a stack and an unfold backward over the largest tensors of the path);
the backward here adds each pair's two terms straight into the distinct stages.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from .stages import stage_rows


def stage_products(k: torch.Tensor, stride: int, steps: int,
                   pairs: tuple[tuple[int, int], ...]) -> torch.Tensor:
    """⟨k_{n·stride+j}, k_{n·stride+s}⟩ for every step n and pair (j, s), (Q, N, 1, ·), from the
    distinct-stage vectors k (U, h, ·)."""
    return _StageProducts.apply(k, stride, steps, pairs)


def _stages(k: torch.Tensor, stride: int, steps: int, pairs) -> list[torch.Tensor]:
    return [stage_rows(k, stride, steps, s) for s in range(1 + max(map(max, pairs), default=0))]


class _StageProducts(torch.autograd.Function):
    @staticmethod
    def forward(ctx, k, stride, steps, pairs):
        ctx.stride, ctx.steps, ctx.pairs = stride, steps, pairs
        ctx.save_for_backward(k)
        rows = _stages(k, stride, steps, pairs)
        products = k.new_empty((len(pairs), steps, 1, *k.shape[2:]))
        for (j, s), out in zip(pairs, products):
            torch.sum(rows[j] * rows[s], 1, keepdim=True, out=out)
        return products

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        k, = ctx.saved_tensors
        d_k = torch.zeros_like(k)
        rows, d_rows = (_stages(x, ctx.stride, ctx.steps, ctx.pairs) for x in (k, d_k))
        for (j, s), g in zip(ctx.pairs, grad):
            d_rows[j].addcmul_(g, rows[s])
            d_rows[s].addcmul_(g, rows[j])
        return d_k, None, None, None
