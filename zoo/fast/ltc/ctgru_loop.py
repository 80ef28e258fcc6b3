"""The CT-GRU over a whole sequence as one compiled loop (``kernels/src/ctgru_loop.cpp``).

Per input step, with h = Σ_k ĥ_k and the input parts a^r, a^s, a^q precomputed for all steps
(:func:`.baselines.input_part`):

    r = softmax_k(−(a^r_t + h W_r − ln τ_k)²),   s = softmax_k(−(a^s_t + h W_s − ln τ_k)²),
    q = tanh(a^q_t + (Σ_k r_k ĥ_k) W_q),          ĥ_k ← ((1 − s_k) ĥ_k + s_k q) d_k,

clipped where the cell clips (:meth:`zoo.fields.ltc.ctgru.CTGRUCell.update`). The torch form
runs about twenty small operations per step each way; the loop does a sample's whole sequence in
one pass forward and one backward (the chain rule through a step by hand), and the weights'
gradients are then one matrix product each over all steps. Samples are split between
``torch.get_num_threads()`` threads. The decay factors d (steps, M) and ln τ take no gradient
(they come from the data's elapsed times and a buffer).
"""

from __future__ import annotations

import ctypes

import torch
from torch.autograd.function import once_differentiable

from ...kernels.compiled import chunks, each_chunk, function, longs, pointers, use_compiled

#: the loop keeps a sample's traces on the stack: up to this many units, and units × scales
MAX_UNITS, MAX_WIDTH = 256, 2048


def fits(cell, a: torch.Tensor) -> bool:
    """Whether the compiled loop runs for ``cell`` on input parts ``a`` (T, B, ·)."""
    units, scales = cell.state_shape
    return (units <= MAX_UNITS and units * scales <= MAX_WIDTH
            and use_compiled("auto", "ctgru_loop", a))


def ctgru_loop(cell, parts: list[tuple[torch.Tensor, torch.Tensor]],
               decay: torch.Tensor) -> torch.Tensor:
    """Traces after every input step (T, B, N, M) from ĥ = 0, for the (input part, recurrent
    weight) of the layers ln τ^r, ln τ^s and the detector, and the decay factors (T, M)."""
    (a_r, w_r), (a_s, w_s), (a_q, w_q) = parts
    units, _ = cell.state_shape
    ln_tau = cell.ln_tau.detach().to(a_r.dtype).repeat(units)
    clip = -1.0 if cell.clip is None else float(cell.clip)
    states = _CTGRULoop.apply(a_r, a_s, a_q, w_r, w_s, w_q, decay.detach(), ln_tau, clip)
    return states.view(*states.shape[:2], *cell.state_shape)


class _CTGRULoop(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a_r, a_s, a_q, w_r, w_s, w_q, decay, ln_tau, clip):
        a_r, a_s, a_q, w_r, w_s, w_q, decay = (
            t.contiguous() for t in (a_r, a_s, a_q, w_r, w_s, w_q, decay.to(a_r.dtype)))
        steps, batch, width = a_r.shape
        units = a_q.shape[-1]
        states, z_r, z_s, r, s = (a_r.new_empty(steps, batch, width) for _ in range(5))
        read, q = (a_r.new_empty(steps, batch, units) for _ in range(2))
        pre = a_r.new_empty(steps if clip >= 0 else 0, batch, width)
        call = function("ctgru_loop", "ctgru_loop_forward", a_r.dtype)
        sizes = longs(steps, batch, units, width // units)
        each_chunk(chunks(batch), lambda _, b0, b1: call(
            *sizes, ctypes.c_double(clip),
            *pointers(ln_tau, a_r, a_s, a_q, w_r, w_s, w_q, decay, states, z_r, z_s, r, s, read,
                      q, pre),
            *longs(b0, b1)))
        ctx.clip = clip
        ctx.save_for_backward(ln_tau, w_r, w_s, w_q, decay, states, z_r, z_s, r, s, read, q, pre)
        return states

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_states):
        ln_tau, w_r, w_s, w_q, decay, states, z_r, z_s, r, s, read, q, pre = ctx.saved_tensors
        steps, batch, width = states.shape
        units = q.shape[-1]
        grad_states = grad_states.contiguous()
        g_ar, g_as = (states.new_empty(steps, batch, width) for _ in range(2))
        g_aq = states.new_empty(steps, batch, units)
        call = function("ctgru_loop", "ctgru_loop_backward", states.dtype)
        sizes = longs(steps, batch, units, width // units)
        each_chunk(chunks(batch), lambda _, b0, b1: call(
            *sizes, ctypes.c_double(ctx.clip),
            *pointers(ln_tau, w_r, w_s, w_q, decay, grad_states, states, z_r, z_s, r, s, q, pre,
                      g_ar, g_as, g_aq),
            *longs(b0, b1)))
        # the weights' gradients over all steps at once: Σ_t h_tᵀ ∂z_t, h_t = Σ_k ĥ_{t−1}
        h = torch.cat([states.new_zeros(1, batch, units),
                       states[:-1].view(steps - 1, batch, units, -1).sum(-1)]).view(-1, units)
        g_wr, g_ws = (h.t() @ g.view(-1, width) for g in (g_ar, g_as))
        g_wq = read.view(-1, units).t() @ g_aq.view(-1, units)
        return g_ar, g_as, g_aq, g_wr, g_ws, g_wq, None, None, None
