"""A field body that is one solve: z(t0), then dz/dt = func(t, z) over ``path.grid_points``."""

from __future__ import annotations

import torch
from torch import nn

from ..build_context import BuildContext
from .initial import final_states, step_states


class SolvedBody(nn.Module):
    """Features = z at each series' final index (or at every observation time for per-step tasks).

    Subclasses give :meth:`func` (the right-hand side for one path) and may override :meth:`z0`.
    """

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

    def z0(self, path, batch) -> torch.Tensor:
        return self.initial(path, batch)

    def forward(self, path, batch) -> torch.Tensor:
        zs = self.integrate(self.func(path), self.z0(path, batch), path.grid_points)
        return step_states(zs, path, batch) if self.per_step else final_states(zs, path, batch)
