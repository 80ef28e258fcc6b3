"""UCI Metro Interstate Traffic Volume (LTC paper Table 3; [LTC] ``traffic.py``;
docs/sources.md#ltc-traffic).

Seven inputs per hour: holiday flag, temperature minus its mean, rain_1h, snow_1h, clouds_all,
weekday, sin(hour·π/24); target: traffic_volume z-scored (population std), all float32. The
script's holiday flag compares the column's strings with Python ``None``, which is never true,
so the channel is constant 0 (kept, to match the published inputs). Per-step regression, MSE.

``protocol``:

* ``windowed`` (default, also when unset): the script since commit a0bede1 (2021-08-09,
  "bugfix: traffic dataset transposed axis"): the 12,043 windows of 32 hours, stride 4,
  permuted with seed 23489 into 10 % validation, 15 % test and the rest training.
* ``as_run``: the script as released with the paper (commit cfc6a1f, 2020-06-01). Its second
  stack of the windows swaps the batch and time axes, as ozone.py's does: 32 "sequences" of
  12,043 steps (sequence k, step j = hour 4j + k), permuted with seed 23489 into 3 validation,
  4 test and 25 training sequences.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
from pydantic import Field

from ...data.ltc_splits import permutation_split, split_arrays
from ...data.readers import csv_columns, reading, text_of
from ...data.records import DatasetRecord, RemoteFile
from ...data.windows import cut, ltc_starts
from ...series import TaskInfo
from .base import LTCDataset
from .uci import LEGACY, UCI_LICENCE, copy_note

FILE = "Metro_Interstate_Traffic_Volume.csv.gz"
RECORD = DatasetRecord(
    name="traffic",
    title="UCI Metro Interstate Traffic Volume (LTC paper, Table 3)",
    files=(RemoteFile(FILE, [LEGACY + "00492/" + FILE], None, 403161, copy_note(
        "2c969c60e332ef9ce069ae49e30f5c18366a416f410db9afbb1444adf08f46e3")),),
    licence=UCI_LICENCE,
    citation="Hogue: Metro Interstate Traffic Volume, UCI Machine Learning Repository (2019)",
    homepage="https://archive.ics.uci.edu/dataset/492/metro+interstate+traffic+volume",
    mirror_subdir="ltc/traffic",
)
COLUMNS = ["temp", "rain_1h", "snow_1h", "clouds_all", "date_time", "traffic_volume"]
LENGTH, STRIDE, SEED = 32, 4, 23489


def features(cols: dict[str, list[str]]) -> tuple[np.ndarray, np.ndarray]:
    """Inputs (rows, 7) and z-scored target (rows, 1), float32, as the authors compute them."""
    temp = np.array(cols["temp"], dtype=np.float64).astype(np.float32)
    temp -= np.mean(temp)
    stamps = [datetime.strptime(d, "%Y-%m-%d %H:%M:%S") for d in cols["date_time"]]
    weekday = np.array([d.weekday() for d in stamps], dtype=np.float32)
    noon = np.sin(np.array([d.hour for d in stamps], dtype=np.float32) * np.pi / 24)
    x = np.stack([np.zeros_like(temp), temp,
                  *(np.array(cols[c], dtype=np.float64).astype(np.float32)
                    for c in ("rain_1h", "snow_1h", "clouds_all")),
                  weekday, noon], axis=-1)
    volume = np.array(cols["traffic_volume"], dtype=np.float64).astype(np.float32)
    volume -= np.mean(volume)
    volume /= np.std(volume)
    return x, volume[:, None]


class TrafficConfig(LTCDataset):
    """Metro Interstate traffic: hourly traffic volume from weather and time (LTC Table 3)."""

    kind: Literal["traffic"] = "traffic"
    record: ClassVar[DatasetRecord] = RECORD
    protocol: Literal["windowed", "as_run"] | None = Field(
        None, description="windowed (or unset): 12,043 windows of 32 hours (the script since its "
                                "2021 fix); as_run: the paper-time script's transposed 32 "
                                "sequences of 12,043 steps (docs/sources.md#ltc-traffic)")

    def task(self) -> TaskInfo:
        return TaskInfo("regression", 1, per_step=True)

    def arrays(self, paths: dict[str, Path]) -> dict[str, np.ndarray]:
        with reading(self.kind, paths[FILE]):
            x, y = features(csv_columns(text_of(paths[FILE]), COLUMNS))
        starts = ltc_starts(len(x), LENGTH, STRIDE)
        x, y = cut(x, starts, LENGTH), cut(y, starts, LENGTH)
        if self.protocol == "as_run":
            x, y = x.transpose(1, 0, 2), y.transpose(1, 0, 2)
        return split_arrays(x, y, permutation_split(len(x), SEED))
