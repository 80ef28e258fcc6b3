"""Spirals: the synthetic data of torchcde's time-series classification example
(docs/sources.md#jac-torchcde-example).

Each series is a 2-d spiral x(t) = (a t cos t, a t sin t)-like path on t ∈ [0, 4π] sampled at
``length`` points, followed anticlockwise (label 1) or clockwise (label 0), then rotated by a
random angle and scaled: x = R_θ · (t cos t, ± t sin t) / (4π)·(1 + 0.1 ε) with Gaussian noise.
A time channel (0 … 1) is prepended, as in the example. No download.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, PositiveInt

from ..series import SeriesSplit, TaskInfo
from .generated import GeneratedDataset

if TYPE_CHECKING:
    import torch


class SpiralsConfig(GeneratedDataset):
    """Clockwise vs. anticlockwise spirals with a time channel (torchcde's example data)."""

    time_first: ClassVar[bool | None] = True

    kind: Literal["spirals"] = "spirals"
    n_train: PositiveInt = 128
    n_val: PositiveInt = 64
    n_test: PositiveInt = 128
    length: int = Field(100, ge=4, description="points per spiral")
    noise: float = Field(0.02, ge=0)

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", 2, class_names=("clockwise", "anticlockwise"))

    def _split(self, n: int, gen: torch.Generator) -> SeriesSplit:
        import torch

        t = torch.linspace(0, 4 * math.pi, self.length)
        label = torch.randint(0, 2, (n,), generator=gen)
        sign = (2 * label - 1).float()[:, None]
        x, y = t * torch.cos(t), sign * t * torch.sin(t)
        theta = 2 * math.pi * torch.rand(n, 1, generator=gen)
        xr = torch.cos(theta) * x - torch.sin(theta) * y
        yr = torch.sin(theta) * x + torch.cos(theta) * y
        path = torch.stack([xr, yr], -1) / (4 * math.pi)
        path = path + self.noise * torch.randn(path.shape, generator=gen)
        time = (t / t[-1]).expand(n, -1)[..., None]
        return SeriesSplit(times=torch.arange(self.length, dtype=torch.float32),
                           values=torch.cat([time, path], -1), y=label)
