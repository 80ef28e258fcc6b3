"""Neural CDE of Kidger et al. (2020) with the ``FinalTanh`` vector field.

dz = f_θ(z) dX(t), integrated as the ODE dz/dt = f_θ(z) · dX/dt with
f_θ(z) = tanh(L_out(ReLU(... ReLU(L_in(z)) ...))) reshaped to (hidden × channels),
L_in: h→hh, (layers−1) × Linear(hh→hh), L_out: hh→h·u.
z(t0) = Linear(u→h)(X(t0)), or a network of the static features (sepsis).
The features are z at each series' final index (or at every step for per-step tasks).
The body is :class:`zoo.fields.cde_body.CDEBody` (with its fast path).
"""

from __future__ import annotations

import torch
from torch import nn


class FinalTanh(nn.Module):
    """f_θ(z) ∈ R^{h×u}: an MLP with ReLU hidden layers and a final tanh."""

    def __init__(self, channels: int, hidden: int, hidden_hidden: int, layers: int):
        super().__init__()
        self.channels, self.hidden = channels, hidden
        self.linear_in = nn.Linear(hidden, hidden_hidden)
        self.linears = nn.ModuleList(nn.Linear(hidden_hidden, hidden_hidden)
                                     for _ in range(layers - 1))
        self.linear_out = nn.Linear(hidden_hidden, channels * hidden)

    def before_tanh(self, z: torch.Tensor) -> torch.Tensor:
        """The MLP's output before its final tanh, (…, h, u)."""
        z = torch.relu(self.linear_in(z))
        for linear in self.linears:
            z = torch.relu(linear(z))
        return self.linear_out(z).view(*z.shape[:-1], self.hidden, self.channels)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.before_tanh(z))
