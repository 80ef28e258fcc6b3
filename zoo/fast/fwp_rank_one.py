"""Lean loop for rules whose response is non-linear in the read (post-delta Delta, Oja).

Per step (see :mod:`.fwp_stages`): one read W_n [p_1 … p_S], the stage responses
r_s = β_s φ(t_s − W_n p_s − Σ_{j<s} a_sj h ⟨p_j, p_s⟩ r_j) (:meth:`Rule.response`), and one update
W_{n+1} = W_n + Σ_s r_s ⊗ (h b_s p_s). Oja runs on Wᵀ (its transposed form).

The loop stores the samples and heads innermost: W as (h, h, B·H), vectors as (h, B·H). Each
read and update is then a multiply-and-sum vectorised over B·H, where the batch-first layout
runs B·H tiny matrix products per step.
"""

from __future__ import annotations

import torch

from ..fields.fwp.rules import Rule, Write
from .fwp_stages import coupling, stage_responses, step_scale, steps_batch_last
from .grid import FixedGrid
from .inner_matmul import inner_matmul


def rank_one_states(rule: Rule, writes: Write, index: torch.Tensor, grid: FixedGrid,
                    w0: torch.Tensor, weights: torch.Tensor | None = None
                    ) -> list[torch.Tensor]:
    """W at every grid point (N+1 of (B, H, h, h)) from distinct-stage writes (B, U, H, ·) at
    the stages ``index`` (N, S). ``weights`` (B, N) scale each sample's steps: with the
    increment weights of its output time t_b (:meth:`FixedGrid.increment_weights`: 1, then λ,
    then 0) the last state is W(t_b)."""
    batch = w0.shape[:2]
    stages = Write(*(steps_batch_last(x, index)
                     for x in (writes.key, writes.value, writes.rate)))  # (N, S, ·, BH)
    probes = rule.probe(stages)
    pairs = {key: value.unbind(0) for key, value in coupling(grid, probes.unbind(1), 1).items()}
    scale = step_scale(grid, w0.dtype, weights, batch[1])
    right = (scale[:, :, None] * probes).unbind(0)  # (S, h, BH) per step
    targets = rule.target(stages)
    W = w0.transpose(-1, -2) if rule.transposed else w0
    W = W.permute(2, 3, 0, 1).flatten(2).contiguous()  # (h, h, BH)
    states = [W]
    for n, (probe, target, rate) in enumerate(zip(probes.unbind(0), targets.unbind(0),
                                                  stages.rate.unbind(0))):
        reads = inner_matmul(W, probe.transpose(0, 1))  # (h, S, BH)
        base = list((target - reads.transpose(0, 1)).unbind(0))
        mix = {key: value[n] for key, value in pairs.items()}
        rs = stage_responses(base, mix, lambda s, x: rate[s] * rule.activate(x, 0))
        W = W + inner_matmul(torch.stack(rs, 1), right[n])
        states.append(W)
    states = [W.unflatten(-1, batch).permute(2, 3, 0, 1) for W in states]
    return [W.transpose(-1, -2) for W in states] if rule.transposed else states
