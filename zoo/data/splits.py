"""The authors' train/val/test split recipes, as index arrays (docs/sources.md, per recipe below).

Each recipe calls scikit-learn's ``train_test_split`` exactly as the authors' code does. They
split ``arange(n)``: the permutation ``train_test_split`` draws depends only on the number of
samples, the sizes, the seed and the stratification labels, so the indices select the same
samples the authors' code selected when it split the data tensors themselves.
"""

from __future__ import annotations

import numpy as np

Indices = tuple[np.ndarray, np.ndarray, np.ndarray]


def train_test_split(*arrays, **options):
    """scikit-learn's ``train_test_split``, imported when a split is made (not to validate)."""
    from sklearn.model_selection import train_test_split as split

    return split(*arrays, **options)


def _labels(y) -> np.ndarray:
    return np.asarray(y.cpu() if hasattr(y, "cpu") else y)


def stratified_70_15_15(y) -> Indices:
    """Kidger et al.'s ``split_data``: 70 % train (seed 0), rest halved (seed 1).

    Source: docs/sources.md#speech-commands.

    Both steps are stratified on ``y``. For 34,975 Speech Commands clips: 24,482 / 5,246 / 5,247.
    """
    y = _labels(y)
    index = np.arange(len(y))
    train, rest, _, y_rest = train_test_split(index, y, train_size=0.7, random_state=0,
                                              shuffle=True, stratify=y)
    val, test = train_test_split(rest, train_size=0.5, random_state=1, shuffle=True,
                                 stratify=y_rest)
    return train, val, test


def lem_split(n: int) -> Indices:
    """EigenWorms split of the FWP code, "exact split from tk-rusch/LEM".

    Source: docs/sources.md#eigenworms-data.

    ``test_size=0.3`` then ``test_size=0.5`` of the rest, both ``random_state=1234``, not
    stratified: 259 series → 181 / 39 / 39.
    """
    train, rest = train_test_split(np.arange(n), test_size=0.3, random_state=1234)
    val, test = train_test_split(rest, test_size=0.5, random_state=1234)
    return train, val, test


def nrde_split(n: int) -> Indices:
    """The original neural-RDE EigenWorms split: ``np.random.seed(0)``, not stratified.

    Source: docs/sources.md#fwp-diff-eigenworms-split.

    15 % test, then 0.15/0.85 of the rest as validation, both drawn from numpy's global
    generator after seeding; a fresh ``RandomState(0)`` shared by the two calls draws the same
    numbers without touching the global state. 259 series → 181 / 39 / 39.
    """
    rng = np.random.RandomState(0)
    train_val, test = train_test_split(np.arange(n), test_size=0.15, shuffle=True,
                                       random_state=rng)
    train, val = train_test_split(train_val, test_size=0.15 / 0.85, shuffle=True,
                                  random_state=rng)
    return train, val, test


def jacobian_ncde_split(n: int) -> Indices:
    """CharacterTrajectories split of paper (c)'s code: 80 / 8 / 12 %, not stratified.

    Source: docs/sources.md#jac-character-trajectories.

    ``test_size=0.2`` then ``test_size=0.6`` of that 20 %, both ``random_state=42``.
    """
    train, rest = train_test_split(np.arange(n), test_size=0.2, random_state=42)
    val, test = train_test_split(rest, test_size=0.6, random_state=42)
    return train, val, test
