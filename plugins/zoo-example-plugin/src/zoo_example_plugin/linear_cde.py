"""A linear neural CDE: dz = Σ_i (A_i z + b_i) dX^i, z(t0) = W X(t0)."""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field, PositiveInt
from torch import nn

from zoo.plugin import FieldConfig, final_states, first_observation


class LinearVectorField(nn.Module):
    def __init__(self, channels: int, hidden: int):
        super().__init__()
        self.A = nn.Parameter(torch.randn(channels, hidden, hidden) * 0.1 / hidden**0.5)
        self.b = nn.Parameter(torch.zeros(channels, hidden))

    def forward(self, z: torch.Tensor, dx: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bi,ihk,bk->bh", dx, self.A, z) + dx @ self.b


class _Func(nn.Module):
    def __init__(self, field: LinearVectorField, path):
        super().__init__()
        self.field, self.path = field, path

    def forward(self, t, z):
        return self.field(z, self.path.derivative(t))


class LinearCDE(nn.Module):
    def __init__(self, cfg: LinearCDEConfig, ctx):
        super().__init__()
        self.integrate = ctx.integrate
        self.initial = nn.Linear(ctx.input_channels, cfg.hidden)
        self.vector_field = LinearVectorField(ctx.input_channels, cfg.hidden)
        self.features = cfg.hidden

    def forward(self, path, batch):
        z0 = self.initial(first_observation(path))
        zs = self.integrate(_Func(self.vector_field, path), z0, path.grid_points)
        return torch.tanh(final_states(zs, path, batch))


class LinearCDEConfig(FieldConfig):
    """Linear CDE dz = Σ_i (A_i z + b_i) dX^i (example plugin)."""

    kind: Literal["linear_cde"] = "linear_cde"
    hidden: PositiveInt = Field(8, description="state size")

    requires = frozenset({"evaluate", "derivative"})

    def build(self, ctx) -> LinearCDE:
        return LinearCDE(self, ctx)
