"""Transformer feed-forward block as the FWP authors use it
(docs/sources.md#fwp-feedforward).

Pre-LayerNorm residual: y ← y + Lin2(ReLU(Lin1(LN(y)))), Lin1: d → f, Lin2: f → d; dropout 0
in every reported run (so none is built); no final LayerNorm.
"""

from __future__ import annotations

import torch
from torch import nn


class FeedForward(nn.Module):
    def __init__(self, d: int, d_ff: int):
        super().__init__()
        self.layer_norm = nn.LayerNorm(d)
        self.net = nn.Sequential(nn.Linear(d, d_ff), nn.ReLU(), nn.Linear(d_ff, d))

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        return y + self.net(self.layer_norm(y))
