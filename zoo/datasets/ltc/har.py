"""UCI Human Activity Recognition Using Smartphones (LTC paper Table 3; [LTC] ``har.py``;
docs/sources.md#ltc-har).

The 561 precomputed features of ``X_train.txt`` / ``X_test.txt`` (read from the official zip,
not normalised) with the activity labels 1–6 shifted to 0–5. The rows of each file are cut into
windows of 16: stride 1 for training, stride 8 for the official test set; 10 % of the training
windows (permutation seed 893429) are the validation split. Per-step 6-class label.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from ...data.ltc_splits import permutation_split
from ...data.readers import reading, zip_member_text
from ...data.records import DatasetRecord, RemoteFile
from ...data.windows import cut, ltc_starts
from ...series import TaskInfo
from .base import LTCDataset
from .uci import LEGACY, UCI_LICENCE

ARCHIVE = "UCI HAR Dataset.zip"
RECORD = DatasetRecord(
    name="har",
    title="UCI Human Activity Recognition Using Smartphones (LTC paper, Table 3)",
    files=(RemoteFile(ARCHIVE, [LEGACY + "00240/UCI%20HAR%20Dataset.zip"], None, None,
                      "UCI publishes no checksum, and no copy was available to record one"),),
    licence=UCI_LICENCE,
    citation="Anguita, Ghio, Oneto, Parra, Reyes-Ortiz: A public domain dataset for human "
             "activity recognition using smartphones, ESANN 2013",
    homepage="https://archive.ics.uci.edu/dataset/240/"
             "human+activity+recognition+using+smartphones",
    mirror_subdir="ltc/har",
    notes="The current UCI page serves this zip wrapped in another zip; unpack the outer one "
          "into the mirror folder if the legacy URL stops working.",
)
ACTIVITIES = ("walking", "walking upstairs", "walking downstairs", "sitting", "standing",
              "laying")
LENGTH, TEST_STRIDE, SEED = 16, 8, 893429


class HARConfig(LTCDataset):
    """UCI HAR: the activity at every step from 561 smartphone features (LTC Table 3)."""

    kind: Literal["har"] = "har"
    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", 6, per_step=True, class_names=ACTIVITIES)

    def _windows(self, archive: Path, part: str, stride: int):
        arrays = []
        for member in (f"{part}/X_{part}.txt", f"{part}/y_{part}.txt"):
            with reading(self.kind, archive, member):
                arrays.append(np.loadtxt(io.StringIO(zip_member_text(archive, member)),
                                         ndmin=2))
        x, y = arrays[0].astype(np.float32), arrays[1][:, 0].astype(np.int64) - 1
        with reading(self.kind, archive, f"{part}/X_{part}.txt"):
            if x.shape != (len(y), 561) or not set(np.unique(y)) <= set(range(6)):
                raise ValueError(f"expected rows of 561 features and labels 1-6, got {x.shape} "
                                 f"for {len(y)} labels")
        starts = ltc_starts(len(x), LENGTH, stride)
        return cut(x, starts, LENGTH), cut(y, starts, LENGTH)

    def arrays(self, paths: dict[str, Path]) -> dict[str, np.ndarray]:
        x, y = self._windows(paths[ARCHIVE], "train", 1)
        test_x, test_y = self._windows(paths[ARCHIVE], "test", TEST_STRIDE)
        train, val, _ = permutation_split(len(x), SEED, test=False)
        return {"train_x": x[train], "train_y": y[train], "val_x": x[val], "val_y": y[val],
                "test_x": test_x, "test_y": test_y}
