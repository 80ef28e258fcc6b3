"""A cubic-spline control and its derivative at many times in one pass.

torchcde's ``CubicSpline.evaluate`` and ``derivative`` each gather their coefficients (a, b, 2c,
3d) separately, seven indexing calls for the pair, (B, T, C) each (Speech's 481 distinct stages:
about 10 ms of a Hebb-CDE step). Here the same operations in the same order give the same values
bit for bit (it reads the spline's stored coefficients, torchcde 0.2.5's buffers;
``tests/kernels/test_spline_stages.py`` holds it to torchcde's calls):

    X(t)  = a + (b + (½·2c + 3d·r/3)·r)·r,     X′(t) = b + (2c + 3d·r)·r,     r = t − t_i,

on CPU compiled (``kernels/spline_stages.cpp``, about 3 ms there), where asked into stage-last
memory (…, C, T) that the FWP slow net's products read along the stages; elsewhere with the four
coefficients gathered once, side by side.
"""

from __future__ import annotations

import torch
import torchcde

from .compiled import Form, chunks, each_chunk, function, longs, pointers, use_compiled


def value_and_derivative(path, t: torch.Tensor, stage_last: bool = False, form: Form = "auto"
                         ) -> tuple[torch.Tensor, torch.Tensor]:
    """(X(t), X′(t)) of ``path`` at times t (T,) (or a scalar), (…, T, C) each; computed by the
    kernel, their memory is (B, C, T) when ``stage_last``."""
    if type(path) is not torchcde.CubicSpline:
        return path.evaluate(t), path.derivative(t)
    r, index = path._interpret_t(t)
    coefficients = (path._a, path._b, path._two_c, path._three_d)
    if t.dim() == 1 and not t.requires_grad and _compiled(form, coefficients):
        return _compiled_values(coefficients, index, r, stage_last)
    r = r.unsqueeze(-1)
    stacked = torch.stack(coefficients)
    a, b, two_c, three_d = stacked.index_select(-2, index.flatten()).view(
        *stacked.shape[:-2], *index.shape, -1)
    inner = 0.5 * two_c + three_d * r / 3
    inner = b + inner * r
    return a + inner * r, b + (two_c + three_d * r) * r


def value(path, t: torch.Tensor, stage_last: bool = False, form: Form = "auto") -> torch.Tensor:
    """X(t) of ``path`` alone: a cubic spline's through :func:`value_and_derivative` (one gather
    where torchcde's ``evaluate`` makes four; the derivative, a few operations more on the same
    reads, is dropped), any other path's own ``evaluate``."""
    if type(path) is not torchcde.CubicSpline:
        return path.evaluate(t)
    return value_and_derivative(path, t, stage_last, form)[0]


def _compiled(form: Form, coefficients: tuple[torch.Tensor, ...]) -> bool:
    """The kernel reads (B, L, C) coefficients with one layout, the channels contiguous, and
    differentiates nothing (the fast paths' controls are data; times that carry a gradient,
    as an adaptive solve's may, take the torch form)."""
    a = coefficients[0]
    return (a.dim() == 3 and a.stride(-1) == 1
            and all(x.stride() == a.stride() and not x.requires_grad for x in coefficients)
            and use_compiled(form, "spline_stages", *coefficients))


def _compiled_values(coefficients, index: torch.Tensor, r: torch.Tensor, stage_last: bool):
    a = coefficients[0]
    (B, _, C), T = a.shape, len(index)
    X, dX = (a.new_empty(B, C, T).mT if stage_last else a.new_empty(B, T, C) for _ in range(2))
    index, r = index.contiguous(), r.to(a.dtype).contiguous()
    call = function("spline_stages", "spline_stages", a.dtype)
    each_chunk(chunks(B), lambda _, b0, b1: call(
        *longs(C, T, *a.stride()[:2], *X.stride()), *pointers(*coefficients, index, r, X, dX),
        *longs(b0, b1)))
    return X, dX
