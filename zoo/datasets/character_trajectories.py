"""UEA CharacterTrajectories (paper (c)'s setup, docs/sources.md#jac-character-trajectories,
or the NCDE paper's dropped points, #uea-ncde-pipeline).

Without ``drop`` (paper (c)'s code): train and test cases concatenated, labels − 1 (20
classes), the 3 pen channels with **no** time channel and no normalisation, the 80/8/12 split
of :func:`zoo.data.splits.jacobian_ncde_split`, times 0..L−1. That code loaded the
equal-length release through aeon; aeon documents such releases as made equal length by
truncation, so series of unequal length are truncated to the shortest one here (not checked
against the ``_eq`` files). With ``drop`` = 0.3/0.5/0.7: Kidger et al.'s variant, i.e. the
``uea`` dataset with that ``missing_rate`` (time channel, normalisation, 70/15/15 split).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from ..components import DatasetConfig
from ..data.records import DatasetRecord
from ..data.splits import jacobian_ncde_split
from ..data.uea_archive import load_train_test, uea_record
from ..errors import InputError
from ..series import DataBundle, SeriesSplit, TaskInfo
from .uea import UEAConfig

NAME = "CharacterTrajectories"
N_CLASSES = 20
RECORD = uea_record("character_trajectories", "UEA CharacterTrajectories (pen tip, 20 letters)",
                    [NAME], "ts")


class CharacterTrajectoriesConfig(DatasetConfig):
    """UEA CharacterTrajectories, 20 letters; paper (c) split or NCDE dropped-points variant."""

    kind: Literal["character_trajectories"] = "character_trajectories"
    drop: Literal[0.3, 0.5, 0.7] | None = Field(
        None, description="fraction of points dropped per series (NCDE paper); none: paper (c)")

    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", N_CLASSES)

    def channel_0_is_time(self) -> bool:
        return self.drop is not None  # the uea pipeline prepends it; paper (c) has none

    def load(self, smoke: bool = False) -> DataBundle:
        import torch

        if self.drop is not None:
            return UEAConfig(name=NAME, missing_rate=self.drop).load(smoke)
        train, test, paths = load_train_test(RECORD, NAME, "ts")
        length = min(s.shape[1] for s in train.series + test.series)
        x = torch.from_numpy(np.stack([s[:, :length].T for s in train.series + test.series]))
        x = x.float()
        try:
            y = torch.tensor([int(label) - 1 for label in train.labels + test.labels])
        except ValueError:
            raise InputError(f"dataset '{self.kind}': labels of {paths[0]} / {paths[1]} are not "
                             f"the integers 1..{N_CLASSES}") from None
        if y.min() < 0 or y.max() >= N_CLASSES:
            raise InputError(f"dataset '{self.kind}': labels of {paths[0]} / {paths[1]} are not "
                             f"in 1..{N_CLASSES}")
        whole = SeriesSplit(times=torch.arange(length, dtype=torch.float32), values=x, y=y)
        parts = jacobian_ncde_split(len(y))
        return DataBundle(*(whole.subset(torch.as_tensor(i)) for i in parts), self.task(),
                          info={"truncated_to": length, "sources": [str(p) for p in paths]})
