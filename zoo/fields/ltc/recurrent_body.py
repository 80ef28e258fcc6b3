"""The sequence loop shared by the LTC repository's recurrent models
(docs/sources.md#ltc-baselines).

A cell maps (input x_k, state, elapsed time Δt_k) to the next state; the body runs it over the
raw steps of the path from a zero state and returns the cell outputs at every step (B, T, N)
for per-step tasks, else at each series' final index (the last step: the repository's sMNIST
setting). Δt_k = t_k − t_{k−1}, with the first gap used for the first step (1 for a single step).
A cell whose class names a ``fast_sequence`` (cell, x, Δt) -> states (T, B, ...) runs it when
``model.implementation`` is ``fast`` (``implementation_used`` records which ran). The configs
are in :mod:`.config`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import torch
from torch import nn

from ..initial import final_states

#: (cell, inputs (B, T, C), elapsed times (T,)) -> states after every step (T, B, *state_shape)
Sequence = Callable[[nn.Module, torch.Tensor, torch.Tensor], torch.Tensor]


class RecurrentCell(nn.Module):
    """One step of a recurrent model: ``forward(x, state, elapsed) -> state``, state (B, *shape)."""

    #: the fused loop over all steps that ``model.implementation: fast`` runs (None: none)
    fast_sequence: ClassVar[Sequence | None] = None

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

    def __init__(self, cell: RecurrentCell, per_step: bool, fast: Sequence | None = None,
                 implementation: str = "generic (no fast path)"):
        super().__init__()
        self.cell = cell
        self.vector_field = cell
        self.per_step = per_step
        self.features = cell.units
        self.fast = fast
        self.implementation_used = implementation

    def sequence(self, x: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
        """Cell outputs after every step (T, B, units)."""
        if self.implementation_used == "fast":
            return self.cell.output(self.fast(self.cell, x, elapsed))
        state = x.new_zeros((x.shape[0], *self.cell.state_shape))
        outputs = []
        for k, dt in enumerate(elapsed):
            state = self.cell(x[:, k], state, dt)
            outputs.append(self.cell.output(state))
        return torch.stack(outputs)

    def forward(self, path, batch) -> torch.Tensor:
        out = self.sequence(path.values, elapsed_times(path.times))
        return out.transpose(0, 1) if self.per_step else final_states(out, path, batch)

    def constrain(self) -> None:
        self.cell.constrain()
