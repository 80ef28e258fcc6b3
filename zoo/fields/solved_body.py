"""A field body that is one solve: z(t0), then dz/dt = func(t, z) over ``path.grid_points``."""

from __future__ import annotations

import torch
from torch import nn

from ..build_context import BuildContext
from .body import Body
from .trajectory import output_index, solve_at, step_states


class SolvedBody(Body):
    """Features = z at each series' final index (or at every observation time for per-step tasks).

    Subclasses give :meth:`func` (the right-hand side for one path) and may override :meth:`z0`.
    A subclass with ``has_fast_path`` also splits the field into :meth:`stage_inputs` (the
    state-independent part, evaluated at all stage times in one call) and :meth:`stage_field`
    (the rest), which the fast path of :mod:`zoo.fast.solved` steps; with
    ``has_adaptive_fast_path`` the split also serves its adaptive (``dopri5``) solve.
    """

    has_fast_path = False
    has_adaptive_fast_path = False

    def __init__(self, ctx: BuildContext, initial: nn.Module, vector_field: nn.Module,
                 features: int):
        super().__init__()
        self.integrate = ctx.integrate
        self.per_step = ctx.shape.task.per_step
        self.initial = initial
        self.vector_field = vector_field
        self.features = features

    def func(self, path) -> nn.Module:
        raise NotImplementedError

    def stage_inputs(self, path, times: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """State-independent inputs at the stage times (M,), each (B, M, ·)."""
        raise NotImplementedError

    def stage_field(self, z: torch.Tensor, *inputs: torch.Tensor) -> torch.Tensor:
        """dz/dt from the state and one stage's inputs (each (B, ·))."""
        raise NotImplementedError

    def z0(self, path, batch) -> torch.Tensor:
        return self.initial(path, batch)

    def solved_features(self, solve, func, z0: torch.Tensor, path, batch) -> torch.Tensor:
        """The features from ``solve(func, z0, times)``: z at each series' final index, or at
        every observation for per-step tasks."""
        if self.per_step:
            return step_states(solve_at(solve, func, z0, path), path, batch)
        return solve_at(solve, func, z0, path, output_index(path, batch))

    def generic(self, path, batch) -> torch.Tensor:
        return self.solved_features(self.integrate, self.func(path), self.z0(path, batch), path,
                                    batch)
