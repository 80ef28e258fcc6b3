"""Spec options of the ``cfc`` field: validating a spec imports no torch; ``build`` imports the
model modules when a model is built."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, PositiveFloat, model_validator

from ...components import FieldConfig
from ...limits import MAX_LAYERS, Width
from ..wiring import FullyConnectedWiring, WiringOption, settle_units

if TYPE_CHECKING:
    from ...build_context import BuildContext
    from ..ltc.recurrent_body import RecurrentBody

#: options of the backbone, which a wired CfC does not have
BACKBONE = ("activation", "backbone_units", "backbone_layers", "backbone_dropout")


class CfCConfig(FieldConfig):
    """Closed-form continuous-time network (CfC), as ncps's CfC: default, no_gate, minimal, wired.

    Paper: Hasani et al., Nature Machine Intelligence 2022 (docs/fields/cfc.md). One closed-form
    update per observation, no solver: h' = tanh f₁ ⊙ (1 − σ(t_a t + t_b)) + σ(t_a t + t_b) ⊙
    tanh f₂ on a backbone of [I, h]. ``wiring`` makes it ncps's wired CfC (NCP layers, no
    backbone). Train by BPTT.
    """

    kind: Literal["cfc"] = "cfc"
    units: Width = Field(32, description="number of units N (with an ncp wiring: its neurons)")
    mode: Literal["default", "no_gate", "minimal"] = Field(
        "default", description="default: gated; no_gate: without the (1 − σ) factor; minimal: "
                               "the direct closed-form solution (ncps 'pure')")
    mixed_memory: bool = Field(False, description="an LSTM cell updates (h, c) before each step")
    activation: Literal["lecun_tanh", "silu", "relu", "tanh", "gelu"] = Field(
        "lecun_tanh", description="activation of the backbone layers")
    backbone_units: Width = Field(128, description="width of the backbone layers")
    backbone_layers: int = Field(1, ge=0, le=MAX_LAYERS,
                                 description="backbone layers (0: the heads read [I, h])")
    backbone_dropout: float = Field(0.0, ge=0, lt=1, description="dropout after the second and "
                                                                 "later backbone layers")
    wiring: WiringOption | None = Field(
        None, description="ncps wiring (fully_connected, ncp, auto_ncp): the wired CfC, one "
                          "backbone-free layer per wiring layer; none: the plain CfC")
    use_elapsed: bool = Field(False, description="time input t = time_scale · Δt from the grid "
                                                 "(else t = 1, ncps without timespans)")
    time_scale: PositiveFloat = Field(1.0, description="factor on Δt (with use_elapsed)")
    init_gain: PositiveFloat = Field(1.0, description="gain of the Glorot-uniform init of the "
                                                      "weight matrices (ncps: 1)")

    requires = frozenset({"steps"})
    initials = ("zeros",)
    solvers = ("unfold",)
    example_solver = {"kind": "unfold"}
    needs_solver = False  # a closed-form update: model.solver may be left out
    fast_path: ClassVar[bool] = True

    @model_validator(mode="after")
    def _consistent(self) -> CfCConfig:
        if self.wiring is not None:
            given = [n for n in BACKBONE if getattr(self, n) != type(self).model_fields[n].default]
            if given:
                raise ValueError(f"{', '.join(given)} do not apply with a wiring (a wired CfC has "
                                 f"no backbone)")
            if isinstance(self.wiring, FullyConnectedWiring) and (
                    self.wiring.output_dim is not None or not self.wiring.self_connections):
                raise ValueError("output_dim and self_connections of a fully_connected wiring do "
                                 "not apply to a CfC (its one layer is all-to-all and all output)")
        settle_units(self)
        if self.time_scale != 1.0 and not self.use_elapsed:
            raise ValueError("time_scale applies with use_elapsed: true only")
        return self

    def build(self, ctx: BuildContext) -> RecurrentBody:
        from ..ltc.recurrent_body import RecurrentBody
        from .cell import make_cell

        return RecurrentBody(make_cell(self, ctx.input_channels), ctx.shape.task.per_step)
