"""The sequence loop shared by the LTC repository's recurrent models (facts §5.4).

A cell maps (input x_k, state, elapsed time Δt_k) to the next state; the body runs it over the
raw steps of the path from a zero state and returns the cell outputs at every step (B, T, N)
for per-step tasks, else at each series' final index (the last step: the repository's sMNIST
setting). Δt_k = t_k − t_{k−1}, with the first gap used for the first step (1 for a single step).
"""

from __future__ import annotations

import torch
from pydantic import Field, PositiveInt
from torch import nn

from ...build_context import BuildContext
from ...components import FieldConfig
from ..initial import final_states


class RecurrentCell(nn.Module):
    """One step of a recurrent model: ``forward(x, state, elapsed) -> state``, state (B, *shape)."""

    def __init__(self, units: int, state_shape: tuple[int, ...] | None = None):
        super().__init__()
        self.units = units
        self.state_shape = state_shape or (units,)

    def output(self, state: torch.Tensor) -> torch.Tensor:
        """The step's output (B, units); the state itself unless the cell says otherwise."""
        return state

    def constrain(self) -> None:
        """Project parameters into their feasible set after an optimiser step (none by default)."""


def elapsed_times(times: torch.Tensor) -> torch.Tensor:
    """Δt_k for every step k of the grid ``times`` (T,)."""
    if len(times) < 2:
        return torch.ones_like(times)
    return torch.diff(times, prepend=(2 * times[0] - times[1]).reshape(1))


class RecurrentBody(nn.Module):
    """Runs a :class:`RecurrentCell` over the raw steps of a path (BPTT through every step)."""

    def __init__(self, cell: RecurrentCell, per_step: bool):
        super().__init__()
        self.cell = cell
        self.vector_field = cell
        self.per_step = per_step
        self.features = cell.units

    def forward(self, path, batch) -> torch.Tensor:
        x = path.values
        state = x.new_zeros((x.shape[0], *self.cell.state_shape))
        outputs = []
        for k, dt in enumerate(elapsed_times(path.times)):
            state = self.cell(x[:, k], state, dt)
            outputs.append(self.cell.output(state))
        out = torch.stack(outputs)
        return out.transpose(0, 1) if self.per_step else final_states(out, path, batch)

    def constrain(self) -> None:
        self.cell.constrain()


class RecurrentFieldConfig(FieldConfig):
    """Base of the recurrent fields: reads raw steps, zero initial state, ``units`` neurons."""

    units: PositiveInt = Field(32, description="number of units N")

    requires = frozenset({"steps"})
    initials = ("zeros",)
    solvers = ("unfold",)
    example_solver = {"kind": "unfold"}

    def make_cell(self, ctx: BuildContext) -> RecurrentCell:
        raise NotImplementedError

    def build(self, ctx: BuildContext) -> RecurrentBody:
        return RecurrentBody(self.make_cell(ctx), ctx.shape.task.per_step)
