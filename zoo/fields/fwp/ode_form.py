"""Direct-NODE form (paper (a) §3.1, Eq. 18-21): dW/dt = F_θ(W, x(t))
(docs/sources.md#fwp-ode-fields).

The slow net reads x(t) only; it ignores t otherwise and there is no multiplication by dX. The
query input is x at the global last time (docs/sources.md#fwp-readout) and retrieval is W q. Fed
with a log-signature control's pieces this is the authors' EigenWorms "RDE" model
(docs/sources.md#fwp-eigenworms-model).
"""

from __future__ import annotations

import torch
from torch import nn

from .rules import Rule, Write
from .slow_net import SlowNet


class ODEUpdate(nn.Module):
    """F_θ(W, x): slow net (input_proj, LayerNorm, kvb_net) + learning rule."""

    n_inputs = 1
    transpose = False

    def __init__(self, channels: int | None, d: int, heads: int, rule: Rule):
        super().__init__()
        self.heads = heads
        self.rule = rule
        self.slow = SlowNet(channels, d, heads, with_values=True)

    @staticmethod
    def inputs(path, t: torch.Tensor) -> tuple[torch.Tensor]:
        return (path.evaluate(t),)

    def write(self, x: torch.Tensor) -> Write:
        """The state-independent part at x: projections, LayerNorm, activations."""
        return self.rule.write(*self.slow(x))

    def forward(self, x: torch.Tensor, W: torch.Tensor | None = None) -> torch.Tensor:
        return self.rule.term(self.write(x), W)

    def query_input(self, path, t: torch.Tensor) -> torch.Tensor:
        """The embedded query input at time t."""
        return self.slow.embed(path.evaluate(t))

    def readout_input(self, path, t: torch.Tensor, W: torch.Tensor):
        """(memory to query, embedded query input) at time t."""
        return W, self.query_input(path, t)
