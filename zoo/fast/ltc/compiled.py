"""LTC synapse sums and fused-solver unfolds as compiled per-sample loops
(``kernels/ltc_synapses.cpp``).

The same maths and hand-written chain rule as the torch forms (:func:`.cells.synapse_sums`,
:mod:`.fused`), but each synapse layer of a sample is one pass over its pre×post synapses
(sigmoid and both weighted sums) forward and one pass backward (recomputing the sigmoid, all four
parameter gradients and the input gradient), where the torch forms run about twenty batched
operations and store every activation. Samples are independent, so the batch is split between
``torch.get_num_threads()`` threads (the library call releases the GIL). Parameter gradients are
summed per sample in the working precision, then over samples in float64.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from ...kernels.compiled import chunks, each_chunk, function, longs, pointers


def compiled_synapse_sums(v, sigma, offset, w_erev, w) -> tuple[torch.Tensor, torch.Tensor]:
    """(Σ_i s_ij (W⁺E)_ij, Σ_i s_ij W⁺_ij), each (B, T, post), for inputs v (B, T, pre)."""
    return _SynapseSums.apply(v, sigma, offset, w_erev, w)


def compiled_unfolds(c_num, c_den, cm_h, sigma, offset, w_erev, w, unfolds: int) -> torch.Tensor:
    """As :func:`.fused.fused_unfolds`, on the compiled loop."""
    return _Unfolds.apply(c_num, c_den, cm_h, sigma, offset, w_erev, w, unfolds)


class _SynapseSums(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v, sigma, offset, w_erev, w):
        v, params = v.contiguous(), _contiguous(sigma, offset, w_erev, w)
        batch, steps, _ = v.shape
        pre, post = sigma.shape
        num, den = (v.new_empty(batch, steps, post) for _ in range(2))
        call = function("ltc_synapses", "synapses_forward", v.dtype)
        each_chunk(chunks(batch), lambda _, b0, b1: call(
            *longs(steps, pre, post), *pointers(*params, v, num, den), *longs(b0, b1)))
        ctx.save_for_backward(v, *params)
        return num, den

    @staticmethod
    @once_differentiable
    def backward(ctx, g_num, g_den):
        v, *params = ctx.saved_tensors
        batch, steps, pre = v.shape
        post = params[0].shape[1]
        g_num, g_den, g_v = g_num.contiguous(), g_den.contiguous(), torch.empty_like(v)
        ranges = chunks(batch)
        g_params = v.new_zeros((len(ranges), 4, post, pre), dtype=torch.float64)
        call = function("ltc_synapses", "synapses_backward", v.dtype)
        transposed = _transposed(params)
        each_chunk(ranges, lambda index, b0, b1: call(
            *longs(steps, pre, post),
            *pointers(*transposed, v, g_num, g_den, g_v, g_params[index]), *longs(b0, b1)))
        return (g_v, *_parameter_gradients(g_params, v.dtype))


class _Unfolds(torch.autograd.Function):
    @staticmethod
    def forward(ctx, c_num, c_den, cm_h, sigma, offset, w_erev, w, unfolds):
        steps, batch, n = c_num.shape
        c_num, c_den, cm_h = _contiguous(c_num, c_den, cm_h)
        params = _contiguous(sigma, offset, w_erev, w)
        states = c_num.new_empty(steps, batch, n)
        inputs, dens = (c_num.new_empty(steps * unfolds, batch, n) for _ in range(2))
        call = function("ltc_synapses", "unfolds_forward", c_num.dtype)
        each_chunk(chunks(batch), lambda _, b0, b1: call(
            *longs(steps, batch, n, unfolds),
            *pointers(*params, c_num, c_den, cm_h, states, inputs, dens), *longs(b0, b1)))
        ctx.unfolds = unfolds
        ctx.save_for_backward(cm_h, inputs, dens, states, *params)
        return states

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_states):
        cm_h, inputs, dens, states, *params = ctx.saved_tensors
        steps, batch, n = states.shape
        grad_states = grad_states.contiguous()
        g_num, g_den = torch.empty_like(states), torch.empty_like(states)
        ranges = chunks(batch)
        g_cm_h = states.new_zeros((len(ranges), steps, n), dtype=torch.float64)
        g_params = states.new_zeros((len(ranges), 4, n, n), dtype=torch.float64)
        call = function("ltc_synapses", "unfolds_backward", states.dtype)
        transposed = _transposed(params)
        each_chunk(ranges, lambda index, b0, b1: call(
            *longs(steps, batch, n, ctx.unfolds),
            *pointers(*transposed, grad_states, cm_h, inputs, dens, states, g_num, g_den,
                       g_cm_h[index], g_params[index]), *longs(b0, b1)))
        return (g_num, g_den, g_cm_h.sum(0).to(states.dtype),
                *_parameter_gradients(g_params, states.dtype), None)


def _contiguous(*tensors: torch.Tensor) -> list[torch.Tensor]:
    return [t.contiguous() for t in tensors]


def _transposed(params) -> list[torch.Tensor]:
    """σ, offset, W⁺E, W⁺ in the backward's (post, pre) layout."""
    return [p.t().contiguous() for p in params]


def _parameter_gradients(g_params: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The chunks' (4, post, pre) float64 sums as four (pre, post) gradients."""
    return g_params.sum(0).transpose(1, 2).to(dtype)
