"""Any dataset of the UEA multivariate archive, preprocessed as in the NCDE code
(docs/sources.md#uea-ncde-pipeline).

Kidger et al.'s ``experiments/datasets/uea.py`` (the version reading ``_TRAIN`` and ``_TEST``):
train and test cases are concatenated; shorter series are padded by repeating their last
value, ``final_index`` = length − 1; times 0, 1, …, L−1; with ``missing_rate`` r, each series
loses the rows ``randperm(L)[:int(L·r)]`` drawn from one ``torch.Generator`` seeded 56789 (all
channels set to NaN); labels are numbered in order of first appearance; then the shared
pipeline of :mod:`zoo.data.ncde_pipeline` (train-stat normalisation, time channel, optional
count channels, stratified 70/15/15 split).

Files: per split, ``.ts`` where the cache or mirror has it, else the multivariate ``.arff``, else
the per-dimension ``.arff`` files (:func:`zoo.data.uea_archive.split_files`); ``info["formats"]``
and ``info["sources"]`` say which were read. Any name whose files are in the cache or mirror is
accepted, besides the 30 datasets of the 2018 archive; its number of classes is the one its
training file's header declares.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar, Literal

from pydantic import Field, field_validator

from ..components import DatasetConfig
from ..data.records import DatasetRecord
from ..data.uea_archive import (UEA_CLASSES, declared_classes, has_files, load_split,
                                present_names, search_folders, uea_record)
from ..data.uea_format import padded
from ..errors import InputError
from ..series import DataBundle, TaskInfo
from ..suggest import did_you_mean

if TYPE_CHECKING:
    import torch

DROP_SEED = 56789
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
RECORD = uea_record("uea", "UEA multivariate time series classification archive (2018)",
                    UEA_CLASSES, "ts")


def drop_rows(x: torch.Tensor, rate: float, seed: int = DROP_SEED) -> torch.Tensor:
    """Set ``int(L·rate)`` random time rows of each series to NaN (Kidger et al.'s order)."""
    import torch

    x = x.clone()
    generator = torch.Generator().manual_seed(seed)
    length = x.shape[1]
    for xi in x:
        removed = torch.randperm(length, generator=generator)[:int(length * rate)].sort().values
        xi[removed] = float("nan")
    return x


class UEAConfig(DatasetConfig):
    """A UEA multivariate archive dataset, NCDE-paper preprocessing (optional dropped rows)."""

    time_first: ClassVar[bool | None] = True

    kind: Literal["uea"] = "uea"
    name: str = Field(description="dataset name, e.g. BasicMotions, CharacterTrajectories")
    missing_rate: float = Field(0.0, ge=0, lt=1, description="fraction of rows dropped per series")
    intensity: bool = Field(False, description="add cumulative observation-count channels")

    record: ClassVar[DatasetRecord] = RECORD

    @field_validator("name")
    @classmethod
    def _known(cls, name: str) -> str:
        if not _SAFE_NAME.match(name):
            raise ValueError(f"'{name}' is not a UEA dataset name (letters, digits, '_', '-', "
                             f"'.'; no folders){did_you_mean(name, UEA_CLASSES)}")
        if name in UEA_CLASSES or has_files(RECORD, name):
            return name
        folders = " and ".join(str(f) for f in search_folders(RECORD))
        mirror = "" if len(search_folders(RECORD)) > 1 else " (ZOO_DATA_MIRROR is not set)"
        raise ValueError(
            f"'{name}' is not a dataset of the UEA multivariate archive (2018) and no files of it "
            f"were found: looked for {name}_TRAIN.ts, {name}_TRAIN.arff and "
            f"{name}Dimension1_TRAIN.arff in {folders}{mirror}"
            f"{did_you_mean(name, dict.fromkeys([*present_names(RECORD), *UEA_CLASSES]))}")

    def task(self) -> TaskInfo:
        if self.name in UEA_CLASSES:
            return TaskInfo("multiclass", UEA_CLASSES[self.name])
        if (stored := self.known_task()) is not None:
            return stored
        return TaskInfo("multiclass", len(declared_classes(RECORD, self.name)))

    def load(self, smoke: bool = False) -> DataBundle:
        import torch

        from ..data.ncde_pipeline import ncde_bundle

        (train, train_fmt, train_paths), (test, test_fmt, test_paths) = (
            load_split(RECORD, self.name, split) for split in ("TRAIN", "TEST"))
        paths = train_paths + test_paths
        if train.series[0].shape[0] != test.series[0].shape[0]:
            raise InputError(f"dataset '{self.kind}': {self.name} has "
                             f"{train.series[0].shape[0]} channels in {train_paths[0]} but "
                             f"{test.series[0].shape[0]} in {test_paths[0]}")
        x, lengths = padded(train.series + test.series, fill="last")
        order = list(dict.fromkeys(train.labels + test.labels))
        expected = self.task().n_outputs
        if len(order) != expected:
            where = ("" if self.name in UEA_CLASSES
                     else f" (declared in the header of {train_paths[0]})")
            raise InputError(f"dataset '{self.kind}': {self.name} has {len(order)} classes in "
                             f"{train_paths[0]} and {test_paths[0]}, expected {expected}{where}")
        y = torch.tensor([order.index(label) for label in train.labels + test.labels])
        if self.missing_rate:
            x = drop_rows(x, self.missing_rate)
        times = torch.arange(x.shape[1], dtype=x.dtype)
        bundle = ncde_bundle(times, x, y, lengths - 1, self.task(), intensity=self.intensity)
        bundle.info.update(classes=order, sources=[str(p) for p in paths],
                           formats={"TRAIN": train_fmt, "TEST": test_fmt})
        return bundle
