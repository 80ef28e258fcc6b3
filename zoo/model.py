"""A zoo model = control (observations -> path) + field body (path -> features) + readout head."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .build_context import BuildContext, DataShape, Integrator
from .series import Batch


class ZooModel(nn.Module):
    """``forward(batch)`` builds the batch's path, runs the field body, applies the head."""

    def __init__(self, spec: Any, shape: DataShape):
        super().__init__()
        self.spec = spec
        self.shape = shape
        self.control = spec.model.control
        self.integrator = Integrator(spec.model.solver, spec.model.backprop)
        self.body = spec.model.field.build(BuildContext(spec, shape, self.integrator))
        self.head = spec.model.readout.build(self.body.features, shape.task)

    def forward(self, batch: Batch) -> torch.Tensor:
        path = self.control.path(batch.times, batch.coeffs)
        return self.head(self.body(path, batch))

    def field_parameters(self) -> list[nn.Parameter]:
        """Parameters of the vector field proper (the ``penalty_scope: field`` set)."""
        vf = getattr(self.body, "vector_field", self.body)
        return list(vf.parameters())

    def constrain(self) -> None:
        """Project parameters back into their feasible set after an optimiser step, if needed."""
        if hasattr(self.body, "constrain"):
            self.body.constrain()


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
