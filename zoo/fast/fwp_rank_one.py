"""Lean loop for rules whose response is non-linear in the read (post-delta Delta, Oja).

Per step (see :mod:`.fwp_stages`): one batched read W_n [p_1 … p_S], the stage responses
r_s = φ_s(W_n p_s + Σ_{j<s} a_sj h ⟨p_j, p_s⟩ r_j) on (B, H, h) vectors, and one update
W_{n+1} = W_n + [r_1 … r_S] [h b_1 p_1 … h b_S p_S]ᵀ. Oja runs on Wᵀ (its transposed form).
"""

from __future__ import annotations

import torch

from ..fields.fwp.rules import Rule, Write
from .fwp_stages import coupling, stage_responses, step_weights
from .grid import FixedGrid


def rank_one_states(rule: Rule, writes: Write, grid: FixedGrid,
                    w0: torch.Tensor) -> list[torch.Tensor]:
    """W at every grid point (N+1 of (B, H, h, h))."""
    probes = rule.probe(writes)  # (N, S, B, H, h)
    pairs = {key: value.unbind(0) for key, value in coupling(grid, probes.unbind(1)).items()}
    right = step_weights(grid, probes).unbind(0)
    reads = probes.movedim(1, -1).unbind(0)  # (B, H, h, S) per step
    stages = [[Write(*parts) for parts in zip(*(f.unbind(0) for f in step))]
              for step in zip(*(f.unbind(0) for f in (writes.key, writes.value, writes.rate)))]
    W = w0.transpose(-1, -2) if rule.transposed else w0
    states = [W]
    for n in range(grid.steps):
        base = list((W @ reads[n]).unbind(-1))
        mix = {key: value[n] for key, value in pairs.items()}
        rs = stage_responses(base, mix, lambda s, m: rule.response(stages[n][s], m, True))
        W = W + torch.stack(rs, -1) @ right[n]
        states.append(W)
    return [W.transpose(-1, -2) for W in states] if rule.transposed else states
