"""IDX reader: files written in the official layout, the mirror's MNIST test split, errors."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest

from zoo.data.idx_format import read_idx
from zoo.errors import InputError

from conftest import DATA_MIRROR, without_mirror

MIRROR = DATA_MIRROR / "mnist"


def idx_bytes(array: np.ndarray, code: int = 0x08) -> bytes:
    head = struct.pack(">BBBB", 0, 0, code, array.ndim) + struct.pack(f">{array.ndim}I",
                                                                     *array.shape)
    return head + array.astype(array.dtype.newbyteorder(">")).tobytes()


def test_round_trip_gzip_and_plain(tmp_path):
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    (tmp_path / "i.gz").write_bytes(gzip.compress(idx_bytes(images)))
    (tmp_path / "i").write_bytes(idx_bytes(images))
    for name in ("i.gz", "i"):
        np.testing.assert_array_equal(read_idx(tmp_path / name, "m", ndim=3), images)
    floats = np.array([1.5, -2.0], dtype=np.float32)
    (tmp_path / "f").write_bytes(idx_bytes(floats, 0x0D))
    np.testing.assert_array_equal(read_idx(tmp_path / "f", "m"), floats)


def test_errors_name_the_dataset_and_file(tmp_path):
    labels = np.arange(5, dtype=np.uint8)
    cases = {
        "magic": (b"\x00\x01" + idx_bytes(labels)[2:], "wrong magic number"),
        "truncated": (gzip.compress(idx_bytes(labels)[:-2]), "truncated"),
        "trailing": (idx_bytes(labels) + b"\x00", "trailing data"),
        "short": (b"\x00\x00", "too short"),
        "badgzip": (b"\x1f\x8b\x08junk", "cannot read"),
    }
    for name, (raw, message) in cases.items():
        path = tmp_path / name
        path.write_bytes(raw)
        with pytest.raises(InputError, match=message) as err:
            read_idx(path, "smnist")
        assert "dataset 'smnist'" in str(err.value) and str(path) in str(err.value)
    (tmp_path / "ok").write_bytes(idx_bytes(labels))
    with pytest.raises(InputError, match="expected 3 dimensions"):
        read_idx(tmp_path / "ok", "smnist", ndim=3)


@without_mirror("mnist")
def test_real_mnist_test_split():
    images = read_idx(MIRROR / "t10k-images-idx3-ubyte.gz", "smnist", ndim=3)
    labels = read_idx(MIRROR / "t10k-labels-idx1-ubyte.gz", "smnist", ndim=1)
    assert images.shape == (10000, 28, 28) and images.dtype == np.uint8 and images.max() == 255
    assert labels.shape == (10000,) and labels[:5].tolist() == [7, 2, 1, 0, 4]
    assert np.bincount(labels).sum() == 10000 and len(np.bincount(labels)) == 10
