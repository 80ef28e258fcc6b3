"""The sequence loop shared by the LTC repository's recurrent models
(docs/sources.md#ltc-baselines).

A cell maps (input x_k, state, elapsed time Δt_k) to the next state; the body runs it over the
raw steps of the path from a zero state and returns the cell outputs at every step (B, T, N)
for per-step tasks, else at each series' final index (the last step: the repository's sMNIST
setting). Δt_k = t_k − t_{k−1}, with the first gap used for the first step (1 for a single step).
The fast paths of the cells (:mod:`zoo.fast.ltc`) replace the step loop of :meth:`RecurrentBody.
sequence` with one fused loop over all steps. The configs are in :mod:`.config`.
"""

from __future__ import annotations

import torch
from torch import nn

from ..body import Body
from ..trajectory import final_states


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


class RecurrentBody(Body):
    """Runs a :class:`RecurrentCell` over the raw steps of a path (BPTT through every step)."""

    def __init__(self, cell: RecurrentCell, per_step: bool):
        super().__init__()
        self.cell = cell
        self.vector_field = cell
        self.per_step = per_step
        self.features = cell.units

    def sequence(self, x: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
        """Cell outputs after every step (T, B, units)."""
        state = x.new_zeros((x.shape[0], *self.cell.state_shape))
        outputs = []
        for k, dt in enumerate(elapsed):
            state = self.cell(x[:, k], state, dt)
            outputs.append(self.cell.output(state))
        return torch.stack(outputs)

    def step_features(self, out: torch.Tensor, path, batch) -> torch.Tensor:
        """The features from the outputs after every step (T, B, units): all of them (B, T,
        units) for per-step tasks, else each series' output at its final index."""
        return out.transpose(0, 1) if self.per_step else final_states(out, path, batch)

    def generic(self, path, batch) -> torch.Tensor:
        return self.step_features(self.sequence(path.values, elapsed_times(path.times)), path,
                                  batch)

    def constrain(self) -> None:
        self.cell.constrain()
