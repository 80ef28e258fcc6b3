"""UCI Individual Household Electric Power Consumption (LTC paper Table 3; [LTC] ``power.py``;
docs/sources.md#ltc-power).

The seven measurement columns of ``household_power_consumption.txt`` (header skipped, lines with
fewer than 8 ``;``-fields skipped) are parsed as the script does: a missing value (``?`` or an
empty last field) repeats the column's previous value (the script seeds that memory with the
column index). Every column is z-scored (float32, population std); Global_active_power is the
target, the other six the inputs. Windows of 32, stride 32, permuted with seed 23489: 10 %
validation, 15 % test, rest training. Per-step regression, MSE.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from ...data.ltc_splits import permutation_split, split_arrays
from ...data.readers import reading, zip_member_text
from ...data.records import DatasetRecord, RemoteFile
from ...data.windows import cut, ltc_starts
from ...series import TaskInfo
from .base import LTCDataset
from .uci import LEGACY, UCI_LICENCE

ARCHIVE = "household_power_consumption.zip"
MEMBER = "household_power_consumption.txt"
RECORD = DatasetRecord(
    name="power",
    title="UCI Individual Household Electric Power Consumption (LTC paper, Table 3)",
    files=(RemoteFile(ARCHIVE, [
        LEGACY + "00235/household_power_consumption.zip",
        "https://archive.ics.uci.edu/static/public/235/"
        "individual+household+electric+power+consumption.zip"],
        None, None, "UCI publishes no checksum, and no copy was available to record one"),),
    licence=UCI_LICENCE,
    citation="Hebrail, Berard: Individual Household Electric Power Consumption, UCI Machine "
             "Learning Repository (2012)",
    homepage="https://archive.ics.uci.edu/dataset/235/"
             "individual+household+electric+power+consumption",
    mirror_subdir="ltc/power",
)
LENGTH, SEED = 32, 23489


def read_rows(text: str) -> np.ndarray:
    """The seven measurement columns (rows, 7) float32, gaps filled with the previous value."""
    memory = [float(i) for i in range(7)]
    rows = []
    for line in text.splitlines()[1:]:
        fields = line.split(";")
        if len(fields) < 8:
            continue
        values = fields[2:]
        if len(values) != 7:
            raise ValueError(f"expected 9 ';'-separated fields, got {len(fields)}: {line!r}")
        for i, v in enumerate(values):
            if v in ("?", ""):
                values[i] = memory[i]
            else:
                values[i] = memory[i] = float(v)
        rows.append(values)
    if not rows:
        raise ValueError("no measurement line")
    return np.array(rows, dtype=np.float32)


class PowerConfig(LTCDataset):
    """Household power: global active power, per minute, from the other meters (LTC Table 3)."""

    kind: Literal["power"] = "power"
    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("regression", 1, per_step=True)

    def arrays(self, paths: dict[str, Path]) -> dict[str, np.ndarray]:
        with reading(self.kind, paths[ARCHIVE], MEMBER):
            rows = read_rows(zip_member_text(paths[ARCHIVE], MEMBER))
        rows -= np.mean(rows, axis=0)
        rows /= np.std(rows, axis=0)
        starts = ltc_starts(len(rows), LENGTH, LENGTH)
        x, y = cut(rows[:, 1:], starts, LENGTH), cut(rows[:, :1], starts, LENGTH)
        return split_arrays(x, y, permutation_split(len(x), SEED))
