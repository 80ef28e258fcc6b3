"""The ODE right-hand side f(t, y) handed to the solver, for any update module of this package."""

from __future__ import annotations

import torch
from torch import nn

from .fast_weight import as_matrices, flatten


class LearningRuleField(nn.Module):
    """f(t, y) = flatten(F_θ(W, inputs(path, t))) with W the matrices of the flat state y."""

    def __init__(self, update: nn.Module, path):
        super().__init__()
        self.update = update
        self.path = path

    def forward(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        W = as_matrices(y, self.update.heads)
        return flatten(self.update(*self.update.inputs(self.path, t), W=W))
