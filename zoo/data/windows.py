"""Fixed-length windows cut from one long recording, as the LTC experiment scripts cut them.

The scripts ([LTC] ``experiments_with_ltcs/*.py``; docs/sources.md#ltc-datasets) loop ``for s in
range(0, n - length, stride)``: the loop stops one short, so a window ending exactly on the last
row is never cut. :func:`ltc_starts` reproduces that bound; :func:`cut` gathers the windows
batch-first.
"""

from __future__ import annotations

import numpy as np


def ltc_starts(n_rows: int, length: int, stride: int) -> range:
    """Window starts ``range(0, n_rows - length, stride)`` of the LTC scripts."""
    return range(0, n_rows - length, stride)


def interleaved_starts(n_rows: int, length: int) -> list[int]:
    """Gesture's ``cut_in_sequences(interleaved=True)``: back-to-back windows of ``length`` and,
    between every two, one shifted by ``length // 2``: starts ``0, L/2, L, …, L·(n//L − 1)``."""
    blocks = n_rows // length
    return [s * length + h for s in range(blocks) for h in (0, length // 2)
            if h == 0 or s < blocks - 1]


def cut(rows: np.ndarray, starts, length: int, offset: int = 0) -> np.ndarray:
    """Windows ``rows[s + offset : s + offset + length]`` for each start, as (N, length, …)."""
    index = np.asarray(list(starts), dtype=np.int64)[:, None] + offset + np.arange(length)
    return rows[index]
