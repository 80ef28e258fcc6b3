"""The GRU-ODE's steps in the fast adjoint, with a hand-written vector-Jacobian product.

The state is y = [x̃, h] (:mod:`zoo.fields.gru_ode`) and the field

    f(y, dX) = [dX, k],   k = (1 − z) ⊙ (g − ĥ) · dX₀,   ĥ = clamp(h, −1, 1),
    [r, z] = σ(W_rz x̃ + U_rz ĥ + b_rz),   g = tanh(W_h x̃ + U_h (r ⊙ ĥ) + b_h).

At a stage with adjoint a = [a_x̃, a_h], ā = a_h · dX₀, the product (∂f/∂y)ᵀ a is, with the
pre-activation gradients p̄ = [p̄_r, p̄_z, p̄_h]:

    p̄_z = −ā ⊙ (g − ĥ) ⊙ z(1 − z),   p̄_h = ā ⊙ (1 − z) ⊙ (1 − g²),
    q̄ = U_hᵀ p̄_h,   p̄_r = q̄ ⊙ ĥ ⊙ r(1 − r),
    ȳ_x̃ = W_rzhᵀ p̄,   ȳ_h = [−ā ⊙ (1 − z) + q̄ ⊙ r + U_rzᵀ [p̄_r, p̄_z]] ⊙ 1{−1 ≤ h ≤ 1},

and the weights' part of θ̄ is Σ_s c_s p̄_s ⊗ (x̃_s, ĥ_s, r_s ⊙ ĥ_s), summed over a step's
stages in one product per matrix. The three input matrices W act as one (3H × u), the two
gates' U as one (2H × H); the elementwise work between the products is
:mod:`zoo.kernels.gru_ode`'s. The control has no parameters, so the inputs get no cotangent.
"""

from __future__ import annotations

import torch

from ...fields.gru_ode import GRUODECell
from ..solve.adjoint import AdjointSteps, augmented_steps
from ..solve.tableau import integrate
from ...kernels import gru_ode as kernels


