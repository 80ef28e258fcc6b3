"""UCI Ozone Level Detection, eight-hour peaks (LTC paper Table 3; [LTC] ``ozone.py``;
docs/sources.md#ltc-ozone and #ltc-ozone-protocol).

``eighthr.data`` is read line by line until the first line without 74 fields; the 72 features
(date and label dropped) have ``?`` replaced by 0 and are z-scored with one global mean and
(population) standard deviation. Windows of 32 rows, stride 4. The loss is 2-class cross-entropy
weighted 1.6 (ozone day) / 0.1 (normal day), the selection metric F1.

``protocol``:

* ``as_run`` (default): what the script trains on. It stacks the windows a second time, which
  swaps the batch and time axes: 32 "sequences" of 626 steps (sequence k, step j = row 4j + k),
  permuted with seed 23489 into 3 validation, 4 test and 25 training sequences.
* ``windowed``: the evident intent, the 626 windows of 32 steps permuted with seed 23489
  (62 validation, 93 test, 471 training).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from ...data.ltc_splits import permutation_split, split_arrays
from ...data.readers import reading, text_of
from ...data.records import DatasetRecord, RemoteFile
from ...data.windows import cut, ltc_starts
from ...series import TaskInfo
from .base import LTCDataset
from .uci import LEGACY, UCI_LICENCE, copy_note

FILE = "eighthr.data"
RECORD = DatasetRecord(
    name="ozone",
    title="UCI Ozone Level Detection, eight-hour (LTC paper, Table 3)",
    files=(RemoteFile(FILE, [LEGACY + "ozone/eighthr.data"], None, 868388, copy_note(
        "40244a0544010a2dba20c27aeca7aa4c2c673f8fb8614f1881472334890c356b")),),
    licence=UCI_LICENCE,
    citation="Zhang, Fan: Forecasting skewed biased stochastic ozone days: analyses, solutions "
             "and beyond, Knowledge and Information Systems 14 (2008)",
    homepage="https://archive.ics.uci.edu/dataset/172/ozone+level+detection",
    mirror_subdir="ltc/ozone",
)
LENGTH, STRIDE, SEED = 32, 4, 23489
#: cross-entropy weight of class 0 (normal day) and 1 (ozone day): ``label * 1.5 + 0.1``
CLASS_WEIGHTS = (0.1, 1.6)


def read_rows(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Globally z-scored features (rows, 72) and labels, up to the first malformed line."""
    xs, ys = [], []
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) != 74:
            break
        xs.append([0.0 if v == "?" else float(v) for v in parts[1:-1]])
        ys.append(int(float(parts[-1])))
    if not xs:
        raise ValueError("no line with 74 comma-separated fields")
    x = np.array(xs)
    x -= np.mean(x)
    x /= np.std(x)
    return x, np.array(ys, dtype=np.int64)


class OzoneConfig(LTCDataset):
    """UCI Ozone (eight-hour): ozone day or not, per step, class-weighted (LTC Table 3)."""

    kind: Literal["ozone"] = "ozone"
    record: ClassVar[DatasetRecord] = RECORD
    protocol: Literal["as_run", "windowed"] = Field(
        "as_run", description="as_run: the script's transposed 32 sequences of 626 steps "
                              "(docs/sources.md#ltc-ozone-protocol); windowed: 626 windows of "
                              "32 steps")

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", 2, per_step=True, class_names=("normal", "ozone"))

    def extra_info(self) -> dict:
        return {"class_weights": CLASS_WEIGHTS, "protocol": self.protocol,
                "loss_reduction": "mean of weighted per-step losses (not divided by the weights)"}

    def arrays(self, paths: dict[str, Path]) -> dict[str, np.ndarray]:
        with reading(self.kind, paths[FILE]):
            rows, labels = read_rows(text_of(paths[FILE]))
        starts = ltc_starts(len(rows), LENGTH, STRIDE)
        x, y = cut(rows, starts, LENGTH).astype(np.float32), cut(labels, starts, LENGTH)
        if self.protocol == "as_run":
            x, y = x.transpose(1, 0, 2), y.T
        return split_arrays(x, y, permutation_split(len(x), SEED))
