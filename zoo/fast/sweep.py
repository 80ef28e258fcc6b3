"""A sequential sweep of rank-S corrections over vectors, with a hand-written backward.

    e_i = K_iᵀ x_i − b_i,   f_i = P_i e_i,   x_{i+1} = x_i − K_i f_i,   i = 0 … M − 1

(x: h-vectors, K_i: h × S stored as its S columns, P_i: S × S, b_i: S-vectors) returns x_M and every f_i; ``reverse``
runs i = M − 1 … 0 instead (x_i from x_{i+1}). This is the read of the pre-delta fast weights
(:mod:`.fwp_delta`). Tensors keep the batch axes innermost, (M, S, h, *batch), so each step is
a few multiply-and-sums vectorised over the batch rather than many tiny matrix products, and
K_i may be a window of consecutive rows of one tensor (overlapping windows need no copy).

The backward is the adjoint sweep, three products per step as the forward,

    f̄_i ← f̄_i − K_iᵀ x̄_{i+1},   ē_i = P_iᵀ f̄_i,   x̄_i = x̄_{i+1} + K_i ē_i,

and the factor gradients K̄_i = x_i ⊗ ē_i − x̄_{i+1} ⊗ f_i, P̄_i = f̄_i ⊗ e_i and b̄_i = −ē_i
for all steps at once, which autograd would otherwise form step by step.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable


def sweep(x0: torch.Tensor, K: torch.Tensor, P: torch.Tensor, b: torch.Tensor | None = None,
          reverse: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """(x_M, f) for x0 (h, *batch), K (M, S, h, *batch), P (M, S, S, *batch), b (M, S, *batch);
    f is (M, S, *batch) in the order of i."""
    if b is None:
        b = K.new_zeros(K.shape[:2] + K.shape[3:])
    return _Sweep.apply(x0, K, P, b, reverse)


def _order(M: int, reverse: bool) -> range:
    return range(M - 1, -1, -1) if reverse else range(M)


class _Sweep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x0, K, P, b, reverse):
        M = K.shape[0]
        xs, es, fs = [None] * (M + 1), [None] * M, [None] * M
        x = x0
        for i in _order(M, reverse):
            xs[i] = x
            es[i] = (K[i] * x).sum(1) - b[i]
            fs[i] = (P[i] * es[i][None]).sum(1)
            x = x - (K[i] * fs[i][:, None]).sum(0)
        xs[-1] = x  # the state after the last step, in either direction
        f = torch.stack(fs)
        ctx.reverse = reverse
        ctx.save_for_backward(K, P, torch.stack(xs[:-1]), torch.stack(es), f)
        return x, f

    @staticmethod
    @once_differentiable
    def backward(ctx, x_bar, f_bar):
        K, P, xs, es, fs = ctx.saved_tensors
        M = K.shape[0]
        x_bar = x_bar.contiguous()  # it may arrive transposed: the loop below needs batch innermost
        after, f_total, e_bar = [None] * M, [None] * M, [None] * M
        for i in _order(M, not ctx.reverse):
            after[i] = x_bar
            f_total[i] = f_bar[i] - (K[i] * x_bar).sum(1)
            e_bar[i] = (P[i] * f_total[i][:, None]).sum(0)
            x_bar = x_bar + (K[i] * e_bar[i][:, None]).sum(0)
        after, f_total, e_bar = torch.stack(after), torch.stack(f_total), torch.stack(e_bar)
        K_bar = torch.addcmul(e_bar[:, :, None] * xs[:, None], fs[:, :, None], after[:, None],
                              value=-1)
        P_bar = f_total[:, :, None] * es[:, None]
        return x_bar, K_bar, P_bar, -e_bar, None
