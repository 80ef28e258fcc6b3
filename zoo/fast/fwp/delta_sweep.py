"""A sequential sweep of rank-S corrections over vectors, with a hand-written backward.

    e_i = K_iᵀ x_i − b_i,   f_i = P_i e_i,   x_{i+1} = x_i − K_i f_i,   i = 0 … M − 1

(x: h-vectors, K_i: h × S stored as its S columns, P_i: S × S, b_i: S-vectors) returns x_M and
every f_i; ``reverse`` runs i = M − 1 … 0 instead (x_i from x_{i+1}). This is the read of the
pre-delta fast weights (:mod:`.delta`). Tensors keep the batch axes innermost, so each step
is a few multiply-and-sums vectorised over the batch rather than many tiny matrix products. K_i is
the window of S consecutive rows i·stride + (0 … S − 1) of one tensor of distinct columns (the
distinct stages: overlapping windows share their common stage).

The backward is the adjoint sweep, three products per step as the forward,

    f̄_i ← f̄_i − K_iᵀ x̄_{i+1},   ē_i = P_iᵀ f̄_i,   x̄_i = x̄_{i+1} + K_i ē_i,

and the factor gradients K̄_i = x_i ⊗ ē_i − x̄_{i+1} ⊗ f_i, P̄_i = f̄_i ⊗ e_i and b̄_i = −ē_i
for all steps at once, which autograd would otherwise form step by step; K̄ goes straight into
the distinct columns, one multiply-add per stage. On CPU the same sweep runs as a compiled loop
(:mod:`.delta_sweep_compiled`) where its kernel builds.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from ...kernels.compiled import Form, use_compiled
from .stages import stage_rows
from .delta_sweep_compiled import compiled_sweep


def sweep(x0: torch.Tensor, columns: torch.Tensor, stride: int, P: torch.Tensor,
          b: torch.Tensor | None = None, reverse: bool = False, form: Form = "auto"
          ) -> tuple[torch.Tensor, torch.Tensor]:
    """(x_M, f) for x0 (h, *batch), the distinct columns (U, h, *batch) of K_i =
    columns[i·stride : i·stride + S], P (M, S, S, *batch), b (M, S, *batch); f is (M, S, *batch)
    in the order of i. ``form``: the compiled loop (:mod:`.delta_sweep_compiled`), the torch
    operations here, or ``auto`` (compiled where it can run)."""
    if b is None:
        b = P.new_zeros(P.shape[:2] + P.shape[3:])
    if use_compiled(form, "sweep", x0, columns, P, b):
        return compiled_sweep(x0, columns, stride, P, b, reverse)
    return _Sweep.apply(x0, columns, P, b, stride, reverse)


def _order(M: int, reverse: bool) -> range:
    return range(M - 1, -1, -1) if reverse else range(M)


def _windows(columns: torch.Tensor, M: int, S: int, stride: int) -> list[torch.Tensor]:
    """K_i = columns[i·stride : i·stride + S], i = 0 … M − 1 (views)."""
    return [columns[i * stride:i * stride + S] for i in range(M)]


class _Sweep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x0, columns, P, b, stride, reverse):
        M, S = P.shape[:2]
        K = _windows(columns, M, S, stride)
        xs, es, f = x0.new_empty((M, *x0.shape)), torch.empty_like(b), torch.empty_like(b)
        product, mixed = K[0].new_empty(K[0].shape), P.new_empty(P.shape[1:])  # reused
        x = x0.clone()
        for i in _order(M, reverse):
            xs[i] = x
            torch.sum(torch.mul(K[i], x, out=product), 1, out=es[i]).sub_(b[i])
            torch.sum(torch.mul(P[i], es[i][None], out=mixed), 1, out=f[i])
            x.sub_(torch.mul(K[i], f[i][:, None], out=product).sum(0))
        ctx.reverse, ctx.stride = reverse, stride
        ctx.save_for_backward(columns, P, xs, es, f)
        return x, f

    @staticmethod
    @once_differentiable
    def backward(ctx, x_bar, f_bar):
        columns, P, xs, es, fs = ctx.saved_tensors
        M, S = P.shape[:2]
        K = _windows(columns, M, S, ctx.stride)
        after, f_total, e_bar = torch.empty_like(xs), torch.empty_like(fs), torch.empty_like(fs)
        product, mixed = K[0].new_empty(K[0].shape), P.new_empty(P.shape[1:])  # reused
        # x̄ may arrive transposed: the loop below needs batch innermost, as a working copy
        x_bar = x_bar.clone(memory_format=torch.contiguous_format)
        for i in _order(M, not ctx.reverse):
            after[i] = x_bar
            torch.sub(f_bar[i], torch.mul(K[i], x_bar, out=product).sum(1), out=f_total[i])
            torch.sum(torch.mul(P[i], f_total[i][:, None], out=mixed), 0, out=e_bar[i])
            x_bar.add_(torch.mul(K[i], e_bar[i][:, None], out=product).sum(0))
        columns_bar = torch.zeros_like(columns)
        for s in range(S):
            stage_rows(columns_bar, ctx.stride, M, s).addcmul_(e_bar[:, s, None], xs).addcmul_(
                fs[:, s, None], after, value=-1)
        P_bar = f_total[:, :, None] * es[:, None]
        return x_bar, columns_bar, P_bar, -e_bar, None, None
