"""FWP fast path dispatch: fast weights, or their read, without the generic solve.

Hebb → :mod:`.hebb` (weighted sum), pre-delta → :mod:`.delta` (affine steps), post-delta
and Oja → :mod:`.rank_one` (lean loop). All evaluate the control and the slow net at every
distinct stage time in one call, in the layout of the path that reads them
(:func:`.stages.distinct_writes` for Hebb, :func:`.stages.distinct_writes_batch_last`
for the others). A model that reads only its final state asks for :func:`fast_read`, which the
Hebb and pre-delta paths compute without forming W after W(t0). With backprop ``adjoint`` the
solve is :func:`fast_adjoint`'s.
"""

from __future__ import annotations

import torch

from ...fields.fwp.fast_weight import retrieve
from ...fields.fwp.rules import Delta
from ..solve.adjoint import FastAdjoint
from .delta import pre_delta_read, pre_delta_states
from .hebb import hebb_fast_weights, hebb_read
from .rank_one import rank_one_states
from .adjoint import RankOneSteps
from .stages import distinct_writes, distinct_writes_batch_last, lanes_writes
from ..solve.grid import FixedGrid


def fast_weights(update, w0: torch.Tensor, path, integrator) -> torch.Tensor:
    """W at every grid point of ``path.grid_points``, (T, B, H, h, h)."""
    grid, writes, index = _stages(update, w0, path, integrator)
    rule = update.rule
    if not rule.reads_state:
        return hebb_fast_weights(rule, writes, index, grid, w0)
    if _pre_delta(rule):
        return grid.outputs(pre_delta_states(writes, index, grid, w0))
    return grid.outputs(rank_one_states(rule, writes, index, grid, w0))


def fast_read(update, w0: torch.Tensor, path, integrator, rows: torch.Tensor, q: torch.Tensor,
              transpose: bool) -> torch.Tensor:
    """W q_b per head (Wᵀ q_b when ``transpose``), (B, H, h), with sample b's W at grid index
    rows[b] of ``path.grid_points`` and its query q_b (B, H, h)."""
    grid, writes, index = _stages(update, w0, path, integrator)
    rule = update.rule
    if not rule.reads_state:
        return hebb_read(rule, writes, index, grid, w0, rows, q, transpose)
    weights = grid.increment_weights(rows)
    if _pre_delta(rule):
        return pre_delta_read(writes, index, grid, w0, weights, q, transpose)
    return retrieve(rank_one_states(rule, writes, index, grid, w0, weights, all_states=False), q,
                    transpose)


def fast_adjoint(update, path, integrator) -> FastAdjoint:
    """The continuous adjoint of the learning-rule ODE (:mod:`.adjoint`) with the rule's steps
    by hand (:mod:`.adjoint`): the writes at a block's stage times in one call."""
    def inputs(times: torch.Tensor) -> tuple[torch.Tensor, ...]:
        w = lanes_writes(update, path, times)
        return w.key, w.value, w.rate

    return FastAdjoint(integrator, inputs, RankOneSteps(update.rule, update.heads),
                       update.parameters())


def _stages(update, w0: torch.Tensor, path, integrator):
    """The solve's grid (its NFE counted) and the writes at its distinct stages, in the layout
    of the path that reads them (the step loops' for the rules that read W, Hebb's otherwise)."""
    grid = FixedGrid.plan(integrator, path.grid_points)
    writes = distinct_writes_batch_last if update.rule.reads_state else distinct_writes
    return (grid, *writes(update, path, grid, w0.dtype))


def _pre_delta(rule) -> bool:
    return isinstance(rule, Delta) and not rule.post
