"""Jacobian Neural CDE of Kuleshov & Zaytsev (paper c): the implicit-function vector field.

The RNN cell F(X, h) = tanh(W_out ReLU(l1) + b1), l1 = W_x X + W_h h + b0, defines h implicitly
by h = F(X, h) (paper c Eq. 2); differentiating in t gives ḣ = (I − J_h)^{-1} J_x Ẋ, expanded as
ḣ = Σ_{k<K} J_h^k J_x Ẋ with K = ``taylor_terms`` (docs/sources.md#jac-vector-field). The
Jacobians are written out by hand, D = diag(1 − T²) W_out diag(ReLU′(l1)), J_x = D W_x,
J_h = D W_h, and applied as Jacobian-vector products (never formed as matrices).

Authors' code vs paper text (docs/sources.md#jac-differences): the code sums three terms
(``taylor_terms: 3``, the default; the paper's Eq. 3 and Algorithm 1 have two) and replaces
ReLU′(l1) by σ(l1) in the computation itself (``relu_derivative: sigmoid``, the default;
``exact`` uses the step function, whose derivative is zero, so the weights get no second-order
signal through it). Weights are xavier-uniform, biases zero, h(t0) = 0, hidden 128, and no time
channel is added.

Paper c solved with torchode's Dopri5 (atol = rtol = 1e-3, integral step controller) and
backpropagated through the solver steps: in a spec that is solver ``torchdiffeq`` with method
``dopri5``, ``rtol: 1e-3``, ``atol: 1e-3`` and backprop ``direct`` (torchdiffeq's step-size
controller differs in detail from torchode's).
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn
from torch.nn import functional as F

from ..kernels.spline_stages import value_and_derivative
from .solved_body import SolvedBody


class JacobianField(nn.Module):
    """ḣ = Σ_{k<K} J_h^k J_x Ẋ for the ReLU Elman cell (JAC ``Ilya/jacde.py:29-52``)."""

    def __init__(self, channels: int, hidden: int, taylor_terms: int,
                 relu_derivative: Literal["sigmoid", "exact"]):
        super().__init__()
        self.taylor_terms, self.relu_derivative = taylor_terms, relu_derivative
        self.x_in = nn.Linear(channels, hidden, bias=False)  # W_x
        self.h_in = nn.Linear(hidden, hidden)  # W_h, b0
        self.out = nn.Linear(hidden, hidden)  # W_out, b1
        for linear in (self.x_in, self.h_in, self.out):
            nn.init.xavier_uniform_(linear.weight)
            if linear.bias is not None:
                nn.init.zeros_(linear.bias)

    def inputs(self, x: torch.Tensor, dx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The state-independent part (W_x X, W_x Ẋ)."""
        return self.x_in(x), F.linear(dx, self.x_in.weight)

    def forward(self, x: torch.Tensor, dx: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.from_inputs(h, *self.inputs(x, dx))

    def from_inputs(self, h: torch.Tensor, wx: torch.Tensor, wdx: torch.Tensor) -> torch.Tensor:
        """ḣ given the state and :meth:`inputs`."""
        l1 = wx + self.h_in(h)
        cell = torch.tanh(self.out(torch.relu(l1)))
        slope = torch.sigmoid(l1) if self.relu_derivative == "sigmoid" else (l1 > 0).to(l1.dtype)
        tanh_slope = 1 - cell * cell

        def d(v: torch.Tensor) -> torch.Tensor:  # D v
            return tanh_slope * F.linear(slope * v, self.out.weight)

        term = d(wdx)  # J_x Ẋ
        total = term
        for _ in range(self.taylor_terms - 1):
            term = d(F.linear(term, self.h_in.weight))  # J_h (previous term)
            total = total + term
        return total


class JacobianFunc(nn.Module):
    """The right-hand side ḣ(t, h) for one path: the field at X(t), Ẋ(t)."""

    def __init__(self, field: JacobianField, path):
        super().__init__()
        self.field, self.path = field, path

    def forward(self, t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return self.field(self.path.evaluate(t), self.path.derivative(t), h)


class JacobianNCDE(SolvedBody):
    has_fast_path = True
    has_adaptive_fast_path = True

    def func(self, path) -> nn.Module:
        return JacobianFunc(self.vector_field, path)

    def stage_inputs(self, path, times):
        return self.vector_field.inputs(*value_and_derivative(path, times))

    def stage_field(self, h, wx, wdx):
        return self.vector_field.from_inputs(h, wx, wdx)
