"""UCI Localization Data for Person Activity, ConfLongDemo_JSI (LTC paper Table 4; [LTC]
``person.py``; docs/sources.md#ltc-person).

Each line gives a person, one of four sensor tags, and its x, y, z position; inputs are the
one-hot tag followed by x, y, z (7 channels, not normalised: the script computes statistics but
does not apply them). The 11 activities are merged into 7 classes. Lines are grouped into one
series per person; as in the script, a series is stored when the next person starts, so the
last person in the file is left out. Each series is cut into windows of 32 with stride 16; the
windows are permuted with seed 27731: 10 % validation, 15 % test, rest training.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from ...data.ltc_splits import permutation_split, split_arrays
from ...data.readers import reading, text_of
from ...data.records import DatasetRecord, RemoteFile
from ...data.windows import cut, ltc_starts
from ...series import TaskInfo
from .base import LTCDataset
from .uci import LEGACY, UCI_LICENCE

FILE = "ConfLongDemo_JSI.txt"
RECORD = DatasetRecord(
    name="person",
    title="UCI Localization Data for Person Activity (LTC paper, Table 4)",
    files=(RemoteFile(FILE, [LEGACY + "00196/ConfLongDemo_JSI.txt"], None, None,
                      "UCI publishes no checksum, and no copy was available to record one"),),
    licence=UCI_LICENCE,
    citation="Kaluza, Mirchevska, Dovgan, Lustrek, Gams: An agent-based approach to care in "
             "independent living, AmI 2010",
    homepage="https://archive.ics.uci.edu/dataset/196/localization+data+for+person+activity",
    mirror_subdir="ltc/person",
    notes="The second person-activity setting of the paper (Table 5, Rubanova et al.'s "
          "sequences) has no script in the authors' repository and is not provided.",
)
CLASSES = {
    "lying down": 0, "lying": 0, "sitting down": 1, "sitting": 1,
    "standing up from lying": 2, "standing up from sitting": 2,
    "standing up from sitting on the ground": 2, "walking": 3, "falling": 4,
    "on all fours": 5, "sitting on the ground": 6,
}
CLASS_NAMES = ("lying", "sitting", "standing up", "walking", "falling", "on all fours",
               "sitting on the ground")
SENSORS = {"010-000-024-033": 0, "010-000-030-096": 1, "020-000-033-111": 2,
           "020-000-032-221": 3}
LENGTH, STRIDE, SEED = 32, 16, 27731


def read_series(text: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per-person (rows, 7) float32 inputs and labels, in file order, without the last person."""
    done, xs, ys, person = [], [], [], "A01"
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) < 6:
            break
        if fields[0] != person:
            done.append((np.stack(xs), np.array(ys, dtype=np.int64)))
            xs, ys = [], []
        person = fields[0]
        row = np.zeros(7, dtype=np.float32)
        row[SENSORS[fields[1]]] = 1
        row[4:] = np.array(fields[4:7], dtype=np.float32)
        xs.append(row)
        ys.append(CLASSES[fields[7]])
    return done


class PersonConfig(LTCDataset):
    """Person activity (ConfLongDemo): 7 activities per step from 4 body tags (LTC Table 4)."""

    kind: Literal["person"] = "person"
    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", len(CLASS_NAMES), per_step=True, class_names=CLASS_NAMES)

    def arrays(self, paths: dict[str, Path]) -> dict[str, np.ndarray]:
        with reading(self.kind, paths[FILE]):
            series = read_series(text_of(paths[FILE]))
            if not series:
                raise ValueError("fewer than two persons in the file")
        xs, ys = [], []
        for x, y in series:
            starts = ltc_starts(len(x), LENGTH, STRIDE)
            if len(starts):
                xs.append(cut(x, starts, LENGTH))
                ys.append(cut(y, starts, LENGTH))
        x, y = np.concatenate(xs), np.concatenate(ys)
        return split_arrays(x, y, permutation_split(len(x), SEED))
