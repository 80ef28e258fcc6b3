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
length.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch.autograd.function import once_differentiable
from torchdiffeq._impl.solvers import FixedGridODESolver

from .grid import FixedGrid
from .lean import StageInputs, field_stepper
from .tableau import Tableau, combine

#: steps whose stage inputs are evaluated (and differentiated) in one call, at most
BLOCK_STEPS = 64
#: and on the CPU at most this many steps' worth of samples, so that a block's stage inputs
#: of a large batch stay near the cache (batch 1,024: 16 steps)
BLOCK_SAMPLE_STEPS = 16_384


def block_steps(y0: torch.Tensor) -> int:
    """Steps per block for states ``y0`` (B, ...): BLOCK_STEPS, on the CPU no more than
    BLOCK_SAMPLE_STEPS ÷ B (at least one)."""
    if y0.device.type != "cpu":
        return BLOCK_STEPS
    return max(1, min(BLOCK_STEPS, BLOCK_SAMPLE_STEPS // len(y0)))


class AdjointSteps:
    """How a field's steps run, forward and in the augmented backward solve: the extension
    point of the fast adjoint. :class:`FieldSteps` serves any ``stage_field`` under autograd;
    a family may bring its own (:mod:`zoo.fast.fwp.adjoint`). The steps keep states and
    adjoints in their own layout (:meth:`enter`, by default the flat (B, ...) one): the solve
    converts only the initial state, the cotangents and what it returns."""

    def forward(self, block: FixedGrid, index: torch.Tensor, y0: torch.Tensor,
                inputs: tuple[torch.Tensor, ...], keep: set[int]) -> list:
        """The states y_0 … y_N at the block's grid points from y_0 = ``y0`` and the inputs at
        its distinct stage times (stage (n, s) at index[n, s]); only those in ``keep`` and
        y_N need be formed (None elsewhere)."""
        raise NotImplementedError

    def backward(self, block: FixedGrid, index: torch.Tensor, y: torch.Tensor, a: torch.Tensor,
                 inputs: tuple[torch.Tensor, ...], params: tuple[torch.Tensor, ...]
                 ) -> tuple[torch.Tensor, torch.Tensor, list, list]:
        """The augmented steps over a block of a backward segment (τ grid, the inputs at its
        real stage times): (y, a) at its end, the inputs' cotangents Σ h b_s (∂f/∂u)ᵀ a_s
        (None where there is none) and the parameters' direct part Σ h b_s (∂f/∂θ)ᵀ a_s."""
        raise NotImplementedError

    def enter(self, y: torch.Tensor) -> torch.Tensor:
        """Flat states (B, ...) in the steps' layout."""
        return y

    def leave(self, y: torch.Tensor, samples: torch.Tensor | None = None) -> torch.Tensor:
        """The flat states (B, ...) of ``y`` in the steps' layout, or those of ``samples``
        alone (S, ...)."""
        return y if samples is None else y.index_select(0, samples)

    def add(self, y: torch.Tensor, samples: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """``y`` in the steps' layout plus flat ``values`` (S, ...) at ``samples``."""
        return y.index_add(0, samples, values)


#: dy/dt from the state and one stage's inputs (each (B, ·))
StageField = Callable[..., torch.Tensor]


class FieldSteps(AdjointSteps):
    """The steps of a ``stage_field`` f(y, *u): forward without a graph, backward with one
    vector-Jacobian product per stage under autograd."""

    def __init__(self, field: StageField):
        self.field = field

    def forward(self, block, index, y0, inputs, keep):
        return field_stepper(self.field)(block.tableau, block.dt.to(y0.dtype), index, y0, inputs)

    def backward(self, block, index, y, a, inputs, params):
        leaves = [u.detach().requires_grad_() for u in inputs]
        bars = [torch.zeros_like(u) for u in leaves]
        p_bar: list = [None] * len(params)
        position = index.tolist()

        def stage(n: int, s: int, y_s: torch.Tensor, a_s: torch.Tensor, c: float):
            u = position[n][s]
            with torch.enable_grad():
                z = y_s.detach().requires_grad_()
                inputs_s = [x[:, u] for x in leaves]
                f = self.field(z, *inputs_s)
                g, *rest = torch.autograd.grad(f, (z, *inputs_s, *params), a_s,
                                               allow_unused=True)
            if c:
                for bar, grad in zip(bars, rest[:len(inputs_s)]):
                    if grad is not None:
                        bar[:, u].add_(grad, alpha=c)
                _accumulate(p_bar, rest[len(inputs_s):], c)
            return f.detach(), torch.zeros_like(a) if g is None else g

        y, a = augmented_steps(block, y, a, stage)
        return y, a, bars, p_bar


#: (step n, stage s, y_s, a_s, c_s = h b_s) -> (f_s, g_s = (∂f/∂y)ᵀ a_s)
StageAdjoint = Callable[[int, int, torch.Tensor, torch.Tensor, float],
                        tuple[torch.Tensor, torch.Tensor]]


def augmented_steps(block: FixedGrid, y: torch.Tensor, a: torch.Tensor, stage: StageAdjoint,
                    after_step: Callable[[int], None] | None = None
                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, a) after the block's augmented steps (the module's equations): the stage states
    y_s = y_n − h Σ_j a_sj f_j and a_s = a_n + h Σ_j a_sj g_j go to ``stage``, which also adds
    its c_s-weighted cotangents where it keeps them; ``after_step(n)`` ends each step."""
    tableau = block.tableau
    for n, h in enumerate(block.dt.to(y.dtype).tolist()):
        fs: list[torch.Tensor] = []
        gs: list[torch.Tensor] = []
        for s, row in enumerate(tableau.a):
            fy, ga = combine(row, fs), combine(row, gs)
            f, g = stage(n, s, y if fy is None else y - h * fy, a if ga is None else a + h * ga,
                         h * tableau.b[s])
            fs.append(f)
            gs.append(g)
        y = y - h * combine(tableau.b, fs)
        a = a + h * combine(tableau.b, gs)
        if after_step is not None:
            after_step(n)
    return y, a


class FastAdjoint:
    """Stands in for :class:`zoo.build_context.Integrator` in
    :func:`zoo.fields.trajectory.solve_at`: solves with the integrator's solver by
    :func:`adjoint_solve` (``func`` is ignored)."""

    def __init__(self, integrator, stage_inputs: StageInputs, steps: AdjointSteps,
                 params: Sequence[torch.Tensor]):
        self.integrator, self.stage_inputs, self.steps = integrator, stage_inputs, steps
        self.params = tuple(p for p in params if p.requires_grad)
        self.dense_outputs = integrator.dense_outputs

    #: :func:`zoo.fields.trajectory.solve_at` may ask for one output time per sample
    selects_rows = True

    def __call__(self, func, y0: torch.Tensor, t: torch.Tensor,
                 grid: torch.Tensor | None = None, rows: torch.Tensor | None = None
                 ) -> torch.Tensor:
        return adjoint_solve(self.integrator, t, y0, self.stage_inputs, self.steps,
                             self.params, grid, rows)


def adjoint_solve(integrator, t: torch.Tensor, y0: torch.Tensor, stage_inputs: StageInputs,
                  steps: AdjointSteps, params: tuple[torch.Tensor, ...],
                  grid: torch.Tensor | None = None, rows: torch.Tensor | None = None
                  ) -> torch.Tensor:
    """y at the output times ``t`` (T, B, ...), or sample b's at t[rows[b]] alone (B, ...),
    with the gradients of torchdiffeq's ``odeint_adjoint(func, y0, t, adjoint_params=params)``
    (fixed step from ``grid``, default ``t``); counts the forward and backward evaluations in
    ``integrator.nfe``. With ``rows`` no (T, B, ...) stack is formed, forward or backward: a
    sample's cotangent joins the adjoint at its own output time."""
    plan = FixedGrid.plan(integrator, t, grid)
    problem = _Problem(plan, integrator, stage_inputs, steps, params, rows, block_steps(y0))
    return _Adjoint.apply(problem, y0, *params)


class _Problem:
    """What the autograd function needs besides tensors: the forward grid and the steps."""

    def __init__(self, plan: FixedGrid, integrator, stage_inputs: StageInputs,
                 steps: AdjointSteps, params: tuple[torch.Tensor, ...],
                 rows: torch.Tensor | None, block: int):
        self.plan, self.integrator = plan, integrator
        self.stage_inputs, self.steps, self.params = stage_inputs, steps, params
        self.rows, self.block = rows, block
        #: with ``rows``, the samples read at each output time that any is read at
        self.read_at = {} if rows is None else {
            i: (rows == i).nonzero().squeeze(1) for i in torch.unique(rows).tolist()}
        #: with ``rows``, the forward states at the output times, where the backward
        #: segments restart (without, the output itself, saved for the backward pass)
        self.restarts: list[torch.Tensor] = []

    def picked(self, at_outputs: list[torch.Tensor]) -> torch.Tensor:
        """Sample b's flat state at output time rows[b] (B, ...), from the states at the output
        times in the steps' layout."""
        picked = None
        for i, samples in self.read_at.items():
            values = self.steps.leave(at_outputs[i], samples)
            if picked is None:
                picked = values.new_empty(len(self.rows), *values.shape[1:])
            picked.index_copy_(0, samples, values)
        return picked

    def cotangent(self, a: torch.Tensor | None, grad: torch.Tensor, i: int) -> torch.Tensor:
        """a + ∂L/∂y(t_i) in the steps' layout, from the output's gradient ``grad`` (a None:
        0)."""
        steps = self.steps
        if self.rows is None:
            return steps.enter(grad[i]) if a is None else a + steps.enter(grad[i])
        a = steps.enter(grad.new_zeros(grad.shape)) if a is None else a
        samples = self.read_at.get(i)
        return a if samples is None else steps.add(a, samples, grad.index_select(0, samples))

    def segment(self, i: int) -> FixedGrid:
        """torchdiffeq's grid for the backward solve from t_i to t_{i−1}, in τ = −t."""
        t = -self.plan.t[[i, i - 1]]
        points = FixedGridODESolver._grid_constructor_from_step_size(self.plan.step)(None, None, t)
        return FixedGrid(points, t, self.plan.tableau, self.plan.step)


def _blocks(grid: FixedGrid, size: int):
    """Sub-grids of at most ``size`` steps, in order, with their first step's number."""
    for start in range(0, grid.steps, size):
        stop = min(start + size, grid.steps)
        yield start, FixedGrid(grid.points[start:stop + 1], grid.t, grid.tableau, grid.step)


class _Adjoint(torch.autograd.Function):
    @staticmethod
    def forward(ctx, problem: _Problem, y0: torch.Tensor, *params: torch.Tensor):
        plan = problem.plan
        keep = set(plan.points_read())
        steps = problem.steps
        y = steps.enter(y0)
        states: list[torch.Tensor | None] = [y] + [None] * plan.steps
        for start, block in _blocks(plan, problem.block):
            times, index = block.distinct_stages(y0.dtype)
            ys = steps.forward(block, index, y, problem.stage_inputs(times),
                                {k - start for k in keep})
            for k, state in enumerate(ys[1:], start + 1):
                if k in keep:
                    states[k] = state
            y = ys[-1]
        restarts = plan.at_outputs(states)
        ctx.problem = problem
        if problem.rows is None:
            ys = torch.stack([steps.leave(y) for y in restarts])
            ctx.save_for_backward(ys)
            return ys
        problem.restarts = restarts
        return problem.picked(restarts)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_ys: torch.Tensor):
        problem = ctx.problem
        params, steps = problem.params, problem.steps
        if problem.rows is None:
            flat = ctx.saved_tensors[0]
            count = len(flat)

            def restart(i: int) -> torch.Tensor:
                return steps.enter(flat[i])
        else:
            restart, count = problem.restarts.__getitem__, len(problem.restarts)
        p_bar = [torch.zeros_like(p) for p in params]
        y, a = restart(count - 1), problem.cotangent(None, grad_ys, count - 1)
        for i in range(count - 1, 0, -1):
            segment = problem.segment(i)
            problem.integrator.nfe += segment.steps * segment.tableau.stages
            for _, block in _blocks(segment, problem.block):
                times, index = block.distinct_stages(grad_ys.dtype)
                with torch.enable_grad():
                    inputs = problem.stage_inputs(-times)
                y, a, bars, direct = steps.backward(
                    block, index, y, a, tuple(u.detach() for u in inputs), params)
                _accumulate(p_bar, direct)
                pairs = [(u, bar) for u, bar in zip(inputs, bars)
                         if u.requires_grad and bar is not None]
                if pairs:
                    _accumulate(p_bar, torch.autograd.grad(
                        [u for u, _ in pairs], params, [bar for _, bar in pairs],
                        allow_unused=True))
            y, a = restart(i - 1), problem.cotangent(a, grad_ys, i - 1)
        problem.restarts = []
        return None, steps.leave(a), *p_bar


def stage_weights(tableau: Tableau, dt: torch.Tensor, index: torch.Tensor,
                   distinct: int) -> torch.Tensor:
    """(N, U) weights h_n b_s of each step's stages at their distinct stage positions."""
    weights = dt.new_zeros(len(dt), distinct)
    b = dt.new_tensor(tableau.b)
    weights.scatter_add_(1, index.to(dt.device), dt[:, None] * b)
    return weights


def _accumulate(totals: list, grads, weight: float = 1.0) -> None:
    """totals[i] += weight · grads[i] where a gradient exists (a None total takes it)."""
    for i, grad in enumerate(grads):
        if grad is None:
            continue
        if totals[i] is None:
            totals[i] = grad if weight == 1.0 else weight * grad
        else:
            totals[i].add_(grad, alpha=weight)
