"""CDE forms (paper (a) §3.2, Eq. 23-25, App. C.2 Eq. 36-38;
docs/sources.md#fwp-cde-fields).

The vector field reads x(t) and x′(t) = dX/dt(t) and returns dW/dt directly (x′ is consumed
inside the field, so the CDE is integrated as an ODE, as the authors do). Keys and β come from
``input_proj`` → LayerNorm → ``kb_net`` applied to the *key source*; values from the value net
(Linear(u → d), optional LayerNorm + Linear) applied to the *value source*. The query input is
the key source at the global last time. Sources per form and rule (authors' model names):

========================  ==========  ============  ================================
form                      keys from   values from   default retrieval
========================  ==========  ============  ================================
cde, hebb/oja             x           x′            Wᵀ q (``hebb_cde``, ``oja_cde``)
cde, delta                x′          x             W q  (``delta_cde``)
cde_xprime_keys           x′          x             W q  (``hebb_cde_v2``; Wᵀ q = v3)
cde_dx_only               x′          x′            W q  (``*_cde_dx_only``)
========================  ==========  ============  ================================
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from .rules import Rule, Write
from .slow_net import SlowNet, ValueNet

Source = Literal["x", "dx"]


class CDEUpdate(nn.Module):
    """F_θ(W, x, x′) x′ as one function of (x, x′, W)."""

    n_inputs = 2

    def __init__(self, channels: int, d: int, heads: int, rule: Rule, keys_from: Source,
                 values_from: Source, v_layernorm: bool):
        super().__init__()
        self.heads = heads
        self.rule = rule
        self.keys_from, self.values_from = keys_from, values_from
        self.slow = SlowNet(channels, d, heads, with_values=False)
        self.values = ValueNet(channels, d, heads, v_layernorm)

    @property
    def transpose(self) -> bool:
        """Authors' default: read Wᵀ q when keys come from x (memory v⊗k with x′ values)."""
        return self.keys_from == "x"

    @staticmethod
    def inputs(path, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return path.evaluate(t), path.derivative(t)

    def sources(self, x: torch.Tensor, dx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(what the keys read, what the values read) of x and x′."""
        source = {"x": x, "dx": dx}
        return source[self.keys_from], source[self.values_from]

    def write(self, x: torch.Tensor, dx: torch.Tensor) -> Write:
        """The state-independent part at (x, x′): projections, LayerNorm, activations."""
        keys_from, values_from = self.sources(x, dx)
        k, beta = self.slow(keys_from)
        return self.rule.write(k, self.values(values_from), beta)

    def forward(self, x: torch.Tensor, dx: torch.Tensor,
                W: torch.Tensor | None = None) -> torch.Tensor:
        return self.rule.term(self.write(x, dx), W)

    def query_input(self, path, t: torch.Tensor) -> torch.Tensor:
        """The embedded query input at time t: the query reads the key source."""
        return self.slow.embed(path.evaluate(t) if self.keys_from == "x" else path.derivative(t))

    def readout_input(self, path, t: torch.Tensor, W: torch.Tensor):
        """(memory to query, embedded query input)."""
        return W, self.query_input(path, t)
