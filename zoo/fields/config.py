"""Spec options of the neural CDE/RDE family and its baselines (``ncde``, ``matrix_ncde``,
``nrde``, ``log_ncde``, ``gru_ode``, ``ode_rnn``, ``jacobian``), apart from their models:
validating a spec imports no torch; ``build`` imports the model module when a model is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from ..components import FieldConfig
from ..limits import Layers, Width

if TYPE_CHECKING:
    from ..build_context import BuildContext
    from .cde_body import CDEBody
    from .gru_ode import GRUODE
    from .jacobian import JacobianNCDE
    from .log_ncde import LogNCDE
    from .nrde import NeuralRDE
    from .ode_rnn import ODERNN


class NCDEConfig(FieldConfig):
    """Neural CDE with Kidger's FinalTanh vector field."""

    fast_path: ClassVar[bool] = True

    kind: Literal["ncde"] = "ncde"
    hidden: Width = Field(32, description="state size h")
    hidden_hidden: Width = Field(32, description="width hh of the vector-field MLP")
    layers: Layers = Field(3, description="number of hidden layers of the MLP")

    requires = frozenset({"evaluate", "derivative"})
    initials = ("first_observation", "static")

    def build(self, ctx: BuildContext) -> CDEBody:
        from .cde_body import CDEBody
        from .initial_state import InitialState
        from .ncde import FinalTanh

        field = FinalTanh(ctx.input_channels, self.hidden, self.hidden_hidden, self.layers)
        return CDEBody(ctx, InitialState(ctx, self.hidden), field, self.hidden)


class MatrixNCDEConfig(FieldConfig):
    """Matrix Neural CDE (paper c baseline): tanh(W₂ ReLU(W₁h)) as an h × u matrix, O(u·h²).

    dh = tanh(W_2 ReLU(W_1 h + b_1) + b_2) dX, with W_1: h→h and W_2: h→u·h reshaped to (h × u)
    (paper c §3.1; docs/sources.md#jac-matrix-ncde). This is Kidger's FinalTanh with one hidden
    layer of width h, so it reuses :class:`zoo.fields.ncde.FinalTanh`. PyTorch's default
    initialisation, h(t0) = 0 and hidden 128 as in paper c; ``model.initial.kind:
    first_observation`` gives the torchcde example's h(t0) = Linear(X(t0)). Solver as for the
    ``jacobian`` field (Dopri5, 1e-3, backprop ``direct``).
    """

    fast_path: ClassVar[bool] = True

    kind: Literal["matrix_ncde"] = "matrix_ncde"
    hidden: Width = Field(128, description="state size h (= width of the hidden layer)")

    requires = frozenset({"evaluate", "derivative"})
    initials = ("zeros", "first_observation")

    def build(self, ctx: BuildContext) -> CDEBody:
        from .cde_body import CDEBody
        from .initial_state import InitialState
        from .ncde import FinalTanh

        u = ctx.input_channels
        field = FinalTanh(u, self.hidden, self.hidden, layers=1)
        return CDEBody(ctx, InitialState(ctx, self.hidden), field, self.hidden)


class NRDEConfig(FieldConfig):
    """Neural RDE (Morrill et al.): dh/dt = F(h)·log-signature piece (a ``logsig`` control)."""

    fast_path: ClassVar[bool] = True

    kind: Literal["nrde"] = "nrde"
    hidden: Width = Field(32, description="state size h")
    hidden_hidden: Width = Field(64, description="width hh of the vector-field MLP")
    layers: Layers = Field(3, description="number of hidden layers of the MLP")
    share_hidden_weights: bool = Field(
        True, description="one shared Linear(hh→hh) for all repeated layers, as in the code")
    tanh_position: Literal["before_out", "final"] = Field(
        "before_out", description="tanh before the last linear (code) or after it")

    requires = frozenset({"evaluate"})
    initials = ("first_observation", "zeros")

    def check(self, spec) -> list[tuple[str, str]]:
        if spec.model.control.kind != "logsig":
            return [("model.control.kind", "field 'nrde' is driven by log-signature windows: "
                     "use the logsig control (on other paths it is a neural CDE without dX)")]
        return []

    def build(self, ctx: BuildContext) -> NeuralRDE:
        from .initial_state import InitialState
        from .nrde import NeuralRDE, NRDEField

        field = NRDEField(ctx.input_channels, self.hidden, self.hidden_hidden, self.layers,
                          self.share_hidden_weights, self.tanh_position)
        return NeuralRDE(ctx, InitialState(ctx, self.hidden), field, self.hidden)


