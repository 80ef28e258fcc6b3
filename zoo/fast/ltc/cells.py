"""LTC fast path: the input side of every step in one call, then a lean recurrent loop.

The affine input map and the sensory synapse sums Σ_i a^s_ij E^s_ij, Σ_i a^s_ij are computed for
all T steps at once; the positive parameters (softplus for the ncps cell) once per sequence.
In the loop, the recurrent sums are Σ_i s_ij (W⁺E)_ij and Σ_i s_ij W⁺_ij with
s_ij = σ(σ_ij v_i − σ_ij μ_ij) (one fused multiply-add inside the sigmoid). The fused solver
(paper Eq. 3) keeps the terms that are constant during an input step out of its unfolds:
v ← (c_num + cm/h · v + Σ a E) / (c_den + Σ a) with c_num = gl vleak + Σ a^s E^s and
c_den = cm/h + gl + Σ a^s + ε. Explicit unfolds run :func:`zoo.fields.ltc.membrane.unfold`.
"""

from __future__ import annotations

import torch

from ...fields.ltc.cell import LTCCell
from ...fields.ltc.synapse import SigmoidSynapses
from ...fields.ltc.membrane import Currents, Membrane, unfold
from ...kernels.compiled import Form, use_compiled
from .compiled import compiled_synapse_sums
from .fused import fused_unfolds


def synapse_parameters(synapses: SigmoidSynapses, positive) -> tuple[torch.Tensor, ...]:
    """σ, offset = −σμ, W⁺E and W⁺ of a synapse layer, each (pre, post)."""
    w = positive(synapses.w)
    return synapses.sigma, -synapses.sigma * synapses.mu, w * synapses.erev, w


def synapse_sums(v: torch.Tensor, sigma: torch.Tensor, offset: torch.Tensor,
                 w_erev: torch.Tensor, w: torch.Tensor, form: Form = "auto"
                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """(Σ_i s_ij (W⁺E)_ij, Σ_i s_ij W⁺_ij) with s_ij = σ(σ_ij v_i + offset_ij), each
    (…, post), for v (…, pre); compiled (:mod:`.compiled`) for (B, T, pre) inputs where it
    can run."""
    if v.dim() == 3 and use_compiled(form, "ltc_synapses", v, sigma, offset, w_erev, w):
        return compiled_synapse_sums(v, sigma, offset, w_erev, w)
    s = torch.sigmoid(torch.addcmul(offset, v.unsqueeze(-1), sigma))
    return (s * w_erev).sum(-2), (s * w).sum(-2)


def recurrent_currents(cell: LTCCell) -> Currents:
    """v (B, pre) -> (Σ_i a_ij E_ij, Σ_i a_ij), each (B, post)."""
    params = synapse_parameters(cell.recurrent, cell.positive)
    return lambda v: synapse_sums(v, *params)


def ltc_sequence(cell: LTCCell, x: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
    """Outputs after every input step (T, B, out) from v = 0, for inputs x (B, T, C)."""
    sensory_num, sensory_den = synapse_sums(x * cell.input_w + cell.input_b,
                                            *synapse_parameters(cell.sensory, cell.positive))
    cm, gleak = cell.positive(cell.cm), cell.positive(cell.gleak)
    if cell.solver.kind == "ltc_fused":
        steps = torch.stack([torch.as_tensor(cell.fused_step(dt), dtype=x.dtype, device=x.device)
                             for dt in elapsed.unbind(0)])
        cm_h = cm / steps[:, None]
        return cell.output(fused_unfolds(
            gleak * cell.vleak + sensory_num.transpose(0, 1),
            cm_h[:, None] + gleak + sensory_den.transpose(0, 1) + cell.epsilon,
            cm_h, *synapse_parameters(cell.recurrent, cell.positive), cell.solver.unfolds))
    currents = recurrent_currents(cell)
    v = x.new_zeros(x.shape[0], cell.units)
    states = []
    for num_s, den_s, dt in zip(sensory_num.unbind(1), sensory_den.unbind(1), elapsed.unbind(0)):
        membrane = Membrane(cm, gleak, cell.vleak, num_s, den_s, cell.epsilon)
        v = unfold(v, currents, membrane, cell.solver, cell.fused_step(dt))
        states.append(v)
    return cell.output(torch.stack(states))
