"""The wired CfC (ncps ``WiredCfCCell``): one CfC layer per layer of a wiring.

Layer k (neurons L_k, state h_k) reads the output of layer k − 1 (the inputs for k = 0) through
the synapses the wiring gives, |A^s[:, L_0]| or |A[L_{k−1}, L_k]|, and its own state all-to-all;
it has no backbone. The state is [h_0, h_1, …] in layer order, the output the last layer's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import nn

from .update import CfCUpdate, Mode

if TYPE_CHECKING:
    from ..wiring import Wiring


def layer_masks(wiring: Wiring) -> list[np.ndarray]:
    """Per layer, the 0/1 mask (N_k, inputs_k + N_k) on the weights of its f₁, f₂ heads."""
    masks, previous = [], None
    for neurons in wiring.layers:
        synapses = (wiring.sensory[:, neurons] if previous is None
                    else wiring.adjacency[np.ix_(previous, neurons)])
        masks.append(np.abs(np.concatenate([synapses, np.ones((len(neurons),) * 2)])).T)
        previous = neurons
    return masks


class WiredCfC(nn.Module):
    """Layers of :class:`CfCUpdate` over a wiring: state (B, N) → state (B, N)."""

    def __init__(self, inputs: int, wiring: Wiring, mode: Mode = "default", gain: float = 1.0):
        super().__init__()
        self.sizes = [len(neurons) for neurons in wiring.layers]
        layers = []
        for size, mask in zip(self.sizes, layer_masks(wiring)):
            layers.append(CfCUpdate(inputs, size, mode, backbone_layers=0, gain=gain,
                                    mask=torch.tensor(mask, dtype=torch.get_default_dtype())))
            inputs = size
        self.layers = nn.ModuleList(layers)

    def forward(self, x: torch.Tensor, h: torch.Tensor, t: float | torch.Tensor) -> torch.Tensor:
        states = []
        for layer, h_k in zip(self.layers, h.split(self.sizes, -1)):
            x = layer(x, h_k, t)
            states.append(x)
        return torch.cat(states, -1)

    def output(self, h: torch.Tensor) -> torch.Tensor:
        return h[..., -self.sizes[-1]:]
