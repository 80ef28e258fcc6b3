"""ODE-RNN in Kidger et al.'s version (Rubanova et al. 2019, paper a Eqs. 9–10;
docs/sources.md#ode-rnn).

Between observations the state follows an autonomous ODE, dh/dt = MLP(h) with
MLP = Linear(h→hh), [Tanh, Linear(hh→hh)] × (layers − 1), Tanh, Linear(hh→h); at an
observation x_i it jumps, h ← GRUCell(x_i, h). Starting from h(t0) (zeros, or the static-feature
network), for each grid time t_i: evolve over [t_{i−1}, t_i], then update with x_i. Kidger's code
takes one ``rk4`` step per gap with the continuous adjoint; here the spec's solver and backprop
are used (the default fixed-grid step is the gap itself, so ``rk4`` + ``adjoint`` is that setup).

Observations: with the ``raw_steps`` control (as Kidger's code) the cell reads the raw
observations and jumps only at steps where something was observed; with an interpolating
control the path is read at ``path.grid_points`` and every grid point counts as an observation.
Sizes used: Speech h = 128, hh = 64, layers 4; Sepsis 128/128/4; UEA 32/32/3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from ..build_context import BuildContext
from .trajectory import final_states, step_states
from .initial_state import InitialState
from .body import Body

if TYPE_CHECKING:
    from .config import ODERNNConfig


class ODERNNFunc(nn.Module):
    """The autonomous field between observations: a Tanh MLP h → h."""

    def __init__(self, hidden: int, hidden_hidden: int, layers: int):
        super().__init__()
        blocks = [nn.Linear(hidden, hidden_hidden)]
        for _ in range(layers - 1):
            blocks += [nn.Tanh(), nn.Linear(hidden_hidden, hidden_hidden)]
        self.net = nn.Sequential(*blocks, nn.Tanh(), nn.Linear(hidden_hidden, hidden))

    def forward(self, t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.net(h)


class ODERNN(Body):
    def __init__(self, cfg: ODERNNConfig, ctx: BuildContext):
        super().__init__()
        self.integrate = ctx.integrate
        self.per_step = ctx.shape.task.per_step
        self.initial = InitialState(ctx, cfg.hidden)
        self.cell = nn.GRUCell(ctx.input_channels, cfg.hidden)
        self.vector_field = ODERNNFunc(cfg.hidden, cfg.hidden_hidden, cfg.layers)
        self.features = cfg.hidden

    def generic(self, path, batch) -> torch.Tensor:
        times = path.grid_points
        h = self.initial(path, batch)
        states = []
        raw = hasattr(path, "observed")
        for i, t in enumerate(times):
            if i:
                h = self.integrate(self.vector_field, h, times[i - 1:i + 1])[-1]
            if raw:
                h = torch.where(path.observed[:, i, None], self.cell(path.values[:, i], h), h)
            else:
                h = self.cell(path.evaluate(t), h)
            states.append(h)
        states = torch.stack(states)
        if self.per_step:
            return step_states(states, path, batch)
        return final_states(states, path, batch)
