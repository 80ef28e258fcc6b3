"""Any dataset of the UEA multivariate archive, preprocessed as in the NCDE code
(docs/sources.md#uea-ncde-pipeline).

Kidger et al.'s ``experiments/datasets/uea.py`` (the version reading ``_TRAIN`` and ``_TEST``):
train and test cases are concatenated; shorter series are padded by repeating their last
value, ``final_index`` = length − 1; times 0, 1, …, L−1; with ``missing_rate`` r, each series
loses the rows ``randperm(L)[:int(L·r)]`` drawn from one ``torch.Generator`` seeded 56789 (all
channels set to NaN); labels are numbered in order of first appearance; then the shared
pipeline of :mod:`zoo.data.ncde_pipeline` (train-stat normalisation, time channel, optional
count channels, stratified 70/15/15 split).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import torch
from pydantic import Field, field_validator

from ..components import DatasetConfig
from ..data.ncde_pipeline import ncde_bundle
from ..data.records import DatasetRecord
from ..data.uea_archive import UEA_CLASSES, load_train_test, uea_record
from ..data.uea_format import padded
from ..errors import InputError
from ..series import DataBundle, TaskInfo
from ..suggest import did_you_mean

DROP_SEED = 56789
RECORD = uea_record("uea", "UEA multivariate time series classification archive (2018)",
                    UEA_CLASSES, "ts")


def drop_rows(x: torch.Tensor, rate: float, seed: int = DROP_SEED) -> torch.Tensor:
    """Set ``int(L·rate)`` random time rows of each series to NaN (Kidger et al.'s order)."""
    x = x.clone()
    generator = torch.Generator().manual_seed(seed)
    length = x.shape[1]
    for xi in x:
        removed = torch.randperm(length, generator=generator)[:int(length * rate)].sort().values
        xi[removed] = float("nan")
    return x


class UEAConfig(DatasetConfig):
    """A UEA multivariate archive dataset, NCDE-paper preprocessing (optional dropped rows)."""

    kind: Literal["uea"] = "uea"
    name: str = Field(description="dataset name, e.g. BasicMotions, CharacterTrajectories")
    missing_rate: float = Field(0.0, ge=0, lt=1, description="fraction of rows dropped per series")
    intensity: bool = Field(False, description="add cumulative observation-count channels")

    record: ClassVar[DatasetRecord] = RECORD

    @field_validator("name")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in UEA_CLASSES:
            raise ValueError(f"'{name}' is not a UEA multivariate dataset"
                             f"{did_you_mean(name, UEA_CLASSES)}")
        return name

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", UEA_CLASSES[self.name])

    def load(self, smoke: bool = False) -> DataBundle:
        train, test, paths = load_train_test(RECORD, self.name, "ts")
        x, lengths = padded(train.series + test.series, fill="last")
        order = list(dict.fromkeys(train.labels + test.labels))
        if len(order) != UEA_CLASSES[self.name]:
            raise InputError(f"dataset '{self.kind}': {self.name} has {len(order)} classes in "
                             f"{paths[0]} and {paths[1]}, expected {UEA_CLASSES[self.name]}")
        y = torch.tensor([order.index(label) for label in train.labels + test.labels])
        if self.missing_rate:
            x = drop_rows(x, self.missing_rate)
        times = torch.arange(x.shape[1], dtype=x.dtype)
        bundle = ncde_bundle(times, x, y, lengths - 1, self.task(), intensity=self.intensity)
        bundle.info.update(classes=order, sources=[str(p) for p in paths])
        return bundle
