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

from ...fields.fwp.ode_form import ODEUpdate
from ...fields.fwp.rules import Delta, Oja, Rule, Write
from ...kernels.spline_stages import value, value_and_derivative
from ..solve.grid import FixedGrid
from .writes import fast_write, formed, raw


def activate_backward(rule: Rule, y: torch.Tensor, grad: torch.Tensor, dim: int = -1
                      ) -> torch.Tensor:
    """∂L/∂x from ∂L/∂φ(x) = ``grad`` and y = φ(x), for the rule's activation φ of the
    response (:meth:`Rule.activate`; ``dim`` its vector axis): the softmax's for Oja, tanh's for
    the post-delta Delta, else the identity's."""
    if isinstance(rule, Oja):
        return y * (grad - (y * grad).sum(dim, keepdim=True))
    if isinstance(rule, Delta) and rule.post:
        return torch.ops.aten.tanh_backward(grad, y)
    return grad


def distinct_writes(update, path, grid: FixedGrid, dtype: torch.dtype
                    ) -> tuple[Write, torch.Tensor]:
    """The rule's write at the distinct stage times in one call (:func:`.writes.fast_write`),
    fields (B, U, H, ·), and each stage's position among them (N, S)
    (:meth:`FixedGrid.distinct_stages`)."""
    times, index = grid.distinct_stages(dtype)
    return fast_write(update, *stage_inputs(update, path, times)), \
        index.to(path.grid_points.device)


def distinct_writes_batch_last(update, path, grid: FixedGrid, dtype: torch.dtype
                               ) -> tuple[Write, torch.Tensor]:
    """As :func:`distinct_writes`, with the fields (U, c, H·B) contiguous, samples and heads
    innermost (:func:`to_lanes`): the layout of the loops over steps, which the slow net writes
    directly (``lanes``, :func:`.layouts.lanes_linear`); the rule's
    activations then run on (U, H·B, c) views, the vector axis last."""
    times, index = grid.distinct_stages(dtype)
    return lanes_writes(update, path, times), index.to(path.grid_points.device)


def lanes_writes(update, path, times: torch.Tensor) -> Write:
    """``update.write`` at ``times`` (U,), its fields formed (U, c, H·B), samples and heads
    innermost, as the slow net writes them (``lanes``)."""
    w = formed(update.rule.write(*raw(update, stage_inputs(update, path, times), "lanes"),
                                 fast=True))
    return Write(w.key.mT, w.value.mT, w.rate.mT)


def stage_inputs(update, path, times: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``update.inputs`` at ``times``: the CDE form's (X, X′) and the ODE form's X from one pass
    over the control's coefficients (:func:`value_and_derivative`, the same values), stored
    stage-last as the slow net's products read them."""
    if update.n_inputs == 2:
        return value_and_derivative(path, times, stage_last=True)
    if update.inputs is ODEUpdate.inputs:
        return (value(path, times, stage_last=True),)
    return update.inputs(path, times)


def to_lanes(x: torch.Tensor) -> torch.Tensor:
    """(B, H, …) -> (…, H·B): samples and heads as one innermost axis, heads outer (the step
    loops vectorise every operation over it)."""
    return x.transpose(0, 1).flatten(0, 1).movedim(0, -1)


def from_lanes(x: torch.Tensor, batch: tuple[int, int], at: int = 0) -> torch.Tensor:
    """(…, H·B) -> the axes (B, H) = ``batch`` at position ``at``, as before :func:`to_lanes`."""
    return x.unflatten(-1, batch[::-1]).movedim((-1, -2), (at, at + 1))


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
    """Distinct-stage write (U, c, H·B) -> per step and stage (N, S, c, H·B), each step's
    (S, c, H·B) one contiguous block (overlapping steps share their common stage)."""
    return stage_windows(x, index, 0).permute(0, 3, 1, 2)


def step_scale(grid: FixedGrid, dtype: torch.dtype, weights: torch.Tensor | None = None,
               heads: int = 1) -> torch.Tensor:
    """h_n b_s as (N, S, 1), times each sample's weight w_{b,n} (``weights`` (B, N)) as
    (N, S, H·B) for ``heads`` heads per sample."""
    scale = step_coefficients(grid, dtype)[..., None]
    if weights is None:
        return scale
    return scale * to_lanes(weights.to(scale)[:, None].expand(-1, heads, -1))[:, None]


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
