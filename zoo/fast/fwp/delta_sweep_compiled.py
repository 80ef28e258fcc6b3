"""The pre-delta sweep (:mod:`.delta_sweep`) as one compiled loop over blocks of lanes
(``kernels/sweep.cpp``).

Same recurrence and adjoint as the torch form, but each block of 64 lanes (samples × heads)
runs all M steps with its h-vector in a local buffer: about 3·S·h multiply-adds per lane and
step, where the torch form runs about eight batched operations per step forward and backward.
The backward forms the columns' and P's gradients inside the same loop. Lanes are independent,
so they are split between ``torch.get_num_threads()`` threads.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from ...kernels.compiled import chunks, each_chunk, function, longs, pointers


def compiled_sweep(x0: torch.Tensor, columns: torch.Tensor, stride: int, P: torch.Tensor,
                   b: torch.Tensor, reverse: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """As :func:`.delta_sweep.sweep`, on the compiled loop."""
    return _CompiledSweep.apply(x0, columns, P, b, stride, reverse)


class _CompiledSweep(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x0, columns, P, b, stride, reverse):
        M, S = P.shape[:2]
        h, batch = x0.shape[0], x0.shape[1:]
        lanes = x0[0].numel()
        x0, columns, P, b = (t.reshape(*t.shape[:k], lanes).contiguous()
                             for t, k in ((x0, 1), (columns, 2), (P, 3), (b, 2)))
        x, xs = torch.empty_like(x0), x0.new_empty(M, h, lanes)
        es, fs = torch.empty_like(b), torch.empty_like(b)
        call = function("sweep", "sweep_forward", x0.dtype)
        sizes = longs(M, S, h, lanes, stride, int(reverse))
        each_chunk(chunks(lanes), lambda _, l0, l1: call(
            *sizes, *pointers(x0, columns, P, b, x, xs, es, fs), *longs(l0, l1)))
        ctx.stride, ctx.reverse, ctx.batch = stride, reverse, batch
        ctx.save_for_backward(columns, P, xs, es, fs)
        return x.view(h, *batch), fs.view(M, S, *batch)

    @staticmethod
    @once_differentiable
    def backward(ctx, x_bar, f_bar):
        columns, P, xs, es, fs = ctx.saved_tensors
        (M, S, _, lanes), h = P.shape, xs.shape[1]
        x_bar = x_bar.reshape(h, lanes).clone(memory_format=torch.contiguous_format)
        f_bar = f_bar.reshape(M, S, lanes).contiguous()
        columns_bar, P_bar = torch.zeros_like(columns), torch.empty_like(P)
        e_bar = torch.empty_like(es)
        call = function("sweep", "sweep_backward", xs.dtype)
        sizes = longs(M, S, h, lanes, ctx.stride, int(ctx.reverse))
        each_chunk(chunks(lanes), lambda _, l0, l1: call(
            *sizes, *pointers(columns, P, xs, es, fs, f_bar, x_bar, columns_bar, P_bar, e_bar),
            *longs(l0, l1)))
        batch = ctx.batch
        return (x_bar.view(h, *batch), columns_bar.view(-1, h, *batch), P_bar.view(M, S, S, *batch),
                -e_bar.view(M, S, *batch), None, None)
