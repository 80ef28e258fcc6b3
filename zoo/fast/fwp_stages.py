"""What the FWP fast paths share: the slow net at every stage time, and the stage recurrence.

A learning-rule term is rank one, dW = r ⊗ p with probe p and response r = β φ(t − W p) (Oja: the
transposed state, see :class:`zoo.fields.fwp.rules.Rule`). At stage s of an explicit RK step
from W_n the stage state is Y_s = W_n + h Σ_{j<s} a_sj r_j ⊗ p_j, so its read is

    Y_s p_s = W_n p_s + Σ_{j<s} a_sj h ⟨p_j, p_s⟩ r_j,

and the step is W_{n+1} = W_n + Σ_s h b_s r_s ⊗ p_s: no stage state is ever formed.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..fields.fwp.rules import Write
from .grid import FixedGrid


def distinct_writes(update, path, grid: FixedGrid, dtype: torch.dtype
                    ) -> tuple[Write, torch.Tensor]:
    """``update.write`` at the distinct stage times in one call, fields (B, U, H, ·), and each
    stage's position among them (N, S) (:meth:`FixedGrid.distinct_stages`)."""
    times, index = grid.distinct_stages(dtype)
    return update.write(*update.inputs(path, times), fast=True), index.to(path.grid_points.device)


def distinct_writes_batch_last(update, path, grid: FixedGrid, dtype: torch.dtype
                               ) -> tuple[Write, torch.Tensor]:
    """As :func:`distinct_writes`, with the fields (U, c, B·H) contiguous: the layout of the
    loops over steps. The slow net runs with the stages outermost, (U, B, ·), so its raw
    outputs (U, B, H, c) reach that layout by a transposition within each stage's block (about
    5× quicker than from the stage-innermost layout of :func:`distinct_writes`); the rule's
    activations then run on it (as (U, B·H, c) views, the vector axis last)."""
    times, index = grid.distinct_stages(dtype)
    raw = update.raw(*(x.transpose(0, 1) for x in update.inputs(path, times)), fast=True)
    raw = (x.permute(0, 3, 1, 2).flatten(2).contiguous().mT for x in raw)  # (U, BH, c) views
    w = update.rule.write(*raw, fast=True)
    return Write(w.key.mT, w.value.mT, w.rate.mT), index.to(path.grid_points.device)


def stage_windows(x: torch.Tensor, index: torch.Tensor, dim: int) -> torch.Tensor:
    """The stages of every step as a view of distinct-stage values along ``dim``: that axis
    becomes N and a last axis S is added, as the stages of step n are the distinct stages
    index[n] = n·step + (0 … S − 1)."""
    return x.unfold(dim, index.shape[1], window_stride(index))


def window_stride(index: torch.Tensor) -> int:
    """How many distinct stages one step advances (S when there is a single step)."""
    return int(index[1, 0] - index[0, 0]) if len(index) > 1 else index.shape[1]


def stage_rows(k: torch.Tensor, stride: int, steps: int, s: int) -> torch.Tensor:
    """Stage s of every step, (N, h, ·): a strided view of the distinct stages k (U, h, ·)."""
    return k[s:s + (steps - 1) * stride + 1:stride]


def steps_batch_last(x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
    """Distinct-stage write (U, c, B·H) -> per step and stage (N, S, c, B·H), each step's
    (S, c, B·H) one contiguous block (overlapping steps share their common stage)."""
    return stage_windows(x, index, 0).permute(0, 3, 1, 2)


def step_scale(grid: FixedGrid, dtype: torch.dtype, weights: torch.Tensor | None = None,
               heads: int = 1) -> torch.Tensor:
    """h_n b_s as (N, S, 1), times each sample's weight w_{b,n} (``weights`` (B, N)) as
    (N, S, B·H) for ``heads`` heads per sample."""
    scale = step_coefficients(grid, dtype)[..., None]
    if weights is None:
        return scale
    return scale * weights.T.to(scale).repeat_interleave(heads, 1)[:, None]


def coupling_coefficients(grid: FixedGrid, dtype: torch.dtype
                          ) -> tuple[tuple[tuple[int, int], ...], torch.Tensor]:
    """The stage pairs (j, s) with a non-zero a_sj, and a_sj h_n for each, (Q, N)."""
    pairs = tuple((j, s) for s, row in enumerate(grid.tableau.a) for j, a in enumerate(row) if a)
    a = torch.tensor([grid.tableau.a[s][j] for j, s in pairs], dtype=dtype,
                     device=grid.dt.device)
    return pairs, a[:, None] * grid.dt.to(dtype)


def step_coefficients(grid: FixedGrid, dtype: torch.dtype) -> torch.Tensor:
    """h_n b_s (N, S): each stage's weight in the step's increment."""
    dt = grid.dt.to(dtype)
    return dt[:, None] * torch.tensor(grid.tableau.b, dtype=dtype, device=dt.device)


def stage_responses(base: list[torch.Tensor], mix: dict[tuple[int, int], torch.Tensor],
                    response: Callable[[int, torch.Tensor], torch.Tensor]) -> list[torch.Tensor]:
    """r_s = response(s, base_s − Σ_{j<s} mix_js r_j) for every stage s; ``mix`` is
    :func:`coupling`."""
    rs: list[torch.Tensor] = []
    for s, x in enumerate(base):
        for j, r in enumerate(rs):
            if (j, s) in mix:
                x = torch.addcmul(x, mix[j, s], r, value=-1)
        rs.append(response(s, x))
    return rs
