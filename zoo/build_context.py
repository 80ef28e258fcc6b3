"""What a field family needs to know to build itself: data shape, task and how to integrate."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .series import TaskInfo


@dataclass(frozen=True)
class DataShape:
    """Sizes of the data a model is built for (stored in checkpoints to rebuild the model)."""

    input_channels: int
    static_channels: int
    seq_len: int
    task: TaskInfo


class _Counted(nn.Module):
    """Wraps a vector field f(t, y) and counts its evaluations (NFE)."""

    def __init__(self, func: nn.Module, counter: Integrator):
        super().__init__()
        self.func = func
        self.counter = counter
        for name in ("callback_step", "callback_accept_step", "callback_reject_step"):
            if hasattr(func, name):  # torchdiffeq's step callbacks reach the wrapped field
                setattr(self, name, getattr(func, name))

    def forward(self, t: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        self.counter.nfe += 1
        return self.func(t, y)


class Integrator:
    """Solves dy/dt = func(t, y) with the spec's solver and backprop mode, counting NFE."""

    def __init__(self, solver: Any, backprop: Any):
        self.solver = solver
        self.backprop = backprop
        self.nfe = 0
        #: whether solves must return every grid time (the adjoint's ``outputs: grid``)
        self.dense_outputs = getattr(backprop, "outputs", "needed") == "grid"

    #: whether :func:`zoo.fields.trajectory.solve_at` may pass ``rows`` (one output time per
    #: sample) and take the per-sample states back (the fast adjoint does)
    selects_rows = False

    def __call__(self, func: nn.Module, y0: torch.Tensor, t: torch.Tensor,
                 grid: torch.Tensor | None = None) -> torch.Tensor:
        """Solution at every time in ``t``: shape (len(t), *y0.shape). ``grid`` (default ``t``)
        is the time grid that sets the default fixed step and the steps themselves
        (:func:`fixed_step_reach`), so asking for fewer output times leaves the forward
        numbers unchanged."""
        kwargs = self.solver.odeint_kwargs(t if grid is None else grid)
        step = (kwargs.get("options") or {}).get("step_size")
        asked = t if grid is None or step is None else fixed_step_reach(t, grid, step)
        return self.backprop.odeint(_Counted(func, self), y0, asked, **kwargs)[:len(t)]


def fixed_step_reach(t: torch.Tensor, grid: torch.Tensor, step: float) -> torch.Tensor:
    """The times to request from a fixed-step solve so that it reaches the outputs ``t`` (a
    subset of ``grid``) on the steps of a solve over all of ``grid``.

    torchdiffeq steps on g_i = t_0 + i·h and shortens its last step to end at the last time it
    is asked for. Asked for all of ``grid`` it ends that step at grid[−1] and reads t[−1]
    inside its step n by linear interpolation; asked only for ``t`` it would end a shorter
    step at t[−1], and a sample's value would depend on the other samples of its batch. So
    ``t`` gains g_k, the first step point of the whole grid at or after t[−1], unless t[−1]
    is a step point itself (integer grids with h = 1, say: ``t`` is returned unchanged).
    """
    from torchdiffeq._impl.solvers import FixedGridODESolver

    points = FixedGridODESolver._grid_constructor_from_step_size(step)(None, None, grid)
    k = int(torch.searchsorted(points, t[-1:]))
    return t if bool(points[k] == t[-1]) else torch.cat([t, points[k:k + 1]])


@dataclass
class BuildContext:
    """Handed to :meth:`FieldConfig.build` (``initial`` is the resolved ``model.initial``)."""

    spec: Any
    shape: DataShape
    integrate: Integrator

    @property
    def input_channels(self) -> int:
        return self.spec.model.control.channels(self.shape.input_channels)

    @property
    def initial(self) -> Any:
        init = self.spec.model.initial
        if init.kind == "auto":
            return init.model_copy(update={"kind": self.spec.model.field.initials[0]})
        return init
