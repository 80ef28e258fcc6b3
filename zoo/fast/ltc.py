"""LTC fast path: the input side of every step in one call, then a lean recurrent loop.

The affine input map and the sensory synapse sums Σ_i a^s_ij E^s_ij, Σ_i a^s_ij are computed for
all T steps at once; the positive parameters (softplus for the ncps cell) and W⁺ ⊙ E once per
sequence. In the loop the recurrent sums are Σ_i s_ij (W⁺ ⊙ E)_ij and Σ_i s_ij W⁺_ij with
s_ij = σ(σ_ij (v_i − μ_ij)); the unfolds themselves are :func:`zoo.fields.ltc.unfold.unfold`
(fused semi-implicit Euler or explicit steps), as in the generic cell.
"""

from __future__ import annotations

import torch

from ..fields.ltc.cell import LTCCell
from ..fields.ltc.unfold import Membrane, unfold


def ltc_sequence(cell: LTCCell, x: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
    """States after every input step (T, B, N) from v = 0, for inputs x (B, T, C)."""
    sensory_num, sensory_den = cell.sensory(x * cell.input_w + cell.input_b, cell.positive)
    cm, gleak = cell.positive(cell.cm), cell.positive(cell.gleak)
    synapses = cell.recurrent
    w = cell.positive(synapses.w)
    w_erev = w * synapses.erev

    def currents(v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s = torch.sigmoid(synapses.sigma * (v.unsqueeze(-1) - synapses.mu))  # (B, pre, post)
        return (s * w_erev).sum(-2), (s * w).sum(-2)

    v = x.new_zeros(x.shape[0], cell.units)
    states = []
    for num, den, dt in zip(sensory_num.unbind(1), sensory_den.unbind(1), elapsed.unbind(0)):
        membrane = Membrane(cm, gleak, cell.vleak, num, den, cell.epsilon)
        v = unfold(v, currents, membrane, cell.solver, cell.fused_step(dt))
        states.append(v)
    return torch.stack(states)
