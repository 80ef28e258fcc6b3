"""Base of the datasets generated in code: three splits drawn from one seeded generator."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field, PositiveInt

from ..components import DatasetConfig
from ..limits import Seed
from ..series import DataBundle, SeriesSplit

if TYPE_CHECKING:
    import torch


class GeneratedDataset(DatasetConfig):
    """Train/val/test of ``n_train``/``n_val``/``n_test`` series from ``_split(n, generator)``."""

    n_train: PositiveInt = 512
    n_val: PositiveInt = 128
    n_test: PositiveInt = 256
    data_seed: Seed = Field(0, description="seed of the generator (independent of the run seed)")

    def _split(self, n: int, gen: torch.Generator) -> SeriesSplit:
        raise NotImplementedError

    def load(self, smoke: bool = False) -> DataBundle:
        import torch

        gen = torch.Generator().manual_seed(self.data_seed)
        sizes = (16, 16, 16) if smoke else (self.n_train, self.n_val, self.n_test)
        return DataBundle(*(self._split(n, gen) for n in sizes), task=self.task())
