"""UCI Occupancy Detection (LTC paper Table 3; [LTC] ``occupancy.py``;
docs/sources.md#ltc-occupancy).

Inputs Temperature, Humidity, Light, CO2, HumidityRatio, z-scored with the mean and (population)
standard deviation of ``datatraining.txt``. Windows of 16 rows: stride 1 on the training file,
stride 8 on ``datatest.txt`` and ``datatest2.txt`` (together the test split); 10 % of the
training windows (permutation seed 893429) are the validation split. Per-step 2-class label.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from ...data.ltc_splits import permutation_split
from ...data.readers import csv_columns, reading, text_of
from ...data.records import DatasetRecord, RemoteFile
from ...data.windows import cut, ltc_starts
from ...series import TaskInfo
from .base import LTCDataset
from .uci import LEGACY, UCI_LICENCE, copy_note

ARCHIVES = [LEGACY + "00357/occupancy_data.zip",
            "https://archive.ics.uci.edu/static/public/357/occupancy+detection.zip"]
FILES = {  # name: (sha256 of the mirror copy, size)
    "datatraining.txt":
        ("b2c4d0ce2b9e4e453c476f7125ef31aeec2d1f5c7f5572d0e80de3df6521ab56", 596674),
    "datatest.txt": ("89dfb859db944f3e5f47242714f98d546971c91021093a2fffc2c65e2636e680", 200771),
    "datatest2.txt":
        ("d026d1bd5aeccd4aff4f3b3710d48e40613bd5fc370db7e61bbdcaa50d985095", 699664),
}
RECORD = DatasetRecord(
    name="occupancy",
    title="UCI Occupancy Detection (LTC paper, Table 3)",
    files=tuple(RemoteFile(name, ARCHIVES, None, size, copy_note(sha), member=name)
                for name, (sha, size) in FILES.items()),
    licence=UCI_LICENCE,
    citation="Candanedo, Feldheim: Accurate occupancy detection of an office room from light, "
             "temperature, humidity and CO2 measurements, Energy and Buildings 112 (2016)",
    homepage="https://archive.ics.uci.edu/dataset/357/occupancy+detection",
    mirror_subdir="ltc/occupancy",
)
FEATURES = ["Temperature", "Humidity", "Light", "CO2", "HumidityRatio"]
LENGTH, TEST_STRIDE, SEED = 16, 8, 893429


def read_rows(dataset: str, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Features (rows, 5) float64 and the Occupancy label of one of the three files."""
    with reading(dataset, path):
        cols = csv_columns(text_of(path), FEATURES + ["Occupancy"])
        x = np.array([cols[n] for n in FEATURES], dtype=np.float64).T
        y = np.array(cols["Occupancy"], dtype=np.float64).astype(np.int64)
        if not set(np.unique(y)) <= {0, 1}:
            raise ValueError("Occupancy labels must be 0 or 1")
    return x, y


class OccupancyConfig(LTCDataset):
    """UCI Occupancy: room occupied or not, at every minute, from 5 sensors (LTC Table 3)."""

    kind: Literal["occupancy"] = "occupancy"
    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", 2, per_step=True, class_names=("empty", "occupied"))

    def arrays(self, paths: dict[str, Path]) -> dict[str, np.ndarray]:
        rows = {name: read_rows(self.kind, paths[name]) for name in FILES}
        train_x = rows["datatraining.txt"][0]
        mean, std = train_x.mean(axis=0), train_x.std(axis=0)
        windows = {}
        for name, (x, y) in rows.items():
            starts = ltc_starts(len(x), LENGTH, 1 if name == "datatraining.txt" else TEST_STRIDE)
            windows[name] = (cut((x - mean) / std, starts, LENGTH).astype(np.float32),
                             cut(y, starts, LENGTH))
        x, y = windows.pop("datatraining.txt")
        train, val, _ = permutation_split(len(x), SEED, test=False)
        return {"train_x": x[train], "train_y": y[train], "val_x": x[val], "val_y": y[val],
                "test_x": np.concatenate([w[0] for w in windows.values()]),
                "test_y": np.concatenate([w[1] for w in windows.values()])}
