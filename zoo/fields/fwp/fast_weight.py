"""Fast-weight state layout (docs/sources.md#fwp-state-layout).

Per sample the ODE state is the flattened stack of H head matrices W_head ∈ R^{h×h}
(head-major; row = value index, column = key index), H·h² numbers. An update term is
value ⊗ key, element [i, j] = v_i k_j; retrieval is W q, or Wᵀ q where a form reads the
transposed memory.
"""

from __future__ import annotations

import math

import torch


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


def outer(value: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    """value ⊗ key per head: (..., H, h) × (..., H, h) -> (..., H, h, h)."""
    return value.unsqueeze(-1) * key.unsqueeze(-2)


def retrieve(w: torch.Tensor, q: torch.Tensor, transpose: bool = False) -> torch.Tensor:
    """W q (or Wᵀ q) per head: (..., H, h, h) × (..., H, h) -> (..., H, h)."""
    if transpose:
        w = w.transpose(-1, -2)
    return (w @ q.unsqueeze(-1)).squeeze(-1)
