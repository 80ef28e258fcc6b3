"""Write random data of the real sizes in the official formats of HAR, power, person and MNIST.

These four sets of paper (b) are absent from the local mirror (MNIST has its test split only).
The per-epoch cost of a spec depends on the sizes, not the values, so
reproductions/epoch_timing.sh can time one epoch on these files (ZOO_DATA_MIRROR=FOLDER). The
numbers trained on them mean nothing.

    .venv/bin/python reproductions/synthetic_ltc_mirror.py /tmp/repro/synthetic_ltc
"""

from __future__ import annotations

import importlib.util
import io
import sys
import zipfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("ltc_writers",
                                              ROOT / "tests/datasets/test_ltc_formats.py")
writers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(writers)

#: official sizes: HAR train/test rows, power rows, person rows per person, MNIST train/test
HAR_ROWS, POWER_ROWS, MNIST = (7352, 2947), 2_075_259, (60_000, 10_000)
PEOPLE = [f"{group}0{i}" for group in "ABCDE" for i in range(1, 6)]
PERSON_ROWS = 164_860
ACTIVITIES = ["walking", "falling", "lying down", "lying", "sitting down", "sitting on the ground",
              "standing up from lying", "on all fours", "sitting", "standing up from sitting",
              "standing up from sitting on the ground"]

rng = np.random.default_rng(0)
mirror = Path(sys.argv[1])


def text(table: np.ndarray) -> str:
    return "\n".join(" " + " ".join(f"{v: .8e}" for v in row) for row in table) + "\n"


buf = io.BytesIO()
with zipfile.ZipFile(buf, "w") as zf:
    for part, n in zip(("train", "test"), HAR_ROWS):
        zf.writestr(f"UCI HAR Dataset/{part}/X_{part}.txt", text(rng.normal(size=(n, 561))))
        zf.writestr(f"UCI HAR Dataset/{part}/y_{part}.txt",
                    "\n".join(str(v) for v in rng.integers(1, 7, n)) + "\n")
writers.put(mirror, "ltc/har", "UCI HAR Dataset.zip", buf.getvalue())

values = rng.uniform(0, 5, (POWER_ROWS, 7))
rows = [f"16/12/2006;17:00:00;{';'.join(f'{v:.3f}' for v in row)}\n" for row in values]
writers.put(mirror, "ltc/power", "household_power_consumption.zip", writers.power_zip(rows))

per_person = PERSON_ROWS // len(PEOPLE)
lines = [f"{person},{writers.TAGS[i % 4]},6337902260{i:08d},27.05.2009 14:03:25:127,"
         f"{x:.4f},{y:.4f},{z:.4f},{ACTIVITIES[i // 50 % len(ACTIVITIES)]}"
         for person in PEOPLE
         for i, (x, y, z) in enumerate(rng.normal(size=(per_person, 3)))]
writers.put(mirror, "ltc/person", "ConfLongDemo_JSI.txt", ("\n".join(lines) + "\n").encode())

for part, n in zip(("train", "t10k"), MNIST):
    writers.put(mirror, "mnist", f"{part}-images-idx3-ubyte.gz",
                writers.idx(rng.integers(0, 256, (n, 28, 28))))
    writers.put(mirror, "mnist", f"{part}-labels-idx1-ubyte.gz", writers.idx(np.arange(n) % 10))
print(f"wrote {mirror}")
