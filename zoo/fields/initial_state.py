"""The initial state z(t0) of a field body, chosen by ``model.initial.kind``.

* ``zeros``: z(t0) = 0 (Kidger's GRU-ODE/ODE-RNN with ``initial=True``; paper c,
  docs/sources.md#jac-training);
* ``first_observation``: z(t0) = Linear(X(t0)) (NCDE/NRDE, docs/sources.md#ncde-finaltanh and
  #nrde);
* ``static``: z(t0) = Linear(ReLU(Linear(static))) (Kidger's sepsis network,
  docs/sources.md#ncde-finaltanh).
"""

from __future__ import annotations

import torch
from torch import nn

from ..build_context import BuildContext
from .trajectory import first_observation


class StaticNetwork(nn.Module):
    """Initial state from static features (Kidger et al. sepsis): Linear(S, hidden), ReLU,
    Linear."""

    def __init__(self, static_channels: int, hidden: int, out: int):
        super().__init__()
        if static_channels == 0:
            raise ValueError("initial kind 'static' needs a dataset with static features")
        self.net = nn.Sequential(nn.Linear(static_channels, hidden), nn.ReLU(),
                                 nn.Linear(hidden, out))

    def forward(self, static: torch.Tensor) -> torch.Tensor:
        return self.net(static)


class InitialState(nn.Module):
    """z(t0) ∈ R^size; X(t0) is the raw first observation (the dataset's input channels)."""

    def __init__(self, ctx: BuildContext, size: int):
        super().__init__()
        self.kind, self.size = ctx.initial.kind, size
        if self.kind == "first_observation":
            self.net = nn.Linear(ctx.shape.input_channels, size)
        elif self.kind == "static":
            self.net = StaticNetwork(ctx.shape.static_channels, ctx.initial.hidden, size)
        elif self.kind != "zeros":
            raise ValueError(f"initial state kind '{self.kind}' is not supported here")

    def forward(self, path, batch) -> torch.Tensor:
        if self.kind == "first_observation":
            return self.net(first_observation(path))
        if self.kind == "static":
            return self.net(batch.static)
        return batch.coeffs.new_zeros(len(batch.final_index), self.size)
