"""What the FWP fast paths share: the slow net at every stage time, and the stage recurrence.

A learning-rule term is rank one, dW = r ⊗ p with probe p and response r = φ(W p) (Oja: the
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


def per_stage(writes: Write, index: torch.Tensor) -> Write:
    """Distinct-stage writes (B, U, H, ·) laid out per stage, (N, S, B, H, ·)."""
    return Write(*(x.movedim(1, 0)[index] for x in (writes.key, writes.value, writes.rate)))


def coupling(grid: FixedGrid, probes: torch.Tensor) -> dict[tuple[int, int], torch.Tensor]:
    """a_sj h_n ⟨p_j, p_s⟩ for every non-zero a_sj, keyed (j, s), each (N, B, H, 1), from
    probes (N, S, B, H, h): one multiply-and-sum per pair (a batched S × S Gram product of
    h-vectors is several times slower on CPU)."""
    dt, p = grid.dt.to(probes.dtype).view(-1, 1, 1, 1), probes.unbind(1)
    return {(j, s): (a * dt) * (p[j] * p[s]).sum(-1, keepdim=True)
            for s, row in enumerate(grid.tableau.a) for j, a in enumerate(row) if a}


def step_weights(grid: FixedGrid, probes: torch.Tensor) -> torch.Tensor:
    """h_n b_s p_s as (N, B, H, S, h), the right factor of the step's increment."""
    b = torch.tensor(grid.tableau.b, dtype=probes.dtype, device=probes.device)
    weight = grid.dt.to(probes.dtype)[:, None] * b  # (N, S)
    return (weight[..., None, None, None] * probes).movedim(1, -2)


def stage_responses(base: list[torch.Tensor | None], mix: dict[tuple[int, int], torch.Tensor],
                    response: Callable[[int, torch.Tensor | None], torch.Tensor]
                    ) -> list[torch.Tensor]:
    """r_s = response(s, base_s + Σ_{j<s} mix_js r_j) for every stage s; ``mix`` is
    :func:`coupling` (a base of None is zero)."""
    rs: list[torch.Tensor] = []
    for s, m in enumerate(base):
        for j, r in enumerate(rs):
            if (j, s) in mix:
                term = mix[j, s] * r
                m = term if m is None else m + term
        rs.append(response(s, m))
    return rs
