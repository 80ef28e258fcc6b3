"""Lean fixed-grid solve: the control at every stage time in one call, then a loop that
evaluates only the state-dependent part of the field.

dy/dt = field(y, *inputs(t)) where ``inputs`` (control values, derivatives, and any
state-independent function of them) is evaluated once at the distinct stage times
(:meth:`.grid.FixedGrid.distinct_stages`); the loop then takes torchdiffeq's steps
(:func:`.tableau.integrate`) on :class:`.grid.FixedGrid`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ..fields.initial import output_index, step_states
from .grid import FixedGrid
from .tableau import integrate

#: stage times (M,) -> state-independent inputs, each (B, M, ·)
StageInputs = Callable[[torch.Tensor], tuple[torch.Tensor, ...]]


def lean_solve(integrator, t: torch.Tensor, y0: torch.Tensor, stage_inputs: StageInputs,
               field: Callable[..., torch.Tensor], rows: torch.Tensor | None = None
               ) -> torch.Tensor:
    """y at the output times ``t`` (T, B, ...), or at output index rows[b] per sample (B, ...)."""
    grid = FixedGrid.plan(integrator, t)
    times, index = grid.distinct_stages(y0.dtype)
    inputs = list(zip(*(x.movedim(1, 0).unbind(0) for x in stage_inputs(times))))
    position = index.tolist()

    def f(n: int, s: int, y: torch.Tensor) -> torch.Tensor:
        return field(y, *inputs[position[n][s]])

    return grid.outputs(integrate(grid.tableau, f, y0, grid.dt.to(y0.dtype)), rows)


def lean_features(integrator, path, batch, z0: torch.Tensor, stage_inputs: StageInputs,
                  field: Callable[..., torch.Tensor], per_step: bool) -> torch.Tensor:
    """A solved body's features by :func:`lean_solve`: z at each series' final index (B, ...),
    or at every observation time (B, T, ...) for per-step tasks."""
    if per_step:
        return step_states(lean_solve(integrator, path.grid_points, z0, stage_inputs, field),
                           path, batch)
    return lean_solve(integrator, path.grid_points, z0, stage_inputs, field,
                      output_index(path, batch))
