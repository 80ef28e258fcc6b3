"""Matrix Neural CDE: the baseline of paper c (the torchcde example's vector field).

dh = tanh(W_2 ReLU(W_1 h + b_1) + b_2) dX, with W_1: h→h and W_2: h→u·h reshaped to (h × u)
(paper c §3.1; docs/sources.md#jac-matrix-ncde). This is Kidger's FinalTanh with one hidden
layer of width h, so it reuses :class:`zoo.fields.ncde.FinalTanh`. PyTorch's default
initialisation, h(t0) = 0 and hidden 128 as in paper c; ``model.initial.kind:
first_observation`` gives the torchcde example's h(t0) = Linear(X(t0)). Solver as for the
``jacobian`` field (Dopri5, 1e-3, backprop ``direct``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from ..build_context import BuildContext
from ..components import FieldConfig
from ..limits import Width
from .cde_body import CDEBody
from .initial_state import InitialState
from .ncde import FinalTanh


class MatrixNCDEConfig(FieldConfig):
    """Matrix Neural CDE (paper c baseline): tanh(W₂ ReLU(W₁h)) as an h × u matrix, O(u·h²)."""

    kind: Literal["matrix_ncde"] = "matrix_ncde"
    hidden: Width = Field(128, description="state size h (= width of the hidden layer)")

    requires = frozenset({"evaluate", "derivative"})
    initials = ("zeros", "first_observation")

    def build(self, ctx: BuildContext) -> CDEBody:
        u = ctx.input_channels
        field = FinalTanh(u, self.hidden, self.hidden, layers=1)
        return CDEBody(ctx, InitialState(ctx, self.hidden), field, self.hidden)
