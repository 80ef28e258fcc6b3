"""Spec options of the LTC suite's fields (``ltc``, ``ctrnn``, ``node``, ``ctgru``, ``lstm``,
``random_ctnet``), apart from their cells: validating a spec imports no torch; ``build`` and
``make_cell`` import the model modules when a model is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, PositiveFloat, model_validator

from ...components import FieldConfig
from ...limits import Layers, NumpySeed, Seed, Width
from ..wiring import WiringOption, settle_units

if TYPE_CHECKING:
    from ...build_context import BuildContext
    from .cell import LTCCell
    from .ctgru import CTGRUCell
    from .ctrnn import CTRNNCell
    from .lstm import LSTMCell
    from .node_rnn import NODECell
    from .random_ctnet import RandomCTNet
    from .recurrent_body import RecurrentBody, RecurrentCell


class RecurrentFieldConfig(FieldConfig):
    """Base of the recurrent fields: reads raw steps, zero initial state, ``units`` neurons."""

    fast_path: ClassVar[bool] = True

    units: Width = Field(32, description="number of units N")

    requires = frozenset({"steps"})
    initials = ("zeros",)
    solvers = ("unfold",)
    example_solver = {"kind": "unfold"}

    def make_cell(self, ctx: BuildContext) -> RecurrentCell:
        """The cell; its module (torch) is imported here, when the model is built."""
        raise NotImplementedError

    def build(self, ctx: BuildContext) -> RecurrentBody:
        from .recurrent_body import RecurrentBody

        return RecurrentBody(self.make_cell(ctx), ctx.shape.task.per_step)


class LTCConfig(RecurrentFieldConfig):
    """Liquid time-constant network (LTC), TF-code or ncps cell, fused or explicit unfolds.

    Paper: Hasani et al., AAAI-21, Eq. 1-3 (docs/sources.md#ltc-equations).

    ``cell: tf`` (default) is the authors' TensorFlow cell that produced the paper's tables;
    ``cell: ncps`` the cell of the ncps package (Δt-scaled, different init, 2:1 excitatory E).
    Solvers: ``ltc_fused`` (paper Eq. 3, 6 unfolds) or ``unfold`` (``ltc_ex``: euler, ``ltc_rk``:
    rk4, 6 × 0.1). Train by BPTT; the TF cell's clipping runs after every optimiser step.
    """

    kind: Literal["ltc"] = "ltc"
    cell: Literal["tf", "ncps"] = Field("tf", description="tf: the authors' TF code (tables); "
                                        "ncps: the ncps PyTorch package")
    constraint: Literal["softplus", "clip"] = Field(
        "softplus", description="ncps cell: positivity by softplus at run time or ReLU clipping")
    use_elapsed: bool = Field(False, description="ncps cell: fused step Δt/unfolds from the "
                                                 "elapsed times (else Δt = 1)")
    erev_seed: NumpySeed = Field(1111, description="ncps cell: seed of the wiring's polarities")
    wiring: WiringOption | None = Field(
        None, description="ncps cell: an ncps wiring (fully_connected, ncp, auto_ncp), as "
                          "ncps.torch.LTC(inputs, wiring); none: fully connected by erev_seed")

    solvers = ("ltc_fused", "unfold")
    example_solver = {"kind": "ltc_fused"}

    @model_validator(mode="after")
    def _ncps_options(self) -> LTCConfig:
        fields = [name for name in ("constraint", "use_elapsed", "erev_seed", "wiring")
                  if getattr(self, name) != type(self).model_fields[name].default]
        if self.cell == "tf" and fields:
            raise ValueError(f"{', '.join(sorted(fields))} apply to cell 'ncps' only")
        if self.wiring is not None and "erev_seed" in fields:
            raise ValueError("erev_seed does not apply with a wiring: set the wiring's seed")
        settle_units(self)
        return self

    def check(self, spec) -> list[tuple[str, str]]:
        solver = spec.model.solver
        if self.use_elapsed and solver is not None and solver.kind != "ltc_fused":
            return [("model.field.use_elapsed", f"the elapsed times scale the fused step only: "
                     f"use solver ltc_fused, or drop use_elapsed (solver '{solver.kind}' steps "
                     f"by its step_size)")]
        return []

    def make_cell(self, ctx: BuildContext) -> LTCCell:
        from .cell_ncps import NCPSLTCCell, WiredNCPSLTCCell
        from .cell_tf import TFLTCCell

        solver = ctx.spec.model.solver
        if self.cell == "tf":
            return TFLTCCell(ctx.input_channels, self.units, solver)
        if self.wiring is not None and not self.wiring.all_to_all(self.units):
            return WiredNCPSLTCCell(ctx.input_channels,
                                    self.wiring.build(ctx.input_channels, self.units), solver,
                                    self.constraint, self.use_elapsed)
        seed = self.erev_seed if self.wiring is None else self.wiring.seed
        return NCPSLTCCell(ctx.input_channels, self.units, solver, self.constraint,
                           self.use_elapsed, seed)


class CTRNNConfig(RecurrentFieldConfig):
    """Continuous-time RNN (LTC-repo baseline): dh/dt = −h/τ + tanh(W[I,h]+b), unrolled Euler."""

    kind: Literal["ctrnn"] = "ctrnn"
    tau: float = Field(1.0, gt=0, description="fixed time constant τ")
    global_feedback: bool = Field(True, description="the drive sees the state (W[I,h]) or only I")
    clip: float | None = Field(None, gt=0, description="clip the state to ±clip after each step")


    def make_cell(self, ctx: BuildContext) -> CTRNNCell:
        from .ctrnn import CTRNNCell

        return CTRNNCell(ctx.input_channels, self.units, ctx.spec.model.solver, self.tau,
                         self.global_feedback, self.clip)


class NODEConfig(RecurrentFieldConfig):
    """Neural ODE RNN (LTC-repo baseline): dh/dt = tanh(W[I,h]+b), unrolled (classic RK4)."""

    kind: Literal["node"] = "node"
    clip: float | None = Field(None, gt=0, description="clip the state to ±clip after each step "
                                                       "(10 for traffic)")

    def make_cell(self, ctx: BuildContext) -> NODECell:
        from .node_rnn import NODECell

        return NODECell(ctx.input_channels, self.units, ctx.spec.model.solver, self.clip)


class CTGRUConfig(RecurrentFieldConfig):
    """CT-GRU (Mozer et al.), LTC-repo baseline: M traces per unit with scales 10^{k/2}."""

    kind: Literal["ctgru"] = "ctgru"
    scales: Width = Field(8, description="number M of time scales")
    decay: Literal["code", "paper"] = Field(
        "code", description="code: exp(−1/ln τ_k) as the repository; paper: exp(−Δt/τ_k)")
    clip: float | None = Field(None, gt=0, description="clip the traces to ±clip")

    needs_solver = False  # a discrete update: model.solver may be left out

    def make_cell(self, ctx: BuildContext) -> CTGRUCell:
        from .ctgru import CTGRUCell

        return CTGRUCell(ctx.input_channels, self.units, self.scales, self.decay, self.clip)


class LSTMConfig(RecurrentFieldConfig):
    """LSTM (LTC-repo baseline, TensorFlow LSTMCell with forget bias 1)."""

    kind: Literal["lstm"] = "lstm"
    forget_bias: float = Field(1.0, description="constant added to the forget gate (TF default)")

    needs_solver = False  # a discrete update: model.solver may be left out

    def make_cell(self, ctx: BuildContext) -> LSTMCell:
        from .lstm import LSTMCell

        return LSTMCell(ctx.input_channels, self.units, self.forget_bias)


class RandomCTNetConfig(FieldConfig):
    """Random LTC / CT-RNN / N-ODE networks for the trajectory-length experiment (no training)."""

    kind: Literal["random_ctnet"] = "random_ctnet"
    model: Literal["ltc", "ctrnn", "node"] = "ltc"
    activation: Literal["tanh", "sigmoid", "relu", "hardtanh"] = Field(
        "hardtanh", description="the MATLAB default is Hard-tanh")
    hardtanh_matlab_quirk: bool = Field(
        True, description="Htanh.m clips only when the whole vector saturates "
                          "(docs/sources.md#ltc-diff-trajectory-length)")
    width: Width = Field(25, description="neurons k per layer")
    layers: Layers = 1
    sigma_w: PositiveFloat = Field(2.0, description="weight scale (see weight_init)")
    sigma_b: PositiveFloat = Field(1.0, description="bias (and τ) scale (see weight_init)")
    weight_init: Literal["code", "paper"] = Field(
        "code", description="code: std = sigma_w, sigma_b; paper: variance = sigma_w/k, sigma_b")
    seed: Seed | None = Field(
        None, description="seed of the random weights (default: the run's seed, so each seed of "
                          "a sweep is one draw)")

    requires = frozenset({"evaluate"})
    initials = ("zeros",)
    solvers = ("torchdiffeq",)
    example_solver = {"kind": "torchdiffeq", "method": "dopri5", "rtol": 1e-2, "atol": 1e-4}

    def build(self, ctx: BuildContext) -> RandomCTNet:
        from .random_ctnet import RandomCTNet

        return RandomCTNet(self, ctx)
