"""Random continuous-time networks of the trajectory-length experiment
(docs/sources.md#ltc-trajectory-length).

Layer l (width k) reads u = I(t) (layer 1, from ``path.evaluate``) or the state of layer l−1:
f_in = act(W_inᵀ u + b_in), f_rec = act(W_rᵀ y + b_r), and

* ``ltc``:   dy/dt = −y ⊙ (1/τ + |f_in| + |f_rec|) + f_in ⊙ Σ_j E_j· + f_rec ⊙ Σ_j E^r_j·
* ``ctrnn``: dy/dt = −y/τ + f_in
* ``node``:  dy/dt = f_in

(as the MATLAB code: CT-RNN and N-ODE layers have no recurrent term). All weights are fixed
random draws: W, E ~ N(0, s_w²), b ~ N(0, s_b²), τ = |N(0, s_b²)|, where ``weight_init: code``
(MATLAB) takes s_w = sigma_w, s_b = sigma_b and ``paper`` takes s_w² = sigma_w/k, s_b² = sigma_b
(paper: W ~ N(0, σ_w²/k) with σ_w² = 2). The state starts at 0 and is integrated with the spec's
(adaptive) torchdiffeq solver over the path's grid.

:meth:`RandomCTNet.trajectory_length` gives, per series, the arc length (sum of chord lengths)
of the first two principal components of a layer's states on the grid, and the number of
solver steps. Differences from the MATLAB code: states are taken on the path's grid rather than
at the solver's own output points, and the steps are the attempted Runge–Kutta steps inferred
from the number of function evaluations (2 set-up evaluations, then one per stage).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn
from torchdiffeq._impl.odeint import SOLVERS

from ...build_context import BuildContext
from ..trajectory import final_states
from .activations import activation
from ..body import Body

if TYPE_CHECKING:
    from .config import RandomCTNetConfig


class RandomLayer(nn.Module):
    """One layer's fixed random weights and its right-hand side."""

    def __init__(self, inputs: int, width: int, model: str, act, std_w: float, std_b: float,
                 gen: torch.Generator):
        super().__init__()
        self.model, self.act = model, act

        def normal(*shape: int, std: float) -> torch.Tensor:
            return std * torch.randn(*shape, generator=gen)

        self.register_buffer("w_in", normal(inputs, width, std=std_w))
        self.register_buffer("b_in", normal(width, std=std_b))
        self.register_buffer("e_in", normal(width, width, std=std_w).sum(0))
        self.register_buffer("tau", normal(width, std=std_b).abs())
        self.register_buffer("w_rec", normal(width, width, std=std_w))
        self.register_buffer("b_rec", normal(width, std=std_b))
        self.register_buffer("e_rec", normal(width, width, std=std_w).sum(0))

    def forward(self, u: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        f_in = self.act(u @ self.w_in + self.b_in)
        if self.model == "node":
            return f_in
        if self.model == "ctrnn":
            return -y / self.tau + f_in
        f_rec = self.act(y @ self.w_rec + self.b_rec)
        return (-y * (1 / self.tau + f_in.abs() + f_rec.abs())
                + f_in * self.e_in + f_rec * self.e_rec)


class StackedField(nn.Module):
    """f(t, y) of all layers, y = [y_1, ..., y_L], driven by the path's X(t)."""

    def __init__(self, layers: nn.ModuleList, width: int, path):
        super().__init__()
        self.layers, self.width, self.path = layers, width, path

    def forward(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        u, out = self.path.evaluate(t), []
        for layer, y_l in zip(self.layers, y.split(self.width, -1), strict=True):
            out.append(layer(u, y_l))
            u = y_l
        return torch.cat(out, -1)


@dataclass
class TrajectoryLength:
    """Per series: ``length`` (B,) of the 2-PC projection, ``explained`` (B,) variance share of
    those 2 PCs; ``steps`` attempted solver steps (None for non-adaptive methods), ``nfe``."""

    length: torch.Tensor
    explained: torch.Tensor
    steps: int | None
    nfe: int


def pca_arc_length(states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(chord-sum length, explained variance share) of the first 2 PCs of ``states`` (B, T, k)."""
    centred = states - states.mean(-2, keepdim=True)
    u, s, _ = torch.linalg.svd(centred, full_matrices=False)
    scores = u[..., :2] * s[..., None, :2]
    length = scores.diff(dim=-2).norm(dim=-1).sum(-1)
    return length, (s[..., :2] ** 2).sum(-1) / (s ** 2).sum(-1)


def attempted_steps(method: str, nfe: int) -> int | None:
    """Steps of an adaptive Runge–Kutta solve from its evaluations: f(t0), the initial-step
    probe, then one evaluation per stage after the first (FSAL) for each attempted step."""
    tableau = getattr(SOLVERS.get(method), "tableau", None)
    return None if tableau is None else (nfe - 2) // len(tableau.alpha)


class RandomCTNet(Body):
    def __init__(self, cfg: RandomCTNetConfig, ctx: BuildContext):
        super().__init__()
        gen = torch.Generator().manual_seed(ctx.spec.seed if cfg.seed is None else cfg.seed)
        if cfg.weight_init == "code":
            std_w, std_b = cfg.sigma_w, cfg.sigma_b
        else:
            std_w, std_b = math.sqrt(cfg.sigma_w / cfg.width), math.sqrt(cfg.sigma_b)
        act = activation(cfg.activation, cfg.hardtanh_matlab_quirk)
        self.layers = nn.ModuleList(
            RandomLayer(ctx.input_channels if i == 0 else cfg.width, cfg.width, cfg.model, act,
                        std_w, std_b, gen) for i in range(cfg.layers))
        self.width = cfg.width
        self.integrate = ctx.integrate
        self.per_step = ctx.shape.task.per_step
        self.features = cfg.width * cfg.layers

    def trajectory(self, path) -> torch.Tensor:
        """Hidden states (T, B, layers·width) on ``path.grid_points`` from y(t0) = 0."""
        x0 = path.evaluate(path.interval[0])
        y0 = x0.new_zeros(x0.shape[0], self.features)
        return self.integrate(StackedField(self.layers, self.width, path), y0, path.grid_points)

    def generic(self, path, batch) -> torch.Tensor:
        states = self.trajectory(path)
        return states.transpose(0, 1) if self.per_step else final_states(states, path, batch)

    @torch.no_grad()
    def trajectory_length(self, path, layer: int = 0) -> TrajectoryLength:
        """Arc length of layer ``layer``'s 2-PC trajectory and the solver's step count."""
        before = self.integrate.nfe
        states = self.trajectory(path)
        nfe = self.integrate.nfe - before
        own = states[..., layer * self.width:(layer + 1) * self.width].transpose(0, 1)
        length, explained = pca_arc_length(own)
        method = self.integrate.solver.odeint_kwargs(path.grid_points)["method"]
        return TrajectoryLength(length, explained, attempted_steps(method, nfe), nfe)
