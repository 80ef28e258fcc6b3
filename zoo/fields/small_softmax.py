"""Softmax over a short last axis (FWP heads of h = 4 keys, CT-GRU's M = 8 time scales)."""

from __future__ import annotations

import torch

from ..kernels.softmax import softmax_over_rows


def small_softmax(x: torch.Tensor, fast: bool = False) -> torch.Tensor:
    """Softmax over the last axis of x (B, ·, n). ``fast`` reduces with axis 1 moved innermost
    (the stage axis of the FWP fast path's layout, where that view is contiguous): the same
    values up to float rounding and several times quicker for small n, as the kernel then
    vectorises over axis 1 (compiled on CPU where that view is contiguous,
    :func:`zoo.kernels.softmax.softmax_over_rows`). The generic paths keep the plain call, as the
    authors'."""
    if fast:
        return softmax_over_rows(x.movedim(1, -1)).movedim(-1, 1)
    return torch.softmax(x, -1)
