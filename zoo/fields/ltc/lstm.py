"""LSTM baseline of the LTC repository (docs/sources.md#ltc-baselines): TensorFlow's ``LSTMCell``.

[i, j, f, o] = [I, h] W + b (Glorot-uniform W, b = 0); c ← σ(f + forget_bias) c + σ(i) tanh(j);
h ← σ(o) tanh(c), with TF's constant ``forget_bias`` = 1. State (B, 2, N) holds (h, c); output h.
The update is discrete: the solver section does not enter, and a spec may leave it out.
"""

from __future__ import annotations

import torch

from ...dense import glorot_linear
from .recurrent_body import RecurrentCell


class LSTMCell(RecurrentCell):

    def __init__(self, inputs: int, units: int, forget_bias: float):
        super().__init__(units, (2, units))
        self.forget_bias = forget_bias
        self.gates = glorot_linear(inputs + units, 4 * units)

    def forward(self, x: torch.Tensor, state: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
        h, c = state.unbind(-2)
        return self.update(self.gates(torch.cat([x, h], -1)), c)

    def update(self, gates: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        """The new state (h, c) from the gate pre-activations [i, j, f, o] and the cell c."""
        i, j, f, o = gates.chunk(4, -1)
        c = torch.sigmoid(f + self.forget_bias) * c + torch.sigmoid(i) * torch.tanh(j)
        h = torch.sigmoid(o) * torch.tanh(c)
        return torch.stack([h, c], -2)

    def output(self, state: torch.Tensor) -> torch.Tensor:
        return state[..., 0, :]
