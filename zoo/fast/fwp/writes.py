"""The FWP slow net's outputs and the rules' writes in the fast paths' layouts (:mod:`.layouts`).

The same numbers as the reference modules (:mod:`zoo.fields.fwp.slow_net`,
:mod:`~zoo.fields.fwp.ode_form`, :mod:`~zoo.fields.fwp.cde_form`), with Linear → LayerNorm →
Linear evaluated in input space where that saves work (:mod:`.folded_norm`).
"""

from __future__ import annotations

import torch

from ...fields.fwp.cde_form import CDEUpdate
from ...fields.fwp.rules import Write
from ...fields.fwp.slow_net import SlowNet, ValueNet
from ...fields.small_softmax import small_softmax
from .folded_norm import foldable, folded_factors, folded_layer_norm
from .layouts import Layout, head_linear, in_layout
from .stage_linear import StageLinear


def slow_outputs(slow: SlowNet, x: torch.Tensor, layout: Layout
                 ) -> tuple[torch.Tensor, ...] | tuple[StageLinear, ...]:
    """:meth:`SlowNet.forward` in ``layout``, each output (k, v, β) its own product (the rows of
    ``out`` regrouped by part); folded into input space where that saves work (``deferred``:
    the layers scaled by 1/σ)."""
    scale = None
    if not foldable(slow.input_proj, slow.out.in_features):
        z, weight, bias = slow.embed(x), slow.out.weight, slow.out.bias
    elif layout == "deferred":
        x_bar, scale, weight, bias = folded_factors(x, slow.input_proj, slow.input_layer_norm,
                                                    slow.out.weight, slow.out.bias)
        z = x_bar.mT
    else:
        z, weight, bias = folded_layer_norm(x, slow.input_proj, slow.input_layer_norm,
                                            slow.out.weight, slow.out.bias, layout)
    weights = weight.unflatten(0, (slow.heads, -1)).split(slow.parts, 1)
    biases = bias.unflatten(0, (slow.heads, -1)).split(slow.parts, 1)
    if layout == "deferred":
        return tuple(StageLinear(w.flatten(0, 1), b.flatten(), z, slow.heads, scale)
                     for w, b in zip(weights, biases))
    z = in_layout(z, layout)
    return tuple(head_linear(w.flatten(0, 1), b.flatten(), z, slow.heads, layout)
                 for w, b in zip(weights, biases))


def value_outputs(values: ValueNet, x: torch.Tensor, layout: Layout
                  ) -> torch.Tensor | StageLinear:
    """:meth:`ValueNet.forward` in ``layout`` (its LayerNorm folded where that saves work)."""
    if values.post is None:
        z, weight, bias = x, values.proj.weight, values.proj.bias
    elif foldable(values.proj, values.proj.out_features):
        z, weight, bias = folded_layer_norm(x, values.proj, values.post[0],
                                            values.post[1].weight, values.post[1].bias, layout)
    else:
        z = values.post[0](values.proj(x))
        weight, bias = values.post[1].weight, values.post[1].bias
    if layout == "deferred":
        return StageLinear(weight, bias, z, values.heads)
    return head_linear(weight, bias, z, values.heads, layout)


def raw(update, inputs: tuple[torch.Tensor, ...], layout: Layout) -> tuple:
    """The update's raw per-head (k, v, β) at its stage inputs, in ``layout``."""
    if isinstance(update, CDEUpdate):
        keys_from, values_from = update.sources(*inputs)
        k, beta = slow_outputs(update.slow, keys_from, layout)
        return k, value_outputs(update.values, values_from, layout), beta
    return slow_outputs(update.slow, *inputs, layout)


def fast_write(update, *inputs: torch.Tensor) -> Write:
    """The rule's write at the stage inputs as the Hebb fast path reads it: stage-last, keys as
    logits, the fast kernels; where the rule passes the raw values and rates through (the
    Hebb-CDE), every output left its layer (``deferred``)."""
    linear = isinstance(update, CDEUpdate) and update.rule.linear_values
    return update.rule.write(*raw(update, inputs, "deferred" if linear else "stage_last"),
                             fast=True)


def formed(write: Write, values: bool = True) -> Write:
    """The same write as tensors (stage-last): layers evaluated, the keys' softmax taken
    (:func:`small_softmax`'s fast kernel); unformed values stay so unless ``values``."""
    key = _tensor(write.key)
    return Write(small_softmax(key, fast=True) if write.key_logits else key,
                 _tensor(write.value) if values else write.value, _tensor(write.rate))


def _tensor(x: torch.Tensor | StageLinear) -> torch.Tensor:
    return x.tensor() if isinstance(x, StageLinear) else x
