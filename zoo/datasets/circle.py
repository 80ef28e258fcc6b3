"""The circle input of the LTC trajectory-length experiment (docs/sources.md#ltc-trajectory-length),
generated in code.

I(t) = (sin t, cos t) sampled at ``samples`` (default 100) equally spaced times on [0, 2π], as
the MATLAB ``main.m`` does (it then interpolates linearly between the samples). Every split holds
``copies`` identical series; the target is the input itself (a per-step regression placeholder:
the experiment measures hidden trajectories and trains nothing).
"""

from __future__ import annotations

import math
from typing import ClassVar, Literal

from pydantic import Field, PositiveInt

from ..components import DatasetConfig
from ..series import DataBundle, SeriesSplit, TaskInfo


class CircleConfig(DatasetConfig):
    """Circle input (sin t, cos t) on [0, 2π] for the trajectory-length experiment (no download)."""

    time_first: ClassVar[bool | None] = False

    kind: Literal["circle"] = "circle"
    samples: int = Field(100, ge=2, description="equally spaced samples on [0, t_max]")
    t_max: float = Field(2 * math.pi, gt=0)
    copies: PositiveInt = Field(1, description="identical series per split")

    def task(self) -> TaskInfo:
        return TaskInfo("regression", 2, per_step=True)

    def _split(self) -> SeriesSplit:
        import torch

        times = torch.linspace(0, self.t_max, self.samples, dtype=torch.float64)
        values = torch.stack([times.sin(), times.cos()], -1).float().expand(self.copies, -1, -1)
        return SeriesSplit(times=times.float(), values=values.clone(), y=values.clone())

    def load(self, smoke: bool = False) -> DataBundle:
        return DataBundle(self._split(), self._split(), self._split(), self.task())
