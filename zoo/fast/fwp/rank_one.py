"""Lean loop for rules whose response is non-linear in the read (post-delta Delta, Oja).

Per step (see :mod:`.stages`): one read W_n [p_1 … p_S], the stage responses
r_s = β_s φ(t_s − W_n p_s − Σ_{j<s} a_sj h ⟨p_j, p_s⟩ r_j) (:meth:`Rule.response`), and one update
W_{n+1} = W_n + Σ_s r_s ⊗ (h b_s p_s). Oja runs on Wᵀ (its transposed form).

The loop (:mod:`.rank_one_loop`, with a hand-written backward) stores the samples and heads
innermost: W as (h, h, H·B), vectors as (h, H·B) (:func:`.stages.to_lanes`), so each read
and update is a multiply-and-sum vectorised over H·B, where the batch-first layout runs H·B tiny
matrix products per step.
"""

from __future__ import annotations

import torch

from ...fields.fwp.rules import Rule, Write
from .stages import coupling_coefficients, from_lanes, step_scale, to_lanes, window_stride
from ..solve.grid import FixedGrid
from .rank_one_loop import rank_one_loop


def rank_one_states(rule: Rule, writes: Write, index: torch.Tensor, grid: FixedGrid,
                    w0: torch.Tensor, weights: torch.Tensor | None = None,
                    all_states: bool = True) -> torch.Tensor:
    """W at every grid point (N+1, B, H, h, h), or only the last (B, H, h, h) without
    ``all_states``, from distinct-stage writes (U, ·, H·B) at the stages ``index`` (N, S)
    (:func:`.stages.distinct_writes_batch_last`).
    ``weights`` (B, N) scale each sample's steps: with the increment weights of its output time
    t_b (:meth:`FixedGrid.increment_weights`: 1, then λ, then 0) the last state is W(t_b)."""
    batch = w0.shape[:2]
    probes = rule.probe(writes)  # (U, h, HB)
    W = w0.transpose(-1, -2) if rule.transposed else w0
    W = rank_one_loop(rule, to_lanes(W).contiguous(), probes,
                      rule.target(writes), writes.rate, window_stride(index),
                      *coupling_coefficients(grid, w0.dtype),
                      step_scale(grid, w0.dtype, weights, batch[1]), all_states)
    W = from_lanes(W, batch, W.dim() - 3)  # (…, B, H, h, h)
    return W.transpose(-1, -2) if rule.transposed else W
