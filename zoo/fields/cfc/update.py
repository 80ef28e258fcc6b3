"""One CfC layer: the closed-form state update of ncps's ``CfCCell``.

With z = backbone([I, h]) (``backbone_layers`` Linear + activation layers; none: z = [I, h]),
heads f₁, f₂, t_a, t_b (Linear maps of z) and the time input t:

* ``default``: h' = tanh f₁(z) ⊙ (1 − σ(t_a(z) t + t_b(z))) + σ(t_a(z) t + t_b(z)) ⊙ tanh f₂(z)
* ``no_gate``: h' = tanh f₁(z) + σ(t_a(z) t + t_b(z)) ⊙ tanh f₂(z)
* ``minimal`` (ncps ``pure``): h' = A − A ⊙ exp(−t (|w_τ| + |f₁(z)|)) ⊙ f₁(z), the closed-form
  solution of the liquid ODE with a learned A and w_τ.

A wired layer has no backbone and reads through a 0/1 mask on the weights of f₁ and f₂ (its
synapses; t_a, t_b read everything). Init as ncps: every weight matrix Glorot-uniform (``gain``;
ncps: 1), A and w_τ included; biases torch's ``nn.Linear`` default. Dropout follows the second
and later backbone layers only, as in ncps.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn
from torch.nn import functional as F

Mode = Literal["default", "no_gate", "minimal"]


class LeCunTanh(nn.Module):
    """1.7159 tanh(0.666 x) (LeCun et al., Efficient BackProp), ncps's default activation."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return 1.7159 * torch.tanh(0.666 * x)


ACTIVATIONS = {"lecun_tanh": LeCunTanh, "silu": nn.SiLU, "relu": nn.ReLU, "tanh": nn.Tanh,
               "gelu": nn.GELU}


def backbone(inputs: int, units: int, layers: int, activation: str,
             dropout: float) -> nn.Sequential:
    """``layers`` × (Linear, activation), Dropout after the second and later ones."""
    modules: list[nn.Module] = []
    for k in range(layers):
        modules += [nn.Linear(inputs if k == 0 else units, units), ACTIVATIONS[activation]()]
        if k > 0 and dropout > 0:
            modules.append(nn.Dropout(dropout))
    return nn.Sequential(*modules)


class CfCUpdate(nn.Module):
    """h' from (input I (B, C), state h (B, N), time t); ``mask`` (N, C + N) for a wired layer."""

    def __init__(self, inputs: int, units: int, mode: Mode = "default",
                 activation: str = "lecun_tanh", backbone_units: int = 128,
                 backbone_layers: int = 1, backbone_dropout: float = 0.0,
                 mask: torch.Tensor | None = None, gain: float = 1.0):
        super().__init__()
        self.mode = mode
        self.register_buffer("mask", mask)
        self.backbone = backbone(inputs + units, backbone_units, backbone_layers, activation,
                                 backbone_dropout)
        width = backbone_units if backbone_layers else inputs + units
        self.ff1 = nn.Linear(width, units)
        if mode == "minimal":
            self.w_tau = nn.Parameter(torch.zeros(1, units))
            self.A = nn.Parameter(torch.ones(1, units))
        else:
            self.ff2 = nn.Linear(width, units)
            self.time_a = nn.Linear(width, units)
            self.time_b = nn.Linear(width, units)
        for p in self.parameters():
            if p.dim() == 2:
                nn.init.xavier_uniform_(p, gain)

    def synapses(self, head: nn.Linear, z: torch.Tensor) -> torch.Tensor:
        """The head through the layer's synapses only."""
        if self.mask is None:
            return head(z)
        return F.linear(z, head.weight * self.mask, head.bias)

    def heads(self) -> list[nn.Linear]:
        """The heads read from z: f₁ (``minimal``), else f₁, f₂, t_a, t_b."""
        if self.mode == "minimal":
            return [self.ff1]
        return [self.ff1, self.ff2, self.time_a, self.time_b]

    def closed_form(self, heads: list[torch.Tensor], t: float | torch.Tensor) -> torch.Tensor:
        """h' from the heads' values at z (as :meth:`heads` lists them) and the time t."""
        if self.mode == "minimal":
            f1 = heads[0]
            return -self.A * torch.exp(-t * (self.w_tau.abs() + f1.abs())) * f1 + self.A
        f1, f2, time_a, time_b = heads
        f1, f2 = torch.tanh(f1), torch.tanh(f2)
        gate = torch.sigmoid(time_a * t + time_b)
        if self.mode == "no_gate":
            return f1 + gate * f2
        return f1 * (1.0 - gate) + gate * f2

    def forward(self, x: torch.Tensor, h: torch.Tensor, t: float | torch.Tensor) -> torch.Tensor:
        z = self.backbone(torch.cat([x, h], -1))
        heads = self.heads()  # f₁, f₂ read through the synapses; t_a, t_b read all of z
        return self.closed_form([self.synapses(head, z) for head in heads[:2]]
                                + [head(z) for head in heads[2:]], t)

    def output(self, h: torch.Tensor) -> torch.Tensor:
        return h
