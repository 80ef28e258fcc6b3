"""FWP fast path dispatch: fast weights at the output times without the generic solve.

Hebb → :mod:`.fwp_hebb` (weighted sum), pre-delta → :mod:`.fwp_delta` (affine steps), post-delta
and Oja → :mod:`.fwp_rank_one` (lean loop). All evaluate the control and the slow net at every
distinct stage time in one call (:func:`.fwp_stages.distinct_writes`).
"""

from __future__ import annotations

import torch

from ..fields.fwp.rules import Delta
from .fwp_delta import pre_delta_states
from .fwp_hebb import hebb_fast_weights
from .fwp_rank_one import rank_one_states
from .fwp_stages import distinct_writes, per_stage
from .grid import FixedGrid


def fast_weights(update, w0: torch.Tensor, path, integrator,
                 rows: torch.Tensor | None) -> torch.Tensor:
    """W (B, H, h, h) at output index rows[b] of ``path.grid_points`` per sample, or at every
    grid point (T, B, H, h, h) when ``rows`` is None."""
    grid = FixedGrid.plan(integrator, path.grid_points)
    writes, index = distinct_writes(update, path, grid, w0.dtype)
    rule = update.rule
    if not rule.reads_state:
        return hebb_fast_weights(rule, writes, index, grid, w0, rows)
    writes = per_stage(writes, index)
    if isinstance(rule, Delta) and not rule.post:
        states = pre_delta_states(writes, grid, w0)
    else:
        states = rank_one_states(rule, writes, grid, w0)
    return grid.outputs(states, rows)
