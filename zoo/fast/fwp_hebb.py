"""Hebb fast path: the field does not read W, so W(t) is a weighted sum over all stages.

With increments Δ_n = h_n Σ_s b_s r_{n,s} ⊗ p_{n,s} (r = σ(β)·v, p = softmax(k)) and the output
weights w_{j,n} of :meth:`FixedGrid.increment_weights`,
W(t_j) = W(t_0) + Σ_{n,s} w_{j,n} h_n b_s r_{n,s} ⊗ p_{n,s}: one batched contraction.
"""

from __future__ import annotations

import torch

from ..fields.fwp.rules import Rule, Write
from .grid import FixedGrid


def hebb_fast_weights(rule: Rule, writes: Write, grid: FixedGrid, w0: torch.Tensor,
                      rows: torch.Tensor | None) -> torch.Tensor:
    """W at output index rows[b] per sample (B, H, h, h), or at every output time (T, B, H, h, h)
    when ``rows`` is None."""
    r, p = rule.response(writes, None), rule.probe(writes)  # (N, S, B, H, h)
    left, right = (p, r) if rule.transposed else (r, p)
    all_rows = torch.arange(len(grid.t), device=w0.device)
    weights = grid.increment_weights(all_rows if rows is None else rows).to(w0.dtype)
    b = torch.tensor(grid.tableau.b, dtype=w0.dtype, device=w0.device)
    coef = weights[..., None] * (grid.dt.to(w0.dtype)[:, None] * b)  # (R, N, S)
    if rows is None:
        return w0 + torch.einsum("tns,nsbhi,nsbhj->tbhij", coef, left, right)
    return w0 + torch.einsum("bns,nsbhi,nsbhj->bhij", coef, left, right)
