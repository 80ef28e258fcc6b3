"""The mixed memory of ncps's ``CfC(mixed_memory=True)`` (Lechner & Hasani 2020, ODE-LSTM): an
LSTM cell updates (h, c) from the input before each CfC step.

[i, g, f, o] = W_x I + b + W_h h;  c' = σ(f + 1) ⊙ c + tanh(i) ⊙ σ(g);  h' = tanh(c') ⊙ σ(o).
Init as ncps: W_x Glorot-uniform, W_h orthogonal, b U(−0.1, 0.1); W_h has no bias.
"""

from __future__ import annotations

import torch
from torch import nn


class MixedMemory(nn.Module):
    def __init__(self, inputs: int, units: int):
        super().__init__()
        self.input_map = nn.Linear(inputs, 4 * units)
        self.recurrent_map = nn.Linear(units, 4 * units, bias=False)
        nn.init.xavier_uniform_(self.input_map.weight)
        nn.init.uniform_(self.input_map.bias, -0.1, 0.1)
        nn.init.orthogonal_(self.recurrent_map.weight)

    def forward(self, x: torch.Tensor, h: torch.Tensor, c: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        i, g, f, o = (self.input_map(x) + self.recurrent_map(h)).chunk(4, -1)
        c = c * torch.sigmoid(f + 1.0) + torch.tanh(i) * torch.sigmoid(g)
        return torch.tanh(c) * torch.sigmoid(o), c
