"""Sequential MNIST, one image row per step (LTC paper Table 3; [LTC] ``smnist.py``;
docs/sources.md#ltc-smnist).

Pixels divided by 255 (float32); each 28 × 28 image is 28 steps of 28 features. The first 90 %
of the official training images (54,000) are the training split, the last 10 % (6,000)
validation; the official 10,000 test images are the test split. The class is predicted from
the last step only (a per-series label).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal

import numpy as np

from ...data.idx_format import read_idx
from ...data.readers import reading
from ...data.records import DatasetRecord, RemoteFile
from ...series import TaskInfo
from .base import LTCDataset

MIRRORS = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/")
COPY = ("no official sha256 is published; a public copy (the local mirror, same size as the "
        "official file) has sha256 {}, but its byte-identity could not be checked")
FILES = {
    "train-images-idx3-ubyte.gz": (None, "no copy was available to record a checksum"),
    "train-labels-idx1-ubyte.gz": (None, "no copy was available to record a checksum"),
    "t10k-images-idx3-ubyte.gz": (1648877, COPY.format(
        "167310007f03058885c7e95e6c0b19c20de5c7fd3031f4cbdadc9014a523d80b")),
    "t10k-labels-idx1-ubyte.gz": (4542, COPY.format(
        "fc607395669ec21321ea83e4b82c0544b7e8e63ff5b34337c06bc0a17cc0da3c")),
}
RECORD = DatasetRecord(
    name="smnist",
    title="MNIST as sequences of 28 rows (LTC paper, Table 3)",
    files=tuple(RemoteFile(name, [m + name for m in MIRRORS], None, size, note)
                for name, (size, note) in FILES.items()),
    licence="CC BY-SA 3.0 (Y. LeCun, C. Cortes)",
    citation="LeCun, Bottou, Bengio, Haffner: Gradient-based learning applied to document "
             "recognition, Proc. IEEE 86 (1998)",
    homepage="http://yann.lecun.com/exdb/mnist/",
    mirror_subdir="mnist",
    notes="The authors load the same images through tf.keras.datasets.mnist.",
)


class SMNISTConfig(LTCDataset):
    """Sequential MNIST: the digit from 28 rows read one per step (LTC Table 3)."""

    kind: Literal["smnist"] = "smnist"
    record: ClassVar[DatasetRecord] = RECORD

    def task(self) -> TaskInfo:
        return TaskInfo("multiclass", 10, class_names=tuple(map(str, range(10))))

    def _read(self, paths: dict[str, Path], images: str, labels: str):
        x = read_idx(paths[images], self.kind, ndim=3)
        y = read_idx(paths[labels], self.kind, ndim=1)
        with reading(self.kind, paths[images]):
            if x.ndim != 3 or x.shape[1:] != (28, 28) or y.shape != (len(x),):
                raise ValueError(f"expected (n, 28, 28) images and n labels, got {x.shape} "
                                 f"and {y.shape}")
        return x.astype(np.float32) / 255.0, y.astype(np.int64)

    def arrays(self, paths: dict[str, Path]) -> dict[str, np.ndarray]:
        train_x, train_y = self._read(paths, "train-images-idx3-ubyte.gz",
                                      "train-labels-idx1-ubyte.gz")
        test_x, test_y = self._read(paths, "t10k-images-idx3-ubyte.gz",
                                    "t10k-labels-idx1-ubyte.gz")
        cut = int(0.9 * len(train_x))
        return {"train_x": train_x[:cut], "train_y": train_y[:cut], "val_x": train_x[cut:],
                "val_y": train_y[cut:], "test_x": test_x, "test_y": test_y}
