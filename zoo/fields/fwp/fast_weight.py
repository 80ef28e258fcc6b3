"""Fast-weight state layout (docs/sources.md#fwp-state-layout).

Per sample the ODE state is the flattened stack of H head matrices W_head ∈ R^{h×h}
(head-major; row = value index, column = key index), H·h² numbers. An update term is
value ⊗ key, element [i, j] = v_i k_j; retrieval is W q, or Wᵀ q where a form reads the
transposed memory.
"""

from __future__ import annotations

import math
from typing import Literal

import torch

from ...kernels.shared_product import shared_product

#: where the slow net's outputs go: ``rows`` (…, H, c), as the generic path; the fast paths'
#: ``stage_last`` (Hebb) and ``lanes`` (the step loops), see :func:`head_linear`; ``deferred``
#: (Hebb-CDE with raw values and rates): each output left as its linear map of the stage inputs
#: (:class:`.stage_linear.StageLinear`)
Layout = Literal["rows", "stage_last", "lanes", "deferred"]


def split_heads(z: torch.Tensor, heads: int) -> torch.Tensor:
    """(..., H·h) -> (..., H, h)."""
    return z.unflatten(-1, (heads, z.shape[-1] // heads))


def merge_heads(z: torch.Tensor) -> torch.Tensor:
    """(..., H, h) -> (..., H·h)."""
    return z.flatten(-2)


def as_matrices(y: torch.Tensor, heads: int) -> torch.Tensor:
    """Flat state (..., H·h·h) -> matrices (..., H, h, h)."""
    h = math.isqrt(y.shape[-1] // heads)
    return y.unflatten(-1, (heads, h, h))


def flatten(w: torch.Tensor) -> torch.Tensor:
    """Matrices (..., H, h, h) -> flat state (..., H·h·h)."""
    return w.flatten(-3)


def stage_last_linear(weight: torch.Tensor, bias: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """x Wᵀ + b for x (B, U, in) as a (B, U, out) view of (B, out, U) memory: the stage axis U
    innermost, so per-head reductions and contractions over stages read contiguous rows (the
    Hebb fast path's layout), one :func:`shared_product` per sample."""
    return shared_product(weight, bias, x.mT.contiguous()).mT


def lanes_linear(weight: torch.Tensor, bias: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Per-head x W_hᵀ + b_h for weights (H, c, in), biases (H, c) and x (B, U, in), as a
    (U, H·B, c) view of (U, c, H·B) memory: the step loops' layout, samples and heads innermost
    with the heads outer (:func:`zoo.fast.fwp.stages.to_lanes`), written by one
    :func:`shared_product` per stage U with the rows of W ordered (c, H)."""
    heads, c, width = weight.shape
    stages = x.shape[1]
    out = shared_product(weight.transpose(0, 1).reshape(c * heads, width), bias.T.flatten(),
                         x.permute(1, 2, 0).contiguous())
    return out.view(stages, c, -1).mT


def head_linear(weight: torch.Tensor, bias: torch.Tensor, x: torch.Tensor, heads: int,
                layout: Layout) -> torch.Tensor:
    """Per-head outputs x Wᵀ + b (W: (H·c, in)) in ``layout``: ``rows`` (…, H, c);
    ``stage_last`` (B, U, H, c) from x (B, U, in) (:func:`stage_last_linear`); ``lanes``
    (U, H·B, c) (:func:`lanes_linear`)."""
    if layout == "lanes":
        return lanes_linear(weight.unflatten(0, (heads, -1)), bias.unflatten(0, (heads, -1)), x)
    out = (stage_last_linear(weight, bias, x) if layout == "stage_last"
           else torch.nn.functional.linear(x, weight, bias))
    return split_heads(out, heads)


def outer(value: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """value ⊗ key per head: (..., H, h) × (..., H, h) -> (..., H, h, h)."""
    return value.unsqueeze(-1) * key.unsqueeze(-2)


def retrieve(w: torch.Tensor, q: torch.Tensor, transpose: bool = False) -> torch.Tensor:
    """W q (or Wᵀ q) per head: (..., H, h, h) × (..., H, h) -> (..., H, h)."""
    if transpose:
        w = w.transpose(-1, -2)
    return (w @ q.unsqueeze(-1)).squeeze(-1)
