"""Neural ODE RNN baseline of the LTC repository
(``ctrnn_model.py:104-193``, ``NODE``; docs/sources.md#ltc-baselines).

dh/dt = tanh(W [I, h] + b), integrated inside each input step by the ``unfold`` solver (the
repository: classic RK4, 6 steps of 0.1). ``clip`` bounds the state after every solver step
(±10 for the traffic task).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ...dense import glorot_linear
from .recurrent_body import RecurrentCell
from .membrane import clipper

if TYPE_CHECKING:  # the solver comes in built; fields import no solver module
    from ...solvers.unfold import UnfoldConfig


class NODECell(RecurrentCell):

    def __init__(self, inputs: int, units: int, solver: UnfoldConfig, clip: float | None):
        super().__init__(units)
        self.solver = solver
        self.clip, self.project = clip, clipper(clip)
        self.step = glorot_linear(inputs + units, units)

    def forward(self, x: torch.Tensor, h: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
        return self.solver.advance(lambda y: torch.tanh(self.step(torch.cat([x, y], -1))), h,
                                   self.project)
