"""Spec options of the ``fwp`` and ``ode_rfwp`` field kinds and how they assemble the body
(docs/sources.md#paper-a). The model modules are imported by ``build``, so validating a spec
imports no torch.

Defaults follow the authors' code; the paper-text forms of
docs/sources.md#fwp-diff-hebb-cde-values and #fwp-diff-cde-readout are options:
``hebb_cde_values: sigmoid_tanh`` (σ(β) and tanh on Hebb-CDE values, App. A) and
``transpose_readout: false`` for Hebb/Oja-CDE (Eq. 25's k⊗v memory read with Wᵀq returns
v (k·q), which is W q in this package's v⊗k layout). See docs/fields/fwp.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, model_validator

from ...components import FieldConfig
from ...limits import Width

if TYPE_CHECKING:
    from ...build_context import BuildContext
    from .body import FWPBody
    from .rfwp import ODERFWP

#: how W(t0) is made (model.initial.kind; :class:`.initial_state.InitialFastWeight`), the
#: default first
KINDS = ("first_update", "first_observation", "static", "zeros")

#: (keys from, values from) per CDE form; ``cde`` depends on the rule
#: (docs/sources.md#fwp-cde-fields)
SOURCES = {"cde_xprime_keys": ("dx", "x"), "cde_dx_only": ("dx", "dx")}
#: forms whose Hebb values the authors' code leaves as raw β · v
#: (docs/sources.md#fwp-diff-hebb-cde-values)
RAW_HEBB_FORMS = ("cde", "cde_xprime_keys")


class FWPConfig(FieldConfig):
    """Continuous-time Fast Weight Programmer: Hebb/Oja/Delta learning rule as an ODE or CDE."""

    fast_path: ClassVar[bool] = True

    kind: Literal["fwp"] = "fwp"
    rule: Literal["hebb", "oja", "delta"] = Field("delta", description="learning rule")
    form: Literal["ode", "cde", "cde_dx_only", "cde_xprime_keys"] = Field(
        "cde", description="ode: direct NODE on x(t); cde: x and x′; cde_dx_only: x′ only; "
                           "cde_xprime_keys: x′ keys and x values (Hebb-CDE ablation)")
    delta: Literal["pre", "post"] = Field(
        "pre", description="Delta rule: tanh before (pre) or after (post) the subtraction")
    d_model: Width = Field(80, description="d: key/value/query size over all heads")
    heads: Width = Field(4, description="H heads of size d/H")
    d_ff: Width | None = Field(None, description="feed-forward inner size (default 4·d)")
    v_layernorm: bool = Field(
        False, description="CDE value path: LayerNorm + Linear(d→d) after the projection")
    layers: Literal[1, 2] = Field(1, description="2: coupled two-layer model (ode form)")
    hebb_cde_values: Literal["raw_beta", "sigmoid_tanh"] = Field(
        "raw_beta", description="Hebb-CDE values: raw_beta·v (code) or σ(β)·tanh(v) (paper)")
    transpose_readout: bool | None = Field(
        None, description="retrieve Wᵀq instead of Wq (default: the authors' choice per form)")

    initials = KINDS

    @property
    def requires(self) -> frozenset[str]:  # type: ignore[override]
        return frozenset({"evaluate"} if self.form == "ode" else {"evaluate", "derivative"})

    @model_validator(mode="after")
    def _consistent(self) -> FWPConfig:
        if self.d_model % self.heads:
            raise ValueError(f"d_model {self.d_model} is not divisible by heads {self.heads}")
        if self.layers == 2 and self.form != "ode":
            raise ValueError("layers: 2 is implemented for form 'ode' (App. C.1)")
        if self.v_layernorm and self.form == "ode":
            raise ValueError("v_layernorm applies to the CDE forms' value path only")
        # judged by value, not by whether it was written: a resolved spec (a run's spec.yaml,
        # a checkpoint's) writes every field, the default included, and must load again
        if self.hebb_cde_values != "raw_beta" and not (
                self.rule == "hebb" and self.form in RAW_HEBB_FORMS):
            raise ValueError("hebb_cde_values: sigmoid_tanh applies to rule 'hebb' with form "
                             f"{' or '.join(RAW_HEBB_FORMS)}")
        return self

    def build(self, ctx: BuildContext) -> FWPBody:
        from .body import FWPBody
        from .cde_form import CDEUpdate
        from .initial_weights import InitialFastWeight
        from .multilayer import TwoLayerUpdate
        from .ode_form import ODEUpdate
        from .query_readout import QueryReadout
        from .rules import make_rule

        d, heads = self.d_model, self.heads
        d_ff = self.d_ff or 4 * d
        u = ctx.input_channels
        raw_hebb = self.form in RAW_HEBB_FORMS and self.hebb_cde_values == "raw_beta"
        rule = make_rule(self.rule, self.delta, activate_hebb_values=not raw_hebb)
        if self.layers == 2:
            update = TwoLayerUpdate(u, d, heads, d_ff, rule)
        elif self.form == "ode":
            update = ODEUpdate(u, d, heads, rule)
        else:
            keys_from, values_from = SOURCES.get(
                self.form, ("dx", "x") if self.rule == "delta" else ("x", "dx"))
            update = CDEUpdate(u, d, heads, rule, keys_from, values_from, self.v_layernorm)
        init = ctx.initial
        initial = InitialFastWeight(init.kind, ctx.shape.input_channels, u, d, heads,
                                    ctx.shape.static_channels, init.hidden)
        transpose = update.transpose if self.transpose_readout is None else self.transpose_readout
        return FWPBody(update, initial, QueryReadout(d, heads, d_ff), ctx.integrate, d,
                       transpose, ctx.shape.task.per_step)


class ODERFWPConfig(FieldConfig):
    """ODE-RFWP: discrete fast-weight learning rule at observations, latent ODE in between."""

    kind: Literal["ode_rfwp"] = "ode_rfwp"
    rule: Literal["hebb", "oja", "delta"] = Field("hebb", description="learning rule")
    delta: Literal["pre", "post"] = Field("post", description="Delta rule tanh placement")
    d_model: Width = Field(128, description="latent and key/value size d")
    heads: Width = Field(16, description="H heads of size d/H")
    d_ff: Width | None = Field(None, description="feed-forward inner size (default 4·d)")
    ode_hidden: Width | None = Field(None, description="latent ODE MLP width (default d)")

    requires = frozenset({"steps"})
    initials = ("zeros",)

    @model_validator(mode="after")
    def _heads_divide(self) -> ODERFWPConfig:
        if self.d_model % self.heads:
            raise ValueError(f"d_model {self.d_model} is not divisible by heads {self.heads}")
        return self

    def build(self, ctx: BuildContext) -> ODERFWP:
        from .rfwp import ODERFWP

        return ODERFWP(self, ctx)
