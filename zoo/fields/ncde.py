"""Neural CDE of Kidger et al. (2020) with the ``FinalTanh`` vector field.

dz = f_θ(z) dX(t), integrated as the ODE dz/dt = f_θ(z) · dX/dt with
f_θ(z) = tanh(L_out(ReLU(... ReLU(L_in(z)) ...))) reshaped to (hidden × channels),
L_in: h→hh, (layers−1) × Linear(hh→hh), L_out: hh→h·u.
z(t0) = Linear(u→h)(X(t0)), or a network of the static features (sepsis).
The features are z at each series' final index (or at every step for per-step tasks).
Fast path (:func:`zoo.fast.lean.lean_solve`): dX/dt at every stage time in one call, then a loop
over f_θ(z) · dX/dt only.
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import Field, PositiveInt
from torch import nn

from ..build_context import BuildContext
from ..components import FieldConfig
from ..fast.choice import implementation
from ..fast.lean import lean_solve
from .initial import StaticNetwork, final_states, first_observation, output_index, step_states
from .matrix_func import MatrixFieldFunc, matrix_times_elementwise


class FinalTanh(nn.Module):
    """f_θ(z) ∈ R^{h×u}: an MLP with ReLU hidden layers and a final tanh."""

    def __init__(self, channels: int, hidden: int, hidden_hidden: int, layers: int):
        super().__init__()
        self.channels, self.hidden = channels, hidden
        self.linear_in = nn.Linear(hidden, hidden_hidden)
        self.linears = nn.ModuleList(nn.Linear(hidden_hidden, hidden_hidden)
                                     for _ in range(layers - 1))
        self.linear_out = nn.Linear(hidden_hidden, channels * hidden)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        z = torch.relu(self.linear_in(z))
        for linear in self.linears:
            z = torch.relu(linear(z))
        return torch.tanh(self.linear_out(z)).view(*z.shape[:-1], self.hidden, self.channels)


class NeuralCDE(nn.Module):
    def __init__(self, cfg: NCDEConfig, ctx: BuildContext):
        super().__init__()
        u = ctx.input_channels
        self.integrate = ctx.integrate
        self.per_step = ctx.shape.task.per_step
        self.initial_kind = ctx.initial.kind
        if self.initial_kind == "static":
            self.initial = StaticNetwork(ctx.shape.static_channels, ctx.initial.hidden, cfg.hidden)
        else:
            self.initial = nn.Linear(ctx.shape.input_channels, cfg.hidden)
        self.vector_field = FinalTanh(u, cfg.hidden, cfg.hidden_hidden, cfg.layers)
        self.features = cfg.hidden
        self.implementation_used = implementation(ctx)

    def forward(self, path, batch) -> torch.Tensor:
        if self.initial_kind == "static":
            z0 = self.initial(batch.static)
        else:
            z0 = self.initial(first_observation(path))
        if self.implementation_used == "fast":
            rows = None if self.per_step else output_index(path, batch)
            zs = lean_solve(self.integrate, path.grid_points, z0, lambda t: (path.derivative(t),),
                            lambda z, dx: matrix_times_elementwise(self.vector_field(z), dx), rows)
            return step_states(zs, path, batch) if self.per_step else zs
        zs = self.integrate(MatrixFieldFunc(self.vector_field, path.derivative), z0,
                            path.grid_points)
        return step_states(zs, path, batch) if self.per_step else final_states(zs, path, batch)


class NCDEConfig(FieldConfig):
    """Neural CDE with Kidger's FinalTanh vector field."""

    kind: Literal["ncde"] = "ncde"
    hidden: PositiveInt = Field(32, description="state size h")
    hidden_hidden: PositiveInt = Field(32, description="width hh of the vector-field MLP")
    layers: PositiveInt = Field(3, description="number of hidden layers of the MLP")

    requires = frozenset({"evaluate", "derivative"})
    initials = ("first_observation", "static")

    def build(self, ctx: BuildContext) -> NeuralCDE:
        return NeuralCDE(self, ctx)
