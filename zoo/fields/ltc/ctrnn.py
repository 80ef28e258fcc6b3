"""Continuous-time RNN baseline of the LTC repository
(``ctrnn_model.py:5-101``, ``CTRNN``; docs/sources.md#ltc-baselines).

dh/dt = −h/τ + tanh(W [I, h] + b) with τ = 1 fixed, integrated inside each input step by the
``unfold`` solver (the repository: explicit Euler, 6 steps of 0.1). With ``global_feedback:
false`` the drive tanh(W I + b) is computed once from the input alone. ``clip`` bounds the state
after every solver step (the repository's ``cell_clip``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ...dense import glorot_linear
from .recurrent_body import RecurrentCell
from .membrane import clipper

if TYPE_CHECKING:  # the solver comes in built; fields import no solver module
    from ...solvers.unfold import UnfoldConfig


class CTRNNCell(RecurrentCell):

    def __init__(self, inputs: int, units: int, solver: UnfoldConfig, tau: float,
                 global_feedback: bool, clip: float | None):
        super().__init__(units)
        self.solver, self.tau, self.global_feedback = solver, tau, global_feedback
        self.clip, self.project = clip, clipper(clip)
        self.step = glorot_linear(inputs + units if global_feedback else inputs, units)

    def forward(self, x: torch.Tensor, h: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
        if self.global_feedback:
            def f(y):
                return -y / self.tau + torch.tanh(self.step(torch.cat([x, y], -1)))
        else:
            drive = torch.tanh(self.step(x))

            def f(y):
                return -y / self.tau + drive
        return self.solver.advance(f, h, self.project)
