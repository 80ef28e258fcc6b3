"""How the LTC cell advances its state between two inputs (paper (b) Eq. 3;
docs/sources.md#ltc-equations and #ltc-tf-cell).

Per neuron, with total recurrent and sensory conductances D(v) = Σ_i a_ij + Σ_i a^s_ij and
driving term N(v) = Σ_i a_ij E_ij + Σ_i a^s_ij E^s_ij (sensory terms fixed during one input step):

    cm dv/dt = gl (vleak − v) + N(v) − v D(v)                       (paper Eq. 1)

* ``ltc_fused`` (paper Eq. 3): semi-implicit Euler with step h, implicit in the linearly
  occurring v: v ← [cm/h · v + gl vleak + N(v)] / [cm/h + gl + D(v) + ε]. The TF cell uses h = 1
  (cm absorbs the step, ε = 0); the ncps cell uses h = Δt/unfolds and ε = 1e-8.
* ``unfold``: explicit Euler or classic RK4 on dv/dt above (the ``ltc_ex`` / ``ltc_rk`` variants).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # the solver comes in built; fields import no solver module
    from ...solvers.unfold import LTCFusedConfig, UnfoldConfig

#: recurrent synapses: v -> (Σ a E, Σ a)
Currents = Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


@dataclass
class Membrane:
    """Constants of one input step: positive cm and gl, vleak, sensory sums, ε."""

    cm: torch.Tensor
    gleak: torch.Tensor
    vleak: torch.Tensor
    sensory_num: torch.Tensor
    sensory_den: torch.Tensor
    epsilon: float = 0.0


def fused_update(v: torch.Tensor, recurrent: Currents, m: Membrane,
                 h: float | torch.Tensor) -> torch.Tensor:
    """One semi-implicit Euler step of size h (paper Eq. 3)."""
    num, den = recurrent(v)
    cm_t = m.cm / h
    numerator = cm_t * v + m.gleak * m.vleak + (num + m.sensory_num)
    denominator = cm_t + m.gleak + (den + m.sensory_den)
    return numerator / (denominator + m.epsilon)


def derivative(v: torch.Tensor, recurrent: Currents, m: Membrane) -> torch.Tensor:
    """dv/dt = (1/cm)[gl (vleak − v) + Σ a E − v Σ a + Σ a^s E^s − v Σ a^s].

    LTC ``experiments_with_ltcs/ltc_model.py:171-190`` (docs/sources.md#ltc-tf-cell).
    """
    num, den = recurrent(v)
    return (m.gleak * (m.vleak - v) + num - v * den + m.sensory_num - v * m.sensory_den) / m.cm


def clipper(clip: float | None) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """Projection onto [−clip, clip] to apply after each step (the LTC repo's ``cell_clip``)."""
    return None if clip is None else (lambda y: y.clamp(-clip, clip))


def unfold(v: torch.Tensor, recurrent: Currents, m: Membrane,
           solver: LTCFusedConfig | UnfoldConfig, h: float | torch.Tensor) -> torch.Tensor:
    """The state after one input step; ``h`` is the fused step (ignored by ``unfold``)."""
    if solver.kind == "unfold":  # explicit Euler or classic RK4, stepped by the solver
        return solver.advance(lambda u: derivative(u, recurrent, m), v)
    for _ in range(solver.unfolds):
        v = fused_update(v, recurrent, m, h)
    return v
