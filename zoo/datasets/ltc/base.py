"""What every LTC-suite dataset shares: fetch the record's files, preprocess once into the
tensor cache, wrap the windows as splits on the grid 0, 1, …, T−1
(docs/sources.md#ltc-datasets).

A subclass declares ``record``, ``version`` (bump it when its preprocessing changes, so cached
tensors are rebuilt), :meth:`task` and :meth:`arrays`, which turns the local source files into
numpy arrays ``{train,val,test}_{x,y}`` batch-first: x (N, T, C), y (N, T[, K]) or (N,).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ...components import DatasetConfig
from ...data.fetch import fetch, partial_note, sha256_of
from ...data.records import DatasetRecord
from ...series import DataBundle, SeriesSplit

if TYPE_CHECKING:
    import torch

SPLITS = ("train", "val", "test")
SMOKE_SIZE = 16


class LTCDataset(DatasetConfig):
    record: ClassVar[DatasetRecord]
    version: ClassVar[int] = 1
    time_first: ClassVar[bool | None] = False

    def arrays(self, paths: dict[str, Path]) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def extra_info(self) -> dict:
        """Task details a readout may need beyond :class:`TaskInfo` (e.g. class weights)."""
        return {}

    def load(self, smoke: bool = False) -> DataBundle:
        import torch

        from ...data.cache import cached

        paths = {f.name: fetch(self.record, f.name) for f in self.record.files}
        key = {"dataset": self.kind, "options": self.model_dump(), "version": self.version,
               "sources": {name: sha256_of(p) for name, p in paths.items()}}

        def build() -> dict[str, torch.Tensor]:
            out = self.arrays(paths)
            return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in out.items()}

        tensors = cached(key, build)
        splits = []
        for name in SPLITS:
            values, y = tensors[f"{name}_x"].float(), tensors[f"{name}_y"]
            y = y.long() if self.task().kind == "multiclass" else y.float()
            split = SeriesSplit(times=torch.arange(values.shape[1], dtype=torch.float32),
                                values=values, y=y)
            splits.append(split.subset(slice(0, SMOKE_SIZE)) if smoke else split)
        return DataBundle(*splits, task=self.task(),
                          partial=partial_note(self.record, paths.values()),
                          info={"source": self.record.name, **self.extra_info()})
