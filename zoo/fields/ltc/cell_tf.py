"""The LTC cell of the authors' TensorFlow code, which produced the paper's tables
(docs/sources.md#ltc-tf-cell).

* Init: μ U(0.3, 0.8), σ U(3, 8), W U(0.01, 1) for recurrent and sensory synapses; E = ±1 with
  p = ½; vleak U(−0.2, 0.2); gl = 1 and cm = 0.5 (constants, trainable).
* No Δt (docs/sources.md#ltc-diff-cells): the fused solver uses h = 1 and cm absorbs the
  step; ε = 0.
* :meth:`constrain` after every optimiser step clips cm to [1e-6, 1000], gl to [1e-5, 1000],
  W and sensory W to [1e-5, 1000]; σ, μ, E, vleak stay unconstrained.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from .cell import SHARED_RANGES, LTCCell

if TYPE_CHECKING:  # the solver comes in built; fields import no solver module
    from ...solvers.unfold import LTCFusedConfig, UnfoldConfig

TF_RANGES = {**SHARED_RANGES, "w": (0.01, 1.0), "sensory_w": (0.01, 1.0),
             "gleak": (1.0, 1.0), "cm": (0.5, 0.5)}

#: parameter -> clipping interval applied by :meth:`TFLTCCell.constrain`
TF_CLIPS = {"cm": (1e-6, 1000.0), "gleak": (1e-5, 1000.0),
            "recurrent.w": (1e-5, 1000.0), "sensory.w": (1e-5, 1000.0)}


def random_polarity(shape: tuple[int, ...]) -> torch.Tensor:
    """E = ±1 with probability ½ each."""
    return 2.0 * torch.randint(0, 2, shape).float() - 1.0


class TFLTCCell(LTCCell):
    """LTC cell as in the TF code: constant-init gl and cm, no Δt, clipping constraints."""


    def __init__(self, inputs: int, units: int, solver: LTCFusedConfig | UnfoldConfig):
        super().__init__(random_polarity((units, units)), random_polarity((inputs, units)),
                         TF_RANGES, solver)

    def fused_step(self, elapsed: torch.Tensor) -> float:
        return 1.0

    @torch.no_grad()
    def constrain(self) -> None:
        params = dict(self.named_parameters())
        for name, (lo, hi) in TF_CLIPS.items():
            params[name].clamp_(lo, hi)
