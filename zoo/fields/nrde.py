"""Neural RDE of Morrill et al. (2021), the EigenWorms baseline of paper a
(docs/sources.md#nrde).

dh/dt = F(h) · L(t), where L(t) is the log-signature of the window containing t (control kind
``logsig``: its path's ``evaluate(t)`` returns that piece) and F(h) ∈ R^{hidden × logsig_dim}.
h(t0) = Linear(initial_dim → hidden)(x0), x0 the raw first observation (``first_observation``
of the path; initial_dim = the dataset's channels, 7 on EigenWorms). The features are h at each
series' final window.

F as in the authors' code (docs/sources.md#fwp-diff-nrde-field):
Linear(hidden→hh), (layers − 1) × [ReLU, Linear(hh→hh)], Tanh, Linear(hh → hidden·logsig_dim).
* ``share_hidden_weights: true`` (default, code): the repeated Linear(hh→hh) is **one** module
  (the code builds the list by multiplication); the paper's 65 K parameters (hidden 32, hh 64,
  layers 3, depth 2) count it once. ``false`` gives independent layers.
* ``tanh_position: before_out`` (default, code): tanh sits before the last linear, F has no
  final tanh; ``final`` applies tanh after it instead, as in the NCDE's FinalTanh.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from .matrix_func import MatrixFieldFunc, matrix_times
from .solved_body import SolvedBody


class NRDEField(nn.Module):
    """F(h) ∈ R^{hidden × channels} of the NRDE code."""

    def __init__(self, channels: int, hidden: int, hidden_hidden: int, layers: int,
                 share_hidden_weights: bool, tanh_position: Literal["before_out", "final"]):
        super().__init__()
        self.channels, self.hidden, self.tanh_position = channels, hidden, tanh_position
        self.linear_in = nn.Linear(hidden, hidden_hidden)
        if share_hidden_weights:
            shared = nn.Linear(hidden_hidden, hidden_hidden)
            repeated = [shared] * (layers - 1)
        else:
            repeated = [nn.Linear(hidden_hidden, hidden_hidden) for _ in range(layers - 1)]
        self.linears = nn.ModuleList(repeated)
        self.linear_out = nn.Linear(hidden_hidden, hidden * channels)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        z = self.linear_in(h)
        for linear in self.linears:
            z = linear(torch.relu(z))
        if self.tanh_position == "before_out":
            z = self.linear_out(torch.tanh(z))
        else:
            z = torch.tanh(self.linear_out(z))
        return z.view(*h.shape[:-1], self.hidden, self.channels)


class NeuralRDE(SolvedBody):
    """Fast path: the log-signature pieces at every stage time in one call, then F(h) · L."""

    has_fast_path = True

    def func(self, path) -> nn.Module:
        return MatrixFieldFunc(self.vector_field, path.evaluate)

    def stage_inputs(self, path, times):
        return (path.evaluate(times),)

    def stage_field(self, h, piece):
        return matrix_times(self.vector_field(h), piece)
