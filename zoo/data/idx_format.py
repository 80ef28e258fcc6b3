"""Reader for the IDX format of the MNIST files (``*-idx3-ubyte.gz``, ``*-idx1-ubyte.gz``).

Layout (big-endian): two zero bytes, a type byte (0x08 unsigned byte, 0x09 signed byte, 0x0B
int16, 0x0C int32, 0x0D float32, 0x0E float64), the number of dimensions, one uint32 size per
dimension, then the values in C order. Files may be gzip-compressed.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np

from ..errors import InputError

DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def _raw(path: Path, dataset: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            head = fh.read(2)
            fh.seek(0)
            return gzip.decompress(fh.read()) if head == b"\x1f\x8b" else fh.read()
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"dataset '{dataset}': cannot read {path} ({exc})") from None


def read_idx(path: Path, dataset: str, ndim: int | None = None) -> np.ndarray:
    """The array stored in the IDX file ``path`` (gzip or not); ``ndim`` checks its rank
    (3 for images, 1 for labels). Errors name the dataset and the file."""
    data = _raw(path, dataset)

    def fail(message: str):
        raise InputError(f"dataset '{dataset}': {path}: {message}")

    if len(data) < 4:
        fail(f"too short for an IDX header ({len(data)} bytes)")
    zero, code, rank = data[:2], data[2], data[3]
    if zero != b"\x00\x00" or code not in DTYPES:
        fail(f"wrong magic number 0x{data[:4].hex()} (not an IDX file)")
    if ndim is not None and rank != ndim:
        fail(f"holds a {rank}-dimensional array, expected {ndim} dimensions")
    offset = 4 + 4 * rank
    if len(data) < offset:
        fail("truncated header")
    shape = tuple(int(n) for n in np.frombuffer(data, ">u4", count=rank, offset=4))
    dtype = np.dtype(DTYPES[code])
    expected = offset + int(np.prod(shape)) * dtype.itemsize
    if len(data) != expected:
        fail(f"{'truncated' if len(data) < expected else 'trailing data'}: {len(data)} bytes, "
             f"the header {shape} implies {expected}")
    return np.frombuffer(data, dtype, offset=offset).reshape(shape).astype(dtype.newbyteorder("="))
