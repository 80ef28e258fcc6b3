"""A zoo model = control (observations -> path) + field body (path -> features) + readout head."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from .build_context import BuildContext, DataShape, Integrator
from .errors import ZooError
from .fast import attach as attach_fast_path
from .plugin import FieldBody
from .registry import component_failure, failure_text
from .series import Batch


class ZooModel(nn.Module):
    """``forward(batch)`` builds the batch's path, runs the field body, applies the head."""

    def __init__(self, spec: Any, shape: DataShape):
        super().__init__()
        self.spec = spec
        self.shape = shape
        self.control = spec.model.control
        self.integrator = Integrator(spec.model.solver, spec.model.backprop)
        field = spec.model.field
        ctx = BuildContext(spec, shape, self.integrator)
        self.body: FieldBody = _built(field, "fields", lambda: field.build(ctx))
        attach_fast_path(self.body, ctx)
        features = getattr(self.body, "features", None)
        if isinstance(features, bool) or not isinstance(features, int) or features < 1:
            raise component_failure("fields", field.kind, f"its build() returned a "
                                    f"{type(self.body).__name__} whose `features` is "
                                    f"{features!r}; it must be a positive int (the width the "
                                    f"readout reads)")
        self.head = _built(spec.model.readout, "readouts",
                           lambda: spec.model.readout.build(features, shape.task))

    def forward(self, batch: Batch) -> torch.Tensor:
        path = self.control.path(batch.times, batch.coeffs)
        return self.head(self.body(path, batch))

    def field_parameters(self) -> list[nn.Parameter]:
        """Parameters of the vector field proper (the ``penalty_scope: field`` set)."""
        vf = getattr(self.body, "vector_field", self.body)
        return list(vf.parameters())

    def penalty(self) -> torch.Tensor | float:
        """The field's own regulariser (the body's optional ``penalty()``), added to the
        training loss with ``train.weight_penalty``'s; 0 when the body has none."""
        return self.body.penalty() if hasattr(self.body, "penalty") else 0.0

    def constrain(self) -> None:
        """Project parameters back into their feasible set after an optimiser step, if needed."""
        if hasattr(self.body, "constrain"):
            self.body.constrain()


def count_parameters(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def _built(config: Any, group: str, build: Callable[[], nn.Module]) -> nn.Module:
    """``build()``, its failure reported as :func:`registry.component_failure` (user errors
    pass through)."""
    try:
        return build()
    except ZooError:
        raise
    except Exception as exc:
        raise component_failure(group, config.kind, f"build() failed: {failure_text(exc)}"
                                ) from exc
