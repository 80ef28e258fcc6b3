"""The continuous adjoint on the lean path: torchdiffeq's ``odeint_adjoint``, step for step.

Forward: the lean steps without a graph (the control and the state-independent part of the
field at a block of steps' stage times in one call), keeping only the states at the output
times t_0 < … < t_K. Backward, as ``OdeintAdjointMethod.backward`` (torchdiffeq
``_impl/adjoint.py``): for i = K … 1 the augmented state (y, a, θ̄) is solved from t_i to
t_{i−1} with the forward tableau on torchdiffeq's grid for that segment, which steps in negated
time τ = −t from −t_i by h, its last point −t_{i−1} (``_check_inputs`` reverses the time,
``_grid_constructor_from_step_size`` builds the grid). With f_j = f(y_j, u(t_j)) and
g_j = (∂f/∂y)ᵀ a_j at the stages j of a step of size h:

    y_s = y_n − h Σ_j a_sj f_j,      a_s = a_n + h Σ_j a_sj g_j,
    y_{n+1} = y_n − h Σ_s b_s f_s,   a_{n+1} = a_n + h Σ_s b_s g_s,
    θ̄ += h Σ_s b_s (∂f/∂θ)ᵀ a_s,

then y restarts from the forward state y(t_{i−1}) and a += ∂L/∂y(t_{i−1}); ∂L/∂y_0 = a at t_0.
The parameters θ enter f directly and through the state-independent inputs u, whose part of
θ̄ is one backward pass through u per block of steps with the cotangents
ū_j = h b_j (∂f/∂u_j)ᵀ a_j. Memory holds one block's inputs and their graph, whatever the
length. A field that ignores the state (Hebb's rule) has g = 0 and a constant a on a segment,
so a block's stages are evaluated and differentiated in one call each way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch.autograd.function import once_differentiable
from torchdiffeq._impl.solvers import FixedGridODESolver

from .grid import FixedGrid
from .lean import StageInputs, field_stepper
from .tableau import Tableau, combine

#: steps whose stage inputs are evaluated (and differentiated) in one call
BLOCK_STEPS = 64
#: dy/dt from the state and one stage's inputs (each (B, ·)); a state-free field also takes
#: inputs with a stage axis (B, M, ·) and ignores the state (None)
StageField = Callable[..., torch.Tensor]


class FastAdjoint:
    """Stands in for :class:`zoo.build_context.Integrator` in :func:`zoo.fields.initial.solve_at`:
    solves with the integrator's solver by :func:`adjoint_solve` over a body's stage split
    (``func`` is ignored)."""

    def __init__(self, integrator, stage_inputs: StageInputs, field: StageField,
                 params: Sequence[torch.Tensor], state_free: bool = False):
        self.integrator, self.stage_inputs, self.field = integrator, stage_inputs, field
        self.params = tuple(p for p in params if p.requires_grad)
        self.state_free = state_free
        self.dense_outputs = integrator.dense_outputs

    def __call__(self, func, y0: torch.Tensor, t: torch.Tensor,
                 grid: torch.Tensor | None = None) -> torch.Tensor:
        return adjoint_solve(self.integrator, t, y0, self.stage_inputs, self.field,
                             self.params, grid, self.state_free)


def adjoint_solve(integrator, t: torch.Tensor, y0: torch.Tensor, stage_inputs: StageInputs,
                  field: StageField, params: tuple[torch.Tensor, ...],
                  grid: torch.Tensor | None = None, state_free: bool = False) -> torch.Tensor:
    """y at the output times ``t`` (T, B, ...) with the gradients of torchdiffeq's
    ``odeint_adjoint(func, y0, t, adjoint_params=params)`` (fixed step from ``grid``, default
    ``t``); counts the forward and backward evaluations in ``integrator.nfe``."""
    plan = FixedGrid.plan(integrator, t, grid)
    problem = _Problem(plan, integrator, stage_inputs, field, params, state_free)
    return _Adjoint.apply(problem, y0, *params)


class _Problem:
    """What the autograd function needs besides tensors: the forward grid and the field."""

    def __init__(self, plan: FixedGrid, integrator, stage_inputs: StageInputs,
                 field: StageField, params: tuple[torch.Tensor, ...], state_free: bool):
        self.plan, self.integrator = plan, integrator
        self.stage_inputs, self.field, self.params = stage_inputs, field, params
        self.state_free = state_free

    def segment(self, i: int) -> FixedGrid:
        """torchdiffeq's grid for the backward solve from t_i to t_{i−1}, in τ = −t."""
        t = -self.plan.t[[i, i - 1]]
        points = FixedGridODESolver._grid_constructor_from_step_size(self.plan.step)(None, None, t)
        return FixedGrid(points, t, self.plan.tableau, self.plan.step)


def _blocks(grid: FixedGrid):
    """Sub-grids of at most BLOCK_STEPS steps, in order, with their first step's number."""
    for start in range(0, grid.steps, BLOCK_STEPS):
        stop = min(start + BLOCK_STEPS, grid.steps)
        yield start, FixedGrid(grid.points[start:stop + 1], grid.t, grid.tableau, grid.step)


