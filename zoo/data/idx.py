"""The IDX format of the MNIST files (LeCun et al.): big-endian magic, dimensions, uint8 data."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np


def read_idx(path: Path) -> np.ndarray:
    """The uint8 array stored in a (gzip-compressed) IDX file."""
    with open(path, "rb") as fh:
        raw = fh.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] != 0x08:
        raise ValueError("not an IDX file of unsigned bytes (bad magic number)")
    ndim = raw[3]
    shape = tuple(int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim))
    start = 4 + 4 * ndim
    if len(raw) - start != int(np.prod(shape)):
        raise ValueError(f"IDX header says {shape} ({int(np.prod(shape))} bytes), the file "
                         f"holds {len(raw) - start}")
    return np.frombuffer(raw, dtype=np.uint8, offset=start).reshape(shape)
