"""Initial-state networks shared by the field families."""

from __future__ import annotations

import torch
from torch import nn


class StaticNetwork(nn.Module):
    """Initial state from static features (Kidger et al. sepsis): Linear(S, hidden), ReLU, Linear."""

    def __init__(self, static_channels: int, hidden: int, out: int):
        super().__init__()
        if static_channels == 0:
            raise ValueError("initial kind 'static' needs a dataset with static features")
        self.net = nn.Sequential(nn.Linear(static_channels, hidden), nn.ReLU(),
                                 nn.Linear(hidden, out))

    def forward(self, static: torch.Tensor) -> torch.Tensor:
        return self.net(static)


def gather_final(states: torch.Tensor, final_index: torch.Tensor) -> torch.Tensor:
    """Pick each sample's state at its final index from solver output of shape (T, B, ...)."""
    return states[final_index, torch.arange(states.shape[1], device=states.device)]