class _Adjoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, problem: _Problem, y0: torch.Tensor, *params: torch.Tensor):
        plan = problem.plan
        keep = set(plan.points_read())
        states: list[torch.Tensor | None] = [y0] + [None] * plan.steps
        y = y0
        for start, block in _blocks(plan):
            times, index = block.distinct_stages(y0.dtype)
            inputs = problem.stage_inputs(times)
            dt = block.dt.to(y0.dtype)
            if problem.state_free:
                ys = _state_free_steps(problem.field, block.tableau, dt, index, y, inputs)
            else:
                ys = field_stepper(problem.field)(block.tableau, dt, index, y, inputs)
            for k, state in enumerate(ys[1:], start + 1):
                if k in keep:
                    states[k] = state
            y = ys[-1]
        ys = plan.outputs(states)
        ctx.problem = problem
        ctx.save_for_backward(ys)
        return ys

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_ys: torch.Tensor):
        problem, (ys,) = ctx.problem, ctx.saved_tensors
        p_bar = [torch.zeros_like(p) for p in problem.params]
        y, a = ys[-1], grad_ys[-1]
        for i in range(len(ys) - 1, 0, -1):
            segment = problem.segment(i)
            problem.integrator.nfe += segment.steps * segment.tableau.stages
            for _, block in _blocks(segment):
                y, a = _backward_block(problem, block, y, a, p_bar)
            y, a = ys[i - 1], a + grad_ys[i - 1]
        return None, a, *p_bar


def _state_free_steps(field: StageField, tableau: Tableau, dt: torch.Tensor,
                      index: torch.Tensor, y0: torch.Tensor, inputs) -> list[torch.Tensor]:
    """y_{n+1} = y_n + h_n Σ_s b_s f(u_{n,s}) with every stage's f from one call."""
    increments = _stage_weights(tableau, dt, index, inputs[0].shape[1]) @ \
        field(None, *inputs).movedim(1, 0).flatten(1)
    return list(torch.cat([y0.flatten()[None], increments]).cumsum(0).view(-1, *y0.shape))


def _stage_weights(tableau: Tableau, dt: torch.Tensor, index: torch.Tensor,
                   distinct: int) -> torch.Tensor:
    """(N, U) weights h_n b_s of each step's stages at their distinct stage positions."""
    weights = dt.new_zeros(len(dt), distinct)
    b = dt.new_tensor(tableau.b)
    weights.scatter_add_(1, index.to(dt.device), dt[:, None] * b)
    return weights


def _backward_block(problem: _Problem, block: FixedGrid, y: torch.Tensor, a: torch.Tensor,
                    p_bar: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """The augmented steps over one block of a backward segment (τ grid); adds θ̄ to p_bar."""
    times, index = block.distinct_stages(y.dtype)
    dt = block.dt.to(y.dtype)
    with torch.enable_grad():
        inputs = problem.stage_inputs(-times)
    if problem.state_free:
        # a is constant, ū_j = h b_j a at every stage; y is not needed (f does not read it,
        # and it restarts from the forward state at t_{i−1})
        weights = _stage_weights(block.tableau, dt, index, len(times)).sum(0)
        with torch.enable_grad():
            f = problem.field(None, *inputs)
        cotangent = weights.view(1, -1, *(1,) * (a.dim() - 1)) * a.unsqueeze(1)
        _accumulate(p_bar, torch.autograd.grad(f, problem.params, cotangent, allow_unused=True))
        return y, a
    leaves = [u.detach().requires_grad_() for u in inputs]
    bars = [torch.zeros_like(u) for u in leaves]
    tableau, position = block.tableau, index.tolist()
    for n, h in enumerate(dt.unbind(0)):
        fs: list[torch.Tensor] = []
        gs: list[torch.Tensor] = []
        for s, row in enumerate(tableau.a):
            fy, ga = combine(row, fs), combine(row, gs)
            y_s = y if fy is None else y - h * fy
            a_s = a if ga is None else a + h * ga
            u = position[n][s]
            with torch.enable_grad():
                z = y_s.detach().requires_grad_()
                stage = [x[:, u] for x in leaves]
                f = problem.field(z, *stage)
                g, *rest = torch.autograd.grad(f, (z, *stage, *problem.params), a_s,
                                               allow_unused=True)
            fs.append(f.detach())
            gs.append(torch.zeros_like(a) if g is None else g)
            weight = h * tableau.b[s]
            if tableau.b[s]:
                for bar, grad in zip(bars, rest[:len(stage)]):
                    if grad is not None:
                        bar[:, u] += weight * grad
                _accumulate(p_bar, rest[len(stage):], weight)
        y = y - h * combine(tableau.b, fs)
        a = a + h * combine(tableau.b, gs)
    differentiable = [i for i, u in enumerate(inputs) if u.requires_grad]
    if differentiable:
        _accumulate(p_bar, torch.autograd.grad([inputs[i] for i in differentiable],
                                               problem.params, [bars[i] for i in differentiable],
                                               allow_unused=True))
    return y, a


def _accumulate(totals: list[torch.Tensor], grads, weight: torch.Tensor | float = 1.0) -> None:
    for total, grad in zip(totals, grads):
        if grad is not None:
            total.add_(grad if isinstance(weight, float) and weight == 1.0 else weight * grad)
