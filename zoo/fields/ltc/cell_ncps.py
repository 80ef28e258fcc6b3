"""The LTC cell of the ncps PyTorch package (docs/sources.md#ltc-ncps-cell).

* Fused step h = Δt/unfolds (Δt = 1 unless elapsed times are used), ε = 1e-8.
* Positivity of W, sensory W, cm, gl: ``softplus`` at run time (the ``LTC`` wrapper's default)
  or ``clip``: ReLU in place after every optimiser step (bare ``LTCCell``'s
  ``apply_weight_constraints``).
* Init: gl U(0.001, 1), vleak U(−0.2, 0.2), cm U(0.4, 0.6), W and sensory W U(0.001, 1),
  σ U(3, 8), μ U(0.3, 0.8). E ∈ {−1, +1, +1} (2:1 excitatory) drawn one synapse at a time from
  ``numpy.random.default_rng(seed)``: recurrent synapses (source-major) first, then sensory.
* Wiring: fully connected (the masks are all ones), or any ncps wiring
  (:class:`WiredNCPSLTCCell`: masked synapses, the motor neurons as output).
* Not included: ncps's per-unit output affine map (the Dense readout subsumes it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import numpy as np
import torch
from torch.nn import functional as F

from .cell import SHARED_RANGES, LTCCell
from .synapse import SigmoidSynapses, identity

if TYPE_CHECKING:  # the solver comes in built; fields import no solver module
    from ...solvers.unfold import LTCFusedConfig, UnfoldConfig
    from ..wiring import Wiring

NCPS_RANGES = {**SHARED_RANGES, "w": (0.001, 1.0), "sensory_w": (0.001, 1.0),
               "gleak": (0.001, 1.0), "cm": (0.4, 0.6)}


def wiring_polarities(inputs: int, units: int, seed: int = 1111
                      ) -> tuple[torch.Tensor, torch.Tensor]:
    """(E (units, units), sensory E (inputs, units)) as ncps's ``FullyConnected`` draws them."""
    rng = np.random.default_rng(seed)

    def draw(rows: int) -> torch.Tensor:
        return torch.tensor([[rng.choice([-1, 1, 1]) for _ in range(units)] for _ in range(rows)],
                            dtype=torch.float32)

    erev = draw(units)
    return erev, draw(inputs)


class NCPSLTCCell(LTCCell):
    """LTC cell as in ncps: Δt-scaled fused step, ε = 1e-8, softplus or clipped positivity."""


    epsilon = 1e-8

    def __init__(self, inputs: int, units: int, solver: LTCFusedConfig | UnfoldConfig,
                 constraint: Literal["softplus", "clip"] = "softplus",
                 use_elapsed: bool = False, seed: int = 1111,
                 polarities: tuple[torch.Tensor, torch.Tensor] | None = None):
        super().__init__(*(polarities or wiring_polarities(inputs, units, seed)), NCPS_RANGES,
                         solver)
        self.constraint = constraint
        self.use_elapsed = use_elapsed

    def positive(self, p: torch.Tensor) -> torch.Tensor:
        return F.softplus(p) if self.constraint == "softplus" else p

    def fused_step(self, elapsed: torch.Tensor) -> float | torch.Tensor:
        return (elapsed if self.use_elapsed else 1.0) / self.solver.unfolds

    @torch.no_grad()
    def constrain(self) -> None:
        if self.constraint == "clip":
            for p in (self.recurrent.w, self.sensory.w, self.cm, self.gleak):
                p.clamp_(min=0.0)


class MaskedSigmoidSynapses(SigmoidSynapses):
    """Sigmoid synapses present only where E ≠ 0: a_ij = W⁺_ij σ(…) |E_ij| (ncps's sparsity
    masks; E is ±1 on a synapse)."""

    def __init__(self, erev: torch.Tensor, ranges: dict[str, tuple[float, float]]):
        super().__init__(erev, ranges)
        self.register_buffer("mask", erev.abs())

    def conductance(self, v: torch.Tensor, positive: Callable = identity) -> torch.Tensor:
        return super().conductance(v, positive) * self.mask


class WiredNCPSLTCCell(NCPSLTCCell):
    """The ncps LTC cell on a sparse wiring (``ncps.torch.LTC(inputs, wiring)``): polarities and
    masks from the wiring's adjacency matrices, output the first ``wiring.outputs`` (motor)
    neurons. The fused loops of the fast path assume all-to-all synapses: it runs generic."""

    def __init__(self, inputs: int, wiring: Wiring, solver: LTCFusedConfig | UnfoldConfig,
                 constraint: Literal["softplus", "clip"] = "softplus", use_elapsed: bool = False):
        erev, sensory = (torch.tensor(a, dtype=torch.get_default_dtype())
                         for a in (wiring.adjacency, wiring.sensory))
        super().__init__(inputs, wiring.units, solver, constraint, use_elapsed,
                         polarities=(erev, sensory))
        sensory_ranges = {**NCPS_RANGES, "w": NCPS_RANGES["sensory_w"]}
        self.sensory = MaskedSigmoidSynapses(sensory, sensory_ranges)  # replace the unmasked ones
        self.recurrent = MaskedSigmoidSynapses(erev, NCPS_RANGES)
        self.units = wiring.outputs  # the features; the state keeps all wiring.units neurons

    def output(self, state: torch.Tensor) -> torch.Tensor:
        return state[..., :self.units]
