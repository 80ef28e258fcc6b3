"""The path classes of the ``logsig`` and ``rectilinear`` controls (torchcde interpolations),
kept apart from their configs so that validating a spec imports no torch."""

from __future__ import annotations

import torch
import torchcde


class RectilinearPath(torchcde.LinearInterpolation):
    """torchcde's linear interpolation of the rectilinear knots, with the observation index map."""

    def map_index(self, index: torch.Tensor) -> torch.Tensor:
        """Grid index of observation ``index``: every observation after the first adds two knots."""
        return 2 * index


class LogSignaturePath(torchcde.InterpolationBase):
    """Piecewise-constant log-signature pieces on the grid 0, 1, …, L+1."""

    def __init__(self, first_observation: torch.Tensor, logsig: torch.Tensor, step: int,
                 window: int):
        super().__init__()
        self.register_buffer("first_observation", first_observation)
        self.register_buffer("_logsig", logsig)
        self.step, self.window = step, window

    @property
    def pieces(self) -> int:
        return self._logsig.shape[1]

    @property
    def grid_points(self) -> torch.Tensor:
        return torch.arange(self.pieces + 2, dtype=self._logsig.dtype, device=self._logsig.device)

    @property
    def interval(self) -> torch.Tensor:
        return self.grid_points[[0, -1]]

    def evaluate(self, t) -> torch.Tensor:
        """Piece i for t ∈ [i, i+1), the last piece from L−1 on (bisect on knots 0..L−1)."""
        t = torch.as_tensor(t, device=self._logsig.device).detach()
        return self._logsig[:, t.floor().long().clamp(0, self.pieces - 1)]

    def derivative(self, t) -> torch.Tensor:
        return self.evaluate(t)

    def map_index(self, index: torch.Tensor) -> torch.Tensor:
        """Grid index where the first window that reaches observation ``index`` ends: window j
        ends at observation j·s + w − 1 and at grid point j + 1, the last one at L+1."""
        first = -torch.div(self.window - 1 - index, self.step, rounding_mode="floor")
        end = first.clamp(min=0) + 1
        return torch.where(end >= self.pieces, self.pieces + 1, end)
