"""Sigmoid synapses of the LTC cell (docs/sources.md#ltc-tf-cell and #ltc-ncps-cell).

Presynaptic i drives postsynaptic j through s_ij(v) = σ(σ_ij (v_i − μ_ij)) with conductance
a_ij = W_ij s_ij(v) and reversal potential E_ij. A layer of synapses returns the two sums the
LTC update needs: Σ_i a_ij E_ij and Σ_i a_ij.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


def identity(w: torch.Tensor) -> torch.Tensor:
    return w


def uniform(shape: tuple[int, ...], bounds: tuple[float, float]) -> nn.Parameter:
    """A parameter drawn from U(lo, hi) (a constant when lo == hi)."""
    lo, hi = bounds
    return nn.Parameter(torch.rand(shape) * (hi - lo) + lo)


class SigmoidSynapses(nn.Module):
    """All-to-all sigmoid synapses from ``pre`` to ``post`` neurons; E is (pre, post)."""

    def __init__(self, erev: torch.Tensor, ranges: dict[str, tuple[float, float]]):
        super().__init__()
        shape = tuple(erev.shape)
        self.mu = uniform(shape, ranges["mu"])
        self.sigma = uniform(shape, ranges["sigma"])
        self.w = uniform(shape, ranges["w"])
        self.erev = nn.Parameter(erev.clone().float())

    def conductance(self, v: torch.Tensor, positive: Callable = identity) -> torch.Tensor:
        """a_ij = W⁺_ij σ(σ_ij (v_i − μ_ij)), shape (B, pre, post); W⁺ = ``positive(W)``."""
        return positive(self.w) * torch.sigmoid(self.sigma * (v.unsqueeze(-1) - self.mu))

    def forward(self, v: torch.Tensor, positive: Callable = identity
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """(Σ_i a_ij E_ij, Σ_i a_ij), each (B, post)."""
        a = self.conductance(v, positive)
        return (a * self.erev).sum(-2), a.sum(-2)
