"""A field body that is one solve: z(t0), then dz/dt = func(t, z) over ``path.grid_points``."""

from __future__ import annotations

import torch
from torch import nn

from ..build_context import BuildContext
from ..components import NO_FAST_PATH
from ..fast.adaptive import ADAPTIVE, AdaptiveSolve
from ..fast.adjoint import AdjointSteps, FastAdjoint, FieldSteps
from ..fast.choice import implementation
from ..fast.lean import Stepper, field_stepper, lean_features
from .initial import output_index, solve_at, step_states


class SolvedBody(nn.Module):
    """Features = z at each series' final index (or at every observation time for per-step tasks).

    Subclasses give :meth:`func` (the right-hand side for one path) and may override :meth:`z0`.
    A subclass with ``has_fast_path`` also splits the field into :meth:`stage_inputs` (the
    state-independent part, evaluated at all stage times in one call) and :meth:`stage_field`
    (the rest), run by :func:`zoo.fast.lean.lean_features` when ``implementation_used`` is
    ``"fast"`` (by :class:`zoo.fast.adjoint.FastAdjoint` with backprop ``adjoint``);
    :meth:`stepper` and :meth:`adjoint_steps` may replace the loops with the field's own.
    A subclass with ``has_adaptive_fast_path`` runs the adaptive methods of
    :data:`zoo.fast.adaptive.ADAPTIVE` (``dopri5``, backprop ``direct``) on the same split, by
    :class:`zoo.fast.adaptive.AdaptiveSolve`.
    """

    has_fast_path = False
    has_adaptive_fast_path = False

    def __init__(self, ctx: BuildContext, initial: nn.Module, vector_field: nn.Module,
                 features: int):
        super().__init__()
        self.integrate = ctx.integrate
        self.per_step = ctx.shape.task.per_step
        self.initial = initial
        self.vector_field = vector_field
        self.features = features
        self.implementation_used = (
            implementation(ctx, fast_adjoint=True, adaptive=self.has_adaptive_fast_path)
            if self.has_fast_path else NO_FAST_PATH)
        method = getattr(getattr(ctx.spec.model.solver, "method", None), "value", None)
        self.adaptive = ctx.spec.model.solver.kind == "torchdiffeq" and method in ADAPTIVE

    def func(self, path) -> nn.Module:
        raise NotImplementedError

    def stage_inputs(self, path, times: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """State-independent inputs at the stage times (M,), each (B, M, ·)."""
        raise NotImplementedError

    def stage_field(self, z: torch.Tensor, *inputs: torch.Tensor) -> torch.Tensor:
        """dz/dt from the state and one stage's inputs (each (B, ·))."""
        raise NotImplementedError

    def stepper(self) -> Stepper:
        """The fast path's stepping loop: :meth:`stage_field` under autograd by default."""
        return field_stepper(self.stage_field)

    def adjoint_steps(self) -> AdjointSteps:
        """The fast adjoint's steps: :meth:`stage_field` under autograd by default."""
        return FieldSteps(self.stage_field)

    def z0(self, path, batch) -> torch.Tensor:
        return self.initial(path, batch)

    def forward(self, path, batch) -> torch.Tensor:
        z0 = self.z0(path, batch)
        if self.implementation_used != "fast":
            solve, func = self.integrate, self.func(path)
        elif self.integrate.backprop.kind == "adjoint":
            solve, func = FastAdjoint(self.integrate, lambda t: self.stage_inputs(path, t),
                                      self.adjoint_steps(),
                                      self.vector_field.parameters()), None
        elif self.adaptive:
            solve, func = AdaptiveSolve(self.integrate, lambda t: self.stage_inputs(path, t),
                                        self.stage_field), None
        else:
            return lean_features(self.integrate, path, batch, z0,
                                 lambda t: self.stage_inputs(path, t), self.stepper(),
                                 self.per_step)
        if self.per_step:
            return step_states(solve_at(solve, func, z0, path), path, batch)
        return solve_at(solve, func, z0, path, output_index(path, batch))
