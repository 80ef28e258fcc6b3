"""UCI Gesture Phase Segmentation (LTC paper Table 3; [LTC] ``gesture.py``;
docs/sources.md#ltc-gesture).

The seven processed ``*_va3.csv`` files (32 velocity/acceleration features, phase D/P/S/H/R),
in the authors' order a3, b1, b3, c1, c3, a2, a1, are each cut into back-to-back windows of 32
plus the windows shifted by 16 between them; all windows are z-scored with the mean and
(population) standard deviation over all their rows, then permuted with seed 23489: the first
10 % are validation, the next 15 % test, the rest training. Per-step 5-class label.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from ...data.ltc_splits import permutation_split, split_arrays
from ...data.readers import reading, zip_member_text
from ...data.records import DatasetRecord, RemoteFile
from ...data.windows import cut, interleaved_starts
from ...series import TaskInfo
from .base import LTCDataset
from .uci import LEGACY, UCI_LICENCE, copy_note

ARCHIVE = "gesture_phase_dataset.zip"
RECORD = DatasetRecord(
    name="gesture",
    title="UCI Gesture Phase Segmentation (LTC paper, Table 3)",
    files=(RemoteFile(ARCHIVE, [
        LEGACY + "00302/gesture_phase_dataset.zip",
        "https://archive.ics.uci.edu/static/public/302/gesture+phase+segmentation.zip"],
        None, 1943494,
        copy_note("58e7259cf700fa5001ade8983bea853508c529ede030e97e76decb9952352693")),),
    licence=UCI_LICENCE,
    citation="Madeo, Peres, Lima: Gesture phase segmentation using support vector machines, "
             "Expert Systems with Applications 56 (2016)",
    homepage="https://archive.ics.uci.edu/dataset/302/gesture+phase+segmentation",
    mirror_subdir="ltc/gesture",
)
FILES = ("a3_va3.csv", "b1_va3.csv", "b3_va3.csv", "c1_va3.csv", "c3_va3.csv", "a2_va3.csv",
         "a1_va3.csv")
PHASES = ("D", "P", "S", "H", "R")
LENGTH, SEED = 32, 23489


def read_trace(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Features (rows, 32) float32 and phase index of one ``*_va3.csv``."""
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], [r for r in rows[1:] if r]
    if len(header) != 33 or header[-1] != "Phase":
        raise ValueError(f"expected 32 feature columns and 'Phase', got {len(header)} columns")
    x = np.array([r[:-1] for r in body], dtype=np.float64).astype(np.float32)
    y = np.array([PHASES.index(r[-1]) for r in body], dtype=np.int64)
    return x, y


class GestureConfig(LTCDataset):
    """UCI Gesture Phase: the movement phase (D/P/S/H/R) at every frame (LTC Table 3)."""

    kind: Literal["gesture"] = "gesture"
    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", len(PHASES), per_step=True, class_names=PHASES)

    def arrays(self, paths: dict[str, Path]) -> dict[str, np.ndarray]:
        xs, ys = [], []
        for name in FILES:
            with reading(self.kind, paths[ARCHIVE], name):
                x, y = read_trace(zip_member_text(paths[ARCHIVE], name))
            starts = interleaved_starts(len(x), LENGTH)
            xs.append(cut(x, starts, LENGTH))
            ys.append(cut(y, starts, LENGTH))
        x, y = np.concatenate(xs), np.concatenate(ys)
        flat = x.transpose(1, 0, 2).reshape(-1, x.shape[-1])  # the authors' time-major order
        x = (x - flat.mean(axis=0)) / flat.std(axis=0)
        return split_arrays(x, y, permutation_split(len(x), SEED))
