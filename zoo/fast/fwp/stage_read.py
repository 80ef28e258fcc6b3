"""The Hebb read over all stages, per sample and head: y = Σ_u r_u ⟨a_u, q⟩ o_u for stage
vectors a (…, h, U) and o (…, c, U), stage weights r (…, U) and a query q (…, h)
(:func:`zoo.fast.fwp.hebb.hebb_read`). One of a and o may be given as logits whose softmax over
their rows is the vector (``softmax_of``: the Hebb keys), so the keys are never written.

Its torch form is two batched products of one row each per sample and head (Hebb-CDE: 4,096 of
1 × 4 × 481), and their four in the backward pass, about 3 ms apiece on one core, with the
softmax a pass of its own each way; on CPU it runs compiled (``kernels/stage_read.cpp``): one
pass per sample and head each way, vectorised over the stages, the softmax formed in cache,
with the gradients

    g_u = ⟨o_u, ȳ⟩,  ō_u = r_u ⟨a_u, q⟩ ȳ,  r̄_u = g_u ⟨a_u, q⟩,  ā_u = g_u r_u q,
    q̄ = Σ_u g_u r_u a_u   (then through the softmax for the logits).
"""

from __future__ import annotations

import ctypes
from typing import Literal

import torch
from torch.autograd.function import once_differentiable

from ...kernels.compiled import Form, chunks, each_chunk, function, longs, pointers, use_compiled

#: which operand holds logits (None: neither)
SoftmaxOf = Literal["a", "o"] | None
_FLAG = {None: 0, "a": 1, "o": 2}


def stage_read(a: torch.Tensor, o: torch.Tensor, r: torch.Tensor, q: torch.Tensor,
               softmax_of: SoftmaxOf = None, form: Form = "auto") -> torch.Tensor:
    """Σ_u r_u ⟨a_u, q⟩ o_u for a (R, h, U), o (R, c, U), r (R, U), q (R, h): (R, c); the
    operand named by ``softmax_of`` is replaced by its softmax over axis 1."""
    if use_compiled(form, "stage_read", a, o, r, q):
        return _StageRead.apply(a, o, r, q, softmax_of)
    if softmax_of == "a":
        a = torch.softmax(a, 1)
    if softmax_of == "o":
        o = torch.softmax(o, 1)
    weight = torch.bmm(q[:, None], a) * r[:, None]
    return torch.bmm(o, weight.mT)[..., 0]


def _sizes(a: torch.Tensor, o: torch.Tensor) -> list:
    return longs(a.shape[1], o.shape[1], a.shape[2])


class _StageRead(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, o, r, q, softmax_of):
        a, o, r, q = (t.contiguous() for t in (a, o, r, q))
        ctx.save_for_backward(a, o, r, q)
        ctx.flag = _FLAG[softmax_of]
        y = q.new_empty(len(q), o.shape[1])
        call = function("stage_read", "stage_read", q.dtype)
        each_chunk(chunks(len(q)), lambda _, b0, b1: call(
            *_sizes(a, o), *pointers(a, o, r, q, y), ctypes.c_int(ctx.flag), *longs(b0, b1)))
        return y

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        a, o, r, q = ctx.saved_tensors
        grad = grad.contiguous()
        da, do, dr, dq = (torch.empty_like(t) for t in (a, o, r, q))
        call = function("stage_read", "stage_read_backward", q.dtype)
        each_chunk(chunks(len(q)), lambda _, b0, b1: call(
            *_sizes(a, o), *pointers(a, o, r, q, grad, da, do, dr, dq), ctypes.c_int(ctx.flag),
            *longs(b0, b1)))
        return da, do, dr, dq, None
