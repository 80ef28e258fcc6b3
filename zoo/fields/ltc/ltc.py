"""Liquid time-constant network (Hasani et al., AAAI-21, Eq. 1-3;
docs/sources.md#ltc-equations): the ``ltc`` field.

``cell: tf`` (default) is the authors' TensorFlow cell that produced the paper's tables;
``cell: ncps`` the cell of the ncps package (Δt-scaled, different init, 2:1 excitatory E).
Solvers: ``ltc_fused`` (paper Eq. 3, 6 unfolds) or ``unfold`` (``ltc_ex``: euler, ``ltc_rk``:
rk4, 6 × 0.1). Train by BPTT; the TF cell's clipping runs after every optimiser step.
Fast path: :func:`zoo.fast.ltc.ltc_sequence`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ...build_context import BuildContext
from ...fast.ltc import ltc_sequence
from .cell import LTCCell
from .cell_ncps import NCPSLTCCell
from .cell_tf import TFLTCCell
from .recurrent_body import RecurrentFieldConfig


class LTCConfig(RecurrentFieldConfig):
    """Liquid time-constant network (LTC), TF-code or ncps cell, fused or explicit unfolds."""

    kind: Literal["ltc"] = "ltc"
    cell: Literal["tf", "ncps"] = Field("tf", description="tf: the authors' TF code (tables); "
                                        "ncps: the ncps PyTorch package")
    constraint: Literal["softplus", "clip"] = Field(
        "softplus", description="ncps cell: positivity by softplus at run time or ReLU clipping")
    use_elapsed: bool = Field(False, description="ncps cell: fused step Δt/unfolds from the "
                                                 "elapsed times (else Δt = 1)")
    erev_seed: int = Field(1111, description="ncps cell: seed of the wiring's polarities")

    solvers = ("ltc_fused", "unfold")
    example_solver = {"kind": "ltc_fused"}
    fast_sequence = staticmethod(ltc_sequence)

    @model_validator(mode="after")
    def _ncps_options(self) -> LTCConfig:
        fields = [name for name in ("constraint", "use_elapsed", "erev_seed")
                  if getattr(self, name) != type(self).model_fields[name].default]
        if self.cell == "tf" and fields:
            raise ValueError(f"{', '.join(sorted(fields))} apply to cell 'ncps' only")
        return self

    def make_cell(self, ctx: BuildContext) -> LTCCell:
        solver = ctx.spec.model.solver
        if self.cell == "tf":
            return TFLTCCell(ctx.input_channels, self.units, solver)
        return NCPSLTCCell(ctx.input_channels, self.units, solver, self.constraint,
                           self.use_elapsed, self.erev_seed)
