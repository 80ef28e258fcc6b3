"""LTC fast path: the input side of every step in one call, then a lean recurrent loop.

The affine input map and the sensory synapse sums Σ_i a^s_ij E^s_ij, Σ_i a^s_ij are computed for
all T steps at once; the positive parameters (softplus for the ncps cell) once per sequence.
In the loop, the recurrent sums are Σ_i s_ij (W⁺E)_ij and Σ_i s_ij W⁺_ij with
s_ij = σ(σ_ij v_i − σ_ij μ_ij) (one fused multiply-add inside the sigmoid). The fused solver (paper Eq. 3) keeps
the terms that are constant during an input step out of its unfolds:
v ← (c_num + cm/h · v + Σ a E) / (c_den + Σ a) with c_num = gl vleak + Σ a^s E^s and
c_den = cm/h + gl + Σ a^s + ε. Explicit unfolds run :func:`zoo.fields.ltc.unfold.unfold`.
"""

from __future__ import annotations

import torch

from ..fields.ltc.cell import LTCCell
from ..fields.ltc.unfold import Currents, Membrane, unfold
from ..solvers.unfold import LTCFusedConfig


def recurrent_currents(cell: LTCCell) -> Currents:
    """v (B, pre) -> (Σ_i a_ij E_ij, Σ_i a_ij), each (B, post)."""
    synapses = cell.recurrent
    w = cell.positive(synapses.w)
    w_erev, offset = w * synapses.erev, -synapses.sigma * synapses.mu

    def currents(v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s = torch.sigmoid(torch.addcmul(offset, v.unsqueeze(-1), synapses.sigma))
        return (s * w_erev).sum(-2), (s * w).sum(-2)

    return currents


def ltc_sequence(cell: LTCCell, x: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
    """States after every input step (T, B, N) from v = 0, for inputs x (B, T, C)."""
    sensory_num, sensory_den = cell.sensory(x * cell.input_w + cell.input_b, cell.positive)
    cm, gleak = cell.positive(cell.cm), cell.positive(cell.gleak)
    currents = recurrent_currents(cell)
    fused = isinstance(cell.solver, LTCFusedConfig)
    v = x.new_zeros(x.shape[0], cell.units)
    states = []
    for num_s, den_s, dt in zip(sensory_num.unbind(1), sensory_den.unbind(1), elapsed.unbind(0)):
        h = cell.fused_step(dt)
        if fused:
            cm_h = cm / h
            c_num = gleak * cell.vleak + num_s
            c_den = cm_h + gleak + den_s + cell.epsilon
            for _ in range(cell.solver.unfolds):
                num, den = currents(v)
                v = (torch.addcmul(c_num, cm_h, v) + num) / (c_den + den)
        else:
            membrane = Membrane(cm, gleak, cell.vleak, num_s, den_s, cell.epsilon)
            v = unfold(v, currents, membrane, cell.solver, h)
        states.append(v)
    return torch.stack(states)
