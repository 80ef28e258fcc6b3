"""The slow net that generates keys, values and learning rates
(docs/sources.md#fwp-slow-net).

``input_proj`` Linear(u → d) and ``input_layer_norm`` LayerNorm(d) embed the control; they are
shared with the query path (:meth:`SlowNet.embed`). The output layer maps the embedding to
per-head raw outputs: Linear(d → H·(2h+1)) split into (k, v, β) (direct-NODE ``kvb_net``) or
Linear(d → H·(h+1)) split into (k, β) (CDE ``kb_net``, values come from :class:`ValueNet`).
Default PyTorch initialisation throughout. The fast paths evaluate Linear → LayerNorm → Linear
folded into input space (:mod:`.folded_norm`).
"""

from __future__ import annotations

import torch
from torch import nn

from .fast_weight import Layout, head_linear, split_heads
from .folded_norm import foldable, folded_factors, folded_layer_norm
from .stage_linear import StageLinear


class SlowNet(nn.Module):
    """embed = LayerNorm(Linear_in(x)); forward -> per-head raw (k, v, β) or (k, β)."""

    def __init__(self, in_features: int | None, d: int, heads: int, with_values: bool):
        super().__init__()
        h = d // heads
        self.heads = heads
        self.parts = (h, h, 1) if with_values else (h, 1)
        # the second layer of a stacked model reads a d-dim signal directly (no input_proj)
        self.input_proj = nn.Identity() if in_features is None else nn.Linear(in_features, d)
        self.input_layer_norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, heads * sum(self.parts))

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        return self.input_layer_norm(self.input_proj(x))

    def split(self, z: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Raw per-head outputs from an embedding z (..., d)."""
        return split_heads(self.out(z), self.heads).split(self.parts, -1)

    def forward(self, x: torch.Tensor, layout: Layout = "rows"
                ) -> tuple[torch.Tensor, ...] | tuple[StageLinear, ...]:
        """Raw per-head outputs at x in ``layout`` (:func:`head_linear`). The fast paths'
        layouts go through :func:`folded_layer_norm` where that saves work, and make each
        output (k, v, β) its own product (the rows of ``out`` regrouped by part); ``deferred``
        leaves each its layer of the stage inputs, unformed (:class:`StageLinear`, scaled by
        1/σ when folded)."""
        if layout == "rows":
            return self.split(self.embed(x))
        scale = None
        if not foldable(self.input_proj, self.out.in_features):
            z, weight, bias = self.embed(x), self.out.weight, self.out.bias
        elif layout == "deferred":
            x_bar, scale, weight, bias = folded_factors(x, self.input_proj,
                                                        self.input_layer_norm, self.out.weight,
                                                        self.out.bias)
            z = x_bar.mT
        else:
            z, weight, bias = folded_layer_norm(x, self.input_proj, self.input_layer_norm,
                                                self.out.weight, self.out.bias)
        weights = weight.unflatten(0, (self.heads, -1)).split(self.parts, 1)
        biases = bias.unflatten(0, (self.heads, -1)).split(self.parts, 1)
        if layout == "deferred":
            return tuple(StageLinear(w.flatten(0, 1), b.flatten(), z, self.heads, scale)
                         for w, b in zip(weights, biases))
        return tuple(head_linear(w.flatten(0, 1), b.flatten(), z, self.heads, layout)
                     for w, b in zip(weights, biases))


class ValueNet(nn.Module):
    """CDE value path: Linear(u → d), optionally LayerNorm(d) + Linear(d → d) (``v_layernorm``)."""

    def __init__(self, in_features: int, d: int, heads: int, layernorm: bool):
        super().__init__()
        self.heads = heads
        self.proj = nn.Linear(in_features, d)
        self.post = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d)) if layernorm else None

    def forward(self, x: torch.Tensor, layout: Layout = "rows") -> torch.Tensor | StageLinear:
        """Per-head values in ``layout``, as :meth:`SlowNet.forward`; ``deferred``: their
        stage-last layer, unformed (:class:`StageLinear`)."""
        if self.post is None:
            z, weight, bias = x, self.proj.weight, self.proj.bias
        elif layout != "rows" and foldable(self.proj, self.proj.out_features):
            z, weight, bias = folded_layer_norm(x, self.proj, self.post[0], self.post[1].weight,
                                                self.post[1].bias)
        else:
            z, weight, bias = self.post[0](self.proj(x)), self.post[1].weight, self.post[1].bias
        if layout == "deferred":
            return StageLinear(weight, bias, z, self.heads)
        return head_linear(weight, bias, z, self.heads, layout)
