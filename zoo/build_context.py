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

    def __call__(self, func: nn.Module, y0: torch.Tensor, t: torch.Tensor,
                 grid: torch.Tensor | None = None) -> torch.Tensor:
        """Solution at every time in ``t``: shape (len(t), *y0.shape). ``grid`` (default ``t``)
        is the time grid that sets the default fixed step, so asking for fewer output times
        leaves the steps, and the numbers, unchanged."""
        kwargs = self.solver.odeint_kwargs(t if grid is None else grid)
        return self.backprop.odeint(_Counted(func, self), y0, t, **kwargs)


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
