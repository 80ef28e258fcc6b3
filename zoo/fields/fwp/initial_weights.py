"""Initial fast weights W(t0) (paper (a) §3 and §4;
docs/sources.md#fwp-initial-state and #fwp-diff-initial-state).

``model.initial.kind``:

* ``first_update`` (authors' default for Speech/UEA): W(t0) = the update term at t0 without
  its W-dependent part, F_θ(None, X(t0)[, X′(t0)]); e.g. Delta: σ(β0) tanh(v0) ⊗ softmax(k0).
* ``first_observation`` (EigenWorms / log-signature paths): W(t0) = F_θ(None, p) with
  p = Linear(raw channels → path channels)(x0), x0 the path's ``first_observation``.
* ``static`` (Sepsis ``InitialValueNetwork``): s → Linear(S → hidden) → ReLU →
  Linear(hidden → H(2h+1)) → per head (k, v, β) → W0 = [σ(β) tanh(v)] ⊗ softmax(k), whatever
  the rule.
* ``zeros``: W(t0) = 0.

Except with ``first_observation`` the authors' models also build ``initial_network``
Linear(u → d) and never use it; it is kept here so parameter counts match theirs.
A stacked model starts its upper layers at 0.
"""

from __future__ import annotations

import torch
from torch import nn

from ..initial_state import StaticNetwork
from ..trajectory import first_observation
from .fast_weight import split_heads
from .rules import Hebb


class InitialFastWeight(nn.Module):
    def __init__(self, kind: str, raw_channels: int, channels: int, d: int, heads: int,
                 static_channels: int = 0, static_hidden: int = 256):
        super().__init__()
        self.kind, self.heads, self.h = kind, heads, d // heads
        if kind == "first_observation":
            self.initial_network = nn.Linear(raw_channels, channels)
        else:
            self.initial_network = nn.Linear(channels, d)  # unused (see module docstring)
        if kind == "static":
            self.static = StaticNetwork(static_channels, static_hidden, heads * (2 * self.h + 1))

    def forward(self, update: nn.Module, path, batch) -> torch.Tensor:
        """W(t0) as (B, update.heads, h, h)."""
        if self.kind == "first_update":
            return update(*update.inputs(path, path.interval[0]))
        if self.kind == "first_observation":
            p = self.initial_network(first_observation(path))
            return update(*(p,) * update.n_inputs)
        x0 = path.evaluate(path.interval[0])
        shape = (x0.shape[0], update.heads, self.h, self.h)
        if self.kind == "zeros":
            return x0.new_zeros(shape)
        hebb = Hebb()
        k, v, beta = split_heads(self.static(batch.static), self.heads).split(
            (self.h, self.h, 1), -1)
        w0 = hebb.term(hebb.write(k, v, beta), None)
        return torch.cat([w0, w0.new_zeros(shape)[:, self.heads:]], 1)
