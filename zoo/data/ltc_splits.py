"""The LTC scripts' seeded permutation splits of windows (docs/sources.md#ltc-datasets).

Every script draws ``np.random.RandomState(seed).permutation(n)`` and takes the first
``int(0.1 n)`` windows for validation, then (when it has no official test set) the next
``int(0.15 n)`` for test, and the rest for training.
"""

from __future__ import annotations

import numpy as np

Indices = tuple[np.ndarray, np.ndarray, np.ndarray]


def permutation_split(n: int, seed: int, test: bool = True) -> Indices:
    """``(train, val, test)`` indices; ``test=False`` gives an empty test part (official test)."""
    order = np.random.RandomState(seed).permutation(n)
    n_val = int(0.1 * n)
    n_test = int(0.15 * n) if test else 0
    return order[n_val + n_test:], order[:n_val], order[n_val:n_val + n_test]


def split_arrays(x: np.ndarray, y: np.ndarray, parts: Indices) -> dict[str, np.ndarray]:
    """``{train,val,test}_{x,y}`` selected by the ``(train, val, test)`` index arrays."""
    out = {}
    for name, index in zip(("train", "val", "test"), parts):
        out[f"{name}_x"], out[f"{name}_y"] = x[index], y[index]
    return out
