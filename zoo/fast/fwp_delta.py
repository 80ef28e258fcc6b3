"""Pre-delta fast path: the field is affine in W, so each step is an affine map of W.

Pre-delta's response r = β (v − W k) is affine in the read, so the stage responses of step n
are r_s = z_s − W_n u_s with z_s = β_s (v_s − Σ_{j<s} a_sj h ⟨k_j, k_s⟩ z_j) and u_s the same
recurrence on k_s: computed for all steps at once. The sequential part is then
W_{n+1} = W_n + (Z_n − W_n U_n) K_nᵀ with Z_n = [z_s], U_n = [u_s], K_n = [h b_s k_s].
"""

from __future__ import annotations

import torch

from ..fields.fwp.rules import Write
from .fwp_stages import coupling, stage_responses, step_weights
from .grid import FixedGrid


def pre_delta_states(writes: Write, grid: FixedGrid, w0: torch.Tensor) -> list[torch.Tensor]:
    """W at every grid point (N+1 of (B, H, h, h))."""
    h = writes.key.shape[-1]
    rate, target = writes.rate.unbind(1), torch.cat([writes.value, writes.key], -1).unbind(1)
    rs = stage_responses([None] * grid.tableau.stages, coupling(grid, writes.key),
                         lambda s, m: rate[s] * (target[s] if m is None else target[s] - m))
    z, u = torch.stack(rs, -1).split(h, -2)  # (N, B, H, h, S) each
    right = step_weights(grid, writes.key)
    W, states = w0, [w0]
    for z_n, u_n, k_n in zip(z.unbind(0), u.unbind(0), right.unbind(0)):
        W = W + (z_n - W @ u_n) @ k_n
        states.append(W)
    return states
