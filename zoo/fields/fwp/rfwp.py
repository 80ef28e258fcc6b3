"""ODE-RFWP (paper (a) §3.3, Eq. 26-27, App. C.3; docs/sources.md#fwp-rfwp): field kind
``ode_rfwp``.

For discrete observations (x_n, t_n) without a control: between observations the latent
u ∈ R^d follows an autonomous ODE, du/dt = Linear(Tanh(Linear(u))) (Eq. 26); at each
observation a discrete learning rule writes to the fast weight and the read-out gives the new
latent (Eq. 27):

  e = LN(Linear_in(x_n)); z = Linear_merge(2d → d)([e, a(u)]) with a = tanh for Hebb, identity
  for Oja/Delta (the authors' code); (k, v, β) = kvb_net(z); W_n = W_{n−1} + term(W_{n−1});
  u_n = FF(out_proj(W_n · softmax(Linear_q(e)))).

u(t0) = 0 and W(t0) = 0. A sample with no observation at a grid time (NaN row) keeps its state.
Features are u at each sample's final index (size d). The authors' RL runs: d 128, 16 heads,
d_ff 512, Hebb, Delta post-tanh, dopri5 with rtol 1e-5 / atol 1e-6 and the adjoint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn

from ...build_context import BuildContext
from ..trajectory import final_states
from .query_readout import QueryReadout
from .rules import Rule, make_rule
from .slow_net import SlowNet
from ..body import Body

if TYPE_CHECKING:
    from .config import ODERFWPConfig


class LatentODE(nn.Module):
    """du/dt = Linear(hidden → d)(Tanh(Linear(d → hidden)(u)))."""

    def __init__(self, d: int, hidden: int):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, hidden), nn.Tanh(), nn.Linear(hidden, d))

    def forward(self, t: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
        return self.net(u)


class RFWPCell(nn.Module):
    """One discrete FWP step (Eq. 27): (x_n, u, W_{n−1}) -> (u_n, W_n)."""

    def __init__(self, channels: int, d: int, heads: int, d_ff: int, rule: Rule,
                 tanh_latent: bool):
        super().__init__()
        self.rule, self.tanh_latent = rule, tanh_latent
        self.slow = SlowNet(channels, d, heads, with_values=True)
        self.merge = nn.Linear(2 * d, d)
        self.readout = QueryReadout(d, heads, d_ff)

    def forward(self, x: torch.Tensor, u: torch.Tensor, W: torch.Tensor):
        e = self.slow.embed(x)
        latent = torch.tanh(u) if self.tanh_latent else u
        write = self.rule.write(*self.slow.split(self.merge(torch.cat([e, latent], -1))))
        W = W + self.rule.term(write, W)
        return self.readout(W, e), W


class ODERFWP(Body):
    def __init__(self, cfg: ODERFWPConfig, ctx: BuildContext):
        super().__init__()
        d, heads = cfg.d_model, cfg.heads
        self.heads, self.h = heads, d // heads
        rule = make_rule(cfg.rule, cfg.delta)
        self.vector_field = LatentODE(d, cfg.ode_hidden or d)
        self.cell = RFWPCell(ctx.input_channels, d, heads, cfg.d_ff or 4 * d, rule,
                             tanh_latent=cfg.rule == "hebb")
        self.integrate = ctx.integrate
        self.per_step = ctx.shape.task.per_step
        self.features = d

    def generic(self, path, batch) -> torch.Tensor:
        values, times, observed = path.values, path.times, path.observed
        b = values.shape[0]
        u = values.new_zeros(b, self.features)
        W = values.new_zeros(b, self.heads, self.h, self.h)
        states = []
        for n in range(values.shape[1]):
            if n > 0:
                u = self.integrate(self.vector_field, u, times[n - 1:n + 1])[-1]
            u_new, W_new = self.cell(values[:, n], u, W)
            seen = observed[:, n]
            u = torch.where(seen[:, None], u_new, u)
            W = torch.where(seen[:, None, None, None], W_new, W)
            states.append(u)
        states = torch.stack(states)
        return states.transpose(0, 1) if self.per_step else final_states(states, path, batch)
