"""The CT-RNN (with global feedback) and the Neural ODE cell over a whole sequence as one
compiled loop (``kernels/src/unfold_rnn.cpp``).

Both cells integrate dy/dt = −κ y + tanh(a_t + y W) inside every input step, with
a_t = W_I I_t + b and W the recurrent part of their layer over [I, h]: the CT-RNN with κ = 1/τ
by explicit Euler, the N-ODE with κ = 0 by classic RK4, each ``unfolds`` steps of h, clipped
after every step where the cell clips (the LTC repository's ``cell_clip``). The torch form
(:mod:`.baselines`) runs about six batched operations per stage evaluation each way; the loop
does a sample's whole sequence in one pass forward and one backward (the chain rule through the
Euler or RK4 stages by hand), keeping each stage's input and tanh for the backward. Samples are
split between ``torch.get_num_threads()`` threads; W's gradient is summed per thread in float64.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from ...kernels.compiled import chunks, each_chunk, function, longs, pointers, use_compiled

#: the loop keeps a state on the stack: widths up to this many units
MAX_UNITS = 256
STAGES = {"euler": 1, "rk4": 4}


def fits(cell, a: torch.Tensor) -> bool:
    """Whether the compiled loop runs for ``cell`` on inputs ``a`` (T, B, N)."""
    return (cell.units <= MAX_UNITS and cell.solver.method in STAGES
            and use_compiled("auto", "unfold_rnn", a))


def unfold_rnn(cell, a: torch.Tensor, w: torch.Tensor, kappa: float) -> torch.Tensor:
    """States after every input step (T, B, N) from y = 0, for input parts ``a`` (T, B, N) and
    the recurrent weight ``w`` (N, N) (so that the drive is tanh(a_t + y w))."""
    solver = cell.solver
    scalars = torch.tensor([solver.step_size, kappa, -1.0 if cell.clip is None else cell.clip],
                           dtype=torch.float64)
    return _UnfoldRNN.apply(a, w, scalars, solver.unfolds, STAGES[solver.method])


class _UnfoldRNN(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, w, scalars, unfolds, stages):
        a, w = a.contiguous(), w.contiguous()
        steps, batch, n = a.shape
        states = a.new_empty(steps, batch, n)
        ys, ss = (a.new_empty(steps * unfolds * stages, batch, n) for _ in range(2))
        pre = a.new_empty(steps * unfolds if scalars[2] >= 0 else 0, batch, n)
        call = function("unfold_rnn", "unfold_rnn_forward", a.dtype)
        each_chunk(chunks(batch), lambda _, b0, b1: call(
            *longs(steps, batch, n, unfolds, stages),
            *pointers(scalars, a, w, states, ys, ss, pre), *longs(b0, b1)))
        ctx.shape = (steps, batch, n, unfolds, stages)
        ctx.save_for_backward(scalars, w, ys, ss, pre)
        return states

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_states):
        scalars, w, ys, ss, pre = ctx.saved_tensors
        steps, batch, n, unfolds, stages = ctx.shape
        grad_states = grad_states.contiguous()
        g_a = grad_states.new_empty(steps, batch, n)
        ranges = chunks(batch)
        g_w = w.new_zeros((len(ranges), n, n), dtype=torch.float64)
        call = function("unfold_rnn", "unfold_rnn_backward", w.dtype)
        each_chunk(ranges, lambda index, b0, b1: call(
            *longs(steps, batch, n, unfolds, stages),
            *pointers(scalars, w, grad_states, ys, ss, pre, g_a, g_w[index]), *longs(b0, b1)))
        return g_a, g_w.sum(0).to(w.dtype), None, None, None
