"""Contractions of the distinct stages' h-vectors V (U, h, ·) with per-stage or per-component
weights, the two halves of the pre-delta read's value terms (:mod:`.delta`):

    stage_sum(V, c) = Σ_u V_u c_u  (h, ·),     stage_dot(V, q) = (⟨V_u, q⟩)_u  (U, ·),

each the other's adjoint: the gradient of stage_sum with respect to c is stage_dot(V, ḡ), and
with respect to V the broadcast product c ⊗ ḡ (and the same with the roles swapped). On CPU
they run compiled (``kernels/stage_sums.cpp``), one pass over V, where the torch form writes
the (U, h, ·) product first and sums it (Delta-ODE: 39 MB).
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from ...kernels.compiled import Form, chunks, each_chunk, function, longs, pointers, use_compiled


def stage_sum(V: torch.Tensor, c: torch.Tensor, form: Form = "auto") -> torch.Tensor:
    """Σ_u V[u] c[u] for V (U, h, ·) and c (U, ·): (h, ·)."""
    if use_compiled(form, "stage_sums", V, c):
        return _StageSum.apply(V, c)
    return (V * c[:, None]).sum(0)


def stage_dot(V: torch.Tensor, q: torch.Tensor, form: Form = "auto") -> torch.Tensor:
    """⟨V[u], q⟩ over h for V (U, h, ·) and q (h, ·): (U, ·)."""
    if use_compiled(form, "stage_sums", V, q):
        return _StageDot.apply(V, q)
    return (V * q).sum(1)


def _run(entry: str, V: torch.Tensor, weights: torch.Tensor, shape) -> torch.Tensor:
    U, h = V.shape[:2]
    lanes = V[0, 0].numel()
    V, weights = V.contiguous(), weights.contiguous()
    out = V.new_empty(shape)
    call = function("stage_sums", entry, V.dtype)
    each_chunk(chunks(lanes), lambda _, l0, l1: call(
        *longs(U, h, lanes), *pointers(V, weights, out), *longs(l0, l1)))
    return out


class _StageSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, V, c):
        ctx.save_for_backward(V, c)
        return _run("stage_sum", V, c, V.shape[1:])

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        V, c = ctx.saved_tensors
        return c[:, None] * grad, _run("stage_dot", V, grad, c.shape)


class _StageDot(torch.autograd.Function):
    @staticmethod
    def forward(ctx, V, q):
        ctx.save_for_backward(V, q)
        return _run("stage_dot", V, q, V.shape[:1] + V.shape[2:])

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        V, q = ctx.saved_tensors
        return grad[:, None] * q, _run("stage_sum", V, grad, q.shape)
