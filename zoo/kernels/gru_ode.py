"""The GRU-ODE's elementwise steps between its matrix products (``kernels/src/gru_ode.cpp``):
one pass per sample where torch runs four to ten operations (:mod:`zoo.fast.solved.gru_ode`).

With H hidden units, the gates' pre-activations p_rz (B, 2H), xw = x̃ W_rzhᵀ (B, 3H), the
clamped state ĥ and the stage's dX₀ d0 (B,): :func:`gates`, :func:`field`, :func:`reset` and
:func:`finish` as in the source's header. No graph is recorded: these serve a hand-written
backward. The torch forms (float64 on any device, or where the kernel cannot be had) give the
same numbers up to rounding (the kernel's tanh and sigmoid: :mod:`zoo.kernels.tanh`).
"""

from __future__ import annotations

import ctypes

import torch

from .compiled import Form, chunks, each_chunk, function, longs, pointers, use_compiled


def _call(entry: str, sizes: list[int], tensors: list[torch.Tensor | None], batch: int,
          scalar: float | None = None) -> None:
    """Runs ``gru_<entry>`` over the samples, split between threads (None: a null pointer)."""
    dtype = next(t for t in tensors if t is not None).dtype
    call = function("gru_ode", f"gru_{entry}", dtype)
    args = [*longs(*sizes), *([ctypes.c_double(scalar)] if scalar is not None else []),
            *(ctypes.c_void_p(None) if t is None else pointers(t)[0] for t in tensors)]
    each_chunk(chunks(batch), lambda _, b0, b1: call(*args, *longs(b0, b1)))


def _compiled(form: Form, *tensors: torch.Tensor) -> bool:
    return use_compiled(form, "gru_ode", *tensors)


def gates(p_rz: torch.Tensor, xw: torch.Tensor, h: torch.Tensor, rh: torch.Tensor,
          form: Form = "auto") -> None:
    """p_rz ← [r, z] = σ(p_rz + xw[:, :2H]) and rh ← r ⊙ ĥ (all contiguous)."""
    hidden = h.shape[1]
    if _compiled(form, p_rz, xw, h):
        _call("gates", [hidden], [p_rz, xw, h, rh], len(h))
        return
    p_rz.add_(xw[:, :2 * hidden]).sigmoid_()
    torch.mul(p_rz[:, :hidden], h, out=rh)


def field(p_g: torch.Tensor, xw: torch.Tensor, rz: torch.Tensor, h: torch.Tensor,
          d0: torch.Tensor, k: torch.Tensor, a: torch.Tensor | None = None,
          p: torch.Tensor | None = None, h_bar: torch.Tensor | None = None,
          form: Form = "auto") -> None:
    """p_g ← g = tanh(p_g + xw[:, 2H:]) and k ← (1 − z) ⊙ (g − ĥ) · d0 (k: rows of a wider
    tensor); with the adjoint ``a`` (rows too), ā = a · d0 and p[:, 2H:] ← ā ⊙ (1 − z)(1 − g²),
    p[:, H:2H] ← ā ⊙ (g − ĥ) ⊙ z(z − 1), h_bar ← −ā ⊙ (1 − z)."""
    hidden = h.shape[1]
    if _compiled(form, p_g, xw, h):
        _call("field", [hidden, k.stride(0), 0 if a is None else a.stride(0)],
              [p_g, xw, rz, h, d0, k, a, p, h_bar], len(h))
        return
    z, d = rz[:, hidden:], d0[:, None]
    g = p_g.add_(xw[:, 2 * hidden:]).tanh_()
    one_z, gh = 1 - z, g - h
    torch.mul(one_z * gh, d, out=k)
    if a is None:
        return
    a_bar = a * d
    torch.mul(a_bar * one_z, 1 - g * g, out=p[:, 2 * hidden:])
    torch.mul(a_bar * gh, z * (z - 1), out=p[:, hidden:2 * hidden])
    torch.mul(a_bar, one_z, out=h_bar).neg_()


def reset(q: torch.Tensor, rz: torch.Tensor, h: torch.Tensor, p: torch.Tensor,
          h_bar: torch.Tensor, form: Form = "auto") -> None:
    """p[:, :H] ← q ⊙ ĥ ⊙ r(1 − r) and h_bar += q ⊙ r, for q = p[:, 2H:] U_h."""
    hidden = h.shape[1]
    if _compiled(form, q, rz, h):
        _call("reset", [hidden], [q, rz, h, p, h_bar], len(h))
        return
    r = rz[:, :hidden]
    torch.mul(q * h, r * (1 - r), out=p[:, :hidden])
    h_bar.add_(q * r)


def finish(h_bar: torch.Tensor, y: torch.Tensor, y_bar: torch.Tensor, p: torch.Tensor,
           c: float, form: Form = "auto") -> None:
    """y_bar ← h_bar where −1 ≤ y ≤ 1, else 0 (the clamp's gradient; y and y_bar: rows of
    wider tensors, the same strides), and p ← c p."""
    if _compiled(form, h_bar, y, p):
        _call("finish", [h_bar.shape[1], y.stride(0)], [h_bar, y, y_bar, p], len(y), c)
        return
    torch.mul(h_bar, (y >= -1) & (y <= 1), out=y_bar)
    p.mul_(c)
