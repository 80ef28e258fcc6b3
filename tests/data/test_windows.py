"""Windowing and permutation splits of the LTC scripts."""

from __future__ import annotations

import numpy as np

from zoo.data.ltc_splits import permutation_split, split_arrays
from zoo.data.windows import cut, interleaved_starts, ltc_starts


def test_ltc_starts_stop_one_short_of_the_last_full_window():
    assert list(ltc_starts(40, 16, 8)) == [0, 8, 16]  # 24 would end exactly on row 40
    assert list(ltc_starts(16, 16, 1)) == []


def test_interleaved_starts_as_in_gesture():
    assert interleaved_starts(100, 32) == [0, 16, 32, 48, 64]  # 3 blocks + 2 shifted
    assert interleaved_starts(31, 32) == []


def test_cut_with_offset_gives_next_step_targets():
    rows = np.arange(20)[:, None] * np.array([1, 10])
    x, y = cut(rows, [0, 5], 4), cut(rows, [0, 5], 4, offset=1)
    assert x.shape == (2, 4, 2) and x[1, 0, 1] == 50 and np.array_equal(y[:, :-1], x[:, 1:])


def test_permutation_split_sizes_and_seed():
    train, val, test = permutation_split(605, 23489)
    assert (len(train), len(val), len(test)) == (455, 60, 90)
    assert np.array_equal(np.sort(np.concatenate([train, val, test])), np.arange(605))
    assert np.array_equal(val, np.random.RandomState(23489).permutation(605)[:60])
    train, val, test = permutation_split(8127, 893429, test=False)
    assert (len(train), len(val), len(test)) == (7315, 812, 0)
    parts = split_arrays(np.arange(10) * 2, np.arange(10), permutation_split(10, 1))
    assert np.array_equal(parts["val_x"], parts["val_y"] * 2)
