"""The right-hand side of a controlled equation with a matrix-valued field: F(z) · drive(t)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


def matrix_times(F: torch.Tensor, drive: torch.Tensor) -> torch.Tensor:
    """F · drive for F (B, h, C) and drive (B, C): (B, h)."""
    return (F @ drive.unsqueeze(-1)).squeeze(-1)


class MatrixFieldFunc(nn.Module):
    """dz/dt = F(z) · drive(t), F(z) ∈ R^{h×C}; ``drive`` is ``path.derivative`` for a CDE
    (dz = F(z) dX) or ``path.evaluate`` for a log-signature RDE
    (docs/sources.md#nrde)."""

    def __init__(self, field: nn.Module, drive: Callable[[torch.Tensor], torch.Tensor]):
        super().__init__()
        self.field, self.drive = field, drive

    def forward(self, t: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return matrix_times(self.field(z), self.drive(t))
