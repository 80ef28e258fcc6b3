"""Two coupled FWP layers (paper (a) App. C.1, Eq. 33-35;
the authors' ``multi-logsig-ode-fwp``, docs/sources.md#fwp-two-layer).

State [W1, W2] (stored as 2H heads). Layer 1 is the direct-NODE update on x(t); its output
x(t, 1) = FF_mid(W1 · softmax(Linear_mid(LN(Linear_in(x(t)))))) (no out_proj) is the control of
layer 2, whose slow net has no input projection (LayerNorm → kvb_net on the d-dim signal).
The read-out queries W2 with LN2(x(T, 1)) and continues with out_proj and the FF block.
W(t0) = [update of layer 1 at t0, 0] (the authors' W2(t0) = 0).
"""

from __future__ import annotations

import torch
from torch import nn

from .feedforward import FeedForward
from .ode_form import ODEUpdate
from .query_readout import FastQuery
from .rules import Rule


class TwoLayerUpdate(nn.Module):
    n_inputs = 1
    transpose = False

    def __init__(self, channels: int | None, d: int, heads: int, d_ff: int, rule: Rule):
        super().__init__()
        self.layer_heads = heads
        self.heads = 2 * heads
        self.layer1 = ODEUpdate(channels, d, heads, rule)
        self.layer2 = ODEUpdate(None, d, heads, rule)
        self.mid_query = FastQuery(d, heads)
        self.mid_ff_block = FeedForward(d, d_ff)

    inputs = staticmethod(ODEUpdate.inputs)

    def hidden(self, x: torch.Tensor, W1: torch.Tensor) -> torch.Tensor:
        """x(t, 1), the output of layer 1 (Eq. 34)."""
        return self.mid_ff_block(self.mid_query(W1, self.layer1.slow.embed(x)))

    def forward(self, x: torch.Tensor, W: torch.Tensor | None = None) -> torch.Tensor:
        if W is None:
            dW1 = self.layer1(x)
            return torch.cat([dW1, torch.zeros_like(dW1)], -3)
        W1, W2 = W.split(self.layer_heads, -3)
        return torch.cat([self.layer1(x, W1), self.layer2(self.hidden(x, W1), W2)], -3)

    def readout_input(self, path, t: torch.Tensor, W: torch.Tensor):
        W1, W2 = W.split(self.layer_heads, -3)
        return W2, self.layer2.slow.embed(self.hidden(path.evaluate(t), W1))
