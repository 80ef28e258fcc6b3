"""Activations of the trajectory-length experiment (the MATLAB code;
docs/sources.md#ltc-trajectory-length).

``hardtanh`` with ``matlab_quirk`` reproduces ``Htanh.m``, whose scalar ``if`` on a vector is
true only when every entry satisfies it (``Htanh.m:3-9``;
docs/sources.md#ltc-diff-trajectory-length): the whole vector becomes 1 if all
entries are ≥ 1, −1 if all are ≤ −1, and passes unchanged otherwise. Without the quirk it is the
element-wise clip to [−1, 1].
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.nn import functional as F


def matlab_htanh(x: torch.Tensor) -> torch.Tensor:
    """``Htanh.m`` applied to each vector along the last axis."""
    high = (x >= 1).all(-1, keepdim=True)
    low = (x <= -1).all(-1, keepdim=True)
    return torch.where(high, torch.ones_like(x), torch.where(low, -torch.ones_like(x), x))


def activation(name: str, matlab_quirk: bool = True) -> Callable[[torch.Tensor], torch.Tensor]:
    """tanh | sigmoid | relu | hardtanh."""
    if name == "hardtanh":
        return matlab_htanh if matlab_quirk else F.hardtanh
    return {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu}[name]
