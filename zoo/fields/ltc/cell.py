"""The LTC cell shared by the TF and ncps parameterisations
(docs/sources.md#ltc-tf-cell and #ltc-ncps-cell).

One input step: affine input mapping I ← I ⊙ w_in + b_in; sensory sums Σ a^s E^s and Σ a^s
computed once from I; then the state is unfolded with the spec's solver (:mod:`.unfold`). The
output is the whole state (a Dense readout is applied outside the cell). Subclasses choose the
initialisation, the positivity of W, cm, gl (``positive``), the fused step h and ε.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from .recurrent_body import RecurrentCell
from .synapse import SigmoidSynapses, identity, uniform
from .membrane import Membrane, unfold

if TYPE_CHECKING:  # the solver comes in built; fields import no solver module
    from ...solvers.unfold import LTCFusedConfig, UnfoldConfig

#: initial ranges shared by both parameterisations
#: (TF ``ltc_model.py:112-126``, ncps ``ltc_cell.py:57-67``; docs/sources.md#ltc-tf-cell)
SHARED_RANGES = {"vleak": (-0.2, 0.2), "mu": (0.3, 0.8), "sigma": (3.0, 8.0)}


class LTCCell(RecurrentCell):
    """LTC neurons with sigmoid recurrent and sensory synapses."""

    epsilon: float = 0.0

    def __init__(self, erev: torch.Tensor, sensory_erev: torch.Tensor,
                 ranges: dict[str, tuple[float, float]],
                 solver: LTCFusedConfig | UnfoldConfig):
        units = erev.shape[1]
        super().__init__(units)
        self.solver = solver
        self.input_w = nn.Parameter(torch.ones(sensory_erev.shape[0]))
        self.input_b = nn.Parameter(torch.zeros(sensory_erev.shape[0]))
        self.sensory = SigmoidSynapses(sensory_erev, {**ranges, "w": ranges["sensory_w"]})
        self.recurrent = SigmoidSynapses(erev, ranges)
        self.vleak = uniform((units,), ranges["vleak"])
        self.gleak = uniform((units,), ranges["gleak"])
        self.cm = uniform((units,), ranges["cm"])

    def positive(self, p: torch.Tensor) -> torch.Tensor:
        """The value used for a parameter that must be positive (W, sensory W, cm, gl)."""
        return identity(p)

    def fused_step(self, elapsed: torch.Tensor) -> float | torch.Tensor:
        """Step h of the fused solver for an input step of duration ``elapsed``."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor, v: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
        x = x * self.input_w + self.input_b
        sensory_num, sensory_den = self.sensory(x, self.positive)
        membrane = Membrane(self.positive(self.cm), self.positive(self.gleak), self.vleak,
                            sensory_num, sensory_den, self.epsilon)
        return unfold(v, lambda u: self.recurrent(u, self.positive), membrane, self.solver,
                      self.fused_step(elapsed))
