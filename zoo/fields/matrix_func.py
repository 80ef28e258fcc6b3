"""The right-hand side of a controlled equation with a matrix-valued field: F(z) · drive(t)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class MatrixFieldFunc(nn.Module):
    """dz/dt = F(z) · drive(t), F(z) ∈ R^{h×C}; ``drive`` is ``path.derivative`` for a CDE
    (dz = F(z) dX) or ``path.evaluate`` for a log-signature RDE (facts §2.4)."""

    def __init__(self, field: nn.Module, drive: Callable[[torch.Tensor], torch.Tensor]):
        super().__init__()
        self.field, self.drive = field, drive

    def forward(self, t: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return (self.field(z) @ self.drive(t).unsqueeze(-1)).squeeze(-1)
