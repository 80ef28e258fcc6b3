"""The slow net that generates keys, values and learning rates
(docs/sources.md#fwp-slow-net).

``input_proj`` Linear(u → d) and ``input_layer_norm`` LayerNorm(d) embed the control; they are
shared with the query path (:meth:`SlowNet.embed`). The output layer maps the embedding to
per-head raw outputs: Linear(d → H·(2h+1)) split into (k, v, β) (direct-NODE ``kvb_net``) or
Linear(d → H·(h+1)) split into (k, β) (CDE ``kb_net``, values come from :class:`ValueNet`).
Default PyTorch initialisation throughout. The fast paths read the same outputs in their own
layouts (:mod:`zoo.fast.fwp.layouts`).
"""

from __future__ import annotations

import torch
from torch import nn

from .fast_weight import split_heads


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

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Raw per-head outputs at x (…, H, c) each."""
        return self.split(self.embed(x))


class ValueNet(nn.Module):
    """CDE value path: Linear(u → d), optionally LayerNorm(d) + Linear(d → d) (``v_layernorm``)."""

    def __init__(self, in_features: int, d: int, heads: int, layernorm: bool):
        super().__init__()
        self.heads = heads
        self.proj = nn.Linear(in_features, d)
        self.post = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, d)) if layernorm else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Per-head values at x (…, H, h)."""
        z = self.proj(x)
        return split_heads(z if self.post is None else self.post(z), self.heads)
