"""Lean fixed-grid solve: the control at every stage time in one call, then a loop that
evaluates only the state-dependent part of the field.

dy/dt = field(y, *inputs(t)) where ``inputs`` (control values, derivatives, and any
state-independent function of them) is evaluated once at the distinct stage times
(:meth:`.grid.FixedGrid.distinct_stages`); a :data:`Stepper` then takes torchdiffeq's steps
on :class:`.grid.FixedGrid`: by default :func:`.tableau.integrate` over the field, under
autograd; a field may bring its own (:mod:`zoo.fast.solved.final_tanh`).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ...fields.trajectory import output_index, step_states
from .grid import FixedGrid
from .tableau import Tableau, integrate

#: stage times (M,) -> state-independent inputs, each (B, M, ·)
StageInputs = Callable[[torch.Tensor], tuple[torch.Tensor, ...]]
#: (tableau, step sizes (N,), each stage's input position (N, S), y0, inputs each (B, U, ·))
#: -> the states y_0 … y_N at the grid points
Stepper = Callable[[Tableau, torch.Tensor, torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...]],
                   list[torch.Tensor]]


def field_stepper(field: Callable[..., torch.Tensor]) -> Stepper:
    """The steps of :func:`.tableau.integrate` with dy/dt = field(y, *one stage's inputs)."""
    def step(tableau: Tableau, dt: torch.Tensor, index: torch.Tensor, y0: torch.Tensor,
             inputs: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
        stages = list(zip(*(x.movedim(1, 0).unbind(0) for x in inputs)))
        position = index.tolist()
        return integrate(tableau, lambda n, s, y: field(y, *stages[position[n][s]]), y0, dt)
    return step


def lean_solve(integrator, t: torch.Tensor, y0: torch.Tensor, stage_inputs: StageInputs,
               stepper: Stepper, rows: torch.Tensor | None = None) -> torch.Tensor:
    """y at the output times ``t`` (T, B, ...), or at output index rows[b] per sample (B, ...)."""
    grid = FixedGrid.plan(integrator, t)
    times, index = grid.distinct_stages(y0.dtype)
    states = stepper(grid.tableau, grid.dt.to(y0.dtype), index, y0, stage_inputs(times))
    return grid.outputs(states, rows)


def lean_features(integrator, path, batch, z0: torch.Tensor, stage_inputs: StageInputs,
                  stepper: Stepper, per_step: bool) -> torch.Tensor:
    """A solved body's features by :func:`lean_solve`: z at each series' final index (B, ...),
    or at every observation time (B, T, ...) for per-step tasks."""
    if per_step:
        return step_states(lean_solve(integrator, path.grid_points, z0, stage_inputs, stepper),
                           path, batch)
    return lean_solve(integrator, path.grid_points, z0, stage_inputs, stepper,
                      output_index(path, batch))
