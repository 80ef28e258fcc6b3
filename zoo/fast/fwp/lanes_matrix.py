"""Per-lane h × h matrices, samples and heads innermost (h, h, L): their reads by a few
vectors and their rank updates, as the FWP adjoint's steps use them (:mod:`.adjoint`).

    read:        (W p_s)_i = Σ_j W_ij p_sj          (Wᵀ p_s with ``transposed``)
    rank update: W + Σ_s c_s r_s ⊗ p_s

No graph is recorded (the adjoint's steps differentiate by hand). On CPU they run compiled
(``kernels/lanes_matrix.cpp``): one pass over W per stage, vectorised over the lanes, where the
torch form (``form="torch"``) builds an (S, h, h, L) product or accumulates column by column.
"""

from __future__ import annotations

import ctypes

import torch

from ...kernels.compiled import Form, chunks, each_chunk, function, longs, pointers, use_compiled

#: head sizes up to which the torch form reads column by column (no (S, h, h, L) product): at
#: h ≤ 16 that was 1.2-9× quicker here, at h = 20 the one product 1.5× (one thread)
COLUMNWISE = 16


def read(W: torch.Tensor, P: torch.Tensor, transposed: bool = False,
         form: Form = "auto") -> torch.Tensor:
    """W p_s (Wᵀ p_s when ``transposed``) for W (h, h, L) and P (S, h, L): (S, h, L)."""
    if use_compiled(form, "lanes_matrix", W, P):
        W, P = W.contiguous(), P.contiguous()
        out = torch.empty_like(P)
        call = function("lanes_matrix", "lanes_read", W.dtype)
        sizes = longs(*P.shape)
        each_chunk(chunks(P.shape[-1]), lambda _, l0, l1: call(
            *sizes, *pointers(W, P, out), ctypes.c_int(int(transposed)), *longs(l0, l1)))
        return out
    if transposed:
        W = W.transpose(0, 1)
    if W.shape[1] > COLUMNWISE:
        return (W.unsqueeze(0) * P.unsqueeze(1)).sum(2)
    out = P.new_zeros(P.shape[0], W.shape[0], P.shape[-1])
    for j in range(W.shape[1]):
        out.addcmul_(W[:, j].unsqueeze(0), P[:, j].unsqueeze(1))
    return out


def rank_update(W: torch.Tensor, R: torch.Tensor, P: torch.Tensor, c: list[float],
                form: Form = "auto") -> torch.Tensor:
    """W + Σ_s c_s r_s ⊗ p_s as a new (h, h, L), for R, P (S, h, L)."""
    if use_compiled(form, "lanes_matrix", W, R, P):
        W, R, P = W.contiguous(), R.contiguous(), P.contiguous()
        out, weights = torch.empty_like(W), W.new_tensor(c)
        call = function("lanes_matrix", "lanes_rank_update", W.dtype)
        sizes = longs(*P.shape)
        each_chunk(chunks(P.shape[-1]), lambda _, l0, l1: call(
            *sizes, *pointers(W, R, P, weights, out), *longs(l0, l1)))
        return out
    out = W.clone()
    for r, p, weight in zip(R, P, c):
        if weight:
            out.addcmul_(r.unsqueeze(1), p.unsqueeze(0), value=weight)
    return out
