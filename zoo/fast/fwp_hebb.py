"""Hebb fast path: the field does not read W, so W(t) is a weighted sum over all stages.

With increments Δ_n = h_n Σ_s b_s r_{n,s} ⊗ p_{n,s} (r = σ(β)·v, p = softmax(k)) and the output
weights w_{j,n} of :meth:`FixedGrid.increment_weights`,
W(t_j) = W(t_0) + Σ_{n,s} w_{j,n} h_n b_s r_{n,s} ⊗ p_{n,s}: one batched contraction, over the
distinct stage times (a stage shared by two steps carries the sum of both coefficients).
"""

from __future__ import annotations

import torch

from ..fields.fwp.rules import Rule, Write
from .grid import FixedGrid


def hebb_fast_weights(rule: Rule, writes: Write, index: torch.Tensor, grid: FixedGrid,
                      w0: torch.Tensor, rows: torch.Tensor | None) -> torch.Tensor:
    """W at output index rows[b] per sample (B, H, h, h), or at every output time (T, B, H, h, h)
    when ``rows`` is None; ``writes`` (B, U, H, h) at the distinct stages ``index`` (N, S)."""
    all_rows = torch.arange(len(grid.t), device=w0.device)
    weights = grid.increment_weights(all_rows if rows is None else rows).to(w0.dtype)
    b = torch.tensor(grid.tableau.b, dtype=w0.dtype, device=w0.device)
    coef = weights[..., None] * (grid.dt.to(w0.dtype)[:, None] * b)  # (R, N, S)
    distinct = coef.new_zeros(len(coef), writes.key.shape[1]).index_add_(
        1, index.flatten(), coef.flatten(1))  # (R, U)
    if rows is None:
        left, right = _factors(rule, writes)
        return w0 + torch.einsum("tu,buhi,buhj->tbhij", distinct, left, right)
    # the response is linear in the rate: fold each sample's coefficients into it
    scaled = Write(writes.key, writes.value, writes.rate * distinct[..., None, None])
    left, right = _factors(rule, scaled)
    return w0 + torch.einsum("buhi,buhj->bhij", left, right)


def _factors(rule: Rule, writes: Write) -> tuple[torch.Tensor, torch.Tensor]:
    """The term's (left, right) factors, r ⊗ p (p ⊗ r when transposed)."""
    r, p = rule.response(writes, None), rule.probe(writes)
    return (p, r) if rule.transposed else (r, p)