class GRUODESteps(AdjointSteps):
    """:class:`zoo.fast.solve.adjoint.AdjointSteps` of the GRU-ODE (inputs (dX/dt,)): the
    forward by :func:`zoo.fast.solve.tableau.integrate` with the gates' products stacked, the
    backward by the module's product, keeping each stage's p̄, x̃, ĥ and r ⊙ ĥ until its step's
    weight gradients."""

    def __init__(self, cell: GRUODECell, channels: int):
        self.cell, self.channels = cell, channels

    def _weights(self):
        """W_rzh (3H × u), U_rz (2H × H), b_rz (2H,), U_h (H × H), b_h (H,)."""
        cell = self.cell
        w = torch.cat([cell.w_r.weight, cell.w_z.weight, cell.w_h.weight])
        u_rz = torch.cat([cell.u_r.weight, cell.u_z.weight])
        b_rz = torch.cat([cell.u_r.bias, cell.u_z.bias])
        return w, u_rz, b_rz, cell.u_h.weight, cell.u_h.bias

    def forward(self, block, index, y0, inputs, keep):
        weights, position = self._weights(), index.tolist()
        stage_dx = inputs[0].movedim(1, 0)
        work = _Work(y0, self.channels, weights[3].shape[0])

        def f(n: int, s: int, y: torch.Tensor) -> torch.Tensor:
            return work.field(y, stage_dx[position[n][s]], weights)
        return integrate(block.tableau, f, y0, block.dt.to(y0.dtype))

    def backward(self, block, index, y, a, inputs, params):
        weights = self._weights()
        w, u_rz, _, u_h, _ = weights
        stage_dx, position = inputs[0].movedim(1, 0), index.tolist()
        stages, hidden, u = block.tableau.stages, u_h.shape[0], self.channels
        # a step's stages' x̃, ĥ, r ⊙ ĥ and c p̄, kept for its weight gradients
        xs, hs, rhs = (y.new_empty(stages, len(y), m) for m in (u, hidden, hidden))
        ps = y.new_empty(stages, len(y), 3 * hidden)
        work = [_Work(y, u, hidden, (xs[s], hs[s], rhs[s], ps[s])) for s in range(stages)]
        w_bar_t, u_rz_bar_t, u_h_bar_t = (y.new_zeros(m.shape[::-1]) for m in (w, u_rz, u_h))
        b_bar = y.new_zeros(3 * hidden)

        def stage(n: int, s: int, y_s: torch.Tensor, a_s: torch.Tensor, c: float):
            at, y_s = work[s], y_s.contiguous()  # the kernels read rows of y_s and a_s
            f = at.field(y_s, stage_dx[position[n][s]], weights, a_s.contiguous())
            y_bar = torch.empty_like(y_s)
            kernels.reset(torch.mm(at.p[:, 2 * hidden:], u_h), at.rz, at.h, at.p, at.h_bar)
            y_bar[:, :u] = torch.mm(at.p, w)
            h_bar = torch.addmm(at.h_bar, at.p[:, :2 * hidden], u_rz)
            kernels.finish(h_bar, y_s[:, u:], y_bar[:, u:], at.p, c)
            return f, y_bar

        def weight_gradients(n: int) -> None:
            p = ps.view(-1, 3 * hidden)
            w_bar_t.addmm_(xs.view(-1, u).t(), p)
            u_rz_bar_t.addmm_(hs.view(-1, hidden).t(), p[:, :2 * hidden])
            u_h_bar_t.addmm_(rhs.view(-1, hidden).t(), p[:, 2 * hidden:])
            b_bar.add_(p.sum(0))

        y, a = augmented_steps(block, y, a, stage, weight_gradients)
        cell, w_bar, u_rz_bar = self.cell, w_bar_t.t(), u_rz_bar_t.t()
        pairs = [(cell.w_r.weight, w_bar[:hidden]), (cell.w_z.weight, w_bar[hidden:2 * hidden]),
                 (cell.w_h.weight, w_bar[2 * hidden:]), (cell.u_r.weight, u_rz_bar[:hidden]),
                 (cell.u_z.weight, u_rz_bar[hidden:]), (cell.u_h.weight, u_h_bar_t.t()),
                 (cell.u_r.bias, b_bar[:hidden]), (cell.u_z.bias, b_bar[hidden:2 * hidden]),
                 (cell.u_h.bias, b_bar[2 * hidden:])]
        direct = {id(p): g for p, g in pairs}
        return y, a, [None], [direct.get(id(p)) for p in params]


class _Work:
    """One stage's buffers, reused from step to step: x̃, ĥ, r ⊙ ĥ and p̄ (views of the step's
    stacks in the backward, ``kept``), [r, z], g, and the state's gradient before the gates'
    product (h_bar)."""

    def __init__(self, y: torch.Tensor, channels: int, hidden: int,
                 kept: tuple[torch.Tensor, ...] | None = None):
        batch = len(y)
        self.channels = channels
        self.x, self.h, self.rh, self.p = kept or (
            y.new_empty(batch, channels), y.new_empty(batch, hidden),
            y.new_empty(batch, hidden), y.new_empty(batch, 3 * hidden))
        self.g, self.h_bar = y.new_empty(batch, hidden), y.new_empty(batch, hidden)
        self.rz = y.new_empty(batch, 2 * hidden)

    def field(self, y: torch.Tensor, dx: torch.Tensor, weights,
              a: torch.Tensor | None = None) -> torch.Tensor:
        """f(y, dX) = [dX, k]; with the adjoint ``a`` also p̄_h, p̄_z and h_bar (kernels.field)."""
        w, u_rz, b_rz, u_h, b_h = weights
        u = self.channels
        x = self.x.copy_(y[:, :u])
        h = torch.clamp(y[:, u:], -1, 1, out=self.h)
        xw = torch.mm(x, w.t())
        kernels.gates(torch.addmm(b_rz, h, u_rz.t(), out=self.rz), xw, h, self.rh)
        torch.addmm(b_h, self.rh, u_h.t(), out=self.g)
        f = torch.empty_like(y)
        f[:, :u] = dx
        kernels.field(self.g, xw, self.rz, h, dx[:, 0].contiguous(), f[:, u:],
                      None if a is None else a[:, u:], self.p, self.h_bar)
        return f
