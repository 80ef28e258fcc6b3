"""Synthetic, irregularly sampled oscillations, generated in code (the quickstart data).

Each series is a noisy 2-channel oscillation x(t) = A (sin(2π f t + φ), cos(2π f t + φ)·e^{-γ t})
on ``length`` regular points of t ∈ [0, 1] (grid times 0, 1, …, length−1); the time channel
holds t; the class is the frequency band f ∈ {1, 2, 3, 4} (with jitter). A random fraction
``missing`` of the time points of each series is dropped (NaN in every channel), and a time
channel is prepended, as Kidger et al. do for irregular data.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field

from ..series import SeriesSplit, TaskInfo
from .generated import GeneratedDataset

if TYPE_CHECKING:
    import torch

CLASSES = ("1 Hz", "2 Hz", "3 Hz", "4 Hz")


class IrregularSinesConfig(GeneratedDataset):
    """Irregularly sampled noisy oscillations, 4 frequency classes (no download)."""

    time_first: ClassVar[bool | None] = True

    kind: Literal["irregular_sines"] = "irregular_sines"
    length: int = Field(50, ge=4, description="points on the regular grid before dropping")
    missing: float = Field(0.3, ge=0, lt=1, description="fraction of time points dropped")
    noise: float = Field(0.1, ge=0)

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", len(CLASSES), class_names=CLASSES)

    def _split(self, n: int, gen: torch.Generator) -> SeriesSplit:
        import torch

        t = torch.linspace(0, 1, self.length)
        label = torch.randint(0, len(CLASSES), (n,), generator=gen)
        freq = (label + 1).double() + 0.2 * (torch.rand(n, generator=gen) - 0.5)
        phase = 2 * math.pi * torch.rand(n, 1, generator=gen)
        amp = 0.5 + torch.rand(n, 1, generator=gen)
        decay = torch.rand(n, 1, generator=gen)
        arg = 2 * math.pi * freq[:, None] * t + phase
        x = torch.stack([amp * torch.sin(arg), amp * torch.cos(arg) * torch.exp(-decay * t)], -1)
        x = x + self.noise * torch.randn(x.shape, generator=gen, dtype=x.dtype)
        values = torch.cat([t.expand(n, -1)[..., None].to(x.dtype), x], -1).float()
        drop = torch.rand(n, self.length, generator=gen) < self.missing
        drop[:, 0] = False  # every series is observed at the start ...
        drop[:, -1] = False  # ... and at the end, so all share one interval
        values[drop] = float("nan")
        return SeriesSplit(times=torch.arange(self.length, dtype=torch.float32),
                           values=values, y=label)
