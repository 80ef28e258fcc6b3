"""tanh for the fast paths: a compiled float32 kernel on CPU (``kernels/tanh.cpp``), else torch.

PyTorch's CPU tanh takes about 2.6 ns per float32 element, six times its sigmoid; the kernel
about 0.6 ns with at most 1.5 ulp of error (PyTorch's: 0.5). The generic paths keep
``torch.tanh``. :func:`tanh` runs over the tensor's memory in order, so any dense layout (a
transposed view, say) is taken as it is and the result has the same strides; its backward is
PyTorch's (1 − y²)·ȳ. :func:`tanh_times_into` is tanh(A)·d for a batch of small matrices (the
NCDE's F(z)·dX/dt, :mod:`zoo.fast.solved.final_tanh`) in one pass per sample, and
:func:`tanh_times_backward` its gradients in another, where torch runs five operations each
way (a batch of B tiny matrix-vector products, the generic path's, costs about 2.5× that at
Speech's sizes).
"""

from __future__ import annotations

import ctypes

import torch

from .compiled import Form, chunks, each_chunk, function, longs, pointers, use_compiled


def tanh(x: torch.Tensor, form: Form = "auto") -> torch.Tensor:
    """tanh(x): compiled for dense float32 CPU tensors where the kernel builds (``auto``)."""
    if _compiled(form, x) and (order := _memory_order(x)) is not None:
        return _Tanh.apply(x, order)
    return torch.tanh(x)


def _compiled(form: Form, *tensors: torch.Tensor) -> bool:
    """Whether the kernel runs: it has float32 entries only."""
    return tensors[0].dtype == torch.float32 and use_compiled(form, "tanh", *tensors)


def _memory_order(x: torch.Tensor) -> list[int] | None:
    """A permutation of x's axes under which it is contiguous, or None if it has none."""
    order = sorted(range(x.dim()), key=lambda axis: -x.stride(axis))
    return order if x.permute(order).is_contiguous() else None


class _Tanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, order):
        source = x.permute(order)
        y = torch.empty_like(source)
        call = function("tanh", "tanh", x.dtype)
        size = y.numel()
        ranges = chunks(size) if size >= 1 << 16 else [(0, size)]
        each_chunk(ranges, lambda _, i0, i1: call(*pointers(source, y), *longs(i0, i1)))
        y = y.permute(sorted(range(x.dim()), key=order.__getitem__))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y), None


def tanh_times_into(a: torch.Tensor, drive: torch.Tensor, t: torch.Tensor,
                    form: Form = "auto", bias: torch.Tensor | None = None) -> torch.Tensor:
    """tanh(a + bias) · drive for a (B, h, C), the bias (h, C) of every sample (None: none) and
    drive (B, C): (B, h), with tanh(a + bias) written into ``t`` for :func:`tanh_times_backward`
    (a, bias and t contiguous; no graph is recorded). The bias folded in here spares a product
    with one (``addmm``) a pass that copies it into the product's output first."""
    batch, h, c = a.shape
    if not _compiled(form, a, drive):
        torch.tanh(a if bias is None else a + bias, out=t)
        return (t * drive.unsqueeze(-2)).sum(-1)
    drive, y = drive.contiguous(), a.new_empty(batch, h)
    call = function("tanh", "tanh_times", a.dtype)
    e = ctypes.c_void_p(None if bias is None else bias.data_ptr())
    each_chunk(chunks(batch), lambda _, b0, b1: call(
        *longs(h, c), *pointers(a), e, *pointers(drive, t, y), *longs(b0, b1)))
    return y


def tanh_times_backward(t: torch.Tensor, drive: torch.Tensor, grad: torch.Tensor,
                        a_bar: torch.Tensor | None = None, form: Form = "auto"
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of tanh(a) · drive for its output's gradient ``grad`` (B, h), from t = tanh(a):
    ā = grad ⊗ drive ⊙ (1 − t²) (B, h, C), written into ``a_bar`` if given (contiguous), and
    drive̅ = tᵀ grad (B, C)."""
    a_bar = torch.empty_like(t) if a_bar is None else a_bar
    if not _compiled(form, t, drive):
        torch.mul(grad.unsqueeze(-1) * drive.unsqueeze(-2), 1 - t * t, out=a_bar)
        return a_bar, (t * grad.unsqueeze(-1)).sum(-2)
    batch, h, c = t.shape
    drive, grad = drive.contiguous(), grad.contiguous()
    drive_bar = torch.empty_like(drive)
    call = function("tanh", "tanh_times_backward", t.dtype)
    each_chunk(chunks(batch), lambda _, b0, b1: call(
        *longs(h, c), *pointers(t, drive, grad, a_bar, drive_bar), *longs(b0, b1)))
    return a_bar, drive_bar
