"""Noisy ramps: is the series rising or falling? (generated in code)."""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import PositiveInt

from zoo.plugin import DataBundle, DatasetConfig, SeriesSplit, TaskInfo


class RampsConfig(DatasetConfig):
    """Noisy rising vs. falling ramps, 2 classes (example plugin)."""

    kind: Literal["ramps"] = "ramps"
    n_train: PositiveInt = 256
    n_val: PositiveInt = 64
    n_test: PositiveInt = 128
    length: PositiveInt = 20
    noise: float = 0.3

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", 2, class_names=("falling", "rising"))

    def _split(self, n: int, gen: torch.Generator) -> SeriesSplit:
        t = torch.linspace(0, 1, self.length)
        label = torch.randint(0, 2, (n,), generator=gen)
        slope = (2 * label - 1).float()[:, None]
        x = slope * t + self.noise * torch.randn(n, self.length, generator=gen)
        values = torch.stack([t.expand(n, -1), x], -1)
        return SeriesSplit(times=torch.arange(self.length, dtype=torch.float32), values=values,
                           y=label)

    def load(self, smoke: bool = False) -> DataBundle:
        gen = torch.Generator().manual_seed(0)
        sizes = (16, 16, 16) if smoke else (self.n_train, self.n_val, self.n_test)
        return DataBundle(*(self._split(n, gen) for n in sizes), task=self.task())
