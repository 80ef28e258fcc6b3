"""A cubic-spline control and its derivative at many times in one gather.

torchcde's ``CubicSpline.evaluate`` and ``derivative`` each gather their coefficients (a, b, 2c,
3d) separately, seven indexing calls for the pair, (B, T, C) each (Speech's 481 distinct stages:
about 8 ms of a Hebb-CDE step). Here the four are gathered once, side by side, and the same
operations in the same order give the same values bit for bit (it reads the spline's stored
coefficients, torchcde 0.2.5's buffers; ``tests/fast/test_control_stages.py`` holds it to
torchcde's calls):

    X(t)  = a + (b + (½·2c + 3d·r/3)·r)·r,     X′(t) = b + (2c + 3d·r)·r,     r = t − t_i.
"""

from __future__ import annotations

import torch
import torchcde


def value_and_derivative(path, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(X(t), X′(t)) of ``path`` at times t (T,) (or a scalar), (…, T, C) each."""
    if type(path) is not torchcde.CubicSpline:
        return path.evaluate(t), path.derivative(t)
    r, index = path._interpret_t(t)
    r = r.unsqueeze(-1)
    stacked = torch.stack([path._a, path._b, path._two_c, path._three_d])
    a, b, two_c, three_d = stacked.index_select(-2, index.flatten()).view(
        *stacked.shape[:-2], *index.shape, -1)
    inner = 0.5 * two_c + three_d * r / 3
    inner = b + inner * r
    return a + inner * r, b + (two_c + three_d * r) * r
