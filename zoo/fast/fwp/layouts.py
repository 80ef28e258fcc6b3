"""The layouts in which the FWP fast paths read per-head outputs, and the products that write
them.

The reference modules give per-head outputs in rows (…, H, c). The fast paths ask for one of

* ``stage_last`` (B, U, H, c) as a view of (B, H·c, U) memory: the stage axis innermost, so that
  per-head reductions and contractions over stages read contiguous rows (Hebb);
* ``lanes`` (U, H·B, c) as a view of (U, c, H·B) memory: samples and heads innermost, heads outer
  (:func:`.stages.to_lanes`), the layout of the loops over steps (the rules that read W);
* ``deferred``: each output left as its layer of the stage inputs, unformed
  (:class:`.stage_linear.StageLinear`; the Hebb-CDE with raw values and rates).
"""

from __future__ import annotations

from typing import Literal

import torch

from ...fields.fwp.fast_weight import split_heads
from ...kernels.shared_product import shared_product

Layout = Literal["stage_last", "lanes", "deferred"]


def stage_last_linear(weight: torch.Tensor, bias: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """x Wᵀ + b for x (B, U, in) as a (B, U, out) view of (B, out, U) memory, one
    :func:`shared_product` per sample."""
    return shared_product(weight, bias, x.mT.contiguous()).mT


def lanes_linear(weight: torch.Tensor, bias: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Per-head x W_hᵀ + b_h for weights (H, c, in), biases (H, c) and x (B, U, in), as a
    (U, H·B, c) view of (U, c, H·B) memory, one :func:`shared_product` per stage U with the rows
    of W ordered (c, H)."""
    heads, c, width = weight.shape
    stages = x.shape[1]
    out = shared_product(weight.transpose(0, 1).reshape(c * heads, width), bias.T.flatten(),
                         x.permute(1, 2, 0).contiguous())
    return out.view(stages, c, -1).mT


def in_layout(x: torch.Tensor, layout: Layout) -> torch.Tensor:
    """x (B, U, in) as a view of the memory that ``layout``'s products read, (B, in, U) for
    ``stage_last`` and (U, in, B) for ``lanes``, so that several products of the same inputs
    (:func:`head_linear`) copy them once."""
    if layout == "lanes":
        return x.permute(1, 2, 0).contiguous().permute(2, 0, 1)
    if layout == "stage_last":
        return x.mT.contiguous().mT
    return x


def head_linear(weight: torch.Tensor, bias: torch.Tensor, x: torch.Tensor, heads: int,
                layout: Literal["stage_last", "lanes"]) -> torch.Tensor:
    """Per-head outputs x Wᵀ + b (W: (H·c, in)) in ``layout``: ``stage_last`` (B, U, H, c),
    ``lanes`` (U, H·B, c)."""
    if layout == "lanes":
        return lanes_linear(weight.unflatten(0, (heads, -1)), bias.unflatten(0, (heads, -1)), x)
    return split_heads(stage_last_linear(weight, bias, x), heads)
