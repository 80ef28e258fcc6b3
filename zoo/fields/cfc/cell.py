"""The CfC recurrent step over raw observations (ncps ``CfC``'s loop body).

Per step k: (with ``mixed_memory``) (h, c) ← LSTM(I_k, h, c); then h ← CfC(I_k, h, t_k) with
t_k = 1 (ncps without ``timespans``) or, with ``use_elapsed``, t_k = ``time_scale`` · Δt_k from
the time grid. The state is h (B, N), or (B, 2, N) holding (h, c); the output is h, or a wired
CfC's last layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from ..ltc.recurrent_body import RecurrentCell
from .memory import MixedMemory
from .update import CfCUpdate
from .wired import WiredCfC

if TYPE_CHECKING:
    from .config import CfCConfig


class CfCCell(RecurrentCell):
    """One CfC step: ``forward(I, state, Δt) -> state``."""

    def __init__(self, update: CfCUpdate | WiredCfC, units: int, outputs: int,
                 memory: MixedMemory | None = None, use_elapsed: bool = False,
                 time_scale: float = 1.0):
        super().__init__(outputs, (units,) if memory is None else (2, units))
        self.update = update
        self.memory = memory
        self.use_elapsed = use_elapsed
        self.time_scale = time_scale

    def forward(self, x: torch.Tensor, state: torch.Tensor, elapsed: torch.Tensor) -> torch.Tensor:
        t = self.time_scale * elapsed if self.use_elapsed else 1.0
        if self.memory is None:
            return self.update(x, state, t)
        h, c = self.memory(x, *state.unbind(-2))
        return torch.stack([self.update(x, h, t), c], -2)

    def output(self, state: torch.Tensor) -> torch.Tensor:
        return self.update.output(state if self.memory is None else state[..., 0, :])


def make_cell(config: CfCConfig, inputs: int) -> CfCCell:
    """The cell of a ``cfc`` field for ``inputs`` channels, built in ncps's order (the update,
    then the memory), so that one torch seed gives ncps's initial weights."""
    update: nn.Module
    if config.wiring is None:
        units = outputs = config.units
        update = CfCUpdate(inputs, units, config.mode, config.activation, config.backbone_units,
                           config.backbone_layers, config.backbone_dropout, gain=config.init_gain)
    else:
        wiring = config.wiring.build(inputs, config.units)
        update = WiredCfC(inputs, wiring, config.mode, config.init_gain)
        units, outputs = wiring.units, update.sizes[-1]
    memory = MixedMemory(inputs, units) if config.mixed_memory else None
    return CfCCell(update, units, outputs, memory, config.use_elapsed, config.time_scale)
