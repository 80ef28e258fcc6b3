"""Pre-delta fast path: the field is affine in W, so each step is an affine map of W.

Pre-delta's stage response r_s = β_s (v_s − Y_s k_s) reads the stage state
Y_s = W_n + h Σ_{j<s} a_sj r_j ⊗ k_j only through Y_s k_s = W_n k_s + Σ_{j<s} m_js r_j with
m_js = a_sj h ⟨k_j, k_s⟩. Forward substitution over the stages solves these S equations at
once: R_n = [r_1 … r_S] = (V_n − W_n K_n) T_nᵀ, where T_n = (I + diag(β) M)⁻¹ diag(β) is a
lower-triangular S × S matrix per sample and head and V_n, K_n hold the step's values and keys
as h × S columns. With P_n = T_nᵀ diag(h_n b_s), a step is

    W_{n+1} = W_n + (V_n − W_n K_n) P_n K_nᵀ,

and P_n, which does not depend on W, is computed for every step at once.

Where only the read y = W(t) q is needed (the final state of a classifier), no W after W_0 is
formed. W_{n+1} = W_n A_n + C_n with A_n = I − K_n P_n K_nᵀ and C_n = V_n P_n K_nᵀ, so

    W_N q = W_0 g_0 + Σ_n V_n c_n,   c_n = P_n K_nᵀ g_{n+1},  g_n = g_{n+1} − K_n c_n,  g_N = q,
    W_Nᵀ q = x_N,  x_{n+1} = x_n − K_n P_nᵀ (K_nᵀ x_n − V_nᵀ q),  x_0 = W_0ᵀ q:

one :func:`.delta_sweep.sweep` over h-vectors, backward or forward. A sample whose output time
t lies before the end has its increment weights (:meth:`FixedGrid.increment_weights`: 1, then λ,
then 0) folded into P_n, which makes W_N its own W(t).

Everything runs on the distinct stages with the batch and head axes innermost, (U, ·, H·B)
(:func:`.stages.to_lanes`), where each stage-by-stage operation is an elementwise product
vectorised over H·B.
"""

from __future__ import annotations

import torch

from ...fields.fwp.fast_weight import retrieve
from ...fields.fwp.rules import Write
from .stages import (coupling_coefficients, from_lanes, stage_responses, stage_windows,
                         step_scale, steps_batch_last, to_lanes, window_stride)
from ..solve.grid import FixedGrid
from .stage_products import stage_products
from .stage_sums import stage_dot, stage_sum
from .delta_sweep import sweep


def _mixing(writes: Write, index: torch.Tensor, grid: FixedGrid, heads: int,
            weights: torch.Tensor | None = None) -> torch.Tensor:
    """P_n (N, S, S, H·B) from distinct-stage writes (U, ·, H·B) at the stages ``index``
    (N, S); ``weights`` (B, N) scale each sample's steps."""
    keys, stride = writes.key, window_stride(index)
    rate = steps_batch_last(writes.rate, index).unbind(1)  # S of (N, 1, HB)
    stages, dtype = grid.tableau.stages, keys.dtype
    pairs, coefficients = coupling_coefficients(grid, dtype)
    products = stage_products(keys, stride, grid.steps, pairs)  # ⟨k_j, k_s⟩ (Q, N, 1, HB)
    mix = {pair: c[:, None, None] * g for pair, c, g in zip(pairs, coefficients, products)}
    eye = torch.eye(stages, dtype=dtype, device=keys.device)[..., None]
    rows = stage_responses(list(eye), mix, lambda s, x: rate[s] * x)
    scale = step_scale(grid, dtype, weights, heads)
    return torch.stack(rows, 2) * scale[:, None]  # P = Tᵀ diag(h b w)


def pre_delta_states(writes: Write, index: torch.Tensor, grid: FixedGrid,
                     w0: torch.Tensor) -> list[torch.Tensor]:
    """W at every grid point (N+1 of (B, H, h, h)) from distinct-stage writes (U, ·, H·B)."""
    batch = w0.shape[:2]
    P = _mixing(writes, index, grid, batch[1])
    K, V = (steps_batch_last(x, index) for x in (writes.key, writes.value))
    V, K = (from_lanes(x, batch, 1).transpose(-1, -2) for x in (V, K))  # (N, B, H, h, S)
    P = from_lanes(P, batch, 1)
    W, states = w0, [w0]
    for v, k, pk in zip(V.unbind(0), K.unbind(0), (P @ K.mT).unbind(0)):
        W = W + (v - W @ k) @ pk
        states.append(W)
    return states


def pre_delta_read(writes: Write, index: torch.Tensor, grid: FixedGrid, w0: torch.Tensor,
                   weights: torch.Tensor, q: torch.Tensor, transpose: bool) -> torch.Tensor:
    """W(t_b) q_b (Wᵀ q_b when ``transpose``) per sample and head, (B, H, h), from
    distinct-stage writes (U, ·, H·B), W(t_0) = ``w0`` and the increment weights (B, N)."""
    batch, stride = q.shape[:2], window_stride(index)
    P = _mixing(writes, index, grid, batch[1], weights)
    keys, values, q_flat = writes.key, writes.value, to_lanes(q)  # (U, h, HB), (h, HB)
    if transpose:
        vq = stage_dot(values, q_flat)  # (U, HB)
        x, _ = sweep(to_lanes(retrieve(w0, q, True)), keys, stride, P.transpose(1, 2),
                     stage_windows(vq, index, 0).transpose(-1, -2))
        return from_lanes(x, batch)
    g, c = sweep(q_flat, keys, stride, P, reverse=True)
    c = c.new_zeros(len(values), c.shape[-1]).index_add_(0, index.flatten(), c.flatten(0, 1))
    return retrieve(w0, from_lanes(g, batch)) + from_lanes(stage_sum(values, c), batch)
