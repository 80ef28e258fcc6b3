"""Log neural CDE of Walker et al. (ICML 2024; docs/sources.md#lncde): the log-ODE method of
depth 1 or 2 applied to a neural CDE dh = f(h) dX.

On window i of the ``logsig`` control (one unit of time, s ∈ [i, i+1]):

    dh/ds = Σ_j f_j(h) λ¹_j + Σ_{j<k} [f_j, f_k](h) λ²_jk,   [f_j, f_k] = (J f_k) f_j − (J f_j) f_k

with λ¹ the window's increments and λ² its Lévy areas (the depth-2 Lyndon words jk, j < k, in
the order of the control's channels); depth 1 drops the brackets. f(h) ∈ R^{h × C} is an MLP
reshaped to its C columns f_j (LNCDE ``models/LogNeuralCDEs.py:78-86, 116``): Linear(h → w),
(``layers`` − 1) × [SiLU, Linear(w → w)], SiLU, Linear(w → C·h), tanh (``models/NeuralCDEs.py:
49-57``), every weight and bias divided by ``init_scale`` after PyTorch's default initialisation
(``NeuralCDEs.py:59-79``). The brackets are C Jacobian-vector products J f · f_j
(``LogNeuralCDEs.py:123-133``). h(0) = Linear(x0), x0 the first raw observation
(``LogNeuralCDEs.py:91, 111``); the features are h at the end of each series' last window.

Each window drives the state once, on [i, i+1] (the solve ends at grid point L, not L+1). The
drive is left-continuous, window i on (i, i+1] and window 0 at 0, as the code reads its intervals
(``searchsorted``, side left, ``LogNeuralCDEs.py:114-115``): a solver stage on a boundary s = i
reads window i − 1. With another control the drive is dX/dt, depth 1: the plain neural CDE with
this field.

Regulariser (LNCDE ``train.py:78-93``): λ Σ_layers (mean_r ‖W_r‖₂ + ‖b‖₂) over the MLP's linear
layers (rows W_r: one per output unit), added to the training loss by :meth:`LogNCDE.penalty`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from ..build_context import BuildContext
from .body import Body
from .trajectory import output_index, solve_at


class LogNCDEField(nn.Module):
    """f(h) as its C columns, (..., C, h): tanh(MLP(h)) reshaped, SiLU hidden activations."""

    def __init__(self, channels: int, hidden: int, width: int, layers: int, init_scale: float):
        super().__init__()
        self.channels, self.hidden = channels, hidden
        sizes = [hidden] + [width] * layers + [hidden * channels]
        self.linears = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))
        with torch.no_grad():
            for linear in self.linears:
                linear.weight.div_(init_scale)
                linear.bias.div_(init_scale)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        z = h
        for linear in self.linears[:-1]:
            z = F.silu(linear(z))
        return torch.tanh(self.linears[-1](z)).unflatten(-1, (self.channels, self.hidden))

    def lip2(self) -> torch.Tensor:
        """Σ_layers (mean_r ‖W_r‖₂ + ‖b‖₂): the code's Lip(2) regulariser before λ."""
        return sum(linear.weight.norm(dim=-1).mean() + linear.bias.norm()
                   for linear in self.linears)


def lie_brackets(field: nn.Module, h: torch.Tensor, columns: torch.Tensor, first: torch.Tensor,
                 second: torch.Tensor) -> torch.Tensor:
    """[f_j, f_k](h) = (J f_k) f_j − (J f_j) f_k for each pair (j, k) = (first[p], second[p]):
    (P, B, h) from h (B, h) and columns = field(h) (B, C, h), by C Jacobian-vector products."""
    def along(v: torch.Tensor) -> torch.Tensor:
        return torch.func.jvp(field, (h,), (v,))[1]

    jf = torch.func.vmap(along)(columns.movedim(-2, 0))  # jf[j, b, k] = (J f_k) f_j
    return jf[first, :, second] - jf[second, :, first]


class LogODEFunc(nn.Module):
    """dh/ds = f(h) λ¹(s) + Σ_p [f_j, f_k](h) λ²_p(s); ``drive(s)`` is (B, C + P)."""

    def __init__(self, field: LogNCDEField, drive: Callable[[torch.Tensor], torch.Tensor],
                 first: torch.Tensor, second: torch.Tensor):
        super().__init__()
        self.field, self.drive = field, drive
        self.first, self.second = first, second

    def forward(self, s: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        drive = self.drive(s)
        columns = self.field(h)
        c = columns.shape[-2]
        dh = torch.einsum("bch,bc->bh", columns, drive[:, :c])
        if self.first.numel():
            brackets = lie_brackets(self.field, h, columns, self.first, self.second)
            dh = dh + torch.einsum("pbh,bp->bh", brackets, drive[:, c:])
        return dh


@dataclass
class _Grid:
    """The times a solve runs over (what :func:`zoo.fields.trajectory.solve_at` reads)."""

    grid_points: torch.Tensor


class LogNCDE(Body):
    """h(0) from the initial state, the log-ODE solve over the windows, h at each final window."""

    def __init__(self, ctx: BuildContext, initial: nn.Module, field: LogNCDEField, depth: int,
                 windows: bool, penalty: float):
        super().__init__()
        self.integrate = ctx.integrate
        self.per_step = ctx.shape.task.per_step
        self.initial, self.vector_field = initial, field
        self.features = field.hidden
        self.windows, self.lambd = windows, penalty
        pairs = torch.triu_indices(field.channels, field.channels, 1) if depth == 2 else \
            torch.zeros(2, 0, dtype=torch.long)
        self.register_buffer("first", pairs[0], persistent=False)
        self.register_buffer("second", pairs[1], persistent=False)

    def penalty(self) -> torch.Tensor | float:
        """λ · Lip(2) term of the vector field, added to the training loss."""
        return self.lambd * self.vector_field.lip2() if self.lambd else 0.0

    def drive(self, path) -> Callable[[torch.Tensor], torch.Tensor]:
        """The window's log-signature, window i on (i, i+1] and window 0 at 0; else dX/dt."""
        if not self.windows:
            return path.derivative
        return lambda s: path.evaluate((torch.ceil(s) - 1).clamp(min=0))

    def generic(self, path, batch) -> torch.Tensor:
        h0 = self.initial(path, batch)
        func = LogODEFunc(self.vector_field, self.drive(path), self.first, self.second)
        grid = path.grid_points
        if self.windows:
            grid = grid[:path.pieces + 1]
        last = grid.shape[0] - 1
        if self.per_step:
            steps = torch.arange(batch.times.shape[0], device=grid.device)
            rows = path.map_index(steps) if hasattr(path, "map_index") else steps
            states = solve_at(self.integrate, func, h0, _Grid(grid))
            return states[rows.clamp(max=last)].transpose(0, 1)
        rows = output_index(path, batch).clamp(max=last)
        return solve_at(self.integrate, func, h0, _Grid(grid), rows)