class LogNCDEConfig(FieldConfig):
    """Log neural CDE (Walker et al. 2024): log-ODE steps with the Lie brackets of the field.

    dh/ds = f(h)·λ¹ + Σ_{j<k} [f_j, f_k](h)·λ²_jk on each window of a ``logsig`` control (depth
    1: increments only; depth 2: with the Lévy areas), f(h) = tanh(MLP_SiLU(h)) as an h × C
    matrix (docs/fields/log_ncde.md, docs/sources.md#lncde).
    """

    fast_path: ClassVar[bool] = False

    kind: Literal["log_ncde"] = "log_ncde"
    hidden: Width = Field(64, description="state size h")
    hidden_hidden: Width = Field(64, description="width w of the vector-field MLP (vf_width)")
    layers: Layers = Field(3, description="hidden layers of the MLP (vf_depth)")
    init_scale: float = Field(
        1000.0, gt=0, description="the MLP's initial weights and biases are divided by this "
                                  "(the code's scale, 1000 in every UEA run)")
    penalty: float = Field(
        0.0, ge=0, description="λ of the code's Lip(2) regulariser: training loss += "
                               "λ·Σ_layers (mean of the row norms ‖W_r‖₂ + ‖b‖₂) of the MLP")

    requires = frozenset({"derivative"})
    initials = ("first_observation", "zeros")
    example_solver: ClassVar[dict] = {"kind": "torchdiffeq", "method": "heun2"}

    def check(self, spec) -> list[tuple[str, str]]:
        control = spec.model.control
        if control.kind != "logsig":
            return [("model.control.kind", "field 'log_ncde' is driven by log-signature "
                     "windows: use the logsig control (depth 1 or 2)")]
        if control.depth > 2:
            return [("model.control.depth", f"field 'log_ncde' has the terms of depth 1 and 2 "
                     f"only (increments and Lie brackets), not {control.depth}: use depth 1 or 2")]
        return []

    def build(self, ctx: BuildContext) -> LogNCDE:
        from .initial_state import InitialState
        from .log_ncde import LogNCDE, LogNCDEField

        control = ctx.spec.model.control
        windows = control.kind == "logsig"
        channels = ctx.shape.input_channels if windows else ctx.input_channels
        field = LogNCDEField(channels, self.hidden, self.hidden_hidden, self.layers,
                             self.init_scale)
        return LogNCDE(ctx, InitialState(ctx, self.hidden), field,
                       control.depth if windows else 1, windows, self.penalty)


class GRUODEConfig(FieldConfig):
    """GRU-ODE (Kidger et al.'s direct-NODE baseline): state [X − X(t0), h], time channel 0."""

    fast_path: ClassVar[bool] = True

    kind: Literal["gru_ode"] = "gru_ode"
    hidden: Width = Field(47, description="GRU state size h (Speech 160, Sepsis 187, UEA 47)")

    requires = frozenset({"derivative"})
    initials = ("zeros", "static")

    def check(self, spec) -> list[tuple[str, str]]:
        if spec.data.channel_0_is_time() is not False:
            return []
        why = "field 'gru_ode' moves h by dX₀/dt, the rate of channel 0, which must be time"
        if "time_channel" in type(spec.data).model_fields:
            return [("data.time_channel", f"{why}: set time_channel: true")]
        return [("data.kind", f"{why}, and dataset '{spec.data.kind}' has no time channel "
                 f"(it is on speech_commands, physionet_sepsis, uea, eigenworms and own data)")]

    def build(self, ctx: BuildContext) -> GRUODE:
        from .gru_ode import GRUODE

        return GRUODE(ctx, self.hidden)


class ODERNNConfig(FieldConfig):
    """ODE-RNN (Kidger's version): Tanh-MLP ODE between observations, GRUCell jump at each one."""

    kind: Literal["ode_rnn"] = "ode_rnn"
    hidden: Width = Field(32, description="state size h")
    hidden_hidden: Width = Field(32, description="width hh of the ODE's MLP")
    layers: Layers = Field(3, description="number of hidden layers of the MLP")

    requires = frozenset()  # either "evaluate" or "steps": see check()
    initials = ("zeros", "static")

    def check(self, spec) -> list[tuple[str, str]]:
        if {"evaluate", "steps"} & spec.model.control.provides:
            return []
        return [("model.control.kind", "field 'ode_rnn' reads observations: use the raw_steps "
                 "control or an interpolating one (natural_cubic, hermite_cubic, linear)")]

    def build(self, ctx: BuildContext) -> ODERNN:
        from .ode_rnn import ODERNN

        return ODERNN(self, ctx)


class JacobianConfig(FieldConfig):
    """Jacobian NCDE (paper c): implicit-RNN field via Jacobian-vector products, O(h²) weights."""

    fast_path: ClassVar[bool] = True

    kind: Literal["jacobian"] = "jacobian"
    hidden: Width = Field(128, description="state size h (= RNN width)")
    taylor_terms: Layers = Field(
        3, description="terms of (I − J_h)^{-1} = I + J_h + …: 3 in the code, 2 in the paper")
    relu_derivative: Literal["sigmoid", "exact"] = Field(
        "sigmoid", description="ReLU′ in the Jacobians: σ(l1) as in the code, or the exact step")

    requires = frozenset({"evaluate", "derivative"})
    initials = ("zeros", "first_observation")

    def build(self, ctx: BuildContext) -> JacobianNCDE:
        from .initial_state import InitialState
        from .jacobian import JacobianField, JacobianNCDE

        u = ctx.input_channels
        field = JacobianField(u, self.hidden, self.taylor_terms, self.relu_derivative)
        return JacobianNCDE(ctx, InitialState(ctx, self.hidden), field, self.hidden)
