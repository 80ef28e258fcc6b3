"""GRU-ODE as run by Kidger et al. (2020), the direct-NODE baseline of paper a
(docs/sources.md#gru-ode).

The state is z = [x̃, h] with x̃ ∈ R^u and h ∈ R^hidden, driven by the path as a CDE with a fixed
block structure (Kidger's ``ContinuousRNNConverter``):

    dx̃/dt = dX/dt,    dh/dt = (1 − z) ⊙ (g − h) · dX₀/dt,
    r = σ(W_r x̃ + U_r h),  z = σ(W_z x̃ + U_z h),  g = tanh(W_h x̃ + U_h (r ⊙ h)),

W without bias, U with bias, and h clamped to [−1, 1] before use. Channel 0 of the path must
be time (then dX₀/dt = 1 and h follows the GRU-ODE in t). z(t0) = 0 (``initial: zeros``, so
x̃(t) = X(t) − X(t0)), or ``static``: x̃(t0) = 0 and h(t0) from the static-feature network
(sepsis). The features are the whole state [x̃, h] (Kidger's readout is Linear(u + h → out)).
Sizes used: Speech h = 160, Sepsis h = 187, UEA h = 47.
"""

from __future__ import annotations

import torch
from torch import nn

from ..build_context import BuildContext
from .initial_state import InitialState
from .solved_body import SolvedBody


class GRUODECell(nn.Module):
    """(1 − z) ⊙ (g − h) of De Brouwer et al.'s GRU-ODE, with input x̃."""

    def __init__(self, channels: int, hidden: int):
        super().__init__()
        self.w_r, self.w_z, self.w_h = (nn.Linear(channels, hidden, bias=False) for _ in range(3))
        self.u_r, self.u_z, self.u_h = (nn.Linear(hidden, hidden) for _ in range(3))

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        r = torch.sigmoid(self.w_r(x) + self.u_r(h))
        z = torch.sigmoid(self.w_z(x) + self.u_z(h))
        g = torch.tanh(self.w_h(x) + self.u_h(r * h))
        return (1 - z) * (g - h)


class GRUODEFunc(nn.Module):
    """d[x̃, h]/dt = [dX/dt, cell(x̃, clamp(h)) · dX₀/dt]."""

    def __init__(self, cell: GRUODECell, path, channels: int):
        super().__init__()
        self.cell, self.path, self.channels = cell, path, channels

    def forward(self, t: torch.Tensor, state: torch.Tensor) -> torch.Tensor:
        return gru_ode_derivative(self.cell, self.channels, state, self.path.derivative(t))


def gru_ode_derivative(cell: GRUODECell, channels: int, state: torch.Tensor,
                       dx: torch.Tensor) -> torch.Tensor:
    """[dX/dt, cell(x̃, clamp(h)) · dX₀/dt] for the state [x̃, h] and dX/dt."""
    x, h = state[..., :channels], state[..., channels:].clamp(-1, 1)
    return torch.cat([dx, cell(x, h) * dx[..., :1]], dim=-1)


class GRUODE(SolvedBody):
    def __init__(self, ctx: BuildContext, hidden: int):
        channels = ctx.input_channels
        super().__init__(ctx, InitialState(ctx, hidden), GRUODECell(channels, hidden),
                         channels + hidden)
        self.channels = channels

    has_fast_path = True
    has_adaptive_fast_path = True

    def func(self, path) -> nn.Module:
        return GRUODEFunc(self.vector_field, path, self.channels)

    def stage_inputs(self, path, times):
        return (path.derivative(times),)

    def stage_field(self, z, dx):
        return gru_ode_derivative(self.vector_field, self.channels, z, dx)

    def z0(self, path, batch) -> torch.Tensor:
        h0 = self.initial(path, batch)
        return torch.cat([h0.new_zeros(*h0.shape[:-1], self.channels), h0], dim=-1)
