"""Hebb fast path: the field does not read W, so W(t) is a weighted sum over all stages.

With increments Δ_n = h_n Σ_s b_s r_{n,s} ⊗ p_{n,s} (r = σ(β)·v, p = softmax(k)) and the output
weights w_{j,n} of :meth:`FixedGrid.increment_weights`,
W(t_j) = W(t_0) + Σ_{n,s} w_{j,n} h_n b_s r_{n,s} ⊗ p_{n,s}: one batched contraction, over the
distinct stage times (a stage shared by two steps carries the sum of both coefficients). Its
read needs no W at all: W(t_j) q = W(t_0) q + Σ_{n,s} w_{j,n} h_n b_s ⟨p_{n,s}, q⟩ r_{n,s}.
"""

from __future__ import annotations

import torch

from ...fields.fwp.fast_weight import retrieve
from ...fields.fwp.rules import Rule, Write
from .writes import formed
from .stage_linear import StageLinear
from .stages import step_coefficients
from ..solve.grid import FixedGrid
from .layer_read import layer_read
from .stage_read import stage_read


def hebb_fast_weights(rule: Rule, writes: Write, index: torch.Tensor, grid: FixedGrid,
                      w0: torch.Tensor) -> torch.Tensor:
    """W at every output time (T, B, H, h, h) from ``writes`` (B, U, H, h) at the distinct
    stages ``index`` (N, S)."""
    coef = _coefficients(grid, index, torch.arange(len(grid.t), device=w0.device), w0.dtype)
    left, right = _factors(rule, formed(writes))
    return w0 + torch.einsum("tu,buhi,buhj->tbhij", coef, left, right)


def hebb_read(rule: Rule, writes: Write, index: torch.Tensor, grid: FixedGrid,
              w0: torch.Tensor, rows: torch.Tensor, q: torch.Tensor,
              transpose: bool) -> torch.Tensor:
    """W(t_{rows[b]}) q_b (Wᵀ q_b when ``transpose``) per sample and head, (B, H, h).

    With the term r ⊗ p = (β v) ⊗ p the read is Σ_u c_u β_u ⟨a_u, q⟩ o_u, (a, o) = (p, v), or
    (v, p) when transposed (:func:`stage_read`, per sample and head, reading the stage-last
    writes (B, H, h, U) in place, the keys' softmax taken inside it when they come as logits).
    Raw values and rates (Hebb-CDE as coded) come as their layers of the stage inputs
    (:class:`StageLinear`): transposed, the keys, rates and values are read through their
    layers, none ever formed (:func:`layer_read`); else the values' Σ_u w_u v_u is.
    """
    coef = _coefficients(grid, index, rows, w0.dtype)  # (B, U)
    values = writes.value
    if isinstance(values, StageLinear) and transpose and isinstance(writes.key, StageLinear):
        read = key_layer_read(writes.key, writes.rate, coef, values, q)
        return retrieve(w0, q, transpose) + read
    writes = formed(writes, values=False)
    rate = writes.rate.permute(0, 2, 3, 1)[:, :, 0] * coef[:, None]  # c β (B, H, U)
    if isinstance(values, StageLinear) and not transpose:
        read = _weighted_values(writes, rate, q)
        return retrieve(w0, q, transpose) + read
    probe = _heads_by_stage(rule.probe(writes))  # p (BH, h, U), or its logits
    target = _heads_by_stage(rule.target(writes))
    a, o = (target, probe) if transpose else (probe, target)
    softmax_of = ("o" if transpose else "a") if writes.key_logits else None
    read = stage_read(a, o, rate.flatten(0, 1), q.flatten(0, 1), softmax_of)
    return retrieve(w0, q, transpose) + read.view(q.shape)


def key_layer_read(keys: StageLinear, rates: StageLinear, coef: torch.Tensor,
                   values: StageLinear, q: torch.Tensor) -> torch.Tensor:
    """Σ_u c_u β_u ⟨v_u, q⟩ softmax(k_u) per sample and head (B, H, h), the keys and rates one
    layer of the same stage inputs, the values another (:func:`layer_read`)."""
    x = keys.z.mT  # (B, K, U), the stage-last memory of the folded inputs
    scale = keys.scale if keys.scale is not None else x.new_ones(x.shape[0], x.shape[2])
    return layer_read(torch.cat([keys.weight, rates.weight]), torch.cat([keys.bias, rates.bias]),
                      x, scale, coef, *values.query_folded(q), values.inputs.mT)


def _weighted_values(writes: Write, rate: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Σ_u c_u β_u ⟨p_u, q⟩ v_u with the values left as their layer: (B, H, h)."""
    keys = _heads_by_stage(writes.key)
    weight = rate * (keys * q.flatten(0, 1)[..., None]).sum(1).view(rate.shape)
    return writes.value.weighted_sum(weight)


def _heads_by_stage(x: torch.Tensor) -> torch.Tensor:
    """A stage-last write (B, U, H, c) as (B·H, c, U), a view of its memory."""
    return x.permute(0, 2, 3, 1).flatten(0, 1)


def _coefficients(grid: FixedGrid, index: torch.Tensor, rows: torch.Tensor,
                  dtype: torch.dtype) -> torch.Tensor:
    """(R, U): the weight of each distinct stage's term in y(t_{rows[r]})."""
    coef = grid.increment_weights(rows).to(dtype)[..., None] * step_coefficients(grid, dtype)
    return coef.new_zeros(len(coef), int(index.max()) + 1).index_add_(
        1, index.flatten(), coef.flatten(1))


def _factors(rule: Rule, writes: Write) -> tuple[torch.Tensor, torch.Tensor]:
    """The term's (left, right) factors, r ⊗ p (p ⊗ r when transposed)."""
    r, p = rule.response(writes, None), rule.probe(writes)
    return (p, r) if rule.transposed else (r, p)
